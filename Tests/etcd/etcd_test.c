/* etcd_test.c: restoration-etcd against a real cluster, driving the store's
 * table as the engine does. `etcd_test SCENARIO`; the cluster is made and
 * torn down by run.sh, and members are killed and restarted here through
 * cluster.sh (ETCD_CLUSTER_SH, ETCD_CLUSTER_DIR). Forked processes with
 * their own RESTORATION_MACHINE_ID and cache folders play other machines.
 * Every failed check prints the file, line and what it compared; the exit
 * status is 0 only when every check passed. */
#define _GNU_SOURCE
#include "restoration_etcd.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failures;
#define CHECK(c) do { if (!(c)) { failures++; fprintf(stderr, "%s:%d: FAILED: %s (last error: %s)\n", __FILE__, __LINE__, #c, rst_etcd_last_error()); } } while (0)
#define CHECK_ST(expr, want) do { rst_status st_ = (expr); if (st_ != (want)) { failures++; \
    fprintf(stderr, "%s:%d: FAILED: %s is %s, not %s (last error: %s)\n", __FILE__, __LINE__, #expr, rst_status_name(st_), rst_status_name(want), rst_etcd_last_error()); } } while (0)
#define CHECK_HAS(text, part) do { const char *t_ = (text); if (!t_ || !strstr(t_, (part))) { failures++; \
    fprintf(stderr, "%s:%d: FAILED: '%s' does not contain '%s'\n", __FILE__, __LINE__, t_ ? t_ : "(null)", (part)); } } while (0)

static const char *csh, *cdir;
static char tmpdir[512];

static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sleep_ms(unsigned ms) {
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

static int cl(const char *fmt, ...) {
    char args[512], cmd[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "%s %s %s", csh, cdir, args);
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static char *cl_out(const char *fmt, ...) {
    char args[512], cmd[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "%s %s %s", csh, cdir, args);
    FILE *p = popen(cmd, "r");
    static char out[8][256];
    static int k;
    char *o = out[k++ % 8];
    o[0] = 0;
    if (p) {
        if (!fgets(o, 256, p)) o[0] = 0;
        pclose(p);
    }
    o[strcspn(o, "\n")] = 0;
    return o;
}

static char *ep(const char *member) { return cl_out("endpoint %s", member); }

/* ---------------------------------------------------------- events */

static atomic_int events[5];
static void on_event(void *engine, rst_store_event ev) {
    (void)engine;
    if (ev >= 1 && ev <= 4) atomic_fetch_add(&events[ev], 1);
}
static const rst_store_host test_host = { NULL, on_event };

static int wait_event(rst_store_event ev, int at_least, unsigned ms) {
    uint64_t end = now_ms() + ms;
    while (now_ms() < end) {
        if (atomic_load(&events[ev]) >= at_least) return 1;
        sleep_ms(20);
    }
    return atomic_load(&events[ev]) >= at_least;
}

/* ---------------------------------------------------------- stores */

typedef struct store { const rst_store_ops *ops; void *ctx; } store;

static int cache_seq;

static store open_store(const char *endpoints, const char *prefix, const char *cache_name, void (*tune)(rst_etcd_options *)) {
    rst_etcd_options o = RST_ETCD_OPTIONS_INIT;
    char cache[700];
    snprintf(cache, sizeof cache, "%s/cache-%s-%d-%d", tmpdir, cache_name ? cache_name : "c", (int)getpid(), cache_seq++);
    o.endpoints = endpoints;
    o.prefix = prefix;
    o.cache_dir = cache;
    o.lease_ttl_s = 2;
    o.timeout_ms = 1500;
    if (tune) tune(&o);
    store s = { NULL, NULL };
    rst_status st = rst_etcd_store(&o, &s.ops, &s.ctx);
    if (st != RST_OK) { fprintf(stderr, "rst_etcd_store: %s: %s\n", rst_status_name(st), rst_etcd_last_error()); failures++; }
    else s.ops->attach(s.ctx, &test_host);
    return s;
}

static void close_store(store *s) {
    if (s->ops) s->ops->destroy(s->ctx);
    s->ops = NULL;
}

static unsigned char *pattern(size_t n, unsigned seed) {
    unsigned char *p = malloc(n ? n : 1);
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) { x = x * 1103515245u + 12345u; p[i] = (unsigned char)(x >> 16); }
    return p;
}

/* Whether `s` reads `slot` as exactly these bytes. */
static int reads_as(store *s, rst_slot slot, uint64_t index, const void *want, size_t n) {
    const void *d = NULL;
    size_t len = 0;
    void *h = NULL;
    rst_status st = s->ops->read(s->ctx, slot, index, &d, &len, &h);
    if (st != RST_OK) { fprintf(stderr, "  read: %s: %s\n", rst_status_name(st), rst_etcd_last_error()); return 0; }
    int same = len == n && memcmp(d, want, n) == 0;
    if (!same) fprintf(stderr, "  read %zu bytes, expected %zu\n", len, n);
    s->ops->release(s->ctx, h);
    return same;
}

/* The counter a save loop wrote into its archive's first 8 bytes. */
static int64_t read_counter(store *s) {
    const void *d = NULL;
    size_t len = 0;
    void *h = NULL;
    if (s->ops->read(s->ctx, RST_SLOT_ARCHIVE, 0, &d, &len, &h) != RST_OK) return -1;
    int64_t v = -1;
    if (len >= 8) memcpy(&v, d, 8);
    s->ops->release(s->ctx, h);
    return v;
}

static char prefix_buf[256];
static const char *fresh_prefix(const char *name) {
    snprintf(prefix_buf, sizeof prefix_buf, "/restoration/v1/u/test/a/%s-%d-%lld/", name, (int)getpid(), (long long)now_ms());
    return prefix_buf;
}

static void as_machine(const char *id) {
    setenv("RESTORATION_MACHINE_ID", id, 1);
    setenv("RESTORATION_HOSTNAME", id, 1);
}

/* ------------------------------------------------------- scenarios */

/* 0.4 KB, 1.4 MB and 5 MB archives written through one member are read back
 * byte for byte through another, with a generation moved beside them. */
static void scenario_roundtrip(void) {
    char eps[600];
    char prefix[256];
    snprintf(prefix, sizeof prefix, "%s", fresh_prefix("roundtrip"));
    as_machine("laptop");
    store w = open_store(ep("m1"), prefix, "w", NULL);
    CHECK_HAS(w.ops->describe(w.ctx), "etcd ");
    CHECK_HAS(w.ops->describe(w.ctx), ep("m1"));
    CHECK_ST(w.ops->acquire(w.ctx), RST_OK);
    char cl_id[64];
    snprintf(cl_id, sizeof cl_id, "(cluster ");
    CHECK_HAS(w.ops->describe(w.ctx), cl_id);
    size_t sizes[3] = { 400, 1400 * 1024, 5 * 1024 * 1024 };
    for (int i = 0; i < 3; i++) {
        unsigned char *a = pattern(sizes[i], (unsigned)i + 1);
        if (i > 0) CHECK_ST(w.ops->move(w.ctx, RST_SLOT_ARCHIVE, 0, RST_SLOT_GENERATION, 1), RST_OK);
        uint64_t t0 = now_ms();
        CHECK_ST(w.ops->write(w.ctx, RST_SLOT_ARCHIVE, 0, a, sizes[i]), RST_OK);
        uint64_t t1 = now_ms();
        CHECK_ST(rst_etcd_flush(w.ctx, 20000), RST_OK);
        uint64_t t2 = now_ms();
        printf("  %zu bytes: write %" PRIu64 " ms, published after %" PRIu64 " ms\n", sizes[i], t1 - t0, t2 - t0);
        snprintf(eps, sizeof eps, "%s", ep("m2"));
        as_machine("desktop");
        store r = open_store(eps, prefix, "r", NULL);
        CHECK(reads_as(&r, RST_SLOT_ARCHIVE, 0, a, sizes[i]));
        if (i > 0) {
            unsigned char *g = pattern(sizes[i - 1], (unsigned)i);
            CHECK(reads_as(&r, RST_SLOT_GENERATION, 1, g, sizes[i - 1]));
            free(g);
            uint64_t idx[4];
            size_t n = 0;
            CHECK_ST(r.ops->list(r.ctx, RST_SLOT_GENERATION, idx, 4, &n), RST_OK);
            CHECK(n == 1 && idx[0] == 1);
        }
        CHECK_HAS(r.ops->describe(r.ctx), eps);
        close_store(&r);
        as_machine("laptop");
        free(a);
    }
    /* a reader never needs ownership, and may not write */
    as_machine("desktop");
    store r = open_store(ep("m3"), prefix, "r2", NULL);
    CHECK_ST(r.ops->write(r.ctx, RST_SLOT_ARCHIVE, 0, "x", 1), RST_ERR_STATE);
    CHECK_ST(r.ops->read(r.ctx, RST_SLOT_MARKER, 0, &(const void *){0}, &(size_t){0}, &(void *){0}), RST_ERR_NOT_FOUND);
    close_store(&r);
    close_store(&w);
}

/* A follower, then the leader, killed during a save loop: every save whose
 * flush returned RST_OK is in the cluster afterwards. */
static void scenario_kill_members(void) {
    char eps[800];
    snprintf(eps, sizeof eps, "%s,%s,%s", ep("m1"), ep("m2"), ep("m3"));
    char prefix[256];
    snprintf(prefix, sizeof prefix, "%s", fresh_prefix("killsave"));
    as_machine("laptop");
    store w = open_store(eps, prefix, "w", NULL);
    CHECK_ST(w.ops->acquire(w.ctx), RST_OK);
    int64_t acked = -1;
    char killed[2][16] = { "", "" };
    for (int64_t i = 0; i < 30; i++) {
        if (i == 8) { snprintf(killed[0], 16, "%s", cl_out("follower m1 m2 m3")); printf("  killing follower %s\n", killed[0]); cl("kill %s", killed[0]); }
        if (i == 18) {
            char rest[64] = "";
            for (int k = 1; k <= 3; k++) { char n[4]; snprintf(n, 4, "m%d", k); if (strcmp(n, killed[0])) { strcat(rest, n); strcat(rest, " "); } }
            snprintf(killed[1], 16, "%s", cl_out("leader %s", rest));
            printf("  killing leader %s\n", killed[1]);
            cl("kill %s", killed[1]);
            /* the one left alone has no quorum: bring the follower back */
            cl("start %s", killed[0]);
        }
        unsigned char *a = pattern(200 * 1024, (unsigned)i);
        memcpy(a, &i, 8);
        rst_status st = w.ops->write(w.ctx, RST_SLOT_ARCHIVE, 0, a, 200 * 1024);
        free(a);
        CHECK(st == RST_OK);
        if (rst_etcd_flush(w.ctx, 8000) == RST_OK) acked = i;
    }
    printf("  last acknowledged save: %" PRId64 " of 29\n", acked);
    CHECK(acked >= 25);
    cl("start %s", killed[1]);
    as_machine("desktop");
    store r = open_store(eps, prefix, "r", NULL);
    int64_t got = read_counter(&r);
    CHECK(got >= acked);
    printf("  the cluster holds save %" PRId64 "\n", got);
    close_store(&r);
    close_store(&w);
}

/* Two of three members killed: writes go on locally (OFFLINE), a restarted
 * member gets the pending archive published (ONLINE). */
static void scenario_offline(void) {
    char eps[800];
    snprintf(eps, sizeof eps, "%s,%s,%s", ep("m1"), ep("m2"), ep("m3"));
    char prefix[256];
    snprintf(prefix, sizeof prefix, "%s", fresh_prefix("offline"));
    as_machine("laptop");
    store w = open_store(eps, prefix, "w", NULL);
    CHECK_ST(w.ops->acquire(w.ctx), RST_OK);
    unsigned char *a = pattern(3000, 7);
    CHECK_ST(w.ops->write(w.ctx, RST_SLOT_ARCHIVE, 0, a, 3000), RST_OK);
    CHECK_ST(rst_etcd_flush(w.ctx, 5000), RST_OK);
    int off0 = atomic_load(&events[RST_STORE_EVENT_OFFLINE]), on0 = atomic_load(&events[RST_STORE_EVENT_ONLINE]);
    cl("kill m2");
    cl("kill m3");
    unsigned char *b = pattern(900 * 1024, 8);
    uint64_t t0 = now_ms();
    CHECK_ST(w.ops->write(w.ctx, RST_SLOT_ARCHIVE, 0, b, 900 * 1024), RST_OK);
    CHECK(now_ms() - t0 < 500);
    CHECK(wait_event(RST_STORE_EVENT_OFFLINE, off0 + 1, 10000));
    CHECK_ST(rst_etcd_flush(w.ctx, 300), RST_ERR_UNAVAILABLE);
    /* the local copy is what this machine reads meanwhile */
    CHECK(reads_as(&w, RST_SLOT_ARCHIVE, 0, b, 900 * 1024));
    unsigned char *c = pattern(700 * 1024, 9);
    CHECK_ST(w.ops->write(w.ctx, RST_SLOT_ARCHIVE, 0, c, 700 * 1024), RST_OK);
    cl("start m2");
    CHECK(wait_event(RST_STORE_EVENT_ONLINE, on0 + 1, 20000));
    CHECK_ST(rst_etcd_flush(w.ctx, 10000), RST_OK);
    as_machine("desktop");
    store r = open_store(ep("m2"), prefix, "r", NULL);
    CHECK(reads_as(&r, RST_SLOT_ARCHIVE, 0, c, 700 * 1024));
    close_store(&r);
    close_store(&w);
    cl("start m3");
    free(a); free(b); free(c);
}

/* A child "machine" that acquires and writes, tells the parent on `tell`,
 * then waits on `hear` for: 'w' write again and flush (exit 0 when that is
 * RST_ERR_FENCED with OWNER_LOST), 'q' quit. */
static void child_owner(const char *eps, const char *prefix, const char *machine, int tell, int hear, size_t n, unsigned seed) {
    as_machine(machine);
    store s = open_store(eps, prefix, machine, NULL);
    if (s.ops->acquire(s.ctx) != RST_OK) { fprintf(stderr, "child acquire: %s\n", rst_etcd_last_error()); _exit(3); }
    unsigned char *a = pattern(n, seed);
    if (s.ops->write(s.ctx, RST_SLOT_ARCHIVE, 0, a, n) != RST_OK || rst_etcd_flush(s.ctx, 8000) != RST_OK) { fprintf(stderr, "child save: %s\n", rst_etcd_last_error()); _exit(4); }
    s.ops->write(s.ctx, RST_SLOT_SESSION, 0, machine, strlen(machine));
    rst_etcd_flush(s.ctx, 8000);
    if (write(tell, "a", 1) != 1) _exit(5);
    char cmd = 0;
    if (read(hear, &cmd, 1) != 1) _exit(6);
    if (cmd == 'w') {
        unsigned char *b = pattern(n, seed + 100);
        rst_status st = s.ops->write(s.ctx, RST_SLOT_ARCHIVE, 0, b, n);
        if (st == RST_OK) st = rst_etcd_flush(s.ctx, 8000);
        int lost = wait_event(RST_STORE_EVENT_OWNER_LOST, 1, 5000);
        /* a conflict copy is still accepted */
        rst_status cst = s.ops->write(s.ctx, RST_SLOT_CONFLICT, 1234, b, n);
        if (cst == RST_OK) cst = rst_etcd_flush(s.ctx, 8000);
        fprintf(stderr, "  stale owner's save: %s (%s); OWNER_LOST %s; conflict copy %s\n", rst_status_name(st), rst_etcd_last_error(),
                lost ? "raised" : "NOT raised", rst_status_name(cst));
        _exit(st == RST_ERR_FENCED && lost && cst == RST_OK ? 0 : 1);
    }
    s.ops->destroy(s.ctx);
    _exit(0);
}

/* An owner killed with SIGKILL is replaced only after its lease. */
static void scenario_owner_killed(void) {
    char eps[800];
    snprintf(eps, sizeof eps, "%s,%s,%s", ep("m1"), ep("m2"), ep("m3"));
    char prefix[256];
    snprintf(prefix, sizeof prefix, "%s", fresh_prefix("ownerkill"));
    int up[2], down[2];
    if (pipe(up) || pipe(down)) { failures++; return; }
    pid_t pid = fork();
    if (pid == 0) child_owner(eps, prefix, "laptop", up[1], down[0], 5000, 1);
    char c;
    CHECK(read(up[0], &c, 1) == 1);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    uint64_t killed = now_ms();
    as_machine("desktop");
    store b = open_store(eps, prefix, "b", NULL);
    rst_status st = b.ops->acquire(b.ctx);
    CHECK(st == RST_ERR_FENCED);
    CHECK_HAS(rst_etcd_last_error(), "laptop (machine laptop)");
    close_store(&b);
    uint64_t got = 0;
    for (int i = 0; i < 100 && !got; i++) {
        store b2 = open_store(eps, prefix, "b", NULL);
        if (b2.ops->acquire(b2.ctx) == RST_OK) {
            got = now_ms();
            unsigned char *a = pattern(5000, 1);
            CHECK(reads_as(&b2, RST_SLOT_ARCHIVE, 0, a, 5000));
            CHECK(reads_as(&b2, RST_SLOT_SESSION, 0, "laptop", 6)); /* the dead owner's session is still recorded */
            free(a);
        }
        close_store(&b2);
        if (!got) sleep_ms(200);
    }
    CHECK(got != 0);
    printf("  the new machine owns the state %" PRIu64 " ms after the kill (lease 2 s)\n", got - killed);
    CHECK(got - killed >= 1000);
    CHECK(got - killed <= 10000);
}

/* A stale owner (SIGSTOP past its lease, then SIGCONT) is fenced: its save
 * fails with RST_ERR_FENCED and OWNER_LOST, the new owner's archive stays. */
static void scenario_stale_owner(void) {
    char eps[800];
    snprintf(eps, sizeof eps, "%s,%s,%s", ep("m1"), ep("m2"), ep("m3"));
    char prefix[256];
    snprintf(prefix, sizeof prefix, "%s", fresh_prefix("stale"));
    int up[2], down[2];
    if (pipe(up) || pipe(down)) { failures++; return; }
    pid_t pid = fork();
    if (pid == 0) child_owner(eps, prefix, "laptop", up[1], down[0], 4000, 1);
    char c;
    CHECK(read(up[0], &c, 1) == 1);
    kill(pid, SIGSTOP);
    as_machine("desktop");
    store b = open_store(eps, prefix, "b", NULL);
    rst_status st = RST_ERR_FENCED;
    for (int i = 0; i < 60 && st == RST_ERR_FENCED; i++) {
        st = b.ops->acquire(b.ctx);
        if (st == RST_ERR_FENCED) { close_store(&b); sleep_ms(200); b = open_store(eps, prefix, "b", NULL); }
    }
    CHECK_ST(st, RST_OK);
    unsigned char *mine = pattern(6000, 42);
    CHECK_ST(b.ops->write(b.ctx, RST_SLOT_ARCHIVE, 0, mine, 6000), RST_OK);
    CHECK_ST(rst_etcd_flush(b.ctx, 8000), RST_OK);
    kill(pid, SIGCONT);
    CHECK(write(down[1], "w", 1) == 1);
    int status = 0;
    uint64_t end = now_ms() + 30000;
    while (waitpid(pid, &status, WNOHANG) == 0 && now_ms() < end) sleep_ms(50);
    if (now_ms() >= end) { kill(pid, SIGKILL); waitpid(pid, &status, 0); }
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    as_machine("tablet");
    store r = open_store(eps, prefix, "r", NULL);
    CHECK(reads_as(&r, RST_SLOT_ARCHIVE, 0, mine, 6000));
    uint64_t idx[4];
    size_t n = 0;
    CHECK_ST(r.ops->list(r.ctx, RST_SLOT_CONFLICT, idx, 4, &n), RST_OK);
    /* the store's own copy of the refused save, and the one written after */
    CHECK(n == 2 && (idx[0] == 1234 || idx[1] == 1234));
    unsigned char *stale = pattern(4000, 101);
    for (size_t i = 0; i < n && i < 4; i++) CHECK(reads_as(&r, RST_SLOT_CONFLICT, idx[i], stale, 4000));
    free(stale);
    close_store(&r);
    close_store(&b);
    free(mine);
}

/* A handoff: the second machine asks, the owner's store raises
 * HANDOFF_REQUESTED, the owner saves its last state and gives ownership up,
 * and the second gets that state byte for byte. */
static void tune_handoff(rst_etcd_options *o) { o->handoff_wait_ms = 15000; }
static void scenario_handoff(void) {
    char eps[800];
    snprintf(eps, sizeof eps, "%s,%s,%s", ep("m1"), ep("m2"), ep("m3"));
    char prefix[256];
    snprintf(prefix, sizeof prefix, "%s", fresh_prefix("handoff"));
    int up[2];
    if (pipe(up)) { failures++; return; }
    pid_t pid = fork();
    if (pid == 0) {
        as_machine("laptop");
        store s = open_store(eps, prefix, "a", NULL);
        if (s.ops->acquire(s.ctx) != RST_OK) _exit(3);
        unsigned char *a = pattern(300000, 5);
        s.ops->write(s.ctx, RST_SLOT_ARCHIVE, 0, a, 300000);
        rst_etcd_flush(s.ctx, 8000);
        if (write(up[1], "a", 1) != 1) _exit(5);
        if (!wait_event(RST_STORE_EVENT_HANDOFF_REQUESTED, 1, 20000)) _exit(7);
        /* the last state, then ownership given up */
        unsigned char *last = pattern(300000, 6);
        if (s.ops->write(s.ctx, RST_SLOT_ARCHIVE, 0, last, 300000) != RST_OK) _exit(8);
        s.ops->release_ownership(s.ctx);
        /* from then on this instance is fenced */
        _exit(s.ops->write(s.ctx, RST_SLOT_ARCHIVE, 0, last, 10) == RST_ERR_FENCED ? 0 : 9);
    }
    char c;
    CHECK(read(up[0], &c, 1) == 1);
    as_machine("desktop");
    store b = open_store(eps, prefix, "b", tune_handoff);
    uint64_t t0 = now_ms();
    CHECK_ST(b.ops->acquire(b.ctx), RST_OK);
    printf("  handed off in %" PRIu64 " ms\n", now_ms() - t0);
    unsigned char *last = pattern(300000, 6);
    CHECK(reads_as(&b, RST_SLOT_ARCHIVE, 0, last, 300000));
    free(last);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close_store(&b);
}


/* The first endpoint dead: the next one answers, and describe names it. */
static void scenario_failover(void) {
    char eps[800];
    snprintf(eps, sizeof eps, "http://127.0.0.1:1,%s", ep("m2"));
    char prefix[256];
    snprintf(prefix, sizeof prefix, "%s", fresh_prefix("failover"));
    as_machine("laptop");
    store w = open_store(eps, prefix, "w", NULL);
    CHECK_HAS(w.ops->describe(w.ctx), "at http://127.0.0.1:1");
    CHECK_ST(w.ops->acquire(w.ctx), RST_OK);
    CHECK_HAS(w.ops->describe(w.ctx), ep("m2"));
    CHECK_ST(w.ops->write(w.ctx, RST_SLOT_ARCHIVE, 0, "abc", 3), RST_OK);
    CHECK_ST(rst_etcd_flush(w.ctx, 5000), RST_OK);
    CHECK(reads_as(&w, RST_SLOT_ARCHIVE, 0, "abc", 3));
    close_store(&w);
}

/* max_archive_bytes: RST_ERR_LIMIT before anything is written anywhere. */
static void tune_small(rst_etcd_options *o) { o->max_archive_bytes = 1000; }
static void scenario_limit(void) {
    char prefix[256];
    snprintf(prefix, sizeof prefix, "%s", fresh_prefix("limit"));
    as_machine("laptop");
    store w = open_store(ep("m1"), prefix, "w", tune_small);
    CHECK_ST(w.ops->acquire(w.ctx), RST_OK);
    unsigned char *a = pattern(1001, 1);
    CHECK_ST(w.ops->write(w.ctx, RST_SLOT_ARCHIVE, 0, a, 1001), RST_ERR_LIMIT);
    CHECK_HAS(rst_etcd_last_error(), "max_archive_bytes");
    CHECK_ST(rst_etcd_flush(w.ctx, 2000), RST_OK);
    CHECK_ST(w.ops->read(w.ctx, RST_SLOT_ARCHIVE, 0, &(const void *){0}, &(size_t){0}, &(void *){0}), RST_ERR_NOT_FOUND);
    CHECK_ST(w.ops->write(w.ctx, RST_SLOT_ARCHIVE, 0, a, 1000), RST_OK);
    CHECK_ST(rst_etcd_flush(w.ctx, 2000), RST_OK);
    free(a);
    close_store(&w);
    /* argument checks */
    rst_etcd_options o = RST_ETCD_OPTIONS_INIT;
    const rst_store_ops *ops;
    void *ctx;
    o.endpoints = "http://127.0.0.1:1";
    o.prefix = "/p/";
    o.lease_ttl_s = 1;
    CHECK_ST(rst_etcd_store(&o, &ops, &ctx), RST_ERR_INVALID);
    o.lease_ttl_s = 0;
    o.endpoints = "";
    CHECK_ST(rst_etcd_store(&o, &ops, &ctx), RST_ERR_INVALID);
    o.endpoints = "127.0.0.1:2379";
    CHECK_ST(rst_etcd_store(&o, &ops, &ctx), RST_ERR_INVALID);
    CHECK_HAS(rst_etcd_last_error(), "127.0.0.1:2379");
    o.endpoints = "http://127.0.0.1:1";
    o.prefix = "";
    CHECK_ST(rst_etcd_store(&o, &ops, &ctx), RST_ERR_INVALID);
    rst_etcd_options o2;
    CHECK_ST(rst_etcd_options_init(&o2, 1), RST_OK);
    CHECK(o2.version == 1 && o2.endpoints == NULL);
    CHECK_ST(rst_etcd_options_init(&o2, 2), RST_ERR_VERSION);
}

/* The quota cluster (--quota-backend-bytes): "database space exceeded" is
 * RST_ERR_LIMIT with etcd's words, and the local copy is kept. */
static void scenario_quota(void) {
    char prefix[256];
    snprintf(prefix, sizeof prefix, "%s", fresh_prefix("quota"));
    as_machine("laptop");
    store w = open_store(ep("q1"), prefix, "w", NULL);
    CHECK_ST(w.ops->acquire(w.ctx), RST_OK);
    rst_status last = RST_OK;
    unsigned char *a = NULL;
    for (unsigned i = 0; i < 40 && last == RST_OK; i++) {
        free(a);
        a = pattern(4 << 20, 1000 + i);
        last = w.ops->write(w.ctx, RST_SLOT_ARCHIVE, 0, a, 4 << 20);
        if (last == RST_OK) last = rst_etcd_flush(w.ctx, 10000);
    }
    CHECK_ST(last, RST_ERR_LIMIT);
    CHECK_HAS(rst_etcd_last_error(), "database space exceeded");
    CHECK(reads_as(&w, RST_SLOT_ARCHIVE, 0, a, 4 << 20)); /* the local copy */
    free(a);
    close_store(&w);
}

/* Authentication (the auth cluster, users alice and bob with a role each):
 * one person's credentials neither read nor write another's prefix, and a
 * wrong password is RST_ERR_REJECTED naming the user. */
static const char *auth_user, *auth_pass;
static void tune_auth(rst_etcd_options *o) { o->user = auth_user; o->password = auth_pass; }
static void scenario_auth(void) {
    as_machine("laptop");
    auth_user = "alice"; auth_pass = "alice-pw";
    store a = open_store(ep("a1"), "/restoration/v1/u/alice/a/notes/", "alice", tune_auth);
    CHECK_ST(a.ops->acquire(a.ctx), RST_OK);
    CHECK_ST(a.ops->write(a.ctx, RST_SLOT_ARCHIVE, 0, "alice's", 7), RST_OK);
    CHECK_ST(rst_etcd_flush(a.ctx, 5000), RST_OK);
    close_store(&a);

    auth_user = "bob"; auth_pass = "bob-pw";
    store b = open_store(ep("a1"), "/restoration/v1/u/bob/a/notes/", "bob", tune_auth);
    CHECK_ST(b.ops->acquire(b.ctx), RST_OK);
    CHECK_ST(b.ops->write(b.ctx, RST_SLOT_ARCHIVE, 0, "bob's", 5), RST_OK);
    CHECK_ST(rst_etcd_flush(b.ctx, 5000), RST_OK);
    close_store(&b);

    /* alice on bob's prefix: neither acquire, nor read, nor list */
    auth_user = "alice"; auth_pass = "alice-pw";
    store x = open_store(ep("a1"), "/restoration/v1/u/bob/a/notes/", "alice2", tune_auth);
    CHECK_ST(x.ops->acquire(x.ctx), RST_ERR_REJECTED);
    CHECK_HAS(rst_etcd_last_error(), "alice");
    CHECK_HAS(rst_etcd_last_error(), "/restoration/v1/u/bob/a/notes/");
    CHECK_ST(x.ops->read(x.ctx, RST_SLOT_ARCHIVE, 0, &(const void *){0}, &(size_t){0}, &(void *){0}), RST_ERR_REJECTED);
    CHECK_HAS(rst_etcd_last_error(), "permission denied");
    CHECK_ST(x.ops->list(x.ctx, RST_SLOT_ARCHIVE, (uint64_t[1]){0}, 1, &(size_t){0}), RST_ERR_REJECTED);
    close_store(&x);

    /* a wrong password */
    auth_user = "alice"; auth_pass = "wrong";
    store y = open_store(ep("a1"), "/restoration/v1/u/alice/a/notes/", "alice3", tune_auth);
    CHECK_ST(y.ops->acquire(y.ctx), RST_ERR_REJECTED);
    CHECK_HAS(rst_etcd_last_error(), "'alice'");
    CHECK_HAS(rst_etcd_last_error(), "authentication failed");
    close_store(&y);

    /* no credentials at all on a cluster with authentication */
    store z = open_store(ep("a1"), "/restoration/v1/u/alice/a/notes/", "anon", NULL);
    CHECK_ST(z.ops->acquire(z.ctx), RST_ERR_REJECTED);
    close_store(&z);

    /* alice still reads her own */
    auth_user = "alice"; auth_pass = "alice-pw";
    store r = open_store(ep("a1"), "/restoration/v1/u/alice/a/notes/", "alice4", tune_auth);
    CHECK(reads_as(&r, RST_SLOT_ARCHIVE, 0, "alice's", 7));
    close_store(&r);
}

/* TLS (the tls cluster): with the CA the store checks the certificate; a
 * CA that did not sign it is refused, never skipped. */
static void tune_tls(rst_etcd_options *o) { o->ca_file = getenv("ETCD_TEST_CA"); }
static void tune_tls_wrong(rst_etcd_options *o) { o->ca_file = getenv("ETCD_TEST_OTHER_CA"); }
static void scenario_tls(void) {
    const char *tls_ep = getenv("ETCD_TEST_TLS_ENDPOINT");
    if (!tls_ep) { failures++; fprintf(stderr, "ETCD_TEST_TLS_ENDPOINT is not set\n"); return; }
    as_machine("laptop");
    store w = open_store(tls_ep, "/restoration/v1/u/t/a/tls/", "tls", tune_tls);
    CHECK_ST(w.ops->acquire(w.ctx), RST_OK);
    CHECK_ST(w.ops->write(w.ctx, RST_SLOT_ARCHIVE, 0, "secure", 6), RST_OK);
    CHECK_ST(rst_etcd_flush(w.ctx, 5000), RST_OK);
    CHECK_HAS(w.ops->describe(w.ctx), "https://");
    close_store(&w);
    store x = open_store(tls_ep, "/restoration/v1/u/t/a/tls/", "tls2", tune_tls_wrong);
    CHECK_ST(x.ops->acquire(x.ctx), RST_ERR_REJECTED);
    CHECK_HAS(rst_etcd_last_error(), "TLS");
    close_store(&x);
}

/* The number of chunk keys under a prefix, as etcdctl sees them. */
static int count_chunks(const char *endpoint, const char *prefix) {
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "ETCDCTL_API=3 etcdctl --endpoints=%s --command-timeout=3s get --prefix '%schunks/' --keys-only | grep -c chunks/",
             endpoint, prefix);
    FILE *p = popen(cmd, "r");
    int n = -1;
    if (p) { if (fscanf(p, "%d", &n) != 1) n = -1; pclose(p); }
    return n;
}

/* Chunks no head refers to are removed by the owner later; those a head
 * names stay. */
static void scenario_chunk_gc(void) {
    setenv("RESTORATION_ETCD_GC_INTERVAL_MS", "300", 1);
    char prefix[256];
    snprintf(prefix, sizeof prefix, "%s", fresh_prefix("gc"));
    as_machine("laptop");
    store w = open_store(ep("m1"), prefix, "w", NULL);
    CHECK_ST(w.ops->acquire(w.ctx), RST_OK);
    size_t n = 1536 * 1024; /* two chunks each */
    unsigned char *a = pattern(n, 1), *b = pattern(n, 2);
    CHECK_ST(w.ops->write(w.ctx, RST_SLOT_ARCHIVE, 0, a, n), RST_OK);
    CHECK_ST(rst_etcd_flush(w.ctx, 8000), RST_OK);
    CHECK_ST(w.ops->move(w.ctx, RST_SLOT_ARCHIVE, 0, RST_SLOT_GENERATION, 1), RST_OK);
    CHECK_ST(w.ops->write(w.ctx, RST_SLOT_ARCHIVE, 0, b, n), RST_OK);
    CHECK_ST(rst_etcd_flush(w.ctx, 8000), RST_OK);
    sleep_ms(1500); /* several passes: every chunk is referenced */
    CHECK(count_chunks(ep("m1"), prefix) == 4);
    CHECK_ST(w.ops->remove(w.ctx, RST_SLOT_GENERATION, 1), RST_OK);
    CHECK_ST(rst_etcd_flush(w.ctx, 8000), RST_OK);
    int left = -1;
    for (int i = 0; i < 50 && (left = count_chunks(ep("m1"), prefix)) != 2; i++) sleep_ms(200);
    CHECK(left == 2);
    as_machine("desktop");
    store r = open_store(ep("m2"), prefix, "r", NULL);
    CHECK(reads_as(&r, RST_SLOT_ARCHIVE, 0, b, n));
    close_store(&r);
    close_store(&w);
    free(a); free(b);
}

/* An instance that starts while the cluster cannot be reached works from
 * its local copy and publishes when it answers; one that lost its lease
 * while offline, with another machine publishing meanwhile, gets OWNER_LOST,
 * RST_ERR_FENCED, and its save as a conflict copy; the other's archive stays. */
static void scenario_offline_start(void) {
    char prefix[256];
    snprintf(prefix, sizeof prefix, "%s", fresh_prefix("offstart"));
    char m3[256], m1[256];
    snprintf(m3, sizeof m3, "%s", ep("m3"));
    snprintf(m1, sizeof m1, "%s", ep("m1"));
    cl("kill m3");
    as_machine("laptop");
    store x = open_store(m3, prefix, "x", NULL);
    int off0 = atomic_load(&events[RST_STORE_EVENT_OFFLINE]), on0 = atomic_load(&events[RST_STORE_EVENT_ONLINE]);
    CHECK_ST(x.ops->acquire(x.ctx), RST_OK);
    CHECK(wait_event(RST_STORE_EVENT_OFFLINE, off0 + 1, 3000));
    unsigned char *a = pattern(50000, 1);
    CHECK_ST(x.ops->write(x.ctx, RST_SLOT_ARCHIVE, 0, a, 50000), RST_OK);
    CHECK_ST(rst_etcd_flush(x.ctx, 300), RST_ERR_UNAVAILABLE);
    CHECK(reads_as(&x, RST_SLOT_ARCHIVE, 0, a, 50000));
    cl("start m3");
    CHECK(wait_event(RST_STORE_EVENT_ONLINE, on0 + 1, 15000));
    CHECK_ST(rst_etcd_flush(x.ctx, 8000), RST_OK);
    as_machine("desktop");
    store r = open_store(m1, prefix, "r", NULL);
    CHECK(reads_as(&r, RST_SLOT_ARCHIVE, 0, a, 50000));
    close_store(&r);

    /* offline again, past the lease; another machine takes over and saves */
    cl("kill m3");
    unsigned char *b = pattern(60000, 2), *c = pattern(70000, 3);
    as_machine("laptop");
    CHECK_ST(x.ops->write(x.ctx, RST_SLOT_ARCHIVE, 0, b, 60000), RST_OK);
    as_machine("desktop");
    store y = open_store(m1, prefix, "y", NULL);
    rst_status st = RST_ERR_FENCED;
    for (int i = 0; i < 50 && st == RST_ERR_FENCED; i++) {
        st = y.ops->acquire(y.ctx);
        if (st == RST_ERR_FENCED) { close_store(&y); sleep_ms(200); y = open_store(m1, prefix, "y", NULL); }
    }
    CHECK_ST(st, RST_OK);
    CHECK_ST(y.ops->write(y.ctx, RST_SLOT_ARCHIVE, 0, c, 70000), RST_OK);
    CHECK_ST(rst_etcd_flush(y.ctx, 8000), RST_OK);
    int lost0 = atomic_load(&events[RST_STORE_EVENT_OWNER_LOST]);
    cl("start m3");
    CHECK(wait_event(RST_STORE_EVENT_OWNER_LOST, lost0 + 1, 15000));
    rst_status fst = rst_etcd_flush(x.ctx, 8000);
    CHECK(fst == RST_ERR_FENCED || fst == RST_OK);
    CHECK_ST(x.ops->write(x.ctx, RST_SLOT_ARCHIVE, 0, b, 60000), RST_ERR_FENCED);
    CHECK_HAS(rst_etcd_last_error(), "desktop (machine desktop)");
    CHECK_ST(rst_etcd_flush(x.ctx, 8000), RST_OK); /* the conflict copy is out */
    CHECK(reads_as(&y, RST_SLOT_ARCHIVE, 0, c, 70000));
    uint64_t idx[4];
    size_t n = 0;
    CHECK_ST(y.ops->list(y.ctx, RST_SLOT_CONFLICT, idx, 4, &n), RST_OK);
    CHECK(n == 1);
    if (n == 1) CHECK(reads_as(&y, RST_SLOT_CONFLICT, idx[0], b, 60000));
    close_store(&y);
    close_store(&x);
    free(a); free(b); free(c);
}

/* An endpoint of another cluster among the endpoints: RST_ERR_IO naming
 * both cluster ids, never a write there. */
static void scenario_cluster_change(void) {
    char prefix[256];
    snprintf(prefix, sizeof prefix, "%s", fresh_prefix("cluster"));
    char eps[600];
    snprintf(eps, sizeof eps, "%s,%s", ep("m1"), ep("q1"));
    as_machine("laptop");
    store w = open_store(eps, prefix, "w", NULL);
    CHECK_ST(w.ops->acquire(w.ctx), RST_OK);
    CHECK_ST(w.ops->write(w.ctx, RST_SLOT_ARCHIVE, 0, "one", 3), RST_OK);
    CHECK_ST(rst_etcd_flush(w.ctx, 5000), RST_OK);
    cl("kill m1");
    CHECK_ST(w.ops->write(w.ctx, RST_SLOT_ARCHIVE, 0, "two", 3), RST_OK);
    CHECK_ST(rst_etcd_flush(w.ctx, 8000), RST_ERR_IO);
    CHECK_HAS(rst_etcd_last_error(), "belongs to cluster");
    CHECK_ST(w.ops->read(w.ctx, RST_SLOT_MARKER, 0, &(const void *){0}, &(size_t){0}, &(void *){0}), RST_ERR_IO);
    close_store(&w);
    cl("start m1");
}

/* An etcd answer "request is too large" (the TLS member takes at most
 * 256 KiB a request): RST_ERR_LIMIT with etcd's words, the local copy kept. */
static void scenario_too_large(void) {
    const char *tls_ep = getenv("ETCD_TEST_TLS_ENDPOINT");
    if (!tls_ep) { failures++; return; }
    as_machine("laptop");
    store w = open_store(tls_ep, fresh_prefix("toolarge"), "big", tune_tls);
    CHECK_ST(w.ops->acquire(w.ctx), RST_OK);
    unsigned char *a = pattern(400000, 5);
    CHECK_ST(w.ops->write(w.ctx, RST_SLOT_ARCHIVE, 0, a, 400000), RST_OK);
    CHECK_ST(rst_etcd_flush(w.ctx, 8000), RST_ERR_LIMIT);
    CHECK_HAS(rst_etcd_last_error(), "request is too large");
    CHECK(reads_as(&w, RST_SLOT_ARCHIVE, 0, a, 400000));
    free(a);
    close_store(&w);
}

/* The token expires (the auth member's --auth-token-ttl is 2 s): the store
 * authenticates again, once, and the call succeeds. */
static void scenario_reauth(void) {
    as_machine("laptop");
    auth_user = "alice"; auth_pass = "alice-pw";
    store r = open_store(ep("a1"), "/restoration/v1/u/alice/a/notes/", "re", tune_auth);
    uint64_t idx[2];
    size_t n = 0;
    CHECK_ST(r.ops->list(r.ctx, RST_SLOT_ARCHIVE, idx, 2, &n), RST_OK);
    sleep_ms(4000);
    CHECK_ST(r.ops->list(r.ctx, RST_SLOT_ARCHIVE, idx, 2, &n), RST_OK);
    CHECK(n == 1);
    close_store(&r);
}

/* A writer that never pauses (a save every few ms for longer than two
 * leases, no flush) keeps its ownership: publishing never starves the
 * lease's keep-alive; its last save is then published. */
static void scenario_busy_writer(void) {
    char prefix[256];
    snprintf(prefix, sizeof prefix, "%s", fresh_prefix("busy"));
    as_machine("laptop");
    store w = open_store(ep("m1"), prefix, "w", NULL);
    CHECK_ST(w.ops->acquire(w.ctx), RST_OK);
    int lost0 = atomic_load(&events[RST_STORE_EVENT_OWNER_LOST]);
    unsigned char *a = NULL;
    uint64_t end = now_ms() + 6000;
    unsigned i = 0;
    while (now_ms() < end) {
        free(a);
        a = pattern(1 << 20, 5000 + i++);
        rst_status st = w.ops->write(w.ctx, RST_SLOT_ARCHIVE, 0, a, 1 << 20);
        if (st != RST_OK) { CHECK_ST(st, RST_OK); break; }
        sleep_ms(5);
    }
    printf("  %u saves of 1 MiB in 6 s\n", i);
    CHECK_ST(rst_etcd_flush(w.ctx, 10000), RST_OK);
    CHECK(atomic_load(&events[RST_STORE_EVENT_OWNER_LOST]) == lost0);
    as_machine("desktop");
    store r = open_store(ep("m2"), prefix, "r", NULL);
    CHECK(reads_as(&r, RST_SLOT_ARCHIVE, 0, a, 1 << 20));
    close_store(&r);
    close_store(&w);
    free(a);
}

/* A writer killed with SIGKILL while it publishes (between its chunks and
 * its transaction, or during either): the archive in the cluster is the
 * old one or the new one, whole, never a mix. */
static void scenario_killed_mid_publish(void) {
    char eps[800];
    snprintf(eps, sizeof eps, "%s,%s,%s", ep("m1"), ep("m2"), ep("m3"));
    size_t n = 5 << 20;
    unsigned char *old = pattern(n, 70), *neu = pattern(n, 71);
    int saw_old = 0, saw_new = 0;
    for (int k = 0; k < 6; k++) {
        char prefix[256];
        snprintf(prefix, sizeof prefix, "%s%d/", fresh_prefix("midkill"), k);
        int up[2];
        if (pipe(up)) { failures++; return; }
        pid_t pid = fork();
        if (pid == 0) {
            char m[32];
            snprintf(m, sizeof m, "writer%d", k);
            as_machine(m);
            store s = open_store(eps, prefix, m, NULL);
            if (s.ops->acquire(s.ctx) != RST_OK) _exit(3);
            if (s.ops->write(s.ctx, RST_SLOT_ARCHIVE, 0, old, n) != RST_OK || rst_etcd_flush(s.ctx, 10000) != RST_OK) _exit(4);
            if (s.ops->write(s.ctx, RST_SLOT_ARCHIVE, 0, neu, n) != RST_OK) _exit(5);
            if (write(up[1], "a", 1) != 1) _exit(6);
            rst_etcd_flush(s.ctx, 10000);
            pause();
            _exit(0);
        }
        char c;
        CHECK(read(up[0], &c, 1) == 1);
        sleep_ms((unsigned)(k * 180)); /* 0 .. 900 ms: before, during and after the transaction */
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        close(up[0]);
        close(up[1]);
        as_machine("reader");
        store r = open_store(eps, prefix, "r", NULL);
        const void *d = NULL;
        size_t len = 0;
        void *h = NULL;
        CHECK_ST(r.ops->read(r.ctx, RST_SLOT_ARCHIVE, 0, &d, &len, &h), RST_OK);
        if (d) {
            int is_old = len == n && memcmp(d, old, n) == 0, is_new = len == n && memcmp(d, neu, n) == 0;
            CHECK(is_old || is_new);
            saw_old += is_old;
            saw_new += is_new;
            r.ops->release(r.ctx, h);
        }
        close_store(&r);
    }
    printf("  killed 6 writers mid-publish: %d left the old archive, %d the new one, none a mix\n", saw_old, saw_new);
    free(old);
    free(neu);
}

/* An owner of this machine whose process is gone is taken over at once,
 * without waiting for its lease. */
static void scenario_same_machine(void) {
    char eps[800];
    snprintf(eps, sizeof eps, "%s,%s,%s", ep("m1"), ep("m2"), ep("m3"));
    char prefix[256];
    snprintf(prefix, sizeof prefix, "%s", fresh_prefix("samemachine"));
    int up[2], down[2];
    if (pipe(up) || pipe(down)) { failures++; return; }
    setenv("RESTORATION_MACHINE_ID", "kiosk-7", 1);
    pid_t pid = fork();
    if (pid == 0) child_owner(eps, prefix, "kiosk-7", up[1], down[0], 3000, 9);
    char c;
    CHECK(read(up[0], &c, 1) == 1);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    uint64_t t0 = now_ms();
    as_machine("kiosk-7");
    store b = open_store(eps, prefix, "b", NULL);
    CHECK_ST(b.ops->acquire(b.ctx), RST_OK);
    CHECK(now_ms() - t0 < 1000); /* the lease (2 s, renewed every 0.67 s) ends 1.3 s after the kill at the earliest */
    unsigned char *a = pattern(3000, 9);
    CHECK(reads_as(&b, RST_SLOT_ARCHIVE, 0, a, 3000));
    free(a);
    close_store(&b);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc != 2) { fprintf(stderr, "usage: etcd_test SCENARIO\n"); return 2; }
    csh = getenv("ETCD_CLUSTER_SH");
    cdir = getenv("ETCD_CLUSTER_DIR");
    if (!csh || !cdir) { fprintf(stderr, "ETCD_CLUSTER_SH and ETCD_CLUSTER_DIR must be set\n"); return 2; }
    snprintf(tmpdir, sizeof tmpdir, "%s", cdir);
    const char *s = argv[1];
    if (!strcmp(s, "roundtrip")) scenario_roundtrip();
    else if (!strcmp(s, "kill-members")) scenario_kill_members();
    else if (!strcmp(s, "offline")) scenario_offline();
    else if (!strcmp(s, "owner-killed")) scenario_owner_killed();
    else if (!strcmp(s, "stale-owner")) scenario_stale_owner();
    else if (!strcmp(s, "handoff")) scenario_handoff();
    else if (!strcmp(s, "failover")) scenario_failover();
    else if (!strcmp(s, "limit")) scenario_limit();
    else if (!strcmp(s, "quota")) scenario_quota();
    else if (!strcmp(s, "auth")) scenario_auth();
    else if (!strcmp(s, "tls")) scenario_tls();
    else if (!strcmp(s, "chunk-gc")) scenario_chunk_gc();
    else if (!strcmp(s, "offline-start")) scenario_offline_start();
    else if (!strcmp(s, "cluster-change")) scenario_cluster_change();
    else if (!strcmp(s, "too-large")) scenario_too_large();
    else if (!strcmp(s, "reauth")) scenario_reauth();
    else if (!strcmp(s, "busy-writer")) scenario_busy_writer();
    else if (!strcmp(s, "same-machine")) scenario_same_machine();
    else if (!strcmp(s, "killed-mid-publish")) scenario_killed_mid_publish();
    else { fprintf(stderr, "unknown scenario %s\n", s); return 2; }
    if (failures) fprintf(stderr, "%s: %d check(s) failed\n", s, failures);
    return failures ? 1 : 0;
}
