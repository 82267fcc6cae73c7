/* skips.c: every skip explained and arrays of object
 * references), through the C ABI.
 *
 * Archive order of the saved graph (buffer, no file):
 *
 *   #  path      class       object arrays               at restore
 *   0  A         Gen         stack = [C, B]              factory
 *   1  B         Gen         stack = []                  factory
 *   2  C         Gen         stack = [B]                 factory
 *   3  P         Gen         stack = [Q]  (P <-> Q)      factory
 *   4  Q         Gen         stack = [P]                 factory
 *   5  S         Gone        -                           NO_FACTORY
 *   6  S/S1      Gen         -                           PARENT_SKIPPED
 *   7  R         Gen         stack = [S, B, S/S1]        factory; S and S1 decode as NULL
 *   8  D         Decliner    -                           DECLINED (factory returns NULL)
 *   9  M         Misplacer   -                           FACTORY_ERROR
 *  10  F         Gen         fail = true                 DECODE_FAILED (rst_coder_fail)
 *  11  N         (none)      -                           NO_FACTORY (no class, no fallback)
 *
 * Decode order under the SCC rule: B C A P Q R F.
 *
 *   skips
 */
#include "check.h"

typedef struct node {
    char path[16];
    const char *stack[3];   /* paths of the referenced objects */
    int n;
    bool fail;
    bool made;
} node;

static node save_nodes[] = {
    { "A", { "C", "B" }, 2, false, false },
    { "B", { 0 }, 0, false, false },
    { "C", { "B" }, 1, false, false },
    { "P", { "Q" }, 1, false, false },
    { "Q", { "P" }, 1, false, false },
    { "S", { 0 }, -1, false, false },
    { "S/S1", { 0 }, -1, false, false },
    { "R", { "S", "B", "S/S1" }, 3, false, false },
    { "D", { 0 }, -1, false, false },
    { "M", { 0 }, -1, false, false },
    { "F", { 0 }, -1, true, false },
    { "N", { 0 }, -1, false, false },
};
static const char *classes[] = { "Gen", "Gen", "Gen", "Gen", "Gen", "Gone", "Gen", "Gen", "Decliner", "Misplacer", "Gen", NULL };
#define N_NODES 12

static rst_engine *g_e;
static char decode_log[256];
static int finished_calls;
static bool expect_skipped = true;   /* S and S/S1 skipped in the first restore */

static void append(char *log, size_t cap, const char *s) {
    size_t n = strlen(log);
    snprintf(log + n, cap - n, "%s%s", n ? " " : "", s);
}

static void n_encode(void *inst, rst_coder *c) {
    node *n = inst;
    CHECK_OK(rst_encode_string(c, "name", n->path));
    if (n->fail) CHECK_OK(rst_encode_bool(c, "fail", true));
    if (n->n >= 0) {
        rst_object *refs[3] = { 0 };
        for (int i = 0; i < n->n; i++) {
            refs[i] = rst_find_object(g_e, n->stack[i]);
            CHECK_MSG(refs[i] != NULL, "no %s", n->stack[i]);
        }
        CHECK_OK(rst_encode_object_array(c, "stack", n->n ? refs : NULL, (size_t)n->n));
        CHECK_EQ(rst_coder_value_type(c, "stack"), RST_TYPE_OBJECT_ARRAY);
    }
    /* Misuse: a NULL element fails the save, so only try it on a scratch key
     * of an engine we throw away (see bad_encode). */
}

static void n_decode(void *inst, rst_coder *c) {
    node *n = inst;
    append(decode_log, sizeof decode_log, n->path);
    bool fail = false;
    if (rst_decode_bool(c, "fail", &fail) == RST_OK && fail) {
        CHECK_OK(rst_coder_fail(c, RST_ERR_INVALID, "the saved 'fail' flag is set"));
        return;
    }
    if (!rst_coder_contains(c, "stack")) return;
    CHECK_EQ(rst_coder_value_type(c, "stack"), RST_TYPE_OBJECT_ARRAY);
    size_t count = 99;
    rst_object *o = (rst_object *)1;
    if (strcmp(n->path, "R") == 0) {
        CHECK_OK(rst_decode_object_array(c, "stack", 0, &o, &count));
        CHECK_EQ(count, 3);
        CHECK(expect_skipped ? o == NULL : o == rst_find_object(g_e, "S"));   /* S was skipped */
        CHECK_OK(rst_decode_object_array(c, "stack", 1, &o, &count));
        CHECK(o == rst_find_object(g_e, "B"));
        CHECK_OK(rst_decode_object_array(c, "stack", 2, &o, NULL));
        CHECK(expect_skipped ? o == NULL : o == rst_find_object(g_e, "S/S1")); /* S/S1 too */
    } else if (strcmp(n->path, "A") == 0) {
        CHECK_OK(rst_decode_object_array(c, "stack", 0, &o, &count));
        CHECK_EQ(count, 2);
        CHECK(o == rst_find_object(g_e, "C"));
        CHECK_OK(rst_decode_object_array(c, "stack", 1, &o, &count));
        CHECK(o == rst_find_object(g_e, "B"));
        /* index >= count: RST_ERR_NOT_FOUND, count still set */
        count = 99;
        CHECK_ERR(rst_decode_object_array(c, "stack", 2, &o, &count), RST_ERR_NOT_FOUND, "out of range");
        CHECK_EQ(count, 2);
        /* absent key, wrong type, NULL out */
        count = 99;
        CHECK_ST(rst_decode_object_array(c, "nope", 0, &o, &count), RST_ERR_NOT_FOUND);
        CHECK_EQ(count, 0);
        count = 99;
        CHECK_ST(rst_decode_object_array(c, "name", 0, &o, &count), RST_ERR_TYPE);
        CHECK_EQ(count, 0);
        CHECK_ST(rst_decode_object_array(c, "stack", 0, NULL, &count), RST_ERR_INVALID);
        CHECK_ST(rst_decode_object_array(NULL, "stack", 0, &o, &count), RST_ERR_INVALID);
        /* a single-reference read of an array is a type error */
        CHECK_ST(rst_decode_object(c, "stack", &o), RST_ERR_TYPE);
    } else if (strcmp(n->path, "B") == 0) {
        CHECK_ERR(rst_decode_object_array(c, "stack", 0, &o, &count), RST_ERR_NOT_FOUND, "0 elements");
        CHECK_EQ(count, 0);
    } else {
        CHECK_OK(rst_decode_object_array(c, "stack", 0, &o, &count));
        CHECK_EQ(count, 1);
        CHECK(o != NULL);
    }
}

static void n_finished(void *inst) { (void)inst; finished_calls++; }
static void n_release(void *inst) { node *n = inst; if (n->made) free(n); }

static const rst_object_callbacks cbs = { n_encode, n_decode, n_finished, n_release };

static rst_object *make(rst_engine *e, rst_object *parent, const char *identifier, rst_coder *c, void *ctx) {
    (void)ctx; (void)c;
    node *n = calloc(1, sizeof *n);
    n->made = true;
    n->n = -1;
    if (parent) {
        const char *pid = rst_object_identifier(parent);
        snprintf(n->path, sizeof n->path, "%s/%s", pid, identifier);
    } else {
        snprintf(n->path, sizeof n->path, "%s", identifier);
    }
    rst_object *o = NULL;
    CHECK_OK(rst_register_object(e, identifier, parent, "Gen", &cbs, n, &o));
    return o;
}

static rst_object *decline(rst_engine *e, rst_object *parent, const char *identifier, rst_coder *c, void *ctx) {
    (void)e; (void)parent; (void)identifier; (void)c; (void)ctx;
    return NULL;
}

static rst_object *misplace(rst_engine *e, rst_object *parent, const char *identifier, rst_coder *c, void *ctx) {
    (void)parent; (void)identifier; (void)c; (void)ctx;
    return rst_find_object(e, "B");   /* an object at another path */
}

static void bad_encode(void *inst, rst_coder *c) {
    (void)inst;
    rst_object *refs[2] = { rst_find_object(g_e, "X"), NULL };
    CHECK_ERR(rst_encode_object_array(c, "k", refs, 2), RST_ERR_INVALID, "element 1 is NULL");
}

static void bad_encode2(void *inst, rst_coder *c) {
    (void)inst;
    CHECK_ERR(rst_encode_object_array(c, "k", NULL, 1), RST_ERR_INVALID, "NULL");
}

int main(void) {
    check_prog = "skips";

    /* Names. */
    CHECK_STR(rst_skip_reason_name(RST_SKIP_NO_FACTORY), "RST_SKIP_NO_FACTORY");
    CHECK_STR(rst_skip_reason_name(RST_SKIP_DECLINED), "RST_SKIP_DECLINED");
    CHECK_STR(rst_skip_reason_name(RST_SKIP_FACTORY_ERROR), "RST_SKIP_FACTORY_ERROR");
    CHECK_STR(rst_skip_reason_name(RST_SKIP_PLUGIN_REJECTED), "RST_SKIP_PLUGIN_REJECTED");
    CHECK_STR(rst_skip_reason_name(RST_SKIP_PARENT_SKIPPED), "RST_SKIP_PARENT_SKIPPED");
    CHECK_STR(rst_skip_reason_name(RST_SKIP_QUARANTINED), "RST_SKIP_QUARANTINED");
    CHECK_STR(rst_skip_reason_name(RST_SKIP_NO_MIGRATION), "RST_SKIP_NO_MIGRATION");
    CHECK_STR(rst_skip_reason_name(RST_SKIP_MIGRATION_FAILED), "RST_SKIP_MIGRATION_FAILED");
    CHECK_STR(rst_skip_reason_name(RST_SKIP_TOO_NEW), "RST_SKIP_TOO_NEW");
    CHECK_STR(rst_skip_reason_name(RST_SKIP_EXPIRED), "RST_SKIP_EXPIRED");
    CHECK_STR(rst_skip_reason_name(RST_SKIP_DECODE_FAILED), "RST_SKIP_DECODE_FAILED");
    CHECK_STR(rst_skip_reason_name((rst_skip_reason)0), "RST_SKIP_UNKNOWN");
    CHECK_STR(rst_skip_reason_name((rst_skip_reason)99), "RST_SKIP_UNKNOWN");

    /* Encode misuse fails the save. */
    {
        rst_engine *e = new_engine(NULL);
        g_e = e;
        static const rst_object_callbacks bad = { bad_encode, NULL, NULL, NULL };
        static const rst_object_callbacks bad2 = { bad_encode2, NULL, NULL, NULL };
        CHECK_OK(rst_register_object(e, "X", NULL, NULL, &bad, NULL, NULL));
        void *buf = NULL; size_t len = 0;
        CHECK_ST(rst_save_to_buffer(e, &buf, &len), RST_ERR_INVALID);
        CHECK(buf == NULL);
        CHECK_OK(rst_unregister_object(e, rst_find_object(e, "X")));
        CHECK_OK(rst_register_object(e, "Y", NULL, NULL, &bad2, NULL, NULL));
        CHECK_ST(rst_save_to_buffer(e, &buf, &len), RST_ERR_INVALID);
        /* Outside a callback. */
        CHECK_ST(rst_encode_object_array(NULL, "k", NULL, 0), RST_ERR_INVALID);
        rst_engine_destroy(e);
    }

    /* Save the graph. */
    void *buf = NULL;
    size_t len = 0;
    {
        rst_engine *e = new_engine(NULL);
        g_e = e;
        for (int i = 0; i < N_NODES; i++) {
            const char *slash = strrchr(save_nodes[i].path, '/');
            rst_object *parent = NULL;
            const char *id = save_nodes[i].path;
            if (slash) {
                char pp[16];
                snprintf(pp, sizeof pp, "%.*s", (int)(slash - save_nodes[i].path), save_nodes[i].path);
                parent = rst_find_object(e, pp);
                id = slash + 1;
            }
            CHECK_OK(rst_register_object(e, id, parent, classes[i], &cbs, &save_nodes[i], NULL));
        }
        CHECK_OK(rst_save_to_buffer(e, &buf, &len));
        /* Before any restore: RST_ERR_STATE. */
        rst_skipped_record *sk = NULL;
        size_t n = 0;
        CHECK_ERR(rst_last_restore_skips(e, &sk, &n), RST_ERR_STATE, "not restored");
        rst_engine_destroy(e);
    }

    /* Restore: factories for Gen, Decliner, Misplacer; nothing for Gone. */
    {
        rst_engine *e = new_engine(NULL);
        g_e = e;
        CHECK_OK(rst_register_class(e, "Gen", make, NULL));
        CHECK_OK(rst_register_class(e, "Decliner", decline, NULL));
        CHECK_OK(rst_register_class(e, "Misplacer", misplace, NULL));
        CHECK_OK(rst_restore_from_buffer(e, buf, len));
        CHECK_STR(decode_log, "B C A P Q R F");
        rst_restore_report rep;
        CHECK_OK(rst_last_restore_report(e, &rep));
        CHECK_EQ(rep.archived, 12);
        CHECK_EQ(rep.restored, 6);
        CHECK_EQ(rep.skipped, 6);
        CHECK_EQ(finished_calls, 6);   /* F gets none */

        rst_skipped_record *sk = NULL;
        size_t n = 0;
        CHECK_OK(rst_last_restore_skips(e, &sk, &n));
        CHECK_EQ(n, rep.skipped);
        CHECK(sk != NULL);
        const char *paths[] = { "S", "S/S1", "D", "M", "F", "N" };
        const char *cls[] = { "Gone", "Gen", "Decliner", "Misplacer", "Gen", "" };
        uint32_t reasons[] = { RST_SKIP_NO_FACTORY, RST_SKIP_PARENT_SKIPPED, RST_SKIP_DECLINED,
                               RST_SKIP_FACTORY_ERROR, RST_SKIP_DECODE_FAILED, RST_SKIP_NO_FACTORY };
        const char *details[] = { "class 'Gone'", "'S' was skipped", "returned NULL", "not the one registered at 'M'",
                                  "'fail' flag is set", "no class" };
        for (size_t i = 0; i < n && i < 6; i++) {
            CHECK_STR(sk[i].path, paths[i]);
            CHECK_STR(sk[i].class_name, cls[i]);
            CHECK_MSG(sk[i].reason == reasons[i], "%s: reason %s, expected %s", sk[i].path,
                      rst_skip_reason_name((rst_skip_reason)sk[i].reason), rst_skip_reason_name((rst_skip_reason)reasons[i]));
            CHECK_EQ(sk[i].version, 0);
            CHECK(sk[i].detail != NULL);
            CHECK_MSG(strstr(sk[i].detail, details[i]) != NULL, "%s: detail \"%s\" lacks \"%s\"", sk[i].path, sk[i].detail, details[i]);
        }
        rst_free(sk);   /* one block */
        CHECK_ST(rst_last_restore_skips(NULL, &sk, &n), RST_ERR_INVALID);
        CHECK_ST(rst_last_restore_skips(e, NULL, &n), RST_ERR_INVALID);
        CHECK_ST(rst_last_restore_skips(e, &sk, NULL), RST_ERR_INVALID);

        /* A save after the restore writes the arrays back with the same targets. */
        void *again = NULL;
        size_t again_len = 0;
        CHECK_OK(rst_save_to_buffer(e, &again, &again_len));
        rst_free(again);
        rst_engine_destroy(e);
    }

    /* Everything restores: an empty skips list (NULL, 0). */
    {
        rst_engine *e = new_engine(NULL);
        g_e = e;
        CHECK_OK(rst_register_class(e, "Gen", make, NULL));
        CHECK_OK(rst_set_fallback_factory(e, make, NULL));
        static const rst_object_callbacks none = { NULL, NULL, NULL, NULL };
        CHECK_OK(rst_register_object(e, "N", NULL, NULL, &none, NULL, NULL));
        expect_skipped = false;
        decode_log[0] = 0;
        CHECK_OK(rst_restore_from_buffer(e, buf, len));
        rst_restore_report rep;
        CHECK_OK(rst_last_restore_report(e, &rep));
        rst_skipped_record *sk = (rst_skipped_record *)1;
        size_t n = 99;
        CHECK_OK(rst_last_restore_skips(e, &sk, &n));
        CHECK_EQ(n, rep.skipped);
        /* F still fails (its record says so); everything else was made. */
        CHECK_EQ(n, 1);
        CHECK_STR(sk[0].path, "F");
        rst_free(sk);
        rst_engine_destroy(e);
    }
    rst_free(buf);
    DONE();
}
