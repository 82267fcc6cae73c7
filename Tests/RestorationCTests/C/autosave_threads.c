/* autosave_threads.c: marks from 4 threads while the engine's thread
 * autosaves and the main thread polls the descriptor, dispatches, flushes
 * and saves; objects registered and unregistered meanwhile. Run by
 * CABITests and by `make test-tsan` (ThreadSanitizer).
 *
 *   autosave_threads DIR [SECONDS] */
#include "check.h"
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>

static rst_engine *engine;
static atomic_int stop;
static atomic_long encodes, marks;
static atomic_long counter;

static void encode(void *inst, rst_coder *c) {
    (void)inst;
    encodes++;
    rst_encode_int(c, "n", atomic_load(&counter));
}
static const rst_object_callbacks cb = { encode, NULL, NULL, NULL };

static void *marker(void *arg) {
    long id = (long)arg;
    char name[32];
    snprintf(name, sizeof name, "t%ld", id);
    while (!atomic_load(&stop)) {
        rst_object *o = NULL;
        if (rst_register_object(engine, name, NULL, NULL, &cb, NULL, &o) == RST_OK) {
            for (int i = 0; i < 50; i++) { counter++; CHECK_OK(rst_mark_dirty(engine, o)); marks++; }
            rst_unregister_object(engine, o);
        }
        CHECK_OK(rst_mark_dirty(engine, NULL));
        (void)rst_is_dirty(engine);
        (void)rst_next_timeout_ms(engine);
        usleep(200);
    }
    return NULL;
}

int main(int argc, char **argv) {
    check_prog = "autosave_threads";
    if (argc < 2) { fprintf(stderr, "usage: autosave_threads DIR [SECONDS]\n"); return 2; }
    double seconds = argc > 2 ? atof(argv[2]) : 1.0;
    char *path = xasprintf("%s/a.rst", argv[1]);
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.archive_path = path;
    o.autosave_delay_ms = 5;
    o.autosave_max_delay_ms = 20;
    o.generations = 2;
    CHECK_OK(rst_engine_create(&o, &engine));
    CHECK_OK(rst_register_object(engine, "root", NULL, NULL, &cb, NULL, NULL));
    int fd = rst_event_fd(engine);
    CHECK(fd >= 0);
    CHECK_OK(rst_start_autosave_thread(engine));
    pthread_t t[4];
    for (long i = 0; i < 4; i++) pthread_create(&t[i], NULL, marker, (void *)i);
    int64_t end = now_ms() + (int64_t)(seconds * 1000);
    long loops = 0;
    while (now_ms() < end) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        if (poll(&p, 1, 5) == 1) (void)rst_dispatch(engine);
        if (++loops % 20 == 0) CHECK_OK(rst_flush(engine));
        if (loops % 50 == 0) CHECK_OK(rst_save(engine));
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    CHECK_OK(rst_flush(engine));
    CHECK(!rst_is_dirty(engine));
    rst_engine_destroy(engine);
    rst_archive_info *info = NULL;
    CHECK_OK(rst_read_archive_info(path, &info));
    rst_free(info);
    printf("autosave_threads: %ld marks, %ld encodes\n", (long)marks, (long)encodes);
    CHECK(encodes > 0 && marks > 0);
    DONE();
}
