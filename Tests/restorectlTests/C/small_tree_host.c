#include <restoration.h>
#include <stdio.h>
#include <stdlib.h>
static rst_object *detail;
#define CHECK(x) do { rst_status s_ = (x); if (s_ != RST_OK) { fprintf(stderr, "%s: %s\n", #x, rst_last_error()); exit(1); } } while (0)
static void tabs_encode(void *i, rst_coder *c) {
    (void)i;
    CHECK(rst_encode_int(c, "selectedTab", 3));
    CHECK(rst_encode_object(c, "current", detail));
    CHECK(rst_encode_int(c, "big", INT64_MIN));
}
static void detail_encode(void *i, rst_coder *c) {
    (void)i;
    static const char *const rows[] = { "NL", "NO" };
    static const int64_t ids[] = { 1, -2, 9007199254740993LL };
    CHECK(rst_encode_string(c, "country", "NO"));
    CHECK(rst_encode_double(c, "zoom", 0.1));
    CHECK(rst_encode_bytes(c, "raw", "\x01\x02\xff", 3));
    CHECK(rst_encode_string_array(c, "rows", rows, 2));
    CHECK(rst_encode_int_array(c, "ids", ids, 3));
    CHECK(rst_encode_begin_record(c, "center"));
    CHECK(rst_encode_double(c, "lat", 59.91));
    CHECK(rst_encode_end_record(c));
    CHECK(rst_encode_bool(c, "pinned", 0));
}
static const rst_object_callbacks tabs_cb = { tabs_encode, NULL, NULL, NULL };
static const rst_object_callbacks detail_cb = { detail_encode, NULL, NULL, NULL };
int main(int argc, char **argv) {
    if (argc != 2) return 2;
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.archive_path = argv[1];
    o.app_version = "9.9";
    o.idiom = "kiosk";
    rst_engine *e = NULL;
    CHECK(rst_engine_create(&o, &e));
    rst_object *tabs = NULL;
    CHECK(rst_register_object(e, "Tabs", NULL, "TabBar", &tabs_cb, NULL, &tabs));
    CHECK(rst_register_object(e, "Detail", tabs, "CountryDetail", &detail_cb, NULL, &detail));
    CHECK(rst_register_object(e, "Settings", NULL, NULL, NULL, NULL, NULL));
    CHECK(rst_save(e));
    rst_engine_destroy(e);
    return 0;
}
