#include <restoration.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call) do { rst_status s_ = (call); if (s_ != RST_OK) { \
    fprintf(stderr, "xhost: %s failed: %s: %s\n", #call, rst_status_name(s_), rst_last_error()); \
    exit(1); } } while (0)

typedef struct obj { char path[256]; rst_object *self; } obj;
static obj tabs = { "Tabs", NULL }, nav = { "Tabs/Countries", NULL }, list = { "Tabs/Countries/List", NULL },
           settings = { "Tabs/Settings", NULL }, detail = { "Tabs/Countries/Detail", NULL },
           map = { "Tabs/Countries/Detail/Map", NULL };

/* ---- encode (first launch) ---- */
static void tabs_enc(void *i, rst_coder *c) { (void)i; CHECK(rst_encode_int(c, "selectedTab", 2)); }
static void nav_enc(void *i, rst_coder *c) { (void)i; CHECK(rst_encode_int(c, "depth", 2)); }
static void list_enc(void *i, rst_coder *c) {
    (void)i;
    static const char *const rows[] = { "NL", "NO", "NZ" };
    static const unsigned char blob[] = { 0, 1, 2, 255 };
    static const int64_t heights[] = { 44, -1, 9000000000LL };
    CHECK(rst_encode_double(c, "scrollOffset", 412.5));
    CHECK(rst_encode_string(c, "selection", "NO"));
    CHECK(rst_encode_string_array(c, "visibleRows", rows, 3));
    CHECK(rst_encode_bytes(c, "blob", blob, sizeof blob));
    CHECK(rst_encode_int_array(c, "rowHeights", heights, 3));
}
static void detail_enc(void *i, rst_coder *c) {
    (void)i;
    CHECK(rst_encode_string(c, "country", "NO"));
    CHECK(rst_encode_object(c, "source", list.self));
    CHECK(rst_encode_int(c, "visits", 3));
}
static void map_enc(void *i, rst_coder *c) {
    (void)i;
    static const char *const layers[] = { "terrain", "borders" };
    CHECK(rst_encode_double(c, "zoom", 7.5));
    CHECK(rst_encode_begin_record(c, "center"));
    CHECK(rst_encode_double(c, "lat", 60.47));
    CHECK(rst_encode_double(c, "lon", 8.47));
    CHECK(rst_encode_end_record(c));
    CHECK(rst_encode_string_array(c, "layers", layers, 2));
}
static void settings_enc(void *i, rst_coder *c) {
    (void)i;
    static const int64_t recent[] = { 3, 1, 2 };
    CHECK(rst_encode_bool(c, "metricUnits", true));
    CHECK(rst_encode_begin_record(c, "prefs"));
    CHECK(rst_encode_string(c, "units", "metric"));
    CHECK(rst_encode_int_array(c, "recent", recent, 3));
    CHECK(rst_encode_begin_record(c, "nested"));
    CHECK(rst_encode_bool(c, "ok", true));
    CHECK(rst_encode_end_record(c));
    CHECK(rst_encode_end_record(c));
}

/* ---- decode (relaunch): one line per object ---- */
static void print_strings(rst_coder *c, const char *key) {
    size_t n = 0;
    const char *s = NULL;
    for (size_t i = 0; i == 0 || i < n; i++) {
        if (rst_decode_string_array(c, key, i, &s, NULL, &n) != RST_OK) break;
        printf("%s%s", i ? "," : "", s);
    }
}
static void print_ints(rst_coder *c, const char *key) {
    int64_t buf[64];
    size_t n = 0;
    CHECK(rst_decode_int_array(c, key, buf, 64, &n));
    for (size_t i = 0; i < n; i++) printf("%s%lld", i ? "," : "", (long long)buf[i]);
}
static void tabs_dec(void *i, rst_coder *c) {
    int64_t v = 0;
    CHECK(rst_decode_int(c, "selectedTab", &v));
    printf("%s selectedTab=%lld\n", ((obj *)i)->path, (long long)v);
}
static void nav_dec(void *i, rst_coder *c) {
    int64_t v = 0;
    CHECK(rst_decode_int(c, "depth", &v));
    printf("%s depth=%lld\n", ((obj *)i)->path, (long long)v);
}
static void list_dec(void *i, rst_coder *c) {
    double off = 0;
    const char *sel = NULL;
    const void *blob = NULL;
    size_t blen = 0;
    CHECK(rst_decode_double(c, "scrollOffset", &off));
    CHECK(rst_decode_string(c, "selection", &sel, NULL));
    printf("%s scrollOffset=%g selection=%s visibleRows=", ((obj *)i)->path, off, sel);
    print_strings(c, "visibleRows");
    CHECK(rst_decode_bytes(c, "blob", &blob, &blen));
    printf(" blob=");
    for (size_t k = 0; k < blen; k++) printf("%02x", ((const unsigned char *)blob)[k]);
    printf(" rowHeights=");
    print_ints(c, "rowHeights");
    printf("\n");
}
static void detail_dec(void *i, rst_coder *c) {
    const char *country = NULL;
    rst_object *source = NULL;
    char *spath = NULL;
    int64_t visits = 0;
    CHECK(rst_decode_string(c, "country", &country, NULL));
    CHECK(rst_decode_object(c, "source", &source));
    CHECK(rst_object_path(source, &spath));
    CHECK(rst_decode_int(c, "visits", &visits));
    printf("%s country=%s source=%s visits=%lld\n", ((obj *)i)->path, country, spath, (long long)visits);
    rst_free(spath);
}
static void map_dec(void *i, rst_coder *c) {
    double zoom = 0, lat = 0, lon = 0;
    CHECK(rst_decode_double(c, "zoom", &zoom));
    CHECK(rst_decode_begin_record(c, "center"));
    CHECK(rst_decode_double(c, "lat", &lat));
    CHECK(rst_decode_double(c, "lon", &lon));
    CHECK(rst_decode_end_record(c));
    printf("%s zoom=%g center=%g,%g layers=", ((obj *)i)->path, zoom, lat, lon);
    print_strings(c, "layers");
    printf("\n");
}
static void settings_dec(void *i, rst_coder *c) {
    bool metric = false, ok = false;
    const char *units = NULL;
    CHECK(rst_decode_bool(c, "metricUnits", &metric));
    CHECK(rst_decode_begin_record(c, "prefs"));
    CHECK(rst_decode_string(c, "units", &units, NULL));
    printf("%s metricUnits=%d prefs.units=%s prefs.recent=", ((obj *)i)->path, metric, units);
    print_ints(c, "recent");
    CHECK(rst_decode_begin_record(c, "nested"));
    CHECK(rst_decode_bool(c, "ok", &ok));
    CHECK(rst_decode_end_record(c));
    CHECK(rst_decode_end_record(c));
    printf(" prefs.nested.ok=%d\n", ok);
}
static void release_made(void *i) { free(i); }

static const rst_object_callbacks tabs_cb = { tabs_enc, tabs_dec, NULL, NULL };
static const rst_object_callbacks nav_cb = { nav_enc, nav_dec, NULL, NULL };
static const rst_object_callbacks list_cb = { list_enc, list_dec, NULL, NULL };
static const rst_object_callbacks settings_cb = { settings_enc, settings_dec, NULL, NULL };
static const rst_object_callbacks detail_cb = { detail_enc, detail_dec, NULL, NULL };
static const rst_object_callbacks map_cb = { map_enc, map_dec, NULL, NULL };
static const rst_object_callbacks detail_made_cb = { detail_enc, detail_dec, NULL, release_made };
static const rst_object_callbacks map_made_cb = { map_enc, map_dec, NULL, release_made };

typedef struct klass { const char *name; const rst_object_callbacks *cb; } klass;
static const klass detail_class = { "CountryDetail", &detail_made_cb }, map_class = { "MapPane", &map_made_cb };

static rst_object *make(rst_engine *e, rst_object *parent, const char *identifier, rst_coder *c, void *ctx) {
    (void)c;
    const klass *k = ctx;
    obj *o = calloc(1, sizeof *o);
    char *pp = NULL;
    if (parent) CHECK(rst_object_path(parent, &pp));
    snprintf(o->path, sizeof o->path, "%s%s%s", pp ? pp : "", pp ? "/" : "", identifier);
    rst_free(pp);
    if (rst_register_object(e, identifier, parent, k->name, k->cb, o, &o->self) != RST_OK) { free(o); return NULL; }
    return o->self;
}

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    bool save = strcmp(argv[1], "save") == 0;
    rst_engine_options opts = RST_ENGINE_OPTIONS_INIT;
    opts.archive_path = argv[2];
    opts.app_version = "xhost 1.0";
    opts.idiom = "test";
    rst_engine *e = NULL;
    CHECK(rst_engine_create(&opts, &e));
    CHECK(rst_register_object(e, "Tabs", NULL, "TabBar", &tabs_cb, &tabs, &tabs.self));
    CHECK(rst_register_object(e, "Countries", tabs.self, "NavigationStack", &nav_cb, &nav, &nav.self));
    CHECK(rst_register_object(e, "List", nav.self, "CountryList", &list_cb, &list, &list.self));
    if (save) {
        CHECK(rst_register_object(e, "Detail", nav.self, "CountryDetail", &detail_cb, &detail, &detail.self));
        CHECK(rst_register_object(e, "Map", detail.self, "MapPane", &map_cb, &map, &map.self));
    }
    CHECK(rst_register_object(e, "Settings", tabs.self, "Settings", &settings_cb, &settings, &settings.self));
    if (save) {
        CHECK(rst_save(e));
    } else {
        CHECK(rst_register_class(e, "CountryDetail", make, (void *)&detail_class));
        CHECK(rst_register_class(e, "MapPane", make, (void *)&map_class));
        CHECK(rst_restore(e));
        rst_restore_report r;
        CHECK(rst_last_restore_report(e, &r));
        printf("report archived=%llu restored=%llu skipped=%llu\n", (unsigned long long)r.archived,
               (unsigned long long)r.restored, (unsigned long long)r.skipped);
    }
    rst_engine_destroy(e);
    return 0;
}
