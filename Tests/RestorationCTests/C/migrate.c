/* migrate.c: class versions and migration chains, through the C ABI.
 *
 * Saved at version 0 (no version set, as a 1.0 program would):
 *   D   class Doc   title="Report", size=7, old=true, layout={w=3,h=4,inner={z=1}}, peer -> E
 *   D/C class Leaf  n=1
 *   E   class Leaf  n=2
 *
 * Restored with Doc at version 3 and the chain
 *   0->1: rename title -> name
 *   1->2: enter layout: area = w*h, remove w; enter layout.inner: z += 10
 *   2->3: add record meta {from=2}, remove old, replace size with size*100
 * then with a missing step, a failing step, and a record that is too new.
 *
 *   migrate
 */
#include "check.h"

typedef struct obj {
    char path[16];
    bool made;
    int decoded;
} obj;

static obj d = { "D", false, 0 }, c = { "D/C", false, 0 }, e = { "E", false, 0 };
static rst_engine *g_e;
static int steps_run;
static int factory_calls;

static void d_encode(void *inst, rst_coder *co) {
    (void)inst;
    CHECK_OK(rst_encode_string(co, "title", "Report"));
    CHECK_OK(rst_encode_int(co, "size", 7));
    CHECK_OK(rst_encode_bool(co, "old", true));
    CHECK_OK(rst_encode_begin_record(co, "layout"));
    CHECK_OK(rst_encode_int(co, "w", 3));
    CHECK_OK(rst_encode_int(co, "h", 4));
    CHECK_OK(rst_encode_begin_record(co, "inner"));
    CHECK_OK(rst_encode_int(co, "z", 1));
    CHECK_OK(rst_encode_end_record(co));
    CHECK_OK(rst_encode_end_record(co));
    CHECK_OK(rst_encode_object(co, "peer", rst_find_object(g_e, "E")));
    /* Editing is for migrations only. */
    CHECK_ERR(rst_coder_remove(co, "size"), RST_ERR_STATE, "migration");
    CHECK_ERR(rst_coder_rename(co, "size", "s"), RST_ERR_STATE, "migration");
}

static void leaf_encode(void *inst, rst_coder *co) {
    obj *o = inst;
    CHECK_OK(rst_encode_int(co, "n", strcmp(o->path, "E") == 0 ? 2 : 1));
}

static uint32_t expect_version = 3;

static void d_decode(void *inst, rst_coder *co) {
    obj *o = inst;
    o->decoded++;
    CHECK_EQ(rst_coder_class_version(co), expect_version);
    const char *s = NULL;
    int64_t v = 0;
    bool b = false;
    CHECK_OK(rst_decode_string(co, "name", &s, NULL));
    CHECK_STR(s, "Report");
    CHECK_ST(rst_decode_string(co, "title", &s, NULL), RST_ERR_NOT_FOUND);
    CHECK_OK(rst_decode_int(co, "size", &v));
    CHECK_EQ(v, 700);
    CHECK_ST(rst_decode_bool(co, "old", &b), RST_ERR_NOT_FOUND);
    CHECK_OK(rst_decode_begin_record(co, "layout"));
    CHECK_OK(rst_decode_int(co, "area", &v));
    CHECK_EQ(v, 12);
    CHECK_OK(rst_decode_int(co, "h", &v));
    CHECK_EQ(v, 4);
    CHECK_ST(rst_decode_int(co, "w", &v), RST_ERR_NOT_FOUND);
    CHECK_OK(rst_decode_begin_record(co, "inner"));
    CHECK_OK(rst_decode_int(co, "z", &v));
    CHECK_EQ(v, 11);
    CHECK_OK(rst_decode_end_record(co));
    CHECK_OK(rst_decode_end_record(co));
    CHECK_OK(rst_decode_begin_record(co, "meta"));
    CHECK_OK(rst_decode_int(co, "from", &v));
    CHECK_EQ(v, 2);
    CHECK_OK(rst_decode_end_record(co));
    rst_object *peer = NULL;
    CHECK_OK(rst_decode_object(co, "peer", &peer));
    CHECK(peer == rst_find_object(g_e, "E"));
}

/* After the migrated restore, a save writes version 3: a later restore
 * decodes the migrated keys without running anything. */
static void d_encode_migrated(void *inst, rst_coder *co) {
    (void)inst;
    CHECK_EQ(rst_coder_class_version(co), 3);
    CHECK_OK(rst_encode_string(co, "name", "Report"));
    CHECK_OK(rst_encode_int(co, "size", 700));
    CHECK_OK(rst_encode_begin_record(co, "layout"));
    CHECK_OK(rst_encode_int(co, "h", 4));
    CHECK_OK(rst_encode_int(co, "area", 12));
    CHECK_OK(rst_encode_begin_record(co, "inner"));
    CHECK_OK(rst_encode_int(co, "z", 11));
    CHECK_OK(rst_encode_end_record(co));
    CHECK_OK(rst_encode_end_record(co));
    CHECK_OK(rst_encode_begin_record(co, "meta"));
    CHECK_OK(rst_encode_int(co, "from", 2));
    CHECK_OK(rst_encode_end_record(co));
    CHECK_OK(rst_encode_object(co, "peer", rst_find_object(g_e, "E")));
}

static void leaf_decode(void *inst, rst_coder *co) {
    obj *o = inst;
    o->decoded++;
    CHECK_EQ(rst_coder_class_version(co), 0);
}

static void release(void *inst) { obj *o = inst; if (o->made) free(o); }

static const rst_object_callbacks d_cbs = { d_encode, d_decode, NULL, release };
static const rst_object_callbacks leaf_cbs = { leaf_encode, leaf_decode, NULL, release };

static rst_object *make(rst_engine *en, rst_object *parent, const char *id, rst_coder *co, void *ctx) {
    const char *cls = ctx;
    factory_calls++;
    obj *o = calloc(1, sizeof *o);
    o->made = true;
    snprintf(o->path, sizeof o->path, "%s%s%s", parent ? rst_object_identifier(parent) : "", parent ? "/" : "", id);
    if (strcmp(cls, "Doc") == 0) {
        /* The factory sees the migrated record. */
        CHECK_EQ(rst_coder_class_version(co), expect_version);
        CHECK(rst_coder_contains(co, "name"));
        CHECK(!rst_coder_contains(co, "title"));
    }
    rst_object *out = NULL;
    CHECK_OK(rst_register_object(en, id, parent, cls, strcmp(cls, "Doc") == 0 ? &d_cbs : &leaf_cbs, o, &out));
    return out;
}

/* 0 -> 1 */
static rst_status step0(rst_coder *co, uint32_t from, void *ctx) {
    (void)ctx;
    steps_run++;
    CHECK_EQ(from, 0);
    CHECK_EQ(rst_coder_class_version(co), 0);
    CHECK_EQ(rst_coder_value_type(co, "title"), RST_TYPE_STRING);
    CHECK_OK(rst_coder_rename(co, "title", "name"));
    CHECK_ERR(rst_coder_rename(co, "title", "x"), RST_ERR_NOT_FOUND, "title");
    CHECK_ERR(rst_coder_rename(co, "name", "size"), RST_ERR_DUPLICATE, "size");
    CHECK_OK(rst_coder_rename(co, "name", "name"));
    const char *s = NULL;
    CHECK_OK(rst_decode_string(co, "name", &s, NULL));
    CHECK_STR(s, "Report");
    /* References cannot be read or written: no object exists yet. */
    rst_object *o = NULL;
    CHECK_ERR(rst_decode_object(co, "peer", &o), RST_ERR_STATE, "migration");
    CHECK_EQ(rst_coder_value_type(co, "peer"), RST_TYPE_OBJECT);
    return RST_OK;
}

/* 1 -> 2: nested edits */
static rst_status step1(rst_coder *co, uint32_t from, void *ctx) {
    (void)ctx;
    steps_run++;
    CHECK_EQ(from, 1);
    CHECK(rst_coder_contains(co, "name"));            /* step 0's edit is visible */
    int64_t w = 0, h = 0, z = 0;
    CHECK_OK(rst_decode_begin_record(co, "layout"));
    CHECK_OK(rst_decode_int(co, "w", &w));
    CHECK_OK(rst_decode_int(co, "h", &h));
    CHECK_OK(rst_encode_int(co, "area", w * h));
    CHECK_OK(rst_coder_remove(co, "w"));
    CHECK_ERR(rst_coder_remove(co, "w"), RST_ERR_NOT_FOUND, "'w'");
    CHECK_OK(rst_decode_begin_record(co, "inner"));
    CHECK_OK(rst_decode_int(co, "z", &z));
    CHECK_OK(rst_encode_int(co, "z", z + 10));        /* replace in place */
    CHECK_OK(rst_decode_end_record(co));
    CHECK_OK(rst_encode_end_record(co));              /* either end leaves */
    CHECK_ST(rst_decode_end_record(co), RST_ERR_STATE);
    return RST_OK;
}

/* 2 -> 3: a new nested record, a removal, a replacement */
static rst_status step2(rst_coder *co, uint32_t from, void *ctx) {
    (void)ctx;
    steps_run++;
    CHECK_EQ(from, 2);
    int64_t size = 0;
    CHECK_OK(rst_decode_int(co, "size", &size));
    CHECK_OK(rst_encode_int(co, "size", size * 100));
    CHECK_OK(rst_encode_begin_record(co, "meta"));
    CHECK_OK(rst_encode_int(co, "from", (int64_t)from));
    CHECK_OK(rst_encode_end_record(co));
    CHECK_OK(rst_coder_remove(co, "old"));
    return RST_OK;
}

static rst_status failing(rst_coder *co, uint32_t from, void *ctx) {
    (void)from; (void)ctx;
    steps_run++;
    CHECK_OK(rst_coder_fail(co, RST_ERR_CORRUPT, "the layout cannot be converted"));
    return RST_OK;
}

static rst_status returns_error(rst_coder *co, uint32_t from, void *ctx) {
    (void)co; (void)from; (void)ctx;
    steps_run++;
    return RST_ERR_TYPE;
}

static rst_engine *restore_engine(void) {
    rst_engine *en = new_engine(NULL);
    g_e = en;
    CHECK_OK(rst_register_class(en, "Doc", make, (void *)"Doc"));
    CHECK_OK(rst_register_class(en, "Leaf", make, (void *)"Leaf"));
    return en;
}

static void expect_skip(rst_engine *en, const char *path, rst_skip_reason reason, uint32_t version, const char *fragment) {
    rst_skipped_record *sk = NULL;
    size_t n = 0;
    CHECK_OK(rst_last_restore_skips(en, &sk, &n));
    rst_restore_report rep;
    CHECK_OK(rst_last_restore_report(en, &rep));
    CHECK_EQ(n, rep.skipped);
    CHECK_EQ(n, 2);   /* the record and its child */
    CHECK_STR(sk[0].path, path);
    CHECK_MSG(sk[0].reason == (uint32_t)reason, "reason %s", rst_skip_reason_name((rst_skip_reason)sk[0].reason));
    CHECK_EQ(sk[0].version, version);
    CHECK_MSG(strstr(sk[0].detail, fragment) != NULL, "detail \"%s\" lacks \"%s\"", sk[0].detail, fragment);
    CHECK_EQ(sk[1].reason, RST_SKIP_PARENT_SKIPPED);
    CHECK_STR(sk[1].path, "D/C");
    rst_free(sk);
}

int main(void) {
    check_prog = "migrate";

    /* Save at version 0. */
    void *v0 = NULL;
    size_t v0_len = 0;
    {
        rst_engine *en = new_engine(NULL);
        g_e = en;
        rst_object *od = NULL;
        CHECK_OK(rst_register_object(en, "D", NULL, "Doc", &d_cbs, &d, &od));
        CHECK_OK(rst_register_object(en, "C", od, "Leaf", &leaf_cbs, &c, NULL));
        CHECK_OK(rst_register_object(en, "E", NULL, "Leaf", &leaf_cbs, &e, NULL));
        CHECK_OK(rst_save_to_buffer(en, &v0, &v0_len));
        CHECK_EQ(((unsigned char *)v0)[10], 0);   /* no versions: 1.0 bytes, flags 0 */
        rst_engine_destroy(en);
    }

    /* Registration rules. */
    {
        rst_engine *en = new_engine(NULL);
        CHECK_OK(rst_set_class_version(en, "Doc", 3));
        CHECK_OK(rst_set_class_version(en, "Doc", 3));
        CHECK_ST(rst_set_class_version(NULL, "Doc", 3), RST_ERR_INVALID);
        CHECK_ST(rst_set_class_version(en, NULL, 3), RST_ERR_INVALID);
        CHECK_ST(rst_set_class_version(en, "", 3), RST_ERR_INVALID);
        CHECK_OK(rst_register_migration(en, "Doc", 0, step0, NULL));
        CHECK_ERR(rst_register_migration(en, "Doc", 0, step0, NULL), RST_ERR_DUPLICATE, "version 0");
        CHECK_ST(rst_register_migration(en, "Doc", 1, NULL, NULL), RST_ERR_INVALID);
        CHECK_ST(rst_register_migration(en, "Doc", UINT32_MAX, step0, NULL), RST_ERR_INVALID);
        CHECK_ST(rst_register_migration(NULL, "Doc", 1, step0, NULL), RST_ERR_INVALID);
        CHECK_EQ(rst_coder_class_version(NULL), 0);
        CHECK_ST(rst_coder_remove(NULL, "k"), RST_ERR_INVALID);
        CHECK_ST(rst_coder_rename(NULL, "a", "b"), RST_ERR_INVALID);
        rst_engine_destroy(en);
    }

    /* The chain of three over a nested record. */
    void *v3 = NULL;
    size_t v3_len = 0;
    {
        rst_engine *en = restore_engine();
        CHECK_OK(rst_set_class_version(en, "Doc", 3));
        CHECK_OK(rst_register_migration(en, "Doc", 2, step2, NULL));   /* any order */
        CHECK_OK(rst_register_migration(en, "Doc", 0, step0, NULL));
        CHECK_OK(rst_register_migration(en, "Doc", 1, step1, NULL));
        CHECK_OK(rst_restore_from_buffer(en, v0, v0_len));
        CHECK_EQ(steps_run, 3);
        rst_restore_report rep;
        CHECK_OK(rst_last_restore_report(en, &rep));
        CHECK_EQ(rep.restored, 3);
        CHECK_EQ(rep.skipped, 0);
        rst_object *od = rst_find_object(en, "D");
        CHECK(od != NULL);
        CHECK_EQ(((obj *)rst_object_instance(od))->decoded, 1);
        /* Save again: version 3 is stored (flag 1). */
        CHECK_OK(rst_unregister_object(en, od));
        rst_object *nd = NULL;
        static const rst_object_callbacks mig = { d_encode_migrated, d_decode, NULL, NULL };
        CHECK_OK(rst_register_object(en, "D", NULL, "Doc", &mig, &d, &nd));
        CHECK_OK(rst_register_object(en, "C", nd, "Leaf", &leaf_cbs, &c, NULL));
        CHECK_OK(rst_save_to_buffer(en, &v3, &v3_len));
        CHECK_EQ(((unsigned char *)v3)[10], 1);
        rst_engine_destroy(en);
    }
    /* Restoring the version-3 archive runs no migration. */
    {
        rst_engine *en = restore_engine();
        CHECK_OK(rst_set_class_version(en, "Doc", 3));
        CHECK_OK(rst_register_migration(en, "Doc", 0, failing, NULL));
        steps_run = 0;
        CHECK_OK(rst_restore_from_buffer(en, v3, v3_len));
        CHECK_EQ(steps_run, 0);
        rst_restore_report rep;
        CHECK_OK(rst_last_restore_report(en, &rep));
        CHECK_EQ(rep.skipped, 0);
        rst_engine_destroy(en);
    }
    /* A class with no version set restores as in 1.0, whatever the record stores. */
    {
        rst_engine *en = restore_engine();
        expect_version = 3;   /* the record says 3; nothing migrates */
        CHECK_OK(rst_restore_from_buffer(en, v3, v3_len));
        rst_restore_report rep;
        CHECK_OK(rst_last_restore_report(en, &rep));
        CHECK_EQ(rep.skipped, 0);
        rst_engine_destroy(en);
    }

    /* A missing step: D and its child are skipped; E restores. */
    {
        rst_engine *en = restore_engine();
        CHECK_OK(rst_set_class_version(en, "Doc", 3));
        CHECK_OK(rst_register_migration(en, "Doc", 0, step0, NULL));
        CHECK_OK(rst_register_migration(en, "Doc", 2, step2, NULL));
        steps_run = 0;
        factory_calls = 0;
        CHECK_OK(rst_restore_from_buffer(en, v0, v0_len));
        CHECK_EQ(steps_run, 0);           /* the chain is checked before any step runs */
        CHECK_EQ(factory_calls, 1);       /* E only */
        CHECK(rst_find_object(en, "E") != NULL);
        CHECK(rst_find_object(en, "D") == NULL);
        expect_skip(en, "D", RST_SKIP_NO_MIGRATION, 0, "no migration from version 1");
        rst_engine_destroy(en);
    }

    /* A failing step (rst_coder_fail), then one returning an error. */
    {
        rst_engine *en = restore_engine();
        CHECK_OK(rst_set_class_version(en, "Doc", 2));
        CHECK_OK(rst_register_migration(en, "Doc", 0, step0, NULL));
        CHECK_OK(rst_register_migration(en, "Doc", 1, failing, NULL));
        steps_run = 0;
        CHECK_OK(rst_restore_from_buffer(en, v0, v0_len));
        CHECK_EQ(steps_run, 2);
        expect_skip(en, "D", RST_SKIP_MIGRATION_FAILED, 0, "cannot be converted");
        rst_engine_destroy(en);

        en = restore_engine();
        CHECK_OK(rst_set_class_version(en, "Doc", 1));
        CHECK_OK(rst_register_migration(en, "Doc", 0, returns_error, NULL));
        CHECK_OK(rst_restore_from_buffer(en, v0, v0_len));
        expect_skip(en, "D", RST_SKIP_MIGRATION_FAILED, 0, "RST_ERR_TYPE");
        rst_engine_destroy(en);
    }

    /* Too new: the archive's Doc is version 3, this program's is 2. */
    {
        rst_engine *en = restore_engine();
        CHECK_OK(rst_set_class_version(en, "Doc", 2));
        CHECK_OK(rst_restore_from_buffer(en, v3, v3_len));
        expect_skip(en, "D", RST_SKIP_TOO_NEW, 3, "version 3");
        rst_engine_destroy(en);
    }
    rst_free(v0);
    rst_free(v3);
    DONE();
}
