/* osstrings.c: file names are bytes (OS strings) through the C ABI.
 *
 *   osstrings roundtrip DIR   a non-UTF-8 name "caf\xe9" saved to DIR/state.rst
 *                             and restored: its own type, read as an OS
 *                             string and as bytes, RST_ERR_TYPE as a string;
 *                             a UTF-8 one reads as a string too; a string
 *                             reads as an OS string; rst_decode_string_copy
 *                             and its limits; NULL arguments
 *   osstrings migrate         a migration step reads, renames, removes and
 *                             writes OS strings; the migrated record keeps them
 *   osstrings misuse          a NULL value fails the save (old archive kept)
 */
#include "check.h"

static const char NAME[] = "caf\xe9";          /* Latin-1: not UTF-8 */
static const char UTF8NAME[] = "caf\xc3\xa9";  /* "café" */
static const char ODD[] = "a\\b\x01\xff/dir name"; /* backslash, control, 0xFF */

static int decoded;

static void files_encode(void *inst, rst_coder *c) {
    (void)inst;
    CHECK_OK(rst_encode_os_string(c, "name", NAME));
    CHECK_OK(rst_encode_os_string(c, "utf8", UTF8NAME));
    CHECK_OK(rst_encode_os_string(c, "odd", ODD));
    CHECK_OK(rst_encode_os_string(c, "empty", ""));
    CHECK_OK(rst_encode_string(c, "plain", "hello"));
    CHECK_OK(rst_encode_int(c, "n", 7));
    CHECK_EQ(rst_coder_value_type(c, "name"), RST_TYPE_OS_STRING);
}

static void files_decode(void *inst, rst_coder *c) {
    (void)inst;
    decoded++;
    CHECK_EQ(rst_coder_value_type(c, "name"), RST_TYPE_OS_STRING);
    CHECK_EQ(rst_coder_value_type(c, "plain"), RST_TYPE_STRING);

    /* As an OS string: the same bytes, NUL-terminated. */
    const char *s = NULL;
    CHECK_OK(rst_decode_os_string(c, "name", &s));
    CHECK(s != NULL && strcmp(s, NAME) == 0);
    CHECK_OK(rst_decode_os_string(c, "odd", &s));
    CHECK(strcmp(s, ODD) == 0);
    CHECK_OK(rst_decode_os_string(c, "empty", &s));
    CHECK_STR(s, "");
    /* A string reads as an OS string. */
    CHECK_OK(rst_decode_os_string(c, "plain", &s));
    CHECK_STR(s, "hello");
    CHECK_ERR(rst_decode_os_string(c, "n", &s), RST_ERR_TYPE, "'n'");
    CHECK_ERR(rst_decode_os_string(c, "missing", &s), RST_ERR_NOT_FOUND, "missing");
    CHECK_ST(rst_decode_os_string(c, "name", NULL), RST_ERR_INVALID);
    CHECK_ST(rst_decode_os_string(c, NULL, &s), RST_ERR_INVALID);
    CHECK_ST(rst_decode_os_string(NULL, "name", &s), RST_ERR_INVALID);

    /* As a string: only when valid UTF-8. */
    size_t len = 99;
    s = NULL;
    CHECK_ERR(rst_decode_string(c, "name", &s, &len), RST_ERR_TYPE, "UTF-8");
    CHECK_LAST_ERROR("'name'", "OS string");
    CHECK_ST(rst_decode_string(c, "odd", &s, &len), RST_ERR_TYPE);
    CHECK_OK(rst_decode_string(c, "utf8", &s, &len));
    CHECK_STR(s, UTF8NAME);
    CHECK_EQ(len, 5);

    /* As bytes: the raw bytes. */
    const void *p = NULL;
    CHECK_OK(rst_decode_bytes(c, "name", &p, &len));
    CHECK_EQ(len, 4);
    CHECK(memcmp(p, NAME, 4) == 0);
    CHECK_ERR(rst_decode_bytes(c, "plain", &p, &len), RST_ERR_TYPE, "plain");

    /* Copies into the caller's buffer. */
    char buf[8];
    len = 99;
    CHECK_OK(rst_decode_string_copy(c, "name", buf, 5, &len));    /* exactly fits */
    CHECK_EQ(len, 4);
    CHECK(memcmp(buf, NAME, 5) == 0);
    memset(buf, 'x', sizeof buf);
    len = 99;
    CHECK_ERR(rst_decode_string_copy(c, "name", buf, 4, &len), RST_ERR_LIMIT, "'name'");
    CHECK_EQ(len, 4);                                               /* the size it needs, minus 1 */
    CHECK_EQ(buf[0], 0);                                            /* an empty string */
    CHECK_EQ(buf[1], 'x');
    memset(buf, 'x', sizeof buf);
    CHECK_ST(rst_decode_string_copy(c, "name", buf, 0, &len), RST_ERR_LIMIT);
    CHECK_EQ(len, 4);
    CHECK_EQ(buf[0], 'x');                                          /* cap 0: nothing written */
    CHECK_ST(rst_decode_string_copy(c, "name", NULL, 0, &len), RST_ERR_LIMIT); /* a size query */
    CHECK_EQ(len, 4);
    CHECK_OK(rst_decode_string_copy(c, "plain", buf, sizeof buf, &len));
    CHECK_STR(buf, "hello");
    CHECK_EQ(len, 5);
    CHECK_OK(rst_decode_string_copy(c, "plain", buf, sizeof buf, NULL));     /* len may be NULL */
    CHECK_OK(rst_decode_string_copy(c, "empty", buf, 1, &len));
    CHECK_EQ(len, 0);
    CHECK_STR(buf, "");
    memset(buf, 'x', sizeof buf);
    len = 99;
    CHECK_ERR(rst_decode_string_copy(c, "missing", buf, sizeof buf, &len), RST_ERR_NOT_FOUND, "missing");
    CHECK_EQ(len, 0);
    CHECK_EQ(buf[0], 0);
    len = 99;
    CHECK_ERR(rst_decode_string_copy(c, "n", buf, sizeof buf, &len), RST_ERR_TYPE, "'n'");
    CHECK_EQ(len, 0);
    CHECK_ERR(rst_decode_string_copy(c, "name", NULL, 5, &len), RST_ERR_INVALID, "buf");
    CHECK_ST(rst_decode_string_copy(c, NULL, buf, sizeof buf, &len), RST_ERR_INVALID);
    CHECK_ST(rst_decode_string_copy(NULL, "name", buf, sizeof buf, &len), RST_ERR_INVALID);
}

static const rst_object_callbacks files_cb = { files_encode, files_decode, NULL, NULL };

static rst_engine *files_engine(const char *archive) {
    rst_engine *e = new_engine(archive);
    CHECK_OK(rst_register_object(e, "Files", NULL, NULL, &files_cb, NULL, NULL));
    return e;
}

static void roundtrip(const char *dir) {
    char *archive = xasprintf("%s/state.rst", dir);
    rst_engine *a = files_engine(archive);
    CHECK_OK(rst_save(a));
    rst_engine_destroy(a);

    rst_engine *b = files_engine(archive);
    decoded = 0;
    CHECK_OK(rst_restore(b));
    CHECK_EQ(decoded, 1);
    /* Saved again from the restored engine: the same bytes come back. */
    CHECK_OK(rst_save(b));
    rst_engine_destroy(b);
    rst_engine *c = files_engine(archive);
    decoded = 0;
    CHECK_OK(rst_restore(c));
    CHECK_EQ(decoded, 1);
    rst_engine_destroy(c);

    /* Outside a callback: RST_ERR_STATE-free checks of NULL arguments. */
    CHECK_ST(rst_encode_os_string(NULL, "k", "v"), RST_ERR_INVALID);
    free(archive);
}

/* ------------------------------------------------------------ migration */

static int steps;

static void doc_encode_v0(void *inst, rst_coder *c) {
    (void)inst;
    CHECK_OK(rst_encode_os_string(c, "path", NAME));
    CHECK_OK(rst_encode_os_string(c, "gone", ODD));
    CHECK_OK(rst_encode_string(c, "title", "t"));
}

static void doc_decode_v1(void *inst, rst_coder *c) {
    (void)inst;
    decoded++;
    CHECK_EQ(rst_coder_class_version(c), 1);
    const char *s = NULL;
    CHECK(!rst_coder_contains(c, "path"));
    CHECK(!rst_coder_contains(c, "gone"));
    CHECK_EQ(rst_coder_value_type(c, "file"), RST_TYPE_OS_STRING);
    CHECK_OK(rst_decode_os_string(c, "file", &s));
    CHECK(strcmp(s, NAME) == 0);
    CHECK_EQ(rst_coder_value_type(c, "added"), RST_TYPE_OS_STRING);
    CHECK_OK(rst_decode_os_string(c, "added", &s));
    CHECK_STR(s, "\xff\xfe");
    CHECK_ST(rst_decode_string(c, "added", &s, NULL), RST_ERR_TYPE);
}

static const rst_object_callbacks doc_v0 = { doc_encode_v0, NULL, NULL, NULL };
static const rst_object_callbacks doc_v1 = { NULL, doc_decode_v1, NULL, NULL };

static rst_object *make_doc(rst_engine *e, rst_object *parent, const char *id, rst_coder *c, void *ctx) {
    (void)ctx; (void)c;
    rst_object *o = NULL;
    CHECK_OK(rst_register_object(e, id, parent, "Doc", &doc_v1, NULL, &o));
    return o;
}

static rst_status step0(rst_coder *c, uint32_t from, void *ctx) {
    (void)ctx; (void)from;
    steps++;
    CHECK_EQ(rst_coder_value_type(c, "path"), RST_TYPE_OS_STRING);
    const char *s = NULL;
    CHECK_OK(rst_decode_os_string(c, "path", &s));
    CHECK(strcmp(s, NAME) == 0);
    CHECK_ST(rst_decode_string(c, "path", &s, NULL), RST_ERR_TYPE);
    const void *p = NULL;
    size_t n = 0;
    CHECK_OK(rst_decode_bytes(c, "path", &p, &n));
    CHECK_EQ(n, 4);
    char buf[8];
    CHECK_OK(rst_decode_string_copy(c, "path", buf, sizeof buf, &n));
    CHECK(strcmp(buf, NAME) == 0);
    CHECK_OK(rst_coder_rename(c, "path", "file"));
    CHECK_OK(rst_coder_remove(c, "gone"));
    CHECK_OK(rst_encode_os_string(c, "added", "\xff\xfe"));
    CHECK_OK(rst_decode_os_string(c, "added", &s));       /* a value the step wrote */
    CHECK_STR(s, "\xff\xfe");
    CHECK_OK(rst_decode_os_string(c, "title", &s));       /* a string reads as an OS string */
    CHECK_STR(s, "t");
    return RST_OK;
}

static void migrate(void) {
    rst_engine *a = new_engine(NULL);
    CHECK_OK(rst_register_object(a, "D", NULL, "Doc", &doc_v0, NULL, NULL));
    void *buf = NULL;
    size_t len = 0;
    CHECK_OK(rst_save_to_buffer(a, &buf, &len));
    rst_engine_destroy(a);

    rst_engine *b = new_engine(NULL);
    CHECK_OK(rst_register_class(b, "Doc", make_doc, NULL));
    CHECK_OK(rst_set_class_version(b, "Doc", 1));
    CHECK_OK(rst_register_migration(b, "Doc", 0, step0, NULL));
    steps = decoded = 0;
    CHECK_OK(rst_restore_from_buffer(b, buf, len));
    CHECK_EQ(steps, 1);
    CHECK_EQ(decoded, 1);
    rst_free(buf);
    rst_engine_destroy(b);
}

/* --------------------------------------------------------------- misuse */

static void null_encode(void *inst, rst_coder *c) {
    (void)inst;
    CHECK_ERR(rst_encode_os_string(c, "name", NULL), RST_ERR_INVALID, "NULL");
    CHECK_ST(rst_encode_os_string(c, NULL, "x"), RST_ERR_INVALID);
}
static const rst_object_callbacks null_cb = { null_encode, NULL, NULL, NULL };

static void misuse(const char *dir) {
    char *archive = xasprintf("%s/state.rst", dir);
    rst_engine *a = files_engine(archive);
    CHECK_OK(rst_save(a));
    rst_engine_destroy(a);
    struct stat before;
    CHECK(stat(archive, &before) == 0);

    rst_engine *b = new_engine(archive);
    CHECK_OK(rst_register_object(b, "Files", NULL, NULL, &null_cb, NULL, NULL));
    CHECK_ERR(rst_save(b), RST_ERR_INVALID, "Files");
    rst_engine_destroy(b);
    struct stat after;
    CHECK(stat(archive, &after) == 0);
    CHECK_EQ(after.st_size, before.st_size);
    CHECK_EQ(after.st_ino, before.st_ino);              /* the old archive is intact */

    rst_engine *c = files_engine(archive);
    decoded = 0;
    CHECK_OK(rst_restore(c));
    CHECK_EQ(decoded, 1);
    rst_engine_destroy(c);
    free(archive);
}

int main(int argc, char **argv) {
    check_prog = "osstrings";
    if (argc < 2) { fprintf(stderr, "usage: osstrings roundtrip|migrate|misuse [DIR]\n"); return 2; }
    if (strcmp(argv[1], "roundtrip") == 0 && argc == 3) roundtrip(argv[2]);
    else if (strcmp(argv[1], "migrate") == 0) migrate();
    else if (strcmp(argv[1], "misuse") == 0 && argc == 3) misuse(argv[2]);
    else { fprintf(stderr, "osstrings: unknown mode\n"); return 2; }
    DONE();
}
