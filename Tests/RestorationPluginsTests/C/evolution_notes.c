#define _POSIX_C_SOURCE 200809L
#define RST_PLUGIN
#include <restoration_plugin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef INIT_RESULT
#define INIT_RESULT 0
#endif

RST_PLUGIN_DEFINE_API;

/* 0 -> 1: "text" becomes "body". */
static rst_status to1(rst_coder *c, uint32_t from, void *ctx) {
    (void)from; (void)ctx;
    return rst_coder_rename(c, "text", "body");
}
/* 1 -> 2: add "words", the number of words of "body". */
static rst_status to2(rst_coder *c, uint32_t from, void *ctx) {
    (void)from; (void)ctx;
    const char *body = NULL;
    rst_status s = rst_decode_string(c, "body", &body, NULL);
    if (s != RST_OK) return s;
    int64_t words = *body ? 1 : 0;
    for (const char *p = body; *p; p++) if (*p == ' ') words++;
    return rst_encode_int(c, "words", words);
}

static int fx_init(rst_engine *e, void **ctx) {
    (void)ctx;
    if (!RST_HOST_API_HAS(rst_plugin_api__, coder_rename)) return 2;   /* a 1.0 host */
    if (rst_set_class_version(e, "Note", 2) != RST_OK) return 3;
    if (rst_register_migration(e, "Note", 0, to1, NULL) != RST_OK) return 4;
    if (rst_register_migration(e, "Note", 1, to2, NULL) != RST_OK) return 5;
    return INIT_RESULT;
}

static void desc_release(void *inst) { free(inst); }
static const rst_object_callbacks desc_callbacks = { NULL, NULL, NULL, desc_release };

RST_PLUGIN_EXPORT rst_object *make_note(rst_engine *e, rst_object *p, const char *i, rst_coder *c) {
    const char *body = "?";
    int64_t words = -1;
    rst_decode_string(c, "body", &body, NULL);
    rst_decode_int(c, "words", &words);
    char *desc = malloc(256);
    snprintf(desc, 256, "v%u body=%s words=%lld text=%d", (unsigned)rst_coder_class_version(c), body,
             (long long)words, rst_coder_contains(c, "text"));
    rst_object *o = NULL;
    if (rst_register_object(e, i, p, "Note", &desc_callbacks, desc, &o) != RST_OK) { free(desc); return NULL; }
    return o;
}

static const rst_plugin_class classes[] = { { "Note", "make_note", "EPIC" } };
static const rst_plugin_manifest manifest = {
    RST_PLUGIN_ABI_VERSION, "notes", "2.0", 1, classes, fx_init, NULL, RST_PLUGIN_MANIFEST_SIZE, 0, { 0 } };
RST_PLUGIN_EXPORT const rst_plugin_manifest *rst_plugin_manifest_v1(const rst_host_api *api) {
    RST_PLUGIN_INIT(api);
    return &manifest;
}
