/* etcd_store.c: restoration-etcd, a version-2 store over etcd v3's JSON
 * gateway (restoration_etcd.h; docs/ROAMING.md gives the key layout).
 *
 * Threads: the engine's (every table function, one at a time) and the
 * store's own worker, which keeps the owner's lease alive, watches for a
 * handoff request (by polling) and publishes what the engine wrote to the
 * local copy. `mu` guards the shared state below; the network is never used
 * with `mu` held. Each thread has its own curl handle. */
#define _GNU_SOURCE
#include "restoration_etcd.h"
#include "etcd_parse.h"

#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Sentences are cut at their buffer's size on purpose. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

#define CHUNK_MAX ((size_t)1 << 20)
#define MAX_ENDPOINTS 16

/* ---------------------------------------------------------------- errors */

static _Thread_local char last_error[1024];

const char *rst_etcd_last_error(void) { return last_error; }

static rst_status set_error(rst_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    rst_store_set_error(last_error);
    return st;
}

static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static uint64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ----------------------------------------------------------------- state */

typedef struct dirty_entry { rst_slot slot; uint64_t index; uint64_t seq; } dirty_entry;

typedef struct describe_text { struct describe_text *next; char text[]; } describe_text;

typedef struct etcd_store {
    /* configuration (immutable after create) */
    char    *endpoints[MAX_ENDPOINTS];
    size_t   n_endpoints;
    char    *prefix, *user, *password, *ca_file, *cert_file, *key_file, *cache_dir;
    uint32_t ttl_s, timeout_ms, handoff_wait_ms;
    size_t   max_bytes;
    char     machine[128], host[256];
    long     pid;
    uint64_t start_ms;
    const rst_store_ops *lops;   /* the local copy: a file store in cache_dir */
    void    *lctx;
    char    *sync_path;          /* cache_dir/sync: the archive's base revision and whether it is pending */

    /* the network (net_mu: token, endpoint, cluster id, describe) */
    pthread_mutex_t net_mu;
    size_t   ep;                 /* the endpoint that answered last */
    char    *token;
    uint64_t cluster_id;
    _Atomic(const char *) describe;
    describe_text *describes;
    CURL    *curl_caller, *curl_worker;

    /* ownership and publishing (mu) */
    pthread_mutex_t mu;
    pthread_cond_t  cv;
    int      acquired;           /* acquire returned RST_OK */
    int      owning;             /* the owner key is ours in the cluster now */
    int      pending_acquire;    /* acquired while offline: the worker acquires for real */
    int      fenced;
    char     fence_msg[768];
    int64_t  lease;
    int64_t  owner_rev;          /* the owner key's create_revision we made */
    int64_t  archive_base;       /* mod_revision of the archive head the local copy came from (0: none) */
    int      archive_pending;    /* the local archive is not published */
    dirty_entry *dirty;
    size_t   ndirty, capdirty;
    uint64_t wseq, pseq;         /* writes made / published (every write up to pseq is out) */
    rst_status pub_status;       /* a publish's failure not yet told */
    char     pub_msg[1024];
    int      offline;
    int      handoff_raised;
    int      stop;
    struct gc_seen *gc;          /* the collector's last pass (worker only) */
    size_t   ngc;
    uint32_t gc_interval_ms;
    int      worker_started;
    pthread_t worker;
    rst_store_host engine_host;
    int      attached;
} etcd_store;

static void notify(etcd_store *s, rst_store_event ev) {
    /* host is set once by attach, before acquire starts the worker */
    if (s->attached && s->engine_host.notify) s->engine_host.notify(s->engine_host.engine, ev);
}

/* ------------------------------------------------------------ identity */

static int valid_name(const char *v) {
    if (!v || !*v) return 0;
    for (const char *p = v; *p; p++) if (*p == '/' || *p == '\n') return 0;
    return 1;
}

static void read_first_line(const char *path, char *out, size_t cap) {
    out[0] = 0;
    FILE *f = fopen(path, "re");
    if (!f) return;
    if (fgets(out, (int)cap, f)) out[strcspn(out, "\r\n")] = 0;
    fclose(f);
}

static void machine_identity(etcd_store *s) {
    const char *m = secure_getenv("RESTORATION_MACHINE_ID");
    if (valid_name(m) && strlen(m) < sizeof s->machine) snprintf(s->machine, sizeof s->machine, "%s", m);
    else {
        read_first_line("/etc/machine-id", s->machine, sizeof s->machine);
        if (!s->machine[0]) read_first_line("/var/lib/dbus/machine-id", s->machine, sizeof s->machine);
        if (!s->machine[0]) read_first_line("/proc/sys/kernel/random/boot_id", s->machine, sizeof s->machine);
        if (!s->machine[0]) snprintf(s->machine, sizeof s->machine, "unknown");
    }
    const char *h = secure_getenv("RESTORATION_HOSTNAME");
    if (valid_name(h) && strlen(h) < sizeof s->host) snprintf(s->host, sizeof s->host, "%s", h);
    else if (gethostname(s->host, sizeof s->host) != 0 || !s->host[0]) snprintf(s->host, sizeof s->host, "unknown");
    s->host[sizeof s->host - 1] = 0;
    s->pid = (long)getpid();
    s->start_ms = wall_ms();
}

/* ---------------------------------------------------------------- keys */

static const char *slot_name(rst_slot slot) {
    switch (slot) {
    case RST_SLOT_ARCHIVE: return "archive";
    case RST_SLOT_GENERATION: return "generation";
    case RST_SLOT_INVALID: return "invalid";
    case RST_SLOT_MARKER: return "marker";
    case RST_SLOT_QUARANTINE: return "quarantine";
    case RST_SLOT_SESSION: return "session";
    case RST_SLOT_CRASHED: return "crashed";
    case RST_SLOT_CONFLICT: return "conflict";
    }
    return NULL;
}

static int slot_is_archive_like(rst_slot s) {
    return s == RST_SLOT_ARCHIVE || s == RST_SLOT_GENERATION || s == RST_SLOT_CONFLICT ||
           s == RST_SLOT_INVALID || s == RST_SLOT_CRASHED;
}

static void head_key(const etcd_store *s, rst_slot slot, uint64_t index, char *out, size_t cap) {
    snprintf(out, cap, "%sslots/%s/%020" PRIu64, s->prefix, slot_name(slot), index);
}

static void slot_dir_key(const etcd_store *s, rst_slot slot, char *out, size_t cap) {
    snprintf(out, cap, "%sslots/%s/", s->prefix, slot_name(slot));
}

static void chunk_key(const etcd_store *s, const char *digest, char *out, size_t cap) {
    snprintf(out, cap, "%schunks/%s", s->prefix, digest);
}

static void plain_key(const etcd_store *s, const char *name, char *out, size_t cap) {
    snprintf(out, cap, "%s%s", s->prefix, name);
}

/* The range end that covers every key starting with `p`. */
static char *prefix_end(const char *p) {
    size_t n = strlen(p);
    char *e = malloc(n + 1);
    if (!e) return NULL;
    memcpy(e, p, n + 1);
    while (n > 0) {
        if ((unsigned char)e[n - 1] < 0xff) { e[n - 1]++; e[n] = 0; return e; }
        n--;
    }
    e[0] = 0;
    return e;
}

/* ----------------------------------------------------------------- JSON */

static void add_b64(json_object *o, const char *name, const void *data, size_t len) {
    char *b = etcd_b64_encode(data, len);
    json_object_object_add(o, name, json_object_new_string(b ? b : ""));
    free(b);
}

static void add_i64(json_object *o, const char *name, int64_t v) {
    char t[32];
    snprintf(t, sizeof t, "%" PRId64, v);
    json_object_object_add(o, name, json_object_new_string(t));
}

static void sha256_hex(const void *data, size_t len, char out[65]) {
    unsigned char md[32];
    unsigned int mdlen = 0;
    EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL);
    for (int i = 0; i < 32; i++) sprintf(out + 2 * i, "%02x", md[i]);
    out[64] = 0;
}

/* -------------------------------------------------------------- network */

typedef struct buf { char *p; size_t n, cap; } buf;

static size_t on_body(char *d, size_t sz, size_t nm, void *u) {
    buf *b = u;
    size_t n = sz * nm;
    if (b->n + n + 1 > b->cap) {
        size_t c = b->cap ? b->cap : 4096;
        while (c < b->n + n + 1) c *= 2;
        if (c > ((size_t)64 << 20)) return 0; /* an answer over 64 MiB is not etcd's */
        char *q = realloc(b->p, c);
        if (!q) return 0;
        b->p = q;
        b->cap = c;
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
    b->p[b->n] = 0;
    return n;
}

/* What a call's failure was. */
typedef enum { CALL_OK = 0, CALL_NET, CALL_UNKNOWN, CALL_FAIL } call_kind;

typedef struct call_result {
    call_kind kind;
    rst_status status;   /* for CALL_FAIL; RST_ERR_UNAVAILABLE for NET/UNKNOWN */
    char msg[1024];
    json_object *body;   /* CALL_OK: the answer */
    int64_t revision;
} call_result;

static void call_result_free(call_result *r) {
    if (r->body) json_object_put(r->body);
    r->body = NULL;
}

static void update_describe(etcd_store *s) {
    /* net_mu held */
    char t[1024];
    if (s->cluster_id) snprintf(t, sizeof t, "etcd %s at %s (cluster %" PRIx64 ")", s->prefix, s->endpoints[s->ep], s->cluster_id);
    else snprintf(t, sizeof t, "etcd %s at %s", s->prefix, s->endpoints[s->ep]);
    const char *cur = atomic_load(&s->describe);
    if (cur && strcmp(cur, t) == 0) return;
    size_t n = strlen(t);
    describe_text *d = malloc(sizeof *d + n + 1);
    if (!d) return;
    memcpy(d->text, t, n + 1);
    d->next = s->describes;
    s->describes = d;
    atomic_store(&s->describe, d->text);
}

static CURL *prepare(etcd_store *s, CURL *c) {
    curl_easy_reset(c);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)s->timeout_ms);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)s->timeout_ms);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    if (s->ca_file) curl_easy_setopt(c, CURLOPT_CAINFO, s->ca_file);
    if (s->cert_file) curl_easy_setopt(c, CURLOPT_SSLCERT, s->cert_file);
    if (s->key_file) curl_easy_setopt(c, CURLOPT_SSLKEY, s->key_file);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
    return c;
}

/* One POST to one endpoint. 0: an HTTP answer in `b` with `http`; else the
 * curl error and whether the request may have reached the server. */
static CURLcode post_once(etcd_store *s, CURL *c, const char *url, const char *body, const char *token, buf *b, long *http) {
    prepare(s, c);
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    char auth[1200];
    if (token) {
        snprintf(auth, sizeof auth, "Authorization: %s", token);
        h = curl_slist_append(h, auth);
    }
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, b);
    CURLcode cc = curl_easy_perform(c);
    *http = 0;
    if (cc == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, http);
    curl_slist_free_all(h);
    return cc;
}

static int connect_failure(CURLcode cc) {
    return cc == CURLE_COULDNT_CONNECT || cc == CURLE_COULDNT_RESOLVE_HOST || cc == CURLE_COULDNT_RESOLVE_PROXY;
}

static int contains(const char *h, const char *n) { return h && strstr(h, n) != NULL; }

static int authenticate(etcd_store *s, CURL *c, size_t ep, call_result *r);

/* POSTs `req` to `path` at the endpoints in order, starting with the one
 * that answered last; see call_result. `idempotent`: a request whose answer
 * was lost may be sent again to the next endpoint (else CALL_UNKNOWN). */
static void call(etcd_store *s, CURL *c, const char *path, json_object *req, int idempotent, call_result *r) {
    memset(r, 0, sizeof *r);
    const char *body = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
    pthread_mutex_lock(&s->net_mu);
    size_t start = s->ep;
    pthread_mutex_unlock(&s->net_mu);
    char tried[1024] = "";
    int reauthed = 0;
    for (size_t k = 0; k < s->n_endpoints; k++) {
        size_t ep = (start + k) % s->n_endpoints;
        char url[1200];
        snprintf(url, sizeof url, "%s%s", s->endpoints[ep], path);
    again:;
        char *token = NULL;
        if (s->user) {
            pthread_mutex_lock(&s->net_mu);
            token = s->token ? strdup(s->token) : NULL;
            pthread_mutex_unlock(&s->net_mu);
            if (!token && strcmp(path, "/v3/auth/authenticate") != 0) {
                if (authenticate(s, c, ep, r) != 0) {
                    if (r->kind == CALL_NET) { size_t tl = strlen(tried); snprintf(tried + tl, sizeof tried - tl, "%s%s", tl ? ", " : "", s->endpoints[ep]); continue; }
                    return;
                }
                pthread_mutex_lock(&s->net_mu);
                token = s->token ? strdup(s->token) : NULL;
                pthread_mutex_unlock(&s->net_mu);
            }
        }
        buf b = {0};
        long http = 0;
        CURLcode cc = post_once(s, c, url, body, token, &b, &http);
        free(token);
        if (cc != CURLE_OK) {
            free(b.p);
            size_t tl = strlen(tried);
            snprintf(tried + tl, sizeof tried - tl, "%s%s (%s)", tl ? ", " : "", s->endpoints[ep], curl_easy_strerror(cc));
            if (cc == CURLE_SSL_CACERT || cc == CURLE_PEER_FAILED_VERIFICATION || cc == CURLE_SSL_CERTPROBLEM ||
                cc == CURLE_SSL_CONNECT_ERROR) {
                r->kind = CALL_FAIL;
                r->status = RST_ERR_REJECTED;
                snprintf(r->msg, sizeof r->msg, "etcd at %s: TLS failed: %s (the certificate is checked against %s)",
                         s->endpoints[ep], curl_easy_strerror(cc), s->ca_file ? s->ca_file : "the system's CAs");
                return;
            }
            if (!idempotent && !connect_failure(cc)) {
                r->kind = CALL_UNKNOWN;
                r->status = RST_ERR_UNAVAILABLE;
                snprintf(r->msg, sizeof r->msg, "etcd at %s did not answer (%s); the outcome is unknown", s->endpoints[ep], curl_easy_strerror(cc));
                return;
            }
            continue;
        }
        char perr[ETCD_ERR_CAP];
        json_object *o = etcd_parse_object(b.p ? b.p : "", b.n, perr, sizeof perr);
        free(b.p);
        if (!o) {
            r->kind = CALL_FAIL;
            r->status = RST_ERR_IO;
            snprintf(r->msg, sizeof r->msg, "etcd at %s answered %s with HTTP %ld: %s", s->endpoints[ep], path, http, perr);
            return;
        }
        if (http != 200) {
            char et[600];
            int code = 0;
            etcd_error_text(o, et, sizeof et, &code);
            json_object_put(o);
            if (contains(et, "invalid auth token") && s->user && !reauthed) {
                reauthed = 1;
                pthread_mutex_lock(&s->net_mu);
                free(s->token);
                s->token = NULL;
                pthread_mutex_unlock(&s->net_mu);
                goto again;
            }
            if (code == 14 || contains(et, "no leader") || contains(et, "timed out") || contains(et, "unavailable") ||
                contains(et, "leader changed") || contains(et, "not capable")) {
                size_t tl = strlen(tried);
                snprintf(tried + tl, sizeof tried - tl, "%s%s (%s)", tl ? ", " : "", s->endpoints[ep], et);
                if (!idempotent && contains(et, "timed out")) {
                    r->kind = CALL_UNKNOWN;
                    r->status = RST_ERR_UNAVAILABLE;
                    snprintf(r->msg, sizeof r->msg, "etcd at %s: %s; the outcome is unknown", s->endpoints[ep], et);
                    return;
                }
                continue;
            }
            r->kind = CALL_FAIL;
            if (contains(et, "database space exceeded") || contains(et, "request is too large") || contains(et, "too many operations")) {
                r->status = RST_ERR_LIMIT;
                snprintf(r->msg, sizeof r->msg, "etcd at %s refused to store under '%s': %s", s->endpoints[ep], s->prefix, et);
            } else if (contains(et, "permission denied") || contains(et, "user name is empty") || contains(et, "authentication failed") ||
                       contains(et, "invalid auth token") || contains(et, "user name not found") || code == 7 || code == 16) {
                r->status = RST_ERR_REJECTED;
                snprintf(r->msg, sizeof r->msg, "etcd at %s refused user '%s' for prefix '%s': %s", s->endpoints[ep],
                         s->user ? s->user : "(none)", s->prefix, et);
            } else {
                r->status = RST_ERR_IO;
                snprintf(r->msg, sizeof r->msg, "etcd at %s answered %s with HTTP %ld: %s", s->endpoints[ep], path, http, et[0] ? et : "(no message)");
            }
            return;
        }
        uint64_t cid = 0;
        /* a streamed answer (lease keep-alive) carries its header in "result" */
        json_object *hdr_of = o, *res = NULL;
        if (!json_object_object_get_ex(o, "header", NULL) && json_object_object_get_ex(o, "result", &res) &&
            json_object_is_type(res, json_type_object))
            hdr_of = res;
        if (etcd_header(hdr_of, &cid, &r->revision, perr, sizeof perr) != 0) {
            json_object_put(o);
            r->kind = CALL_FAIL;
            r->status = RST_ERR_IO;
            snprintf(r->msg, sizeof r->msg, "etcd at %s answered %s: %s", s->endpoints[ep], path, perr);
            return;
        }
        pthread_mutex_lock(&s->net_mu);
        if (s->cluster_id && s->cluster_id != cid) {
            uint64_t was = s->cluster_id;
            pthread_mutex_unlock(&s->net_mu);
            json_object_put(o);
            r->kind = CALL_FAIL;
            r->status = RST_ERR_IO;
            snprintf(r->msg, sizeof r->msg, "etcd at %s belongs to cluster %" PRIx64 ", not cluster %" PRIx64 " this store used so far",
                     s->endpoints[ep], cid, was);
            return;
        }
        s->cluster_id = cid;
        s->ep = ep;
        update_describe(s);
        pthread_mutex_unlock(&s->net_mu);
        r->kind = CALL_OK;
        r->body = o;
        return;
    }
    r->kind = CALL_NET;
    r->status = RST_ERR_UNAVAILABLE;
    snprintf(r->msg, sizeof r->msg, "no etcd endpoint answered for '%s': %s", s->prefix, tried);
}

static int authenticate(etcd_store *s, CURL *c, size_t ep, call_result *r) {
    json_object *req = json_object_new_object();
    json_object_object_add(req, "name", json_object_new_string(s->user));
    json_object_object_add(req, "password", json_object_new_string(s->password ? s->password : ""));
    char url[1200];
    snprintf(url, sizeof url, "%s/v3/auth/authenticate", s->endpoints[ep]);
    buf b = {0};
    long http = 0;
    CURLcode cc = post_once(s, c, url, json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN), NULL, &b, &http);
    json_object_put(req);
    memset(r, 0, sizeof *r);
    if (cc != CURLE_OK) {
        free(b.p);
        r->kind = CALL_NET;
        r->status = RST_ERR_UNAVAILABLE;
        snprintf(r->msg, sizeof r->msg, "etcd at %s: %s", s->endpoints[ep], curl_easy_strerror(cc));
        return -1;
    }
    char perr[ETCD_ERR_CAP];
    json_object *o = etcd_parse_object(b.p ? b.p : "", b.n, perr, sizeof perr);
    free(b.p);
    if (!o) {
        r->kind = CALL_FAIL;
        r->status = RST_ERR_IO;
        snprintf(r->msg, sizeof r->msg, "etcd at %s answered /v3/auth/authenticate: %s", s->endpoints[ep], perr);
        return -1;
    }
    json_object *t = NULL;
    if (http != 200 || !json_object_object_get_ex(o, "token", &t) || !json_object_is_type(t, json_type_string) ||
        json_object_get_string_len(t) == 0 || json_object_get_string_len(t) > 1000) {
        char et[600];
        int code = 0;
        etcd_error_text(o, et, sizeof et, &code);
        json_object_put(o);
        r->kind = CALL_FAIL;
        if (http == 200) {
            r->status = RST_ERR_IO;
            snprintf(r->msg, sizeof r->msg, "etcd at %s answered /v3/auth/authenticate without a token", s->endpoints[ep]);
        } else {
            r->status = RST_ERR_REJECTED;
            snprintf(r->msg, sizeof r->msg, "etcd at %s refused user '%s' for prefix '%s': %s", s->endpoints[ep], s->user, s->prefix,
                     et[0] ? et : "authentication failed");
        }
        return -1;
    }
    pthread_mutex_lock(&s->net_mu);
    free(s->token);
    s->token = strdup(json_object_get_string(t));
    pthread_mutex_unlock(&s->net_mu);
    json_object_put(o);
    return 0;
}

/* ------------------------------------------------------ etcd operations */

static json_object *range_req(const char *key, const char *range_end, int keys_only, int count_only) {
    json_object *q = json_object_new_object();
    add_b64(q, "key", key, strlen(key));
    if (range_end) add_b64(q, "range_end", range_end, strlen(range_end));
    if (keys_only) json_object_object_add(q, "keys_only", json_object_new_boolean(1));
    if (count_only) json_object_object_add(q, "count_only", json_object_new_boolean(1));
    return q;
}

/* One key's kv (or none: *found 0). */
static void get_key(etcd_store *s, CURL *c, const char *key, etcd_kv **kv, int *found, call_result *r) {
    *kv = NULL;
    *found = 0;
    json_object *q = range_req(key, NULL, 0, 0);
    call(s, c, "/v3/kv/range", q, 1, r);
    json_object_put(q);
    if (r->kind != CALL_OK) return;
    etcd_kv *kvs = NULL;
    size_t n = 0;
    int64_t count = 0;
    char perr[ETCD_ERR_CAP];
    if (etcd_range_kvs(r->body, &kvs, &n, &count, perr, sizeof perr) != 0) {
        r->kind = CALL_FAIL;
        r->status = RST_ERR_IO;
        snprintf(r->msg, sizeof r->msg, "etcd's answer for '%s': %s", key, perr);
        return;
    }
    if (n > 1) { etcd_kvs_free(kvs, n); r->kind = CALL_FAIL; r->status = RST_ERR_IO; snprintf(r->msg, sizeof r->msg, "etcd answered %zu keys for '%s'", n, key); return; }
    if (n == 1 && (kvs[0].key_len != strlen(key) || memcmp(kvs[0].key, key, kvs[0].key_len) != 0)) {
        etcd_kvs_free(kvs, n);
        r->kind = CALL_FAIL;
        r->status = RST_ERR_IO;
        snprintf(r->msg, sizeof r->msg, "etcd answered another key for '%s'", key);
        return;
    }
    if (n == 1) { *kv = kvs; *found = 1; }
}

static void put_plain(etcd_store *s, CURL *c, const char *key, const void *v, size_t n, int64_t lease, call_result *r) {
    json_object *q = json_object_new_object();
    add_b64(q, "key", key, strlen(key));
    add_b64(q, "value", v, n);
    if (lease) add_i64(q, "lease", lease);
    call(s, c, "/v3/kv/put", q, 1, r);
    json_object_put(q);
}

static void delete_key(etcd_store *s, CURL *c, const char *key, call_result *r) {
    json_object *q = json_object_new_object();
    add_b64(q, "key", key, strlen(key));
    call(s, c, "/v3/kv/deleterange", q, 1, r);
    json_object_put(q);
}

static void revoke_lease(etcd_store *s, CURL *c, int64_t lease) {
    if (!lease) return;
    json_object *q = json_object_new_object();
    add_i64(q, "ID", lease);
    call_result r;
    call(s, c, "/v3/lease/revoke", q, 1, &r);
    call_result_free(&r);
    json_object_put(q);
}

/* A compare on `key`'s create or mod revision. */
static json_object *cmp_rev(const char *key, const char *target, int64_t v) {
    json_object *cm = json_object_new_object();
    json_object_object_add(cm, "result", json_object_new_string("EQUAL"));
    json_object_object_add(cm, "target", json_object_new_string(target));
    add_b64(cm, "key", key, strlen(key));
    add_i64(cm, strcmp(target, "CREATE") == 0 ? "create_revision" : "mod_revision", v);
    return cm;
}

static json_object *op_put(const char *key, const void *v, size_t n, int64_t lease) {
    json_object *p = json_object_new_object();
    add_b64(p, "key", key, strlen(key));
    add_b64(p, "value", v, n);
    if (lease) add_i64(p, "lease", lease);
    json_object *op = json_object_new_object();
    json_object_object_add(op, "request_put", p);
    return op;
}

static json_object *op_delete(const char *key) {
    json_object *p = json_object_new_object();
    add_b64(p, "key", key, strlen(key));
    json_object *op = json_object_new_object();
    json_object_object_add(op, "request_delete_range", p);
    return op;
}

static json_object *op_range(const char *key) {
    json_object *op = json_object_new_object();
    json_object_object_add(op, "request_range", range_req(key, NULL, 0, 0));
    return op;
}

/* Runs a txn; r->body's "succeeded" read into *ok, and the first range's
 * kvs (the owner key when the failure branch reads it). */
static void txn(etcd_store *s, CURL *c, json_object *cmps, json_object *succ, json_object *fail, int idempotent,
                int *ok, etcd_kv **kvs, size_t *n, call_result *r) {
    json_object *q = json_object_new_object();
    json_object_object_add(q, "compare", cmps);
    json_object_object_add(q, "success", succ);
    json_object_object_add(q, "failure", fail);
    call(s, c, "/v3/kv/txn", q, idempotent, r);
    json_object_put(q);
    *ok = 0;
    if (kvs) { *kvs = NULL; *n = 0; }
    if (r->kind != CALL_OK) return;
    char perr[ETCD_ERR_CAP];
    etcd_kv *k = NULL;
    size_t kn = 0;
    if (etcd_txn(r->body, ok, &k, &kn, perr, sizeof perr) != 0) {
        r->kind = CALL_FAIL;
        r->status = RST_ERR_IO;
        snprintf(r->msg, sizeof r->msg, "etcd's answer to a transaction under '%s': %s", s->prefix, perr);
        return;
    }
    if (kvs) { *kvs = k; *n = kn; } else etcd_kvs_free(k, kn);
}

/* The owner named for sentences: "<host> (machine <id>), pid N, since T". */
static void describe_owner(const etcd_kv *kv, char *out, size_t cap) {
    etcd_owner w;
    char perr[ETCD_ERR_CAP];
    if (!kv) { snprintf(out, cap, "another instance (the owner key is gone)"); return; }
    if (etcd_owner_parse(kv->value, kv->value_len, &w, perr, sizeof perr) != 0) { snprintf(out, cap, "an unknown owner (%s)", perr); return; }
    time_t t = (time_t)(w.start_ms / 1000);
    struct tm tm;
    char when[64] = "?";
    if (gmtime_r(&t, &tm)) strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(out, cap, "%s (machine %s), pid %" PRId64 ", since %s", w.host, w.machine, w.pid, when);
}

/* ------------------------------------------------------------ local copy */

static void load_sync(etcd_store *s) {
    /* mu held or before the worker runs */
    s->archive_base = 0;
    s->archive_pending = 0;
    FILE *f = fopen(s->sync_path, "re");
    if (!f) return;
    char line[128];
    uint64_t cid = 0;
    while (fgets(line, sizeof line, f)) {
        long long v;
        unsigned long long u;
        if (sscanf(line, "base=%lld", &v) == 1 && v >= 0) s->archive_base = v;
        else if (sscanf(line, "pending=%lld", &v) == 1) s->archive_pending = v != 0;
        else if (sscanf(line, "cluster=%llx", &u) == 1) cid = u;
    }
    fclose(f);
    if (cid) {
        pthread_mutex_lock(&s->net_mu);
        if (!s->cluster_id) s->cluster_id = cid;
        pthread_mutex_unlock(&s->net_mu);
    }
}

static void save_sync(etcd_store *s) {
    /* mu held */
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", s->sync_path);
    FILE *f = fopen(tmp, "we");
    if (!f) return;
    pthread_mutex_lock(&s->net_mu);
    uint64_t cid = s->cluster_id;
    pthread_mutex_unlock(&s->net_mu);
    fprintf(f, "cluster=%" PRIx64 "\nbase=%" PRId64 "\npending=%d\n", cid, s->archive_base, s->archive_pending);
    if (fflush(f) == 0 && fsync(fileno(f)) == 0 && fclose(f) == 0) rename(tmp, s->sync_path);
    else { fclose(f); unlink(tmp); }
}


/* ------------------------------------------------ the local copy's slots */

/* The file store keeps every slot but the conflict copies, which this
 * store keeps itself as cache_dir/conflict-<index> (written as the file
 * store writes: a temporary file, fsync, rename). */
typedef struct lhold { void *inner; unsigned char *mem; } lhold;

static void conflict_path(const etcd_store *s, uint64_t index, char *out, size_t cap) {
    snprintf(out, cap, "%s/conflict-%020" PRIu64, s->cache_dir, index);
}

static rst_status l_read(etcd_store *s, rst_slot slot, uint64_t index, const void **d, size_t *n, void **h) {
    lhold *lh = calloc(1, sizeof *lh);
    if (!lh) return RST_ERR_NOMEM;
    if (slot != RST_SLOT_CONFLICT) {
        rst_status st = s->lops->read(s->lctx, slot, index, d, n, &lh->inner);
        if (st != RST_OK) { free(lh); return st; }
        *h = lh;
        return RST_OK;
    }
    char path[4200];
    conflict_path(s, index, path, sizeof path);
    FILE *f = fopen(path, "rbe");
    if (!f) { free(lh); return errno == ENOENT ? RST_ERR_NOT_FOUND : RST_ERR_IO; }
    size_t cap = 65536, len = 0;
    unsigned char *m = malloc(cap);
    while (m) {
        size_t got = fread(m + len, 1, cap - len, f);
        len += got;
        if (len < cap) break;
        unsigned char *g = realloc(m, cap * 2);
        if (!g) { free(m); m = NULL; break; }
        m = g;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (!m || bad) { free(m); free(lh); return m ? RST_ERR_IO : RST_ERR_NOMEM; }
    lh->mem = m;
    *d = m;
    *n = len;
    *h = lh;
    return RST_OK;
}

static void l_release(etcd_store *s, void *h) {
    lhold *lh = h;
    if (!lh) return;
    if (lh->inner) s->lops->release(s->lctx, lh->inner);
    free(lh->mem);
    free(lh);
}

static rst_status l_write(etcd_store *s, rst_slot slot, uint64_t index, const void *d, size_t n) {
    if (slot != RST_SLOT_CONFLICT) return s->lops->write(s->lctx, slot, index, d, n);
    char path[4200], tmp[4300];
    conflict_path(s, index, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return set_error(RST_ERR_IO, "%s: '%s': %s", atomic_load(&s->describe), tmp, strerror(errno));
    const unsigned char *p = d;
    size_t at = 0;
    while (at < n) {
        ssize_t w = write(fd, p + at, n - at);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        at += (size_t)w;
    }
    int ok = at == n && fsync(fd) == 0;
    close(fd);
    if (!ok || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return set_error(RST_ERR_IO, "%s: '%s': %s", atomic_load(&s->describe), path, strerror(e));
    }
    return RST_OK;
}

static rst_status l_remove(etcd_store *s, rst_slot slot, uint64_t index) {
    if (slot != RST_SLOT_CONFLICT) return s->lops->remove(s->lctx, slot, index);
    char path[4200];
    conflict_path(s, index, path, sizeof path);
    if (unlink(path) != 0 && errno != ENOENT) return RST_ERR_IO;
    return RST_OK;
}

static int cmp_u64(const void *a, const void *b);

static rst_status l_list(etcd_store *s, rst_slot slot, uint64_t *indexes, size_t cap, size_t *count) {
    if (slot != RST_SLOT_CONFLICT) return s->lops->list(s->lctx, slot, indexes, cap, count);
    DIR *dir = opendir(s->cache_dir);
    if (!dir) return RST_ERR_IO;
    uint64_t *all = NULL;
    size_t n = 0, c = 0;
    struct dirent *de;
    while ((de = readdir(dir))) {
        const char *nm = de->d_name;
        if (strncmp(nm, "conflict-", 9) != 0 || strlen(nm) != 29) continue;
        int ok = 1;
        for (int k = 9; k < 29; k++) if (nm[k] < '0' || nm[k] > '9') ok = 0;
        if (!ok) continue;
        if (n == c) { c = c ? c * 2 : 16; uint64_t *g = realloc(all, c * sizeof *g); if (!g) break; all = g; }
        all[n++] = strtoull(nm + 9, NULL, 10);
    }
    closedir(dir);
    if (n) qsort(all, n, sizeof *all, cmp_u64);
    for (size_t i = 0; i < n && i < cap; i++) indexes[i] = all[i];
    *count = n;
    free(all);
    return RST_OK;
}

static rst_status l_move(etcd_store *s, rst_slot from, uint64_t fi, rst_slot to, uint64_t ti) {
    if (from != RST_SLOT_CONFLICT && to != RST_SLOT_CONFLICT) return s->lops->move(s->lctx, from, fi, to, ti);
    const void *d;
    size_t n;
    void *h;
    rst_status st = l_read(s, from, fi, &d, &n, &h);
    if (st != RST_OK) return st;
    st = l_write(s, to, ti, d, n);
    l_release(s, h);
    return st == RST_OK ? l_remove(s, from, fi) : st;
}

/* --------------------------------------------------------------- reading */

typedef struct hold { int local; void *lhold; unsigned char *mem; } hold;

/* Reads a slot from the cluster: RST_OK (bytes in *out), RST_ERR_NOT_FOUND,
 * or the call's failure in r (kind NET: unreachable). */
static rst_status read_remote(etcd_store *s, CURL *c, rst_slot slot, uint64_t index, unsigned char **out, size_t *len,
                              int64_t *mod_rev, call_result *r) {
    char key[1024];
    head_key(s, slot, index, key, sizeof key);
    for (int attempt = 0; attempt < 2; attempt++) {
        etcd_kv *kv = NULL;
        int found = 0;
        get_key(s, c, key, &kv, &found, r);
        if (r->kind != CALL_OK) return r->status;
        call_result_free(r);
        if (!found) return RST_ERR_NOT_FOUND;
        etcd_head h;
        char perr[ETCD_ERR_CAP];
        if (etcd_head_parse(kv->value, kv->value_len, &h, perr, sizeof perr) != 0) {
            etcd_kvs_free(kv, 1);
            r->kind = CALL_FAIL;
            r->status = RST_ERR_IO;
            snprintf(r->msg, sizeof r->msg, "etcd key '%s': %s", key, perr);
            return r->status;
        }
        *mod_rev = kv->mod_revision;
        etcd_kvs_free(kv, 1);
        if (h.size > ((uint64_t)1 << 30)) {
            etcd_head_free(&h);
            r->kind = CALL_FAIL;
            r->status = RST_ERR_LIMIT;
            snprintf(r->msg, sizeof r->msg, "etcd key '%s' names %" PRIu64 " bytes, more than the 1 GiB this store reads", key, h.size);
            return r->status;
        }
        unsigned char *data = malloc(h.size ? h.size : 1);
        if (!data) { etcd_head_free(&h); r->kind = CALL_FAIL; r->status = RST_ERR_NOMEM; snprintf(r->msg, sizeof r->msg, "out of memory reading '%s'", key); return r->status; }
        size_t at = 0;
        int missing = 0;
        for (size_t i = 0; i < h.nchunks; i++) {
            char ck[1024];
            chunk_key(s, h.chunks[i], ck, sizeof ck);
            etcd_kv *cv = NULL;
            int cf = 0;
            get_key(s, c, ck, &cv, &cf, r);
            if (r->kind != CALL_OK) { free(data); etcd_head_free(&h); return r->status; }
            call_result_free(r);
            if (!cf) { missing = 1; break; }
            char d[65];
            sha256_hex(cv->value, cv->value_len, d);
            if (strcmp(d, h.chunks[i]) != 0 || cv->value_len > CHUNK_MAX || at + cv->value_len > h.size) {
                etcd_kvs_free(cv, 1);
                free(data);
                etcd_head_free(&h);
                r->kind = CALL_FAIL;
                r->status = RST_ERR_IO;
                snprintf(r->msg, sizeof r->msg, "etcd key '%s' does not hold the chunk its name says", ck);
                return r->status;
            }
            memcpy(data + at, cv->value, cv->value_len);
            at += cv->value_len;
            etcd_kvs_free(cv, 1);
        }
        if (missing) { free(data); etcd_head_free(&h); continue; } /* replaced meanwhile: read the new head */
        char d[65];
        sha256_hex(data, at, d);
        if (at != h.size || strcmp(d, h.digest) != 0) {
            free(data);
            etcd_head_free(&h);
            r->kind = CALL_FAIL;
            r->status = RST_ERR_IO;
            snprintf(r->msg, sizeof r->msg, "etcd key '%s': its chunks do not make the %" PRIu64 " bytes of its digest", key, h.size);
            return r->status;
        }
        etcd_head_free(&h);
        *out = data;
        *len = at;
        r->kind = CALL_OK;
        return RST_OK;
    }
    r->kind = CALL_FAIL;
    r->status = RST_ERR_IO;
    snprintf(r->msg, sizeof r->msg, "etcd key '%s' names chunks that are missing", key);
    return r->status;
}

static int is_dirty(etcd_store *s, rst_slot slot, uint64_t index) {
    for (size_t i = 0; i < s->ndirty; i++) if (s->dirty[i].slot == slot && s->dirty[i].index == index) return 1;
    return 0;
}

static void set_offline(etcd_store *s, int off) {
    pthread_mutex_lock(&s->mu);
    int changed = s->offline != off;
    s->offline = off;
    pthread_mutex_unlock(&s->mu);
    if (changed) notify(s, off ? RST_STORE_EVENT_OFFLINE : RST_STORE_EVENT_ONLINE);
}

static rst_status st_read(void *ctx, rst_slot slot, uint64_t index, const void **data, size_t *len, void **holdp) {
    etcd_store *s = ctx;
    if (!slot_name(slot)) return set_error(RST_ERR_INVALID, "%s: there is no slot %u", atomic_load(&s->describe), (unsigned)slot);
    pthread_mutex_lock(&s->mu);
    int local_first = is_dirty(s, slot, index) || (slot == RST_SLOT_ARCHIVE && s->archive_pending);
    pthread_mutex_unlock(&s->mu);
    hold *h = calloc(1, sizeof *h);
    if (!h) return set_error(RST_ERR_NOMEM, "%s: out of memory", atomic_load(&s->describe));
    if (!local_first) {
        unsigned char *mem = NULL;
        size_t n = 0;
        int64_t rev = 0;
        call_result r;
        rst_status st = read_remote(s, s->curl_caller, slot, index, &mem, &n, &rev, &r);
        call_result_free(&r);
        if (st == RST_OK || st == RST_ERR_NOT_FOUND) {
            /* keep the local copy as the cluster has it */
            pthread_mutex_lock(&s->mu);
            if (!is_dirty(s, slot, index)) {
                if (st == RST_OK) l_write(s, slot, index, mem, n);
                else l_remove(s, slot, index);
                if (slot == RST_SLOT_ARCHIVE && !s->archive_pending) { s->archive_base = st == RST_OK ? rev : 0; save_sync(s); }
            }
            pthread_mutex_unlock(&s->mu);
            if (st == RST_ERR_NOT_FOUND) { free(h); return st; }
            h->mem = mem;
            *data = mem;
            *len = n;
            *holdp = h;
            return RST_OK;
        }
        if (r.kind != CALL_NET) { free(h); return set_error(st, "%s", r.msg); }
        set_offline(s, 1);
    }
    const void *d = NULL;
    size_t n = 0;
    void *lh = NULL;
    rst_status st = l_read(s, slot, index, &d, &n, &lh);
    if (st == RST_ERR_NOT_FOUND && !local_first) {
        free(h);
        return set_error(RST_ERR_UNAVAILABLE, "%s: the cluster cannot be reached and this machine has no copy of slot %s %" PRIu64,
                         atomic_load(&s->describe), slot_name(slot), index);
    }
    if (st != RST_OK) { free(h); return st; }
    h->local = 1;
    h->lhold = lh;
    *data = d;
    *len = n;
    *holdp = h;
    return RST_OK;
}

static void st_release(void *ctx, void *hp) {
    etcd_store *s = ctx;
    hold *h = hp;
    if (!h) return;
    if (h->local) l_release(s, h->lhold);
    free(h->mem);
    free(h);
}

/* --------------------------------------------------------------- writing */

static void mark_dirty(etcd_store *s, rst_slot slot, uint64_t index) {
    /* mu held */
    s->wseq++;
    for (size_t i = 0; i < s->ndirty; i++)
        if (s->dirty[i].slot == slot && s->dirty[i].index == index) { s->dirty[i].seq = s->wseq; return; }
    if (s->ndirty == s->capdirty) {
        size_t c = s->capdirty ? s->capdirty * 2 : 16;
        dirty_entry *d = realloc(s->dirty, c * sizeof *d);
        if (!d) return; /* published at the next change of the slot */
        s->dirty = d;
        s->capdirty = c;
    }
    s->dirty[s->ndirty++] = (dirty_entry){ slot, index, s->wseq };
    if (slot == RST_SLOT_ARCHIVE) { s->archive_pending = 1; save_sync(s); }
}

static rst_status check_writable(etcd_store *s, rst_slot slot) {
    /* mu held */
    if (slot == RST_SLOT_CONFLICT) return RST_OK;
    if (s->fenced) return set_error(RST_ERR_FENCED, "%s: this state is owned by %s", atomic_load(&s->describe), s->fence_msg);
    if (!s->acquired) return set_error(RST_ERR_STATE, "%s: writing needs ownership: call acquire first", atomic_load(&s->describe));
    return RST_OK;
}

/* A publish failure not told yet: told now (once). */
static rst_status take_pub_error(etcd_store *s) {
    /* mu held */
    if (s->pub_status == RST_OK) return RST_OK;
    rst_status st = s->pub_status;
    s->pub_status = RST_OK;
    return set_error(st, "%s", s->pub_msg);
}

static rst_status st_write(void *ctx, rst_slot slot, uint64_t index, const void *data, size_t len) {
    etcd_store *s = ctx;
    if (!slot_name(slot)) return set_error(RST_ERR_INVALID, "%s: there is no slot %u", atomic_load(&s->describe), (unsigned)slot);
    if (slot_is_archive_like(slot) && len > s->max_bytes)
        return set_error(RST_ERR_LIMIT, "%s: an archive of %zu bytes is over max_archive_bytes (%zu); nothing was written",
                         atomic_load(&s->describe), len, s->max_bytes);
    pthread_mutex_lock(&s->mu);
    rst_status st = check_writable(s, slot);
    if (st == RST_OK) st = l_write(s, slot, index, data, len);
    if (st == RST_OK) {
        mark_dirty(s, slot, index);
        pthread_cond_broadcast(&s->cv);
        if (slot == RST_SLOT_ARCHIVE) st = take_pub_error(s);
    }
    pthread_mutex_unlock(&s->mu);
    return st;
}

/* Makes sure the local copy has `slot` as the cluster has it, for a move or
 * link whose source was never read on this machine. */
static void materialize(etcd_store *s, rst_slot slot, uint64_t index) {
    const void *d;
    size_t n;
    void *lh;
    if (l_read(s, slot, index, &d, &n, &lh) == RST_OK) { l_release(s, lh); return; }
    pthread_mutex_lock(&s->mu);
    int dirty = is_dirty(s, slot, index);
    pthread_mutex_unlock(&s->mu);
    if (dirty) return;
    unsigned char *mem = NULL;
    int64_t rev = 0;
    call_result r;
    if (read_remote(s, s->curl_caller, slot, index, &mem, &n, &rev, &r) == RST_OK) l_write(s, slot, index, mem, n);
    call_result_free(&r);
    free(mem);
}

static rst_status st_move(void *ctx, rst_slot from, uint64_t fi, rst_slot to, uint64_t ti) {
    etcd_store *s = ctx;
    if (!slot_name(from) || !slot_name(to)) return set_error(RST_ERR_INVALID, "%s: there is no such slot", atomic_load(&s->describe));
    pthread_mutex_lock(&s->mu);
    rst_status st = check_writable(s, to);
    if (st == RST_OK) st = check_writable(s, from);
    pthread_mutex_unlock(&s->mu);
    if (st != RST_OK) return st;
    materialize(s, from, fi);
    pthread_mutex_lock(&s->mu);
    st = l_move(s, from, fi, to, ti);
    if (st == RST_OK) {
        mark_dirty(s, to, ti);
        mark_dirty(s, from, fi);
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return st;
}

static rst_status st_link(void *ctx, rst_slot from, uint64_t fi, rst_slot to, uint64_t ti) {
    etcd_store *s = ctx;
    if (!slot_name(from) || !slot_name(to)) return set_error(RST_ERR_INVALID, "%s: there is no such slot", atomic_load(&s->describe));
    pthread_mutex_lock(&s->mu);
    rst_status st = check_writable(s, to);
    pthread_mutex_unlock(&s->mu);
    if (st != RST_OK) return st;
    materialize(s, from, fi);
    pthread_mutex_lock(&s->mu);
    const void *d;
    size_t n;
    void *lh;
    st = l_read(s, from, fi, &d, &n, &lh);
    if (st == RST_OK) {
        st = l_write(s, to, ti, d, n);
        l_release(s, lh);
    }
    if (st == RST_OK) {
        mark_dirty(s, to, ti);
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return st;
}

static rst_status st_remove(void *ctx, rst_slot slot, uint64_t index) {
    etcd_store *s = ctx;
    if (!slot_name(slot)) return set_error(RST_ERR_INVALID, "%s: there is no slot %u", atomic_load(&s->describe), (unsigned)slot);
    pthread_mutex_lock(&s->mu);
    rst_status st = check_writable(s, slot);
    if (st == RST_OK) {
        st = l_remove(s, slot, index);
        if (st == RST_ERR_NOT_FOUND) st = RST_OK;
    }
    if (st == RST_OK) {
        mark_dirty(s, slot, index);
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return st;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static rst_status st_list(void *ctx, rst_slot slot, uint64_t *indexes, size_t cap, size_t *count) {
    etcd_store *s = ctx;
    if (!slot_name(slot)) return set_error(RST_ERR_INVALID, "%s: there is no slot %u", atomic_load(&s->describe), (unsigned)slot);
    char dir[1024];
    slot_dir_key(s, slot, dir, sizeof dir);
    char *end = prefix_end(dir);
    if (!end) return set_error(RST_ERR_NOMEM, "out of memory");
    json_object *q = range_req(dir, end, 1, 0);
    free(end);
    call_result r;
    call(s, s->curl_caller, "/v3/kv/range", q, 1, &r);
    json_object_put(q);
    if (r.kind == CALL_NET) {
        set_offline(s, 1);
        return l_list(s, slot, indexes, cap, count);
    }
    if (r.kind != CALL_OK) return set_error(r.status, "%s", r.msg);
    etcd_kv *kvs = NULL;
    size_t n = 0;
    int64_t total = 0;
    char perr[ETCD_ERR_CAP];
    if (etcd_range_kvs(r.body, &kvs, &n, &total, perr, sizeof perr) != 0) {
        call_result_free(&r);
        return set_error(RST_ERR_IO, "%s: the list of slot %s: %s", atomic_load(&s->describe), slot_name(slot), perr);
    }
    call_result_free(&r);
    size_t dl = strlen(dir);
    uint64_t *all = malloc((n + 1) * sizeof *all);
    size_t m = 0;
    for (size_t i = 0; all && i < n; i++) {
        if (kvs[i].key_len != dl + 20 || memcmp(kvs[i].key, dir, dl) != 0) continue;
        char num[21];
        memcpy(num, kvs[i].key + dl, 20);
        num[20] = 0;
        int ok = 1;
        for (int k = 0; k < 20; k++) if (num[k] < '0' || num[k] > '9') ok = 0;
        if (ok) all[m++] = strtoull(num, NULL, 10);
    }
    etcd_kvs_free(kvs, n);
    if (!all) return set_error(RST_ERR_NOMEM, "out of memory");
    /* this instance's unpublished changes of the slot count as done */
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->ndirty; i++) {
        if (s->dirty[i].slot != slot) continue;
        uint64_t idx = s->dirty[i].index;
        const void *d;
        size_t dn;
        void *lh;
        int present = l_read(s, slot, idx, &d, &dn, &lh) == RST_OK;
        if (present) l_release(s, lh);
        size_t at = m;
        for (size_t k = 0; k < m; k++) if (all[k] == idx) at = k;
        if (present && at == m) {
            uint64_t *g = realloc(all, (m + 1) * sizeof *all);
            if (g) { all = g; all[m++] = idx; }
        } else if (!present && at < m) {
            all[at] = all[--m];
        }
    }
    pthread_mutex_unlock(&s->mu);
    qsort(all, m, sizeof *all, cmp_u64);
    for (size_t i = 0; i < m && i < cap; i++) indexes[i] = all[i];
    *count = m;
    free(all);
    return RST_OK;
}

static rst_status st_lock(void *ctx) { etcd_store *s = ctx; return s->lops->lock(s->lctx); }
static void st_unlock(void *ctx) { etcd_store *s = ctx; s->lops->unlock(s->lctx); }
static const char *st_describe(void *ctx) { etcd_store *s = ctx; return atomic_load(&s->describe); }

/* -------------------------------------------------------------- publish */

static void fence(etcd_store *s, const char *who) {
    pthread_mutex_lock(&s->mu);
    int was = s->fenced;
    s->fenced = 1;
    s->owning = 0;
    snprintf(s->fence_msg, sizeof s->fence_msg, "%s", who);
    pthread_mutex_unlock(&s->mu);
    if (!was) notify(s, RST_STORE_EVENT_OWNER_LOST);
}

/* Uploads the chunks of `data` that the cluster lacks (`always`: every one,
 * so that a chunk the owner's collector is about to remove gets a new
 * mod_revision and stays) and lists their digests in `chunks`. */
static int put_chunks(etcd_store *s, CURL *c, const unsigned char *data, size_t len, int always, json_object *chunks, call_result *r) {
    for (size_t at = 0; at < len; at += CHUNK_MAX) {
        size_t n = len - at < CHUNK_MAX ? len - at : CHUNK_MAX;
        char d[65], ck[1024];
        sha256_hex(data + at, n, d);
        chunk_key(s, d, ck, sizeof ck);
        int64_t count = 0;
        if (always) goto upload;
        json_object *q = range_req(ck, NULL, 0, 1);
        call(s, c, "/v3/kv/range", q, 1, r);
        json_object_put(q);
        if (r->kind != CALL_OK) return -1;
        char perr[ETCD_ERR_CAP];
        if (etcd_int64(r->body, "count", 0, &count, perr, sizeof perr) != 0) {
            call_result_free(r);
            r->kind = CALL_FAIL;
            r->status = RST_ERR_IO;
            snprintf(r->msg, sizeof r->msg, "etcd's answer for '%s': %s", ck, perr);
            return -1;
        }
        call_result_free(r);
    upload:
        if (count == 0) {
            put_plain(s, c, ck, data + at, n, 0, r);
            if (r->kind != CALL_OK) return -1;
            call_result_free(r);
        }
        json_object_array_add(chunks, json_object_new_string(d));
    }
    r->kind = CALL_OK;
    return 0;
}

/* Publishes one slot as the local copy has it (or its absence). 0: done;
 * -1: r says why. */
static int publish_slot(etcd_store *s, CURL *c, rst_slot slot, uint64_t index, call_result *r) {
    char key[1024], owner[1024];
    head_key(s, slot, index, key, sizeof key);
    plain_key(s, "owner", owner, sizeof owner);
    pthread_mutex_lock(&s->mu);
    int64_t owner_rev = s->owner_rev;
    int64_t base = s->archive_base;
    int owning = s->owning;
    const void *d = NULL;
    size_t n = 0;
    void *lh = NULL;
    rst_status ls = l_read(s, slot, index, &d, &n, &lh);
    unsigned char *copy = NULL;
    if (ls == RST_OK) {
        copy = malloc(n ? n : 1);
        if (copy) memcpy(copy, d, n);
        l_release(s, lh);
    }
    pthread_mutex_unlock(&s->mu);
    memset(r, 0, sizeof *r);
    if (ls == RST_OK && !copy) { r->kind = CALL_FAIL; r->status = RST_ERR_NOMEM; snprintf(r->msg, sizeof r->msg, "out of memory publishing '%s'", key); return -1; }
    if (ls != RST_OK && ls != RST_ERR_NOT_FOUND) { r->kind = CALL_FAIL; r->status = ls; snprintf(r->msg, sizeof r->msg, "the local copy of '%s' could not be read", key); return -1; }
    if (slot != RST_SLOT_CONFLICT && !owning) {
        free(copy);
        r->kind = CALL_FAIL;
        r->status = RST_ERR_FENCED;
        snprintf(r->msg, sizeof r->msg, "not the owner");
        return -1;
    }
    char digest[65] = "";
    json_object *headv = NULL;
    if (copy) {
        json_object *chunks = json_object_new_array();
        if (put_chunks(s, c, copy, n, slot == RST_SLOT_CONFLICT, chunks, r) != 0) { json_object_put(chunks); free(copy); return -1; }
        sha256_hex(copy, n, digest);
        free(copy);
        headv = json_object_new_object();
        json_object_object_add(headv, "digest", json_object_new_string(digest));
        json_object_object_add(headv, "size", json_object_new_int64((int64_t)n));
        json_object_object_add(headv, "chunks", chunks);
        json_object_object_add(headv, "machine", json_object_new_string(s->machine));
        json_object_object_add(headv, "host", json_object_new_string(s->host));
        add_i64(headv, "fence", owner_rev);
        json_object_object_add(headv, "time_ms", json_object_new_int64((int64_t)wall_ms()));
    }
    json_object *cmps = json_object_new_array(), *succ = json_object_new_array(), *failb = json_object_new_array();
    if (slot != RST_SLOT_CONFLICT) {
        json_object_array_add(cmps, cmp_rev(owner, "CREATE", owner_rev));
        if (slot == RST_SLOT_ARCHIVE) json_object_array_add(cmps, cmp_rev(key, "MOD", base));
    }
    if (headv) {
        const char *hv = json_object_to_json_string_ext(headv, JSON_C_TO_STRING_PLAIN);
        json_object_array_add(succ, op_put(key, hv, strlen(hv), 0));
    } else {
        json_object_array_add(succ, op_delete(key));
    }
    json_object_array_add(failb, op_range(owner));
    int ok = 0;
    etcd_kv *kvs = NULL;
    size_t kn = 0;
    txn(s, c, cmps, succ, failb, 0, &ok, &kvs, &kn, r);
    if (r->kind == CALL_UNKNOWN || (r->kind == CALL_OK && !ok && slot == RST_SLOT_ARCHIVE)) {
        /* the answer was lost, or the head moved: is the head ours already? */
        etcd_kvs_free(kvs, kn);
        kvs = NULL;
        kn = 0;
        call_result r2;
        etcd_kv *hk = NULL;
        int found = 0;
        get_key(s, c, key, &hk, &found, &r2);
        int ours = 0;
        int64_t rev = 0;
        if (r2.kind == CALL_OK) {
            etcd_head h;
            char perr[ETCD_ERR_CAP];
            if (found && headv && etcd_head_parse(hk->value, hk->value_len, &h, perr, sizeof perr) == 0) {
                ours = strcmp(h.digest, digest) == 0 && h.fence == owner_rev && strcmp(h.machine, s->machine) == 0;
                rev = hk->mod_revision;
                etcd_head_free(&h);
            } else if (!found && !headv) {
                ours = 1;
            }
        }
        etcd_kvs_free(hk, found ? 1 : 0);
        call_result_free(&r2);
        if (ours) {
            json_object_put(headv);
            call_result_free(r);
            if (slot == RST_SLOT_ARCHIVE) { pthread_mutex_lock(&s->mu); s->archive_base = rev; pthread_mutex_unlock(&s->mu); }
            r->kind = CALL_OK;
            return 0;
        }
        if (r->kind == CALL_UNKNOWN) { json_object_put(headv); return -1; }
        /* the head moved and is not ours: read who owns the state */
        call_result_free(r);
        etcd_kv *ok2 = NULL;
        int f2 = 0;
        get_key(s, c, owner, &ok2, &f2, &r2);
        char who[600];
        describe_owner(f2 ? ok2 : NULL, who, sizeof who);
        if (f2 && ok2->create_revision == owner_rev)
            snprintf(who + strlen(who), sizeof who - strlen(who), "; another machine published the archive meanwhile");
        etcd_kvs_free(ok2, f2 ? 1 : 0);
        call_result_free(&r2);
        json_object_put(headv);
        r->kind = CALL_FAIL;
        r->status = RST_ERR_FENCED;
        snprintf(r->msg, sizeof r->msg, "%s", who);
        return -1;
    }
    json_object_put(headv);
    if (r->kind != CALL_OK) { etcd_kvs_free(kvs, kn); return -1; }
    int64_t rev = r->revision;
    call_result_free(r);
    if (!ok) {
        char who[600];
        describe_owner(kn ? &kvs[0] : NULL, who, sizeof who);
        etcd_kvs_free(kvs, kn);
        r->kind = CALL_FAIL;
        r->status = RST_ERR_FENCED;
        snprintf(r->msg, sizeof r->msg, "%s", who);
        return -1;
    }
    etcd_kvs_free(kvs, kn);
    if (slot == RST_SLOT_ARCHIVE) {
        pthread_mutex_lock(&s->mu);
        s->archive_base = headv ? rev : 0;
        pthread_mutex_unlock(&s->mu);
    }
    r->kind = CALL_OK;
    return 0;
}

/* Publishes everything dirty, or until `until` (the lease's next
 * keep-alive: a program that writes without pause never starves it); -1
 * when the cluster could not be reached. */
static int publish_pending(etcd_store *s, uint64_t until) {
    for (;;) {
        pthread_mutex_lock(&s->mu);
        if (s->ndirty && now_ms() >= until && !s->stop) { pthread_mutex_unlock(&s->mu); return 0; }
        if (s->ndirty == 0 || s->stop > 1) {
            s->pseq = s->wseq;
            pthread_cond_broadcast(&s->cv);
            pthread_mutex_unlock(&s->mu);
            return 0;
        }
        /* the archive first: it is what the next machine restores */
        size_t pick = 0;
        for (size_t i = 0; i < s->ndirty; i++) if (s->dirty[i].slot == RST_SLOT_ARCHIVE) { pick = i; break; }
        dirty_entry e = s->dirty[pick];
        int fenced = s->fenced;
        pthread_mutex_unlock(&s->mu);
        call_result r;
        int rc = fenced && e.slot != RST_SLOT_CONFLICT ? (r.kind = CALL_FAIL, r.status = RST_ERR_FENCED, snprintf(r.msg, sizeof r.msg, "%s", s->fence_msg), -1)
                                                         : publish_slot(s, s->curl_worker, e.slot, e.index, &r);
        call_result_free(&r);
        if (rc != 0 && (r.kind == CALL_NET || r.kind == CALL_UNKNOWN)) return -1;
        if (rc != 0 && r.status == RST_ERR_FENCED && !fenced) fence(s, r.msg);
        pthread_mutex_lock(&s->mu);
        for (size_t i = 0; i < s->ndirty; i++) {
            if (s->dirty[i].slot == e.slot && s->dirty[i].index == e.index) {
                if (s->dirty[i].seq == e.seq) {
                    s->dirty[i] = s->dirty[--s->ndirty];
                    /* the archive out: the local copy is no longer ahead (a
                       failed publish keeps it ahead, and it is what reads see) */
                    if (rc == 0 && e.slot == RST_SLOT_ARCHIVE) { s->archive_pending = 0; save_sync(s); }
                }
                break;
            }
        }
        if (rc != 0 && r.status == RST_ERR_FENCED && e.slot == RST_SLOT_ARCHIVE && s->archive_pending) {
            /* this machine's unpublished archive is kept as a conflict copy */
            const void *d;
            size_t n;
            void *lh;
            if (l_read(s, RST_SLOT_ARCHIVE, 0, &d, &n, &lh) == RST_OK) {
                uint64_t idx = wall_ms();
                if (l_write(s, RST_SLOT_CONFLICT, idx, d, n) == RST_OK) mark_dirty(s, RST_SLOT_CONFLICT, idx);
                l_release(s, lh);
            }
            s->archive_pending = 0;
            save_sync(s);
        }
        if (rc != 0) {
            s->pub_status = r.status;
            if (r.status == RST_ERR_FENCED)
                snprintf(s->pub_msg, sizeof s->pub_msg, "%s: this state is owned by %s; the save was kept on this machine only",
                         atomic_load(&s->describe), s->fence_msg);
            else
                snprintf(s->pub_msg, sizeof s->pub_msg, "%s (the save is kept on this machine)", r.msg);
        }
        uint64_t low = s->wseq;
        for (size_t i = 0; i < s->ndirty; i++) if (s->dirty[i].seq - 1 < low) low = s->dirty[i].seq - 1;
        s->pseq = low;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
    }
}


/* ------------------------------------------------------ chunk collector */

/* Chunks no head refers to are removed by the owner, on its own thread
 * (so never during its own publish): a chunk goes when two passes at least
 * gc_interval apart found it unreferenced with the same mod_revision, and
 * its delete compares that mod_revision (a conflict copy's writer puts its
 * chunks again, which moves it). */
typedef struct gc_seen { char digest[65]; int64_t mod; } gc_seen;

static int digest_listed(char (*list)[65], size_t n, const char *d) {
    for (size_t i = 0; i < n; i++) if (strcmp(list[i], d) == 0) return 1;
    return 0;
}

static void collect_chunks(etcd_store *s, CURL *c) {
    char cdir[1024], sdir[1024];
    snprintf(cdir, sizeof cdir, "%schunks/", s->prefix);
    snprintf(sdir, sizeof sdir, "%sslots/", s->prefix);
    char *cend = prefix_end(cdir), *send = prefix_end(sdir);
    call_result r;
    etcd_kv *chunks = NULL, *heads = NULL;
    size_t nc = 0, nh = 0;
    int64_t cnt = 0;
    char perr[ETCD_ERR_CAP];
    char (*refs)[65] = NULL;
    size_t nrefs = 0, caprefs = 0;
    gc_seen *next = NULL;
    size_t nnext = 0;
    if (!cend || !send) goto out;
    json_object *q = range_req(cdir, cend, 1, 0);
    call(s, c, "/v3/kv/range", q, 1, &r);
    json_object_put(q);
    if (r.kind != CALL_OK) { call_result_free(&r); goto out; }
    if (etcd_range_kvs(r.body, &chunks, &nc, &cnt, perr, sizeof perr) != 0) { call_result_free(&r); goto out; }
    call_result_free(&r);
    q = range_req(sdir, send, 0, 0);
    call(s, c, "/v3/kv/range", q, 1, &r);
    json_object_put(q);
    if (r.kind != CALL_OK) { call_result_free(&r); goto out; }
    if (etcd_range_kvs(r.body, &heads, &nh, &cnt, perr, sizeof perr) != 0) { call_result_free(&r); goto out; }
    call_result_free(&r);
    for (size_t i = 0; i < nh; i++) {
        etcd_head h;
        /* a head that cannot be read keeps every chunk: collect nothing */
        if (etcd_head_parse(heads[i].value, heads[i].value_len, &h, perr, sizeof perr) != 0) goto out;
        for (size_t k = 0; k < h.nchunks; k++) {
            if (nrefs == caprefs) {
                caprefs = caprefs ? caprefs * 2 : 64;
                char (*g)[65] = realloc(refs, caprefs * sizeof *refs);
                if (!g) { etcd_head_free(&h); goto out; }
                refs = g;
            }
            memcpy(refs[nrefs++], h.chunks[k], 65);
        }
        etcd_head_free(&h);
    }
    next = calloc(nc ? nc : 1, sizeof *next);
    if (!next) goto out;
    size_t cl = strlen(cdir);
    for (size_t i = 0; i < nc; i++) {
        if (chunks[i].key_len != cl + 64 || memcmp(chunks[i].key, cdir, cl) != 0) continue;
        char d[65];
        memcpy(d, chunks[i].key + cl, 64);
        d[64] = 0;
        if (!etcd_is_digest(d) || digest_listed(refs, nrefs, d)) continue;
        int seen_before = 0;
        for (size_t k = 0; k < s->ngc; k++)
            if (strcmp(s->gc[k].digest, d) == 0 && s->gc[k].mod == chunks[i].mod_revision) seen_before = 1;
        if (!seen_before) { memcpy(next[nnext].digest, d, 65); next[nnext++].mod = chunks[i].mod_revision; continue; }
        char ck[1024];
        chunk_key(s, d, ck, sizeof ck);
        json_object *cmps = json_object_new_array(), *succ = json_object_new_array(), *failb = json_object_new_array();
        json_object_array_add(cmps, cmp_rev(ck, "MOD", chunks[i].mod_revision));
        json_object_array_add(succ, op_delete(ck));
        int ok = 0;
        txn(s, c, cmps, succ, failb, 1, &ok, NULL, NULL, &r);
        call_result_free(&r);
    }
    free(s->gc);
    s->gc = next;
    s->ngc = nnext;
    next = NULL;
out:
    free(next);
    free(refs);
    etcd_kvs_free(chunks, nc);
    etcd_kvs_free(heads, nh);
    free(cend);
    free(send);
}

/* ------------------------------------------------------------ ownership */

static int pid_running(int64_t pid) {
    if (pid <= 0) return 0;
    return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

static char *owner_value(etcd_store *s) {
    json_object *o = json_object_new_object();
    json_object_object_add(o, "machine", json_object_new_string(s->machine));
    json_object_object_add(o, "host", json_object_new_string(s->host));
    json_object_object_add(o, "pid", json_object_new_int64(s->pid));
    json_object_object_add(o, "start_ms", json_object_new_int64((int64_t)s->start_ms));
    char *v = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
    json_object_put(o);
    return v;
}

/* Grants a lease of the configured TTL. */
static int grant(etcd_store *s, CURL *c, int64_t *lease, call_result *r) {
    json_object *q = json_object_new_object();
    add_i64(q, "TTL", (int64_t)s->ttl_s);
    call(s, c, "/v3/lease/grant", q, 1, r);
    json_object_put(q);
    if (r->kind != CALL_OK) return -1;
    char perr[ETCD_ERR_CAP];
    int64_t id = 0, ttl = 0;
    json_object *e = NULL;
    if (json_object_object_get_ex(r->body, "error", &e) && e && json_object_is_type(e, json_type_string) && json_object_get_string_len(e)) {
        snprintf(r->msg, sizeof r->msg, "etcd refused a lease: %s", json_object_get_string(e));
        call_result_free(r);
        r->kind = CALL_FAIL;
        r->status = RST_ERR_IO;
        return -1;
    }
    if (etcd_int64(r->body, "ID", 0, &id, perr, sizeof perr) != 0 || etcd_int64(r->body, "TTL", 0, &ttl, perr, sizeof perr) != 0 || id == 0 || ttl <= 0) {
        call_result_free(r);
        r->kind = CALL_FAIL;
        r->status = RST_ERR_IO;
        snprintf(r->msg, sizeof r->msg, "etcd's lease grant: %s", perr[0] ? perr : "no lease ID or TTL");
        return -1;
    }
    call_result_free(r);
    *lease = id;
    return 0;
}

/* Tries once to create the owner key. 1: ours; 0: owned (kv of the owner
 * in *cur, or NULL when it vanished meanwhile); -1: r says. */
static int try_create_owner(etcd_store *s, CURL *c, int64_t lease, int64_t *rev, etcd_kv **cur, call_result *r) {
    char owner[1024];
    plain_key(s, "owner", owner, sizeof owner);
    char *v = owner_value(s);
    json_object *cmps = json_object_new_array(), *succ = json_object_new_array(), *failb = json_object_new_array();
    json_object_array_add(cmps, cmp_rev(owner, "CREATE", 0));
    json_object_array_add(succ, op_put(owner, v, strlen(v), lease));
    json_object_array_add(failb, op_range(owner));
    free(v);
    int ok = 0;
    etcd_kv *kvs = NULL;
    size_t n = 0;
    txn(s, c, cmps, succ, failb, 1, &ok, &kvs, &n, r);
    *cur = NULL;
    if (r->kind != CALL_OK) return -1;
    *rev = r->revision;
    call_result_free(r);
    if (ok) { etcd_kvs_free(kvs, n); return 1; }
    if (n >= 1) {
        *cur = kvs;
        for (size_t i = 1; i < n; i++) { free(kvs[i].key); free(kvs[i].value); }
    } else {
        free(kvs);
    }
    return 0;
}

static void delete_handoff(etcd_store *s, CURL *c) {
    char hk[1024];
    plain_key(s, "handoff", hk, sizeof hk);
    call_result r;
    delete_key(s, c, hk, &r);
    call_result_free(&r);
}

/* Takes ownership for real (online). RST_OK; RST_ERR_FENCED (with `msg`);
 * RST_ERR_UNAVAILABLE (unreachable); another failure. `wait_ms`: how long
 * to wait for a handoff. */
static rst_status own(etcd_store *s, CURL *c, uint32_t wait_ms, char *msg, size_t cap) {
    call_result r;
    int64_t lease = 0;
    if (grant(s, c, &lease, &r) != 0) { snprintf(msg, cap, "%s", r.msg); call_result_free(&r); return r.status; }
    int asked = 0;
    uint64_t deadline = now_ms() + wait_ms;
    for (int round = 0;; round++) {
        int64_t rev = 0;
        etcd_kv *cur = NULL;
        int got = try_create_owner(s, c, lease, &rev, &cur, &r);
        if (got < 0) {
            snprintf(msg, cap, "%s", r.msg);
            rst_status st = r.status;
            call_result_free(&r);
            if (r.kind != CALL_NET) revoke_lease(s, c, lease);
            return st;
        }
        if (got == 1) {
            if (asked) delete_handoff(s, c);
            pthread_mutex_lock(&s->mu);
            s->lease = lease;
            s->owner_rev = rev;
            s->owning = 1;
            s->handoff_raised = 0;
            pthread_mutex_unlock(&s->mu);
            return RST_OK;
        }
        if (!cur) continue; /* it vanished between the compare and the read */
        etcd_owner w;
        char perr[ETCD_ERR_CAP];
        int parsed = etcd_owner_parse(cur->value, cur->value_len, &w, perr, sizeof perr) == 0;
        if (parsed && strcmp(w.machine, s->machine) == 0 && w.pid != s->pid && !pid_running(w.pid) && round < 4) {
            /* this machine's owner whose process is gone: taken over at once */
            char owner[1024];
            plain_key(s, "owner", owner, sizeof owner);
            json_object *cmps = json_object_new_array(), *succ = json_object_new_array(), *failb = json_object_new_array();
            json_object_array_add(cmps, cmp_rev(owner, "CREATE", cur->create_revision));
            json_object_array_add(succ, op_delete(owner));
            int ok = 0;
            txn(s, c, cmps, succ, failb, 1, &ok, NULL, NULL, &r);
            call_result_free(&r);
            etcd_kvs_free(cur, 1);
            continue;
        }
        char who[600];
        describe_owner(cur, who, sizeof who);
        etcd_kvs_free(cur, 1);
        if (wait_ms == 0 || now_ms() >= deadline) {
            if (asked) delete_handoff(s, c);
            revoke_lease(s, c, lease);
            if (wait_ms == 0) snprintf(msg, cap, "%s", who);
            else snprintf(msg, cap, "%s, which did not hand off within %u ms", who, wait_ms);
            return RST_ERR_FENCED;
        }
        if (!asked) {
            char hk[1024];
            plain_key(s, "handoff", hk, sizeof hk);
            char *v = owner_value(s);
            put_plain(s, c, hk, v, strlen(v), lease, &r);
            free(v);
            if (r.kind != CALL_OK) {
                snprintf(msg, cap, "%s", r.msg);
                rst_status st = r.status;
                call_result_free(&r);
                revoke_lease(s, c, lease);
                return st;
            }
            call_result_free(&r);
            asked = 1;
        }
        /* keep our own lease (and with it the request) alive while waiting */
        json_object *q = json_object_new_object();
        add_i64(q, "ID", lease);
        call(s, c, "/v3/lease/keepalive", q, 1, &r);
        json_object_put(q);
        call_result_free(&r);
        struct timespec ts = { 0, 100 * 1000000L };
        nanosleep(&ts, NULL);
    }
}

/* After ownership: what the local copy is worth. A pending archive based on
 * the head the cluster still has is published; one based on an older head
 * becomes a conflict copy (-1: the caller raises OWNER_LOST). Other local
 * slots are dropped: the cluster's are the truth, read again on demand. */
static int reconcile(etcd_store *s, CURL *c, char *msg, size_t cap) {
    char key[1024];
    head_key(s, RST_SLOT_ARCHIVE, 0, key, sizeof key);
    etcd_kv *kv = NULL;
    int found = 0;
    call_result r;
    get_key(s, c, key, &kv, &found, &r);
    if (r.kind != CALL_OK) { snprintf(msg, cap, "%s", r.msg); call_result_free(&r); return -2; }
    call_result_free(&r);
    int64_t remote = found ? kv->mod_revision : 0;
    etcd_kv *headkv = kv;
    pthread_mutex_lock(&s->mu);
    int conflict = 0;
    if (s->archive_pending && s->archive_base != remote) {
        conflict = 1;
        /* the local archive becomes a conflict copy, published later */
        const void *d;
        size_t n;
        void *lh;
        if (l_read(s, RST_SLOT_ARCHIVE, 0, &d, &n, &lh) == RST_OK) {
            uint64_t idx = wall_ms();
            l_write(s, RST_SLOT_CONFLICT, idx, d, n);
            l_release(s, lh);
            mark_dirty(s, RST_SLOT_CONFLICT, idx);
        }
        char who[400] = "another machine";
        if (headkv) {
            etcd_head h;
            char perr[ETCD_ERR_CAP];
            if (etcd_head_parse(headkv->value, headkv->value_len, &h, perr, sizeof perr) == 0) {
                snprintf(who, sizeof who, "%s (machine %s)", h.host, h.machine);
                etcd_head_free(&h);
            }
        }
        snprintf(msg, cap, "%s, which published the archive while this machine was offline", who);
        s->archive_pending = 0;
    }
    if (!s->archive_pending) s->archive_base = remote;
    for (rst_slot sl = RST_SLOT_ARCHIVE; sl <= RST_SLOT_CRASHED; sl++) {
        uint64_t idx[64];
        size_t cnt = 0;
        if (l_list(s, sl, idx, 64, &cnt) != RST_OK) continue;
        for (size_t i = 0; i < cnt && i < 64; i++) {
            if (sl == RST_SLOT_ARCHIVE && s->archive_pending) { mark_dirty(s, sl, idx[i]); continue; }
            if (!is_dirty(s, sl, idx[i])) l_remove(s, sl, idx[i]);
        }
    }
    save_sync(s);
    pthread_mutex_unlock(&s->mu);
    etcd_kvs_free(headkv, found ? 1 : 0);
    return conflict ? -1 : 0;
}

static void *worker_main(void *arg);

static rst_status start_worker(etcd_store *s) {
    pthread_mutex_lock(&s->mu);
    int started = s->worker_started;
    s->worker_started = 1;
    pthread_mutex_unlock(&s->mu);
    if (started) return RST_OK;
    if (pthread_create(&s->worker, NULL, worker_main, s) != 0) {
        pthread_mutex_lock(&s->mu);
        s->worker_started = 0;
        pthread_mutex_unlock(&s->mu);
        return set_error(RST_ERR_NOMEM, "%s: the store's thread could not start", atomic_load(&s->describe));
    }
    return RST_OK;
}

static rst_status st_acquire(void *ctx) {
    etcd_store *s = ctx;
    pthread_mutex_lock(&s->mu);
    if (s->acquired) { pthread_mutex_unlock(&s->mu); return RST_OK; }
    if (s->fenced) { pthread_mutex_unlock(&s->mu); return set_error(RST_ERR_FENCED, "%s: this state is owned by %s", atomic_load(&s->describe), s->fence_msg); }
    load_sync(s);
    pthread_mutex_unlock(&s->mu);
    char msg[800];
    rst_status st = own(s, s->curl_caller, s->handoff_wait_ms, msg, sizeof msg);
    if (st == RST_ERR_UNAVAILABLE) {
        /* no cluster now: work from the local copy; the worker acquires later */
        pthread_mutex_lock(&s->mu);
        s->acquired = 1;
        s->pending_acquire = 1;
        pthread_mutex_unlock(&s->mu);
        set_offline(s, 1);
        return start_worker(s);
    }
    if (st == RST_ERR_FENCED) {
        pthread_mutex_lock(&s->mu);
        s->fenced = 1;
        snprintf(s->fence_msg, sizeof s->fence_msg, "%s", msg);
        pthread_mutex_unlock(&s->mu);
        return set_error(RST_ERR_FENCED, "%s: this state is owned by %s", atomic_load(&s->describe), msg);
    }
    if (st != RST_OK) return set_error(st, "%s", msg);
    int rc = reconcile(s, s->curl_caller, msg, sizeof msg);
    pthread_mutex_lock(&s->mu);
    s->acquired = 1;
    pthread_mutex_unlock(&s->mu);
    if (rc == -1) {
        start_worker(s);
        revoke_lease(s, s->curl_caller, s->lease);
        fence(s, msg);
        return set_error(RST_ERR_FENCED, "%s: this state is owned by %s", atomic_load(&s->describe), msg);
    }
    return start_worker(s);
}

static void st_release_ownership(void *ctx) {
    etcd_store *s = ctx;
    rst_etcd_flush(s, s->timeout_ms);
    pthread_mutex_lock(&s->mu);
    int owning = s->owning;
    int64_t lease = s->lease;
    s->owning = 0;
    s->acquired = 0;
    s->pending_acquire = 0;
    s->lease = 0;
    s->fenced = 1;
    snprintf(s->fence_msg, sizeof s->fence_msg, "another instance (this one gave the state up)");
    pthread_mutex_unlock(&s->mu);
    if (owning) revoke_lease(s, s->curl_caller, lease);
}

static void st_attach(void *ctx, const rst_store_host *host) {
    etcd_store *s = ctx;
    if (!host) return;
    s->engine_host = *host;
    s->attached = 1;
}

/* --------------------------------------------------------------- worker */

static void keepalive(etcd_store *s, CURL *c, int *net_down) {
    pthread_mutex_lock(&s->mu);
    int64_t lease = s->lease;
    int owning = s->owning;
    pthread_mutex_unlock(&s->mu);
    if (!owning || !lease) return;
    json_object *q = json_object_new_object();
    add_i64(q, "ID", lease);
    call_result r;
    call(s, c, "/v3/lease/keepalive", q, 1, &r);
    json_object_put(q);
    if (r.kind == CALL_NET) { *net_down = 1; return; }
    if (r.kind != CALL_OK) { call_result_free(&r); return; }
    json_object *res = NULL;
    int64_t ttl = 0;
    char perr[ETCD_ERR_CAP];
    /* the gateway streams: {"result": {"ID": .., "TTL": ..}} */
    if (!json_object_object_get_ex(r.body, "result", &res) || !json_object_is_type(res, json_type_object) ||
        etcd_int64(res, "TTL", 0, &ttl, perr, sizeof perr) != 0) {
        call_result_free(&r);
        return;
    }
    call_result_free(&r);
    if (ttl > 0) return;
    /* the lease expired (a pause past the TTL): someone else may own the state */
    char owner[1024];
    plain_key(s, "owner", owner, sizeof owner);
    etcd_kv *kv = NULL;
    int found = 0;
    get_key(s, c, owner, &kv, &found, &r);
    if (r.kind == CALL_NET) { *net_down = 1; return; }
    char who[600];
    describe_owner(found ? kv : NULL, who, sizeof who);
    etcd_kvs_free(kv, found ? 1 : 0);
    call_result_free(&r);
    fence(s, who);
}

static void poll_handoff(etcd_store *s, CURL *c, int *net_down) {
    pthread_mutex_lock(&s->mu);
    int owning = s->owning, raised = s->handoff_raised;
    pthread_mutex_unlock(&s->mu);
    if (!owning || raised) return;
    char hk[1024];
    plain_key(s, "handoff", hk, sizeof hk);
    etcd_kv *kv = NULL;
    int found = 0;
    call_result r;
    get_key(s, c, hk, &kv, &found, &r);
    if (r.kind == CALL_NET) { *net_down = 1; return; }
    call_result_free(&r);
    etcd_kvs_free(kv, found ? 1 : 0);
    if (!found) return;
    pthread_mutex_lock(&s->mu);
    s->handoff_raised = 1;
    pthread_mutex_unlock(&s->mu);
    notify(s, RST_STORE_EVENT_HANDOFF_REQUESTED);
}

static void *worker_main(void *arg) {
    etcd_store *s = arg;
    CURL *c = s->curl_worker;
    uint64_t period = (uint64_t)s->ttl_s * 1000u / 3u;
    uint64_t next_tick = 0;
    uint64_t next_gc = now_ms() + s->gc_interval_ms;
    uint64_t retry_at = 0;
    for (;;) {
        pthread_mutex_lock(&s->mu);
        for (;;) {
            if (s->stop) break;
            uint64_t now = now_ms();
            if (now >= next_tick) break;
            if (s->ndirty && now >= retry_at) break;
            uint64_t until = next_tick;
            if (s->ndirty && retry_at < until) until = retry_at;
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            uint64_t wait = until - now;
            ts.tv_sec += (time_t)(wait / 1000);
            ts.tv_nsec += (long)(wait % 1000) * 1000000L;
            if (ts.tv_nsec >= 1000000000L) { ts.tv_sec++; ts.tv_nsec -= 1000000000L; }
            pthread_cond_timedwait(&s->cv, &s->mu, &ts);
        }
        int stop = s->stop;
        int pending_acquire = s->pending_acquire && !s->fenced;
        pthread_mutex_unlock(&s->mu);
        if (stop > 1) break;
        int net_down = 0;
        uint64_t now = now_ms();
        if (pending_acquire) {
            char msg[800];
            rst_status st = own(s, c, 0, msg, sizeof msg);
            if (st == RST_OK) {
                pthread_mutex_lock(&s->mu);
                s->pending_acquire = 0;
                pthread_mutex_unlock(&s->mu);
                if (reconcile(s, c, msg, sizeof msg) == -1) {
                    revoke_lease(s, c, s->lease);
                    fence(s, msg);
                }
            } else if (st == RST_ERR_FENCED) {
                pthread_mutex_lock(&s->mu);
                s->pending_acquire = 0;
                /* the local archive was not published: keep it as a conflict copy */
                if (s->archive_pending) {
                    const void *d;
                    size_t n;
                    void *lh;
                    if (l_read(s, RST_SLOT_ARCHIVE, 0, &d, &n, &lh) == RST_OK) {
                        uint64_t idx = wall_ms();
                        l_write(s, RST_SLOT_CONFLICT, idx, d, n);
                        l_release(s, lh);
                        mark_dirty(s, RST_SLOT_CONFLICT, idx);
                    }
                    s->archive_pending = 0;
                    save_sync(s);
                }
                pthread_mutex_unlock(&s->mu);
                fence(s, msg);
            } else {
                net_down = 1;
            }
        }
        if (!net_down && now >= next_tick) {
            keepalive(s, c, &net_down);
            if (!net_down && !stop) poll_handoff(s, c, &net_down);
            next_tick = now + period;
        }
        if (!net_down) {
            if (publish_pending(s, next_tick) != 0) net_down = 1;
        }
        if (net_down) {
            set_offline(s, 1);
            retry_at = now_ms() + 500;
            if (next_tick > retry_at) next_tick = retry_at;
        } else {
            pthread_mutex_lock(&s->mu);
            int clean = s->ndirty == 0 && !s->pending_acquire;
            pthread_mutex_unlock(&s->mu);
            if (clean) set_offline(s, 0);
            pthread_mutex_lock(&s->mu);
            int may_collect = clean && s->owning && !s->fenced && !s->stop;
            pthread_mutex_unlock(&s->mu);
            if (may_collect && now_ms() >= next_gc) {
                collect_chunks(s, c);
                next_gc = now_ms() + s->gc_interval_ms;
            }
        }
        if (stop) {
            pthread_mutex_lock(&s->mu);
            int done = s->ndirty == 0 || net_down;
            pthread_mutex_unlock(&s->mu);
            if (done) break;
        }
    }
    return NULL;
}

/* ------------------------------------------------------------- flushing */

rst_status rst_etcd_flush(void *ctx, uint32_t timeout_ms) {
    etcd_store *s = ctx;
    if (!s) return set_error(RST_ERR_INVALID, "rst_etcd_flush: ctx is NULL");
    uint64_t deadline = now_ms() + timeout_ms;
    pthread_mutex_lock(&s->mu);
    uint64_t target = s->wseq;
    pthread_cond_broadcast(&s->cv);
    for (;;) {
        if (s->pub_status != RST_OK) { rst_status st = take_pub_error(s); pthread_mutex_unlock(&s->mu); return st; }
        if (s->pseq >= target) break;
        if (s->fenced && s->ndirty == 0) break;
        uint64_t now = now_ms();
        if (now >= deadline || !s->worker_started) {
            pthread_mutex_unlock(&s->mu);
            return set_error(RST_ERR_UNAVAILABLE, "%s: not published within %u ms (the save is kept on this machine and published later)",
                             atomic_load(&s->describe), timeout_ms);
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t wait = deadline - now;
        if (wait > 100) wait = 100;
        ts.tv_nsec += (long)wait * 1000000L;
        while (ts.tv_nsec >= 1000000000L) { ts.tv_sec++; ts.tv_nsec -= 1000000000L; }
        pthread_cond_timedwait(&s->cv, &s->mu, &ts);
    }
    pthread_mutex_unlock(&s->mu);
    return RST_OK;
}

/* -------------------------------------------------------------- destroy */

static void st_destroy(void *ctx) {
    etcd_store *s = ctx;
    if (!s) return;
    pthread_mutex_lock(&s->mu);
    int started = s->worker_started;
    int owning = s->owning;
    pthread_mutex_unlock(&s->mu);
    if (started && owning) {
        rst_status st = rst_etcd_flush(s, s->timeout_ms);
        if (st != RST_OK) fprintf(stderr, "restoration-etcd: %s\n", last_error);
    }
    pthread_mutex_lock(&s->mu);
    s->stop = 2;
    pthread_cond_broadcast(&s->cv);
    int64_t lease = s->owning ? s->lease : 0;
    pthread_mutex_unlock(&s->mu);
    if (started) pthread_join(s->worker, NULL);
    if (lease) revoke_lease(s, s->curl_caller, lease);
    s->lops->destroy(s->lctx);
    curl_easy_cleanup(s->curl_caller);
    curl_easy_cleanup(s->curl_worker);
    for (size_t i = 0; i < s->n_endpoints; i++) free(s->endpoints[i]);
    free(s->prefix);
    free(s->user);
    free(s->password);
    free(s->ca_file);
    free(s->cert_file);
    free(s->key_file);
    free(s->cache_dir);
    free(s->sync_path);
    free(s->token);
    free(s->dirty);
    free(s->gc);
    for (describe_text *d = s->describes; d;) { describe_text *n = d->next; free(d); d = n; }
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->net_mu);
    pthread_cond_destroy(&s->cv);
    free(s);
}

/* --------------------------------------------------------------- create */

static const rst_store_ops etcd_ops = {
    .version = 2, /* a version-2 table: acquire, release_ownership and attach are set */
    .flags = 0,
    .read = st_read,
    .release = st_release,
    .write = st_write,
    .move = st_move,
    .link = st_link,
    .remove = st_remove,
    .list = st_list,
    .lock = st_lock,
    .unlock = st_unlock,
    .map = NULL,
    .describe = st_describe,
    .destroy = st_destroy,
    .acquire = st_acquire,
    .release_ownership = st_release_ownership,
    .attach = st_attach,
};

rst_status rst_etcd_options_init(rst_etcd_options *o, uint32_t version) {
    if (!o) return set_error(RST_ERR_INVALID, "rst_etcd_options_init: o is NULL");
    if (version < 1 || version > RST_ETCD_OPTIONS_VERSION)
        return set_error(RST_ERR_VERSION, "rst_etcd_options_init: version %u; this library knows 1..%d (RST_ETCD_OPTIONS_VERSION)",
                         version, RST_ETCD_OPTIONS_VERSION);
    memset(o, 0, sizeof *o);
    o->version = version;
    return RST_OK;
}

static char *dup_opt(const char *s) { return s ? strdup(s) : NULL; }

static int mkdirs(const char *path) {
    char *p = strdup(path);
    if (!p) return -1;
    for (char *q = p + 1; *q; q++) {
        if (*q != '/') continue;
        *q = 0;
        if (mkdir(p, 0700) != 0 && errno != EEXIST) { free(p); return -1; }
        *q = '/';
    }
    int rc = mkdir(p, 0700) != 0 && errno != EEXIST ? -1 : 0;
    free(p);
    return rc;
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

rst_status rst_etcd_store(const rst_etcd_options *o, const rst_store_ops **ops, void **ctx) {
    if (!o || !ops || !ctx) return set_error(RST_ERR_INVALID, "rst_etcd_store: o, ops and ctx are required");
    if (o->version < 1 || o->version > RST_ETCD_OPTIONS_VERSION)
        return set_error(RST_ERR_VERSION, "rst_etcd_store: o->version is %u; this library knows 1..%d (RST_ETCD_OPTIONS_VERSION)",
                         o->version, RST_ETCD_OPTIONS_VERSION);
    if (!o->endpoints || !*o->endpoints) return set_error(RST_ERR_INVALID, "rst_etcd_store: endpoints is empty");
    if (!o->prefix || !*o->prefix) return set_error(RST_ERR_INVALID, "rst_etcd_store: prefix is empty");
    if (strlen(o->prefix) > 512) return set_error(RST_ERR_INVALID, "rst_etcd_store: prefix '%.40s...' is longer than 512 bytes", o->prefix);
    if (o->lease_ttl_s == 1) return set_error(RST_ERR_INVALID, "rst_etcd_store: lease_ttl_s is 1; it is 0 (10 s) or at least 2");
    if (o->user && !*o->user) return set_error(RST_ERR_INVALID, "rst_etcd_store: user is empty (NULL: no authentication)");
    etcd_store *s = calloc(1, sizeof *s);
    if (!s) return set_error(RST_ERR_NOMEM, "rst_etcd_store: out of memory");
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->net_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_cond_init(&s->cv, &ca);
    pthread_condattr_destroy(&ca);
    rst_status st = RST_OK;
    /* endpoints */
    char *list = strdup(o->endpoints);
    if (!list) { st = set_error(RST_ERR_NOMEM, "rst_etcd_store: out of memory"); goto fail; }
    char *save = NULL;
    for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        while (*t == ' ') t++;
        size_t n = strlen(t);
        while (n && (t[n - 1] == ' ' || t[n - 1] == '/')) t[--n] = 0;
        if (!n) continue;
        if (strncmp(t, "http://", 7) != 0 && strncmp(t, "https://", 8) != 0) {
            st = set_error(RST_ERR_INVALID, "rst_etcd_store: endpoint '%s' is not http://HOST:PORT or https://HOST:PORT", t);
            free(list);
            goto fail;
        }
        if (s->n_endpoints == MAX_ENDPOINTS) { st = set_error(RST_ERR_LIMIT, "rst_etcd_store: more than %d endpoints", MAX_ENDPOINTS); free(list); goto fail; }
        s->endpoints[s->n_endpoints++] = strdup(t);
    }
    free(list);
    if (!s->n_endpoints) { st = set_error(RST_ERR_INVALID, "rst_etcd_store: endpoints '%s' names no endpoint", o->endpoints); goto fail; }
    s->prefix = strdup(o->prefix);
    s->user = dup_opt(o->user);
    s->password = dup_opt(o->password);
    s->ca_file = dup_opt(o->ca_file);
    s->cert_file = dup_opt(o->cert_file);
    s->key_file = dup_opt(o->key_file);
    s->ttl_s = o->lease_ttl_s ? o->lease_ttl_s : 10;
    s->timeout_ms = o->timeout_ms ? o->timeout_ms : 2000;
    s->handoff_wait_ms = o->handoff_wait_ms;
    s->max_bytes = o->max_archive_bytes ? o->max_archive_bytes : ((size_t)8 << 20);
    machine_identity(s);
    /* how often the owner removes chunks no head refers to (two passes apart) */
    const char *gce = secure_getenv("RESTORATION_ETCD_GC_INTERVAL_MS");
    s->gc_interval_ms = gce && atoi(gce) >= 100 ? (uint32_t)atoi(gce) : 60000;
    /* the local copy */
    if (o->cache_dir && *o->cache_dir) s->cache_dir = strdup(o->cache_dir);
    else {
        const char *x = secure_getenv("XDG_STATE_HOME");
        const char *home = secure_getenv("HOME");
        char base[2048];
        if (x && *x == '/') snprintf(base, sizeof base, "%s", x);
        else if (home && *home == '/') snprintf(base, sizeof base, "%s/.local/state", home);
        else { st = set_error(RST_ERR_INVALID, "rst_etcd_store: no cache_dir, and neither XDG_STATE_HOME nor HOME is set"); goto fail; }
        char d[65];
        sha256_hex(o->prefix, strlen(o->prefix), d);
        d[16] = 0;
        char path[2300];
        snprintf(path, sizeof path, "%s/restoration/etcd/%s", base, d);
        s->cache_dir = strdup(path);
    }
    if (!s->cache_dir || mkdirs(s->cache_dir) != 0) {
        st = set_error(RST_ERR_INVALID, "rst_etcd_store: cache_dir '%s' cannot be made: %s", s->cache_dir ? s->cache_dir : "", strerror(errno));
        goto fail;
    }
    char lp[4200];
    snprintf(lp, sizeof lp, "%s/state.rst", s->cache_dir);
    st = rst_file_store(lp, &s->lops, &s->lctx);
    if (st != RST_OK) { set_error(st, "rst_etcd_store: the local copy at '%s' cannot be used", lp); goto fail; }
    snprintf(lp, sizeof lp, "%s/sync", s->cache_dir);
    s->sync_path = strdup(lp);
    pthread_once(&curl_once, curl_init_once);
    s->curl_caller = curl_easy_init();
    s->curl_worker = curl_easy_init();
    if (!s->prefix || !s->curl_caller || !s->curl_worker || !s->sync_path || (o->user && !s->user)) {
        st = set_error(RST_ERR_NOMEM, "rst_etcd_store: out of memory");
        goto fail;
    }
    pthread_mutex_lock(&s->net_mu);
    update_describe(s);
    pthread_mutex_unlock(&s->net_mu);
    *ops = &etcd_ops;
    *ctx = s;
    return RST_OK;
fail:
    if (s->lops) s->lops->destroy(s->lctx);
    if (s->curl_caller) curl_easy_cleanup(s->curl_caller);
    if (s->curl_worker) curl_easy_cleanup(s->curl_worker);
    for (size_t i = 0; i < s->n_endpoints; i++) free(s->endpoints[i]);
    free(s->prefix); free(s->user); free(s->password); free(s->ca_file); free(s->cert_file); free(s->key_file);
    free(s->cache_dir); free(s->sync_path);
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->net_mu);
    pthread_cond_destroy(&s->cv);
    free(s);
    return st;
}
