/* killpoints.c: process-death testing from inside a program (library 1.2).
 *
 *   killpoints points DIR   RESTORATION_KILL_AT: each point kills the process
 *                           (SIGKILL) where it should, the archive afterwards is
 *                           the old one (or the new one after save-replaced),
 *                           the next restore reads RECOVER; ":N" counts; buffer
 *                           saves and restores reach none; an invalid value is
 *                           logged once and ignored
 *   killpoints exits DIR    RESTORATION_TEST_EXIT: the report's fields, exit 0
 *                           right after the first file restore (nothing after it
 *                           runs), a restore that found nothing, no report file
 *                           (a warning, the program goes on), roundtrip's
 *                           <report>.rst, buffer restores fire nothing
 *
 * The parent never creates an engine: the variables are read once per
 * process, so every engine lives in a forked child that sets them first.
 */
#include "check.h"
#include <signal.h>
#include <sys/wait.h>

static int64_t value;          /* the state of "root" */
static int64_t decoded = -1;   /* what its decode read */
static bool with_extra;        /* also register "root/extra" */
static const char *dir;
static char *archive;
static char *finished_flag;
static char logbuf[8192];

static void enc(void *i, rst_coder *c) { (void)i; CHECK_OK(rst_encode_int(c, "value", value)); }
static void dec(void *i, rst_coder *c) { (void)i; CHECK_OK(rst_decode_int(c, "value", &decoded)); }
static const rst_object_callbacks cb = { enc, dec, NULL, NULL };

static void log_cb(rst_engine *e, int level, const char *m, void *ctx) {
    (void)e; (void)ctx;
    if (level < RST_LOG_WARNING) return;
    size_t n = strlen(logbuf);
    snprintf(logbuf + n, sizeof logbuf - n, "%s\n", m);
}
static void did_finish(rst_engine *e, void *ctx) {
    (void)e; (void)ctx;
    write_file(finished_flag, "1", 1);
}

static rst_engine *engine(const char *path, uint32_t autosave_ms) {
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.archive_path = path;
    o.log = log_cb;
    o.did_finish_restoring = did_finish;
    o.autosave_delay_ms = autosave_ms;
    rst_engine *e = NULL;
    CHECK_OK(rst_engine_create(&o, &e));
    rst_object *root = NULL;
    CHECK_OK(rst_register_object(e, "root", NULL, "Root", &cb, NULL, &root));
    if (with_extra) CHECK_OK(rst_register_object(e, "extra", root, "Extra", &cb, NULL, NULL));
    return e;
}

/* Runs body in a child with the variables set (NULL: unset); returns the wait status. */
static int in_child(const char *kill_at, const char *test_exit, const char *report, void (*body)(void)) {
    fflush(stdout); fflush(stderr);
    pid_t p = fork();
    CHECK(p >= 0);
    if (p == 0) {
        unsetenv("RESTORATION_KILL_AT"); unsetenv("RESTORATION_TEST_EXIT"); unsetenv("RESTORATION_TEST_REPORT");
        if (kill_at) setenv("RESTORATION_KILL_AT", kill_at, 1);
        if (test_exit) setenv("RESTORATION_TEST_EXIT", test_exit, 1);
        if (report) setenv("RESTORATION_TEST_REPORT", report, 1);
        body();
        fflush(stdout); fflush(stderr);
        _exit(0);
    }
    int st = 0;
    while (waitpid(p, &st, 0) < 0 && errno == EINTR) {}
    return st;
}
static bool KILLED(int st) { return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL; }
static bool EXITED0(int st) { return WIFEXITED(st) && WEXITSTATUS(st) == 0; }

/* ---- child bodies ---- */

static void save_value(void) {   /* as a program does: restore at start, save later */
    rst_engine *e = engine(archive, 0);
    int64_t v = value;
    rst_restore(e);
    value = v;
    CHECK_OK(rst_save(e));
    rst_engine_destroy(e);
}
static int64_t next_values[3];
static void save_three(void) {   /* three saves: next_values[0..2] */
    rst_engine *e = engine(archive, 0);
    CHECK_OK(rst_restore(e));
    for (int i = 0; i < 3; i++) { value = next_values[i]; CHECK_OK(rst_save(e)); }
    rst_engine_destroy(e);
}
static int64_t expect_value;
static rst_restore_reason expect_reason;
static uint64_t expect_skipped;
static void restore_expect(void) {
    rst_engine *e = engine(archive, 0);
    CHECK_OK(rst_restore(e));
    CHECK_EQ(decoded, expect_value);
    CHECK_STR(rst_restore_reason_name(rst_last_restore_reason(e)), rst_restore_reason_name(expect_reason));
    rst_restore_report r;
    CHECK_OK(rst_last_restore_report(e, &r));
    CHECK_EQ(r.skipped, expect_skipped);
    rst_engine_destroy(e);
}
static void restore_only(void) {
    rst_engine *e = engine(archive, 0);
    rst_restore(e);
    write_file(xasprintf("%s/after", dir), "1", 1);
    rst_engine_destroy(e);
}
static void autosave_loop(void) {
    rst_engine *e = engine(archive, 10);
    value = 99;
    CHECK_OK(rst_mark_dirty(e, NULL));
    int64_t end = now_ms() + 3000;
    while (now_ms() < end) {
        usleep(5000);
        CHECK_OK(rst_dispatch(e));
    }
    rst_engine_destroy(e);   /* not reached: killed as the autosave starts */
}
static void buffers(void) {
    rst_engine *e = engine(archive, 0);
    void *buf = NULL; size_t len = 0;
    CHECK_OK(rst_save_to_buffer(e, &buf, &len));
    CHECK_OK(rst_restore_from_buffer(e, buf, len));
    rst_free(buf);
    rst_engine_destroy(e);
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;   /* no archive path at all */
    CHECK_OK(rst_engine_create(&o, &e));
    CHECK_OK(rst_save_to_buffer(e, &buf, &len));
    CHECK_OK(rst_restore_from_buffer(e, buf, len));
    rst_free(buf);
    rst_engine_destroy(e);
}
static void invalid_value(void) {
    for (int i = 0; i < 2; i++) {   /* two engines: one sentence */
        rst_engine *e = engine(archive, 0);
        CHECK_OK(rst_restore(e));
        CHECK_OK(rst_save(e));
        rst_engine_destroy(e);
    }
    const char *want = getenv("RESTORATION_KILL_AT");
    char *frag = strcmp(want, "nonsense") == 0 ? xasprintf("RESTORATION_KILL_AT='nonsense' names no kill point (save-begin,")
                                               : xasprintf("RESTORATION_KILL_AT='%s': the count after ':' must be a whole number from 1; ignored", want);
    char *first = strstr(logbuf, frag);
    CHECK_MSG(first != NULL, "no warning '%s' in the log: %s", frag, logbuf);
    CHECK_MSG(strstr(first + 1, "RESTORATION_KILL_AT") == NULL, "logged more than once: %s", logbuf);
}

/* ---- points ---- */

static unsigned char *snapshot(size_t *n) {
    unsigned char *b = read_file(archive, n);
    CHECK_MSG(b != NULL, "no archive at %s", archive);
    return b;
}
static bool same_as(const unsigned char *old, size_t n) {
    size_t m = 0;
    unsigned char *now = read_file(archive, &m);
    bool same = now && m == n && memcmp(now, old, n) == 0;
    free(now);
    return same;
}

static void points(void) {
    archive = xasprintf("%s/state.rst", dir);
    value = 1;
    CHECK(EXITED0(in_child(NULL, NULL, NULL, save_value)));
    size_t n = 0;
    unsigned char *old = snapshot(&n);

    /* A save killed before the new archive is in place leaves the old one. */
    static const char *const before_rename[] = { "save-begin", "save-encoded", "save-written" };
    for (int i = 0; i < 3; i++) {
        value = 2;
        int st = in_child(before_rename[i], NULL, NULL, save_value);
        CHECK_MSG(KILLED(st), "%s: the save was not killed (status %d)", before_rename[i], st);
        CHECK_MSG(same_as(old, n), "%s: the archive changed", before_rename[i]);
        expect_value = 1; expect_reason = RST_REASON_RECOVER; expect_skipped = 0;
        CHECK_MSG(EXITED0(in_child(NULL, NULL, NULL, restore_expect)), "%s: the next restore", before_rename[i]);
    }

    /* save-replaced: the new archive is in place. */
    value = 2;
    CHECK(KILLED(in_child("save-replaced", NULL, NULL, save_value)));
    CHECK(!same_as(old, n));
    expect_value = 2; expect_reason = RST_REASON_RECOVER;
    CHECK(EXITED0(in_child(NULL, NULL, NULL, restore_expect)));

    /* ":N": the N-th time; the earlier saves went through. */
    next_values[0] = 3; next_values[1] = 4; next_values[2] = 5;
    CHECK(KILLED(in_child("save-replaced:2", NULL, NULL, save_three)));
    expect_value = 4;
    CHECK(EXITED0(in_child(NULL, NULL, NULL, restore_expect)));
    CHECK(KILLED(in_child("save-begin:3", NULL, NULL, save_three)));
    expect_value = 4;   /* the third save never began: 3, 4 written */
    CHECK(EXITED0(in_child(NULL, NULL, NULL, restore_expect)));
    free(old);
    old = snapshot(&n);

    /* The autosave: killed as it starts, nothing written. */
    CHECK(KILLED(in_child("autosave", NULL, NULL, autosave_loop)));
    CHECK(same_as(old, n));

    /* restore-begin: with an archive, and without one. */
    char *after = xasprintf("%s/after", dir);
    unlink(finished_flag);
    CHECK(KILLED(in_child("restore-begin", NULL, NULL, restore_only)));
    CHECK(!file_exists(after) && !file_exists(finished_flag));
    char *real = archive;
    archive = xasprintf("%s/none.rst", dir);
    CHECK(KILLED(in_child("restore-begin", NULL, NULL, restore_only)));
    CHECK(!file_exists(after));
    archive = real;
    CHECK(same_as(old, n));

    /* restore-finished: after did_finish_restoring, the marker gone: nothing set aside. */
    CHECK(KILLED(in_child("restore-finished", NULL, NULL, restore_only)));
    CHECK(file_exists(finished_flag) && !file_exists(after));
    CHECK(same_as(old, n));
    expect_value = 4; expect_reason = RST_REASON_RECOVER; expect_skipped = 0;
    CHECK(EXITED0(in_child(NULL, NULL, NULL, restore_expect)));

    /* restore-decoding: in the first decode; the next restore quarantines that record. */
    unlink(finished_flag);
    CHECK(KILLED(in_child("restore-decoding", NULL, NULL, restore_only)));
    CHECK(!file_exists(finished_flag));
    CHECK(same_as(old, n));
    expect_value = -1; expect_skipped = 1;
    CHECK(EXITED0(in_child(NULL, NULL, NULL, restore_expect)));
    CHECK(file_exists(xasprintf("%s.quarantine", archive)));

    /* Buffer saves and restores, and engines without a path, reach none. */
    static const char *const all[] = { "save-begin", "save-encoded", "save-written", "save-replaced",
                                       "restore-begin", "restore-decoding", "restore-finished" };
    for (int i = 0; i < 7; i++)
        CHECK_MSG(EXITED0(in_child(all[i], NULL, NULL, buffers)), "%s: a buffer save or restore was killed", all[i]);

    /* Invalid values: one warning, ignored. */
    CHECK(EXITED0(in_child("nonsense", NULL, NULL, invalid_value)));
    CHECK(EXITED0(in_child("save-begin:0", NULL, NULL, invalid_value)));
    CHECK(EXITED0(in_child("save-begin:x", NULL, NULL, invalid_value)));
    free(old);
}

/* ---- test exits ---- */

static char *report_text(const char *path) {
    size_t n = 0;
    unsigned char *b = read_file(path, &n);
    CHECK_MSG(b != NULL, "no report at %s", path);
    char *s = malloc(n + 1);
    memcpy(s, b, n); s[n] = '\0';
    free(b);
    return s;
}
#define CHECK_HAS(text, ...) do { char *f_ = xasprintf(__VA_ARGS__); \
        CHECK_MSG(strstr((text), f_) != NULL, "'%s' not in: %s", f_, (text)); free(f_); } while (0)

static void restore_twice_warn(void) {
    for (int i = 0; i < 2; i++) {
        rst_engine *e = engine(archive, 0);
        CHECK_OK(rst_restore(e));
        rst_engine_destroy(e);
    }
    write_file(xasprintf("%s/after", dir), "1", 1);
    char *first = strstr(logbuf, "RESTORATION_TEST_EXIT=restored without RESTORATION_TEST_REPORT");
    CHECK_MSG(first != NULL, "no warning: %s", logbuf);
    CHECK_MSG(strstr(first + 1, "RESTORATION_TEST_EXIT") == NULL, "warned more than once: %s", logbuf);
}
static void restore_buffer_then_file(void) {
    rst_engine *e = engine(archive, 0);
    void *buf = NULL; size_t len = 0;
    CHECK_OK(rst_save_to_buffer(e, &buf, &len));
    CHECK_OK(rst_restore_from_buffer(e, buf, len));
    rst_free(buf);
    write_file(xasprintf("%s/after-buffer", dir), "1", 1);
    CHECK_OK(rst_restore(e));
    write_file(xasprintf("%s/after", dir), "1", 1);
}
static char *rst_copy;
static void restore_copy(void) {
    size_t n = 0;
    unsigned char *b = read_file(rst_copy, &n);
    CHECK(b != NULL);
    rst_engine *e = engine(NULL, 0);
    CHECK_OK(rst_restore_from_buffer(e, b, n));
    CHECK_EQ(decoded, expect_value);
    rst_engine_destroy(e);
}

static void exits(void) {
    archive = xasprintf("%s/state.rst", dir);
    char *after = xasprintf("%s/after", dir);
    char *report = xasprintf("%s/report.json", dir);
    value = 7;
    with_extra = true;
    CHECK(EXITED0(in_child(NULL, NULL, NULL, save_value)));
    with_extra = false;
    size_t n = 0;
    unsigned char *old = snapshot(&n);

    /* restored: the report, exit 0 inside rst_restore, the archive untouched. */
    CHECK(EXITED0(in_child(NULL, "restored", report, restore_only)));
    CHECK(!file_exists(after));
    CHECK(same_as(old, n));
    char *r = report_text(report);
    CHECK_HAS(r, "{\"reason\": \"RST_REASON_RELAUNCH\", \"generation\": 0, \"restored\": 1, \"skipped\": [");
    CHECK_HAS(r, "{\"path\": \"root/extra\", \"reason\": \"RST_SKIP_NO_FACTORY\", \"detail\": ");
    CHECK_HAS(r, "\"archive_bytes\": %zu, \"store\": \"file '%s'\", \"status\": \"RST_OK\", \"error\": \"\"}", n, archive);
    CHECK(!file_exists(xasprintf("%s.rst", report)));
    free(r);

    /* After a death: RECOVER; nothing skipped when every record is registered. */
    with_extra = true;
    CHECK(KILLED(in_child("save-begin", NULL, NULL, save_value)));
    unlink(report);
    CHECK(EXITED0(in_child(NULL, "restored", report, restore_only)));
    r = report_text(report);
    CHECK_HAS(r, "{\"reason\": \"RST_REASON_RECOVER\", \"generation\": 0, \"restored\": 2, \"skipped\": [], ");
    free(r);
    with_extra = false;

    /* A restore that found nothing: FIRST_LAUNCH, the status, exit 0. */
    char *real = archive;
    archive = xasprintf("%s/none.rst", dir);
    unlink(report);
    CHECK(EXITED0(in_child(NULL, "restored", report, restore_only)));
    CHECK(!file_exists(after));
    r = report_text(report);
    CHECK_HAS(r, "{\"reason\": \"RST_REASON_FIRST_LAUNCH\", \"generation\": 0, \"restored\": 0, \"skipped\": [], \"archive_bytes\": 0, ");
    CHECK_HAS(r, "\"status\": \"RST_ERR_NOT_FOUND\", \"error\": \"there is no archive at '%s'\"", archive);
    free(r);
    archive = real;

    /* No report file: one warning, and the program goes on. */
    CHECK(EXITED0(in_child(NULL, "restored", NULL, restore_twice_warn)));
    CHECK(file_exists(after));
    unlink(after);

    /* A buffer restore fires nothing; the file restore after it does. */
    unlink(report);
    CHECK(EXITED0(in_child(NULL, "restored", report, restore_buffer_then_file)));
    CHECK(file_exists(xasprintf("%s/after-buffer", dir)) && !file_exists(after));
    CHECK(file_exists(report));

    /* roundtrip: the state just restored, saved to <report>.rst; the archive untouched. */
    unlink(report);
    CHECK(EXITED0(in_child(NULL, "roundtrip", report, restore_only)));
    CHECK(!file_exists(after));
    CHECK(same_as(old, n));
    r = report_text(report);
    CHECK_HAS(r, "\"roundtrip\": \"%s.rst\"", report);
    free(r);
    rst_copy = xasprintf("%s.rst", report);
    expect_value = 7;
    CHECK(EXITED0(in_child(NULL, NULL, NULL, restore_copy)));

    /* An unknown value: a warning, ignored. */
    CHECK(EXITED0(in_child(NULL, "sometimes", report, restore_only)));
    CHECK(file_exists(after));
    free(old);
}

int main(int argc, char **argv) {
    check_prog = "killpoints";
    if (argc != 3) { fprintf(stderr, "usage: killpoints points|exits DIR\n"); return 2; }
    dir = argv[2];
    finished_flag = xasprintf("%s/finished", dir);
    if (strcmp(argv[1], "points") == 0) points();
    else if (strcmp(argv[1], "exits") == 0) exits();
    else { fprintf(stderr, "killpoints: unknown mode %s\n", argv[1]); return 2; }
    DONE();
}
