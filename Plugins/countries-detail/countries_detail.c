/*
 * countries-detail: the demo's C plugin. See countries_detail.h.
 *
 * Written as every C plugin is: #define RST_PLUGIN before including
 * restoration_plugin.h, RST_PLUGIN_DEFINE_API once, RST_PLUGIN_INIT(api) first
 * in rst_plugin_manifest_v1; rst_* calls then go through the host's table.
 */
#define _POSIX_C_SOURCE 200809L  /* strdup under -std=c11 */
#define RST_PLUGIN
#include <restoration_plugin.h>
#include "countries_detail.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

RST_PLUGIN_DEFINE_API;

/* ---- plugin context (one per engine that loads the plugin) ---- */

typedef struct plugin_ctx {
    uint32_t magic;          /* CTX_MAGIC while alive */
    unsigned notes_created;  /* CountryNotes made by this engine */
} plugin_ctx;
#define CTX_MAGIC 0x434e4f54u  /* "CNOT" */

static int detail_init(rst_engine *e, void **out) {
    (void)e;
    plugin_ctx *ctx = calloc(1, sizeof *ctx);
    if (ctx == NULL) return 1;   /* non-zero: the host rejects the plugin */
    ctx->magic = CTX_MAGIC;
    *out = ctx;
    return 0;
}

static void detail_fini(void *p) {
    plugin_ctx *ctx = p;
    if (ctx != NULL) ctx->magic = 0;
    free(ctx);
}

/* Copies a path for messages: rst_object_path when the host has it. */
static char *path_of(const rst_object *o) {
    char *out = NULL;
    if (o != NULL && RST_HOST_API_HAS(rst_plugin_api__, object_path) && rst_object_path(o, &out) == RST_OK) {
        char *copy = strdup(out);
        rst_free(out);
        return copy;
    }
    return strdup(o != NULL && rst_object_identifier(o) ? rst_object_identifier(o) : "-");
}

/* ---- CountryDetail ---- */

typedef struct detail {
    char country[8];
    rst_object *source;   /* the list the screen was opened from (may be NULL) */
    int64_t visits;
    int64_t saved_at_ms;  /* when the archive it came from was saved */
    char *path;
} detail;

static void detail_encode(void *inst, rst_coder *c) {
    detail *d = inst;
    rst_encode_string(c, "country", d->country);
    if (d->source != NULL) rst_encode_object(c, "source", d->source);
    rst_encode_int(c, "visits", d->visits);
}

static void detail_decode(void *inst, rst_coder *c) {
    detail *d = inst;
    const char *country = NULL;
    if (rst_decode_string(c, "country", &country, NULL) == RST_OK)
        snprintf(d->country, sizeof d->country, "%s", country);
    rst_object *source = NULL;
    if (rst_decode_object(c, "source", &source) == RST_OK) d->source = source;
    rst_decode_int(c, "visits", &d->visits);
}

static void detail_finished(void *inst) {
    detail *d = inst;
    char *source = d->source ? path_of(d->source) : strdup("-");
    printf("[countries-detail] restored CountryDetail at %s: country=%s visits=%" PRId64 " source=%s\n",
           d->path, d->country, d->visits, source ? source : "-");
    fflush(stdout);
    free(source);
}

static void detail_release(void *inst) {
    detail *d = inst;
    free(d->path);
    free(d);
}

static const rst_object_callbacks detail_callbacks = {
    detail_encode, detail_decode, detail_finished, detail_release
};

RST_PLUGIN_EXPORT rst_object *countries_detail_make(rst_engine *e, rst_object *parent, const char *identifier,
                                                    const char *path, rst_coder *coder, int64_t saved_at_ms) {
    /* The factory's coder is readable: no country, no screen (decline). */
    const char *country = NULL;
    if (rst_decode_string(coder, "country", &country, NULL) != RST_OK) return NULL;
    detail *d = calloc(1, sizeof *d);
    if (d == NULL) return NULL;
    snprintf(d->country, sizeof d->country, "%s", country);
    d->saved_at_ms = saved_at_ms;
    d->path = strdup(path);
    rst_object *o = NULL;
    if (d->path == NULL ||
        rst_register_object(e, identifier, parent, "CountryDetail", &detail_callbacks, d, &o) != RST_OK) {
        free(d->path);
        free(d);
        return NULL;
    }
    return o;
}

/* ---- CountryNotes ---- */

typedef struct notes {
    char *text;
    char *path;
    uint32_t depth;
    unsigned serial;       /* nth note made by this engine (from the context) */
} notes;

static void notes_encode(void *inst, rst_coder *c) {
    notes *n = inst;
    rst_encode_string(c, "text", n->text ? n->text : "");
}

static void notes_decode(void *inst, rst_coder *c) {
    notes *n = inst;
    const char *text = NULL;
    if (rst_decode_string(c, "text", &text, NULL) == RST_OK) {
        free(n->text);
        n->text = strdup(text);
    }
}

static void notes_finished(void *inst) {
    notes *n = inst;
    printf("[countries-detail] restored CountryNotes at %s: text=\"%s\" depth=%u note=%u\n",
           n->path, n->text ? n->text : "", n->depth, n->serial);
    fflush(stdout);
}

static void notes_release(void *inst) {
    notes *n = inst;
    free(n->text);
    free(n->path);
    free(n);
}

static const rst_object_callbacks notes_callbacks = {
    notes_encode, notes_decode, notes_finished, notes_release
};

RST_PLUGIN_EXPORT rst_object *countries_notes_make(void *plugin_ctx_p, uint32_t depth, rst_coder *coder, int64_t saved_at_ms,
                                                   const char *identifier, rst_object *parent, rst_engine *e) {
    (void)coder;
    (void)saved_at_ms;
    plugin_ctx *ctx = plugin_ctx_p;
    if (ctx == NULL || ctx->magic != CTX_MAGIC) return NULL;
    notes *n = calloc(1, sizeof *n);
    if (n == NULL) return NULL;
    n->depth = depth;
    n->serial = ++ctx->notes_created;
    char *parent_path = path_of(parent);
    size_t len = (parent_path ? strlen(parent_path) : 0) + strlen(identifier) + 2;
    n->path = malloc(len);
    if (n->path != NULL) snprintf(n->path, len, "%s/%s", parent_path ? parent_path : "", identifier);
    free(parent_path);
    rst_object *o = NULL;
    if (n->path == NULL ||
        rst_register_object(e, identifier, parent, "CountryNotes", &notes_callbacks, n, &o) != RST_OK) {
        notes_release(n);
        return NULL;
    }
    return o;
}

/* ---- manifest ---- */

static const rst_plugin_class detail_classes[] = {
    { "CountryDetail", "countries_detail_make", "EPIRCT" },
    { "CountryNotes",  "countries_notes_make",  "XDCTIPE" },
};

static const rst_plugin_manifest detail_manifest = {
    RST_PLUGIN_ABI_VERSION,
    "countries-detail",
    "1.0.0",
    sizeof detail_classes / sizeof detail_classes[0],
    detail_classes,
    detail_init,
    detail_fini,
    RST_PLUGIN_MANIFEST_SIZE,
    0,
    { NULL },
};

RST_PLUGIN_EXPORT const rst_plugin_manifest *rst_plugin_manifest_v1(const rst_host_api *api) {
    RST_PLUGIN_INIT(api);
    return &detail_manifest;
}
