/* registry.c: versions, status names, engine options, registration rules,
 * find and accessors, unregister (descendants, release children-first,
 * RST_ERR_STATE inside callbacks), the tree-depth limit, NULL arguments to
 * every function, and the thread-local rst_last_error().
 *
 *   registry DIR
 */
#include "check.h"
#include <pthread.h>

/* ------------------------------------------------------------ release log */

static char release_log[4096];
static void log_release(void *inst) {
    const char *name = inst;
    size_t n = strlen(release_log);
    snprintf(release_log + n, sizeof release_log - n, "%s,", name);
}
static const rst_object_callbacks release_cb = { NULL, NULL, NULL, log_release };

static size_t pos_in_log(const char *name) {
    char *needle = xasprintf(",%s,", name);
    char *hay = xasprintf(",%s", release_log);
    char *at = strstr(hay, needle);
    size_t pos = at ? (size_t)(at - hay) : (size_t)-1;
    free(needle); free(hay);
    return pos;
}

static void versions(void) {
    CHECK_STR(rst_version(), RST_VERSION_STRING);
    CHECK_EQ(RST_VERSION_MAJOR, 1);
    CHECK_EQ(RST_ABI_VERSION, 1);
    char expect[32];
    snprintf(expect, sizeof expect, "%d.%d.%d", RST_VERSION_MAJOR, RST_VERSION_MINOR, RST_VERSION_PATCH);
    CHECK_STR(rst_version(), expect);

    static const char *names[] = { "RST_OK", "RST_ERR_INVALID", "RST_ERR_NOT_FOUND", "RST_ERR_DUPLICATE",
        "RST_ERR_TYPE", "RST_ERR_CORRUPT", "RST_ERR_VERSION", "RST_ERR_IO", "RST_ERR_PLUGIN",
        "RST_ERR_REJECTED", "RST_ERR_NOMEM", "RST_ERR_STATE", "RST_ERR_LIMIT", "RST_ERR_FENCED",
        "RST_ERR_UNAVAILABLE" };
    for (int s = 0; s <= 14; s++) CHECK_STR(rst_status_name((rst_status)s), names[s]);
    CHECK_STR(rst_status_name(RST_ERR_LIMIT), "RST_ERR_LIMIT");
    CHECK_STR(rst_status_name((rst_status)15), "RST_ERR_UNKNOWN");
    CHECK_STR(rst_status_name((rst_status)999), "RST_ERR_UNKNOWN");
    CHECK_STR(rst_status_name((rst_status)-1), "RST_ERR_UNKNOWN");
}

/* RST_ENGINE_OPTIONS_INIT is the version with every other member zero, and
 * rst_engine_options_init() gives the same struct. */
static void options_init(void) {
    rst_engine_options a = RST_ENGINE_OPTIONS_INIT;
    CHECK_EQ(a.version, RST_ENGINE_OPTIONS_VERSION);
    CHECK(a.archive_path == NULL && a.plugin_dir == NULL && a.app_version == NULL && a.idiom == NULL);
    CHECK(a.should_save == NULL && a.should_restore == NULL && a.did_finish_restoring == NULL);
    CHECK(a.ctx == NULL && a.flags == 0 && a.log == NULL);

    rst_engine_options b;
    memset(&b, 0xA5, sizeof b);
    CHECK_OK(rst_engine_options_init(&b, RST_ENGINE_OPTIONS_VERSION));
    CHECK_EQ(b.version, RST_ENGINE_OPTIONS_VERSION);
    CHECK(b.archive_path == NULL && b.plugin_dir == NULL && b.app_version == NULL && b.idiom == NULL);
    CHECK(b.should_save == NULL && b.should_restore == NULL && b.did_finish_restoring == NULL);
    CHECK(b.ctx == NULL && b.flags == 0 && b.log == NULL);

    CHECK_ERR(rst_engine_options_init(NULL, RST_ENGINE_OPTIONS_VERSION), RST_ERR_INVALID, "rst_engine_options_init", "NULL");
    rst_engine_options c;
    memset(&c, 0x5A, sizeof c);
    CHECK_ERR(rst_engine_options_init(&c, 0), RST_ERR_VERSION, "rst_engine_options_init", "version 0");
    CHECK_ERR(rst_engine_options_init(&c, RST_ENGINE_OPTIONS_VERSION + 1), RST_ERR_VERSION, "version");
    CHECK_EQ(c.version, 0x5A5A5A5Au); /* untouched on error */

    /* An engine made from it works. */
    rst_engine *e = NULL;
    CHECK_OK(rst_engine_create(&b, &e));
    rst_engine_destroy(e);
}

static void engine_options(const char *dir) {
    rst_engine *e = (rst_engine *)0x1;
    CHECK_ERR(rst_engine_create(NULL, &e), RST_ERR_INVALID, "rst_engine_create", "opts");
    CHECK(e == (rst_engine *)0x1);
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    CHECK_ERR(rst_engine_create(&o, NULL), RST_ERR_INVALID, "rst_engine_create", "out");
    o.version = 0;
    CHECK_ERR(rst_engine_create(&o, &e), RST_ERR_VERSION, "version");
    o.version = RST_ENGINE_OPTIONS_VERSION + 1;
    CHECK_ERR(rst_engine_create(&o, &e), RST_ERR_VERSION, "version");
    o.version = RST_ENGINE_OPTIONS_VERSION;
    o.flags = 0x80000000u;
    CHECK_ERR(rst_engine_create(&o, &e), RST_ERR_INVALID, "flags");
    o.flags = 0;
    o.archive_path = "";
    CHECK_ERR(rst_engine_create(&o, &e), RST_ERR_INVALID, "archive_path");
    CHECK(e == (rst_engine *)0x1);

    o.app_version = "bad\xff";
    CHECK_ERR(rst_engine_create(&o, &e), RST_ERR_INVALID, "app_version", "UTF-8");
    o.app_version = NULL;
    o.idiom = "\xc3";
    CHECK_ERR(rst_engine_create(&o, &e), RST_ERR_INVALID, "idiom");
    o.idiom = NULL;
    o.archive_path = "\xff/bad.rst";
    CHECK_ERR(rst_engine_create(&o, &e), RST_ERR_INVALID, "archive_path");
    CHECK(e == (rst_engine *)0x1);

    /* option strings are copied */
    char path[512];
    snprintf(path, sizeof path, "%s/copied.rst", dir);
    o.archive_path = path;
    char app[16] = "9.9";
    o.app_version = app;
    CHECK_OK(rst_engine_create(&o, &e));
    memset(path, 'x', strlen(path));
    memset(app, 'y', 3);
    CHECK_OK(rst_register_object(e, "Only", NULL, NULL, NULL, NULL, NULL));
    CHECK_OK(rst_save(e));
    char *real = xasprintf("%s/copied.rst", dir);
    CHECK(file_exists(real));
    rst_archive_info *info = NULL;
    CHECK_OK(rst_read_archive_info(real, &info));
    CHECK_STR(info->app_version, "9.9");
    CHECK_STR(info->idiom, "");
    CHECK_EQ(info->object_count, 1);
    rst_free(info);
    rst_engine_destroy(e);
    rst_engine_destroy(NULL); /* NULL is fine */
    free(real);
}

static void identifiers(void) {
    rst_engine *e = new_engine(NULL);
    rst_object *o = (rst_object *)0x1;
    CHECK_ERR(rst_register_object(e, "", NULL, NULL, NULL, NULL, &o), RST_ERR_INVALID, "identifier", "empty");
    CHECK(o == (rst_object *)0x1);
    CHECK_ERR(rst_register_object(e, "a/b", NULL, NULL, NULL, NULL, &o), RST_ERR_INVALID, "a/b", "/");
    CHECK_ERR(rst_register_object(e, "/", NULL, NULL, NULL, NULL, &o), RST_ERR_INVALID, "/");
    CHECK_ERR(rst_register_object(e, "trailing/", NULL, NULL, NULL, NULL, &o), RST_ERR_INVALID, "/");
    char id[RST_MAX_IDENTIFIER_BYTES + 2];
    memset(id, 'i', RST_MAX_IDENTIFIER_BYTES + 1);
    id[RST_MAX_IDENTIFIER_BYTES + 1] = '\0';
    CHECK_ERR(rst_register_object(e, id, NULL, NULL, NULL, NULL, &o), RST_ERR_LIMIT, "256");
    id[RST_MAX_IDENTIFIER_BYTES] = '\0';
    CHECK_OK(rst_register_object(e, id, NULL, NULL, NULL, NULL, &o)); /* exactly 255 bytes */
    CHECK_STR(rst_object_identifier(o), id);
    CHECK(rst_find_object(e, id) == o);
    /* 255 bytes of multi-byte characters is fine; 256 is not even if only 128 characters */
    char wide[RST_MAX_IDENTIFIER_BYTES + 2];
    for (int k = 0; k < 128; k++) { wide[2 * k] = (char)0xc3; wide[2 * k + 1] = (char)0xa9; }
    wide[256] = '\0';
    CHECK_ERR(rst_register_object(e, wide, NULL, NULL, NULL, NULL, &o), RST_ERR_LIMIT, "256");
    wide[254] = 'x'; wide[255] = '\0';
    CHECK_OK(rst_register_object(e, wide, NULL, NULL, NULL, NULL, &o));

    const char *bad_utf8[] = { "\xff", "ab\xc3", "\xc0\x80", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\x80x", "\xe2\x82" };
    for (size_t k = 0; k < sizeof bad_utf8 / sizeof bad_utf8[0]; k++)
        CHECK_ERR(rst_register_object(e, bad_utf8[k], NULL, NULL, NULL, NULL, &o), RST_ERR_INVALID, "UTF-8");
    CHECK_ERR(rst_register_object(e, NULL, NULL, NULL, NULL, NULL, &o), RST_ERR_INVALID, "identifier");
    /* identifiers and class names are copied */
    char tmp_id[16] = "Copied", tmp_cls[16] = "CopiedClass";
    CHECK_OK(rst_register_object(e, tmp_id, NULL, tmp_cls, NULL, NULL, &o));
    memset(tmp_id, 'x', 6);
    memset(tmp_cls, 'y', 11);
    CHECK(rst_find_object(e, "Copied") == o);
    CHECK_STR(rst_object_identifier(o), "Copied");
    CHECK_STR(rst_object_class_name(o), "CopiedClass");
    CHECK_OK(rst_register_object(e, "caf\xc3\xa9 \xf0\x9f\x98\x80", NULL, NULL, NULL, NULL, &o));
    CHECK(rst_find_object(e, "caf\xc3\xa9 \xf0\x9f\x98\x80") == o);
    CHECK_OK(rst_register_object(e, ".", NULL, NULL, NULL, NULL, NULL)); /* only '/' separates */
    CHECK_OK(rst_register_object(e, " ", NULL, NULL, NULL, NULL, NULL));

    /* class names */
    CHECK_ERR(rst_register_object(e, "C1", NULL, "", NULL, NULL, &o), RST_ERR_INVALID, "class");
    CHECK_ERR(rst_register_object(e, "C2", NULL, "bad\xff", NULL, NULL, &o), RST_ERR_INVALID, "class", "C2");
    char cls[RST_MAX_CLASS_NAME_BYTES + 2];
    memset(cls, 'c', sizeof cls - 1);
    cls[sizeof cls - 1] = '\0';
    CHECK_ERR(rst_register_object(e, "C3", NULL, cls, NULL, NULL, &o), RST_ERR_LIMIT, "class");
    CHECK(rst_find_object(e, "C1") == NULL && rst_find_object(e, "C2") == NULL && rst_find_object(e, "C3") == NULL);
    CHECK_OK(rst_register_object(e, "C4", NULL, "Some.Class", NULL, NULL, &o));
    CHECK_STR(rst_object_class_name(o), "Some.Class");
    CHECK_OK(rst_register_object(e, "C5", NULL, NULL, NULL, NULL, &o));
    CHECK(rst_object_class_name(o) == NULL);

    /* class registration */
    CHECK_ERR(rst_register_class(e, "", (rst_factory_fn)NULL, NULL), RST_ERR_INVALID, "rst_register_class");
    rst_engine_destroy(e);
}

static rst_object *dummy_factory(rst_engine *e, rst_object *p, const char *id, rst_coder *c, void *ctx) {
    (void)e; (void)p; (void)id; (void)c; (void)ctx;
    return NULL;
}

static void duplicates_find_accessors(void) {
    rst_engine *e = new_engine(NULL);
    rst_object *tabs, *nav, *list, *nav2, *o;
    int inst_tabs, inst_nav;
    CHECK_OK(rst_register_object(e, "Tabs", NULL, "TabBar", NULL, &inst_tabs, &tabs));
    CHECK_OK(rst_register_object(e, "Nav", tabs, NULL, NULL, &inst_nav, &nav));
    CHECK_OK(rst_register_object(e, "List", nav, NULL, NULL, NULL, &list));
    CHECK_OK(rst_register_object(e, "Nav2", tabs, NULL, NULL, NULL, &nav2));
    CHECK_OK(rst_register_object(e, "List", nav2, NULL, NULL, NULL, &o)); /* same identifier, other parent */
    CHECK_OK(rst_register_object(e, "Nav", NULL, NULL, NULL, NULL, NULL)); /* same identifier as a root */

    o = (rst_object *)0x1;
    CHECK_ERR(rst_register_object(e, "Tabs", NULL, NULL, NULL, NULL, &o), RST_ERR_DUPLICATE, "'Tabs'");
    CHECK_ERR(rst_register_object(e, "List", nav, "Other", NULL, NULL, &o), RST_ERR_DUPLICATE, "Tabs/Nav/List");
    CHECK(o == (rst_object *)0x1);
    CHECK_OK(rst_register_class(e, "Cls", dummy_factory, NULL));
    CHECK_ERR(rst_register_class(e, "Cls", dummy_factory, NULL), RST_ERR_DUPLICATE, "Cls");
    CHECK_OK(rst_set_fallback_factory(e, dummy_factory, NULL));
    CHECK_OK(rst_set_fallback_factory(e, NULL, NULL)); /* clears */

    CHECK(rst_find_object(e, "Tabs") == tabs);
    CHECK(rst_find_object(e, "Tabs/Nav") == nav);
    CHECK(rst_find_object(e, "Tabs/Nav/List") == list);
    CHECK(rst_find_object(e, "Tabs/Nav2/List") != list);
    CHECK(rst_find_object(e, "Tabs/Nav2/List") != NULL);
    CHECK(rst_find_object(e, "Nav") != nav);
    CHECK(rst_find_object(e, "Tabs/Nope") == NULL);
    CHECK(rst_find_object(e, "Nav/List") == NULL);
    CHECK(rst_find_object(e, "") == NULL);
    CHECK(rst_find_object(e, "/Tabs") == NULL);
    CHECK(rst_find_object(e, "Tabs/") == NULL);
    CHECK(rst_find_object(e, "Tabs//Nav") == NULL);
    CHECK(rst_find_object(e, "tabs") == NULL);
    CHECK(rst_find_object(e, "Tabs/Nav/List/More") == NULL);
    CHECK(rst_find_object(e, "\xff") == NULL);

    CHECK(rst_object_instance(tabs) == &inst_tabs);
    CHECK(rst_object_instance(nav) == &inst_nav);
    CHECK(rst_object_instance(list) == NULL);
    CHECK_STR(rst_object_identifier(list), "List");
    CHECK(rst_object_parent(list) == nav);
    CHECK(rst_object_parent(nav) == tabs);
    CHECK(rst_object_parent(tabs) == NULL);
    CHECK_STR(rst_object_class_name(tabs), "TabBar");
    char *path = NULL;
    CHECK_OK(rst_object_path(list, &path));
    CHECK_STR(path, "Tabs/Nav/List");
    rst_free(path);
    CHECK_OK(rst_object_path(tabs, &path));
    CHECK_STR(path, "Tabs");
    rst_free(path);

    /* a parent of another engine */
    rst_engine *e2 = new_engine(NULL);
    CHECK_ERR(rst_register_object(e2, "X", tabs, NULL, NULL, NULL, &o), RST_ERR_INVALID, "'X'", "engine");
    CHECK_ERR(rst_unregister_object(e2, tabs), RST_ERR_INVALID, "rst_unregister_object");
    CHECK(rst_find_object(e, "Tabs") == tabs);
    rst_engine_destroy(e2);
    rst_engine_destroy(e);
}

static void unregister_tree(void) {
    release_log[0] = '\0';
    rst_engine *e = new_engine(NULL);
    rst_object *a, *b, *c, *d, *x, *f;
    CHECK_OK(rst_register_object(e, "A", NULL, NULL, &release_cb, "A", &a));
    CHECK_OK(rst_register_object(e, "B", a, NULL, &release_cb, "B", &b));
    CHECK_OK(rst_register_object(e, "C", b, NULL, &release_cb, "C", &c));
    CHECK_OK(rst_register_object(e, "D", c, NULL, &release_cb, "D", &d));
    CHECK_OK(rst_register_object(e, "E", b, NULL, &release_cb, "E", &x));
    CHECK_OK(rst_register_object(e, "F", a, NULL, &release_cb, "F", &f));
    CHECK_OK(rst_register_object(e, "G", NULL, NULL, NULL, NULL, NULL)); /* no callbacks at all */

    CHECK_OK(rst_unregister_object(e, b));
    /* B, C, D, E released once each, children first */
    CHECK_EQ(pos_in_log("A"), (size_t)-1);
    CHECK_EQ(pos_in_log("F"), (size_t)-1);
    CHECK(pos_in_log("D") < pos_in_log("C"));
    CHECK(pos_in_log("C") < pos_in_log("B"));
    CHECK(pos_in_log("E") < pos_in_log("B"));
    CHECK_EQ(strlen(release_log), strlen("B,C,D,E,"));
    CHECK(rst_find_object(e, "A/B") == NULL);
    CHECK(rst_find_object(e, "A/B/C") == NULL);
    CHECK(rst_find_object(e, "A/B/C/D") == NULL);
    CHECK(rst_find_object(e, "A/B/E") == NULL);
    CHECK(rst_find_object(e, "A/F") == f);
    /* the path can be registered again */
    CHECK_OK(rst_register_object(e, "B", a, NULL, &release_cb, "B2", &b));
    CHECK(rst_find_object(e, "A/B") == b);
    CHECK_ERR(rst_unregister_object(e, NULL), RST_ERR_INVALID, "rst_unregister_object");
    CHECK_ERR(rst_unregister_object(NULL, a), RST_ERR_INVALID, "rst_unregister_object");

    /* destroy releases everything left, children first */
    release_log[0] = '\0';
    rst_engine_destroy(e);
    CHECK(pos_in_log("B2") < pos_in_log("A"));
    CHECK(pos_in_log("F") < pos_in_log("A"));
    CHECK_EQ(strlen(release_log), strlen("A,B2,F,"));
}

/* ------------------------------------------- RST_ERR_STATE inside callbacks */

static rst_engine *cb_engine;
static rst_object *cb_victim;
static int state_checks;

static void try_unregister(const char *where) {
    rst_status s = rst_unregister_object(cb_engine, cb_victim);
    CHECK_MSG(s == RST_ERR_STATE, "rst_unregister_object in %s returned %s", where, rst_status_name(s));
    CHECK_LAST_ERROR("rst_unregister_object", "Victim");
    /* a save, restore or discard of the same engine from its callback is refused too */
    void *buf = NULL; size_t len = 0;
    CHECK_ST(rst_save_to_buffer(cb_engine, &buf, &len), RST_ERR_STATE);
    CHECK_LAST_ERROR("callback");
    CHECK_ST(rst_restore_from_buffer(cb_engine, "x", 1), RST_ERR_STATE);
    CHECK_ST(rst_save(cb_engine), RST_ERR_STATE);
    CHECK_ST(rst_restore(cb_engine), RST_ERR_STATE);
    /* destroy from a callback is ignored */
    rst_engine_destroy(cb_engine);
    state_checks++;
}
static void st_encode(void *i, rst_coder *c) { (void)i; CHECK_OK(rst_encode_int(c, "v", 1)); try_unregister("encode"); }
static void st_decode(void *i, rst_coder *c) { (void)i; (void)c; try_unregister("decode"); }
static void st_finished(void *i) { (void)i; try_unregister("finished"); }
static const rst_object_callbacks st_cb = { st_encode, st_decode, st_finished, NULL };
static rst_object *st_factory(rst_engine *e, rst_object *parent, const char *id, rst_coder *c, void *ctx) {
    (void)c; (void)ctx;
    try_unregister("factory");
    rst_object *o = NULL;
    CHECK_OK(rst_register_object(e, id, parent, NULL, &st_cb, NULL, &o));
    return o;
}
static void st_did_finish(rst_engine *e, void *ctx) {
    (void)ctx;
    /* did_finish_restoring runs after pass 3: unregistering is allowed again? the
       spec lists encode, factory, decode, finished; we only require no crash */
    (void)e;
}

static void unregister_in_callbacks(const char *dir) {
    char *archive = xasprintf("%s/state-cb.rst", dir);
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.archive_path = archive;
    o.did_finish_restoring = st_did_finish;
    o.log = collect_log;
    log_text[0] = '\0';
    CHECK_OK(rst_engine_create(&o, &cb_engine));
    CHECK_OK(rst_register_object(cb_engine, "Victim", NULL, NULL, NULL, NULL, &cb_victim));
    CHECK_OK(rst_register_object(cb_engine, "Made", NULL, "Maker", &st_cb, NULL, NULL));
    state_checks = 0;
    CHECK_OK(rst_save(cb_engine));
    CHECK_EQ(state_checks, 1);
    CHECK_OK(rst_unregister_object(cb_engine, rst_find_object(cb_engine, "Made")));
    CHECK_OK(rst_register_class(cb_engine, "Maker", st_factory, NULL));
    CHECK_OK(rst_restore(cb_engine));
    CHECK_EQ(state_checks, 4); /* factory, decode, finished */
    CHECK(rst_find_object(cb_engine, "Victim") == cb_victim);
    CHECK_OK(rst_unregister_object(cb_engine, cb_victim)); /* fine again outside */
    /* the ignored rst_engine_destroy calls were logged at ERROR */
    CHECK_MSG(strstr(log_text, "[3] ") != NULL && strstr(log_text, "rst_engine_destroy") != NULL, "log: %s", log_text);
    rst_engine_destroy(cb_engine);
    free(archive);
}

/* ----------------------------------------------------------- tree depth */

static void tree_depth(void) {
    rst_engine *e = new_engine(NULL);
    rst_object *p = NULL, *o = NULL;
    /* depths 0 ... RST_MAX_TREE_DEPTH-1: RST_MAX_TREE_DEPTH levels */
    for (unsigned d = 0; d < RST_MAX_TREE_DEPTH; d++) {
        rst_status s = rst_register_object(e, "n", p, NULL, NULL, NULL, &o);
        if (s != RST_OK) FAIL_AT(__FILE__, __LINE__, "register at depth %u: %s: %s", d, rst_status_name(s), rst_last_error());
        p = o;
    }
    CHECK_ERR(rst_register_object(e, "n", p, NULL, NULL, NULL, &o), RST_ERR_LIMIT, "depth", "RST_MAX_TREE_DEPTH");
    /* the deepest chain saves and restores */
    void *buf = NULL; size_t len = 0;
    CHECK_OK(rst_save_to_buffer(e, &buf, &len));
    rst_engine *r = new_engine(NULL);
    CHECK_OK(rst_register_object(r, "n", NULL, NULL, NULL, NULL, NULL));
    CHECK_OK(rst_restore_from_buffer(r, buf, len));
    rst_restore_report rep;
    CHECK_OK(rst_last_restore_report(r, &rep));
    CHECK_EQ(rep.archived, RST_MAX_TREE_DEPTH);
    CHECK_EQ(rep.skipped, RST_MAX_TREE_DEPTH - 1); /* no factory: only the root exists */
    CHECK_EQ(rep.restored, 1);
    rst_free(buf);
    rst_engine_destroy(r);
    /* unregistering the root of the chain releases it all without recursion */
    CHECK_OK(rst_unregister_object(e, rst_find_object(e, "n")));
    CHECK(rst_find_object(e, "n") == NULL);
    rst_engine_destroy(e);
}

/* ------------------------------------------------------ NULL arguments */

#define CHECK_NULL_ERR(call, fname) do {                              \
        rst_engine_create(NULL, NULL); /* resets the message to something else */ \
        CHECK_ST(call, RST_ERR_INVALID);                               \
        CHECK_LAST_ERROR(fname);                                       \
    } while (0)

static void null_arguments(const char *dir) {
    char *archive = xasprintf("%s/nulls.rst", dir);
    rst_engine *e = new_engine(archive);
    rst_object *o = NULL;
    CHECK_OK(rst_register_object(e, "A", NULL, NULL, NULL, NULL, &o));
    void *buf = NULL; size_t len = 0;
    rst_restore_report rep;
    rst_archive_info *info = NULL;

    CHECK_NULL_ERR(rst_engine_create(NULL, NULL), "rst_engine_create");
    CHECK_NULL_ERR(rst_register_object(NULL, "x", NULL, NULL, NULL, NULL, NULL), "rst_register_object");
    CHECK_NULL_ERR(rst_register_object(e, NULL, NULL, NULL, NULL, NULL, NULL), "rst_register_object");
    CHECK_NULL_ERR(rst_unregister_object(NULL, o), "rst_unregister_object");
    CHECK_NULL_ERR(rst_unregister_object(e, NULL), "rst_unregister_object");
    CHECK_NULL_ERR(rst_register_class(NULL, "C", dummy_factory, NULL), "rst_register_class");
    CHECK_NULL_ERR(rst_register_class(e, NULL, dummy_factory, NULL), "rst_register_class");
    CHECK_NULL_ERR(rst_register_class(e, "C", NULL, NULL), "rst_register_class");
    CHECK_NULL_ERR(rst_set_fallback_factory(NULL, dummy_factory, NULL), "rst_set_fallback_factory");
    CHECK_NULL_ERR(rst_save(NULL), "rst_save");
    CHECK_NULL_ERR(rst_restore(NULL), "rst_restore");
    CHECK_NULL_ERR(rst_save_to_buffer(NULL, &buf, &len), "rst_save_to_buffer");
    CHECK_NULL_ERR(rst_save_to_buffer(e, NULL, &len), "rst_save_to_buffer");
    CHECK_NULL_ERR(rst_save_to_buffer(e, &buf, NULL), "rst_save_to_buffer");
    CHECK_NULL_ERR(rst_restore_from_buffer(NULL, "x", 1), "rst_restore_from_buffer");
    CHECK_NULL_ERR(rst_restore_from_buffer(e, NULL, 10), "rst_restore_from_buffer");
    CHECK_NULL_ERR(rst_discard(NULL), "rst_discard");
    CHECK_NULL_ERR(rst_read_archive_info(NULL, &info), "rst_read_archive_info");
    CHECK_NULL_ERR(rst_read_archive_info(archive, NULL), "rst_read_archive_info");
    CHECK_NULL_ERR(rst_last_restore_report(NULL, &rep), "rst_last_restore_report");
    CHECK_NULL_ERR(rst_last_restore_report(e, NULL), "rst_last_restore_report");
    CHECK_NULL_ERR(rst_object_path(NULL, NULL), "rst_object_path");
    CHECK_NULL_ERR(rst_object_path(o, NULL), "rst_object_path");
    CHECK(info == NULL);
    /* the plugin additions */
    rst_plugin_info *plugins = NULL; size_t pcount = 0;
    CHECK_NULL_ERR(rst_load_plugins(NULL), "rst_load_plugins");
    CHECK_NULL_ERR(rst_list_plugins(NULL, &plugins, &pcount), "rst_list_plugins");
    CHECK_NULL_ERR(rst_list_plugins(e, NULL, &pcount), "rst_list_plugins");
    CHECK_NULL_ERR(rst_list_plugins(e, &plugins, NULL), "rst_list_plugins");
    CHECK_ERR(rst_load_plugins(e), RST_ERR_INVALID, "plugin_dir");   /* no plugin_dir */
    CHECK_ERR(rst_list_plugins(e, &plugins, &pcount), RST_ERR_INVALID, "plugin_dir");
    /* a NULL/empty buffer is not an archive */
    CHECK_ERR(rst_restore_from_buffer(e, NULL, 0), RST_ERR_CORRUPT, "buffer");
    CHECK_ERR(rst_restore_from_buffer(e, "", 0), RST_ERR_CORRUPT, "buffer");

    /* coder functions with a NULL coder */
    bool b = false; int64_t i = 0; double d = 0; const char *s = NULL; const void *p = NULL; size_t n = 0; rst_object *r = NULL;
    CHECK_NULL_ERR(rst_encode_bool(NULL, "k", true), "rst_encode_bool");
    CHECK_NULL_ERR(rst_encode_int(NULL, "k", 1), "rst_encode_int");
    CHECK_NULL_ERR(rst_encode_double(NULL, "k", 1), "rst_encode_double");
    CHECK_NULL_ERR(rst_encode_string(NULL, "k", "v"), "rst_encode_string");
    CHECK_NULL_ERR(rst_encode_bytes(NULL, "k", "v", 1), "rst_encode_bytes");
    CHECK_NULL_ERR(rst_encode_object(NULL, "k", o), "rst_encode_object");
    CHECK_NULL_ERR(rst_encode_int_array(NULL, "k", &i, 1), "rst_encode_int_array");
    const char *sv[1] = { "v" };
    CHECK_NULL_ERR(rst_encode_string_array(NULL, "k", sv, 1), "rst_encode_string_array");
    CHECK_NULL_ERR(rst_encode_begin_record(NULL, "k"), "rst_encode_begin_record");
    CHECK_NULL_ERR(rst_encode_end_record(NULL), "rst_encode_end_record");
    CHECK_NULL_ERR(rst_decode_bool(NULL, "k", &b), "rst_decode_bool");
    CHECK_NULL_ERR(rst_decode_int(NULL, "k", &i), "rst_decode_int");
    CHECK_NULL_ERR(rst_decode_double(NULL, "k", &d), "rst_decode_double");
    CHECK_NULL_ERR(rst_decode_string(NULL, "k", &s, &n), "rst_decode_string");
    CHECK_NULL_ERR(rst_decode_bytes(NULL, "k", &p, &n), "rst_decode_bytes");
    CHECK_NULL_ERR(rst_decode_object(NULL, "k", &r), "rst_decode_object");
    CHECK_NULL_ERR(rst_decode_int_array(NULL, "k", &i, 1, &n), "rst_decode_int_array");
    CHECK_NULL_ERR(rst_decode_string_array(NULL, "k", 0, &s, &n, &n), "rst_decode_string_array");
    CHECK_NULL_ERR(rst_decode_begin_record(NULL, "k"), "rst_decode_begin_record");
    CHECK_NULL_ERR(rst_decode_end_record(NULL), "rst_decode_end_record");
    rst_engine_create(NULL, NULL);
    CHECK(!rst_coder_contains(NULL, "k"));
    CHECK_LAST_ERROR("rst_coder_contains");
    rst_engine_create(NULL, NULL);
    CHECK_EQ(rst_coder_value_type(NULL, "k"), RST_TYPE_NONE);
    CHECK_LAST_ERROR("rst_coder_value_type");

    /* pointer-returning functions: NULL in, NULL out, no crash */
    rst_engine_create(NULL, NULL);
    CHECK(rst_find_object(NULL, "A") == NULL);
    CHECK_LAST_ERROR("rst_find_object");
    rst_engine_create(NULL, NULL);
    CHECK(rst_find_object(e, NULL) == NULL);
    CHECK_LAST_ERROR("rst_find_object");
    CHECK(rst_object_instance(NULL) == NULL);
    CHECK(rst_object_identifier(NULL) == NULL);
    CHECK(rst_object_parent(NULL) == NULL);
    CHECK(rst_object_class_name(NULL) == NULL);
    rst_free(NULL);
    rst_engine_destroy(NULL);

    /* rst_last_error is never NULL */
    CHECK(rst_last_error() != NULL);
    rst_engine_destroy(e);
    free(archive);
}

/* ---------------------------------------------- thread-local last error */

static pthread_barrier_t barrier;
static const char *thread_seen[2];
static char thread_msg[2][512];

static void *error_thread(void *arg) {
    int which = (int)(intptr_t)arg;
    /* a new thread starts with "" */
    CHECK_STR(rst_last_error(), "");
    pthread_barrier_wait(&barrier);
    if (which == 0) {
        rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
        o.version = 77;
        rst_engine *e;
        CHECK_ST(rst_engine_create(&o, &e), RST_ERR_VERSION);
    } else {
        CHECK_ST(rst_read_archive_info("/nonexistent-dir-rst/thread.rst", (rst_archive_info **)&thread_seen[1]), RST_ERR_NOT_FOUND);
    }
    pthread_barrier_wait(&barrier); /* both have failed now */
    /* a successful call does not clear the message */
    CHECK_STR(rst_version(), RST_VERSION_STRING);
    rst_engine *e = new_engine(NULL);
    CHECK_OK(rst_register_object(e, "ok", NULL, NULL, NULL, NULL, NULL));
    rst_engine_destroy(e);
    snprintf(thread_msg[which], sizeof thread_msg[which], "%s", rst_last_error());
    pthread_barrier_wait(&barrier);
    return NULL;
}

static void thread_local_errors(void) {
    CHECK_EQ(pthread_barrier_init(&barrier, NULL, 2), 0);
    pthread_t t[2];
    for (int k = 0; k < 2; k++) CHECK_EQ(pthread_create(&t[k], NULL, error_thread, (void *)(intptr_t)k), 0);
    for (int k = 0; k < 2; k++) pthread_join(t[k], NULL);
    pthread_barrier_destroy(&barrier);
    CHECK_MSG(strstr(thread_msg[0], "version") != NULL && strstr(thread_msg[0], "77") != NULL,
              "thread 0 read \"%s\"", thread_msg[0]);
    CHECK_MSG(strstr(thread_msg[1], "/nonexistent-dir-rst/thread.rst") != NULL, "thread 1 read \"%s\"", thread_msg[1]);
    /* the main thread's message is its own */
    CHECK_ST(rst_register_object(NULL, "x", NULL, NULL, NULL, NULL, NULL), RST_ERR_INVALID);
    const char *mine = rst_last_error();
    CHECK(strstr(mine, "rst_register_object") != NULL);
    CHECK(strstr(mine, "77") == NULL);
}

int main(int argc, char **argv) {
    check_prog = "registry";
    if (argc != 2) { fprintf(stderr, "usage: registry DIR\n"); return 2; }
    versions();
    options_init();
    engine_options(argv[1]);
    identifiers();
    duplicates_find_accessors();
    unregister_tree();
    unregister_in_callbacks(argv[1]);
    null_arguments(argv[1]);
    thread_local_errors();
    tree_depth();
    DONE();
}
