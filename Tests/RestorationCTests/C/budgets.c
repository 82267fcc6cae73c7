/* budgets.c: size budgets through the C ABI (library 1.2): exact per-record
 * attribution, WARN, FAIL, TRIM (order by priority, then size), the
 * trimmed subtrees reported at the next restore, rst_last_save_sizes.
 *
 *   budgets MODE DIR      MODE: sizes | warn | fail | trim | trimfail
 *
 * The tree (registration order; every node encodes a string of `pad` bytes):
 *
 *   App            class Window   pad  10
 *   App/Small      class Leaf     pad 500    priority 0
 *   App/Low        class Leaf     pad 300    priority -1
 *   App/Big        class Leaf     pad 2000   priority 0, child Big/Kid (pad 100)
 *   App/High       class Leaf     pad 3000   priority 5
 *   Other          (no class)     pad 20     a second root
 *
 * Small refers to Big (rst_encode_object): dropped when Big is trimmed.
 */
#include "check.h"

typedef struct node {
    const char *id;
    const char *parent;   /* path, NULL: root */
    const char *cls;
    int pad;
    int32_t priority;
    rst_object *o;
    int decoded;
    char ref[32];         /* what "ref" decoded to */
} node;

static node nodes[] = {
    { "App", NULL, "Window", 10, 0, NULL, 0, "" },
    { "Small", "App", "Leaf", 500, 0, NULL, 0, "" },
    { "Low", "App", "Leaf", 300, -1, NULL, 0, "" },
    { "Big", "App", "Leaf", 2000, 0, NULL, 0, "" },
    { "Kid", "App/Big", "Leaf", 100, 0, NULL, 0, "" },
    { "High", "App", "Leaf", 3000, 5, NULL, 0, "" },
    { "Other", NULL, NULL, 20, 0, NULL, 0, "" },
};
#define N_NODES 7

static rst_engine *g_e;

static void n_encode(void *inst, rst_coder *c) {
    node *n = inst;
    char *s = malloc((size_t)n->pad + 1);
    memset(s, 'x', (size_t)n->pad);
    s[n->pad] = 0;
    CHECK_OK(rst_encode_string(c, "pad", s));
    free(s);
    if (strcmp(n->id, "Small") == 0) {
        rst_object *big = rst_find_object(g_e, "App/Big");
        if (big) CHECK_OK(rst_encode_object(c, "ref", big));
    }
}

static void n_decode(void *inst, rst_coder *c) {
    node *n = inst;
    n->decoded = 1;
    rst_object *r = NULL;
    if (rst_coder_value_type(c, "ref") == RST_TYPE_OBJECT && rst_decode_object(c, "ref", &r) == RST_OK && r)
        snprintf(n->ref, sizeof n->ref, "%s", rst_object_identifier(r));
}

static const rst_object_callbacks cbs = { n_encode, n_decode, NULL, NULL };

static char *path_of(const node *n) {
    return n->parent ? xasprintf("%s/%s", n->parent, n->id) : xasprintf("%s", n->id);
}

static void register_all(rst_engine *e, int with_priorities) {
    g_e = e;
    for (int i = 0; i < N_NODES; i++) {
        rst_object *parent = nodes[i].parent ? rst_find_object(e, nodes[i].parent) : NULL;
        nodes[i].decoded = 0;
        nodes[i].ref[0] = 0;
        CHECK_OK(rst_register_object(e, nodes[i].id, parent, nodes[i].cls, &cbs, &nodes[i], &nodes[i].o));
        if (with_priorities) CHECK_OK(rst_set_object_priority(nodes[i].o, nodes[i].priority));
    }
}

static rst_engine *engine_with(const char *archive, uint64_t budget, uint32_t policy) {
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.archive_path = archive;
    o.size_budget = budget;
    o.budget_policy = policy;
    o.log = collect_log;
    rst_engine *e = NULL;
    CHECK_OK(rst_engine_create(&o, &e));
    return e;
}

/* ---- reading an archive's layout, to check the attribution independently */

static uint64_t varint(const unsigned char *p, size_t *pos) {
    uint64_t v = 0;
    int shift = 0;
    while (p[*pos] & 0x80) { v |= (uint64_t)(p[*pos] & 0x7f) << shift; shift += 7; (*pos)++; }
    v |= (uint64_t)p[*pos] << shift;
    (*pos)++;
    return v;
}

/* Offset of the first record: fixed header, info, string tables. */
static size_t records_start(const unsigned char *a) {
    size_t pos = 16;
    for (int i = 0; i < 3; i++) { uint64_t n = varint(a, &pos); pos += n; }
    pos += 8;
    (void)varint(a, &pos);                     /* object_count */
    uint64_t keys = varint(a, &pos), names = varint(a, &pos);
    for (uint64_t i = 0; i < keys + names; i++) { uint64_t n = varint(a, &pos); pos += n; }
    return pos;
}

static const rst_size_entry *entry(const rst_size_entry *s, size_t n, const char *path) {
    for (size_t i = 0; i < n; i++) if (strcmp(s[i].path, path) == 0) return &s[i];
    return NULL;
}

/* Sum of the roots' subtrees + header and tables + checksum (+ a TRIM
 * save's list of trimmed subtrees, `list`: overhead, not the first root's
 * own bytes) == the size; each subtree is its own bytes plus its children's
 * subtrees. */
static void check_exact_list(const rst_size_entry *s, size_t n, const unsigned char *a, size_t len, uint64_t list) {
    uint64_t roots = 0, own = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i].trimmed) continue;
        own += s[i].own_bytes;
        if (!strchr(s[i].path, '/')) roots += s[i].subtree_bytes;
        uint64_t sub = s[i].own_bytes;
        size_t pl = strlen(s[i].path);
        for (size_t j = 0; j < n; j++) {
            if (s[j].trimmed) continue;
            const char *pj = s[j].path;
            if (strncmp(pj, s[i].path, pl) == 0 && pj[pl] == '/' && !strchr(pj + pl + 1, '/')) sub += s[j].subtree_bytes;
        }
        CHECK_MSG(sub == s[i].subtree_bytes, "%s: subtree %llu, own + children %llu", s[i].path,
                  (unsigned long long)s[i].subtree_bytes, (unsigned long long)sub);
    }
    size_t start = records_start(a);
    CHECK_MSG(roots + start + 4 + list == len, "roots %llu + header and tables %zu + checksum 4 + trimmed list %llu != size %zu",
              (unsigned long long)roots, start, (unsigned long long)list, len);
    CHECK_EQ(own + list, len - start - 4);
}
static void check_exact(const rst_size_entry *s, size_t n, const unsigned char *a, size_t len) {
    check_exact_list(s, n, a, len, 0);
}

/* ---- modes */

static int mode_sizes(const char *dir) {
    char *path = xasprintf("%s/sizes.rst", dir);
    rst_engine *e = engine_with(path, 0, RST_BUDGET_WARN);
    rst_size_entry *s = (rst_size_entry *)1;
    size_t n = 99;
    /* before any save: RST_OK, nothing */
    CHECK_OK(rst_last_save_sizes(e, &s, &n));
    CHECK(s == NULL);
    CHECK_EQ(n, 0);
    CHECK_ERR(rst_last_save_sizes(NULL, &s, &n), RST_ERR_INVALID, "engine");
    CHECK_ERR(rst_last_save_sizes(e, NULL, &n), RST_ERR_INVALID, "out");
    CHECK_ERR(rst_last_save_sizes(e, &s, NULL), RST_ERR_INVALID, "count");
    CHECK_ERR(rst_set_object_priority(NULL, 1), RST_ERR_INVALID, "object");
    register_all(e, 1);

    /* a buffer save is measured */
    void *buf = NULL;
    size_t len = 0;
    CHECK_OK(rst_save_to_buffer(e, &buf, &len));
    CHECK_OK(rst_last_save_sizes(e, &s, &n));
    CHECK_EQ(n, N_NODES);
    for (int i = 0; i < N_NODES; i++) {   /* archive order = registration order here */
        char *p = path_of(&nodes[i]);
        CHECK_STR(s[i].path, p);
        CHECK_STR(s[i].class_name, nodes[i].cls ? nodes[i].cls : "");
        CHECK_EQ(s[i].trimmed, 0);
        CHECK((int)s[i].own_bytes > nodes[i].pad);
        free(p);
    }
    CHECK_EQ(entry(s, n, "App/Big")->subtree_bytes, entry(s, n, "App/Big")->own_bytes + entry(s, n, "App/Big/Kid")->own_bytes);
    check_exact(s, n, buf, len);
    rst_free(s);
    rst_free(buf);

    /* a file save is measured the same way, and matches the file */
    CHECK_OK(rst_save(e));
    size_t flen = 0;
    unsigned char *file = read_file(path, &flen);
    CHECK_OK(rst_last_save_sizes(e, &s, &n));
    CHECK_EQ(n, N_NODES);
    check_exact(s, n, file, flen);
    rst_free(s);
    free(file);
    /* no budget: no warning */
    CHECK(strstr(log_text, "budget") == NULL);
    rst_engine_destroy(e);
    DONE();
}

/* The sizes of the unbudgeted save: the total and each path's subtree. */
static size_t measure(const char *dir, rst_size_entry **out, size_t *n) {
    char *path = xasprintf("%s/measure.rst", dir);
    rst_engine *e = engine_with(path, 0, RST_BUDGET_WARN);
    register_all(e, 1);
    CHECK_OK(rst_save(e));
    size_t len = 0;
    free(read_file(path, &len));
    CHECK_OK(rst_last_save_sizes(e, out, n));
    rst_engine_destroy(e);
    free(path);
    return len;
}

static int mode_warn(const char *dir) {
    rst_size_entry *m;
    size_t mn;
    size_t total = measure(dir, &m, &mn);
    rst_free(m);
    char *path = xasprintf("%s/warn.rst", dir);
    rst_engine *e = engine_with(path, 1000, RST_BUDGET_WARN);
    register_all(e, 1);
    log_text[0] = 0;
    CHECK_OK(rst_save(e));
    CHECK(file_exists(path));
    /* one WARNING naming the budget, the size and the three largest subtrees */
    char *warning = strstr(log_text, "[2] ");
    CHECK(warning != NULL);
    CHECK_MSG(strstr(warning + 1, "[2] ") == NULL, "more than one warning:\n%s", log_text);
    char *size = xasprintf("%zu bytes", total);
    CHECK_MSG(strstr(warning, size) != NULL, "no '%s' in:\n%s", size, log_text);
    CHECK(strstr(warning, "budget of 1000 bytes") != NULL);
    char *high = strstr(warning, "'App/High' (class 'Leaf', ");
    char *big = strstr(warning, "'App/Big' (class 'Leaf', ");
    char *small = strstr(warning, "'App/Small' (class 'Leaf', ");
    CHECK_MSG(high && big && small && high < big && big < small, "largest subtrees not High, Big, Small:\n%s", log_text);
    CHECK(strstr(warning, "'App/Low'") == NULL);
    /* under the budget: no warning */
    rst_engine_destroy(e);
    e = engine_with(path, 1u << 20, RST_BUDGET_WARN);
    register_all(e, 1);
    log_text[0] = 0;
    CHECK_OK(rst_save(e));
    CHECK(strstr(log_text, "budget") == NULL);
    rst_engine_destroy(e);
    DONE();
}

static int mode_fail(const char *dir) {
    rst_size_entry *m;
    size_t mn;
    size_t total = measure(dir, &m, &mn);
    rst_free(m);
    char *path = xasprintf("%s/fail.rst", dir);
    /* a budget that fits without High's 3000 bytes */
    uint64_t budget = total - 2500;
    rst_engine *e = engine_with(path, budget, RST_BUDGET_FAIL);
    register_all(e, 1);
    nodes[5].pad = 10;
    CHECK_OK(rst_save(e));
    size_t old_len = 0;
    unsigned char *old = read_file(path, &old_len);
    nodes[5].pad = 3000;
    char *fragment = xasprintf("size budget of %llu bytes", (unsigned long long)budget);
    CHECK_ERR(rst_save(e), RST_ERR_LIMIT, fragment);
    char *size = xasprintf("%zu bytes", total);
    CHECK_LAST_ERROR(size, "'App/High' (class 'Leaf', ", "'App/Big' (class 'Leaf', ", "'App/Small' (class 'Leaf', ");
    /* the old archive is intact */
    size_t now_len = 0;
    unsigned char *now = read_file(path, &now_len);
    CHECK_EQ(now_len, old_len);
    CHECK(memcmp(now, old, old_len) == 0);
    /* the budget-failed save is the one rst_last_save_sizes lists */
    rst_size_entry *s;
    size_t n;
    CHECK_OK(rst_last_save_sizes(e, &s, &n));
    CHECK_EQ(n, N_NODES);
    CHECK(entry(s, n, "App/High")->own_bytes > 3000);
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++) if (!strchr(s[i].path, '/')) sum += s[i].subtree_bytes;
    CHECK(sum < total && sum > total - 200);
    rst_free(s);
    /* a buffer save fails the same way */
    void *buf = NULL;
    size_t len = 0;
    CHECK_ERR(rst_save_to_buffer(e, &buf, &len), RST_ERR_LIMIT, fragment);
    CHECK(buf == NULL);
    rst_engine_destroy(e);
    DONE();
}

static rst_object *leaf_factory(rst_engine *e, rst_object *parent, const char *identifier, rst_coder *c, void *ctx) {
    (void)c; (void)ctx;
    for (int i = 0; i < N_NODES; i++) {
        if (strcmp(nodes[i].id, identifier) != 0) continue;
        rst_object *o = NULL;
        if (rst_register_object(e, identifier, parent, nodes[i].cls, &cbs, &nodes[i], &o) != RST_OK) return NULL;
        nodes[i].o = o;
        return o;
    }
    return NULL;
}

static int mode_trim(const char *dir) {
    rst_size_entry *m;
    size_t mn;
    size_t total = measure(dir, &m, &mn);
    uint64_t low = entry(m, mn, "App/Low")->subtree_bytes, big = entry(m, mn, "App/Big")->subtree_bytes;
    uint64_t app_own = entry(m, mn, "App")->own_bytes;
    rst_free(m);
    /* Fits once Low (the lowest priority) and Big (the largest of priority
     * 0) are out; High (the largest, priority 5) and Small stay. */
    uint64_t budget = total - low - big + 150;
    char *path = xasprintf("%s/trim.rst", dir);
    rst_engine *e = engine_with(path, budget, RST_BUDGET_TRIM);
    register_all(e, 1);
    log_text[0] = 0;
    CHECK_OK(rst_save(e));
    CHECK_MSG(strstr(log_text, "[2] ") == NULL, "a warning:\n%s", log_text);
    size_t len = 0;
    unsigned char *a = read_file(path, &len);
    CHECK_MSG(len <= budget, "archive %zu bytes, budget %llu", len, (unsigned long long)budget);
    rst_size_entry *s;
    size_t n;
    CHECK_OK(rst_last_save_sizes(e, &s, &n));
    CHECK_EQ(n, N_NODES);   /* every record considered, in archive order */
    for (int i = 0; i < N_NODES; i++) {
        char *p = path_of(&nodes[i]);
        CHECK_STR(s[i].path, p);
        free(p);
    }
    CHECK_EQ(entry(s, n, "App/Low")->trimmed, 1);
    CHECK_EQ(entry(s, n, "App/Big")->trimmed, 1);
    CHECK_EQ(entry(s, n, "App/Big/Kid")->trimmed, 1);   /* descendants too */
    CHECK_EQ(entry(s, n, "App/Small")->trimmed, 0);
    CHECK_EQ(entry(s, n, "App/High")->trimmed, 0);
    CHECK_EQ(entry(s, n, "App")->trimmed, 0);
    CHECK_EQ(entry(s, n, "Other")->trimmed, 0);
    CHECK_EQ(entry(s, n, "App/Big")->subtree_bytes, big);   /* what it would have taken */
    /* the list of trimmed subtrees lives in record 0 (App) but is not App's own */
    CHECK_MSG(entry(s, n, "App")->own_bytes == app_own, "App's own bytes %llu after the trim, %llu before: the list of trimmed subtrees was counted in them",
              (unsigned long long)entry(s, n, "App")->own_bytes, (unsigned long long)app_own);
    {
        uint64_t roots = 0;
        for (size_t i = 0; i < n; i++) if (!s[i].trimmed && !strchr(s[i].path, '/')) roots += s[i].subtree_bytes;
        uint64_t list = len - records_start(a) - 4 - roots;
        CHECK(list > 0 && list < 200);
        check_exact_list(s, n, a, len, list);
    }
    rst_free(s);
    free(a);
    rst_engine_destroy(e);

    /* the next restore: Low and Big skipped as TRIMMED (not Kid), the
     * detail names the budget; Small's reference to Big was dropped */
    e = engine_with(path, 0, RST_BUDGET_WARN);
    g_e = e;
    CHECK_OK(rst_register_class(e, "Leaf", leaf_factory, NULL));
    CHECK_OK(rst_register_class(e, "Window", leaf_factory, NULL));
    CHECK_OK(rst_set_fallback_factory(e, leaf_factory, NULL));
    for (int i = 0; i < N_NODES; i++) { nodes[i].decoded = 0; nodes[i].ref[0] = 0; }
    CHECK_OK(rst_restore(e));
    CHECK(nodes[1].decoded && nodes[5].decoded && nodes[0].decoded && nodes[6].decoded);
    CHECK(!nodes[2].decoded && !nodes[3].decoded && !nodes[4].decoded);
    CHECK_STR(nodes[1].ref, "");
    rst_skipped_record *k;
    size_t kn;
    CHECK_OK(rst_last_restore_skips(e, &k, &kn));
    CHECK_EQ(kn, 2);
    char *detail = xasprintf("size budget of %llu bytes", (unsigned long long)budget);
    CHECK_STR(k[0].path, "App/Low");
    CHECK_STR(k[0].class_name, "Leaf");
    CHECK_EQ(k[0].reason, RST_SKIP_TRIMMED);
    CHECK_MSG(strstr(k[0].detail, detail) != NULL, "detail: %s", k[0].detail);
    CHECK_STR(k[1].path, "App/Big");
    CHECK_EQ(k[1].reason, RST_SKIP_TRIMMED);
    CHECK_STR(rst_skip_reason_name(RST_SKIP_TRIMMED), "RST_SKIP_TRIMMED");
    rst_free(k);
    rst_restore_report r;
    CHECK_OK(rst_last_restore_report(e, &r));
    CHECK_EQ(r.skipped, kn);
    CHECK_EQ(r.restored, 4);
    /* a save of the restored state has nothing trimmed: the list is gone */
    CHECK_OK(rst_save(e));
    rst_engine_destroy(e);
    e = engine_with(path, 0, RST_BUDGET_WARN);
    g_e = e;
    CHECK_OK(rst_set_fallback_factory(e, leaf_factory, NULL));
    CHECK_OK(rst_restore(e));
    CHECK_OK(rst_last_restore_skips(e, &k, &kn));
    CHECK_EQ(kn, 0);
    rst_engine_destroy(e);

    /* equal priorities: the largest first (Big before Small, though Small
     * comes first in archive order) */
    for (int i = 0; i < N_NODES; i++) nodes[i].priority = 0;
    e = engine_with(path, total - big + 100, RST_BUDGET_TRIM);
    register_all(e, 1);
    CHECK_OK(rst_save(e));
    CHECK_OK(rst_last_save_sizes(e, &s, &n));
    CHECK_EQ(entry(s, n, "App/High")->trimmed, 1);   /* the largest of all */
    CHECK_EQ(entry(s, n, "App/Big")->trimmed, 0);
    CHECK_EQ(entry(s, n, "App/Small")->trimmed, 0);
    CHECK_EQ(entry(s, n, "App/Low")->trimmed, 0);
    rst_free(s);
    rst_engine_destroy(e);
    DONE();
}

static int mode_trimfail(const char *dir) {
    char *path = xasprintf("%s/trimfail.rst", dir);
    rst_engine *e = engine_with(path, 40, RST_BUDGET_TRIM);
    register_all(e, 1);
    CHECK_ERR(rst_save(e), RST_ERR_LIMIT, "size budget of 40 bytes");
    CHECK_LAST_ERROR("does not fit even with every subtree below the roots left out");
    CHECK(!file_exists(path));
    rst_size_entry *s;
    size_t n;
    CHECK_OK(rst_last_save_sizes(e, &s, &n));
    CHECK_EQ(n, N_NODES);
    for (size_t i = 0; i < n; i++) CHECK_EQ(s[i].trimmed, 0);   /* nothing was saved, nothing left out */
    rst_free(s);
    rst_engine_destroy(e);
    DONE();
}

/* A trimmed archive's first record carried by a build that cannot restore
 * it: the carried copy does not take the old list along, so the restore
 * after the next save reports no trimmed paths. */
static int count_trimmed(rst_engine *e) {
    rst_skipped_record *k;
    size_t kn;
    CHECK_OK(rst_last_restore_skips(e, &k, &kn));
    int t = 0;
    for (size_t i = 0; i < kn; i++) t += k[i].reason == RST_SKIP_TRIMMED;
    rst_free(k);
    return t;
}

static rst_engine *carrying_engine(const char *path) {
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.archive_path = path;
    o.carry_saves = UINT32_MAX;
    o.log = collect_log;
    rst_engine *e = NULL;
    CHECK_OK(rst_engine_create(&o, &e));
    CHECK_OK(rst_register_object(e, "Other", NULL, NULL, &cbs, &nodes[6], NULL));
    return e;
}

static int mode_carry(const char *dir) {
    char *path = xasprintf("%s/carry.rst", dir);
    rst_engine *e = engine_with(path, 3000, RST_BUDGET_TRIM);
    register_all(e, 1);
    CHECK_OK(rst_save(e));
    rst_size_entry *s;
    size_t n;
    CHECK_OK(rst_last_save_sizes(e, &s, &n));
    int trimmed_tops = 0;
    for (size_t i = 0; i < n; i++) trimmed_tops += s[i].trimmed && strcmp(s[i].path, "App/Big/Kid") != 0;
    rst_free(s);
    CHECK(trimmed_tops >= 1);
    rst_engine_destroy(e);
    e = carrying_engine(path);
    CHECK_OK(rst_restore(e));
    CHECK_EQ(count_trimmed(e), trimmed_tops);
    CHECK_OK(rst_save(e));   /* App (no factory here) is carried */
    rst_engine_destroy(e);
    e = carrying_engine(path);
    CHECK_OK(rst_restore(e));
    CHECK_EQ(count_trimmed(e), 0);
    rst_restore_report r;
    CHECK_OK(rst_last_restore_report(e, &r));
    CHECK(r.skipped >= 1);   /* App, still carried */
    rst_engine_destroy(e);
    DONE();
}

int main(int argc, char **argv) {
    check_prog = "budgets";
    if (argc < 3) { fprintf(stderr, "usage: budgets MODE DIR\n"); return 2; }
    const char *mode = argv[1], *dir = argv[2];
    if (strcmp(mode, "sizes") == 0) return mode_sizes(dir);
    if (strcmp(mode, "warn") == 0) return mode_warn(dir);
    if (strcmp(mode, "fail") == 0) return mode_fail(dir);
    if (strcmp(mode, "trim") == 0) return mode_trim(dir);
    if (strcmp(mode, "trimfail") == 0) return mode_trimfail(dir);
    if (strcmp(mode, "carry") == 0) return mode_carry(dir);
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
}
