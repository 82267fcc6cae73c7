/* saving_moments.c: the library 1.2 corrections to when and how the engine
 * saves — signals that always end the program (no deadlock with a previous
 * handler that exit()s, a deadline when no dispatch runs), the save
 * listener, marks during a restore, and repeated autosave failures logged
 * once. Every process that takes a signal is a forked child watched with a
 * timeout, so a deadlock fails the test instead of hanging it.
 *
 *   saving_moments exit-handler|deadline|default-deadline|listener|listener-signal|restore-marks|repeated-failures DIR */
#include "check.h"
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>

/* ---- one object: an integer "n" ---- */
typedef struct doc { int64_t n; int64_t restored; } doc;
static atomic_int encodes;
static const char *encode_failure;   /* non-NULL: the encode fails with this sentence */

static void doc_encode(void *inst, rst_coder *c) {
    doc *d = inst;
    encodes++;
    if (encode_failure) { rst_coder_fail(c, RST_ERR_IO, encode_failure); return; }
    rst_encode_int(c, "n", d->n);
}
static void doc_decode(void *inst, rst_coder *c) {
    doc *d = inst;
    rst_decode_int(c, "n", &d->restored);
}
static const rst_object_callbacks doc_callbacks = { doc_encode, doc_decode, NULL, NULL };

static int64_t mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool readable(int fd, int timeout_ms) {
    struct pollfd p = { .fd = fd, .events = POLLIN };
    int r;
    do { r = poll(&p, 1, timeout_ms); } while (r < 0 && errno == EINTR);
    return r == 1 && (p.revents & POLLIN);
}

/* An engine with options of `version` (2 or 3). */
static rst_engine *engine_with(const char *archive, uint32_t version, uint32_t delay, uint32_t deadline,
                               bool (*should_save)(rst_engine *, void *)) {
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.archive_path = archive;
    o.autosave_delay_ms = delay;
    o.should_save = should_save;
    o.log = collect_log;
    if (version >= 3) o.signal_deadline_ms = deadline;
    o.version = version;
    rst_engine *e = NULL;
    CHECK_OK(rst_engine_create(&o, &e));
    return e;
}

/* The saved n and the reason the restore gives. */
static int64_t saved_n(const char *archive, rst_restore_reason *reason) {
    rst_engine *e = new_engine(archive);
    doc d = { 0, -1 };
    CHECK_OK(rst_register_object(e, "doc", NULL, NULL, &doc_callbacks, &d, NULL));
    CHECK_OK(rst_restore(e));
    if (reason) *reason = rst_last_restore_reason(e);
    rst_engine_destroy(e);
    return d.restored;
}

/* Waits for `pid` at most `limit_ms`; on timeout kills it (SIGKILL) and fails. */
static int wait_child(pid_t pid, int limit_ms, int64_t *elapsed_ms) {
    int64_t start = mono_ms();
    int status = 0;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) break;
        CHECK(w == 0 || (w < 0 && errno == EINTR));
        if (mono_ms() - start > limit_ms) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            CHECK_MSG(false, "the child did not end within %d ms (a deadlock or a lost signal)", limit_ms);
        }
        usleep(2000);
    }
    if (elapsed_ms) *elapsed_ms = mono_ms() - start;
    return status;
}

static void expect_signaled(int status, int sig) {
    CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == sig,
              "child ended with status 0x%x (exited: %d code %d; signaled: %d sig %d), expected signal %d",
              status, WIFEXITED(status), WIFEXITED(status) ? WEXITSTATUS(status) : -1,
              WIFSIGNALED(status), WIFSIGNALED(status) ? WTERMSIG(status) : -1, sig);
}

/* ---- a previous handler that exit()s, and an atexit that flushes and destroys ---- */
static rst_engine *child_engine;
static void exiting_handler(int sig) { (void)sig; exit(7); }   /* what curses programs do */
static void flush_and_destroy(void) {
    rst_flush(child_engine);
    rst_engine_destroy(child_engine);
    child_engine = NULL;
}

static int test_exit_handler(const char *dir) {
    for (int use_thread = 0; use_thread < 2; use_thread++) {
        char *path = xasprintf("%s/exit%d.rst", dir, use_thread);
        int ready[2];
        CHECK(pipe(ready) == 0);
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
            close(ready[0]);
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = exiting_handler;
            sigemptyset(&sa.sa_mask);
            CHECK(sigaction(SIGTERM, &sa, NULL) == 0);
            child_engine = engine_with(path, 3, 0, 0, NULL);
            static doc d;
            d.n = 1;
            CHECK_OK(rst_register_object(child_engine, "doc", NULL, NULL, &doc_callbacks, &d, NULL));
            CHECK_OK(rst_save(child_engine));
            atexit(flush_and_destroy);
            int fd = -1;
            if (use_thread) CHECK_OK(rst_start_autosave_thread(child_engine));
            else fd = rst_event_fd(child_engine);
            int term = SIGTERM;
            CHECK_OK(rst_save_on_signals(child_engine, &term, 1));
            d.n = 2;
            CHECK_OK(rst_mark_dirty(child_engine, NULL));
            CHECK(write(ready[1], "r", 1) == 1);
            for (;;) {
                if (use_thread) { pause(); continue; }
                if (readable(fd, -1)) rst_dispatch(child_engine);
            }
        }
        close(ready[1]);
        char c;
        CHECK(read(ready[0], &c, 1) == 1);
        close(ready[0]);
        CHECK(kill(pid, SIGTERM) == 0);
        int status = wait_child(pid, 10000, NULL);
        /* The previous handler ran (exit(7)) and the atexit completed. */
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 7, "child status 0x%x", status);
        rst_restore_reason reason;
        CHECK_EQ(saved_n(path, &reason), 2);
        CHECK_EQ(reason, RST_REASON_RELAUNCH);   /* the atexit's destroy closed the session */
    }
    DONE();
}

/* ---- the deadline: the host blocked in read() never dispatches ---- */
/* The child saves n = 1, marks n = 2 dirty, claims SIGTERM (the descriptor
 * handed out, never polled) and blocks in read() on a pipe nobody writes. */
static void child_blocked(const char *path, uint32_t version, uint32_t deadline, int ready_fd, int block_fd) {
    rst_engine *e = engine_with(path, version, 0, deadline, NULL);
    static doc d;
    d.n = 1;
    CHECK_OK(rst_register_object(e, "doc", NULL, NULL, &doc_callbacks, &d, NULL));
    CHECK_OK(rst_save(e));
    CHECK(rst_event_fd(e) >= 0);
    int term = SIGTERM;
    CHECK_OK(rst_save_on_signals(e, &term, 1));
    struct sigaction now;
    sigaction(SIGTERM, NULL, &now);
    CHECK(now.sa_flags & SA_RESTART);   /* the host's blocking calls are not interrupted */
    d.n = 2;
    CHECK_OK(rst_mark_dirty(e, NULL));
    CHECK(write(ready_fd, "r", 1) == 1);
    char c;
    ssize_t r = read(block_fd, &c, 1);   /* SA_RESTART: never returns (EINTR) */
    fprintf(stderr, "read returned %zd (errno %d)\n", r, errno);
    _exit(4);
}

static void deadline_case(const char *dir, const char *name, uint32_t version, uint32_t deadline,
                          int64_t at_least_ms, int limit_ms) {
    char *path = xasprintf("%s/%s.rst", dir, name);
    int ready[2], block[2];
    CHECK(pipe(ready) == 0 && pipe(block) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        close(ready[0]); close(block[1]);
        child_blocked(path, version, deadline, ready[1], block[0]);
    }
    close(ready[1]); close(block[0]);
    char c;
    CHECK(read(ready[0], &c, 1) == 1);
    close(ready[0]);
    CHECK(kill(pid, SIGTERM) == 0);
    int64_t elapsed = 0;
    int status = wait_child(pid, limit_ms, &elapsed);
    close(block[1]);
    expect_signaled(status, SIGTERM);
    CHECK_MSG(elapsed >= at_least_ms, "%s: the child ended after %lld ms, before its deadline", name, (long long)elapsed);
    /* The change since the last save is lost; the session stayed open. */
    rst_restore_reason reason;
    CHECK_EQ(saved_n(path, &reason), 1);
    CHECK_EQ(reason, RST_REASON_RECOVER);
}

static int test_deadline(const char *dir) {
    deadline_case(dir, "d300", 3, 300, 250, 5000);
    DONE();
}

/* A version-2 options struct (no signal_deadline_ms) and 0 in version 3:
 * the default 1000 ms. */
static int test_default_deadline(const char *dir) {
    deadline_case(dir, "v2", 2, 0, 900, 6000);
    deadline_case(dir, "v3zero", 3, 0, 900, 6000);
    DONE();
}

/* ---- the save listener ---- */
typedef struct heard { rst_status status; uint32_t trigger; bool other_thread_saved; } heard;
static heard calls[64];
static atomic_int ncalls;
static atomic_int mark_in_listener;
static rst_engine *listened;

static void *buffer_save(void *arg) {
    void *buf = NULL;
    size_t len = 0;
    rst_status s = rst_save_to_buffer(arg, &buf, &len);
    rst_free(buf);
    return (void *)(intptr_t)(s == RST_OK);
}

static void listener(rst_engine *e, rst_status status, uint32_t trigger, void *ctx) {
    CHECK(e == listened);
    CHECK(ctx == &calls);
    int i = ncalls++;
    if (i >= 64) return;
    calls[i].status = status;
    calls[i].trigger = trigger;
    /* No engine lock is held: another thread can save (to a buffer) now. */
    pthread_t t;
    CHECK(pthread_create(&t, NULL, buffer_save, e) == 0);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    void *ok = NULL;
    CHECK_MSG(pthread_timedjoin_np(t, &ok, &until) == 0, "a save on another thread waited for a lock the listener's caller holds");
    calls[i].other_thread_saved = ok != NULL;
    if (mark_in_listener) { mark_in_listener = 0; CHECK_OK(rst_mark_dirty(e, NULL)); }
}

static atomic_int refuse;
static bool maybe_refuse(rst_engine *e, void *ctx) { (void)e; (void)ctx; return !refuse; }

static int test_listener(const char *dir) {
    char *path = xasprintf("%s/l.rst", dir);
    rst_engine *e = engine_with(path, 3, 50, 0, maybe_refuse);
    listened = e;
    doc d = { 1, 0 };
    CHECK_OK(rst_register_object(e, "doc", NULL, NULL, &doc_callbacks, &d, NULL));
    CHECK_ERR(rst_set_save_listener(NULL, listener, NULL), RST_ERR_INVALID, "NULL");
    CHECK_OK(rst_set_save_listener(e, listener, &calls));
    /* rst_save: CALL. */
    CHECK_OK(rst_save(e));
    CHECK_EQ(ncalls, 1);
    CHECK_EQ(calls[0].status, RST_OK);
    CHECK_EQ(calls[0].trigger, RST_SAVE_CALL);
    CHECK(calls[0].other_thread_saved);
    /* rst_flush when clean: nothing saved, nothing heard. */
    CHECK_OK(rst_flush(e));
    CHECK_EQ(ncalls, 1);
    /* Buffer saves are not heard. */
    void *buf = NULL;
    size_t len = 0;
    CHECK_OK(rst_save_to_buffer(e, &buf, &len));
    rst_free(buf);
    CHECK_EQ(ncalls, 1);
    /* rst_flush that saves: CALL; a mark from the listener counts. */
    CHECK_OK(rst_mark_dirty(e, NULL));
    mark_in_listener = 1;
    CHECK_OK(rst_flush(e));
    CHECK_EQ(ncalls, 2);
    CHECK_EQ(calls[1].trigger, RST_SAVE_CALL);
    CHECK(rst_is_dirty(e));
    /* The autosave: AUTO, from rst_dispatch. */
    int fd = rst_event_fd(e);
    int64_t start = mono_ms();
    while (ncalls < 3 && mono_ms() - start < 5000) if (readable(fd, 50)) CHECK_OK(rst_dispatch(e));
    CHECK_EQ(ncalls, 3);
    CHECK_EQ(calls[2].trigger, RST_SAVE_AUTO);
    CHECK_EQ(calls[2].status, RST_OK);
    CHECK(!rst_is_dirty(e));
    /* Failures are heard with their status: rst_save, then an autosave. */
    refuse = 1;
    CHECK_ST(rst_save(e), RST_ERR_REJECTED);
    CHECK_EQ(ncalls, 4);
    CHECK_EQ(calls[3].status, RST_ERR_REJECTED);
    CHECK_EQ(calls[3].trigger, RST_SAVE_CALL);
    CHECK_OK(rst_mark_dirty(e, NULL));
    start = mono_ms();
    while (ncalls < 5 && mono_ms() - start < 5000) if (readable(fd, 50)) (void)rst_dispatch(e);
    CHECK_EQ(ncalls, 5);
    CHECK_EQ(calls[4].status, RST_ERR_REJECTED);
    CHECK_EQ(calls[4].trigger, RST_SAVE_AUTO);
    refuse = 0;
    /* NULL removes it. */
    CHECK_OK(rst_set_save_listener(e, NULL, NULL));
    CHECK_OK(rst_save(e));
    CHECK_EQ(ncalls, 5);
    rst_engine_destroy(e);
    DONE();
}

/* SIGNAL: a forked child's listener writes what it heard to a pipe. */
static int heard_fd = -1;
static void pipe_listener(rst_engine *e, rst_status status, uint32_t trigger, void *ctx) {
    (void)e; (void)ctx;
    char line[32];
    int n = snprintf(line, sizeof line, "%u:%d\n", trigger, (int)status);
    CHECK(write(heard_fd, line, (size_t)n) == n);
}

static int test_listener_signal(const char *dir) {
    char *path = xasprintf("%s/ls.rst", dir);
    int ready[2], heard[2];
    CHECK(pipe(ready) == 0 && pipe(heard) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        close(ready[0]); close(heard[0]);
        heard_fd = heard[1];
        rst_engine *e = engine_with(path, 3, 0, 0, NULL);
        static doc d;
        d.n = 5;
        CHECK_OK(rst_register_object(e, "doc", NULL, NULL, &doc_callbacks, &d, NULL));
        CHECK_OK(rst_set_save_listener(e, pipe_listener, NULL));
        int fd = rst_event_fd(e);
        int term = SIGTERM;
        CHECK_OK(rst_save_on_signals(e, &term, 1));
        CHECK_OK(rst_mark_dirty(e, NULL));
        CHECK(write(ready[1], "r", 1) == 1);
        for (;;) if (readable(fd, -1)) rst_dispatch(e);
    }
    close(ready[1]); close(heard[1]);
    char c;
    CHECK(read(ready[0], &c, 1) == 1);
    CHECK(kill(pid, SIGTERM) == 0);
    expect_signaled(wait_child(pid, 10000, NULL), SIGTERM);
    char got[64] = { 0 };
    ssize_t n = read(heard[0], got, sizeof got - 1);
    CHECK(n > 0);
    CHECK_STR(got, "2:0\n");   /* RST_SAVE_SIGNAL, RST_OK, once */
    CHECK_EQ(saved_n(path, NULL), 5);
    DONE();
}

/* ---- marks during a restore ---- */
static rst_engine *restoring;
static atomic_int mark_status_bad;
static atomic_int mark_from_other_thread;
static void mark_here(void) { if (rst_mark_dirty(restoring, NULL) != RST_OK) mark_status_bad = 1; }
static void *mark_there(void *arg) { (void)arg; mark_here(); return NULL; }

static void marking_decode(void *inst, rst_coder *c) {
    doc_decode(inst, c);
    mark_here();
    if (mark_from_other_thread) {
        pthread_t t;
        pthread_create(&t, NULL, mark_there, NULL);
        pthread_join(t, NULL);
    }
}
static void marking_finished(void *inst) { (void)inst; mark_here(); }
static const rst_object_callbacks marking_callbacks = { doc_encode, marking_decode, marking_finished, NULL };

static rst_object *marking_factory(rst_engine *e, rst_object *parent, const char *identifier, rst_coder *c, void *ctx) {
    (void)c; (void)ctx;
    mark_here();
    static doc made;
    rst_object *o = NULL;
    rst_register_object(e, identifier, parent, "Doc", &marking_callbacks, &made, &o);
    return o;
}
static void marking_did_finish(rst_engine *e, void *ctx) { (void)e; (void)ctx; mark_here(); }

static int test_restore_marks(const char *dir) {
    char *path = xasprintf("%s/m.rst", dir);
    {
        rst_engine *e = new_engine(path);
        doc a = { 1, 0 }, b = { 2, 0 };
        CHECK_OK(rst_register_object(e, "a", NULL, NULL, &doc_callbacks, &a, NULL));
        CHECK_OK(rst_register_object(e, "b", NULL, "Doc", &doc_callbacks, &b, NULL));
        CHECK_OK(rst_save(e));
        rst_engine_destroy(e);
    }
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.archive_path = path;
    o.did_finish_restoring = marking_did_finish;
    CHECK_OK(rst_engine_create(&o, &restoring));
    doc a = { 0, 0 };
    CHECK_OK(rst_register_object(restoring, "a", NULL, NULL, &marking_callbacks, &a, NULL));
    CHECK_OK(rst_register_class(restoring, "Doc", marking_factory, NULL));
    /* Marks from the factory, decode, finished and did_finish_restoring: ignored. */
    CHECK_OK(rst_restore(restoring));
    CHECK_EQ(a.restored, 1);
    CHECK(rst_find_object(restoring, "b") != NULL);
    CHECK(!mark_status_bad);
    CHECK_MSG(!rst_is_dirty(restoring), "a restore by itself made the engine dirty");
    /* After the restore, a mark counts again. */
    CHECK_OK(rst_mark_dirty(restoring, NULL));
    CHECK(rst_is_dirty(restoring));
    CHECK_OK(rst_flush(restoring));
    CHECK(!rst_is_dirty(restoring));
    /* A mark from another thread during the restore counts. */
    mark_from_other_thread = 1;
    CHECK_OK(rst_restore(restoring));
    CHECK(!mark_status_bad);
    CHECK(rst_is_dirty(restoring));
    rst_engine_destroy(restoring);
    DONE();
}

/* ---- repeated autosave failures: logged once ---- */
static int count_lines(const char *prefix, const char *fragment) {
    int n = 0;
    for (const char *line = log_text; *line; ) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char buf[2048];
        size_t k = len < sizeof buf - 1 ? len : sizeof buf - 1;
        memcpy(buf, line, k);
        buf[k] = 0;
        if (strncmp(buf, prefix, strlen(prefix)) == 0 && strstr(buf, fragment)) n++;
        line = end ? end + 1 : line + len;
    }
    return n;
}

/* Dispatches for `ms`, returns the failures seen. */
static int dispatch_for(rst_engine *e, int fd, int64_t ms) {
    int failed = 0;
    int64_t start = mono_ms();
    while (mono_ms() - start < ms) {
        if (!readable(fd, 10)) continue;
        if (rst_dispatch(e) != RST_OK) failed++;
    }
    return failed;
}

static int warnings_or_worse(const char *fragment) {
    return count_lines("[2]", fragment) + count_lines("[3]", fragment);
}

static int test_repeated_failures(const char *dir) {
    char *path = xasprintf("%s/f.rst", dir);
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.archive_path = path;
    o.autosave_delay_ms = 10;
    o.autosave_max_delay_ms = 20;
    o.should_save = maybe_refuse;
    o.log = collect_log;
    rst_engine *e = NULL;
    CHECK_OK(rst_engine_create(&o, &e));
    doc d = { 3, 0 };
    CHECK_OK(rst_register_object(e, "doc", NULL, NULL, &doc_callbacks, &d, NULL));
    int fd = rst_event_fd(e);
    /* should_save keeps refusing: many failures, one WARNING. */
    refuse = 1;
    CHECK_OK(rst_mark_dirty(e, NULL));
    int failed = dispatch_for(e, fd, 600);
    CHECK_MSG(failed >= 5, "only %d failures", failed);
    CHECK_MSG(warnings_or_worse("autosave") == 1, "expected one warning:\n%s", log_text);
    CHECK_EQ(count_lines("[2]", "should_save returned false"), 1);
    CHECK(count_lines("[0]", "should_save returned false") >= failed - 1);   /* the rest quietly */
    /* A different failure: logged at once at WARNING, then quiet again. */
    refuse = 0;
    encode_failure = "the disk is on fire";
    failed = dispatch_for(e, fd, 400);
    CHECK_MSG(failed >= 3, "only %d failures", failed);
    CHECK_MSG(warnings_or_worse("autosave") == 2, "expected a second warning:\n%s", log_text);
    CHECK_EQ(count_lines("[2]", "the disk is on fire"), 1);
    /* Success after failures: INFO at once. */
    encode_failure = NULL;
    int64_t start = mono_ms();
    while (rst_is_dirty(e) && mono_ms() - start < 5000) if (readable(fd, 10)) (void)rst_dispatch(e);
    CHECK(!rst_is_dirty(e));
    CHECK_EQ(count_lines("[1]", "autosave succeeded again"), 1);
    CHECK_EQ(warnings_or_worse("autosave"), 2);
    /* The same failure as before the success is a new first failure. */
    refuse = 1;
    CHECK_OK(rst_mark_dirty(e, NULL));
    failed = dispatch_for(e, fd, 300);
    CHECK(failed >= 2);
    CHECK_EQ(count_lines("[2]", "should_save returned false"), 2);
    refuse = 0;
    rst_engine_destroy(e);
    DONE();
}

int main(int argc, char **argv) {
    check_prog = "saving_moments";
    if (argc < 3) { fprintf(stderr, "usage: saving_moments MODE DIR\n"); return 2; }
    const char *m = argv[1], *dir = argv[2];
    if (strcmp(m, "exit-handler") == 0) return test_exit_handler(dir);
    if (strcmp(m, "deadline") == 0) return test_deadline(dir);
    if (strcmp(m, "default-deadline") == 0) return test_default_deadline(dir);
    if (strcmp(m, "listener") == 0) return test_listener(dir);
    if (strcmp(m, "listener-signal") == 0) return test_listener_signal(dir);
    if (strcmp(m, "restore-marks") == 0) return test_restore_marks(dir);
    if (strcmp(m, "repeated-failures") == 0) return test_repeated_failures(dir);
    fprintf(stderr, "unknown mode %s\n", m);
    return 2;
}
