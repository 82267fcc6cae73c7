#define RST_PLUGIN
#include <restoration_plugin.h>
RST_PLUGIN_DEFINE_API;

static void tabs_decode(void *inst, rst_coder *c) { (void)inst; int64_t v; rst_decode_int(c, "selectedTab", &v); }
static void tabs_encode(void *inst, rst_coder *c) { (void)inst; rst_encode_string(c, "madeBy", "plugin"); }
static const rst_object_callbacks tabs_cb = { tabs_encode, tabs_decode, NULL, NULL };

RST_PLUGIN_EXPORT rst_object *make_tabs(rst_engine *e, rst_object *parent, const char *id, rst_coder *c) {
    (void)c;
    rst_object *o = NULL;
    if (rst_register_object(e, id, parent, "TabBar", &tabs_cb, NULL, &o) != RST_OK) return NULL;
    return o;
}
RST_PLUGIN_EXPORT rst_object *decline(const char *path) { (void)path; return NULL; }

static const rst_plugin_class classes[] = {
    { "TabBar", "make_tabs", "EPIC" },
    { "CountryDetail", "decline", "R" },
    { "Broken", "no_such_symbol", "E" },
};
static const rst_plugin_manifest manifest = { RST_PLUGIN_ABI_VERSION, "testpanes", "1.0", 3, classes, NULL, NULL };

RST_PLUGIN_EXPORT const rst_plugin_manifest *rst_plugin_manifest_v1(const rst_host_api *api) {
    RST_PLUGIN_INIT(api);
    return &manifest;
}
