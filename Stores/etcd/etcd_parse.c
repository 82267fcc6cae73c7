/* etcd_parse.c: see etcd_parse.h. */
#define _GNU_SOURCE
#include "etcd_parse.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *err, size_t cap, const char *fmt, ...) {
    if (err && cap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, cap, fmt, ap);
        va_end(ap);
    }
    return -1;
}

json_object *etcd_parse_object(const char *text, size_t len, char *err, size_t cap) {
    if (len > INT_MAX) { fail(err, cap, "an answer of %zu bytes is too large", len); return NULL; }
    json_tokener *t = json_tokener_new_ex(64);
    if (!t) { fail(err, cap, "out of memory"); return NULL; }
    json_object *o = json_tokener_parse_ex(t, text, (int)len);
    enum json_tokener_error je = json_tokener_get_error(t);
    size_t used = json_tokener_get_parse_end(t);
    json_tokener_free(t);
    if (!o || je != json_tokener_success) {
        if (o) json_object_put(o);
        fail(err, cap, "the answer is not JSON (%s)",
             je == json_tokener_continue ? "it ends too early" : json_tokener_error_desc(je));
        return NULL;
    }
    while (used < len && (text[used] == ' ' || text[used] == '\n' || text[used] == '\r' || text[used] == '\t')) used++;
    if (used != len) { json_object_put(o); fail(err, cap, "the answer has bytes after its JSON value"); return NULL; }
    if (!json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        fail(err, cap, "the answer is not a JSON object");
        return NULL;
    }
    return o;
}

/* A decimal int64 in a string, whole. */
static int parse_i64_text(const char *s, int64_t *out) {
    if (!s || !*s) return -1;
    const char *p = s;
    if (*p == '-') p++;
    if (!*p) return -1;
    for (const char *q = p; *q; q++) if (*q < '0' || *q > '9') return -1;
    errno = 0;
    char *end = NULL;
    long long v = strtoll(s, &end, 10);
    if (errno || !end || *end) return -1;
    *out = (int64_t)v;
    return 0;
}

int etcd_int64(json_object *o, const char *key, int64_t dflt, int64_t *out, char *err, size_t cap) {
    json_object *v = NULL;
    if (!o || !json_object_object_get_ex(o, key, &v) || v == NULL) { *out = dflt; return 0; }
    switch (json_object_get_type(v)) {
    case json_type_string:
        if (parse_i64_text(json_object_get_string(v), out) != 0)
            return fail(err, cap, "\"%s\" is \"%.40s\", not a 64-bit integer", key, json_object_get_string(v));
        return 0;
    case json_type_int: {
        errno = 0;
        int64_t x = json_object_get_int64(v);
        if (errno) return fail(err, cap, "\"%s\" is out of range", key);
        *out = x;
        return 0;
    }
    default:
        return fail(err, cap, "\"%s\" is a %s, not an integer", key, json_type_to_name(json_object_get_type(v)));
    }
}

int etcd_header(json_object *o, uint64_t *cluster_id, int64_t *revision, char *err, size_t cap) {
    json_object *h = NULL;
    if (!json_object_object_get_ex(o, "header", &h) || !json_object_is_type(h, json_type_object))
        return fail(err, cap, "the answer has no \"header\" object");
    json_object *c = NULL;
    if (!json_object_object_get_ex(h, "cluster_id", &c))
        return fail(err, cap, "the answer's header has no \"cluster_id\"");
    int64_t cid = 0;
    if (json_object_is_type(c, json_type_string)) {
        const char *s = json_object_get_string(c);
        for (const char *q = s; *q; q++) if (*q < '0' || *q > '9') return fail(err, cap, "the header's \"cluster_id\" \"%.40s\" is not a number", s);
        errno = 0;
        char *end = NULL;
        unsigned long long u = strtoull(s, &end, 10);
        if (!*s || errno || *end) return fail(err, cap, "the header's \"cluster_id\" \"%.40s\" is not a 64-bit number", s);
        *cluster_id = (uint64_t)u;
    } else if (json_object_is_type(c, json_type_int)) {
        cid = json_object_get_int64(c);
        *cluster_id = (uint64_t)cid;
    } else {
        return fail(err, cap, "the header's \"cluster_id\" is a %s", json_type_to_name(json_object_get_type(c)));
    }
    if (*cluster_id == 0) return fail(err, cap, "the header's \"cluster_id\" is 0");
    if (etcd_int64(h, "revision", -1, revision, err, cap) != 0) return -1;
    if (*revision < 0) return fail(err, cap, "the answer's header has no \"revision\"");
    return 0;
}

void etcd_error_text(json_object *o, char *out, size_t cap, int *code) {
    if (cap) out[0] = 0;
    if (code) *code = 0;
    if (!o) return;
    json_object *v = NULL;
    if ((json_object_object_get_ex(o, "message", &v) && json_object_is_type(v, json_type_string)) ||
        (json_object_object_get_ex(o, "error", &v) && json_object_is_type(v, json_type_string))) {
        snprintf(out, cap, "%s", json_object_get_string(v));
    } else if (json_object_object_get_ex(o, "error", &v) && json_object_is_type(v, json_type_object)) {
        json_object *m = NULL;
        if (json_object_object_get_ex(v, "message", &m) && json_object_is_type(m, json_type_string))
            snprintf(out, cap, "%s", json_object_get_string(m));
        json_object *c = NULL;
        if (code && json_object_object_get_ex(v, "grpc_code", &c) && json_object_is_type(c, json_type_int))
            *code = json_object_get_int(c);
    }
    json_object *c = NULL;
    if (code && json_object_object_get_ex(o, "code", &c) && json_object_is_type(c, json_type_int))
        *code = json_object_get_int(c);
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *etcd_b64_encode(const void *data, size_t len) {
    const unsigned char *p = data;
    if (len > (SIZE_MAX / 4) * 3 - 3) return NULL;
    size_t n = 4 * ((len + 2) / 3);
    char *out = malloc(n + 1), *w = out;
    if (!out) return NULL;
    size_t i = 0;
    for (; i + 2 < len; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        *w++ = b64[v >> 18]; *w++ = b64[(v >> 12) & 63]; *w++ = b64[(v >> 6) & 63]; *w++ = b64[v & 63];
    }
    if (i < len) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < len ? (uint32_t)p[i + 1] << 8 : 0);
        *w++ = b64[v >> 18]; *w++ = b64[(v >> 12) & 63];
        *w++ = i + 1 < len ? b64[(v >> 6) & 63] : '=';
        *w++ = '=';
    }
    *w = 0;
    return out;
}

static int b64v(unsigned char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
}

int etcd_b64_decode(const char *text, size_t tlen, unsigned char **out, size_t *olen) {
    while (tlen && text[tlen - 1] == '=') tlen--;
    if (tlen % 4 == 1) return -1;
    unsigned char *o = malloc(tlen / 4 * 3 + 3);
    if (!o) return -1;
    size_t w = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < tlen; i++) {
        int v = b64v((unsigned char)text[i]);
        if (v < 0) { free(o); return -1; }
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) { bits -= 8; o[w++] = (unsigned char)(acc >> bits); acc &= (1u << bits) - 1; }
    }
    *out = o;
    *olen = w;
    return 0;
}

void etcd_kvs_free(etcd_kv *kvs, size_t n) {
    if (!kvs) return;
    for (size_t i = 0; i < n; i++) { free(kvs[i].key); free(kvs[i].value); }
    free(kvs);
}

static int b64_member(json_object *o, const char *key, int required, unsigned char **out, size_t *len, char *err, size_t cap) {
    json_object *v = NULL;
    *out = NULL;
    *len = 0;
    if (!json_object_object_get_ex(o, key, &v) || !v) {
        if (required) return fail(err, cap, "a key-value has no \"%s\"", key);
        *out = malloc(1);
        return *out ? 0 : fail(err, cap, "out of memory");
    }
    if (!json_object_is_type(v, json_type_string))
        return fail(err, cap, "a key-value's \"%s\" is a %s, not base64 text", key, json_type_to_name(json_object_get_type(v)));
    const char *s = json_object_get_string(v);
    if (etcd_b64_decode(s, (size_t)json_object_get_string_len(v), out, len) != 0)
        return fail(err, cap, "a key-value's \"%s\" is not base64", key);
    return 0;
}

static int parse_kvs_array(json_object *o, etcd_kv **kvs, size_t *n, char *err, size_t cap) {
    *kvs = NULL;
    *n = 0;
    json_object *a = NULL;
    if (!json_object_object_get_ex(o, "kvs", &a) || !a) return 0;
    if (!json_object_is_type(a, json_type_array)) return fail(err, cap, "\"kvs\" is a %s, not an array", json_type_to_name(json_object_get_type(a)));
    size_t cnt = json_object_array_length(a);
    if (cnt == 0) return 0;
    etcd_kv *r = calloc(cnt, sizeof *r);
    if (!r) return fail(err, cap, "out of memory");
    for (size_t i = 0; i < cnt; i++) {
        json_object *kv = json_object_array_get_idx(a, i);
        if (!kv || !json_object_is_type(kv, json_type_object)) { etcd_kvs_free(r, i); return fail(err, cap, "\"kvs\"[%zu] is not an object", i); }
        if (b64_member(kv, "key", 1, &r[i].key, &r[i].key_len, err, cap) != 0 ||
            b64_member(kv, "value", 0, &r[i].value, &r[i].value_len, err, cap) != 0 ||
            etcd_int64(kv, "create_revision", 0, &r[i].create_revision, err, cap) != 0 ||
            etcd_int64(kv, "mod_revision", 0, &r[i].mod_revision, err, cap) != 0 ||
            etcd_int64(kv, "lease", 0, &r[i].lease, err, cap) != 0) {
            etcd_kvs_free(r, i + 1);
            return -1;
        }
        if (r[i].create_revision < 0 || r[i].mod_revision < 0) { etcd_kvs_free(r, i + 1); return fail(err, cap, "\"kvs\"[%zu] has a negative revision", i); }
    }
    *kvs = r;
    *n = cnt;
    return 0;
}

int etcd_range_kvs(json_object *o, etcd_kv **kvs, size_t *n, int64_t *count, char *err, size_t cap) {
    if (parse_kvs_array(o, kvs, n, err, cap) != 0) return -1;
    if (etcd_int64(o, "count", (int64_t)*n, count, err, cap) != 0) { etcd_kvs_free(*kvs, *n); *kvs = NULL; *n = 0; return -1; }
    if (*count < 0) { etcd_kvs_free(*kvs, *n); *kvs = NULL; *n = 0; return fail(err, cap, "\"count\" is negative"); }
    return 0;
}

int etcd_txn(json_object *o, int *succeeded, etcd_kv **kvs, size_t *n, char *err, size_t cap) {
    *succeeded = 0;
    *kvs = NULL;
    *n = 0;
    json_object *s = NULL;
    if (json_object_object_get_ex(o, "succeeded", &s) && s) {
        if (!json_object_is_type(s, json_type_boolean)) return fail(err, cap, "\"succeeded\" is a %s, not a boolean", json_type_to_name(json_object_get_type(s)));
        *succeeded = json_object_get_boolean(s);
    }
    json_object *rs = NULL;
    if (!json_object_object_get_ex(o, "responses", &rs) || !rs) return 0;
    if (!json_object_is_type(rs, json_type_array)) return fail(err, cap, "\"responses\" is not an array");
    size_t cnt = json_object_array_length(rs);
    for (size_t i = 0; i < cnt; i++) {
        json_object *r = json_object_array_get_idx(rs, i), *rr = NULL;
        if (!r || !json_object_is_type(r, json_type_object)) return fail(err, cap, "\"responses\"[%zu] is not an object", i);
        if (json_object_object_get_ex(r, "response_range", &rr) && rr) {
            if (!json_object_is_type(rr, json_type_object)) return fail(err, cap, "\"response_range\" is not an object");
            return parse_kvs_array(rr, kvs, n, err, cap);
        }
    }
    return 0;
}

int etcd_is_digest(const char *s) {
    if (!s) return 0;
    for (int i = 0; i < 64; i++) if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
    return s[64] == 0;
}

static int str_member(json_object *o, const char *key, char *out, size_t outcap, const char *what, char *err, size_t cap) {
    json_object *v = NULL;
    if (!json_object_object_get_ex(o, key, &v) || !v || !json_object_is_type(v, json_type_string))
        return fail(err, cap, "the %s has no text \"%s\"", what, key);
    if ((size_t)json_object_get_string_len(v) >= outcap) return fail(err, cap, "the %s's \"%s\" is too long", what, key);
    memcpy(out, json_object_get_string(v), (size_t)json_object_get_string_len(v) + 1);
    if (strlen(out) != (size_t)json_object_get_string_len(v)) return fail(err, cap, "the %s's \"%s\" holds a NUL", what, key);
    return 0;
}

void etcd_head_free(etcd_head *h) {
    if (h) { free(h->chunks); h->chunks = NULL; h->nchunks = 0; }
}

int etcd_head_parse(const unsigned char *text, size_t len, etcd_head *h, char *err, size_t cap) {
    memset(h, 0, sizeof *h);
    char e2[ETCD_ERR_CAP];
    json_object *o = etcd_parse_object((const char *)text, len, e2, sizeof e2);
    if (!o) return fail(err, cap, "a slot's head is unreadable: %s", e2);
    int rc = -1;
    int64_t size = 0;
    json_object *a = NULL;
    if (str_member(o, "digest", h->digest, sizeof h->digest, "head", err, cap) != 0) goto out;
    if (!etcd_is_digest(h->digest)) { fail(err, cap, "the head's \"digest\" is not a SHA-256 in hex"); goto out; }
    if (etcd_int64(o, "size", -1, &size, err, cap) != 0) goto out;
    if (size < 0) { fail(err, cap, "the head has no \"size\""); goto out; }
    h->size = (uint64_t)size;
    if (str_member(o, "machine", h->machine, sizeof h->machine, "head", err, cap) != 0) goto out;
    if (str_member(o, "host", h->host, sizeof h->host, "head", err, cap) != 0) goto out;
    if (etcd_int64(o, "fence", 0, &h->fence, err, cap) != 0) goto out;
    if (etcd_int64(o, "time_ms", 0, &h->time_ms, err, cap) != 0) goto out;
    if (!json_object_object_get_ex(o, "chunks", &a) || !a || !json_object_is_type(a, json_type_array)) { fail(err, cap, "the head has no \"chunks\" array"); goto out; }
    size_t n = json_object_array_length(a);
    /* At most 1 MiB per chunk: the count follows from the size. */
    if (n != (size_t)((h->size + (1u << 20) - 1) >> 20)) { fail(err, cap, "the head lists %zu chunks for %" PRIu64 " bytes", n, h->size); goto out; }
    if (n) {
        h->chunks = calloc(n, sizeof *h->chunks);
        if (!h->chunks) { fail(err, cap, "out of memory"); goto out; }
    }
    for (size_t i = 0; i < n; i++) {
        json_object *c = json_object_array_get_idx(a, i);
        if (!c || !json_object_is_type(c, json_type_string) || json_object_get_string_len(c) != 64 || !etcd_is_digest(json_object_get_string(c))) {
            fail(err, cap, "the head's chunk %zu is not a SHA-256 in hex", i);
            goto out;
        }
        memcpy(h->chunks[i], json_object_get_string(c), 65);
    }
    h->nchunks = n;
    rc = 0;
out:
    if (rc != 0) etcd_head_free(h);
    json_object_put(o);
    return rc;
}

int etcd_owner_parse(const unsigned char *text, size_t len, etcd_owner *w, char *err, size_t cap) {
    memset(w, 0, sizeof *w);
    char e2[ETCD_ERR_CAP];
    json_object *o = etcd_parse_object((const char *)text, len, e2, sizeof e2);
    if (!o) return fail(err, cap, "the owner key is unreadable: %s", e2);
    int rc = -1;
    if (str_member(o, "machine", w->machine, sizeof w->machine, "owner key", err, cap) != 0) goto out;
    if (str_member(o, "host", w->host, sizeof w->host, "owner key", err, cap) != 0) goto out;
    if (etcd_int64(o, "pid", 0, &w->pid, err, cap) != 0) goto out;
    if (etcd_int64(o, "start_ms", 0, &w->start_ms, err, cap) != 0) goto out;
    if (w->pid < 0 || w->pid > INT32_MAX) { fail(err, cap, "the owner key's \"pid\" is out of range"); goto out; }
    rc = 0;
out:
    json_object_put(o);
    return rc;
}
