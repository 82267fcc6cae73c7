/* etcd_parse.h: the store's reading of etcd's JSON gateway answers (json-c),
 * kept apart from the network so the fuzz target can drive it. Every
 * function checks every field it uses (presence, type, range) and says what
 * was wrong in `err` instead of trusting the answer. Internal to
 * restoration-etcd. */
#ifndef RESTORATION_ETCD_PARSE_H
#define RESTORATION_ETCD_PARSE_H

#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#define ETCD_ERR_CAP 512

/* Parses `len` bytes as one JSON object. NULL with `err` filled otherwise. */
json_object *etcd_parse_object(const char *text, size_t len, char *err, size_t cap);

/* The response header: cluster id and revision (both required, int64 as
 * strings or numbers). 0 on success. */
int etcd_header(json_object *o, uint64_t *cluster_id, int64_t *revision, char *err, size_t cap);

/* An error answer ({"error"|"message": text, "code": n}); "" when none. */
void etcd_error_text(json_object *o, char *out, size_t cap, int *code);

/* An int64 member given as a string or a number; `dflt` when absent (etcd
 * leaves out zero values). -1 (and err) for a wrong type or range. */
int etcd_int64(json_object *o, const char *key, int64_t dflt, int64_t *out, char *err, size_t cap);

/* base64 (standard alphabet, padded). decode: -1 on a bad character. */
char *etcd_b64_encode(const void *data, size_t len);
int   etcd_b64_decode(const char *text, size_t tlen, unsigned char **out, size_t *olen);

/* One key-value of a range answer, decoded. */
typedef struct etcd_kv {
    unsigned char *key;   size_t key_len;
    unsigned char *value; size_t value_len;
    int64_t create_revision, mod_revision, lease;
} etcd_kv;

/* The "kvs" array of a range answer (possibly absent: none), and "count".
 * 0 on success; the caller frees with etcd_kvs_free. */
int  etcd_range_kvs(json_object *o, etcd_kv **kvs, size_t *n, int64_t *count, char *err, size_t cap);
void etcd_kvs_free(etcd_kv *kvs, size_t n);

/* A txn answer: "succeeded" (absent: false) and the kvs of the first
 * response_range among "responses" (none: n = 0). */
int etcd_txn(json_object *o, int *succeeded, etcd_kv **kvs, size_t *n, char *err, size_t cap);

/* A slot's head, as the store writes it. */
#define ETCD_DIGEST_HEX 65
typedef struct etcd_head {
    char     digest[ETCD_DIGEST_HEX];
    uint64_t size;
    size_t   nchunks;
    char   (*chunks)[ETCD_DIGEST_HEX];
    char     machine[128], host[256];
    int64_t  fence;
    int64_t  time_ms;
} etcd_head;
int  etcd_head_parse(const unsigned char *text, size_t len, etcd_head *h, char *err, size_t cap);
void etcd_head_free(etcd_head *h);

/* The owner key's value. */
typedef struct etcd_owner {
    char    machine[128], host[256];
    int64_t pid, start_ms;
} etcd_owner;
int etcd_owner_parse(const unsigned char *text, size_t len, etcd_owner *w, char *err, size_t cap);

/* Whether `s` is a 64-digit lower-case hex digest. */
int etcd_is_digest(const char *s);

#endif
