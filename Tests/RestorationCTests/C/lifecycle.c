/* lifecycle.c: when to save (docs/LIFECYCLE.md) through the C ABI — options version 2, dirty
 * tracking, the debounced autosave and its ceiling, retries with backoff,
 * the pollable descriptor, rst_next_timeout_ms, the autosave thread, and
 * saves on SIGTERM (a forked child ends by SIGTERM with its new state
 * saved; two engines on one signal).
 *
 *   lifecycle options|dirty|debounce|ceiling|retry|fd|thread|signals|sigterm|two-engines DIR
 *
 * Timing margins hold on a loaded 2-core machine: "no save before" checks
 * use 3/4 of the delay, "a save within" checks allow seconds. */
#include "check.h"
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/wait.h>

/* ---- one object: an integer "n"; counts encodes and their threads ---- */
typedef struct doc { int64_t n; int64_t restored; } doc;
static atomic_int encodes;
static pthread_t encode_thread;
static atomic_int encode_on_other_thread;
static pthread_t main_thread;

static void doc_encode(void *inst, rst_coder *c) {
    doc *d = inst;
    encodes++;
    encode_thread = pthread_self();
    if (!pthread_equal(pthread_self(), main_thread)) encode_on_other_thread = 1;
    rst_encode_int(c, "n", d->n);
}
static void doc_decode(void *inst, rst_coder *c) {
    doc *d = inst;
    rst_decode_int(c, "n", &d->restored);
}
static const rst_object_callbacks doc_callbacks = { doc_encode, doc_decode, NULL, NULL };

static rst_engine *engine_v2(const char *archive, uint32_t delay, uint32_t max_delay,
                             bool (*should_save)(rst_engine *, void *)) {
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.archive_path = archive;
    o.autosave_delay_ms = delay;
    o.autosave_max_delay_ms = max_delay;
    o.should_save = should_save;
    o.log = collect_log;
    rst_engine *e = NULL;
    CHECK_OK(rst_engine_create(&o, &e));
    return e;
}

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

static int64_t saved_n(const char *archive) {
    rst_engine *e = new_engine(archive);
    doc d = { 0, -1 };
    CHECK_OK(rst_register_object(e, "doc", NULL, NULL, &doc_callbacks, &d, NULL));
    CHECK_OK(rst_restore(e));
    rst_engine_destroy(e);
    return d.restored;
}

/* ---- options ---- */
static int test_options(const char *dir) {
    char *path = xasprintf("%s/o.rst", dir);
    rst_engine *e = NULL;
    CHECK_EQ(RST_ENGINE_OPTIONS_VERSION, 3);
    /* A version 1 struct, exactly as long as version 1 was: nothing past log is read. */
    size_t v1 = offsetof(rst_engine_options, autosave_delay_ms);
    CHECK(v1 < sizeof(rst_engine_options));
    rst_engine_options *o1 = malloc(v1);
    memset(o1, 0, v1);
    o1->version = 1;
    o1->archive_path = path;
    CHECK_OK(rst_engine_create(o1, &e));
    CHECK(!rst_is_dirty(e));
    CHECK_EQ(rst_next_timeout_ms(e), -1);
    CHECK_OK(rst_mark_dirty(e, NULL));
    CHECK_EQ(rst_next_timeout_ms(e), -1);   /* no autosave: nothing due */
    rst_engine_destroy(e);
    free(o1);
    /* rst_engine_options_init(v1) clears only version 1's members. */
    rst_engine_options o;
    memset(&o, 0xAB, sizeof o);
    CHECK_OK(rst_engine_options_init(&o, 1));
    CHECK_EQ(o.version, 1);
    CHECK(o.archive_path == NULL && o.log == NULL);
    CHECK_EQ(o.autosave_delay_ms, 0xABABABABu);
    CHECK_OK(rst_engine_options_init(&o, 2));
    CHECK(o.autosave_delay_ms == 0 && o.autosave_max_delay_ms == 0 && o.generations == 0 && o.carry_saves == 0);
    /* Version 2 clears nothing of version 3's members. */
    CHECK_EQ(o.budget_policy, 0xABABABABu);
    CHECK_OK(rst_engine_options_init(&o, 3));
    CHECK(o.size_budget == 0 && o.budget_policy == 0 && o.encryption_key == NULL && o.signal_deadline_ms == 0);
    CHECK_ERR(rst_engine_options_init(&o, 4), RST_ERR_VERSION, "version 4");
    /* A version 2 struct, exactly as long as version 2 was: nothing past carry_saves is read. */
    size_t v2 = offsetof(rst_engine_options, size_budget);
    rst_engine_options *o2 = malloc(v2);
    memset(o2, 0, v2);
    o2->version = 2;
    o2->archive_path = path;
    CHECK_OK(rst_engine_create(o2, &e));
    rst_engine_destroy(e);
    free(o2);
    /* The initializer fills the new members with 0. */
    rst_engine_options init = RST_ENGINE_OPTIONS_INIT;
    CHECK(init.version == 3 && init.generations == 0 && init.autosave_delay_ms == 0 && init.size_budget == 0);
    init.archive_path = path;
    init.budget_policy = 3;
    CHECK_ERR(rst_engine_create(&init, &e), RST_ERR_INVALID, "budget_policy");
    init.budget_policy = RST_BUDGET_TRIM;
    CHECK_OK(rst_engine_create(&init, &e));
    rst_engine_destroy(e);
    init.budget_policy = 0;
    init.archive_path = NULL;
    /* Limits. */
    init.archive_path = path;
    init.generations = 17;
    CHECK_ERR(rst_engine_create(&init, &e), RST_ERR_INVALID, "generations");
    init.generations = 16;
    CHECK_OK(rst_engine_create(&init, &e));
    rst_engine_destroy(e);
    init.carry_saves = UINT32_MAX;            /* carry always (docs/EVOLUTION.md) */
    CHECK_OK(rst_engine_create(&init, &e));
    rst_engine_destroy(e);
    init.carry_saves = 0;
    init.autosave_delay_ms = 500;
    init.autosave_max_delay_ms = 100;
    CHECK_ERR(rst_engine_create(&init, &e), RST_ERR_INVALID, "autosave_max_delay_ms");
    init.autosave_max_delay_ms = 0;
    init.archive_path = NULL;
    CHECK_ERR(rst_engine_create(&init, &e), RST_ERR_INVALID, "archive_path");
    init.autosave_delay_ms = 0;
    init.generations = 2;
    CHECK_ERR(rst_engine_create(&init, &e), RST_ERR_INVALID, "archive_path");
    /* The version is 1.2.0 and the names are the enumerators'. */
    CHECK_STR(rst_version(), "1.2.0");
    CHECK_EQ(RST_VERSION_MINOR, 2);
    CHECK_STR(rst_restore_reason_name(RST_REASON_RECOVER), "RST_REASON_RECOVER");
    CHECK_STR(rst_restore_reason_name(RST_REASON_FIRST_LAUNCH), "RST_REASON_FIRST_LAUNCH");
    CHECK_STR(rst_restore_reason_name(RST_REASON_RELAUNCH), "RST_REASON_RELAUNCH");
    CHECK_STR(rst_restore_reason_name(RST_REASON_BUFFER), "RST_REASON_BUFFER");
    CHECK_STR(rst_restore_reason_name(RST_REASON_FALLBACK), "RST_REASON_FALLBACK");
    CHECK_STR(rst_restore_reason_name((rst_restore_reason)99), "RST_REASON_UNKNOWN");
    /* NULL engines. */
    CHECK_ERR(rst_mark_dirty(NULL, NULL), RST_ERR_INVALID, "NULL");
    CHECK(!rst_is_dirty(NULL));
    CHECK_ERR(rst_flush(NULL), RST_ERR_INVALID, "NULL");
    CHECK_EQ(rst_event_fd(NULL), -1);
    CHECK_ERR(rst_dispatch(NULL), RST_ERR_INVALID, "NULL");
    CHECK_EQ(rst_next_timeout_ms(NULL), -1);
    CHECK_ERR(rst_start_autosave_thread(NULL), RST_ERR_INVALID, "NULL");
    CHECK_ERR(rst_save_on_signals(NULL, NULL, 0), RST_ERR_INVALID, "NULL");
    CHECK_EQ(rst_last_restore_reason(NULL), RST_REASON_FIRST_LAUNCH);
    CHECK_ERR(rst_restore_generation(NULL, 1), RST_ERR_INVALID, "NULL");
    /* Buffers only: nothing to save to. */
    rst_engine *b = new_engine(NULL);
    CHECK_EQ(rst_event_fd(b), -1);
    CHECK_LAST_ERROR("archive_path");
    CHECK_ERR(rst_start_autosave_thread(b), RST_ERR_INVALID, "archive_path");
    rst_engine_destroy(b);
    DONE();
}

/* ---- dirty, flush ---- */
static int test_dirty(const char *dir) {
    char *path = xasprintf("%s/d.rst", dir);
    rst_engine *e = engine_v2(path, 0, 0, NULL);
    rst_engine *other = new_engine(NULL);
    doc d = { 7, 0 };
    rst_object *o = NULL, *foreign = NULL;
    CHECK_OK(rst_register_object(e, "doc", NULL, NULL, &doc_callbacks, &d, &o));
    CHECK_OK(rst_register_object(other, "x", NULL, NULL, NULL, NULL, &foreign));
    CHECK(!rst_is_dirty(e));
    CHECK_OK(rst_flush(e));                 /* clean: nothing written */
    CHECK(!file_exists(path));
    CHECK_EQ(encodes, 0);
    CHECK_ERR(rst_mark_dirty(e, foreign), RST_ERR_INVALID, "not registered in this engine");
    CHECK(!rst_is_dirty(e));
    CHECK_OK(rst_mark_dirty(e, o));
    CHECK(rst_is_dirty(e));
    CHECK_OK(rst_flush(e));
    CHECK(!rst_is_dirty(e));
    CHECK(file_exists(path));
    CHECK_EQ(encodes, 1);
    CHECK_OK(rst_flush(e));
    CHECK_EQ(encodes, 1);
    /* rst_save clears it too; a save to a buffer does not. */
    CHECK_OK(rst_mark_dirty(e, NULL));
    void *buf = NULL; size_t len = 0;
    CHECK_OK(rst_save_to_buffer(e, &buf, &len));
    rst_free(buf);
    CHECK(rst_is_dirty(e));
    CHECK_OK(rst_save(e));
    CHECK(!rst_is_dirty(e));
    rst_engine_destroy(other);
    rst_engine_destroy(e);
    DONE();
}

/* Polls the descriptor and dispatches until `encodes` reaches `want` or
 * `limit_ms` passes; returns the monotonic time of that encode (-1: none). */
static int64_t loop_until(rst_engine *e, int fd, int want, int64_t limit_ms, int64_t mark_every_ms) {
    int64_t start = mono_ms(), last_mark = start;
    while (mono_ms() - start < limit_ms) {
        int wait = mark_every_ms > 0 ? (int)mark_every_ms : 20;
        if (readable(fd, wait)) {
            rst_dispatch(e);
            if (encodes >= want) return mono_ms();
        }
        if (mark_every_ms > 0 && mono_ms() - last_mark >= mark_every_ms) {
            CHECK_OK(rst_mark_dirty(e, NULL));
            last_mark = mono_ms();
        }
    }
    return -1;
}

/* ---- debounce ---- */
static int test_debounce(const char *dir) {
    char *path = xasprintf("%s/b.rst", dir);
    rst_engine *e = engine_v2(path, 200, 10000, NULL);
    doc d = { 1, 0 };
    CHECK_OK(rst_register_object(e, "doc", NULL, NULL, &doc_callbacks, &d, NULL));
    int fd = rst_event_fd(e);
    CHECK(fd >= 0);
    CHECK_EQ(rst_event_fd(e), fd);
    CHECK(!readable(fd, 0));
    d.n = 2;
    int64_t marked = mono_ms();
    CHECK_OK(rst_mark_dirty(e, NULL));
    int64_t t = rst_next_timeout_ms(e);
    CHECK_MSG(t > 0 && t <= 200, "next timeout %lld", (long long)t);
    /* Not before 150 ms. */
    while (mono_ms() - marked < 150) {
        CHECK_MSG(!readable(fd, 10) || mono_ms() - marked >= 150, "readable after %lld ms", (long long)(mono_ms() - marked));
    }
    CHECK_EQ(encodes, 0);
    /* Within 2 s. */
    int64_t at = loop_until(e, fd, 1, 2000, 0);
    CHECK_MSG(at >= 0, "no autosave within 2 s");
    CHECK_MSG(at - marked >= 150, "saved after %lld ms", (long long)(at - marked));
    CHECK(!rst_is_dirty(e));
    CHECK(!readable(fd, 0));
    CHECK_EQ(rst_next_timeout_ms(e), -1);
    CHECK_EQ(saved_n(path), 2);
    /* A dispatch with nothing to do does nothing. */
    CHECK_OK(rst_dispatch(e));
    CHECK_EQ(encodes, 1);
    /* Each mark pushes the save back: marks every 50 ms for 1 s, no save. */
    int64_t begin = mono_ms();
    while (mono_ms() - begin < 1000) {
        CHECK_OK(rst_mark_dirty(e, NULL));
        if (readable(fd, 50)) rst_dispatch(e);
    }
    CHECK_MSG(encodes == 1, "saved while marks kept coming every 50 ms (delay 200 ms): %d encodes", (int)encodes);
    CHECK(loop_until(e, fd, 2, 2000, 0) >= 0);
    /* A flush makes the descriptor unreadable and the timeout -1 at once. */
    CHECK_OK(rst_mark_dirty(e, NULL));
    CHECK(rst_next_timeout_ms(e) >= 0);
    CHECK_OK(rst_flush(e));
    CHECK_EQ(rst_next_timeout_ms(e), -1);
    CHECK(!readable(fd, 300));
    rst_engine_destroy(e);
    DONE();
}

/* ---- ceiling ---- */
static int test_ceiling(const char *dir) {
    char *path = xasprintf("%s/c.rst", dir);
    rst_engine *e = engine_v2(path, 200, 600, NULL);
    doc d = { 1, 0 };
    CHECK_OK(rst_register_object(e, "doc", NULL, NULL, &doc_callbacks, &d, NULL));
    int fd = rst_event_fd(e);
    int64_t first = mono_ms();
    CHECK_OK(rst_mark_dirty(e, NULL));
    /* Marks every 50 ms: the debounce alone never fires; the ceiling (600 ms) does. */
    int64_t at = loop_until(e, fd, 1, 3000, 50);
    CHECK_MSG(at >= 0, "no save within 3 s under continuous marks");
    CHECK_MSG(at - first >= 450, "saved after %lld ms, before the ceiling", (long long)(at - first));
    /* The default ceiling is 10 × the delay. */
    rst_engine *e2 = engine_v2(xasprintf("%s/c2.rst", dir), 100, 0, NULL);
    CHECK_OK(rst_mark_dirty(e2, NULL));
    int64_t t = rst_next_timeout_ms(e2);
    CHECK(t > 0 && t <= 100);
    rst_engine_destroy(e2);
    rst_engine_destroy(e);
    DONE();
}

/* ---- retry with backoff ---- */
static atomic_int refusals;
static int64_t attempts_at[16];
static atomic_int attempts;
static bool refuse_three(rst_engine *e, void *ctx) {
    (void)e; (void)ctx;
    int i = attempts++;
    if (i < 16) attempts_at[i] = mono_ms();
    if (refusals < 3) { refusals++; return false; }
    return true;
}

static int test_retry(const char *dir) {
    char *path = xasprintf("%s/r.rst", dir);
    rst_engine *e = engine_v2(path, 100, 400, refuse_three);
    doc d = { 5, 0 };
    CHECK_OK(rst_register_object(e, "doc", NULL, NULL, &doc_callbacks, &d, NULL));
    int fd = rst_event_fd(e);
    CHECK_OK(rst_mark_dirty(e, NULL));
    int failed = 0;
    int64_t start = mono_ms();
    while (encodes == 0 && mono_ms() - start < 5000) {
        if (!readable(fd, 50)) continue;
        rst_status s = rst_dispatch(e);
        if (s != RST_OK) {
            CHECK_EQ(s, RST_ERR_REJECTED);
            failed++;
            CHECK(rst_is_dirty(e));          /* never lost */
            CHECK(!readable(fd, 0));          /* the retry is in the future */
            int64_t t = rst_next_timeout_ms(e);
            CHECK_MSG(t > 0, "retry timeout %lld", (long long)t);
        }
    }
    CHECK_EQ(failed, 3);
    CHECK_EQ(encodes, 1);
    CHECK(!rst_is_dirty(e));
    CHECK_EQ(attempts, 4);
    /* Backoff: 100, 200, 400 (capped) ms between attempts; margins below. */
    CHECK_MSG(attempts_at[1] - attempts_at[0] >= 90, "first retry after %lld ms", (long long)(attempts_at[1] - attempts_at[0]));
    CHECK_MSG(attempts_at[2] - attempts_at[1] >= 180, "second retry after %lld ms", (long long)(attempts_at[2] - attempts_at[1]));
    CHECK_MSG(attempts_at[3] - attempts_at[2] >= 370, "third retry after %lld ms", (long long)(attempts_at[3] - attempts_at[2]));
    /* The first failure logged at WARNING with its sentence; the identical
     * ones after it quietly (DEBUG, with their wait); the success at INFO. */
    int warnings = 0;
    for (const char *p = log_text; (p = strstr(p, "[2] autosave failed (RST_ERR_REJECTED)")) != NULL; p++) warnings++;
    CHECK_MSG(warnings == 1, "warnings: %d\n%s", warnings, log_text);
    CHECK(strstr(log_text, "should_save returned false") != NULL);
    CHECK(strstr(log_text, "retrying in 400 ms") != NULL);
    CHECK(strstr(log_text, "[1] autosave succeeded again") != NULL);
    CHECK_EQ(saved_n(path), 5);
    rst_engine_destroy(e);
    DONE();
}

/* ---- the descriptor ---- */
static int test_fd(const char *dir) {
    char *path = xasprintf("%s/f.rst", dir);
    rst_engine *e = engine_v2(path, 50, 0, NULL);
    doc d = { 1, 0 };
    CHECK_OK(rst_register_object(e, "doc", NULL, NULL, &doc_callbacks, &d, NULL));
    int fd = rst_event_fd(e);
    CHECK(fd > 2);
    CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);
    CHECK(!readable(fd, 100));               /* clean: never readable */
    CHECK_OK(rst_mark_dirty(e, NULL));
    CHECK(readable(fd, 2000));
    CHECK(readable(fd, 0));                  /* stays readable until dispatched */
    CHECK_EQ(rst_next_timeout_ms(e), 0);
    CHECK_OK(rst_dispatch(e));
    CHECK(!readable(fd, 0));
    CHECK_EQ(encodes, 1);
    /* A save by other means while due: unreadable at once. */
    CHECK_OK(rst_mark_dirty(e, NULL));
    CHECK(readable(fd, 2000));
    CHECK_OK(rst_save(e));
    CHECK(!readable(fd, 0));
    /* A mark from inside an encode callback (during the save) keeps it dirty. */
    rst_engine_destroy(e);
    DONE();
}

/* ---- the thread ---- */
static int test_thread(const char *dir) {
    char *path = xasprintf("%s/t.rst", dir);
    rst_engine *e = engine_v2(path, 100, 0, NULL);
    doc d = { 3, 0 };
    CHECK_OK(rst_register_object(e, "doc", NULL, NULL, &doc_callbacks, &d, NULL));
    CHECK_OK(rst_start_autosave_thread(e));
    CHECK_ERR(rst_start_autosave_thread(e), RST_ERR_STATE, "already running");
    CHECK_OK(rst_mark_dirty(e, NULL));
    int64_t start = mono_ms();
    while (encodes == 0 && mono_ms() - start < 3000) usleep(5000);
    CHECK_MSG(encodes == 1, "the thread did not save within 3 s");
    CHECK(encode_on_other_thread);
    while (rst_is_dirty(e) && mono_ms() - start < 3000) usleep(5000);   /* the write after the encode */
    CHECK(!rst_is_dirty(e));
    CHECK_EQ(saved_n(path), 3);
    /* Dispatching by hand as well is allowed. */
    CHECK_OK(rst_dispatch(e));
    /* Marks from many threads at once while the thread saves. */
    d.n = 4;
    for (int i = 0; i < 200; i++) { CHECK_OK(rst_mark_dirty(e, NULL)); usleep(500); }
    start = mono_ms();
    while (rst_is_dirty(e) && mono_ms() - start < 3000) usleep(5000);
    CHECK(!rst_is_dirty(e));
    /* Destroy joins the thread: no callback after it returns. */
    CHECK_OK(rst_mark_dirty(e, NULL));
    rst_engine_destroy(e);
    int after = encodes;
    usleep(300000);
    CHECK_EQ(encodes, after);
    DONE();
}

/* ---- signal rules ---- */
static int test_signals(const char *dir) {
    char *path = xasprintf("%s/s.rst", dir);
    rst_engine *e = engine_v2(path, 0, 0, NULL);
    int term = SIGTERM, kill9 = SIGKILL, segv = SIGSEGV, bad = 999;
    CHECK_ERR(rst_save_on_signals(e, &term, 1), RST_ERR_STATE, "no dispatcher");
    CHECK_ERR(rst_save_on_signals(e, NULL, 1), RST_ERR_INVALID, "NULL");
    CHECK(rst_event_fd(e) >= 0);
    CHECK_ERR(rst_save_on_signals(e, &kill9, 1), RST_ERR_INVALID, "cannot be claimed");
    CHECK_ERR(rst_save_on_signals(e, &segv, 1), RST_ERR_INVALID, "cannot be claimed");
    CHECK_ERR(rst_save_on_signals(e, &bad, 1), RST_ERR_INVALID, "cannot be claimed");
    CHECK_OK(rst_save_on_signals(e, NULL, 0));
    /* Claiming installs a handler; destroy gives the old disposition back. */
    struct sigaction before, during, after;
    sigaction(SIGUSR1, NULL, &before);
    int usr1 = SIGUSR1;
    CHECK_OK(rst_save_on_signals(e, &usr1, 1));
    sigaction(SIGUSR1, NULL, &during);
    CHECK(during.sa_handler != before.sa_handler);
    rst_engine *e2 = engine_v2(xasprintf("%s/s2.rst", dir), 0, 0, NULL);
    CHECK_OK(rst_start_autosave_thread(e2));
    CHECK_OK(rst_save_on_signals(e2, &usr1, 1));
    rst_engine_destroy(e);
    sigaction(SIGUSR1, NULL, &after);
    CHECK(after.sa_handler == during.sa_handler);   /* e2 still holds it */
    rst_engine_destroy(e2);
    sigaction(SIGUSR1, NULL, &after);
    CHECK(after.sa_handler == before.sa_handler);
    /* A loop that waits as rst_next_timeout_ms() says is a dispatcher too
     * (a curses loop's timeout()); the handler has SA_RESTART. */
    rst_engine *e3 = engine_v2(xasprintf("%s/s3.rst", dir), 0, 0, NULL);
    CHECK_ERR(rst_save_on_signals(e3, &usr1, 1), RST_ERR_STATE, "no dispatcher");
    CHECK_EQ(rst_next_timeout_ms(e3), -1);
    CHECK_OK(rst_save_on_signals(e3, &usr1, 1));
    sigaction(SIGUSR1, NULL, &during);
    CHECK(during.sa_flags & SA_RESTART);
    rst_engine_destroy(e3);
    DONE();
}

/* ---- SIGTERM in a forked child ---- */
/* The child: state n = 1 saved, then n = 2 marked dirty (no autosave), then
 * it serves its loop (fd or thread) until the parent's SIGTERM. */
static void child_serve(const char *path, int ready_fd, bool use_thread, int64_t n) {
    rst_engine *e = engine_v2(path, 0, 0, NULL);
    static doc d;
    d.n = n - 1;
    CHECK_OK(rst_register_object(e, "doc", NULL, NULL, &doc_callbacks, &d, NULL));
    CHECK_OK(rst_save(e));
    int fd = -1;
    if (use_thread) CHECK_OK(rst_start_autosave_thread(e));
    else fd = rst_event_fd(e);
    int sigs[3] = { SIGTERM, SIGINT, SIGHUP };
    CHECK_OK(rst_save_on_signals(e, sigs, 3));
    d.n = n;
    CHECK_OK(rst_mark_dirty(e, NULL));
    CHECK(write(ready_fd, "r", 1) == 1);
    for (;;) {
        if (use_thread) { pause(); continue; }
        if (readable(fd, -1)) rst_dispatch(e);
    }
}

static void expect_killed_by(pid_t pid, int sig) {
    int status = 0;
    pid_t w;
    do { w = waitpid(pid, &status, 0); } while (w < 0 && errno == EINTR);
    CHECK_EQ(w, pid);
    CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == sig,
              "child ended with status 0x%x (exited: %d code %d; signaled: %d sig %d), expected signal %d",
              status, WIFEXITED(status), WIFEXITED(status) ? WEXITSTATUS(status) : -1,
              WIFSIGNALED(status), WIFSIGNALED(status) ? WTERMSIG(status) : -1, sig);
}

static int test_sigterm(const char *dir) {
    for (int mode = 0; mode < 2; mode++) {
        char *path = xasprintf("%s/term%d.rst", dir, mode);
        int p[2];
        CHECK(pipe(p) == 0);
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) { close(p[0]); child_serve(path, p[1], mode == 1, 2); _exit(3); }
        close(p[1]);
        char c;
        CHECK(read(p[0], &c, 1) == 1);
        close(p[0]);
        CHECK(kill(pid, SIGTERM) == 0);
        expect_killed_by(pid, SIGTERM);
        CHECK_EQ(saved_n(path), 2);
        /* The signal ended the process as SIG_DFL would: the session was
         * closed after the save, so the next launch is a relaunch. */
        rst_engine *e = new_engine(path);
        CHECK_OK(rst_restore(e));
        CHECK_EQ(rst_last_restore_reason(e), RST_REASON_RELAUNCH);
        rst_engine_destroy(e);
    }
    /* SIGINT too. */
    char *path = xasprintf("%s/int.rst", dir);
    int p[2];
    CHECK(pipe(p) == 0);
    pid_t pid = fork();
    if (pid == 0) { close(p[0]); child_serve(path, p[1], false, 9); _exit(3); }
    close(p[1]);
    char c;
    CHECK(read(p[0], &c, 1) == 1);
    CHECK(kill(pid, SIGINT) == 0);
    expect_killed_by(pid, SIGINT);
    CHECK_EQ(saved_n(path), 9);
    DONE();
}

/* ---- two engines on one signal: one by fd, one by its thread ---- */
static int test_two_engines(const char *dir) {
    char *a = xasprintf("%s/a.rst", dir), *b = xasprintf("%s/b.rst", dir);
    int p[2];
    CHECK(pipe(p) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        rst_engine *eb = engine_v2(b, 0, 0, NULL);
        static doc db;
        db.n = 20;
        CHECK_OK(rst_register_object(eb, "doc", NULL, NULL, &doc_callbacks, &db, NULL));
        CHECK_OK(rst_start_autosave_thread(eb));
        int term = SIGTERM;
        CHECK_OK(rst_save_on_signals(eb, &term, 1));
        CHECK_OK(rst_mark_dirty(eb, NULL));
        child_serve(a, p[1], false, 10);   /* engine a: the fd loop */
        _exit(3);
    }
    close(p[1]);
    char c;
    CHECK(read(p[0], &c, 1) == 1);
    CHECK(kill(pid, SIGTERM) == 0);
    expect_killed_by(pid, SIGTERM);
    CHECK_EQ(saved_n(a), 10);
    CHECK_EQ(saved_n(b), 20);
    DONE();
}

int main(int argc, char **argv) {
    check_prog = "lifecycle";
    main_thread = pthread_self();
    if (argc < 3) { fprintf(stderr, "usage: lifecycle MODE DIR\n"); return 2; }
    const char *m = argv[1], *dir = argv[2];
    if (strcmp(m, "options") == 0) return test_options(dir);
    if (strcmp(m, "dirty") == 0) return test_dirty(dir);
    if (strcmp(m, "debounce") == 0) return test_debounce(dir);
    if (strcmp(m, "ceiling") == 0) return test_ceiling(dir);
    if (strcmp(m, "retry") == 0) return test_retry(dir);
    if (strcmp(m, "fd") == 0) return test_fd(dir);
    if (strcmp(m, "thread") == 0) return test_thread(dir);
    if (strcmp(m, "signals") == 0) return test_signals(dir);
    if (strcmp(m, "sigterm") == 0) return test_sigterm(dir);
    if (strcmp(m, "two-engines") == 0) return test_two_engines(dir);
    fprintf(stderr, "unknown mode %s\n", m);
    return 2;
}
