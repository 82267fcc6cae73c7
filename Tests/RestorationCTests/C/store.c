/* store.c: the storage door through the C ABI (restoration_store.h) — the
 * store contract on the file and memory stores; engines on a memory store
 * and on a wrapped file store (save, restore, generations, fallback, RESET,
 * discard, RECOVER after SIGKILL, balanced read/release and lock/unlock,
 * destroy once); rst_engine_create_with_store's checks; store error
 * sentences; crash verdicts (a zombie is dead, the first session of a new
 * install, rst_close_session); a corrupt archive never lost or hidden;
 * unchanged state not written again.
 *
 *   store contract|memory|file|create|errors|verdicts|reset|unchanged|opsinit DIR
 *
 * opsinit: a store table written with RST_STORE_OPS_INIT (members by name,
 * the version set, the optional ones left 0) passes the contract and
 * carries an engine's saves, restores and destroy. */
#include "check.h"
#include "store_contract.h"
#include <signal.h>
#include <sys/wait.h>

typedef struct doc { int64_t n; int64_t restored; } doc;
static void doc_encode(void *inst, rst_coder *c) { rst_encode_int(c, "n", ((doc *)inst)->n); }
static void doc_decode(void *inst, rst_coder *c) { rst_decode_int(c, "n", &((doc *)inst)->restored); }
static const rst_object_callbacks doc_callbacks = { doc_encode, doc_decode, NULL, NULL };

static counting_store *current_counter;
static bool lock_held_in_callback;
static bool should_save_cb(rst_engine *e, void *ctx) {
    (void)e; (void)ctx;
    if (current_counter && current_counter->depth != 0) lock_held_in_callback = true;
    return true;
}
static bool should_restore_cb(rst_engine *e, const rst_archive_info *info, void *ctx) {
    (void)e; (void)info; (void)ctx;
    if (current_counter && current_counter->depth != 0) lock_held_in_callback = true;
    return true;
}

static rst_engine *engine_on(const rst_store_ops *ops, void *ctx, uint32_t generations, doc *d) {
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.generations = generations;
    o.log = collect_log;
    o.should_save = should_save_cb;
    o.should_restore = should_restore_cb;
    rst_engine *e = NULL;
    CHECK_OK(rst_engine_create_with_store(&o, ops, ctx, &e));
    if (d) CHECK_OK(rst_register_object(e, "doc", NULL, NULL, &doc_callbacks, d, NULL));
    return e;
}

static rst_engine *engine_at(const char *path, uint32_t generations, doc *d) {
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.archive_path = path;
    o.generations = generations;
    o.log = collect_log;
    rst_engine *e = NULL;
    CHECK_OK(rst_engine_create(&o, &e));
    if (d) CHECK_OK(rst_register_object(e, "doc", NULL, NULL, &doc_callbacks, d, NULL));
    return e;
}

/* ---- contract ---- */
static int test_contract(const char *dir) {
    const rst_store_ops *ops = NULL; void *ctx = NULL;
    char *path = xasprintf("%s/sub/contract.rst", dir);
    CHECK_OK(rst_file_store(path, &ops, &ctx));
    CHECK(ops != NULL && ctx != NULL && ops->link != NULL && ops->map != NULL);
    CHECK((ops->flags & RST_STORE_SHARED) != 0);
    CHECK(strstr(ops->describe(ctx), path) != NULL);
    store_contract(ops, ctx, "file store");
    /* the file names of 1.1 */
    CHECK_OK(ops->write(ctx, RST_SLOT_ARCHIVE, 0, "a", 1));
    CHECK_OK(ops->link(ctx, RST_SLOT_ARCHIVE, 0, RST_SLOT_GENERATION, 1));
    CHECK(file_exists(xasprintf("%s.1", path)));
    CHECK_OK(ops->move(ctx, RST_SLOT_GENERATION, 1, RST_SLOT_INVALID, 1700000000000ull));
    CHECK(file_exists(xasprintf("%s.invalid-1700000000000", path)));
    CHECK_OK(ops->move(ctx, RST_SLOT_INVALID, 1700000000000ull, RST_SLOT_CRASHED, 1700000000001ull));
    CHECK(file_exists(xasprintf("%s.crashed-1700000000001", path)));
    CHECK_OK(ops->write(ctx, RST_SLOT_SESSION, 0, "s", 1));
    CHECK(file_exists(xasprintf("%s.session", path)));
    CHECK_OK(ops->write(ctx, RST_SLOT_MARKER, 0, "m", 1));
    CHECK(file_exists(xasprintf("%s.restoring", path)));
    CHECK_OK(ops->write(ctx, RST_SLOT_QUARANTINE, 0, "q", 1));
    CHECK(file_exists(xasprintf("%s.quarantine", path)));
    ops->destroy(ctx);

    CHECK_OK(rst_memory_store(&ops, &ctx));
    CHECK(ops->map == NULL);
    store_contract(ops, ctx, "memory store");
    ops->destroy(ctx);

    /* a counting store over each passes too, and counts in pairs */
    CHECK_OK(rst_memory_store(&ops, &ctx));
    counting_store *cs = counting_wrap(ops, ctx);
    rst_store_ops cops = counting_ops(ops);
    store_contract(&cops, cs, "counting memory store");
    CHECK_EQ(cs->reads, cs->releases);
    CHECK_EQ(cs->locks, cs->unlocks);
    cops.destroy(cs);
    CHECK_EQ(cs->destroys, 1);
    free(cs);

    CHECK_ERR(rst_memory_store(NULL, &ctx), RST_ERR_INVALID, NULL);
    CHECK_ERR(rst_file_store(path, &ops, NULL), RST_ERR_INVALID, NULL);
    DONE();
}

/* ---- an engine on a store: save, restore, generations, fallback, discard ---- */
static void engine_round(const rst_store_ops *inner, void *inner_ctx, const char *name, bool file) {
    counting_store *cs = counting_wrap(inner, inner_ctx);
    rst_store_ops cops = counting_ops(inner);
    current_counter = cs;
    lock_held_in_callback = false;
    doc d = { 1, 0 };
    rst_engine *e = engine_on(&cops, cs, 2, &d);
    CHECK_ERR(rst_restore(e), RST_ERR_NOT_FOUND, NULL);
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_FIRST_LAUNCH);
    CHECK_OK(rst_save(e));
    CHECK_EQ(cs->writes, 1);
    d.n = 2; CHECK_OK(rst_save(e));
    d.n = 3; CHECK_OK(rst_save(e));
    CHECK_EQ(cs->writes, 3);
    /* generations through the store: 1 and 2 hold the two older states */
    size_t count = 0;
    uint64_t idx[4];
    CHECK_OK(inner->list(inner_ctx, RST_SLOT_GENERATION, idx, 4, &count));
    CHECK_MSG(count == 2 && idx[0] == 1 && idx[1] == 2, "%s: %zu generations", name, count);
    CHECK_OK(rst_restore(e));
    CHECK_EQ(d.restored, 3);
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_RELAUNCH);
    CHECK_OK(rst_restore_generation(e, 2));
    CHECK_EQ(d.restored, 1);
    /* a corrupt archive: FALLBACK to generation 1, the archive set aside intact */
    CHECK_OK(inner->write(inner_ctx, RST_SLOT_ARCHIVE, 0, "garbage!garbage!garbage!", 24));
    CHECK_OK(rst_restore(e));
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_FALLBACK);
    CHECK_EQ(d.restored, 2);
    CHECK_OK(inner->list(inner_ctx, RST_SLOT_INVALID, idx, 4, &count));
    CHECK_EQ(count, 1);
    /* the engine's store calls were balanced, no lock was held in a callback */
    CHECK_EQ(cs->reads, cs->releases);
    CHECK_EQ(cs->locks, cs->unlocks);
    CHECK_EQ(cs->depth, 0);
    CHECK(!lock_held_in_callback);
    /* discard empties every slot */
    CHECK_OK(rst_discard(e));
    for (int s = RST_SLOT_ARCHIVE; s <= RST_SLOT_CRASHED; s++) {
        CHECK_OK(inner->list(inner_ctx, (rst_slot)s, NULL, 0, &count));
        CHECK_MSG(count == 0, "%s: slot %d not empty after rst_discard", name, s);
    }
    CHECK_ERR(rst_restore(e), RST_ERR_NOT_FOUND, NULL);
    (void)file;
    CHECK_EQ(cs->destroys, 0);
    rst_engine_destroy(e);
    CHECK_EQ(cs->destroys, 1);
    CHECK_EQ(cs->reads, cs->releases);
    CHECK_EQ(cs->locks, cs->unlocks);
    current_counter = NULL;
    free(cs);
}

static int test_memory(const char *dir) {
    (void)dir;
    const rst_store_ops *ops = NULL; void *ctx = NULL;
    CHECK_OK(rst_memory_store(&ops, &ctx));
    engine_round(ops, ctx, "memory", false);
    /* the memory store itself, unwrapped */
    CHECK_OK(rst_memory_store(&ops, &ctx));
    doc d = { 7, 0 };
    rst_engine *e = engine_on(ops, ctx, 0, &d);
    CHECK_OK(rst_save(e));
    CHECK_OK(rst_restore(e));
    CHECK_EQ(d.restored, 7);
    /* dirty tracking and flush work on a store as on a path */
    d.n = 8;
    CHECK_OK(rst_mark_dirty(e, NULL));
    CHECK(rst_is_dirty(e));
    CHECK_OK(rst_flush(e));
    CHECK(!rst_is_dirty(e));
    CHECK_OK(rst_restore(e));
    CHECK_EQ(d.restored, 8);
    CHECK(rst_event_fd(e) >= 0); /* an engine with a store has the autosave descriptor */
    rst_engine_destroy(e);
    DONE();
}

static int test_file(const char *dir) {
    char *path = xasprintf("%s/new/folder/state.rst", dir);
    const rst_store_ops *ops = NULL; void *ctx = NULL;
    CHECK_OK(rst_file_store(path, &ops, &ctx));
    engine_round(ops, ctx, "wrapped file", true);
    CHECK(!file_exists(path));
    /* RECOVER after a SIGKILL, through a wrapped file store */
    int p[2];
    CHECK(pipe(p) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        static doc cd = { 42, 0 };
        const rst_store_ops *o2 = NULL; void *c2 = NULL;
        CHECK_OK(rst_file_store(path, &o2, &c2));
        counting_store *cs = counting_wrap(o2, c2);
        static rst_store_ops cops;
        cops = counting_ops(o2);
        rst_engine *ce = engine_on(&cops, cs, 0, &cd);
        (void)rst_restore(ce);
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
    CHECK_OK(rst_file_store(path, &ops, &ctx));
    counting_store *cs = counting_wrap(ops, ctx);
    rst_store_ops cops = counting_ops(ops);
    doc d = { 0, 0 };
    rst_engine *e = engine_on(&cops, cs, 0, &d);
    CHECK_OK(rst_restore(e));
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_RECOVER);
    CHECK_EQ(d.restored, 42);
    rst_engine_destroy(e);
    CHECK_EQ(cs->destroys, 1);
    free(cs);
    /* the unwrapped file store: the same files as an archive path */
    CHECK_OK(rst_file_store(path, &ops, &ctx));
    e = engine_on(ops, ctx, 1, &d);
    CHECK_OK(rst_restore(e));
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_RELAUNCH);
    d.n = 5;
    CHECK_OK(rst_save(e));
    CHECK(file_exists(xasprintf("%s.1", path)));
    CHECK(file_exists(xasprintf("%s.session", path)));
    rst_engine_destroy(e);
    CHECK(!file_exists(xasprintf("%s.session", path)));
    DONE();
}

/* ---- rst_engine_create_with_store's checks; destroy exactly once ---- */
static int destroyed;
static void count_destroy(void *ctx) { (void)ctx; destroyed++; }

static int test_create(const char *dir) {
    const rst_store_ops *mem = NULL; void *mctx = NULL;
    CHECK_OK(rst_memory_store(&mem, &mctx));
    rst_store_ops o = *mem;
    o.destroy = count_destroy;
    rst_engine_options opts = RST_ENGINE_OPTIONS_INIT;
    rst_engine *e = NULL;
    /* archive_path set */
    opts.archive_path = xasprintf("%s/x.rst", dir);
    destroyed = 0;
    CHECK_ERR(rst_engine_create_with_store(&opts, &o, mctx, &e), RST_ERR_INVALID, "archive_path");
    CHECK_EQ(destroyed, 1);
    CHECK(e == NULL);
    CHECK(!file_exists(opts.archive_path));
    opts.archive_path = NULL;
    /* a missing member */
    rst_store_ops bad = o;
    bad.list = NULL;
    destroyed = 0;
    CHECK_ERR(rst_engine_create_with_store(&opts, &bad, mctx, &e), RST_ERR_INVALID, "list");
    CHECK_EQ(destroyed, 1);
    /* unknown flags */
    bad = o; bad.flags = 6;
    destroyed = 0;
    CHECK_ERR(rst_engine_create_with_store(&opts, &bad, mctx, &e), RST_ERR_INVALID, "flags");
    CHECK_EQ(destroyed, 1);
    /* version */
    bad = o; bad.version = 2;
    destroyed = 0;
    CHECK_ERR(rst_engine_create_with_store(&opts, &bad, mctx, &e), RST_ERR_VERSION, NULL);
    CHECK_EQ(destroyed, 1);
    /* bad options */
    opts.version = 99;
    destroyed = 0;
    CHECK_ERR(rst_engine_create_with_store(&opts, &o, mctx, &e), RST_ERR_VERSION, NULL);
    CHECK_EQ(destroyed, 1);
    opts.version = RST_ENGINE_OPTIONS_VERSION;
    destroyed = 0;
    CHECK_ERR(rst_engine_create_with_store(NULL, &o, mctx, &e), RST_ERR_INVALID, NULL);
    CHECK_EQ(destroyed, 1);
    destroyed = 0;
    CHECK_ERR(rst_engine_create_with_store(&opts, &o, mctx, NULL), RST_ERR_INVALID, NULL);
    CHECK_EQ(destroyed, 1);
    CHECK_ERR(rst_engine_create_with_store(&opts, NULL, mctx, &e), RST_ERR_INVALID, "ops");
    /* a built-in table without its ctx: refused, no crash (its destroy ignores NULL) */
    CHECK_ERR(rst_engine_create_with_store(&opts, mem, NULL, &e), RST_ERR_INVALID, "ctx");
    /* success: destroyed once, by rst_engine_destroy; generations and autosave allowed */
    opts.generations = 3;
    opts.autosave_delay_ms = 100;
    destroyed = 0;
    CHECK_OK(rst_engine_create_with_store(&opts, &o, mctx, &e));
    CHECK_EQ(destroyed, 0);
    rst_engine_destroy(e);
    CHECK_EQ(destroyed, 1);
    mem->destroy(mctx);
    DONE();
}

/* ---- error sentences ---- */
static int test_errors(const char *dir) {
    (void)dir;
    const rst_store_ops *mem = NULL; void *mctx = NULL;
    CHECK_OK(rst_memory_store(&mem, &mctx));
    counting_store *cs = counting_wrap(mem, mctx);
    rst_store_ops cops = counting_ops(mem);
    doc d = { 1, 0 };
    rst_engine *e = engine_on(&cops, cs, 0, &d);
    const char *name = mem->describe(mctx);
    /* a failure without a sentence: one naming describe() */
    cs->fail_write = RST_ERR_IO;
    CHECK_ERR(rst_save(e), RST_ERR_IO, name);
    /* the store's own sentence is kept */
    cs->fail_write = RST_ERR_LIMIT;
    cs->fail_sentence = "the database is full (quota 5 MB)";
    CHECK_ERR(rst_save(e), RST_ERR_LIMIT, "the database is full (quota 5 MB)");
    /* a lock failure with a sentence: kept, and the place named */
    cs->fail_lock = RST_ERR_IO;
    cs->fail_sentence = "held by another program";
    CHECK_ERR(rst_save(e), RST_ERR_IO, "held by another program", name);
    CHECK_EQ(cs->locks, cs->unlocks);
    cs->fail_sentence = NULL;
    CHECK_OK(rst_save(e));
    /* read failing; read RST_OK without data: RST_ERR_IO naming the store, no crash */
    cs->fail_read = RST_ERR_IO;
    CHECK_ERR(rst_restore(e), RST_ERR_IO, name);
    cs->read_ok_without_data = true;
    CHECK_ERR(rst_restore(e), RST_ERR_IO, name, "without setting *data");
    CHECK_OK(rst_restore(e));
    CHECK_EQ(d.restored, 1);
    /* bytes that fail validation are an invalid archive, as from a file */
    CHECK_OK(mem->write(mctx, RST_SLOT_ARCHIVE, 0, "not an archive", 14));
    CHECK_ERR(rst_restore(e), RST_ERR_CORRUPT, NULL);
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_RESET);
    CHECK_EQ(cs->reads, cs->releases);
    CHECK_EQ(cs->locks, cs->unlocks);
    rst_engine_destroy(e);
    CHECK_EQ(cs->destroys, 1);
    free(cs);
    rst_store_set_error(NULL);
    DONE();
}

/* ---- crash verdicts ---- */
static int test_verdicts(const char *dir) {
    int status;
    /* 1. the first session of a new install: the save that creates the folder records it */
    char *fresh = xasprintf("%s/install/state/app.rst", dir);
    pid_t pid = fork();
    if (pid == 0) {
        static doc cd = { 11, 0 };
        rst_engine *ce = engine_at(fresh, 0, &cd);
        CHECK_ERR(rst_restore(ce), RST_ERR_NOT_FOUND, NULL);
        CHECK_OK(rst_save(ce));
        kill(getpid(), SIGKILL);
        for (;;) pause();
    }
    reap_child(pid, &status);
    CHECK(WIFSIGNALED(status));
    doc d = { 0, 0 };
    rst_engine *e = engine_at(fresh, 0, &d);
    CHECK_OK(rst_restore(e));
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_RECOVER);
    CHECK_EQ(d.restored, 11);
    rst_engine_destroy(e);

    /* 2. a process that exited but is not reaped yet (a zombie) is dead */
    char *zpath = xasprintf("%s/zombie.rst", dir);
    int p[2];
    CHECK(pipe(p) == 0);
    pid = fork();
    if (pid == 0) {
        close(p[0]);
        static doc cd = { 12, 0 };
        rst_engine *ce = engine_at(zpath, 0, &cd);
        CHECK_OK(rst_save(ce));
        CHECK(write(p[1], "r", 1) == 1);
        _exit(0); /* no destroy: the session stays open */
    }
    close(p[1]);
    char c;
    CHECK(read(p[0], &c, 1) == 1);
    /* wait for the child to be a zombie, without reaping it */
    char *statp = xasprintf("/proc/%d/stat", (int)pid);
    for (int i = 0; i < 500; i++) {
        /* /proc files have no size: read into a buffer and end it with NUL */
        char st[1024];
        int sfd = open(statp, O_RDONLY | O_CLOEXEC);
        ssize_t n = sfd >= 0 ? read(sfd, st, sizeof st - 1) : -1;
        if (sfd >= 0) close(sfd);
        st[n > 0 ? n : 0] = '\0';
        char *close_paren = strrchr(st, ')');
        bool zombie = close_paren && close_paren[1] == ' ' && close_paren[2] == 'Z';
        if (zombie) break;
        usleep(10000);
    }
    e = engine_at(zpath, 0, &d);
    CHECK_OK(rst_restore(e));
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_RECOVER);
    CHECK_EQ(d.restored, 12);
    rst_engine_destroy(e);
    reap_child(pid, &status);

    /* 3. rst_close_session from the host's own exit path: RELAUNCH */
    char *cpath = xasprintf("%s/closed.rst", dir);
    pid = fork();
    if (pid == 0) {
        static doc cd = { 13, 0 };
        rst_engine *ce = engine_at(cpath, 0, &cd);
        CHECK_OK(rst_save(ce));
        rst_close_session(ce);
        rst_close_session(ce); /* twice is fine */
        _exit(0);
    }
    reap_child(pid, &status);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(!file_exists(xasprintf("%s.session", cpath)));
    e = engine_at(cpath, 0, &d);
    CHECK_OK(rst_restore(e));
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_RELAUNCH);
    rst_engine_destroy(e);
    /* ... and without it, a SIGKILL child reads RECOVER */
    pid = fork();
    if (pid == 0) {
        static doc cd = { 14, 0 };
        rst_engine *ce = engine_at(cpath, 0, &cd);
        CHECK_OK(rst_save(ce));
        kill(getpid(), SIGKILL);
        for (;;) pause();
    }
    reap_child(pid, &status);
    e = engine_at(cpath, 0, &d);
    CHECK_OK(rst_restore(e));
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_RECOVER);
    rst_engine_destroy(e);
    /* through a store that maps (a wrapped file store): the session is
     * closed through the mapping */
    const rst_store_ops *fops = NULL; void *fctx = NULL;
    char *mpath = xasprintf("%s/mapped.rst", dir);
    pid = fork();
    if (pid == 0) {
        static doc cd = { 15, 0 };
        CHECK_OK(rst_file_store(mpath, &fops, &fctx));
        counting_store *cs = counting_wrap(fops, fctx);
        static rst_store_ops cops;
        cops = counting_ops(fops);
        rst_engine *ce = engine_on(&cops, cs, 0, &cd);
        CHECK_OK(rst_save(ce));
        rst_close_session(ce);
        _exit(0);
    }
    reap_child(pid, &status);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    e = engine_at(mpath, 0, &d);
    CHECK_OK(rst_restore(e));
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_RELAUNCH);
    CHECK_EQ(d.restored, 15);
    rst_engine_destroy(e);
    rst_close_session(NULL);
    DONE();
}

/* ---- a corrupt archive is never lost or hidden ---- */
static void corrupt(const char *path) { write_file(path, "garbage!garbage!garbage!", 24); }

static int test_reset(const char *dir) {
    doc d = { 1, 0 };
    /* no generations */
    char *a = xasprintf("%s/a.rst", dir);
    rst_engine *e = engine_at(a, 0, &d);
    CHECK_OK(rst_save(e));
    corrupt(a);
    CHECK_ERR(rst_restore(e), RST_ERR_CORRUPT, "RESET");
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_RESET);
    CHECK_EQ(count_entries(dir, "a.rst.invalid-"), 1);
    char *aside = find_entry(dir, "a.rst.invalid-");
    size_t n = 0;
    unsigned char *kept = read_file(aside, &n);
    CHECK(kept && n == 24 && memcmp(kept, "garbage!garbage!garbage!", 24) == 0); /* intact */
    free(kept);
    /* the next save does not overwrite it; the restore after a RESET is a first launch */
    CHECK_ERR(rst_restore(e), RST_ERR_NOT_FOUND, NULL);
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_FIRST_LAUNCH);
    CHECK_OK(rst_save(e));
    CHECK(file_exists(aside));
    rst_engine_destroy(e);

    /* two generations, the archive corrupt: FALLBACK (not RESET) */
    char *b = xasprintf("%s/b.rst", dir);
    e = engine_at(b, 2, &d);
    for (int k = 1; k <= 3; k++) { d.n = k; CHECK_OK(rst_save(e)); }
    corrupt(b);
    CHECK_OK(rst_restore(e));
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_FALLBACK);
    CHECK_EQ(d.restored, 2);
    CHECK_EQ(count_entries(dir, "b.rst.invalid-"), 1);
    /* every copy bad: RESET, each set aside intact, nothing rotated */
    d.n = 4; CHECK_OK(rst_save(e));
    d.n = 5; CHECK_OK(rst_save(e));
    d.n = 6; CHECK_OK(rst_save(e));
    corrupt(b);
    corrupt(xasprintf("%s.1", b));
    corrupt(xasprintf("%s.2", b));
    CHECK_ERR(rst_restore(e), RST_ERR_CORRUPT, "RESET");
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_RESET);
    CHECK_EQ(count_entries(dir, "b.rst.invalid-"), 4);
    CHECK(!file_exists(b));
    CHECK(!file_exists(xasprintf("%s.1", b)));
    CHECK(!file_exists(xasprintf("%s.2", b)));
    d.n = 7; CHECK_OK(rst_save(e));
    CHECK(!file_exists(xasprintf("%s.1", b))); /* no invalid copy rotated in */
    CHECK_EQ(count_entries(dir, "b.rst.invalid-"), 4);
    rst_engine_destroy(e);

    /* a missing archive with corrupt generations: RST_ERR_NOT_FOUND, RESET */
    char *m = xasprintf("%s/m.rst", dir);
    e = engine_at(m, 2, &d);
    for (int k = 1; k <= 3; k++) { d.n = k; CHECK_OK(rst_save(e)); }
    CHECK(unlink(m) == 0);
    corrupt(xasprintf("%s.1", m));
    corrupt(xasprintf("%s.2", m));
    CHECK_ERR(rst_restore(e), RST_ERR_NOT_FOUND, "RESET");
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_RESET);
    CHECK_EQ(count_entries(dir, "m.rst.invalid-"), 2);
    CHECK_ERR(rst_restore(e), RST_ERR_NOT_FOUND, NULL);
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_FIRST_LAUNCH);
    /* during a FALLBACK, invalid generations passed over stay as they are */
    for (int k = 1; k <= 3; k++) { d.n = 10 + k; CHECK_OK(rst_save(e)); }
    corrupt(m);
    corrupt(xasprintf("%s.1", m));
    CHECK_OK(rst_restore(e));
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_FALLBACK);
    CHECK_EQ(d.restored, 11); /* generation 2: the oldest */
    CHECK(file_exists(xasprintf("%s.1", m)));
    rst_engine_destroy(e);
    DONE();
}

/* ---- unchanged state is not written again ---- */
static int test_unchanged(const char *dir) {
    char *u = xasprintf("%s/u.rst", dir);
    doc d = { 1, 0 };
    rst_engine *e = engine_at(u, 2, &d);
    CHECK_OK(rst_save(e));
    struct stat a, b;
    CHECK(lstat(u, &a) == 0);
    usleep(20000);
    CHECK_OK(rst_save(e));
    CHECK(lstat(u, &b) == 0);
    CHECK_EQ(a.st_ino, b.st_ino);
    CHECK(a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec);
    CHECK(!file_exists(xasprintf("%s.1", u)));
    CHECK_OK(rst_mark_dirty(e, NULL));
    CHECK_OK(rst_flush(e));
    CHECK(!rst_is_dirty(e));
    CHECK(lstat(u, &b) == 0);
    CHECK_EQ(a.st_ino, b.st_ino);
    /* a changed value writes and rotates */
    d.n = 2;
    CHECK_OK(rst_save(e));
    CHECK(lstat(u, &b) == 0);
    CHECK(a.st_ino != b.st_ino);
    CHECK(file_exists(xasprintf("%s.1", u)));
    rst_engine_destroy(e);
    /* a new engine that restored the archive does not write it again either */
    e = engine_at(u, 2, &d);
    CHECK_OK(rst_restore(e));
    CHECK(lstat(u, &a) == 0);
    CHECK_OK(rst_save(e));
    CHECK(lstat(u, &b) == 0);
    CHECK_EQ(a.st_ino, b.st_ino);
    CHECK(!file_exists(xasprintf("%s.2", u)));
    /* changed archive info is a change: another app_version writes */
    rst_engine_destroy(e);
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.archive_path = u;
    o.generations = 2;
    o.app_version = "2.0";
    CHECK_OK(rst_engine_create(&o, &e));
    CHECK_OK(rst_register_object(e, "doc", NULL, NULL, &doc_callbacks, &d, NULL));
    CHECK_OK(rst_restore(e));
    CHECK_OK(rst_save(e));
    CHECK(lstat(u, &b) == 0);
    CHECK(a.st_ino != b.st_ino);
    /* another process replacing the archive: the engine compares against what is there */
    rst_engine *other = engine_at(u, 0, NULL);
    CHECK_OK(rst_save(other)); /* no objects: a different archive */
    rst_engine_destroy(other);
    CHECK(lstat(u, &a) == 0);
    CHECK_OK(rst_save(e));
    CHECK(lstat(u, &b) == 0);
    CHECK(a.st_ino != b.st_ino);
    rst_engine_destroy(e);
    DONE();
}

/* ---- quarantine through a store: with map per object, without map the archive ---- */
static bool bomb_armed;
static void bomb_decode(void *inst, rst_coder *c) {
    (void)inst; (void)c;
    if (bomb_armed) { kill(getpid(), SIGKILL); for (;;) pause(); }
}
static const rst_object_callbacks bomb_callbacks = { doc_encode, bomb_decode, NULL, NULL };

static rst_engine *bomb_engine(const char *path, bool with_map, doc *d, doc *bomb, counting_store **out) {
    const rst_store_ops *fops = NULL; void *fctx = NULL;
    CHECK_OK(rst_file_store(path, &fops, &fctx));
    counting_store *cs = counting_wrap(fops, fctx);
    static rst_store_ops tables[2];
    tables[with_map] = counting_ops(fops);
    if (!with_map) tables[0].map = NULL;
    rst_engine *e = engine_on(&tables[with_map], cs, 0, d);
    CHECK_OK(rst_register_object(e, "bomb", NULL, NULL, &bomb_callbacks, bomb, NULL));
    *out = cs;
    return e;
}

static int test_quarantine(const char *dir) {
    for (int with_map = 1; with_map >= 0; with_map--) {
        char *path = xasprintf("%s/q%d.rst", dir, with_map);
        doc d = { 21, 0 }, bomb = { 1, 0 };
        counting_store *cs = NULL;
        rst_engine *e = bomb_engine(path, with_map, &d, &bomb, &cs);
        CHECK_OK(rst_save(e));
        rst_engine_destroy(e);
        free(cs);
        pid_t pid = fork();
        if (pid == 0) {
            doc cd = { 0, 0 }, cb = { 0, 0 };
            counting_store *ccs = NULL;
            rst_engine *ce = bomb_engine(path, with_map, &cd, &cb, &ccs);
            bomb_armed = true;
            (void)rst_restore(ce);
            _exit(3);
        }
        int status;
        reap_child(pid, &status);
        CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "the restoring child was not killed (0x%x)", status);
        d.restored = 0;
        e = bomb_engine(path, with_map, &d, &bomb, &cs);
        if (with_map) {
            /* the marker named the record: that record is quarantined, the rest restores */
            CHECK_OK(rst_restore(e));
            CHECK_EQ(d.restored, 21);
            rst_skipped_record *skips = NULL; size_t n = 0;
            CHECK_OK(rst_last_restore_skips(e, &skips, &n));
            CHECK_EQ(n, 1);
            CHECK_EQ(skips[0].reason, RST_SKIP_QUARANTINED);
            CHECK_STR(skips[0].path, "bomb");
            rst_free(skips);
            CHECK(file_exists(xasprintf("%s.quarantine", path)));
        } else {
            /* no map: the death sets the whole archive aside */
            CHECK_ERR(rst_restore(e), RST_ERR_REJECTED, "set aside");
            CHECK_EQ(count_entries(dir, xasprintf("q%d.rst.crashed-", with_map)), 1);
            CHECK(!file_exists(path));
        }
        CHECK_EQ(cs->reads, cs->releases);
        CHECK_EQ(cs->locks, cs->unlocks);
        rst_engine_destroy(e);
        free(cs);
    }
    DONE();
}

/* ---- carried records through a store ---- */
static int test_carry(const char *dir) {
    char *path = xasprintf("%s/carry.rst", dir);
    doc d = { 31, 0 }, orphan = { 32, 0 };
    const rst_store_ops *fops = NULL; void *fctx = NULL;
    CHECK_OK(rst_file_store(path, &fops, &fctx));
    counting_store *cs = counting_wrap(fops, fctx);
    rst_store_ops cops = counting_ops(fops);
    rst_engine *e = engine_on(&cops, cs, 0, &d);
    CHECK_OK(rst_register_object(e, "orphan", NULL, "Gone", &doc_callbacks, &orphan, NULL));
    CHECK_OK(rst_save(e));
    rst_engine_destroy(e);
    free(cs);
    /* a build without class Gone carries its record through the next save */
    CHECK_OK(rst_file_store(path, &fops, &fctx));
    cs = counting_wrap(fops, fctx);
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.carry_saves = 2;
    rst_engine *e2 = NULL;
    CHECK_OK(rst_engine_create_with_store(&o, &cops, cs, &e2));
    doc d2 = { 33, 0 };
    CHECK_OK(rst_register_object(e2, "doc", NULL, NULL, &doc_callbacks, &d2, NULL));
    CHECK_OK(rst_restore(e2));
    CHECK_EQ(d2.restored, 31);
    CHECK_OK(rst_save(e2));
    rst_engine_destroy(e2);
    free(cs);
    /* a build with Gone again gets its state back */
    CHECK_OK(rst_file_store(path, &fops, &fctx));
    cs = counting_wrap(fops, fctx);
    doc d3 = { 0, 0 }, back = { 0, 0 };
    rst_engine *e3 = engine_on(&cops, cs, 0, &d3);
    CHECK_OK(rst_register_object(e3, "orphan", NULL, "Gone", &doc_callbacks, &back, NULL));
    CHECK_OK(rst_restore(e3));
    CHECK_EQ(d3.restored, 33);
    CHECK_EQ(back.restored, 32);
    rst_engine_destroy(e3);
    free(cs);
    DONE();
}

/* ---- kill points of the save path ---- */
/* The child (a fresh process, so it reads RESTORATION_KILL_AT): two saves,
 * values 1 then 2; the variable kills it during the second. */
static int kill_child(const char *path) {
    doc d = { 1, 0 };
    rst_engine *e = engine_at(path, 1, &d);
    CHECK_OK(rst_save(e));
    d.n = 2;
    CHECK_OK(rst_save(e));
    rst_engine_destroy(e);
    printf("store: not killed\n");
    return 3;
}

static int run_killed(const char *self, const char *dir, const char *at, const char *path) {
    pid_t pid = fork();
    if (pid == 0) {
        setenv("RESTORATION_KILL_AT", at, 1);
        execl(self, self, "killchild", dir, path, (char *)NULL);
        _exit(127);
    }
    int status;
    reap_child(pid, &status);
    return status;
}

static int test_killpoints(const char *self, const char *dir) {
    /* save-written: durable, not in place: the old archive stays, no generation lost */
    char *w = xasprintf("%s/written.rst", dir);
    int status = run_killed(self, dir, "save-written:2", w);
    CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "save-written:2 did not kill (status 0x%x)", status);
    doc d = { 0, 0 };
    rst_engine *e = engine_at(w, 1, &d);
    CHECK_OK(rst_restore(e));
    CHECK_EQ(d.restored, 1);
    CHECK_EQ(rst_last_restore_reason(e), RST_REASON_RECOVER);
    CHECK_EQ(count_entries(dir, "written.rst.tmp-"), 1); /* the durable temporary */
    d.n = 5;
    CHECK_OK(rst_save(e));
    CHECK_EQ(count_entries(dir, "written.rst.tmp-"), 0); /* removed by the next save */
    rst_engine_destroy(e);
    /* save-replaced: the new archive is in place */
    char *r = xasprintf("%s/replaced.rst", dir);
    status = run_killed(self, dir, "save-replaced:2", r);
    CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "save-replaced:2 did not kill (status 0x%x)", status);
    e = engine_at(r, 1, &d);
    CHECK_OK(rst_restore(e));
    CHECK_EQ(d.restored, 2);
    CHECK_OK(rst_restore_generation(e, 1));
    CHECK_EQ(d.restored, 1);
    rst_engine_destroy(e);
    /* buffer saves never reach them */
    char *b = xasprintf("%s/buffer.rst", dir);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("RESTORATION_KILL_AT", "save-written", 1);
        execl(self, self, "bufferchild", dir, b, (char *)NULL);
        _exit(127);
    }
    reap_child(pid, &status);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "buffer saves reached a save kill point (status 0x%x)", status);
    DONE();
}

static int buffer_child(void) {
    doc d = { 1, 0 };
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    rst_engine *e = NULL;
    CHECK_OK(rst_engine_create(&o, &e));
    CHECK_OK(rst_register_object(e, "doc", NULL, NULL, &doc_callbacks, &d, NULL));
    for (int i = 0; i < 3; i++) {
        void *buf = NULL; size_t len = 0;
        CHECK_OK(rst_save_to_buffer(e, &buf, &len));
        rst_free(buf);
    }
    rst_engine_destroy(e);
    DONE();
}

/* ---- a store table written with RST_STORE_OPS_INIT ---- */
/* A store that forwards to a memory store, its table declared by member
 * name: the version is set, the members left out (link, map, flags) are 0. */
static const rst_store_ops *fwd_ops;
static int fwd_destroys;
static rst_status fwd_read(void *c, rst_slot s, uint64_t i, const void **d, size_t *n, void **h) { return fwd_ops->read(c, s, i, d, n, h); }
static void fwd_release(void *c, void *h) { fwd_ops->release(c, h); }
static rst_status fwd_write(void *c, rst_slot s, uint64_t i, const void *d, size_t n) { return fwd_ops->write(c, s, i, d, n); }
static rst_status fwd_move(void *c, rst_slot f, uint64_t fi, rst_slot t, uint64_t ti) { return fwd_ops->move(c, f, fi, t, ti); }
static rst_status fwd_remove(void *c, rst_slot s, uint64_t i) { return fwd_ops->remove(c, s, i); }
static rst_status fwd_list(void *c, rst_slot s, uint64_t *x, size_t cap, size_t *n) { return fwd_ops->list(c, s, x, cap, n); }
static rst_status fwd_lock(void *c) { return fwd_ops->lock(c); }
static void fwd_unlock(void *c) { fwd_ops->unlock(c); }
static const char *fwd_describe(void *c) { (void)c; return "the forwarding store"; }
static void fwd_destroy(void *c) { fwd_destroys++; fwd_ops->destroy(c); }
static const rst_store_ops fwd_table = RST_STORE_OPS_INIT(
    .read = fwd_read, .release = fwd_release, .write = fwd_write, .move = fwd_move,
    .remove = fwd_remove, .list = fwd_list, .lock = fwd_lock, .unlock = fwd_unlock,
    .describe = fwd_describe, .destroy = fwd_destroy);

static int test_ops_init(const char *dir) {
    (void)dir;
    CHECK_EQ(fwd_table.version, RST_STORE_VERSION);
    CHECK_EQ(fwd_table.flags, 0);
    CHECK(fwd_table.link == NULL && fwd_table.map == NULL);
    CHECK(fwd_table.read == fwd_read && fwd_table.destroy == fwd_destroy);
    void *ctx = NULL;
    CHECK_OK(rst_memory_store(&fwd_ops, &ctx));
    store_contract(&fwd_table, ctx, "forwarding store");
    /* an engine accepts the table and saves, restores and destroys through it */
    doc d = { 41, 0 };
    rst_engine *e = engine_on(&fwd_table, ctx, 1, &d);
    CHECK_OK(rst_save(e));
    d.n = 42;
    CHECK_OK(rst_save(e));
    CHECK_OK(rst_restore(e));
    CHECK_EQ(d.restored, 42);
    CHECK_OK(rst_restore_generation(e, 1));
    CHECK_EQ(d.restored, 41);
    rst_engine_destroy(e);
    CHECK_EQ(fwd_destroys, 1);
    DONE();
}

int main(int argc, char **argv) {
    check_prog = "store";
    if (argc < 3) { fprintf(stderr, "usage: store MODE DIR\n"); return 2; }
    const char *mode = argv[1], *dir = argv[2];
    if (!strcmp(mode, "contract")) return test_contract(dir);
    if (!strcmp(mode, "memory")) return test_memory(dir);
    if (!strcmp(mode, "file")) return test_file(dir);
    if (!strcmp(mode, "create")) return test_create(dir);
    if (!strcmp(mode, "errors")) return test_errors(dir);
    if (!strcmp(mode, "verdicts")) return test_verdicts(dir);
    if (!strcmp(mode, "reset")) return test_reset(dir);
    if (!strcmp(mode, "unchanged")) return test_unchanged(dir);
    if (!strcmp(mode, "killpoints")) return test_killpoints(argv[0], dir);
    if (!strcmp(mode, "quarantine")) return test_quarantine(dir);
    if (!strcmp(mode, "carry")) return test_carry(dir);
    if (!strcmp(mode, "opsinit")) return test_ops_init(dir);
    if (!strcmp(mode, "killchild") && argc > 3) return kill_child(argv[3]);
    if (!strcmp(mode, "bufferchild")) return buffer_child();
    fprintf(stderr, "store: unknown mode %s\n", mode);
    return 2;
}
