/* The floor: the engine's archive format (docs/FORMAT.md) written and read
 * by a straight C loop, for the same host objects as bench_engine.c. It is
 * the physical limit of this format on this machine: the same header, info,
 * key and name tables, records, field headers, tags, LEB128 varints, zigzag
 * and CRC-32C checksum, with none of what an engine adds (no registry, no
 * callbacks, no key lookup by name, no validation beyond the checksum).
 *
 *   save    = one pass over the host's objects interning identifiers and
 *             class names (an open-addressing table) and the keys (first
 *             use, as the engine's writer), then one pass writing the
 *             header, info, tables and every record's fields into one
 *             fresh, growing buffer (as rst_save_to_buffer hands out a new
 *             one); total_len and the CRC-32C patched at the end.
 *   restore = the checksum and header checked, the key table mapped once to
 *             the host's fields, the name table as pointers into the
 *             archive, then one pass over the records: a malloc'd bench_obj
 *             per record (strings copied, as the C host's factory and
 *             decode do), parent and class from their indexes; references
 *             linked in a second pass (a reference may point forward).
 *   verify  = values, class, parent and reference identity of every object,
 *             as bench_engine.c checks its own.
 *
 * bench_c_archive hands restore-bench the saved bytes (untimed), which it
 * validates with the engine's own archive reader: the floor writes the
 * format, not something easier. */
#define _POSIX_C_SOURCE 200809L
#include "bench_c.h"
#include <time.h>

/* ---- CRC-32C (Castagnoli, reflected 0x82F63B78): SSE 4.2 when the CPU has
 * it, a table otherwise. ---- */

static uint32_t crc_table[256];

static void crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        crc_table[i] = c;
    }
}

static uint32_t crc_soft(const uint8_t *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    while (n--) c = crc_table[(c ^ *p++) & 0xFF] ^ (c >> 8);
    return ~c;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2")))
static uint32_t crc_hw(const uint8_t *p, size_t n) {
    uint64_t c = 0xFFFFFFFFu;
    while (n >= 8) { uint64_t w; memcpy(&w, p, 8); c = __builtin_ia32_crc32di(c, w); p += 8; n -= 8; }
    uint32_t c32 = (uint32_t)c;
    while (n--) c32 = __builtin_ia32_crc32qi(c32, *p++);
    return ~c32;
}
#endif

static uint32_t crc32c(const uint8_t *p, size_t n) {
#if defined(__x86_64__)
    if (__builtin_cpu_supports("sse4.2")) return crc_hw(p, n);
#endif
    return crc_soft(p, n);
}

/* ---- bytes ---- */

typedef struct buf { uint8_t *p; size_t len, cap; } buf;

static int grow(buf *b, size_t more) {
    if (b->len + more <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more) cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (p == NULL) return -1;
    b->p = p; b->cap = cap;
    return 0;
}

static inline uint8_t *put_varint(uint8_t *p, uint64_t v) {
    while (v >= 0x80) { *p++ = (uint8_t)(v | 0x80); v >>= 7; }
    *p++ = (uint8_t)v;
    return p;
}

static inline size_t varint_size(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) { v >>= 7; n++; }
    return n;
}

static inline uint64_t zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t unzigzag(uint64_t u) { return (int64_t)(u >> 1) ^ -(int64_t)(u & 1); }

static inline uint64_t get_varint(const uint8_t **pp) {
    const uint8_t *p = *pp;
    uint64_t v = 0;
    int shift = 0;
    uint8_t x;
    do { x = *p++; v |= (uint64_t)(x & 0x7F) << shift; shift += 7; } while (x & 0x80);
    *pp = p;
    return v;
}

/* ---- the format's constants (docs/FORMAT.md) ---- */

enum { TAG_FALSE = 0, TAG_TRUE = 1, TAG_INT = 2, TAG_DOUBLE = 3, TAG_STRING = 4, TAG_BYTES = 5,
       TAG_OBJECT = 6, TAG_INT_ARRAY = 7, TAG_RECORD = 9 };
/* The host's values, in encode order (as bench_engine.c's obj_encode). */
enum { K_FLAG, K_NUMBER, K_RATIO, K_TITLE, K_BLOB, K_LINK, K_NOTE, K_TEXT, K_COUNT, K_ROWS, K_COUNT_OF_KEYS };
static const char *const key_names[K_COUNT_OF_KEYS] = {
    "flag", "number", "ratio", "title", "blob", "link", "note", "text", "count", "rows" };
static const uint8_t magic[8] = { 0x89, 'R', 'S', 'T', 0x0D, 0x0A, 0x1A, 0x0A };

typedef struct ctx {
    const bench_graph *g;
    bench_obj *live;                   /* save side */
    /* save */
    buf out;
    uint32_t *name_of_ident;           /* n: name index of each identifier */
    uint32_t *name_of_class;           /* class_count: name index + 1, 0 = not interned */
    const char **names;                /* name table, interning order */
    size_t *name_lens;
    uint32_t *slots;                   /* open addressing: name index + 1, 0 = empty */
    size_t slot_mask;
    /* restore */
    bench_obj **objs;                  /* archive order */
    int64_t *ref_index;                /* archive order: referenced record, -1 none */
    char err[1024];
    char info[256];
} ctx;

static uint32_t hash_bytes(const char *s, size_t n) {
    uint32_t h = 2166136261u;                      /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 16777619u;
    return h;
}

/* The name index of s (interned on first use). */
static uint32_t intern(ctx *x, const char *s, uint32_t *count) {
    size_t n = strlen(s);
    size_t i = hash_bytes(s, n) & x->slot_mask;
    while (x->slots[i]) {
        uint32_t k = x->slots[i] - 1;
        if (x->name_lens[k] == n && memcmp(x->names[k], s, n) == 0) return k;
        i = (i + 1) & x->slot_mask;
    }
    uint32_t k = (*count)++;
    x->names[k] = s; x->name_lens[k] = n;
    x->slots[i] = k + 1;
    return k;
}

BENCH_EXPORT const char *bench_c_name(void) { return "floor: the archive format by a straight C loop"; }
BENCH_EXPORT const char *bench_c_error(void *p) { return ((ctx *)p)->err; }
BENCH_EXPORT const char *bench_c_info(void *p) { return ((ctx *)p)->info; }

static void free_restored(ctx *x) {
    if (x->objs == NULL) return;
    for (uint64_t i = 0; i < x->g->n; i++) if (x->objs[i]) { bench_free_strings(x->objs[i]); free(x->objs[i]); }
    free(x->objs); x->objs = NULL;
    free(x->ref_index); x->ref_index = NULL;
}

BENCH_EXPORT void bench_c_end_restore(void *p) { free_restored(p); }

BENCH_EXPORT void bench_c_close(void *p) {
    ctx *x = p;
    if (x == NULL) return;
    free_restored(x);
    free(x->out.p);
    bench_free_live(x->live, x->g->n);
    free(x->name_of_ident); free(x->name_of_class); free(x->names); free(x->name_lens); free(x->slots);
    free(x);
}

BENCH_EXPORT void *bench_c_open(const bench_graph *g, char *err, size_t errlen) {
    if (bench_check_graph(g, err, errlen) != 0) return NULL;
    crc_init();
    ctx *x = calloc(1, sizeof *x);
    if (x == NULL) { snprintf(err, errlen, "calloc failed"); return NULL; }
    x->g = g;
    x->live = bench_live_objects(g);
    size_t names = g->n + g->class_count + 1, slots = 16;
    while (slots < names * 2) slots *= 2;
    x->slot_mask = slots - 1;
    x->name_of_ident = calloc(g->n + 1, sizeof *x->name_of_ident);
    x->name_of_class = calloc(g->class_count + 1, sizeof *x->name_of_class);
    x->names = calloc(names, sizeof *x->names);
    x->name_lens = calloc(names, sizeof *x->name_lens);
    x->slots = calloc(slots, sizeof *x->slots);
    if (!x->live || !x->name_of_ident || !x->name_of_class || !x->names || !x->name_lens || !x->slots) {
        snprintf(err, errlen, "out of memory"); bench_c_close(x); return NULL;
    }
    snprintf(x->info, sizeof x->info, "CRC-32C by %s",
#if defined(__x86_64__)
             __builtin_cpu_supports("sse4.2") ? "SSE 4.2 crc32 instructions" :
#endif
             "a table");
    return x;
}

BENCH_EXPORT int bench_c_prepare_save(void *p) {
    ctx *x = p;
    /* Each save makes a fresh buffer, as rst_save_to_buffer hands the
     * caller a new one (the C host frees the last one here too). */
    free(x->out.p);
    x->out.p = NULL;
    x->out.len = x->out.cap = 0;
    return 0;
}

static inline uint8_t *put_header(uint8_t *q, int key, uint8_t tag) {
    if (key < 15) { *q++ = (uint8_t)(key << 4 | tag); return q; }
    *q++ = (uint8_t)(0xF0 | tag);
    return put_varint(q, (uint64_t)(key - 15));
}

static inline uint8_t *put_str(uint8_t *q, const void *s, size_t n) {
    q = put_varint(q, n);
    memcpy(q, s, n);
    return q + n;
}

BENCH_EXPORT int64_t bench_c_save(void *p) {
    ctx *x = p;
    const bench_graph *g = x->g;
    bench_obj *live = x->live;
    uint64_t n = g->n;
    /* Pass 1: names in first-use order (identifier, then class name, record
     * by record) and keys in first-use order (the encode order). */
    memset(x->slots, 0, (x->slot_mask + 1) * sizeof *x->slots);
    memset(x->name_of_class, 0, g->class_count * sizeof *x->name_of_class);
    uint32_t name_count = 0, key_count = 0;
    int key_index[K_COUNT_OF_KEYS];
    int key_order[K_COUNT_OF_KEYS];
    for (int k = 0; k < K_COUNT_OF_KEYS; k++) key_index[k] = -1;
    size_t names_bytes = 0;
    for (uint64_t i = 0; i < n; i++) {
        bench_obj *o = &live[i];
        uint32_t before = name_count;
        x->name_of_ident[i] = intern(x, o->identifier, &name_count);
        if (name_count != before) names_bytes += x->name_lens[name_count - 1] + 10;
        if (x->name_of_class[o->class_index] == 0) {
            before = name_count;
            x->name_of_class[o->class_index] = intern(x, g->class_names[o->class_index], &name_count) + 1;
            if (name_count != before) names_bytes += x->name_lens[name_count - 1] + 10;
        }
        if (key_count < K_COUNT_OF_KEYS)
            for (int k = 0; k < K_COUNT_OF_KEYS; k++)
                if (key_index[k] < 0 && (k != K_LINK || o->ref)) { key_order[key_count] = k; key_index[k] = (int)key_count++; }
    }
    /* Pass 2: the archive. */
    buf *b = &x->out;
    /* A first size from the names and 64 bytes a record; doubled as needed. */
    if (grow(b, 64 + names_bytes + 16 * K_COUNT_OF_KEYS + 64 * n)) { snprintf(x->err, sizeof x->err, "out of memory"); return -1; }
    uint8_t *q = b->p;
    memcpy(q, magic, 8); q += 8;
    *q++ = 1; *q++ = 0;                             /* version 1 */
    *q++ = 0; *q++ = 0;                             /* flags 0 */
    q += 4;                                         /* total_len, patched below */
    q = put_str(q, "restore-bench", 13);            /* app_version */
    q = put_str(q, "", 0);                          /* system_version */
    q = put_str(q, "bench", 5);                     /* idiom */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    memcpy(q, &ms, 8); q += 8;                      /* saved_at_ms (little-endian host) */
    q = put_varint(q, n);                           /* object_count */
    q = put_varint(q, key_count);
    q = put_varint(q, name_count);
    for (uint32_t k = 0; k < key_count; k++) q = put_str(q, key_names[key_order[k]], strlen(key_names[key_order[k]]));
    for (uint32_t k = 0; k < name_count; k++) q = put_str(q, x->names[k], x->name_lens[k]);
    b->len = (size_t)(q - b->p);
    for (uint64_t i = 0; i < n; i++) {
        bench_obj *o = &live[i];
        size_t title = strlen(o->title), text = strlen(o->note_text);
        /* An upper bound of the record: 3 varints, fields_len, the fields. */
        if (grow(b, 60 + 2 * 11 + title + text + BENCH_BLOB + 12 * BENCH_ROWS + 11 * 4 + 40)) {
            snprintf(x->err, sizeof x->err, "out of memory"); return -1;
        }
        q = b->p + b->len;
        q = put_varint(q, x->name_of_ident[i]);
        q = put_varint(q, o->parent ? (uint64_t)(o - o->parent) : 0);
        q = put_varint(q, x->name_of_class[o->class_index]);
        /* The fields are written 2 bytes on (fields_len takes 1 or 2 bytes
         * here; moved down when it takes 1). */
        uint8_t *f = q + 2, *e = f;
        e = put_header(e, key_index[K_FLAG], o->flag ? TAG_TRUE : TAG_FALSE);
        e = put_header(e, key_index[K_NUMBER], TAG_INT);
        e = put_varint(e, zigzag(o->number));
        e = put_header(e, key_index[K_RATIO], TAG_DOUBLE);
        memcpy(e, &o->ratio, 8); e += 8;
        e = put_header(e, key_index[K_TITLE], TAG_STRING);
        e = put_str(e, o->title, title);
        e = put_header(e, key_index[K_BLOB], TAG_BYTES);
        e = put_str(e, o->blob, BENCH_BLOB);
        if (o->ref) {
            e = put_header(e, key_index[K_LINK], TAG_OBJECT);
            e = put_varint(e, (uint64_t)(o->ref - live));
        }
        e = put_header(e, key_index[K_NOTE], TAG_RECORD);
        uint64_t cz = zigzag(o->note_count);
        size_t note = 1 + varint_size(text) + text + 1 + varint_size(cz);
        e = put_varint(e, note);
        e = put_header(e, key_index[K_TEXT], TAG_STRING);
        e = put_str(e, o->note_text, text);
        e = put_header(e, key_index[K_COUNT], TAG_INT);
        e = put_varint(e, cz);
        e = put_header(e, key_index[K_ROWS], TAG_INT_ARRAY);
        size_t rows = 1;
        for (int k = 0; k < BENCH_ROWS; k++) rows += varint_size(zigzag(o->rows[k]));
        e = put_varint(e, rows);
        e = put_varint(e, BENCH_ROWS);
        for (int k = 0; k < BENCH_ROWS; k++) e = put_varint(e, zigzag(o->rows[k]));
        size_t fields = (size_t)(e - f);
        if (fields < 0x80) { *q++ = (uint8_t)fields; memmove(q, f, fields); q += fields; }
        else if (fields < 0x4000) { q = put_varint(q, fields); q += fields; }
        else { snprintf(x->err, sizeof x->err, "record %llu: %zu bytes of fields", (unsigned long long)i, fields); return -1; }
        b->len = (size_t)(q - b->p);
    }
    if (grow(b, 4)) { snprintf(x->err, sizeof x->err, "out of memory"); return -1; }
    uint32_t total = (uint32_t)(b->len + 4);
    memcpy(b->p + 12, &total, 4);
    uint32_t crc = crc32c(b->p, b->len);
    memcpy(b->p + b->len, &crc, 4);
    b->len += 4;
    return (int64_t)b->len;
}

BENCH_EXPORT const void *bench_c_archive(void *p, size_t *len) {
    ctx *x = p;
    *len = x->out.len;
    return x->out.p;
}

BENCH_EXPORT int bench_c_prepare_restore(void *p) {
    ctx *x = p;
    free_restored(x);
    x->objs = calloc(x->g->n ? x->g->n : 1, sizeof *x->objs);
    x->ref_index = malloc((x->g->n ? x->g->n : 1) * sizeof *x->ref_index);
    if (!x->objs || !x->ref_index) { snprintf(x->err, sizeof x->err, "out of memory"); return -1; }
    return 0;
}

#define BAD(...) do { snprintf(x->err, sizeof x->err, __VA_ARGS__); return -1; } while (0)

BENCH_EXPORT int bench_c_restore(void *p) {
    ctx *x = p;
    const bench_graph *g = x->g;
    const uint8_t *a = x->out.p;
    size_t len = x->out.len;
    /* The checksum, and what the header says. */
    if (len < 20 || memcmp(a, magic, 8) != 0) BAD("not an archive");
    uint32_t total, stored;
    memcpy(&total, a + 12, 4);
    memcpy(&stored, a + len - 4, 4);
    if (a[8] != 1 || a[9] != 0 || a[10] != 0 || a[11] != 0 || total != len) BAD("header: version, flags or total_len");
    if (crc32c(a, len - 4) != stored) BAD("checksum mismatch");
    const uint8_t *q = a + 16;
    for (int k = 0; k < 3; k++) { uint64_t l = get_varint(&q); q += l; }   /* app, system, idiom */
    q += 8;                                                                 /* saved_at_ms */
    uint64_t count = get_varint(&q);
    if (count != g->n) BAD("%llu records, the graph has %llu", (unsigned long long)count, (unsigned long long)g->n);
    uint64_t key_count = get_varint(&q), name_count = get_varint(&q);
    /* Keys: mapped once to the host's fields. */
    int8_t field_of_key[64];
    if (key_count > 64) BAD("%llu keys", (unsigned long long)key_count);
    for (uint64_t k = 0; k < key_count; k++) {
        uint64_t l = get_varint(&q);
        field_of_key[k] = -1;
        for (int f = 0; f < K_COUNT_OF_KEYS; f++)
            if (strlen(key_names[f]) == l && memcmp(key_names[f], q, l) == 0) field_of_key[k] = (int8_t)f;
        q += l;
    }
    /* Names: pointers into the archive; a class index found on first use. */
    const uint8_t **name = malloc((name_count ? name_count : 1) * sizeof *name);
    uint32_t *name_len = malloc((name_count ? name_count : 1) * sizeof *name_len);
    int32_t *class_of_name = malloc((name_count ? name_count : 1) * sizeof *class_of_name);
    if (!name || !name_len || !class_of_name) { free(name); free(name_len); free(class_of_name); BAD("out of memory"); }
    for (uint64_t k = 0; k < name_count; k++) {
        name_len[k] = (uint32_t)get_varint(&q);
        name[k] = q;
        class_of_name[k] = -2;                       /* not looked up yet */
        q += name_len[k];
    }
    /* Records. */
    bench_obj **objs = x->objs;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t ident = get_varint(&q), delta = get_varint(&q), cls = get_varint(&q), flen = get_varint(&q);
        const uint8_t *end = q + flen;
        bench_obj *o = calloc(1, sizeof *o);
        if (o == NULL) goto oom;
        objs[i] = o;
        o->index = -1;
        o->identifier = bench_strndup((const char *)name[ident], name_len[ident]);
        o->parent = delta ? objs[i - delta] : NULL;
        o->class_index = -1;
        if (cls) {
            int32_t *c = &class_of_name[cls - 1];
            if (*c == -2) {
                *c = -1;
                for (uint64_t k = 0; k < g->class_count; k++)
                    if (strlen(g->class_names[k]) == name_len[cls - 1] && memcmp(g->class_names[k], name[cls - 1], name_len[cls - 1]) == 0) *c = (int32_t)k;
            }
            o->class_index = *c;
        }
        x->ref_index[i] = -1;
        const uint8_t *ends[33];                     /* the record's end, then its nested records' */
        int d = 0;
        ends[0] = end;
        for (;;) {
            while (q >= ends[d]) { if (d == 0) goto record_done; d--; }
            uint8_t h = *q++;
            uint64_t key = h >> 4;
            if (key == 15) key = 15 + get_varint(&q);
            int field = key < key_count ? field_of_key[key] : -1;
            switch (h & 0x0F) {
            case TAG_FALSE: case TAG_TRUE:
                if (field == K_FLAG) o->flag = (h & 0x0F) == TAG_TRUE;
                break;
            case TAG_INT: {
                int64_t v = unzigzag(get_varint(&q));
                if (field == K_NUMBER) o->number = v; else if (field == K_COUNT) o->note_count = v;
                break;
            }
            case TAG_DOUBLE:
                if (field == K_RATIO) memcpy(&o->ratio, q, 8);
                q += 8;
                break;
            case TAG_STRING: {
                uint64_t l = get_varint(&q);
                if (field == K_TITLE) o->title = bench_strndup((const char *)q, l);
                else if (field == K_TEXT) o->note_text = bench_strndup((const char *)q, l);
                q += l;
                break;
            }
            case TAG_BYTES: {
                uint64_t l = get_varint(&q);
                if (field == K_BLOB && l == BENCH_BLOB) memcpy(o->blob, q, BENCH_BLOB);
                q += l;
                break;
            }
            case TAG_OBJECT: {
                uint64_t r = get_varint(&q);
                if (field == K_LINK) x->ref_index[i] = (int64_t)r;
                break;
            }
            case TAG_INT_ARRAY: {
                uint64_t l = get_varint(&q);
                const uint8_t *ae = q + l;
                uint64_t c = get_varint(&q);
                for (uint64_t k = 0; k < c; k++) {
                    int64_t v = unzigzag(get_varint(&q));
                    if (field == K_ROWS && k < BENCH_ROWS) o->rows[k] = v;
                }
                q = ae;
                break;
            }
            case TAG_RECORD: {
                uint64_t l = get_varint(&q);
                if (d == 32) BAD("record %llu: nested deeper than 32", (unsigned long long)i);
                ends[++d] = q + l;                   /* its fields, then back to the enclosing ones */
                break;
            }
            default: {
                uint64_t l = get_varint(&q);         /* a type this host does not keep */
                q += l;
                break;
            }
            }
        }
    record_done:;
    }
    for (uint64_t i = 0; i < count; i++)
        objs[i]->ref = x->ref_index[i] >= 0 ? objs[x->ref_index[i]] : NULL;
    free(name); free(name_len); free(class_of_name);
    return 0;
oom:
    free(name); free(name_len); free(class_of_name);
    BAD("out of memory");
}

BENCH_EXPORT const char *bench_c_verify(void *p) {
    ctx *x = p;
    if (x->objs == NULL) return "nothing restored";
    return bench_check_graph_objects(x->g, x->objs, x->err, sizeof x->err) ? x->err : NULL;
}
