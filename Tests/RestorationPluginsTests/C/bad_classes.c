#define _POSIX_C_SOURCE 200809L
#define RST_PLUGIN
#include <restoration_plugin.h>
#include <stdlib.h>
#include <string.h>

RST_PLUGIN_DEFINE_API;

static void desc_release(void *inst) { free(inst); }
static const rst_object_callbacks desc_callbacks = { NULL, NULL, NULL, desc_release };

RST_PLUGIN_EXPORT rst_object *bad_make(rst_engine *e, rst_object *p, const char *i) {
    rst_object *o = NULL;
    char *desc = strdup("bad-classes:Good");
    if (rst_register_object(e, i, p, "Good", &desc_callbacks, desc, &o) != RST_OK) { free(desc); return NULL; }
    return o;
}

static const rst_plugin_class classes[] = {
    { "BadLetter", "bad_make", "EPQ" },
    { "Repeated", "bad_make", "EPIE" },
    { "MissingSymbol", "no_such_factory", "EPI" },
    { "NullSignature", "bad_make", NULL },
    { "Good", "bad_make", "EPI" },
    { "Good", "bad_make", "EPI" },
    { "", "bad_make", "EPI" },
};
static const rst_plugin_manifest manifest = {
    RST_PLUGIN_ABI_VERSION, "bad-classes", "0.1", sizeof classes / sizeof classes[0], classes, NULL, NULL
};
RST_PLUGIN_EXPORT const rst_plugin_manifest *rst_plugin_manifest_v1(const rst_host_api *api) {
    RST_PLUGIN_INIT(api);
    return &manifest;
}
