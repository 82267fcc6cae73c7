/* threads.c: 4 threads register and unregister their own subtrees in a loop
 * while the main thread saves (to the file and to buffers) and restores;
 * factories and decode/encode callbacks register and find objects (no
 * self-deadlock); a second engine saves the same archive path concurrently.
 *
 *   threads DIR [SECONDS]
 */
#include "check.h"
#include <pthread.h>
#include <stdatomic.h>

#define WORKERS 4

static rst_engine *E;
static atomic_bool stop;
static atomic_long worker_rounds[WORKERS];
static atomic_long releases;
static atomic_long encodes;

typedef struct wobj { int worker; long round; int depth; char path[64]; bool made; } wobj;

static void w_encode(void *inst, rst_coder *c) {
    wobj *w = inst;
    atomic_fetch_add(&encodes, 1);
    CHECK_OK(rst_encode_int(c, "worker", w->worker));
    CHECK_OK(rst_encode_int(c, "round", w->round));
    CHECK_OK(rst_encode_string(c, "path", w->path));
    /* encode callbacks may find objects: this one is registered (the save holds the registry) */
    CHECK(rst_find_object(E, w->path) != NULL);
}
static void w_release(void *inst) {
    wobj *w = inst;
    atomic_fetch_add(&releases, 1);
    if (w->made) free(w);
}
static const rst_object_callbacks w_cb = { w_encode, NULL, NULL, w_release };

static void *worker(void *arg) {
    int k = (int)(intptr_t)arg;
    long round = 0;
    wobj *objs = calloc(16, sizeof *objs);
    while (!atomic_load(&stop)) {
        round++;
        /* a subtree: root, 3 children, 2 grandchildren under each child = 10 objects */
        char rid[32];
        snprintf(rid, sizeof rid, "W%d-%ld", k, round);
        rst_object *root = NULL;
        int n = 0;
        objs[n] = (wobj){ k, round, 0, "", false };
        snprintf(objs[n].path, sizeof objs[n].path, "%s", rid);
        CHECK_OK(rst_register_object(E, rid, NULL, "Worker", &w_cb, &objs[n], &root));
        n++;
        for (int c = 0; c < 3; c++) {
            char cid[8]; snprintf(cid, sizeof cid, "c%d", c);
            rst_object *child = NULL;
            objs[n] = (wobj){ k, round, 1, "", false };
            snprintf(objs[n].path, sizeof objs[n].path, "%s/%s", rid, cid);
            CHECK_OK(rst_register_object(E, cid, root, "Worker", &w_cb, &objs[n], &child));
            n++;
            for (int g = 0; g < 2; g++) {
                char gid[8]; snprintf(gid, sizeof gid, "g%d", g);
                objs[n] = (wobj){ k, round, 2, "", false };
                snprintf(objs[n].path, sizeof objs[n].path, "%s/%s/%s", rid, cid, gid);
                CHECK_OK(rst_register_object(E, gid, child, "Worker", &w_cb, &objs[n], NULL));
                n++;
            }
        }
        /* find by path */
        for (int i = 0; i < n; i++) {
            rst_object *o = rst_find_object(E, objs[i].path);
            CHECK_MSG(o != NULL, "worker %d cannot find %s", k, objs[i].path);
            CHECK(rst_object_instance(o) == &objs[i]);
        }
        CHECK_ERR(rst_register_object(E, rid, NULL, NULL, NULL, NULL, NULL), RST_ERR_DUPLICATE, rid);
        CHECK_OK(rst_unregister_object(E, root));
        CHECK(rst_find_object(E, rid) == NULL);
        atomic_fetch_add(&worker_rounds[k], 1);
    }
    free(objs);
    return NULL;
}

static void static_encode(void *inst, rst_coder *c) { (void)inst; CHECK_OK(rst_encode_int(c, "static", 1)); }
static const rst_object_callbacks static_cb = { static_encode, NULL, NULL, NULL };

/* ---- restoring: the fallback factory and decode callbacks register and find objects */

static atomic_long made_count, decoded_count;
static rst_engine *restore_target;
static rst_object *made_roots[4096];
static int made_root_count;

static void r_decode(void *inst, rst_coder *c) {
    wobj *w = inst;
    int64_t worker = -1;
    CHECK_OK(rst_decode_int(c, "worker", &worker));
    const char *path = NULL;
    CHECK_OK(rst_decode_string(c, "path", &path, NULL));
    CHECK_STR(path, w->path);
    CHECK(rst_find_object(restore_target, w->path) != NULL);
    if (w->depth == 2 && w->made) {
        /* a decode callback registers an object (not in this archive) */
        rst_object *self = rst_find_object(restore_target, w->path);
        CHECK_OK(rst_register_object(restore_target, "note", self, NULL, NULL, NULL, NULL));
    }
    atomic_fetch_add(&decoded_count, 1);
}
static const rst_object_callbacks r_cb = { w_encode, r_decode, NULL, w_release };

static rst_object *fallback(rst_engine *e, rst_object *parent, const char *identifier, rst_coder *c, void *ctx) {
    (void)ctx;
    CHECK(e == restore_target);
    if (strcmp(identifier, "Static") == 0 && parent == NULL) {
        rst_object *o = NULL;
        CHECK_OK(rst_register_object(e, identifier, NULL, NULL, &static_cb, NULL, &o));
        return o;
    }
    /* Into the shared engine, a worker subtree that is not registered any more
       is declined (skipped): re-creating it would race with its worker, which
       checks that its unregistered root stays gone. */
    if (e == E) return NULL;
    const char *path = NULL;
    CHECK_OK(rst_decode_string(c, "path", &path, NULL));
    int64_t worker = -1, round = -1;
    CHECK_OK(rst_decode_int(c, "worker", &worker));
    CHECK_OK(rst_decode_int(c, "round", &round));
    wobj *w = calloc(1, sizeof *w);
    w->worker = (int)worker;
    w->round = (long)round;
    w->made = true;
    w->depth = parent == NULL ? 0 : (rst_object_parent(parent) == NULL ? 1 : 2);
    snprintf(w->path, sizeof w->path, "%s", path);
    rst_object *o = NULL;
    CHECK_OK(rst_register_object(e, identifier, parent, "Worker", &r_cb, w, &o));
    CHECK(rst_find_object(e, path) == o);
    if (parent == NULL && made_root_count < 4096) made_roots[made_root_count++] = o;
    atomic_fetch_add(&made_count, 1);
    return o;
}


/* ---- a second engine saving the same archive path */
static atomic_long other_saves;
static void *other_saver(void *arg) {
    const char *archive = arg;
    rst_engine *e2 = new_engine(archive);
    CHECK_OK(rst_register_object(e2, "Static", NULL, NULL, &static_cb, NULL, NULL));
    while (!atomic_load(&stop)) {
        CHECK_OK(rst_save(e2));
        atomic_fetch_add(&other_saves, 1);
        struct timespec ts = { 0, 2000000 };
        nanosleep(&ts, NULL);
    }
    rst_engine_destroy(e2);
    return NULL;
}

int main(int argc, char **argv) {
    check_prog = "threads";
    if (argc < 2) { fprintf(stderr, "usage: threads DIR [SECONDS]\n"); return 2; }
    double seconds = argc > 2 ? atof(argv[2]) : 1.5;
    char *archive = xasprintf("%s/threads.rst", argv[1]);
    E = new_engine(archive);
    CHECK_OK(rst_register_object(E, "Static", NULL, NULL, &static_cb, NULL, NULL));
    CHECK_OK(rst_set_fallback_factory(E, fallback, NULL));

    pthread_t t[WORKERS], t2;
    for (int k = 0; k < WORKERS; k++) CHECK_EQ(pthread_create(&t[k], NULL, worker, (void *)(intptr_t)k), 0);
    CHECK_EQ(pthread_create(&t2, NULL, other_saver, archive), 0);

    int64_t end = now_ms() + (int64_t)(seconds * 1000);
    long saves = 0, buffers = 0, restores = 0, self_restores = 0;
    while (now_ms() < end) {
        CHECK_OK(rst_save(E));
        saves++;
        void *buf = NULL; size_t len = 0;
        CHECK_OK(rst_save_to_buffer(E, &buf, &len));
        buffers++;

        /* a fresh engine restores the snapshot: its fallback factory and decode callbacks register */
        rst_engine *R = new_engine(NULL);
        restore_target = R;
        CHECK_OK(rst_set_fallback_factory(R, fallback, NULL));
        made_root_count = 0;
        CHECK_OK(rst_restore_from_buffer(R, buf, len));
        rst_restore_report rep;
        CHECK_OK(rst_last_restore_report(R, &rep));
        CHECK_EQ(rep.restored + rep.skipped, rep.archived);
        CHECK_EQ(rep.skipped, 0);
        rst_engine_destroy(R);
        restores++;

        /* restore into the shared engine while the workers keep going: existing
           subtrees are matched and decoded; subtrees their workers have
           unregistered since the snapshot are declined by the fallback */
        if (saves % 4 == 0) {
            restore_target = E;
            made_root_count = 0;
            CHECK_OK(rst_restore_from_buffer(E, buf, len));
            for (int i = 0; i < made_root_count; i++) CHECK_OK(rst_unregister_object(E, made_roots[i]));
            self_restores++;
        }
        rst_free(buf);
    }
    atomic_store(&stop, true);
    for (int k = 0; k < WORKERS; k++) pthread_join(t[k], NULL);
    pthread_join(t2, NULL);

    for (int k = 0; k < WORKERS; k++) CHECK_MSG(atomic_load(&worker_rounds[k]) > 0, "worker %d never finished a round", k);
    CHECK(saves > 0);
    /* the archive left by two engines saving concurrently is one complete archive */
    rst_engine *V = new_engine(archive);
    restore_target = V;
    CHECK_OK(rst_set_fallback_factory(V, fallback, NULL));
    CHECK_OK(rst_restore(V));
    rst_restore_report rep;
    CHECK_OK(rst_last_restore_report(V, &rep));
    CHECK_EQ(rep.skipped, 0);
    rst_engine_destroy(V);
    CHECK_EQ(count_entries(argv[1], ".tmp-"), 0);

    /* every thread's objects are gone; the static one remains */
    CHECK(rst_find_object(E, "Static") != NULL);
    rst_engine_destroy(E);
    printf("threads: %ld saves, %ld buffers, %ld restores (%ld into the shared engine), %ld other-engine saves, rounds %ld/%ld/%ld/%ld, %ld objects made, %ld decoded\n",
           saves, buffers, restores, self_restores, atomic_load(&other_saves),
           atomic_load(&worker_rounds[0]), atomic_load(&worker_rounds[1]), atomic_load(&worker_rounds[2]), atomic_load(&worker_rounds[3]),
           atomic_load(&made_count), atomic_load(&decoded_count));
    free(archive);
    DONE();
}
