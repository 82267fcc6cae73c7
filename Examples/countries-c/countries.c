/*
 * countries: the demo host. A small "app" with a UIKit-like screen tree,
 * written against the public C ABI only:
 *
 *   Tabs                      tab bar        (host object)
 *   Tabs/Countries            navigation     (host object)
 *   Tabs/Countries/List       country list   (host object: scroll offset, selection)
 *   Tabs/Countries/Detail     detail screen  (class CountryDetail: a C plugin)
 *   Tabs/Countries/Detail/Map map pane       (class MapPane: a Swift plugin)
 *   Tabs/Settings             settings       (host object: a switch)
 *
 *   countries DIR first     first launch: the user scrolls, picks Norway,
 *                           opens its detail screen and zooms the map; the
 *                           app saves its state and exits.
 *   countries DIR relaunch  a new process: registers only its static screens,
 *                           restores; the detail screen and its map pane come
 *                           back from the plugins in DIR/plugins. Then it
 *                           saves again (now through the plugin objects).
 *   countries DIR demo-loop restores (or starts as "first" would), then keeps
 *                           scrolling the list and autosaving every 20 ms
 *                           until killed (at most 60 s, then it saves and
 *                           exits): a program for `restorectl test`.
 *
 * Build: cc -IInclude countries.c -L<bin> -lrestoration -Wl,-rpath,<bin>
 */
#define _POSIX_C_SOURCE 200809L   /* nanosleep */
#include <restoration.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHECK(call) do { rst_status s_ = (call); if (s_ != RST_OK) { \
    fprintf(stderr, "countries: %s failed: %s: %s\n", #call, rst_status_name(s_), rst_last_error()); \
    exit(1); } } while (0)

/* ---- host screens ---- */

typedef struct screen {
    const char *name;
    int64_t selected_tab;      /* Tabs */
    double scroll_offset;      /* List */
    char selection[8];         /* List */
    bool metric_units;         /* Settings */
    /* Detail and Map, first launch only (afterwards the plugins own them) */
    char country[8];
    rst_object *source;
    int64_t visits;
    double zoom, lat, lon;
    rst_object *self;
} screen;

static void tabs_encode(void *inst, rst_coder *c) {
    screen *s = inst;
    CHECK(rst_encode_int(c, "selectedTab", s->selected_tab));
}
static void tabs_decode(void *inst, rst_coder *c) {
    screen *s = inst;
    if (rst_decode_int(c, "selectedTab", &s->selected_tab) == RST_OK)
        printf("  decode   Tabs                       selectedTab=%lld\n", (long long)s->selected_tab);
}

static void list_encode(void *inst, rst_coder *c) {
    screen *s = inst;
    CHECK(rst_encode_double(c, "scrollOffset", s->scroll_offset));
    CHECK(rst_encode_string(c, "selection", s->selection));
    static const char *const visible[] = { "NL", "NO", "NZ" };
    CHECK(rst_encode_string_array(c, "visibleRows", visible, 3));
}
static void list_decode(void *inst, rst_coder *c) {
    screen *s = inst;
    const char *sel = NULL;
    size_t rows = 0;
    rst_decode_double(c, "scrollOffset", &s->scroll_offset);
    if (rst_decode_string(c, "selection", &sel, NULL) == RST_OK)
        snprintf(s->selection, sizeof s->selection, "%s", sel);
    const char *first = NULL;
    rst_decode_string_array(c, "visibleRows", 0, &first, NULL, &rows);
    printf("  decode   Tabs/Countries/List        scrollOffset=%.1f selection=%s visibleRows=%zu (first %s)\n",
           s->scroll_offset, s->selection, rows, first ? first : "-");
}

static void nav_encode(void *inst, rst_coder *c) {
    (void)inst;
    CHECK(rst_encode_int(c, "depth", 2));
}
static void nav_decode(void *inst, rst_coder *c) {
    (void)inst;
    int64_t depth = 0;
    rst_decode_int(c, "depth", &depth);
    printf("  decode   Tabs/Countries             stack depth=%lld\n", (long long)depth);
}

static void settings_encode(void *inst, rst_coder *c) {
    screen *s = inst;
    CHECK(rst_encode_bool(c, "metricUnits", s->metric_units));
}
static void settings_decode(void *inst, rst_coder *c) {
    screen *s = inst;
    if (rst_decode_bool(c, "metricUnits", &s->metric_units) == RST_OK)
        printf("  decode   Tabs/Settings              metricUnits=%s\n", s->metric_units ? "on" : "off");
}

static void screen_finished(void *inst) {
    screen *s = inst;
    printf("  finished %s\n", s->name);
}

/* First launch only: the detail screen and map pane as the app first showed
 * them; they encode the same keys the plugin classes read back. */
static void detail_encode(void *inst, rst_coder *c) {
    screen *s = inst;
    CHECK(rst_encode_string(c, "country", s->country));
    CHECK(rst_encode_object(c, "source", s->source));
    CHECK(rst_encode_int(c, "visits", s->visits));
}
static void map_encode(void *inst, rst_coder *c) {
    screen *s = inst;
    static const char *const layers[] = { "terrain", "borders" };
    CHECK(rst_encode_double(c, "zoom", s->zoom));
    CHECK(rst_encode_begin_record(c, "center"));
    CHECK(rst_encode_double(c, "lat", s->lat));
    CHECK(rst_encode_double(c, "lon", s->lon));
    CHECK(rst_encode_end_record(c));
    CHECK(rst_encode_string_array(c, "layers", layers, 2));
}

static const rst_object_callbacks tabs_cb = { tabs_encode, tabs_decode, screen_finished, NULL };
static const rst_object_callbacks nav_cb = { nav_encode, nav_decode, screen_finished, NULL };
static const rst_object_callbacks list_cb = { list_encode, list_decode, screen_finished, NULL };
static const rst_object_callbacks settings_cb = { settings_encode, settings_decode, screen_finished, NULL };
static const rst_object_callbacks detail_cb = { detail_encode, NULL, NULL, NULL };
static const rst_object_callbacks map_cb = { map_encode, NULL, NULL, NULL };

/* ---- engine callbacks ---- */

static bool should_restore(rst_engine *e, const rst_archive_info *info, void *ctx) {
    (void)e; (void)ctx;
    printf("archive: format %u, app %s, %s, idiom %s, %llu objects\n", info->format_version,
           info->app_version, info->system_version, info->idiom, (unsigned long long)info->object_count);
    return true;
}
static void did_finish(rst_engine *e, void *ctx) {
    (void)e; (void)ctx;
    printf("did_finish_restoring\n");
}
static void log_line(rst_engine *e, int level, const char *message, void *ctx) {
    (void)e; (void)ctx;
    static const char *const names[] = { "debug", "info", "warning", "error" };
    if (level >= RST_LOG_INFO) printf("  log[%s] %s\n", names[level & 3], message);
}

int main(int argc, char **argv) {
    if (argc != 3 || (strcmp(argv[2], "first") != 0 && strcmp(argv[2], "relaunch") != 0
                      && strcmp(argv[2], "demo-loop") != 0)) {
        fprintf(stderr, "usage: countries DIR first|relaunch|demo-loop\n");
        return 2;
    }
    const char *dir = argv[1];
    bool first = strcmp(argv[2], "first") == 0;
    bool demo = strcmp(argv[2], "demo-loop") == 0;
    char archive[4096], plugins[4096];
    snprintf(archive, sizeof archive, "%s/countries.rst", dir);
    snprintf(plugins, sizeof plugins, "%s/plugins", dir);

    rst_engine_options opts = RST_ENGINE_OPTIONS_INIT;
    opts.archive_path = archive;
    opts.plugin_dir = plugins;
    opts.app_version = "countries 1.0";
    opts.idiom = "desktop";
    opts.should_restore = should_restore;
    opts.did_finish_restoring = did_finish;
    opts.log = log_line;
    if (demo) {
        opts.autosave_delay_ms = 20;
        opts.generations = 2;
    }
    rst_engine *e = NULL;
    CHECK(rst_engine_create(&opts, &e));

    static screen tabs = { .name = "Tabs" }, nav = { .name = "Tabs/Countries" },
                  list = { .name = "Tabs/Countries/List" }, settings = { .name = "Tabs/Settings" },
                  detail = { .name = "Tabs/Countries/Detail" }, map = { .name = "Tabs/Countries/Detail/Map" };
    rst_object *otabs, *onav, *olist, *osettings;
    CHECK(rst_register_object(e, "Tabs", NULL, "TabBar", &tabs_cb, &tabs, &otabs));
    CHECK(rst_register_object(e, "Countries", otabs, "NavigationStack", &nav_cb, &nav, &onav));
    CHECK(rst_register_object(e, "List", onav, "CountryList", &list_cb, &list, &olist));
    CHECK(rst_register_object(e, "Settings", otabs, "Settings", &settings_cb, &settings, &osettings));

    if (demo) {
        printf("== demo loop (pid %ld): restore, then scroll and autosave until killed\n", (long)getpid());
        rst_status s = rst_restore(e);
        if (s != RST_OK) printf("no state restored (%s: %s): starting as a first launch\n", rst_status_name(s), rst_last_error());
        if (!rst_find_object(e, "Tabs/Countries/Detail")) {
            tabs.selected_tab = 0;
            list.scroll_offset = 412.5;
            snprintf(list.selection, sizeof list.selection, "NO");
            settings.metric_units = true;
            snprintf(detail.country, sizeof detail.country, "NO");
            detail.source = olist;
            detail.visits = 3;
            map.zoom = 7.5; map.lat = 60.47; map.lon = 8.47;
            rst_object *odetail, *omap;
            CHECK(rst_register_object(e, "Detail", onav, "CountryDetail", &detail_cb, &detail, &odetail));
            CHECK(rst_register_object(e, "Map", odetail, "MapPane", &map_cb, &map, &omap));
        }
        for (int i = 0; i < 3000; i++) {   /* 60 s */
            list.scroll_offset += 1;
            CHECK(rst_mark_dirty(e, olist));
            nanosleep(&(struct timespec){ .tv_nsec = 20000000 }, NULL);
            rst_status d = rst_dispatch(e);
            if (d != RST_OK) printf("autosave: %s: %s\n", rst_status_name(d), rst_last_error());
        }
        CHECK(rst_save(e));
    } else if (first) {
        printf("== first launch (pid %ld): the user navigates\n", (long)getpid());
        tabs.selected_tab = 0;
        list.scroll_offset = 412.5;
        snprintf(list.selection, sizeof list.selection, "NO");
        settings.metric_units = true;
        snprintf(detail.country, sizeof detail.country, "NO");
        detail.source = olist;
        detail.visits = 3;
        map.zoom = 7.5; map.lat = 60.47; map.lon = 8.47;
        rst_object *odetail, *omap;
        CHECK(rst_register_object(e, "Detail", onav, "CountryDetail", &detail_cb, &detail, &odetail));
        CHECK(rst_register_object(e, "Map", odetail, "MapPane", &map_cb, &map, &omap));
        printf("  list scrolled to 412.5, Norway selected, detail screen open, map zoomed to 7.5, metric units on\n");
        CHECK(rst_save(e));
        printf("saved %s; exiting\n", archive);
    } else {
        printf("== relaunch (pid %ld): restoring\n", (long)getpid());
        rst_status s = rst_restore(e);
        if (s == RST_ERR_NOT_FOUND) {
            printf("no saved state: starting fresh (%s)\n", rst_last_error());
        } else {
            CHECK(s);
            rst_restore_report r;
            CHECK(rst_last_restore_report(e, &r));
            printf("report: %llu archived, %llu restored, %llu skipped, %llu plugins loaded, %llu rejected\n",
                   (unsigned long long)r.archived, (unsigned long long)r.restored, (unsigned long long)r.skipped,
                   (unsigned long long)r.plugins_loaded, (unsigned long long)r.plugins_rejected);
            rst_object *d = rst_find_object(e, "Tabs/Countries/Detail");
            rst_object *m = rst_find_object(e, "Tabs/Countries/Detail/Map");
            printf("detail screen %s (class %s), map pane %s (class %s)\n",
                   d ? "restored" : "missing", d ? rst_object_class_name(d) : "-",
                   m ? "restored" : "missing", m ? rst_object_class_name(m) : "-");
            CHECK(rst_save(e));
            printf("saved again through the plugin objects\n");
            if (!d || !m) { rst_engine_destroy(e); return 1; }
        }
    }
    rst_engine_destroy(e);
    return 0;
}
