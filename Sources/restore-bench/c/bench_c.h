/* The C contestants of restore-bench: what a Linux C program would pick.
 *
 *   bench_engine.c    a C host calling librestoration.so through the C ABI
 *   bench_gvariant.c  a C host storing one a{sv} per object with GLib's GVariant
 *
 * Both are compiled by restore-bench at run time (cc -O2 -shared -fPIC; see
 * CContestants.swift), loaded with dlopen and driven by the same
 * interleaved, round-robin harness as every other contestant. This
 * directory is excluded from the Swift target (Package.swift).
 *
 * The graph comes from Swift as plain C arrays (struct bench_graph, every
 * member 8 bytes wide so that the Swift side can fill it word by word);
 * both hosts save from, and restore into, the same C struct (bench_obj),
 * and verify every value, class, parent and reference identity against
 * those arrays. */
#ifndef BENCH_C_H
#define BENCH_C_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_C_ABI 1
#define BENCH_BLOB 32   /* bytes of the blob value */
#define BENCH_ROWS 4    /* Int64s of the rows value */

#define BENCH_EXPORT __attribute__((visibility("default")))

/* Filled by restore-bench (Swift), word by word, in this order. */
typedef struct bench_graph {
    uint64_t abi;                      /* BENCH_C_ABI */
    uint64_t struct_size;              /* sizeof(bench_graph) */
    uint64_t n;                        /* objects, in depth-first pre-order */
    uint64_t class_count;
    const char *const *class_names;    /* class_count NUL-terminated names */
    const char *const *identifiers;    /* n */
    const int64_t *parents;            /* n: pre-order index of the parent, -1 at a root */
    const int64_t *classes;            /* n: index into class_names */
    const uint8_t *flags;              /* n: 0 or 1 */
    const int64_t *numbers;            /* n */
    const double *ratios;              /* n */
    const char *const *titles;         /* n */
    const uint8_t *blobs;              /* n * BENCH_BLOB */
    const int64_t *refs;               /* n: pre-order index of the reference, -1 for none */
    const char *const *note_texts;     /* n */
    const int64_t *note_counts;        /* n */
    const int64_t *rows;               /* n * BENCH_ROWS */
    uint64_t blob_len;                 /* BENCH_BLOB */
    uint64_t row_len;                  /* BENCH_ROWS */
} bench_graph;

/* The host's object, as a C program would have it: strings on the heap,
 * the fixed-size values inline, parent and reference as pointers. */
typedef struct bench_obj {
    struct bench_obj *parent;
    struct bench_obj *ref;
    char *identifier;
    char *title;
    char *note_text;
    int64_t class_index;
    int64_t number;
    double ratio;
    int64_t note_count;
    int64_t rows[BENCH_ROWS];
    uint8_t blob[BENCH_BLOB];
    bool flag;
    bool finished;                     /* set by the engine's `finished` callback */
    int64_t index;                     /* pre-order index on the save side; -1 when restored */
    void *handle;                      /* the engine's rst_object * (engine host only) */
} bench_obj;

/* Every contestant .so exports these (see CContestants.swift):
 *   const char *bench_c_name(void);
 *   void *bench_c_open(const bench_graph *g, char *err, size_t errlen);
 *   int   bench_c_prepare_save(void *ctx);          0 = ok
 *   int64_t bench_c_save(void *ctx);                archive bytes, < 0 = error   (timed)
 *   int   bench_c_prepare_restore(void *ctx);       0 = ok
 *   int   bench_c_restore(void *ctx);               0 = ok                        (timed)
 *   const char *bench_c_verify(void *ctx);          NULL = correct, else why
 *   void  bench_c_end_restore(void *ctx);
 *   void  bench_c_close(void *ctx);
 *   const char *bench_c_error(void *ctx);           the last error
 *   const char *bench_c_info(void *ctx);            one line for the report
 */

static inline int bench_check_graph(const bench_graph *g, char *err, size_t errlen) {
    if (g == NULL || g->abi != BENCH_C_ABI || g->struct_size != sizeof(bench_graph)) {
        snprintf(err, errlen, "bench_graph: ABI or struct size mismatch (Swift and C out of step)");
        return -1;
    }
    if (g->blob_len != BENCH_BLOB || g->row_len != BENCH_ROWS) {
        snprintf(err, errlen, "bench_graph: blob %llu bytes / %llu rows, the C host stores %d / %d",
                 (unsigned long long)g->blob_len, (unsigned long long)g->row_len, BENCH_BLOB, BENCH_ROWS);
        return -1;
    }
    return 0;
}

static inline char *bench_strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

static inline char *bench_strndup(const char *s, size_t n) {
    char *p = malloc(n + 1);
    if (p) { memcpy(p, s, n); p[n] = 0; }
    return p;
}

/* The save side's live objects: one array, links set, strings copied. */
static inline bench_obj *bench_live_objects(const bench_graph *g) {
    bench_obj *live = calloc(g->n ? g->n : 1, sizeof *live);
    if (live == NULL) return NULL;
    for (uint64_t i = 0; i < g->n; i++) {
        bench_obj *o = &live[i];
        o->index = (int64_t)i;
        o->parent = g->parents[i] < 0 ? NULL : &live[g->parents[i]];
        o->ref = g->refs[i] < 0 ? NULL : &live[g->refs[i]];
        o->identifier = bench_strdup(g->identifiers[i]);
        o->title = bench_strdup(g->titles[i]);
        o->note_text = bench_strdup(g->note_texts[i]);
        o->class_index = g->classes[i];
        o->number = g->numbers[i];
        o->ratio = g->ratios[i];
        o->note_count = g->note_counts[i];
        memcpy(o->rows, g->rows + i * BENCH_ROWS, sizeof o->rows);
        memcpy(o->blob, g->blobs + i * BENCH_BLOB, sizeof o->blob);
        o->flag = g->flags[i] != 0;
        if (!o->identifier || !o->title || !o->note_text) return NULL;  /* leaks on OOM: a benchmark */
    }
    return live;
}

static inline void bench_free_strings(bench_obj *o) {
    free(o->identifier); free(o->title); free(o->note_text);
    o->identifier = o->title = o->note_text = NULL;
}

static inline void bench_free_live(bench_obj *live, uint64_t n) {
    if (live == NULL) return;
    for (uint64_t i = 0; i < n; i++) bench_free_strings(&live[i]);
    free(live);
}

/* Compares restored object i (values and class; not the links) with the
 * graph. Returns 0 when equal, else writes what differs. */
static inline int bench_check_values(const bench_graph *g, uint64_t i, const bench_obj *o, char *err, size_t errlen) {
    const char *what = NULL;
    if (o->identifier == NULL || strcmp(o->identifier, g->identifiers[i]) != 0) what = "identifier";
    else if (o->class_index != g->classes[i]) what = "class";
    else if (o->flag != (g->flags[i] != 0)) what = "flag";
    else if (o->number != g->numbers[i]) what = "number";
    else if (memcmp(&o->ratio, &g->ratios[i], sizeof(double)) != 0) what = "ratio";
    else if (o->title == NULL || strcmp(o->title, g->titles[i]) != 0) what = "title";
    else if (memcmp(o->blob, g->blobs + i * BENCH_BLOB, BENCH_BLOB) != 0) what = "blob";
    else if (o->note_text == NULL || strcmp(o->note_text, g->note_texts[i]) != 0) what = "note.text";
    else if (o->note_count != g->note_counts[i]) what = "note.count";
    else if (memcmp(o->rows, g->rows + i * BENCH_ROWS, sizeof o->rows) != 0) what = "rows";
    if (what == NULL) return 0;
    snprintf(err, errlen, "object %llu (%s): %s differs", (unsigned long long)i, g->identifiers[i], what);
    return -1;
}

/* Values, class, parent and reference identity of a restored graph given
 * in pre-order (objs[i] is the object restored for graph object i). */
static inline int bench_check_graph_objects(const bench_graph *g, bench_obj *const *objs, char *err, size_t errlen) {
    for (uint64_t i = 0; i < g->n; i++) {
        const bench_obj *o = objs[i];
        if (o == NULL) { snprintf(err, errlen, "object %llu not restored", (unsigned long long)i); return -1; }
        if (bench_check_values(g, i, o, err, errlen) != 0) return -1;
        const bench_obj *p = g->parents[i] < 0 ? NULL : objs[g->parents[i]];
        const bench_obj *r = g->refs[i] < 0 ? NULL : objs[g->refs[i]];
        if (o->parent != p) { snprintf(err, errlen, "object %llu: wrong parent", (unsigned long long)i); return -1; }
        if (o->ref != r) { snprintf(err, errlen, "object %llu: wrong reference", (unsigned long long)i); return -1; }
    }
    return 0;
}

#endif
