#define _POSIX_C_SOURCE 200809L
#define RST_PLUGIN
#include <restoration_plugin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef ABI
#define ABI RST_PLUGIN_ABI_VERSION
#endif
#ifndef TAG
#define TAG "simple"
#endif
#ifndef CLASS1
#define CLASS1 "Simple1"
#endif
#ifndef CLASS2
#define CLASS2 "Simple2"
#endif
#ifndef INIT_RESULT
#define INIT_RESULT 0
#endif

RST_PLUGIN_DEFINE_API;

static int g_init_calls, g_fini_calls;
RST_PLUGIN_EXPORT int fixture_init_calls(void) { return __atomic_load_n(&g_init_calls, __ATOMIC_SEQ_CST); }
RST_PLUGIN_EXPORT int fixture_fini_calls(void) { return __atomic_load_n(&g_fini_calls, __ATOMIC_SEQ_CST); }

static int fx_init(rst_engine *e, void **ctx) {
    (void)e; (void)ctx;
    __atomic_fetch_add(&g_init_calls, 1, __ATOMIC_SEQ_CST);
    return INIT_RESULT;
}
static void fx_fini(void *ctx) { (void)ctx; __atomic_fetch_add(&g_fini_calls, 1, __ATOMIC_SEQ_CST); }

static void desc_release(void *inst) { free(inst); }
static const rst_object_callbacks desc_callbacks = { NULL, NULL, NULL, desc_release };

static rst_object *make(rst_engine *e, rst_object *p, const char *i, const char *cls) {
    char *desc = malloc(256);
    if (desc == NULL) return NULL;
    snprintf(desc, 256, "%s:%s", TAG, cls);
    rst_object *o = NULL;
    if (rst_register_object(e, i, p, cls, &desc_callbacks, desc, &o) != RST_OK) { free(desc); return NULL; }
    return o;
}
RST_PLUGIN_EXPORT rst_object *simple_make1(rst_engine *e, rst_object *p, const char *i) { return make(e, p, i, CLASS1); }
RST_PLUGIN_EXPORT rst_object *simple_make2(rst_engine *e, rst_object *p, const char *i) { return make(e, p, i, CLASS2); }

static const rst_plugin_class classes[] = {
    { CLASS1, "simple_make1", "EPI" },
    { CLASS2, "simple_make2", "EPI" },
};
#if defined(V1_STRUCT)
/* Exactly the manifest a plugin built against the 1.0 header has: the
 * seven v1 members and nothing after them. */
struct manifest_v1 {
    uint32_t abi_version; const char *name; const char *version; size_t class_count;
    const rst_plugin_class *classes; int (*init)(rst_engine *, void **); void (*fini)(void *);
};
static const struct manifest_v1 manifest_storage = { 1, TAG, "2.0", 2, classes, fx_init, fx_fini };
#define manifest (*(const rst_plugin_manifest *)(const void *)&manifest_storage)
#elif defined(SIZED)
static const rst_plugin_manifest manifest = {
    ABI, TAG, "2.0", 2, classes, fx_init, fx_fini, SIZED, 0, { 0 }
};
#else
static const rst_plugin_manifest manifest = {
    ABI, TAG, "2.0", 2, classes, fx_init, fx_fini
};
#endif

#if defined(NO_MANIFEST)
RST_PLUGIN_EXPORT const rst_plugin_manifest *not_the_manifest(const rst_host_api *api) {
    (void)api;
    return &manifest;
}
#elif defined(NULL_MANIFEST)
RST_PLUGIN_EXPORT const rst_plugin_manifest *rst_plugin_manifest_v1(const rst_host_api *api) {
    RST_PLUGIN_INIT(api);
    (void)&manifest;
    return NULL;
}
#else
RST_PLUGIN_EXPORT const rst_plugin_manifest *rst_plugin_manifest_v1(const rst_host_api *api) {
    RST_PLUGIN_INIT(api);
    return &manifest;
}
#endif
