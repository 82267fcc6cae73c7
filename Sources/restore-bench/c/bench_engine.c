/* A C host calling the real librestoration.so through Include/restoration.h:
 * what C users get. It mirrors EngineContestant (EngineBench.swift) call for
 * call, with the host's objects as C structs instead of Swift classes:
 *
 *   save    = every object registered (untimed), then rst_save_to_buffer
 *             timed: each encode callback writes the 8 values (flag, number,
 *             ratio, title, blob, link, the record note{text, count}, rows).
 *   restore = a new engine (untimed): one host class per class name (its
 *             factory mallocs a bench_obj and registers it), the first
 *             ceil(N/2) objects in pre-order pre-registered; then
 *             rst_restore_from_buffer timed (validation, materialize, decode
 *             into the C structs, finished).
 *   verify  = every object found at its path; values, class, parent and
 *             reference identity, `finished`; the restore report's counts;
 *             no failed rst_* call in any callback.
 *
 * Built by restore-bench with
 *   cc -O2 -shared -fPIC -fvisibility=hidden -I Include bench_engine.c \
 *      -L<bin> -lrestoration -Wl,-rpath,<bin>
 * and loaded with dlopen. bench_c_open checks (dladdr) that rst_save_to_buffer
 * binds to librestoration.so and not to a copy of the engine inside the
 * loading executable. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "restoration.h"
#include "bench_c.h"

/* Callback bookkeeping (a callback cannot fail): one contestant at a time. */
static long failures;
static char first_failure[512];
static long created;

static void fail(const char *what, rst_status st) {
    failures++;
    if (failures == 1)
        snprintf(first_failure, sizeof first_failure, "%s: %s: %s", what, rst_status_name(st), rst_last_error());
}

#define CHECK(call, what) do { rst_status st_ = (call); if (st_ != RST_OK) fail(what, st_); } while (0)

typedef struct ctx {
    const bench_graph *g;
    bench_obj *live;                   /* save side, registered with the save engine */
    rst_engine *save_engine;
    void *archive;
    size_t archive_len;
    rst_engine *restore_engine;
    uint64_t prereg;
    char **paths;                      /* for verify */
    char err[1024];
    char info[1024];
} ctx;

/* ---- the host object's callbacks ---- */

static void obj_encode(void *instance, rst_coder *c) {
    bench_obj *o = instance;
    CHECK(rst_encode_bool(c, "flag", o->flag), "encode flag");
    CHECK(rst_encode_int(c, "number", o->number), "encode number");
    CHECK(rst_encode_double(c, "ratio", o->ratio), "encode ratio");
    CHECK(rst_encode_string(c, "title", o->title), "encode title");
    CHECK(rst_encode_bytes(c, "blob", o->blob, BENCH_BLOB), "encode blob");
    if (o->ref) CHECK(rst_encode_object(c, "link", o->ref->handle), "encode link");
    CHECK(rst_encode_begin_record(c, "note"), "begin note");
    CHECK(rst_encode_string(c, "text", o->note_text), "encode note.text");
    CHECK(rst_encode_int(c, "count", o->note_count), "encode note.count");
    CHECK(rst_encode_end_record(c), "end note");
    CHECK(rst_encode_int_array(c, "rows", o->rows, BENCH_ROWS), "encode rows");
}

static void obj_decode(void *instance, rst_coder *c) {
    bench_obj *o = instance;
    bool b; int64_t i; double d; const char *s; size_t len; const void *p; rst_object *ref = NULL;
    rst_status st;
    if ((st = rst_decode_bool(c, "flag", &b)) == RST_OK) o->flag = b; else fail("decode flag", st);
    if ((st = rst_decode_int(c, "number", &i)) == RST_OK) o->number = i; else fail("decode number", st);
    if ((st = rst_decode_double(c, "ratio", &d)) == RST_OK) o->ratio = d; else fail("decode ratio", st);
    if ((st = rst_decode_string(c, "title", &s, &len)) == RST_OK) { free(o->title); o->title = bench_strndup(s, len); }
    else fail("decode title", st);
    if ((st = rst_decode_bytes(c, "blob", &p, &len)) == RST_OK && len == BENCH_BLOB) memcpy(o->blob, p, BENCH_BLOB);
    else fail("decode blob", st == RST_OK ? RST_ERR_LIMIT : st);
    st = rst_decode_object(c, "link", &ref);
    if (st == RST_OK && ref != NULL) o->ref = rst_object_instance(ref);
    else if (st != RST_ERR_NOT_FOUND) fail("decode link", st);    /* the root has no reference */
    if ((st = rst_decode_begin_record(c, "note")) == RST_OK) {
        if ((st = rst_decode_string(c, "text", &s, &len)) == RST_OK) { free(o->note_text); o->note_text = bench_strndup(s, len); }
        else fail("decode note.text", st);
        if ((st = rst_decode_int(c, "count", &i)) == RST_OK) o->note_count = i; else fail("decode note.count", st);
        CHECK(rst_decode_end_record(c), "end note");
    } else fail("begin note", st);
    size_t count = 0;
    st = rst_decode_int_array(c, "rows", o->rows, BENCH_ROWS, &count);
    if (st != RST_OK || count != BENCH_ROWS) fail("decode rows", st == RST_OK ? RST_ERR_LIMIT : st);
}

static void obj_finished(void *instance) { ((bench_obj *)instance)->finished = true; }

static void obj_release(void *instance) {
    bench_obj *o = instance;
    bench_free_strings(o);
    free(o);
}

/* Save side: the objects belong to ctx->live, not to the engine. */
static const rst_object_callbacks save_callbacks = { obj_encode, NULL, NULL, NULL };
static const rst_object_callbacks restore_callbacks = { obj_encode, obj_decode, obj_finished, obj_release };

/* The host classes' factory; factory_ctx is the class index + 1. */
static const bench_graph *factory_graph;
static rst_object *obj_factory(rst_engine *e, rst_object *parent, const char *identifier, rst_coder *c, void *factory_ctx) {
    (void)c;
    int64_t k = (int64_t)(intptr_t)factory_ctx - 1;
    if (k < 0 || (uint64_t)k >= factory_graph->class_count) { fail("factory: bad context", RST_ERR_INVALID); return NULL; }
    bench_obj *o = calloc(1, sizeof *o);
    if (o == NULL) { fail("factory: calloc", RST_ERR_NOMEM); return NULL; }
    o->index = -1;
    o->class_index = k;
    o->identifier = bench_strdup(identifier);
    o->parent = parent ? rst_object_instance(parent) : NULL;
    rst_object *out = NULL;
    rst_status st = rst_register_object(e, identifier, parent, factory_graph->class_names[k], &restore_callbacks, o, &out);
    if (st != RST_OK) { fail("factory: rst_register_object", st); obj_release(o); return NULL; }
    o->handle = out;
    created++;
    return out;
}

static void engine_log(rst_engine *e, int level, const char *message, void *log_ctx) {
    (void)e; (void)log_ctx;
    if (level >= RST_LOG_WARNING && failures == 0)
        snprintf(first_failure, sizeof first_failure, "engine log: %s", message);
}

static rst_engine *make_engine(ctx *x) {
    rst_engine_options opts = RST_ENGINE_OPTIONS_INIT;
    opts.app_version = "restore-bench";
    opts.idiom = "bench";
    opts.log = engine_log;
    rst_engine *e = NULL;
    rst_status st = rst_engine_create(&opts, &e);
    if (st != RST_OK) { snprintf(x->err, sizeof x->err, "rst_engine_create: %s: %s", rst_status_name(st), rst_last_error()); return NULL; }
    return e;
}

/* ---- the contestant ---- */

BENCH_EXPORT const char *bench_c_name(void) { return "C host, librestoration.so (C ABI)"; }
BENCH_EXPORT const char *bench_c_error(void *p) { return ((ctx *)p)->err; }
BENCH_EXPORT const char *bench_c_info(void *p) { return ((ctx *)p)->info; }

BENCH_EXPORT void bench_c_end_restore(void *p) {
    ctx *x = p;
    if (x->restore_engine) { rst_engine_destroy(x->restore_engine); x->restore_engine = NULL; }
}

BENCH_EXPORT void bench_c_close(void *p) {
    ctx *x = p;
    if (x == NULL) return;
    bench_c_end_restore(x);
    if (x->save_engine) rst_engine_destroy(x->save_engine);
    rst_free(x->archive);
    bench_free_live(x->live, x->g->n);
    if (x->paths) { for (uint64_t i = 0; i < x->g->n; i++) free(x->paths[i]); free(x->paths); }
    free(x);
}

BENCH_EXPORT void *bench_c_open(const bench_graph *g, char *err, size_t errlen) {
    if (bench_check_graph(g, err, errlen) != 0) return NULL;
    /* rst_* must come from librestoration.so, not from the executable. */
    Dl_info info;
    if (dladdr((void *)&rst_save_to_buffer, &info) == 0 || info.dli_fname == NULL) {
        snprintf(err, errlen, "dladdr cannot tell which object provides rst_save_to_buffer");
        return NULL;
    }
    const char *base = strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    if (strncmp(base, "librestoration.so", 17) != 0) {
        snprintf(err, errlen, "rst_save_to_buffer binds to %s, not to librestoration.so", info.dli_fname);
        return NULL;
    }
    ctx *x = calloc(1, sizeof *x);
    if (x == NULL) { snprintf(err, errlen, "calloc failed"); return NULL; }
    x->g = g;
    snprintf(x->info, sizeof x->info, "rst_* from %s (rst_version %s)", info.dli_fname, rst_version());
    x->prereg = (g->n + 1) / 2;
    x->live = bench_live_objects(g);
    x->paths = calloc(g->n ? g->n : 1, sizeof *x->paths);
    if (x->live == NULL || x->paths == NULL) { snprintf(err, errlen, "out of memory"); bench_c_close(x); return NULL; }
    for (uint64_t i = 0; i < g->n; i++) {
        const char *id = g->identifiers[i];
        if (g->parents[i] < 0) x->paths[i] = bench_strdup(id);
        else {
            const char *pp = x->paths[g->parents[i]];
            size_t a = strlen(pp), b = strlen(id);
            x->paths[i] = malloc(a + b + 2);
            if (x->paths[i]) { memcpy(x->paths[i], pp, a); x->paths[i][a] = '/'; memcpy(x->paths[i] + a + 1, id, b + 1); }
        }
        if (x->paths[i] == NULL) { snprintf(err, errlen, "out of memory"); bench_c_close(x); return NULL; }
    }
    x->save_engine = make_engine(x);
    if (x->save_engine == NULL) { snprintf(err, errlen, "%s", x->err); bench_c_close(x); return NULL; }
    for (uint64_t i = 0; i < g->n; i++) {
        bench_obj *o = &x->live[i];
        rst_object *out = NULL;
        rst_status st = rst_register_object(x->save_engine, o->identifier, o->parent ? o->parent->handle : NULL,
                                            g->class_names[o->class_index], &save_callbacks, o, &out);
        if (st != RST_OK) {
            snprintf(err, errlen, "registering object %llu: %s: %s", (unsigned long long)i, rst_status_name(st), rst_last_error());
            bench_c_close(x);
            return NULL;
        }
        o->handle = out;
    }
    return x;
}

BENCH_EXPORT int bench_c_prepare_save(void *p) {
    ctx *x = p;
    rst_free(x->archive);
    x->archive = NULL;
    x->archive_len = 0;
    failures = 0; first_failure[0] = 0;
    return 0;
}

BENCH_EXPORT int64_t bench_c_save(void *p) {
    ctx *x = p;
    void *out = NULL;
    size_t len = 0;
    rst_status st = rst_save_to_buffer(x->save_engine, &out, &len);
    if (st != RST_OK) { snprintf(x->err, sizeof x->err, "rst_save_to_buffer: %s: %s", rst_status_name(st), rst_last_error()); return -1; }
    x->archive = out;
    x->archive_len = len;
    if (failures) { snprintf(x->err, sizeof x->err, "%ld failed calls in encode callbacks; first: %s", failures, first_failure); return -1; }
    return (int64_t)len;
}

BENCH_EXPORT int bench_c_prepare_restore(void *p) {
    ctx *x = p;
    const bench_graph *g = x->g;
    bench_c_end_restore(x);
    rst_engine *e = make_engine(x);
    if (e == NULL) return -1;
    x->restore_engine = e;
    factory_graph = g;
    for (uint64_t k = 0; k < g->class_count; k++) {
        rst_status st = rst_register_class(e, g->class_names[k], obj_factory, (void *)(intptr_t)(k + 1));
        if (st != RST_OK) { snprintf(x->err, sizeof x->err, "rst_register_class: %s: %s", rst_status_name(st), rst_last_error()); return -1; }
    }
    /* The first ceil(N/2) objects in pre-order: a prefix holds every member's parent. */
    bench_obj **pre = calloc(x->prereg ? x->prereg : 1, sizeof *pre);
    if (pre == NULL) { snprintf(x->err, sizeof x->err, "out of memory"); return -1; }
    for (uint64_t i = 0; i < x->prereg; i++) {
        bench_obj *o = calloc(1, sizeof *o);
        if (o == NULL) { free(pre); snprintf(x->err, sizeof x->err, "out of memory"); return -1; }
        o->index = (int64_t)i;
        o->class_index = g->classes[i];
        o->identifier = bench_strdup(g->identifiers[i]);
        o->parent = g->parents[i] < 0 ? NULL : pre[g->parents[i]];
        rst_object *out = NULL;
        rst_status st = rst_register_object(e, o->identifier, o->parent ? o->parent->handle : NULL,
                                            g->class_names[o->class_index], &restore_callbacks, o, &out);
        if (st != RST_OK) {
            obj_release(o);
            free(pre);
            snprintf(x->err, sizeof x->err, "pre-registering object %llu: %s: %s", (unsigned long long)i, rst_status_name(st), rst_last_error());
            return -1;
        }
        o->handle = out;
        pre[i] = o;
    }
    free(pre);
    failures = 0; first_failure[0] = 0; created = 0;
    return 0;
}

BENCH_EXPORT int bench_c_restore(void *p) {
    ctx *x = p;
    rst_status st = rst_restore_from_buffer(x->restore_engine, x->archive, x->archive_len);
    if (st != RST_OK) { snprintf(x->err, sizeof x->err, "rst_restore_from_buffer: %s: %s", rst_status_name(st), rst_last_error()); return -1; }
    return 0;
}

BENCH_EXPORT const char *bench_c_verify(void *p) {
    ctx *x = p;
    const bench_graph *g = x->g;
    rst_engine *e = x->restore_engine;
    if (e == NULL) return "no restore engine";
    if (failures) { snprintf(x->err, sizeof x->err, "%ld failed calls in callbacks; first: %s", failures, first_failure); return x->err; }
    rst_restore_report report;
    rst_status st = rst_last_restore_report(e, &report);
    if (st != RST_OK) { snprintf(x->err, sizeof x->err, "rst_last_restore_report: %s", rst_status_name(st)); return x->err; }
    if (report.archived != g->n || report.restored != g->n || report.skipped != 0) {
        snprintf(x->err, sizeof x->err, "report: archived %llu, restored %llu, skipped %llu; expected %llu, %llu, 0",
                 (unsigned long long)report.archived, (unsigned long long)report.restored,
                 (unsigned long long)report.skipped, (unsigned long long)g->n, (unsigned long long)g->n);
        return x->err;
    }
    if ((uint64_t)created != g->n - x->prereg) {
        snprintf(x->err, sizeof x->err, "factories created %ld objects, expected %llu", created, (unsigned long long)(g->n - x->prereg));
        return x->err;
    }
    bench_obj **objs = calloc(g->n ? g->n : 1, sizeof *objs);
    if (objs == NULL) return "out of memory";
    for (uint64_t i = 0; i < g->n; i++) {
        rst_object *o = rst_find_object(e, x->paths[i]);
        objs[i] = o ? rst_object_instance(o) : NULL;
        if (objs[i] == NULL) { snprintf(x->err, sizeof x->err, "object %llu (%s) not found after restore", (unsigned long long)i, x->paths[i]); free(objs); return x->err; }
        if (!objs[i]->finished) { snprintf(x->err, sizeof x->err, "object %llu: `finished` not called", (unsigned long long)i); free(objs); return x->err; }
    }
    int bad = bench_check_graph_objects(g, objs, x->err, sizeof x->err);
    free(objs);
    return bad ? x->err : NULL;
}
