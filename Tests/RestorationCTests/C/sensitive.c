/* sensitive.c: sensitive values and portable exports through the C ABI.
 * A distinctive SECRET value is searched for in every archive, generation,
 * set-aside copy, buffer and export this program makes, and never found;
 * sealed values open with the right key only, and one moved to another
 * record, a flipped byte, a wrong key and a missing key each fail with one
 * WARNING while the rest of the restore stays intact.
 *
 *   sensitive secret|sealed|export|carry|migrate|skips DIR */
#include "check.h"

#define SECRET_TEXT "Hunter2-SECRET-7f3a9c"
#define SEALED_TEXT "Tok-ENCRYPTED-51d0e2"
#define LOCAL_TEXT  "/home/alice/LOCAL-path.txt"

typedef struct form {
    const char *password, *token, *path, *title;
    int64_t n;
    /* restored */
    char got_password[64], got_token[64], got_path[64], got_title[64], got_nested[64];
    int64_t got_n;
    rst_status st_password, st_token, st_path, st_nested;
    int override_mode; /* 1: set "title" SECRET before encoding it; 2: after */
    rst_status override_status;
} form;

static void copy_str(rst_coder *c, const char *key, char *out, rst_status *st) {
    const char *s = NULL; size_t n = 0;
    *st = rst_decode_string(c, key, &s, &n);
    out[0] = 0;
    if (*st == RST_OK) snprintf(out, 64, "%.*s", (int)n, s);
}

static void form_encode(void *inst, rst_coder *c) {
    form *f = inst;
    if (f->override_mode == 1) f->override_status = rst_coder_set_sensitivity(c, "title", RST_SENSITIVITY_SECRET);
    rst_encode_string(c, "title", f->title);
    if (f->override_mode == 2) f->override_status = rst_coder_set_sensitivity(c, "title", RST_SENSITIVITY_SECRET);
    rst_encode_string(c, "password", f->password);
    rst_encode_string(c, "token", f->token);
    rst_encode_string(c, "path", f->path);
    rst_encode_int(c, "n", f->n);
    rst_encode_begin_record(c, "login");          /* the policy reaches nested records */
    rst_encode_string(c, "password", f->password);
    rst_encode_string(c, "user", "alice");
    rst_encode_end_record(c);
}

static void form_decode(void *inst, rst_coder *c) {
    form *f = inst;
    copy_str(c, "password", f->got_password, &f->st_password);
    copy_str(c, "token", f->got_token, &f->st_token);
    copy_str(c, "path", f->got_path, &f->st_path);
    rst_status st;
    copy_str(c, "title", f->got_title, &st);
    rst_decode_int(c, "n", &f->got_n);
    f->st_nested = rst_decode_begin_record(c, "login");
    if (f->st_nested == RST_OK) {
        copy_str(c, "password", f->got_nested, &f->st_nested);
        rst_decode_end_record(c);
    }
}
static const rst_object_callbacks form_callbacks = { form_encode, form_decode, NULL, NULL };

static int key_mode = 0; /* 0: none given (callback fails); 1: key A; 2: key B */
static int key_asked = 0;
static rst_status give_key(rst_engine *e, uint8_t key[32], void *ctx) {
    (void)e; (void)ctx;
    key_asked++;
    if (key_mode == 0) return RST_ERR_NOT_FOUND;
    for (int i = 0; i < 32; i++) key[i] = (uint8_t)(key_mode == 1 ? i : 255 - i);
    return RST_OK;
}

static rst_engine *engine_for(const char *path, int with_key, uint32_t generations) {
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.archive_path = path;
    o.generations = generations;
    o.log = collect_log;
    if (with_key) o.encryption_key = give_key;
    rst_engine *e = NULL;
    CHECK_OK(rst_engine_create(&o, &e));
    CHECK_OK(rst_set_key_sensitivity(e, NULL, "password", RST_SENSITIVITY_SECRET));
    CHECK_OK(rst_set_key_sensitivity(e, "Form", "token", RST_SENSITIVITY_ENCRYPTED));
    CHECK_OK(rst_set_key_sensitivity(e, "Form", "path", RST_SENSITIVITY_LOCAL));
    return e;
}

static int contains(const void *hay, size_t n, const char *needle) {
    return memmem(hay, n, needle, strlen(needle)) != NULL;
}

/* Every file under dir: none holds `needle`. Returns the files looked at. */
static int no_file_holds(const char *dir, const char *needle) {
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    struct dirent *ent;
    int files = 0;
    while ((ent = readdir(d)) != NULL) {
        if (ent->d_name[0] == '.' && (ent->d_name[1] == 0 || (ent->d_name[1] == '.' && ent->d_name[2] == 0))) continue;
        char *p = xasprintf("%s/%s", dir, ent->d_name);
        struct stat sb;
        if (stat(p, &sb) == 0 && S_ISREG(sb.st_mode)) {
            size_t n = 0;
            unsigned char *b = read_file(p, &n);
            CHECK_MSG(!contains(b, n, needle), "%s holds '%s'", p, needle);
            free(b);
            files++;
        }
        free(p);
    }
    closedir(d);
    return files;
}

static uint32_t crc32c(const unsigned char *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
    }
    return ~c;
}
static void fix_crc(unsigned char *b, size_t n) {
    uint32_t c = crc32c(b, n - 4);
    for (int i = 0; i < 4; i++) b[n - 4 + i] = (unsigned char)(c >> (8 * i));
}

/* The offset just past the info block (three short strings and saved_at_ms). */
static size_t info_end(const void *archive) {
    const unsigned char *b = archive;
    size_t p = 16;
    for (int i = 0; i < 3; i++) { CHECK(b[p] < 128); p += 1 + b[p]; }
    return p + 8;
}

static int count_in_log(const char *needle) {
    int k = 0;
    for (const char *p = log_text; (p = strstr(p, needle)) != NULL; p += strlen(needle)) k++;
    return k;
}

/* ---- SECRET: never written anywhere ---- */
static int test_secret(const char *dir) {
    char *path = xasprintf("%s/s.rst", dir);
    form f = { .password = SECRET_TEXT, .token = SEALED_TEXT, .path = LOCAL_TEXT, .title = "Title", .n = 7 };
    key_mode = 1;
    rst_engine *e = engine_for(path, 1, 2);
    rst_object *o = NULL;
    CHECK_OK(rst_register_object(e, "form", NULL, "Form", &form_callbacks, &f, &o));
    for (int i = 0; i < 4; i++) CHECK_OK(rst_save(e));   /* the archive and two generations */
    void *buf = NULL; size_t len = 0;
    CHECK_OK(rst_save_to_buffer(e, &buf, &len));
    CHECK(!contains(buf, len, SECRET_TEXT));
    CHECK(!contains(buf, len, SEALED_TEXT));             /* sealed, not plain */
    CHECK(contains(buf, len, LOCAL_TEXT));               /* LOCAL is written */
    void *ex = NULL; size_t exlen = 0;
    CHECK_OK(rst_export(e, 0, &ex, &exlen));
    CHECK(!contains(ex, exlen, SECRET_TEXT));
    CHECK(!contains(ex, exlen, SEALED_TEXT));
    void *px = NULL; size_t pxlen = 0;
    CHECK_OK(rst_export(e, RST_EXPORT_PORTABLE, &px, &pxlen));
    CHECK(!contains(px, pxlen, SECRET_TEXT));
    CHECK(!contains(px, pxlen, LOCAL_TEXT));
    CHECK(pxlen < exlen);
    CHECK(no_file_holds(dir, SECRET_TEXT) >= 3);
    CHECK(no_file_holds(dir, SEALED_TEXT) >= 3);

    /* A restore: SECRET decodes as not found, in nested records too; the rest is there. */
    form g = { 0 };
    rst_engine *e2 = engine_for(path, 1, 2);
    CHECK_OK(rst_register_object(e2, "form", NULL, "Form", &form_callbacks, &g, NULL));
    CHECK_OK(rst_restore(e2));
    CHECK_EQ(g.st_password, RST_ERR_NOT_FOUND);
    CHECK_EQ(g.st_nested, RST_ERR_NOT_FOUND);
    CHECK_EQ(g.st_token, RST_OK);
    CHECK_STR(g.got_token, SEALED_TEXT);
    CHECK_STR(g.got_path, LOCAL_TEXT);
    CHECK_STR(g.got_title, "Title");
    CHECK_EQ(g.got_n, 7);

    /* The restored engine saves again: still nothing. The set-aside copy
     * of an invalid archive holds nothing either. */
    g.password = SECRET_TEXT; g.token = g.got_token; g.path = g.got_path; g.title = g.got_title; g.n = g.got_n;
    CHECK_OK(rst_save(e2));
    size_t n = 0;
    unsigned char *bytes = read_file(path, &n);
    bytes[20] ^= 0xFF;                                     /* break it: the next restore sets it aside */
    write_file(path, bytes, n);
    free(bytes);
    form h = { 0 };
    rst_engine *e3 = engine_for(path, 1, 2);
    CHECK_OK(rst_register_object(e3, "form", NULL, "Form", &form_callbacks, &h, NULL));
    (void)rst_restore(e3);                                 /* falls back to a generation */
    CHECK(count_entries(dir, ".invalid-") >= 1);
    CHECK(no_file_holds(dir, SECRET_TEXT) >= 3);

    /* rst_coder_set_sensitivity: before the key wins; after is RST_ERR_STATE. */
    f.override_mode = 1;
    void *b2 = NULL; size_t l2 = 0;
    CHECK_OK(rst_save_to_buffer(e, &b2, &l2));
    CHECK_EQ(f.override_status, RST_OK);
    CHECK(!contains(b2, l2, "Title"));
    rst_free(b2);
    f.override_mode = 2;                                   /* too late: the save fails */
    b2 = NULL;
    CHECK_ERR(rst_save_to_buffer(e, &b2, &l2), RST_ERR_STATE, "already encoded");
    CHECK_EQ(f.override_status, RST_ERR_STATE);
    CHECK(b2 == NULL);
    f.override_mode = 0;

    /* Arguments. */
    CHECK_ERR(rst_set_key_sensitivity(NULL, NULL, "k", RST_SENSITIVITY_SECRET), RST_ERR_INVALID, "engine is NULL");
    CHECK_ERR(rst_set_key_sensitivity(e, NULL, NULL, RST_SENSITIVITY_SECRET), RST_ERR_INVALID, "key is NULL");
    CHECK_ERR(rst_set_key_sensitivity(e, NULL, "k", (rst_sensitivity)9), RST_ERR_INVALID, "not an rst_sensitivity");
    char longkey[300]; memset(longkey, 'k', 299); longkey[299] = 0;
    CHECK_ERR(rst_set_key_sensitivity(e, NULL, longkey, RST_SENSITIVITY_SECRET), RST_ERR_LIMIT, "RST_MAX_KEY_BYTES");
    CHECK_ERR(rst_coder_set_sensitivity(NULL, "k", RST_SENSITIVITY_SECRET), RST_ERR_INVALID, "coder is NULL");
    CHECK_ERR(rst_export(e, 2, &ex, &exlen), RST_ERR_INVALID, "RST_EXPORT_PORTABLE");
    CHECK_ERR(rst_export(e, 0, NULL, &exlen), RST_ERR_INVALID, "NULL");
    /* NORMAL removes a rule. */
    CHECK_OK(rst_set_key_sensitivity(e, NULL, "password", RST_SENSITIVITY_NORMAL));
    CHECK_OK(rst_save_to_buffer(e, &b2, &l2));
    CHECK(contains(b2, l2, SECRET_TEXT));
    rst_free(b2);

    rst_free(buf); rst_free(ex); rst_free(px);
    rst_engine_destroy(e3);
    rst_engine_destroy(e2);
    rst_engine_destroy(e);
    (void)o;
    free(path);
    return 0;
}

/* Restores `bytes` into a fresh buffer engine; returns what "token" gave. */
static rst_status restore_token(const void *bytes, size_t n, int with_key, form *g) {
    memset(g, 0, sizeof *g);
    rst_engine *e = engine_for(NULL, with_key, 0);
    CHECK_OK(rst_register_object(e, "form", NULL, "Form", &form_callbacks, g, NULL));
    log_text[0] = 0;
    key_asked = 0;
    CHECK_OK(rst_restore_from_buffer(e, bytes, n));
    rst_engine_destroy(e);
    return g->st_token;
}

/* ---- ENCRYPTED: sealed, bound to its record, key asked once ---- */
static int test_sealed(const char *dir) {
    (void)dir;
    form f = { .password = SECRET_TEXT, .token = SEALED_TEXT, .path = LOCAL_TEXT, .title = "Title", .n = 3 };
    key_mode = 1;
    rst_engine *e = engine_for(NULL, 1, 0);
    CHECK_OK(rst_register_object(e, "form", NULL, "Form", &form_callbacks, &f, NULL));
    key_asked = 0;
    void *buf = NULL; size_t len = 0;
    CHECK_OK(rst_save_to_buffer(e, &buf, &len));
    CHECK_EQ(key_asked, 1);                              /* once per save */
    CHECK(!contains(buf, len, SEALED_TEXT));
    /* Two saves seal with different nonces: the same value gives other bytes
     * (the archives differ beyond their header's save time). */
    void *buf2 = NULL; size_t len2 = 0;
    CHECK_OK(rst_save_to_buffer(e, &buf2, &len2));
    CHECK_EQ(len, len2);
    size_t body = info_end(buf);                         /* past saved_at_ms */
    CHECK_EQ(body, info_end(buf2));
    CHECK(memcmp((char *)buf + body, (char *)buf2 + body, len - 4 - body) != 0);
    CHECK_EQ(key_asked, 2);
    rst_free(buf2);

    form g;
    /* The right key. */
    CHECK_EQ(restore_token(buf, len, 1, &g), RST_OK);
    CHECK_STR(g.got_token, SEALED_TEXT);
    CHECK_EQ(key_asked, 1);
    CHECK_EQ(count_in_log("could not be opened"), 0);
    /* A wrong key: not found, one WARNING, the rest restored. */
    key_mode = 2;
    CHECK_EQ(restore_token(buf, len, 1, &g), RST_ERR_NOT_FOUND);
    CHECK_EQ(count_in_log("could not be opened"), 1);
    CHECK(strstr(log_text, "[2] 1 sealed value could not be opened") != NULL);
    CHECK_STR(g.got_title, "Title");
    CHECK_STR(g.got_path, LOCAL_TEXT);
    CHECK_EQ(g.got_n, 3);
    /* A failing callback, and no callback at all. */
    key_mode = 0;
    CHECK_EQ(restore_token(buf, len, 1, &g), RST_ERR_NOT_FOUND);
    CHECK_EQ(count_in_log("could not be opened"), 1);
    CHECK(strstr(log_text, "gave no key") != NULL);
    CHECK_EQ(restore_token(buf, len, 0, &g), RST_ERR_NOT_FOUND);
    CHECK_EQ(count_in_log("could not be opened"), 1);
    CHECK(strstr(log_text, "no encryption key callback") != NULL);
    CHECK_EQ(key_asked, 0);
    CHECK_STR(g.got_title, "Title");
    /* A flipped byte in the sealed value (the checksum fixed). */
    key_mode = 1;
    unsigned char *t = malloc(len);
    memcpy(t, buf, len);
    unsigned char *at = memmem(t, len, "token", 5);
    CHECK(at != NULL);
    /* Flip one byte at a time past the header until one breaks exactly the
       sealed token (a byte of its nonce, ciphertext or tag) while every other
       value still restores: such a byte must exist. */
    int tampered_ok = 0;
    for (size_t i = 40; i + 4 < len && !tampered_ok; i++) {
        memcpy(t, buf, len);
        t[i] ^= 0x01;
        fix_crc(t, len);
        rst_engine *probe = engine_for(NULL, 1, 0);
        form pg = { 0 };
        CHECK_OK(rst_register_object(probe, "form", NULL, "Form", &form_callbacks, &pg, NULL));
        log_text[0] = 0;
        rst_status rs = rst_restore_from_buffer(probe, t, len);
        if (rs == RST_OK && pg.st_token == RST_ERR_NOT_FOUND && strcmp(pg.got_title, "Title") == 0 && pg.got_n == 3
            && count_in_log("could not be opened") == 1 && strstr(log_text, "altered or moved")) tampered_ok = 1;
        rst_engine_destroy(probe);
    }
    CHECK(tampered_ok);
    /* Moved: the record renamed "form" -> "fxrm" in the name table. */
    memcpy(t, buf, len);
    unsigned char *nm = memmem(t + 16, len - 20, "\x04" "form", 5);
    CHECK(nm != NULL);
    nm[2] = 'x';
    fix_crc(t, len);
    {
        rst_engine *m = engine_for(NULL, 1, 0);
        form mg = { 0 };
        CHECK_OK(rst_register_object(m, "fxrm", NULL, "Form", &form_callbacks, &mg, NULL));
        log_text[0] = 0;
        CHECK_OK(rst_restore_from_buffer(m, t, len));
        CHECK_EQ(mg.st_token, RST_ERR_NOT_FOUND);
        CHECK_STR(mg.got_title, "Title");
        CHECK_EQ(count_in_log("could not be opened"), 1);
        rst_engine_destroy(m);
    }
    free(t);

    /* No key at save: the value is left out, one WARNING per save. */
    key_mode = 0;
    log_text[0] = 0;
    void *nb = NULL; size_t nlen = 0;
    CHECK_OK(rst_save_to_buffer(e, &nb, &nlen));
    CHECK_EQ(count_in_log("ENCRYPTED value was not written"), 1);
    CHECK(!contains(nb, nlen, SEALED_TEXT));
    CHECK_EQ(restore_token(nb, nlen, 1, &g), RST_ERR_NOT_FOUND);
    CHECK_EQ(count_in_log("could not be opened"), 0);      /* nothing sealed: nothing to open */
    CHECK_EQ(key_asked, 0);
    rst_free(nb);
    /* A size budget that trims encodes every object twice: still one WARNING,
     * counting each value once; an export has no budget. */
    {
        static char big[4096];
        memset(big, 'x', sizeof big - 1);
        rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
        o.log = collect_log;
        o.size_budget = 1024;
        o.budget_policy = RST_BUDGET_TRIM;
        rst_engine *be = NULL;
        CHECK_OK(rst_engine_create(&o, &be));
        CHECK_OK(rst_set_key_sensitivity(be, "Form", "token", RST_SENSITIVITY_ENCRYPTED));
        form bf = { .password = "p", .token = SEALED_TEXT, .path = "/p", .title = "T", .n = 1 };
        form child = { .password = "p", .token = SEALED_TEXT, .path = "/p", .title = big, .n = 2 };
        rst_object *root = NULL;
        CHECK_OK(rst_register_object(be, "form", NULL, "Form", &form_callbacks, &bf, &root));
        CHECK_OK(rst_register_object(be, "big", root, "Form", &form_callbacks, &child, NULL));
        log_text[0] = 0;
        CHECK_OK(rst_save_to_buffer(be, &nb, &nlen));
        CHECK(nlen <= 1024);                             /* "big" was trimmed */
        CHECK_EQ(count_in_log("ENCRYPTED value"), 1);
        CHECK(strstr(log_text, "save: 1 ENCRYPTED value was not written") != NULL);
        rst_free(nb);
        CHECK_OK(rst_export(be, 0, &nb, &nlen));
        CHECK(nlen > 4096);                              /* not trimmed: no budget */
        rst_free(nb);
        rst_engine_destroy(be);
    }
    /* An export says nothing about what it leaves out. */
    log_text[0] = 0;
    CHECK_OK(rst_export(e, 0, &nb, &nlen));
    CHECK_EQ(count_in_log("ENCRYPTED"), 0);
    rst_free(nb);
    rst_free(buf);
    rst_engine_destroy(e);
    return 0;
}

/* ---- portable export: restorable elsewhere, without LOCAL and ENCRYPTED ---- */
static int test_export(const char *dir) {
    char *path = xasprintf("%s/x.rst", dir);
    form f = { .password = SECRET_TEXT, .token = SEALED_TEXT, .path = LOCAL_TEXT, .title = "Title", .n = 9 };
    key_mode = 1;
    rst_engine *e = engine_for(path, 1, 0);
    CHECK_OK(rst_register_object(e, "form", NULL, "Form", &form_callbacks, &f, NULL));
    CHECK_OK(rst_save(e));
    struct stat before;
    CHECK(stat(path, &before) == 0);
    void *px = NULL; size_t pxlen = 0;
    CHECK_OK(rst_export(e, RST_EXPORT_PORTABLE, &px, &pxlen));
    CHECK(!contains(px, pxlen, LOCAL_TEXT));
    CHECK(!contains(px, pxlen, SECRET_TEXT));
    struct stat after;
    CHECK(stat(path, &after) == 0);
    CHECK_EQ((long long)before.st_mtim.tv_nsec, (long long)after.st_mtim.tv_nsec);  /* not a save */
    form g;
    key_asked = 0;
    CHECK_EQ(restore_token(px, pxlen, 1, &g), RST_ERR_NOT_FOUND);
    CHECK_EQ(key_asked, 0);                              /* nothing sealed in it */
    CHECK_EQ(g.st_path, RST_ERR_NOT_FOUND);
    CHECK_STR(g.got_title, "Title");
    CHECK_EQ(g.got_n, 9);
    /* A plain export keeps LOCAL values and sealed ones. */
    void *ex = NULL; size_t exlen = 0;
    CHECK_OK(rst_export(e, 0, &ex, &exlen));
    CHECK_EQ(restore_token(ex, exlen, 1, &g), RST_OK);
    CHECK_STR(g.got_path, LOCAL_TEXT);
    rst_free(px); rst_free(ex);
    rst_engine_destroy(e);
    free(path);
    return 0;
}

/* ---- carried records: SECRET keys left out, sealed values carried sealed ---- */
static int test_carry(const char *dir) {
    char *path = xasprintf("%s/c.rst", dir);
    /* An older build without the policy wrote the password in the clear. */
    form f = { .password = SECRET_TEXT, .token = SEALED_TEXT, .path = LOCAL_TEXT, .title = "Title", .n = 5 };
    {
        rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
        o.archive_path = path;
        o.encryption_key = give_key;
        rst_engine *e = NULL;
        CHECK_OK(rst_engine_create(&o, &e));
        CHECK_OK(rst_set_key_sensitivity(e, NULL, "token", RST_SENSITIVITY_ENCRYPTED));
        CHECK_OK(rst_set_key_sensitivity(e, NULL, "path", RST_SENSITIVITY_LOCAL));
        key_mode = 1;
        CHECK_OK(rst_register_object(e, "old", NULL, "Gone", &form_callbacks, &f, NULL));
        CHECK_OK(rst_save(e));
        rst_engine_destroy(e);
    }
    size_t n = 0;
    unsigned char *b = read_file(path, &n);
    CHECK(contains(b, n, SECRET_TEXT));                  /* the old build's archive has it */
    free(b);
    /* This build has the policy, carries "old" (nothing produces class Gone),
     * and has no key: the carried record is written without the password and
     * with its token still sealed. */
    {
        rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
        o.archive_path = path;
        o.carry_saves = 3;
        o.log = collect_log;
        rst_engine *e = NULL;
        CHECK_OK(rst_engine_create(&o, &e));
        CHECK_OK(rst_set_key_sensitivity(e, NULL, "password", RST_SENSITIVITY_SECRET));
        log_text[0] = 0;
        CHECK_OK(rst_restore(e));
        CHECK_EQ(count_in_log("could not be opened"), 1);
        CHECK_OK(rst_save(e));
        void *buf = NULL; size_t len = 0;
        CHECK_OK(rst_save_to_buffer(e, &buf, &len));
        CHECK(!contains(buf, len, SECRET_TEXT));
        CHECK(contains(buf, len, "Title"));              /* the rest is carried */
        CHECK(contains(buf, len, LOCAL_TEXT));
        rst_free(buf);
        /* A portable export leaves the carried record's LOCAL and sealed values out. */
        CHECK_OK(rst_export(e, RST_EXPORT_PORTABLE, &buf, &len));
        CHECK(!contains(buf, len, SECRET_TEXT));
        CHECK(!contains(buf, len, LOCAL_TEXT));
        CHECK(contains(buf, len, "Title"));
        {
            form pg = { 0 };
            rst_engine *pe = engine_for(NULL, 1, 0);
            CHECK_OK(rst_register_object(pe, "old", NULL, "Gone", &form_callbacks, &pg, NULL));
            log_text[0] = 0;
            key_asked = 0;
            CHECK_OK(rst_restore_from_buffer(pe, buf, len));
            CHECK_EQ(key_asked, 0);                      /* nothing sealed left in it */
            CHECK_EQ(pg.st_token, RST_ERR_NOT_FOUND);
            CHECK_EQ(pg.st_path, RST_ERR_NOT_FOUND);
            CHECK_STR(pg.got_title, "Title");
            rst_engine_destroy(pe);
        }
        rst_free(buf);
        rst_engine_destroy(e);
    }
    CHECK(no_file_holds(dir, SECRET_TEXT) >= 1);
    /* A build that has class Gone again, and the key, opens the carried token. */
    form g = { 0 };
    rst_engine *e = engine_for(path, 1, 0);
    key_mode = 1;
    CHECK_OK(rst_register_object(e, "old", NULL, "Gone", &form_callbacks, &g, NULL));
    CHECK_OK(rst_restore(e));
    CHECK_EQ(g.st_token, RST_OK);
    CHECK_STR(g.got_token, SEALED_TEXT);
    CHECK_EQ(g.st_password, RST_ERR_NOT_FOUND);
    CHECK_STR(g.got_title, "Title");
    rst_engine_destroy(e);
    free(path);
    return 0;
}

/* ---- migrations see sealed values as RST_TYPE_SEALED; moving one breaks it ---- */
static int saw_sealed = 0;
static rst_status keep_token(rst_coder *c, uint32_t from, void *ctx) {
    (void)from; (void)ctx;
    if (rst_coder_value_type(c, "token") == RST_TYPE_SEALED) saw_sealed++;
    return rst_coder_rename(c, "title", "heading") == RST_OK ? RST_OK : RST_ERR_STATE;
}
static rst_status move_token(rst_coder *c, uint32_t from, void *ctx) {
    (void)from; (void)ctx;
    return rst_coder_rename(c, "token", "tok");
}
static rst_status read_tok(rst_coder *c, char *out) {
    const char *s = NULL; size_t n = 0;
    rst_status st = rst_decode_string(c, "tok", &s, &n);
    if (st == RST_OK) snprintf(out, 64, "%s", s);
    return st;
}
static char moved_token[64];
static rst_status moved_status;
static void moved_decode(void *inst, rst_coder *c) { form_decode(inst, c); moved_status = read_tok(c, moved_token); }
static const rst_object_callbacks moved_callbacks = { form_encode, moved_decode, NULL, NULL };

static int test_migrate(const char *dir) {
    (void)dir;
    form f = { .password = SECRET_TEXT, .token = SEALED_TEXT, .path = LOCAL_TEXT, .title = "Title", .n = 4 };
    key_mode = 1;
    rst_engine *e = engine_for(NULL, 1, 0);
    CHECK_OK(rst_register_object(e, "form", NULL, "Form", &form_callbacks, &f, NULL));
    void *buf = NULL; size_t len = 0;
    CHECK_OK(rst_save_to_buffer(e, &buf, &len));
    rst_engine_destroy(e);
    /* A step that leaves the token where it is: it opens after the migration. */
    form g = { 0 };
    e = engine_for(NULL, 1, 0);
    CHECK_OK(rst_set_class_version(e, "Form", 1));
    CHECK_OK(rst_register_migration(e, "Form", 0, keep_token, NULL));
    CHECK_OK(rst_register_object(e, "form", NULL, "Form", &form_callbacks, &g, NULL));
    log_text[0] = 0;
    CHECK_OK(rst_restore_from_buffer(e, buf, len));
    CHECK_EQ(saw_sealed, 1);
    CHECK_STR(g.got_token, SEALED_TEXT);
    CHECK_EQ(count_in_log("could not be opened"), 0);
    rst_engine_destroy(e);
    /* A step that moves the token to another key: it no longer opens. */
    form h = { 0 };
    e = engine_for(NULL, 1, 0);
    CHECK_OK(rst_set_class_version(e, "Form", 1));
    CHECK_OK(rst_register_migration(e, "Form", 0, move_token, NULL));
    CHECK_OK(rst_register_object(e, "form", NULL, "Form", &moved_callbacks, &h, NULL));
    log_text[0] = 0;
    CHECK_OK(rst_restore_from_buffer(e, buf, len));
    CHECK_EQ(moved_status, RST_ERR_NOT_FOUND);
    CHECK_EQ(count_in_log("could not be opened"), 1);
    CHECK_STR(h.got_title, "Title");
    rst_engine_destroy(e);
    rst_free(buf);
    return 0;
}

/* ---- the skip report of a restore whose archive holds a sealed value ---- */
/* The archive the restore decoded, with the sealed values opened, is wiped
 * when the restore ends; the report of skipped records must not point into
 * it (its paths and classes read "" then). */
static int test_skips(const char *dir) {
    char *path = xasprintf("%s/s.rst", dir);
    form f = { .password = SECRET_TEXT, .token = SEALED_TEXT, .path = LOCAL_TEXT, .title = "Title", .n = 5 };
    form g = { .password = "", .token = "", .path = "", .title = "Gone", .n = 1 };
    key_mode = 1;
    {
        rst_engine *e = engine_for(path, 1, 0);
        CHECK_OK(rst_set_key_sensitivity(e, NULL, "token", RST_SENSITIVITY_ENCRYPTED));
        rst_object *w = NULL;
        CHECK_OK(rst_register_object(e, "Window", NULL, "Form", &form_callbacks, &f, &w));
        CHECK_OK(rst_register_object(e, "Sidebar", w, "Panel", &form_callbacks, &g, NULL));
        CHECK_OK(rst_save(e));
        rst_engine_destroy(e);
    }
    form r = { 0 };
    rst_engine *e = engine_for(path, 1, 0);
    CHECK_OK(rst_set_key_sensitivity(e, NULL, "token", RST_SENSITIVITY_ENCRYPTED));
    CHECK_OK(rst_register_object(e, "Window", NULL, "Form", &form_callbacks, &r, NULL));
    CHECK_OK(rst_restore(e));
    CHECK_STR(r.got_token, SEALED_TEXT);        /* the sealed value was opened */
    rst_skipped_record *sk = NULL; size_t n = 0;
    CHECK_OK(rst_last_restore_skips(e, &sk, &n));
    CHECK_EQ(n, 1);
    CHECK_STR(sk[0].path, "Window/Sidebar");
    CHECK_STR(sk[0].class_name, "Panel");
    CHECK_EQ(sk[0].reason, RST_SKIP_NO_FACTORY);
    CHECK(sk[0].detail != NULL && sk[0].detail[0] != 0);
    rst_free(sk);
    rst_engine_destroy(e);
    free(path);
    return 0;
}

int main(int argc, char **argv) {
    check_prog = "sensitive";
    if (argc < 3) { fprintf(stderr, "usage: sensitive secret|sealed|export DIR\n"); return 2; }
    int r;
    if (strcmp(argv[1], "secret") == 0) r = test_secret(argv[2]);
    else if (strcmp(argv[1], "sealed") == 0) r = test_sealed(argv[2]);
    else if (strcmp(argv[1], "export") == 0) r = test_export(argv[2]);
    else if (strcmp(argv[1], "carry") == 0) r = test_carry(argv[2]);
    else if (strcmp(argv[1], "migrate") == 0) r = test_migrate(argv[2]);
    else if (strcmp(argv[1], "skips") == 0) r = test_skips(argv[2]);
    else { fprintf(stderr, "unknown mode %s\n", argv[1]); return 2; }
    if (r) return r;
    DONE();
}
