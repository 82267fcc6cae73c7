/* quarantine.c: per-object crash quarantine, across processes.
 *
 * Archive order:  0 A (Gen)   1 B (Bomb)   2 B/C (Gen)   3 D (Gen)
 *
 *  1. a child restores with quarantine; B's decode dies by SIGKILL; the
 *     marker names record 1;
 *  2. the next restore quarantines B: B and B/C skipped (QUARANTINED,
 *     PARENT_SKIPPED), A and D restored, RST_OK, the archive in place,
 *     <archive>.quarantine written; a restore again keeps the quarantine;
 *  3. a child dies again (in D's decode) while the quarantine is in effect:
 *     the next restore sets the archive aside (RST_ERR_REJECTED);
 *  4. a death outside object callbacks (should_restore) sets it aside;
 *  5. an engine without quarantine (1.0 options) sets it aside after a death
 *     inside an object's decode;
 *  6. a save ends the quarantine; RST_ENGINE_NO_QUARANTINE wins.
 *
 *   quarantine DIR
 */
#include "check.h"
#include <signal.h>
#include <sys/wait.h>

static const char *kill_in;     /* identifier whose decode dies, or "should_restore", or "extend" */
static int decoded;
static rst_engine *g_engine;

static void enc(void *inst, rst_coder *c) { CHECK_OK(rst_encode_string(c, "id", (const char *)inst)); }
static void dec(void *inst, rst_coder *c) {
    (void)c;
    decoded++;
    if (kill_in && strcmp(kill_in, "extend") == 0 && strcmp((const char *)inst, "D") == 0) {
        rst_restore_token *t = NULL;
        CHECK_OK(rst_extend_restoration(g_engine, 0, &t));   /* never completed: the process dies first */
        return;
    }
    if (kill_in && strcmp(kill_in, (const char *)inst) == 0) {
        fflush(stdout); fflush(stderr);
        raise(SIGKILL);
    }
}
static void rel(void *inst) { free(inst); }
static const rst_object_callbacks save_cbs = { enc, NULL, NULL, NULL };
static const rst_object_callbacks cbs = { enc, dec, NULL, rel };

static rst_object *make(rst_engine *e, rst_object *parent, const char *id, rst_coder *c, void *ctx) {
    (void)c;
    rst_object *o = NULL;
    CHECK_OK(rst_register_object(e, id, parent, (const char *)ctx, &cbs, strdup(id), &o));
    return o;
}

static bool should_restore(rst_engine *e, const rst_archive_info *i, void *ctx) {
    (void)e; (void)i; (void)ctx;
    if (kill_in && strcmp(kill_in, "should_restore") == 0) { fflush(stdout); raise(SIGKILL); }
    return true;
}

static rst_engine *engine_opts(const char *archive, uint32_t version, uint32_t flags) {
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.version = version;
    o.archive_path = archive;
    o.flags = flags;
    o.should_restore = should_restore;
    o.log = collect_log;
    rst_engine *e = NULL;
    CHECK_OK(rst_engine_create(&o, &e));
    CHECK_OK(rst_register_class(e, "Gen", make, (void *)"Gen"));
    CHECK_OK(rst_register_class(e, "Bomb", make, (void *)"Bomb"));
    g_engine = e;
    return e;
}

/* Without RST_ENGINE_QUARANTINE this is a 1.0 host: a version-1 options
 * struct, which keeps 1.0's crash-loop behaviour. */
static rst_engine *engine(const char *archive, uint32_t flags) {
    return engine_opts(archive, (flags & RST_ENGINE_QUARANTINE) ? RST_ENGINE_OPTIONS_VERSION : 1, flags);
}

/* Each scenario starts from a newly written archive: every save holds a
 * new generation number (a save of the same state writes nothing, and an
 * unchanged archive stays condemned by its marker). */
static int64_t save_number;
static void enc_numbered(void *inst, rst_coder *c) {
    enc(inst, c);
    CHECK_OK(rst_encode_int(c, "save", save_number));
}
static const rst_object_callbacks numbered_cbs = { enc_numbered, NULL, NULL, NULL };
static void save(const char *archive) {
    rst_engine *e = new_engine(archive);
    save_number++;
    rst_object *b = NULL;
    CHECK_OK(rst_register_object(e, "A", NULL, "Gen", &numbered_cbs, (void *)"A", NULL));
    CHECK_OK(rst_register_object(e, "B", NULL, "Bomb", &save_cbs, (void *)"B", &b));
    CHECK_OK(rst_register_object(e, "C", b, "Gen", &save_cbs, (void *)"C", NULL));
    CHECK_OK(rst_register_object(e, "D", NULL, "Gen", &save_cbs, (void *)"D", NULL));
    CHECK_OK(rst_save(e));
    rst_engine_destroy(e);
}

/* Restores in a child that dies by SIGKILL in `where`. */
static void die_in_child(const char *archive, uint32_t flags, const char *where) {
    fflush(stdout); fflush(stderr);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        kill_in = where;
        rst_engine *e = engine(archive, flags);
        rst_restore(e);
        if (strcmp(where, "extend") == 0) { fflush(stdout); raise(SIGKILL); }   /* a token still open */
        fprintf(stderr, "quarantine: the child did not die in %s\n", where);
        _exit(3);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "the child ended with status 0x%x", status);
}

static char *marker_text(const char *archive) {
    char *p = xasprintf("%s.restoring", archive);
    size_t n = 0;
    unsigned char *b = read_file(p, &n);
    free(p);
    if (b == NULL) return NULL;
    char *s = calloc(1, n + 1);
    memcpy(s, b, n);
    free(b);
    return s;
}

int main(int argc, char **argv) {
    check_prog = "quarantine";
    CHECK(argc == 2);
    const char *dir = argv[1];
    char *archive = xasprintf("%s/state.rst", dir);
    char *qpath = xasprintf("%s.quarantine", archive);

    /* 1. Death inside B's decode. */
    save(archive);
    die_in_child(archive, RST_ENGINE_QUARANTINE, "B");
    char *m = marker_text(archive);
    CHECK(m != NULL);
    CHECK_MSG(strstr(m, "restoration-crash-marker 2\n") != NULL, "marker: %s", m);
    CHECK_MSG(strstr(m, "\nattempt=1\nrecord=0000000001\nend\n") != NULL, "marker: %s", m);
    free(m);

    /* 2. The partial restore. */
    {
        rst_engine *e = engine(archive, RST_ENGINE_QUARANTINE);
        log_text[0] = 0;
        decoded = 0;
        CHECK_OK(rst_restore(e));
        CHECK(strstr(log_text, "quarantined") != NULL);
        CHECK(file_exists(archive));
        CHECK(file_exists(qpath));
        CHECK_EQ(count_entries(dir, ".crashed-"), 0);
        CHECK(rst_find_object(e, "A") != NULL);
        CHECK(rst_find_object(e, "D") != NULL);
        CHECK(rst_find_object(e, "B") == NULL);
        CHECK_EQ(decoded, 2);
        rst_restore_report rep;
        CHECK_OK(rst_last_restore_report(e, &rep));
        CHECK_EQ(rep.restored, 2);
        CHECK_EQ(rep.skipped, 2);
        rst_skipped_record *sk = NULL;
        size_t n = 0;
        CHECK_OK(rst_last_restore_skips(e, &sk, &n));
        CHECK_EQ(n, 2);
        CHECK_STR(sk[0].path, "B");
        CHECK_EQ(sk[0].reason, RST_SKIP_QUARANTINED);
        CHECK(strstr(sk[0].detail, "died") != NULL);
        CHECK_STR(sk[1].path, "B/C");
        CHECK_EQ(sk[1].reason, RST_SKIP_PARENT_SKIPPED);
        rst_free(sk);
        CHECK(!file_exists(m = xasprintf("%s.restoring", archive)));
        free(m);
        rst_engine_destroy(e);
    }
    /* The quarantine stays until a save. */
    {
        rst_engine *e = engine(archive, RST_ENGINE_QUARANTINE);
        CHECK_OK(rst_restore(e));
        CHECK(rst_find_object(e, "B") == NULL);
        CHECK(rst_find_object(e, "D") != NULL);
        rst_engine_destroy(e);
    }

    /* 3. A second death while the quarantine is in effect: set aside. */
    die_in_child(archive, RST_ENGINE_QUARANTINE, "D");
    m = marker_text(archive);
    CHECK(m != NULL && strstr(m, "\nattempt=2\nrecord=0000000003\n") != NULL);
    free(m);
    {
        rst_engine *e = engine(archive, RST_ENGINE_QUARANTINE);
        CHECK_ERR(rst_restore(e), RST_ERR_REJECTED, "set aside");
        CHECK(!file_exists(archive));
        CHECK(!file_exists(qpath));
        CHECK_EQ(count_entries(dir, ".crashed-"), 1);
        rst_engine_destroy(e);
    }

    /* 4. A death outside object callbacks: set aside. */
    save(archive);
    die_in_child(archive, RST_ENGINE_QUARANTINE, "should_restore");
    m = marker_text(archive);
    CHECK(m != NULL && strstr(m, "\nrecord=----------\n") != NULL);
    free(m);
    {
        rst_engine *e = engine(archive, RST_ENGINE_QUARANTINE);
        CHECK_ERR(rst_restore(e), RST_ERR_REJECTED, "set aside");
        CHECK_EQ(count_entries(dir, ".crashed-"), 2);
        rst_engine_destroy(e);
    }

    /* 5. The engine that restores next decides: 1.0 options set aside. */
    save(archive);
    die_in_child(archive, RST_ENGINE_QUARANTINE, "B");
    {
        rst_engine *e = engine(archive, 0);
        CHECK_ERR(rst_restore(e), RST_ERR_REJECTED, "set aside");
        CHECK_EQ(count_entries(dir, ".crashed-"), 3);
        rst_engine_destroy(e);
    }
    /* A 1.0-options engine writes a 1.0 marker (no record): set aside even
       by a quarantining engine. */
    save(archive);
    die_in_child(archive, 0, "B");
    m = marker_text(archive);
    CHECK(m != NULL && strstr(m, "restoration-crash-marker 1\n") == m);
    free(m);
    {
        rst_engine *e = engine(archive, RST_ENGINE_QUARANTINE);
        CHECK_ERR(rst_restore(e), RST_ERR_REJECTED, "set aside");
        rst_engine_destroy(e);
    }

    /* 7. An options struct of version 2 quarantines by default (no flag);
     *    RST_ENGINE_NO_QUARANTINE keeps 1.0's behaviour. */
    save(archive);
    die_in_child(archive, RST_ENGINE_QUARANTINE, "B");
    {
        rst_engine *e = engine_opts(archive, RST_ENGINE_OPTIONS_VERSION, RST_ENGINE_NO_QUARANTINE);
        CHECK_ERR(rst_restore(e), RST_ERR_REJECTED, "set aside");
        rst_engine_destroy(e);
    }
    save(archive);
    die_in_child(archive, RST_ENGINE_QUARANTINE, "B");
    {
        rst_engine *e = engine_opts(archive, RST_ENGINE_OPTIONS_VERSION, 0);
        CHECK_OK(rst_restore(e));
        CHECK(rst_find_object(e, "B") == NULL);
        CHECK(rst_find_object(e, "D") != NULL);
        rst_engine_destroy(e);
    }

    /* 6. A save ends the quarantine; NO_QUARANTINE wins over QUARANTINE. */
    save(archive);
    die_in_child(archive, RST_ENGINE_QUARANTINE, "B");
    {
        rst_engine *e = engine(archive, RST_ENGINE_QUARANTINE | RST_ENGINE_NO_QUARANTINE);
        CHECK_ERR(rst_restore(e), RST_ERR_REJECTED, "set aside");
        rst_engine_destroy(e);
    }
    save(archive);
    die_in_child(archive, RST_ENGINE_QUARANTINE, "B");
    {
        rst_engine *e = engine(archive, RST_ENGINE_QUARANTINE);
        CHECK_OK(rst_restore(e));
        CHECK(file_exists(qpath));
        static const rst_object_callbacks none = { NULL, NULL, NULL, NULL };
        CHECK_OK(rst_register_object(e, "B", NULL, "Bomb", &none, NULL, NULL));
        CHECK_OK(rst_save(e));
        CHECK(!file_exists(qpath));
        rst_engine_destroy(e);
        e = engine(archive, RST_ENGINE_QUARANTINE);
        CHECK_OK(rst_restore(e));
        CHECK(rst_find_object(e, "B") != NULL);   /* restored again */
        CHECK_OK(rst_discard(e));
        CHECK_EQ(count_entries(dir, "state.rst"), 0);
        rst_engine_destroy(e);
    }
    /* 7. A death while a token (restoration that finishes later) is open quarantines the object that extended. */
    save(archive);
    die_in_child(archive, RST_ENGINE_QUARANTINE, "extend");
    m = marker_text(archive);
    CHECK_MSG(m != NULL && strstr(m, "\nattempt=1\nrecord=0000000003\n") != NULL, "marker: %s", m ? m : "(none)");
    free(m);
    {
        rst_engine *e = engine(archive, RST_ENGINE_QUARANTINE);
        kill_in = NULL;
        CHECK_OK(rst_restore(e));
        CHECK(rst_find_object(e, "D") == NULL);
        CHECK(rst_find_object(e, "B") != NULL);
        rst_skipped_record *sk = NULL;
        size_t n = 0;
        CHECK_OK(rst_last_restore_skips(e, &sk, &n));
        CHECK_EQ(n, 1);
        CHECK_STR(sk[0].path, "D");
        CHECK_EQ(sk[0].reason, RST_SKIP_QUARANTINED);
        rst_free(sk);
        rst_engine_destroy(e);
    }
    free(archive);
    free(qpath);
    DONE();
}
