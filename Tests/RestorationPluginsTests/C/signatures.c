#define _POSIX_C_SOURCE 200809L
#define RST_PLUGIN
#include <restoration_plugin.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef INIT_RESULT
#define INIT_RESULT 0
#endif

RST_PLUGIN_DEFINE_API;

static rst_engine *g_engine;
static void *g_ctx;
static int g_init_calls, g_fini_calls, g_fini_ctx_ok;
RST_PLUGIN_EXPORT int fixture_init_calls(void) { return g_init_calls; }
RST_PLUGIN_EXPORT int fixture_fini_calls(void) { return g_fini_calls; }
RST_PLUGIN_EXPORT int fixture_fini_ctx_ok(void) { return g_fini_ctx_ok; }

static int fx_init(rst_engine *e, void **ctx) {
    g_init_calls++;
    g_engine = e;
    g_ctx = malloc(16);
    *ctx = g_ctx;
    if (INIT_RESULT != 0) { free(g_ctx); *ctx = NULL; }
    return INIT_RESULT;
}
static void fx_fini(void *ctx) {
    g_fini_calls++;
    if (ctx == g_ctx) g_fini_ctx_ok++;
    free(ctx);
}

static void desc_release(void *inst) { free(inst); }
static const rst_object_callbacks desc_callbacks = { NULL, NULL, NULL, desc_release };

typedef struct args {
    const char *sig;
    rst_engine *e; rst_object *p; const char *i; const char *r;
    rst_coder *c; void *x; uint32_t d; int64_t t;
} args;

static int has(const args *a, char l) { return strchr(a->sig, l) != NULL; }

static rst_object *make(const char *cls, const char *defpath, args *a) {
    rst_engine *e = has(a, 'E') ? a->e : g_engine;
    char ident[256], parent_path[1024];
    const char *path = has(a, 'R') ? a->r : (defpath ? defpath : "");
    const char *slash = strrchr(path, '/');
    snprintf(ident, sizeof ident, "%s", has(a, 'I') ? a->i : (slash ? slash + 1 : path));
    snprintf(parent_path, sizeof parent_path, "%.*s", slash ? (int)(slash - path) : 0, path);
    rst_object *parent = has(a, 'P') ? a->p : (slash ? rst_find_object(e, parent_path) : NULL);

    char cval[32] = "-";
    if (has(a, 'C')) {
        int64_t v = 0;
        if (rst_decode_int(a->c, "v", &v) == RST_OK) snprintf(cval, sizeof cval, "%" PRId64, v);
        else snprintf(cval, sizeof cval, "err");
    }
    char ebuf[32] = "-", pbuf[32] = "-", xbuf[32] = "-", dbuf[16] = "-", tbuf[32] = "-";
    if (has(a, 'E')) snprintf(ebuf, sizeof ebuf, "%p", (void *)a->e);
    if (has(a, 'P')) snprintf(pbuf, sizeof pbuf, "%p", (void *)a->p);
    if (has(a, 'X')) snprintf(xbuf, sizeof xbuf, "%p", a->x);
    if (has(a, 'D')) snprintf(dbuf, sizeof dbuf, "%u", a->d);
    if (has(a, 'T')) snprintf(tbuf, sizeof tbuf, "%" PRId64, a->t);
    char *desc = malloc(2048);
    if (desc == NULL) return NULL;
    snprintf(desc, 2048, "cls=%s sig=%s E=%s P=%s I=%s R=%s C=%s X=%s D=%s T=%s Xinit=%p",
             cls, a->sig[0] ? a->sig : "(none)", ebuf, pbuf, has(a, 'I') ? a->i : "-", has(a, 'R') ? a->r : "-",
             cval, xbuf, dbuf, tbuf, g_ctx);
    rst_object *o = NULL;
    if (rst_register_object(e, ident, parent, cls, &desc_callbacks, desc, &o) != RST_OK) {
        fprintf(stderr, "fixture: register %s failed: %s\n", ident, rst_last_error());
        free(desc);
        return NULL;
    }
    return o;
}

/* rst_factory_fn minus the context */
RST_PLUGIN_EXPORT rst_object *f_epic(rst_engine *e, rst_object *p, const char *i, rst_coder *c) {
    args a = { "EPIC", e, p, i, NULL, c, NULL, 0, 0 };
    return make("EPIC", NULL, &a);
}
RST_PLUGIN_EXPORT rst_object *f_all(rst_engine *e, rst_object *p, const char *i, const char *r,
                                    rst_coder *c, void *x, uint32_t d, int64_t t) {
    args a = { "EPIRCXDT", e, p, i, r, c, x, d, t };
    return make("All", NULL, &a);
}
RST_PLUGIN_EXPORT rst_object *f_reverse(int64_t t, uint32_t d, void *x, rst_coder *c,
                                        const char *r, const char *i, rst_object *p, rst_engine *e) {
    args a = { "TDXCRIPE", e, p, i, r, c, x, d, t };
    return make("Reverse", NULL, &a);
}
RST_PLUGIN_EXPORT rst_object *f_dtmix(uint32_t d, rst_engine *e, rst_object *p, int64_t t, const char *i) {
    args a = { "DEPTI", e, p, i, NULL, NULL, NULL, d, t };
    return make("DTMix", NULL, &a);
}
RST_PLUGIN_EXPORT rst_object *f_rt(const char *r, int64_t t) {
    args a = { "RT", NULL, NULL, NULL, r, NULL, NULL, 0, t };
    return make("PathTime", NULL, &a);
}
RST_PLUGIN_EXPORT rst_object *f_none(void) {
    args a = { "", NULL, NULL, NULL, NULL, NULL, NULL, 0, 0 };
    return make("Empty", "Root/Empty", &a);
}
RST_PLUGIN_EXPORT rst_object *f_xdctipe(void *x, uint32_t d, rst_coder *c, int64_t t,
                                        const char *i, rst_object *p, rst_engine *e) {
    args a = { "XDCTIPE", e, p, i, NULL, c, x, d, t };
    return make("XDCTIPE", NULL, &a);
}
RST_PLUGIN_EXPORT rst_object *f_tdx(int64_t t, uint32_t d, void *x) {
    args a = { "TDX", NULL, NULL, NULL, NULL, NULL, x, d, t };
    return make("TDX", "Root/Mid/TDX", &a);
}
/* declines */
RST_PLUGIN_EXPORT rst_object *f_decline(rst_engine *e, rst_object *p, const char *i) {
    (void)e; (void)p; (void)i;
    return NULL;
}
/* registers elsewhere and returns that object */
RST_PLUGIN_EXPORT rst_object *f_elsewhere(rst_engine *e, rst_object *p, const char *i) {
    char other[300];
    snprintf(other, sizeof other, "%s-elsewhere", i);
    rst_object *o = NULL;
    char *desc = strdup("elsewhere");
    if (rst_register_object(e, other, p, "Elsewhere", &desc_callbacks, desc, &o) != RST_OK) { free(desc); return NULL; }
    return o;
}
/* returns its parent, registering nothing */
RST_PLUGIN_EXPORT rst_object *f_parent(rst_engine *e, rst_object *p, const char *i) {
    (void)e; (void)i;
    return p;
}
/* returns a pointer that is no object at all: must never be dereferenced */
RST_PLUGIN_EXPORT rst_object *f_garbage(void) {
    return (rst_object *)(uintptr_t)0x10;
}

static const rst_plugin_class classes[] = {
    { "EPIC", "f_epic", "EPIC" },
    { "All", "f_all", "EPIRCXDT" },
    { "Reverse", "f_reverse", "TDXCRIPE" },
    { "DTMix", "f_dtmix", "DEPTI" },
    { "PathTime", "f_rt", "RT" },
    { "Empty", "f_none", "" },
    { "XDCTIPE", "f_xdctipe", "XDCTIPE" },
    { "TDX", "f_tdx", "TDX" },
    { "Decline", "f_decline", "EPI" },
    { "Elsewhere", "f_elsewhere", "EPI" },
    { "ReturnsParent", "f_parent", "EPI" },
    { "Garbage", "f_garbage", "" },
};
static const rst_plugin_manifest manifest = {
    RST_PLUGIN_ABI_VERSION, "signatures", "1.0", sizeof classes / sizeof classes[0], classes, fx_init, fx_fini
};
RST_PLUGIN_EXPORT const rst_plugin_manifest *rst_plugin_manifest_v1(const rst_host_api *api) {
    RST_PLUGIN_INIT(api);
    return &manifest;
}
