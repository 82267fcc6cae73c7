/* passes.c: the three passes of a restore, on a hand-built graph.
 *
 * Archive order (registration order, depth-first pre-order):
 *
 *   #  path   class      references
 *   0  A      Gen        -             (already registered at restore: matched)
 *   1  A/A1   Gen        C
 *   2  B      Gen        A1
 *   3  C      Gen        D             (C <-> D: a cycle)
 *   4  D      Gen        C
 *   5  E      Gen        B
 *   6  F      Decliner   -             (its factory returns NULL: the fallback makes it)
 *   7  F/F1   Gen        E
 *   8  G      Gen        G             (a self-reference)
 *   9  X      Gen        Z             (X -> Z -> Y -> X: a cycle through a parent edge)
 *  10  X/Y    Misplacer  -             (its factory returns another object: declined; fallback)
 *  11  Z      Gen        Y
 *  12  S      Unknown    -             (nothing produces it: skipped with S1)
 *  13  S/S1   Gen        -
 *  14  R      Gen        S             (a reference to a skipped record: RST_ERR_NOT_FOUND)
 *
 * The SCC rule gives the decode order  A C D A1 B E F F1 G X Y Z R.
 *
 *   passes
 */
#include "check.h"

typedef struct node {
    char path[32];
    const char *ref;       /* path of the referenced object, or NULL */
    int decoded, finished, released;
    int decode_seq;
    bool made;             /* by a factory (malloc'd) */
} node;

static node save_nodes[] = {
    { "A", NULL, 0, 0, 0, 0, false }, { "A/A1", "C", 0, 0, 0, 0, false }, { "B", "A/A1", 0, 0, 0, 0, false },
    { "C", "D", 0, 0, 0, 0, false }, { "D", "C", 0, 0, 0, 0, false }, { "E", "B", 0, 0, 0, 0, false },
    { "F", NULL, 0, 0, 0, 0, false }, { "F/F1", "E", 0, 0, 0, 0, false }, { "G", "G", 0, 0, 0, 0, false },
    { "X", "Z", 0, 0, 0, 0, false }, { "X/Y", NULL, 0, 0, 0, 0, false }, { "Z", "X/Y", 0, 0, 0, 0, false },
    { "S", NULL, 0, 0, 0, 0, false }, { "S/S1", NULL, 0, 0, 0, 0, false }, { "R", "S", 0, 0, 0, 0, false },
};
static const char *classes[] = { "Gen", "Gen", "Gen", "Gen", "Gen", "Gen", "Decliner", "Gen", "Gen", "Gen",
                                 "Misplacer", "Gen", "Unknown", "Gen", "Gen" };
#define N_NODES 15

static rst_engine *g_e;
static int g_seq;
static char decode_log[512], factory_log[512];
static int did_finish_calls, finished_total, released_total, should_restore_calls;
static bool allow_restore = true;
static bool bare_restore;

static void append(char *log, size_t cap, const char *s) {
    size_t n = strlen(log);
    snprintf(log + n, cap - n, "%s%s", n ? " " : "", s);
}

static const char *last_component(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static void n_encode(void *inst, rst_coder *c) {
    node *n = inst;
    CHECK_OK(rst_encode_string(c, "name", n->path));
    if (n->ref) {
        rst_object *target = rst_find_object(g_e, n->ref);
        CHECK_MSG(target != NULL, "no %s", n->ref);
        CHECK_OK(rst_encode_object(c, "ref", target));
    }
}

static void n_decode(void *inst, rst_coder *c) {
    node *n = inst;
    n->decoded++;
    n->decode_seq = ++g_seq;
    CHECK_EQ(n->finished, n->decoded - 1); /* no finished before every decode */
    append(decode_log, sizeof decode_log, last_component(n->path));
    const char *name = NULL;
    CHECK_OK(rst_decode_string(c, "name", &name, NULL));
    CHECK_STR(name, n->path); /* the coder is this record's */
    if (strcmp(n->path, "R") == 0 || bare_restore) {
        /* R refers to the skipped S; in the bare restore, X refers to the skipped Z */
        rst_object *o = (rst_object *)0x1;
        CHECK_ERR(rst_decode_object(c, "ref", &o), RST_ERR_NOT_FOUND, "'ref'", bare_restore ? "'Z'" : "'S'", "skipped");
        CHECK(o == (rst_object *)0x1);
    } else if (rst_coder_contains(c, "ref")) {
        rst_object *o = NULL;
        CHECK_OK(rst_decode_object(c, "ref", &o));
        /* the referenced object, materialized, even when it is on a cycle and not decoded yet */
        node *t = rst_object_instance(o);
        CHECK(t != NULL);
        char *p = NULL;
        CHECK_OK(rst_object_path(o, &p));
        CHECK_STR(p, t->path);
        rst_free(p);
        CHECK(o == rst_find_object(g_e, t->path));
    }
}
static void n_finished(void *inst) {
    node *n = inst;
    n->finished++;
    finished_total++;
    if (!bare_restore) CHECK_EQ(did_finish_calls, n->finished - 1); /* the bare engine has no did_finish */
}
static void n_release(void *inst) {
    node *n = inst;
    n->released++;
    released_total++;
    if (n->made) free(n);
}
static const rst_object_callbacks node_cb = { n_encode, n_decode, n_finished, n_release };

static node *make_node(const char *path) {
    node *n = calloc(1, sizeof *n);
    snprintf(n->path, sizeof n->path, "%s", path);
    n->made = true;
    return n;
}

static rst_object *create_here(rst_engine *e, rst_object *parent, const char *identifier) {
    char path[64];
    if (parent) {
        char *pp = NULL;
        CHECK_OK(rst_object_path(parent, &pp));
        snprintf(path, sizeof path, "%s/%s", pp, identifier);
        rst_free(pp);
    } else {
        snprintf(path, sizeof path, "%s", identifier);
    }
    rst_object *o = NULL;
    CHECK_OK(rst_register_object(e, identifier, parent, NULL, &node_cb, make_node(path), &o));
    return o;
}

static rst_object *gen_factory(rst_engine *e, rst_object *parent, const char *identifier, rst_coder *c, void *ctx) {
    CHECK(e == g_e);
    CHECK_STR((const char *)ctx, "gen-ctx");
    append(factory_log, sizeof factory_log, identifier);
    const char *name = NULL;
    CHECK_OK(rst_decode_string(c, "name", &name, NULL));
    CHECK_STR(last_component(name), identifier);
    /* parents first: the parent exists and is the object at the parent path */
    if (strchr(name, '/')) {
        CHECK(parent != NULL);
        char *pp = NULL;
        CHECK_OK(rst_object_path(parent, &pp));
        CHECK(strncmp(name, pp, strlen(pp)) == 0);
        rst_free(pp);
    } else {
        CHECK(parent == NULL);
    }
    rst_object *o = (rst_object *)0x1;
    if (strcmp(identifier, "B") == 0) {
        /* pass 1: a record already materialized can be read */
        CHECK_OK(rst_decode_object(c, "ref", &o));
        CHECK(o == rst_find_object(e, "A/A1"));
    } else if (strcmp(identifier, "C") == 0) {
        /* pass 1: a record not yet materialized cannot */
        CHECK_ERR(rst_decode_object(c, "ref", &o), RST_ERR_STATE, "'ref'", "'D'");
        CHECK(o == (rst_object *)0x1);
    } else if (strcmp(identifier, "A1") == 0) {
        CHECK_ERR(rst_decode_object(c, "ref", &o), RST_ERR_STATE, "'C'");
    }
    return create_here(e, parent, identifier);
}
static rst_object *decliner(rst_engine *e, rst_object *parent, const char *identifier, rst_coder *c, void *ctx) {
    (void)e; (void)parent; (void)c; (void)ctx;
    char s[64]; snprintf(s, sizeof s, "%s(declined)", identifier);
    append(factory_log, sizeof factory_log, s);
    return NULL;
}
static rst_object *misplacer(rst_engine *e, rst_object *parent, const char *identifier, rst_coder *c, void *ctx) {
    (void)parent; (void)c; (void)ctx;
    char s[64]; snprintf(s, sizeof s, "%s(misplaced)", identifier);
    append(factory_log, sizeof factory_log, s);
    return rst_find_object(e, "A"); /* an object at another path: declined */
}
static rst_object *fallback(rst_engine *e, rst_object *parent, const char *identifier, rst_coder *c, void *ctx) {
    (void)c;
    CHECK(ctx == &g_seq);
    char s[64]; snprintf(s, sizeof s, "%s(fallback)", identifier);
    append(factory_log, sizeof factory_log, s);
    if (strcmp(identifier, "S") == 0) return NULL;
    return create_here(e, parent, identifier);
}

static bool should_restore(rst_engine *e, const rst_archive_info *info, void *ctx) {
    (void)ctx;
    CHECK(e == g_e);
    CHECK_EQ(info->object_count, N_NODES);
    should_restore_calls++;
    return allow_restore;
}
static void did_finish(rst_engine *e, void *ctx) {
    (void)e; (void)ctx;
    did_finish_calls++;
    CHECK_EQ(finished_total, 13 * did_finish_calls); /* after every finished */
}

static void *build_archive(size_t *len) {
    rst_engine *e = new_engine(NULL);
    g_e = e;
    for (int k = 0; k < N_NODES; k++) {
        const char *path = save_nodes[k].path;
        const char *slash = strrchr(path, '/');
        rst_object *parent = NULL;
        if (slash) {
            char pp[32];
            snprintf(pp, sizeof pp, "%.*s", (int)(slash - path), path);
            parent = rst_find_object(e, pp);
            CHECK(parent != NULL);
        }
        CHECK_OK(rst_register_object(e, last_component(path), parent, classes[k], &node_cb, &save_nodes[k], NULL));
    }
    void *buf = NULL;
    CHECK_OK(rst_save_to_buffer(e, &buf, len));
    rst_engine_destroy(e);
    g_e = NULL;
    return buf;
}


/* ------------------------------------------------------------------
 * Random graphs: the decode order equals the spec's rule computed naively
 * (transitive closure for the SCCs, then repeated selection of the ready
 * component whose earliest member comes first in archive order). */

#define RMAX 40
typedef struct rnode { int idx; int parent; int nrefs; int refs[4]; int pre; rst_object *obj; } rnode;
static rnode rn[RMAX];
static int rn_count;
static int r_decoded[RMAX], r_decoded_count;
static uint64_t rng_state;

static uint32_t rnd(uint32_t n) {
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(rng_state >> 33) % n;
}

static void r_encode(void *inst, rst_coder *c) {
    rnode *n = inst;
    for (int k = 0; k < n->nrefs; k++) {
        char key[8];
        snprintf(key, sizeof key, "r%d", k);
        CHECK_OK(rst_encode_object(c, key, rn[n->refs[k]].obj));
    }
}
static void r_decode(void *inst, rst_coder *c) {
    rnode *n = inst;
    (void)c;
    r_decoded[r_decoded_count++] = n->pre;
}
static const rst_object_callbacks r_cb = { r_encode, r_decode, NULL, NULL };

/* registers the random tree into e (same order every time); returns nothing */
static void r_register(rst_engine *e, bool keep) {
    for (int i = 0; i < rn_count; i++) {
        char id[16];
        snprintf(id, sizeof id, "n%d", i);
        rst_object *o = NULL;
        CHECK_OK(rst_register_object(e, id, rn[i].parent < 0 ? NULL : rn[rn[i].parent].obj, NULL, &r_cb, &rn[i], &o));
        if (keep) rn[i].obj = o;
        else rn[i].obj = o; /* the restoring engine's objects */
    }
}

/* pre-order index of every node (siblings in registration order) */
static void r_preorder(void) {
    int counter = 0;
    int stack[RMAX], sp = 0;
    for (int i = rn_count - 1; i >= 0; i--) if (rn[i].parent < 0) stack[sp++] = i;
    while (sp > 0) {
        int v = stack[--sp];
        rn[v].pre = counter++;
        for (int i = rn_count - 1; i >= 0; i--) if (rn[i].parent == v) stack[sp++] = i;
    }
}

static void expected_order(int *out) {
    int n = rn_count;
    /* deps in pre-order indices */
    static bool dep[RMAX][RMAX], reach[RMAX][RMAX];
    memset(dep, 0, sizeof dep);
    for (int i = 0; i < n; i++) {
        int a = rn[i].pre;
        if (rn[i].parent >= 0) dep[a][rn[rn[i].parent].pre] = true;
        for (int k = 0; k < rn[i].nrefs; k++) { int b = rn[rn[i].refs[k]].pre; if (b != a) dep[a][b] = true; }
    }
    memcpy(reach, dep, sizeof dep);
    for (int k = 0; k < n; k++) for (int i = 0; i < n; i++) if (reach[i][k]) for (int j = 0; j < n; j++) if (reach[k][j]) reach[i][j] = true;
    int comp[RMAX];
    for (int i = 0; i < n; i++) { comp[i] = i; for (int j = 0; j < i; j++) if (reach[i][j] && reach[j][i]) { comp[i] = comp[j]; break; } }
    bool done[RMAX] = { false };
    int produced = 0;
    while (produced < n) {
        /* the ready component with the earliest member: scan members in archive order */
        int chosen = -1;
        for (int v = 0; v < n && chosen < 0; v++) {
            if (done[v]) continue;
            int cv = comp[v];
            bool ready = true;
            for (int m = 0; m < n && ready; m++) {
                if (comp[m] != cv) continue;
                for (int d = 0; d < n; d++) if (dep[m][d] && comp[d] != cv && !done[d]) { ready = false; break; }
            }
            if (ready) chosen = cv;
        }
        CHECK(chosen >= 0);
        for (int m = 0; m < n; m++) if (comp[m] == chosen) { done[m] = true; out[produced++] = m; }
    }
}

static void random_graphs(int rounds) {
    for (int round = 0; round < rounds; round++) {
        rng_state = 0x9e3779b97f4a7c15ULL * (uint64_t)(round + 1);
        rn_count = 2 + (int)rnd(RMAX - 1);
        for (int i = 0; i < rn_count; i++) {
            rn[i].idx = i;
            rn[i].parent = (i == 0 || rnd(4) == 0) ? -1 : (int)rnd((uint32_t)i);
            rn[i].nrefs = (int)rnd(4);
            for (int k = 0; k < rn[i].nrefs; k++) rn[i].refs[k] = (int)rnd((uint32_t)rn_count);
        }
        r_preorder();
        rst_engine *a = new_engine(NULL);
        r_register(a, true);
        void *buf = NULL; size_t len = 0;
        CHECK_OK(rst_save_to_buffer(a, &buf, &len));
        rst_engine_destroy(a);
        rst_engine *b = new_engine(NULL);
        r_register(b, false);
        r_decoded_count = 0;
        CHECK_OK(rst_restore_from_buffer(b, buf, len));
        int expect[RMAX];
        expected_order(expect);
        CHECK_EQ(r_decoded_count, rn_count);
        for (int i = 0; i < rn_count; i++) {
            if (r_decoded[i] != expect[i]) {
                char got[512] = "", want[512] = "";
                for (int k = 0; k < rn_count; k++) {
                    snprintf(got + strlen(got), sizeof got - strlen(got), "%d ", r_decoded[k]);
                    snprintf(want + strlen(want), sizeof want - strlen(want), "%d ", expect[k]);
                }
                FAIL_AT(__FILE__, __LINE__, "random graph %d (%d records): decode order (archive indices)\n  got  %s\n  want %s", round, rn_count, got, want);
            }
        }
        check_count++;
        rst_free(buf);
        rst_engine_destroy(b);
    }
}

int main(void) {
    check_prog = "passes";
    size_t len = 0;
    void *buf = build_archive(&len);

    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.should_restore = should_restore;
    o.did_finish_restoring = did_finish;
    o.log = collect_log;
    CHECK_OK(rst_engine_create(&o, &g_e));
    rst_engine *e = g_e;
    rst_restore_report rep;
    CHECK_ERR(rst_last_restore_report(e, &rep), RST_ERR_STATE, "rst_last_restore_report");

    /* A exists before the restore (its class's factory must not be asked) */
    node *a = make_node("A");
    CHECK_OK(rst_register_object(e, "A", NULL, "Gen", &node_cb, a, NULL));
    CHECK_OK(rst_register_class(e, "Gen", gen_factory, "gen-ctx"));
    CHECK_OK(rst_register_class(e, "Decliner", decliner, NULL));
    CHECK_OK(rst_register_class(e, "Misplacer", misplacer, NULL));
    CHECK_OK(rst_set_fallback_factory(e, fallback, &g_seq));

    /* should_restore says no: RST_ERR_REJECTED and nothing runs */
    allow_restore = false;
    CHECK_ERR(rst_restore_from_buffer(e, buf, len), RST_ERR_REJECTED, "should_restore");
    CHECK_EQ(should_restore_calls, 1);
    CHECK_STR(factory_log, "");
    CHECK_STR(decode_log, "");
    CHECK_EQ(finished_total, 0);
    CHECK_EQ(did_finish_calls, 0);
    allow_restore = true;

    CHECK_OK(rst_restore_from_buffer(e, buf, len));
    CHECK_EQ(should_restore_calls, 2);
    CHECK_STR(factory_log, "A1 B C D E F(declined) F(fallback) F1 G X Y(misplaced) Y(fallback) Z S(fallback) R");
    CHECK_STR(decode_log, "A C D A1 B E F F1 G X Y Z R");
    CHECK_EQ(did_finish_calls, 1);
    CHECK_EQ(finished_total, 13);
    CHECK_OK(rst_last_restore_report(e, &rep));
    CHECK_EQ(rep.archived, 15);
    CHECK_EQ(rep.restored, 13);
    CHECK_EQ(rep.skipped, 2);
    CHECK(rst_find_object(e, "S") == NULL);
    CHECK(rst_find_object(e, "S/S1") == NULL);
    const char *paths[] = { "A", "A/A1", "B", "C", "D", "E", "F", "F/F1", "G", "X", "X/Y", "Z", "R" };
    for (int k = 0; k < 13; k++) {
        rst_object *obj = rst_find_object(e, paths[k]);
        CHECK_MSG(obj != NULL, "no %s", paths[k]);
        node *n = rst_object_instance(obj);
        CHECK_EQ(n->decoded, 1);
        CHECK_EQ(n->finished, 1);
    }
    /* referenced before referencer (outside cycles) */
    #define SEQ(p) (((node *)rst_object_instance(rst_find_object(e, p)))->decode_seq)
    CHECK(SEQ("C") < SEQ("A/A1"));
    CHECK(SEQ("A/A1") < SEQ("B"));
    CHECK(SEQ("B") < SEQ("E"));
    CHECK(SEQ("E") < SEQ("F/F1"));
    CHECK(SEQ("F") < SEQ("F/F1"));
    CHECK(SEQ("A") < SEQ("A/A1"));
    /* the log names the skipped record and the declined factory */
    CHECK_MSG(strstr(log_text, "'S'") != NULL && strstr(log_text, "Unknown") != NULL, "log: %s", log_text);
    CHECK_MSG(strstr(log_text, "X/Y") != NULL, "log: %s", log_text);

    /* restore again: everything is matched now, nothing is created; S is still skipped */
    factory_log[0] = decode_log[0] = '\0';
    CHECK_OK(rst_restore_from_buffer(e, buf, len));
    CHECK_STR(factory_log, "S(fallback)");
    CHECK_STR(decode_log, "A C D A1 B E F F1 G X Y Z R");
    CHECK_EQ(did_finish_calls, 2);
    CHECK_EQ(finished_total, 26);
    CHECK_OK(rst_last_restore_report(e, &rep));
    CHECK_EQ(rep.archived, 15);
    CHECK_EQ(rep.restored, 13);
    CHECK_EQ(rep.skipped, 2);

    /* without classes or fallback, only existing objects are restored */
    rst_engine *bare = new_engine(NULL);
    node xb = { "X", NULL, 0, 0, 0, 0, false };
    CHECK_OK(rst_register_object(bare, "X", NULL, NULL, &node_cb, &xb, NULL));
    g_e = bare;
    int fin_before = finished_total;
    decode_log[0] = '\0';
    bare_restore = true;
    CHECK_OK(rst_restore_from_buffer(bare, buf, len));
    bare_restore = false;
    CHECK_STR(decode_log, "X");
    CHECK_EQ(finished_total, fin_before + 1);
    CHECK_OK(rst_last_restore_report(bare, &rep));
    CHECK_EQ(rep.archived, 15);
    CHECK_EQ(rep.restored, 1);
    CHECK_EQ(rep.skipped, 14);
    rst_engine_destroy(bare);
    CHECK_EQ(xb.released, 1);
    CHECK_EQ(xb.decoded, 1);
    CHECK_EQ(xb.finished, 1);

    released_total = 0;
    rst_engine_destroy(e);
    CHECK_EQ(released_total, 13);
    rst_free(buf);

    random_graphs(300);
    DONE();
}
