/* generations.c: what happened last time (docs/LIFECYCLE.md) through the C ABI — restore reasons (first
 * launch, relaunch, recover after kill -9, buffer, fallback), sessions,
 * generations (rotation, fallback with the invalid archive set aside,
 * rst_restore_generation, discard), and kill -9 at random points of
 * rotating saves.
 *
 *   generations reasons|fallback|killrotate DIR [SEED KILLS] */
#include "check.h"
#include <signal.h>
#include <sys/wait.h>

typedef struct doc { int64_t n; int64_t restored; } doc;
static void doc_encode(void *inst, rst_coder *c) { rst_encode_int(c, "n", ((doc *)inst)->n); }
static void doc_decode(void *inst, rst_coder *c) { rst_decode_int(c, "n", &((doc *)inst)->restored); }
static const rst_object_callbacks doc_callbacks = { doc_encode, doc_decode, NULL, NULL };

static uint32_t seen_reason = 99, seen_generation = 99;
static bool note_info(rst_engine *e, const rst_archive_info *info, void *ctx) {
    (void)e; (void)ctx;
    seen_reason = info->restore_reason;
    seen_generation = info->generation;
    return true;
}

static rst_engine *engine_gen(const char *path, uint32_t generations, doc *d) {
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.archive_path = path;
    o.generations = generations;
    o.should_restore = note_info;
    o.log = collect_log;
    rst_engine *e = NULL;
    CHECK_OK(rst_engine_create(&o, &e));
    if (d) CHECK_OK(rst_register_object(e, "doc", NULL, NULL, &doc_callbacks, d, NULL));
    return e;
}

/* ---- reasons ---- */
static int test_reasons(const char *dir) {
    char *path = xasprintf("%s/r.rst", dir);
    char *session = xasprintf("%s.session", path);
    doc d = { 1, 0 };
    /* First launch: no archive. */
    rst_engine *e = engine_gen(path, 0, &d);
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_FIRST_LAUNCH);
    CHECK_ERR(rst_restore(e), RST_ERR_NOT_FOUND, "no archive");
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_FIRST_LAUNCH);
    CHECK(file_exists(session));                 /* opened at the first restore */
    CHECK_OK(rst_save(e));
    /* The caller's own open session counts as a relaunch. */
    CHECK_OK(rst_restore(e));
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_RELAUNCH);
    CHECK_EQ(seen_reason, RST_REASON_RELAUNCH);
    CHECK_EQ(seen_generation, 0);
    rst_engine_destroy(e);
    CHECK(!file_exists(session));                /* closed by destroy */
    /* Relaunch after a clean end. */
    e = engine_gen(path, 0, &d);
    CHECK_OK(rst_restore(e));
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_RELAUNCH);
    /* Buffer. */
    void *buf = NULL; size_t len = 0;
    CHECK_OK(rst_save_to_buffer(e, &buf, &len));
    CHECK_OK(rst_restore_from_buffer(e, buf, len));
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_BUFFER);
    CHECK_EQ(seen_reason, RST_REASON_BUFFER);
    rst_free(buf);
    rst_engine_destroy(e);
    /* kill -9 during a session: the next run recovers. */
    int p[2];
    CHECK(pipe(p) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        static doc cd = { 42, 0 };
        rst_engine *ce = engine_gen(path, 0, &cd);
        CHECK_OK(rst_restore(ce));
        CHECK_OK(rst_save(ce));
        CHECK(write(p[1], "r", 1) == 1);
        for (;;) pause();
    }
    close(p[1]);
    char c;
    CHECK(read(p[0], &c, 1) == 1);
    CHECK(kill(pid, SIGKILL) == 0);
    int status;
    reap_child(pid, &status);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    CHECK(file_exists(session));
    e = engine_gen(path, 0, &d);
    /* A save before the restore does not hide the crash. */
    CHECK_OK(rst_save_to_buffer(e, &buf, &len));
    rst_free(buf);
    CHECK_OK(rst_restore(e));
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_RECOVER);
    CHECK_EQ(seen_reason, RST_REASON_RECOVER);
    CHECK_EQ(d.restored, 42);
    CHECK_OK(rst_restore(e));                    /* the verdict holds for the engine */
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_RECOVER);
    rst_engine_destroy(e);
    e = engine_gen(path, 0, &d);
    CHECK_OK(rst_restore(e));
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_RELAUNCH);
    rst_engine_destroy(e);
    /* A child that ends cleanly (destroy) leaves a relaunch. */
    pid = fork();
    if (pid == 0) {
        static doc cd = { 43, 0 };
        rst_engine *ce = engine_gen(path, 0, &cd);
        CHECK_OK(rst_save(ce));
        rst_engine_destroy(ce);
        _exit(0);
    }
    reap_child(pid, &status);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    e = engine_gen(path, 0, &d);
    CHECK_OK(rst_restore(e));
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_RELAUNCH);
    CHECK_EQ(d.restored, 43);
    /* A torn session file is no session. */
    rst_engine_destroy(e);
    write_file(session, "restoration-session 1\npid=1", 27);
    e = engine_gen(path, 0, &d);
    CHECK_OK(rst_restore(e));
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_RELAUNCH);
    rst_engine_destroy(e);
    /* A session of another boot: the machine went down under it. */
    char *other = "restoration-session 1\npid=1\nstart=1\nboot=00000000-0000-0000-0000-000000000000\nend\n";
    write_file(session, other, strlen(other));
    e = engine_gen(path, 0, &d);
    CHECK_OK(rst_restore(e));
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_RECOVER);
    rst_engine_destroy(e);
    DONE();
}

static int64_t restored_generation(rst_engine *e, doc *d, uint32_t k) {
    d->restored = -1;
    rst_status s = rst_restore_generation(e, k);
    return s == RST_OK ? d->restored : -(int64_t)s - 100;
}

/* ---- generations and fallback ---- */
static int test_fallback(const char *dir) {
    char *path = xasprintf("%s/g.rst", dir);
    doc d = { 0, 0 };
    rst_engine *e = engine_gen(path, 3, &d);
    for (int64_t n = 1; n <= 5; n++) { d.n = n; CHECK_OK(rst_save(e)); }
    /* archive = 5, .1 = 4, .2 = 3, .3 = 2; 1 dropped off. */
    CHECK(file_exists(xasprintf("%s.3", path)));
    CHECK(!file_exists(xasprintf("%s.4", path)));
    CHECK_EQ(restored_generation(e, &d, 0), 5);
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_RELAUNCH);
    CHECK_EQ(restored_generation(e, &d, 1), 4);
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_FALLBACK);
    CHECK_EQ(seen_reason, RST_REASON_FALLBACK);
    CHECK_EQ(seen_generation, 1);
    CHECK_EQ(restored_generation(e, &d, 2), 3);
    CHECK_EQ(seen_generation, 2);
    CHECK_EQ(restored_generation(e, &d, 3), 2);
    CHECK_ERR(rst_restore_generation(e, 4), RST_ERR_NOT_FOUND, "generation 4");
    CHECK_ERR(rst_restore_generation(e, 99), RST_ERR_NOT_FOUND, "generation 99");
    /* A failing save costs no generation. */
    /* Corrupt the current archive: fallback to generation 1, set aside intact. */
    size_t len = 0;
    unsigned char *bytes = read_file(path, &len);
    CHECK(bytes != NULL && len > 20);
    bytes[len / 2] ^= 0x40;
    write_file(path, bytes, len);
    log_text[0] = 0;
    d.restored = -1;
    CHECK_OK(rst_restore(e));
    CHECK_EQ(d.restored, 4);
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_FALLBACK);
    CHECK_EQ(seen_reason, RST_REASON_FALLBACK);
    CHECK_EQ(seen_generation, 1);
    CHECK(!file_exists(path));                   /* nothing promoted */
    char *aside = find_entry(dir, "g.rst.invalid-");
    CHECK(aside != NULL);
    size_t alen = 0;
    unsigned char *abytes = read_file(aside, &alen);
    CHECK(alen == len && memcmp(abytes, bytes, len) == 0);
    CHECK(strstr(log_text, "[2] ") != NULL && strstr(log_text, "generation 1") != NULL);
    /* Missing archive: fallback again (nothing to set aside). */
    CHECK_OK(rst_restore(e));
    CHECK_EQ(d.restored, 4);
    CHECK_EQ(count_entries(dir, ".invalid-"), 1);
    /* An invalid generation is skipped and left as it is. */
    size_t glen = 0;
    char *g1 = xasprintf("%s.1", path);
    unsigned char *g = read_file(g1, &glen);
    g[glen - 1] ^= 1;
    write_file(g1, g, glen);
    CHECK_OK(rst_restore(e));
    CHECK_EQ(d.restored, 3);
    CHECK_EQ(seen_generation, 2);
    CHECK(file_exists(g1));
    CHECK_ERR(rst_restore_generation(e, 1), RST_ERR_CORRUPT, NULL);
    CHECK(file_exists(g1));
    /* The next save fills the path again (generation 1 is the corrupt one
     * the path held? no: the path was empty, so nothing is kept). */
    d.n = 6;
    CHECK_OK(rst_save(e));
    CHECK_EQ(restored_generation(e, &d, 0), 6);
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_RELAUNCH);
    /* Without generations, a corrupt archive is an error (RESET) and is set
     * aside intact, so the next save does not overwrite it. */
    rst_engine *plain = engine_gen(xasprintf("%s/p.rst", dir), 0, &d);
    CHECK_OK(rst_save(plain));
    write_file(xasprintf("%s/p.rst", dir), "garbage!garbage!garbage!", 24);
    CHECK_ERR(rst_restore(plain), RST_ERR_CORRUPT, "RESET");
    CHECK_EQ(rst_last_restore_reason(plain), RST_REASON_RESET);
    CHECK(!file_exists(xasprintf("%s/p.rst", dir)));
    CHECK_EQ(count_entries(dir, "p.rst.invalid-"), 1);
    CHECK_ERR(rst_restore(plain), RST_ERR_NOT_FOUND, NULL);
    CHECK_EQ(rst_last_restore_reason(plain), RST_REASON_FIRST_LAUNCH);
    rst_engine_destroy(plain);
    /* No valid generation: the error, RESET, the invalid archive set aside. */
    rst_engine *lone = engine_gen(xasprintf("%s/l.rst", dir), 2, &d);
    CHECK_OK(rst_save(lone));
    write_file(xasprintf("%s/l.rst", dir), "garbage!garbage!garbage!", 24);
    CHECK_ERR(rst_restore(lone), RST_ERR_CORRUPT, NULL);
    CHECK_EQ(rst_last_restore_reason(lone), RST_REASON_RESET);
    CHECK(!file_exists(xasprintf("%s/l.rst", dir)));
    CHECK_EQ(count_entries(dir, "l.rst.invalid-"), 1);
    rst_engine_destroy(lone);
    /* Discard removes the generations and the set-aside copies. */
    CHECK_OK(rst_discard(e));
    CHECK_EQ(count_entries(dir, "g.rst"), 0);    /* the session file too */
    CHECK_ERR(rst_restore(e), RST_ERR_NOT_FOUND, NULL);
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_FIRST_LAUNCH);
    CHECK(file_exists(xasprintf("%s.session", path)));   /* reopened by the restore */
    rst_engine_destroy(e);
    DONE();
}

/* ---- kill -9 at random points of rotating saves ---- */
static int64_t value_of(const char *file, rst_engine *e, doc *d) {
    /* The generation's value through a restore of it (k from the name). */
    const char *dot = strrchr(file, '.');
    uint32_t k = (uint32_t)atoi(dot + 1);
    d->restored = -1;
    rst_status s = rst_restore_generation(e, k);
    CHECK_MSG(s == RST_OK, "%s does not restore: %s: %s", file, rst_status_name(s), rst_last_error());
    return d->restored;
}

static int test_killrotate(const char *dir, unsigned seed, int kills) {
    char *path = xasprintf("%s/k.rst", dir);
    srand(seed);
    int64_t last_seen = 0;
    for (int i = 0; i < kills; i++) {
        int p[2];
        CHECK(pipe(p) == 0);
        pid_t pid = fork();
        if (pid == 0) {
            close(p[0]);
            static doc cd;
            rst_engine *ce = engine_gen(path, 3, &cd);
            cd.n = last_seen;
            rst_status s = rst_restore(ce);
            if (s == RST_OK) cd.n = cd.restored;
            cd.n++;
            CHECK_OK(rst_save(ce));                  /* the path holds an archive from here on */
            CHECK(write(p[1], "r", 1) == 1);
            for (;;) { cd.n++; CHECK_OK(rst_save(ce)); }
        }
        close(p[1]);
        char c;
        CHECK(read(p[0], &c, 1) == 1);
        close(p[0]);
        usleep((useconds_t)(rand() % 40000));
        kill(pid, SIGKILL);
        int status;
        reap_child(pid, &status);
        CHECK(WIFSIGNALED(status));
        /* The path holds one complete archive, and the chain is newest first. */
        rst_archive_info *info = NULL;
        CHECK_MSG(rst_read_archive_info(path, &info) == RST_OK, "kill %d: no valid archive at the path: %s", i, rst_last_error());
        rst_free(info);
        doc d = { 0, 0 };
        rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
        o.archive_path = path;
        o.flags = RST_ENGINE_NO_CRASH_GUARD;
        rst_engine *e = NULL;
        CHECK_OK(rst_engine_create(&o, &e));
        CHECK_OK(rst_register_object(e, "doc", NULL, NULL, &doc_callbacks, &d, NULL));
        CHECK_OK(rst_restore(e));
        int64_t current = d.restored, prev = current;
        CHECK_MSG(current >= last_seen, "kill %d: the archive went back from %lld to %lld", i, (long long)last_seen, (long long)current);
        for (int k = 1; k <= 3; k++) {
            char *g = xasprintf("%s.%d", path, k);
            if (!file_exists(g)) { free(g); continue; }
            int64_t v = value_of(g, e, &d);
            CHECK_MSG(v <= prev, "kill %d: generation %d holds %lld, newer than the one before it (%lld)", i, k, (long long)v, (long long)prev);
            prev = v;
            free(g);
        }
        CHECK_EQ(count_entries(dir, ".5"), 0);
        last_seen = current;
        rst_engine_destroy(e);
    }
    printf("generations: %d kills, last value %lld\n", kills, (long long)last_seen);
    CHECK(last_seen > 0);
    DONE();
}

int main(int argc, char **argv) {
    check_prog = "generations";
    if (argc < 3) { fprintf(stderr, "usage: generations MODE DIR [SEED KILLS]\n"); return 2; }
    const char *m = argv[1], *dir = argv[2];
    if (strcmp(m, "reasons") == 0) return test_reasons(dir);
    if (strcmp(m, "fallback") == 0) return test_fallback(dir);
    if (strcmp(m, "killrotate") == 0)
        return test_killrotate(dir, argc > 3 ? (unsigned)atoi(argv[3]) : 1, argc > 4 ? atoi(argv[4]) : 20);
    fprintf(stderr, "unknown mode %s\n", m);
    return 2;
}
