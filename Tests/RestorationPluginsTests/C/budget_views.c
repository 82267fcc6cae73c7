#define _POSIX_C_SOURCE 200809L
#define RST_PLUGIN
#include <restoration_plugin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

RST_PLUGIN_DEFINE_API;

static void desc_release(void *inst) { free(inst); }
static const rst_object_callbacks desc_callbacks = { NULL, NULL, NULL, desc_release };

RST_PLUGIN_EXPORT rst_object *make_view(rst_engine *e, rst_object *p, const char *i, rst_coder *c) {
    (void)c;
    char *desc = malloc(256);
    if (!RST_HOST_API_HAS(rst_plugin_api__, last_save_sizes)) { snprintf(desc, 256, "old host"); }
    rst_object *o = NULL;
    if (rst_register_object(e, i, p, "View", &desc_callbacks, desc, &o) != RST_OK) { free(desc); return NULL; }
    if (RST_HOST_API_HAS(rst_plugin_api__, last_save_sizes)) {
        rst_size_entry *sizes = (rst_size_entry *)1;
        size_t n = 99;
        rst_status s1 = rst_set_object_priority(o, -3);
        rst_status s2 = rst_set_object_priority(NULL, 1);
        rst_status s3 = rst_last_save_sizes(e, &sizes, &n);
        snprintf(desc, 256, "priority=%d null=%d sizes=%d n=%zu out=%s", (int)s1, (int)s2, (int)s3, n,
                 sizes == NULL ? "NULL" : "set");
    }
    return o;
}

static const rst_plugin_class classes[] = { { "View", "make_view", "EPIC" } };
static const rst_plugin_manifest manifest = {
    RST_PLUGIN_ABI_VERSION, "views", "1.0", 1, classes, NULL, NULL, RST_PLUGIN_MANIFEST_SIZE, 0, { 0 } };
RST_PLUGIN_EXPORT const rst_plugin_manifest *rst_plugin_manifest_v1(const rst_host_api *api) {
    RST_PLUGIN_INIT(api);
    return &manifest;
}
