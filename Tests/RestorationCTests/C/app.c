/* app.c: a UIKit-like app saved in one process and restored in another.
 *
 *   Tabs                       tab bar (selected tab)                      TabBarController
 *   Tabs/Browse                navigation stack (titles, top view)         NavigationController
 *   Tabs/Browse/List           list: scroll offset, selection, rows        ListViewController
 *   Tabs/Browse/Detail         detail screen (item, reference to List)     DetailViewController
 *   Tabs/Settings              navigation stack                            NavigationController
 *   Tabs/Settings/Prefs        settings switches (one on, one off)         SettingsViewController
 *
 *   app save DIR      builds the UI in its "user has navigated" state and saves DIR/state.rst
 *   app restore DIR   a new process: creates only the tab bar (like a storyboard's
 *                     initial controller), restores the rest through factories
 *                     (classes and the fallback factory), checks every value,
 *                     the archive info, the three passes and the report; then
 *                     restores a second time in the same process.
 */
#include "check.h"
#include <sys/utsname.h>

typedef struct view {
    char kind[32];
    char path[128];
    /* state */
    int64_t selected_tab;
    double scroll_y;
    int64_t selection;
    int64_t rows[8];
    size_t row_count;
    char item[64];
    bool dark_mode, notifications;
    bool has_dark_mode, has_notifications;
    char stack[4][32];
    size_t stack_count;
    rst_object *top;      /* Browse: the top view controller */
    rst_object *list;     /* Detail: the list it came from */
    /* bookkeeping */
    int decoded, finished, released;
    int decode_seq;
    bool malloced;
} view;

static rst_engine *g_engine;
static int g_seq;
static int g_did_finish, g_finished_total;
static int g_factory_calls, g_fallback_calls, g_released;
static rst_archive_info g_info;        /* copied from should_restore */
static char g_info_app[64], g_info_sys[256], g_info_idiom[64];
static int g_should_restore_calls;

static void encode_view(void *instance, rst_coder *c) {
    view *v = instance;
    if (strcmp(v->kind, "tabs") == 0) {
        CHECK_OK(rst_encode_int(c, "selected", v->selected_tab));
    } else if (strcmp(v->kind, "nav") == 0) {
        const char *titles[4];
        for (size_t i = 0; i < v->stack_count; i++) titles[i] = v->stack[i];
        CHECK_OK(rst_encode_string_array(c, "titles", titles, v->stack_count));
        if (v->top) CHECK_OK(rst_encode_object(c, "top", v->top));
    } else if (strcmp(v->kind, "list") == 0) {
        CHECK_OK(rst_encode_double(c, "scroll_y", v->scroll_y));
        CHECK_OK(rst_encode_int(c, "selection", v->selection));
        CHECK_OK(rst_encode_int_array(c, "rows", v->rows, v->row_count));
    } else if (strcmp(v->kind, "detail") == 0) {
        CHECK_OK(rst_encode_string(c, "item", v->item));
        CHECK_OK(rst_encode_object(c, "list", v->list));
    } else if (strcmp(v->kind, "prefs") == 0) {
        CHECK_OK(rst_encode_begin_record(c, "switches"));
        CHECK_OK(rst_encode_bool(c, "dark_mode", v->dark_mode));
        CHECK_OK(rst_encode_bool(c, "notifications", v->notifications));
        CHECK_OK(rst_encode_end_record(c));
    }
}

static void decode_view(void *instance, rst_coder *c) {
    view *v = instance;
    v->decoded++;
    v->decode_seq = ++g_seq;
    CHECK_EQ(g_did_finish, v->decoded - 1);
    CHECK_EQ(v->finished, v->decoded - 1); /* finished only after every decode of this restore */
    if (strcmp(v->kind, "tabs") == 0) {
        v->selected_tab = -1;
        CHECK_OK(rst_decode_int(c, "selected", &v->selected_tab));
    } else if (strcmp(v->kind, "nav") == 0) {
        size_t count = 99, len = 0;
        const char *s = NULL;
        CHECK_OK(rst_decode_string_array(c, "titles", 0, &s, &len, &count));
        v->stack_count = count;
        for (size_t i = 0; i < count && i < 4; i++) {
            CHECK_OK(rst_decode_string_array(c, "titles", i, &s, &len, &count));
            CHECK_EQ(strlen(s), len);
            snprintf(v->stack[i], sizeof v->stack[i], "%s", s);
        }
        if (rst_coder_contains(c, "top")) {
            CHECK_OK(rst_decode_object(c, "top", &v->top));
            CHECK(v->top != NULL);
        }
    } else if (strcmp(v->kind, "list") == 0) {
        CHECK_OK(rst_decode_double(c, "scroll_y", &v->scroll_y));
        CHECK_OK(rst_decode_int(c, "selection", &v->selection));
        size_t n = 0;
        CHECK_ST(rst_decode_int_array(c, "rows", NULL, 0, &n), RST_ERR_LIMIT); /* asks the count */
        CHECK_EQ(n, 5);
        CHECK_OK(rst_decode_int_array(c, "rows", v->rows, 8, &v->row_count));
    } else if (strcmp(v->kind, "detail") == 0) {
        const char *s = NULL;
        size_t len = 0;
        CHECK_OK(rst_decode_string(c, "item", &s, &len));
        snprintf(v->item, sizeof v->item, "%s", s);
        CHECK_OK(rst_decode_object(c, "list", &v->list));
        /* referenced before referencer: the list was decoded already */
        view *lv = rst_object_instance(v->list);
        CHECK(lv != NULL);
        CHECK_EQ(lv->decoded, v->decoded);
    } else if (strcmp(v->kind, "prefs") == 0) {
        CHECK_OK(rst_decode_begin_record(c, "switches"));
        v->has_dark_mode = rst_coder_contains(c, "dark_mode");
        v->has_notifications = rst_coder_contains(c, "notifications");
        v->dark_mode = false;
        v->notifications = true;
        CHECK_OK(rst_decode_bool(c, "dark_mode", &v->dark_mode));
        CHECK_OK(rst_decode_bool(c, "notifications", &v->notifications));
        CHECK_OK(rst_decode_end_record(c));
    }
}

static void finished_view(void *instance) {
    view *v = instance;
    v->finished++;
    g_finished_total++;
    CHECK_EQ(g_did_finish, v->finished - 1); /* did_finish_restoring only after every finished */
}

static void release_view(void *instance) {
    view *v = instance;
    v->released++;
    g_released++;
    if (v->malloced) free(v);
}

static const rst_object_callbacks view_callbacks = { encode_view, decode_view, finished_view, release_view };

static view *new_view(const char *kind, const char *path) {
    view *v = calloc(1, sizeof *v);
    snprintf(v->kind, sizeof v->kind, "%s", kind);
    snprintf(v->path, sizeof v->path, "%s", path);
    v->malloced = true;
    return v;
}

static rst_object *reg(rst_engine *e, const char *id, rst_object *parent, const char *cls, view *v) {
    rst_object *o = NULL;
    CHECK_OK(rst_register_object(e, id, parent, cls, &view_callbacks, v, &o));
    CHECK(o != NULL);
    return o;
}

/* ---------------------------------------------------------------- save */

static int do_save(const char *dir) {
    char *archive = xasprintf("%s/state.rst", dir);
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.archive_path = archive;
    o.app_version = "2.4.1";
    o.idiom = "tablet";
    rst_engine *e = NULL;
    CHECK_OK(rst_engine_create(&o, &e));

    view *tabs = new_view("tabs", "Tabs");
    tabs->selected_tab = 0; /* a stored 0 is a value, not absence */
    rst_object *tabs_o = reg(e, "Tabs", NULL, "TabBarController", tabs);

    view *browse = new_view("nav", "Tabs/Browse");
    rst_object *browse_o = reg(e, "Browse", tabs_o, "NavigationController", browse);
    view *list = new_view("list", "Tabs/Browse/List");
    list->scroll_y = 1234.5;
    list->selection = 42;
    int64_t rows[5] = { 7, 11, 42, -3, INT64_MAX };
    memcpy(list->rows, rows, sizeof rows);
    list->row_count = 5;
    rst_object *list_o = reg(e, "List", browse_o, "ListViewController", list);
    view *detail = new_view("detail", "Tabs/Browse/Detail");
    snprintf(detail->item, sizeof detail->item, "Lisbon \xc3\xa9");
    detail->list = list_o;
    rst_object *detail_o = reg(e, "Detail", browse_o, "DetailViewController", detail);
    browse->stack_count = 2;
    snprintf(browse->stack[0], 32, "Cities");
    snprintf(browse->stack[1], 32, "Lisbon");
    browse->top = detail_o;

    view *settings = new_view("nav", "Tabs/Settings");
    rst_object *settings_o = reg(e, "Settings", tabs_o, "NavigationController", settings);
    settings->stack_count = 1;
    snprintf(settings->stack[0], 32, "Settings");
    view *prefs = new_view("prefs", "Tabs/Settings/Prefs");
    prefs->dark_mode = true;
    prefs->notifications = false; /* the switch is off: a stored false */
    reg(e, "Prefs", settings_o, "SettingsViewController", prefs);

    int64_t before = now_ms();
    CHECK_OK(rst_save(e));
    int64_t after = now_ms();

    struct stat st;
    CHECK(stat(archive, &st) == 0);
    CHECK_EQ(st.st_mode & 0777, 0600);
    CHECK(S_ISREG(st.st_mode));

    char *window = xasprintf("%s/window.txt", dir);
    char *text = xasprintf("%lld %lld\n", (long long)before, (long long)after);
    write_file(window, text, strlen(text));

    rst_engine_destroy(e); /* releases (and frees) every view */
    free(window); free(text); free(archive);
    DONE();
}

/* ---------------------------------------------------------------- restore */

static bool should_restore(rst_engine *e, const rst_archive_info *info, void *ctx) {
    (void)ctx;
    CHECK(e == g_engine);
    /* before pass 1: no factory has run yet in this restore */
    CHECK_EQ(g_factory_calls + g_fallback_calls, g_should_restore_calls == 0 ? 0 : 5);
    g_should_restore_calls++;
    CHECK(info != NULL);
    g_info = *info;
    snprintf(g_info_app, sizeof g_info_app, "%s", info->app_version);
    snprintf(g_info_sys, sizeof g_info_sys, "%s", info->system_version);
    snprintf(g_info_idiom, sizeof g_info_idiom, "%s", info->idiom);
    return true;
}

static void did_finish(rst_engine *e, void *ctx) {
    (void)ctx;
    CHECK(e == g_engine);
    g_did_finish++;
    CHECK_EQ(g_finished_total, 6 * g_did_finish);
}

/* A class factory: creates the view its class names, registered at exactly this place. */
static rst_object *make_view(rst_engine *e, rst_object *parent, const char *identifier, rst_coder *coder, void *ctx) {
    const char *kind = ctx;
    g_factory_calls++;
    CHECK(e == g_engine);
    CHECK(parent != NULL); /* nothing but the tab bar is a root, and it exists already */
    /* the factory's coder is readable */
    if (strcmp(kind, "list") == 0) {
        int64_t sel = -1;
        CHECK_OK(rst_decode_int(coder, "selection", &sel));
        CHECK_EQ(sel, 42);
    }
    char *ppath = NULL;
    CHECK_OK(rst_object_path(parent, &ppath));
    char *path = xasprintf("%s/%s", ppath, identifier);
    rst_free(ppath);
    view *v = new_view(kind, path);
    free(path);
    rst_object *o = NULL;
    CHECK_OK(rst_register_object(e, identifier, parent, NULL, &view_callbacks, v, &o));
    /* a factory may find objects */
    CHECK(rst_find_object(e, v->path) == o);
    return o;
}

static rst_object *fallback(rst_engine *e, rst_object *parent, const char *identifier, rst_coder *coder, void *ctx) {
    (void)coder; (void)ctx;
    g_fallback_calls++;
    if (strcmp(identifier, "Prefs") != 0) return NULL;
    view *v = new_view("prefs", "Tabs/Settings/Prefs");
    rst_object *o = NULL;
    CHECK_OK(rst_register_object(e, identifier, parent, "SettingsViewController", &view_callbacks, v, &o));
    return o;
}

static view *view_at(rst_engine *e, const char *path) {
    rst_object *o = rst_find_object(e, path);
    CHECK_MSG(o != NULL, "no object at %s", path);
    view *v = rst_object_instance(o);
    CHECK(v != NULL);
    CHECK_STR(v->path, path);
    return v;
}

static void check_restored_state(rst_engine *e, int round) {
    view *tabs = view_at(e, "Tabs");
    view *browse = view_at(e, "Tabs/Browse");
    view *list = view_at(e, "Tabs/Browse/List");
    view *detail = view_at(e, "Tabs/Browse/Detail");
    view *settings = view_at(e, "Tabs/Settings");
    view *prefs = view_at(e, "Tabs/Settings/Prefs");
    view *all[6] = { tabs, browse, list, detail, settings, prefs };
    for (int i = 0; i < 6; i++) {
        CHECK_EQ(all[i]->decoded, round);
        CHECK_EQ(all[i]->finished, round);
        CHECK_EQ(all[i]->released, 0);
    }

    CHECK_EQ(tabs->selected_tab, 0);
    CHECK_EQ(browse->stack_count, 2);
    CHECK_STR(browse->stack[0], "Cities");
    CHECK_STR(browse->stack[1], "Lisbon");
    CHECK(browse->top == rst_find_object(e, "Tabs/Browse/Detail"));
    CHECK(list->scroll_y == 1234.5);
    CHECK_EQ(list->selection, 42);
    CHECK_EQ(list->row_count, 5);
    CHECK_EQ(list->rows[0], 7);
    CHECK_EQ(list->rows[3], -3);
    CHECK(list->rows[4] == INT64_MAX);
    CHECK_STR(detail->item, "Lisbon \xc3\xa9");
    CHECK(detail->list == rst_find_object(e, "Tabs/Browse/List"));
    CHECK_EQ(settings->stack_count, 1);
    CHECK_STR(settings->stack[0], "Settings");
    CHECK(settings->top == NULL);
    CHECK(prefs->has_dark_mode);
    CHECK(prefs->has_notifications);
    CHECK(prefs->dark_mode == true);
    CHECK(prefs->notifications == false);

    /* decode order: parent before child; Browse, List and Detail form one
       strongly connected component (Browse -> Detail by reference, Detail ->
       Browse as parent, Detail -> List by reference), decoded in archive order. */
    CHECK(tabs->decode_seq < browse->decode_seq);
    CHECK(browse->decode_seq < list->decode_seq);
    CHECK(list->decode_seq < detail->decode_seq);
    CHECK(detail->decode_seq < settings->decode_seq);
    CHECK(settings->decode_seq < prefs->decode_seq);

    rst_restore_report r;
    memset(&r, 0xff, sizeof r);
    CHECK_OK(rst_last_restore_report(e, &r));
    CHECK_EQ(r.archived, 6);
    CHECK_EQ(r.restored, 6);
    CHECK_EQ(r.skipped, 0);
    CHECK_EQ(r.plugins_loaded, 0);
    CHECK_EQ(r.plugins_rejected, 0);
}

static int do_restore(const char *dir) {
    char *archive = xasprintf("%s/state.rst", dir);
    size_t before_len = 0;
    unsigned char *before = read_file(archive, &before_len);
    CHECK(before != NULL);

    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.archive_path = archive;
    o.app_version = "2.4.2"; /* a newer build restores the older archive */
    o.idiom = "tablet";
    o.should_restore = should_restore;
    o.did_finish_restoring = did_finish;
    CHECK_OK(rst_engine_create(&o, &g_engine));
    rst_engine *e = g_engine;

    /* before any restore */
    rst_restore_report r;
    CHECK_ERR(rst_last_restore_report(e, &r), RST_ERR_STATE, "rst_last_restore_report");

    /* the app's initial controller exists before the restore: it is matched, not created */
    view *tabs = new_view("tabs", "Tabs");
    reg(e, "Tabs", NULL, "TabBarController", tabs);
    CHECK_OK(rst_register_class(e, "NavigationController", make_view, "nav"));
    CHECK_OK(rst_register_class(e, "ListViewController", make_view, "list"));
    CHECK_OK(rst_register_class(e, "DetailViewController", make_view, "detail"));
    CHECK_OK(rst_register_class(e, "TabBarController", make_view, "tabs")); /* must not be called */
    CHECK_OK(rst_set_fallback_factory(e, fallback, NULL));

    CHECK_OK(rst_restore(e));
    CHECK_EQ(g_should_restore_calls, 1);
    CHECK_EQ(g_factory_calls, 4);   /* Browse, List, Detail, Settings; never Tabs */
    CHECK_EQ(g_fallback_calls, 1);  /* Prefs: no class for SettingsViewController */
    CHECK_EQ(g_did_finish, 1);
    CHECK_EQ(g_finished_total, 6);
    check_restored_state(e, 1);

    /* the archive info, as should_restore saw it and as rst_read_archive_info reads it */
    char *window = xasprintf("%s/window.txt", dir);
    size_t wlen = 0;
    char *wtext = (char *)read_file(window, &wlen);
    CHECK(wtext != NULL);
    wtext = realloc(wtext, wlen + 1);
    wtext[wlen] = '\0';
    long long t0 = 0, t1 = 0;
    CHECK_EQ(sscanf(wtext, "%lld %lld", &t0, &t1), 2);
    CHECK_EQ(g_info.format_version, RST_FORMAT_VERSION);
    CHECK_STR(g_info_app, "2.4.1");
    CHECK_STR(g_info_idiom, "tablet");
    CHECK(g_info.saved_at_ms >= t0 && g_info.saved_at_ms <= t1);
    CHECK_EQ(g_info.object_count, 6);
    struct utsname u;
    CHECK(uname(&u) == 0);
    CHECK_MSG(strstr(g_info_sys, u.release) != NULL, "system_version \"%s\" does not contain uname release \"%s\"", g_info_sys, u.release);

    rst_archive_info *info = NULL;
    CHECK_OK(rst_read_archive_info(archive, &info));
    CHECK(info != NULL);
    CHECK_EQ(info->format_version, g_info.format_version);
    CHECK_STR(info->app_version, g_info_app);
    CHECK_STR(info->system_version, g_info_sys);
    CHECK_STR(info->idiom, g_info_idiom);
    CHECK_EQ(info->saved_at_ms, g_info.saved_at_ms);
    CHECK_EQ(info->object_count, g_info.object_count);
    /* one allocation: the strings live inside it */
    const char *lo = (const char *)info, *hi = lo + sizeof *info + 4096 * 3 + 3;
    CHECK(info->app_version > lo && info->app_version < hi);
    CHECK(info->system_version > lo && info->system_version < hi);
    CHECK(info->idiom > lo && info->idiom < hi);
    rst_free(info);

    /* restore leaves the archive in place, byte-identical, and can run again */
    size_t after_len = 0;
    unsigned char *after = read_file(archive, &after_len);
    CHECK(after != NULL);
    CHECK_EQ(after_len, before_len);
    CHECK(memcmp(before, after, before_len) == 0);
    char *marker = xasprintf("%s.restoring", archive);
    CHECK(!file_exists(marker)); /* the crash-loop marker is gone after a clean restore */

    CHECK_OK(rst_restore(e));
    CHECK_EQ(g_should_restore_calls, 2);
    CHECK_EQ(g_factory_calls, 4);   /* everything exists now: matched, nothing created */
    CHECK_EQ(g_fallback_calls, 1);
    CHECK_EQ(g_did_finish, 2);
    check_restored_state(e, 2);

    rst_engine_destroy(e);
    CHECK_EQ(g_released, 6); /* every object released once, factory-made ones freed */

    free(before); free(after); free(wtext); free(window); free(marker); free(archive);
    DONE();
}

int main(int argc, char **argv) {
    check_prog = "app";
    if (argc != 3) { fprintf(stderr, "usage: app save|restore DIR\n"); return 2; }
    if (strcmp(argv[1], "save") == 0) return do_save(argv[2]);
    if (strcmp(argv[1], "restore") == 0) return do_restore(argv[2]);
    fprintf(stderr, "unknown command %s\n", argv[1]);
    return 2;
}
