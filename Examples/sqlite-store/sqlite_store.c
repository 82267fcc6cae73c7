/* sqlite_store.c: the slots of a Restoration store in an SQLite database.
 * See sqlite_store.h for the table and the guarantees. */
#define _GNU_SOURCE
#include "sqlite_store.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

typedef struct sqlite_store {
    sqlite3 *db;
    char    *db_path;
    char    *name;
    char    *lock_path;
    int      lock_fd;       /* open while the store lives; flock()ed by lock() */
    char     describe[1024];
} sqlite_store;

/* Reports a failure through rst_store_set_error(): the engine keeps the
 * sentence, which names the database. */
static rst_status failf(sqlite_store *s, rst_status status, const char *fmt, ...) {
    char what[512], sentence[1600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(sentence, sizeof sentence, "%s: %s", s->describe, what);
    rst_store_set_error(sentence);
    return status;
}

static rst_status sql_fail(sqlite_store *s, const char *doing) {
    return failf(s, RST_ERR_IO, "%s failed: %s", doing, sqlite3_errmsg(s->db));
}

/* Runs one statement of no result; SQLITE_OK or the error. */
static int exec(sqlite_store *s, const char *sql) {
    return sqlite3_exec(s->db, sql, NULL, NULL, NULL);
}

static int prepare(sqlite_store *s, const char *sql, sqlite3_stmt **st) {
    return sqlite3_prepare_v2(s->db, sql, -1, st, NULL);
}

/* BEGIN IMMEDIATE ... COMMIT around `body`; a failure rolls back. */
static rst_status begin(sqlite_store *s, const char *doing) {
    if (exec(s, "BEGIN IMMEDIATE") != SQLITE_OK) return sql_fail(s, doing);
    return RST_OK;
}
static rst_status commit(sqlite_store *s, const char *doing) {
    if (exec(s, "COMMIT") != SQLITE_OK) {
        rst_status st = sql_fail(s, doing);
        exec(s, "ROLLBACK");
        return st;
    }
    return RST_OK;
}
static rst_status rollback(sqlite_store *s, rst_status st) {
    exec(s, "ROLLBACK");
    return st;
}

static rst_status st_read(void *ctx, rst_slot slot, uint64_t index,
                          const void **data, size_t *len, void **hold) {
    sqlite_store *s = ctx;
    sqlite3_stmt *st;
    if (prepare(s, "SELECT data FROM restoration_slots WHERE archive=?1 AND kind=?2 AND idx=?3", &st) != SQLITE_OK)
        return sql_fail(s, "reading a slot");
    sqlite3_bind_text(st, 1, s->name, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, (int)slot);
    sqlite3_bind_int64(st, 3, (sqlite3_int64)index);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) {
        sqlite3_finalize(st);
        return RST_ERR_NOT_FOUND;
    }
    if (rc != SQLITE_ROW) {
        rst_status e = sql_fail(s, "reading a slot");
        sqlite3_finalize(st);
        return e;
    }
    int n = sqlite3_column_bytes(st, 0);
    const void *p = sqlite3_column_blob(st, 0);
    /* The bytes must outlive the statement: one copy, released by release(). */
    void *copy = malloc(n > 0 ? (size_t)n : 1);
    if (!copy) {
        sqlite3_finalize(st);
        return failf(s, RST_ERR_NOMEM, "no memory for %d bytes of slot %d/%llu", n, (int)slot, (unsigned long long)index);
    }
    if (n > 0) memcpy(copy, p, (size_t)n);
    sqlite3_finalize(st);
    *data = copy;
    *len = (size_t)n;
    *hold = copy;
    return RST_OK;
}

static void st_release(void *ctx, void *hold) {
    (void)ctx;
    free(hold);
}

static rst_status st_write(void *ctx, rst_slot slot, uint64_t index, const void *data, size_t len) {
    sqlite_store *s = ctx;
    if (len > (size_t)0x7fffffff) return failf(s, RST_ERR_LIMIT, "%zu bytes do not fit in one SQLite blob", len);
    rst_status r = begin(s, "writing a slot");
    if (r != RST_OK) return r;
    sqlite3_stmt *st;
    if (prepare(s, "INSERT OR REPLACE INTO restoration_slots(archive, kind, idx, data) VALUES (?1, ?2, ?3, ?4)", &st) != SQLITE_OK)
        return rollback(s, sql_fail(s, "writing a slot"));
    sqlite3_bind_text(st, 1, s->name, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, (int)slot);
    sqlite3_bind_int64(st, 3, (sqlite3_int64)index);
    sqlite3_bind_blob(st, 4, len ? data : "", (int)len, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return rollback(s, sql_fail(s, "writing a slot"));
    return commit(s, "committing a write");
}

/* Copies (link) or moves (move) a slot in one transaction. */
static rst_status transfer(sqlite_store *s, rst_slot from, uint64_t fi, rst_slot to, uint64_t ti, int keep) {
    const char *doing = keep ? "linking a slot" : "moving a slot";
    if (from == to && fi == ti) return RST_OK;
    rst_status r = begin(s, doing);
    if (r != RST_OK) return r;
    sqlite3_stmt *st;
    if (prepare(s, "INSERT OR REPLACE INTO restoration_slots(archive, kind, idx, data) "
                   "SELECT archive, ?4, ?5, data FROM restoration_slots WHERE archive=?1 AND kind=?2 AND idx=?3", &st) != SQLITE_OK)
        return rollback(s, sql_fail(s, doing));
    sqlite3_bind_text(st, 1, s->name, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, (int)from);
    sqlite3_bind_int64(st, 3, (sqlite3_int64)fi);
    sqlite3_bind_int(st, 4, (int)to);
    sqlite3_bind_int64(st, 5, (sqlite3_int64)ti);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return rollback(s, sql_fail(s, doing));
    if (sqlite3_changes(s->db) == 0) {
        rollback(s, RST_OK);
        return failf(s, RST_ERR_NOT_FOUND, "%s: slot %d/%llu is empty", doing, (int)from, (unsigned long long)fi);
    }
    if (!keep) {
        if (prepare(s, "DELETE FROM restoration_slots WHERE archive=?1 AND kind=?2 AND idx=?3", &st) != SQLITE_OK)
            return rollback(s, sql_fail(s, doing));
        sqlite3_bind_text(st, 1, s->name, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 2, (int)from);
        sqlite3_bind_int64(st, 3, (sqlite3_int64)fi);
        rc = sqlite3_step(st);
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE) return rollback(s, sql_fail(s, doing));
    }
    return commit(s, doing);
}

static rst_status st_move(void *ctx, rst_slot from, uint64_t fi, rst_slot to, uint64_t ti) {
    return transfer(ctx, from, fi, to, ti, 0);
}

static rst_status st_link(void *ctx, rst_slot from, uint64_t fi, rst_slot to, uint64_t ti) {
    return transfer(ctx, from, fi, to, ti, 1);
}

static rst_status st_remove(void *ctx, rst_slot slot, uint64_t index) {
    sqlite_store *s = ctx;
    sqlite3_stmt *st;
    if (prepare(s, "DELETE FROM restoration_slots WHERE archive=?1 AND kind=?2 AND idx=?3", &st) != SQLITE_OK)
        return sql_fail(s, "removing a slot");
    sqlite3_bind_text(st, 1, s->name, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, (int)slot);
    sqlite3_bind_int64(st, 3, (sqlite3_int64)index);
    int rc = sqlite3_step(st);   /* one statement: its own transaction */
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? RST_OK : sql_fail(s, "removing a slot");
}

static rst_status st_list(void *ctx, rst_slot slot, uint64_t *indexes, size_t cap, size_t *count) {
    sqlite_store *s = ctx;
    sqlite3_stmt *st;
    if (prepare(s, "SELECT idx FROM restoration_slots WHERE archive=?1 AND kind=?2 ORDER BY idx", &st) != SQLITE_OK)
        return sql_fail(s, "listing slots");
    sqlite3_bind_text(st, 1, s->name, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, (int)slot);
    size_t n = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (n < cap) indexes[n] = (uint64_t)sqlite3_column_int64(st, 0);
        n++;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return sql_fail(s, "listing slots");
    *count = n;
    return RST_OK;
}

static rst_status st_lock(void *ctx) {
    sqlite_store *s = ctx;
    while (flock(s->lock_fd, LOCK_EX) != 0) {
        if (errno != EINTR) return failf(s, RST_ERR_IO, "locking '%s' failed: %s", s->lock_path, strerror(errno));
    }
    return RST_OK;
}

static void st_unlock(void *ctx) {
    sqlite_store *s = ctx;
    flock(s->lock_fd, LOCK_UN);
}

static const char *st_describe(void *ctx) {
    return ((sqlite_store *)ctx)->describe;
}

static void st_destroy(void *ctx) {
    sqlite_store *s = ctx;
    if (!s) return;
    if (s->db) sqlite3_close(s->db);
    if (s->lock_fd >= 0) close(s->lock_fd);
    free(s->db_path);
    free(s->name);
    free(s->lock_path);
    free(s);
}

static const rst_store_ops sqlite_ops = {
    .version = RST_STORE_VERSION,
    .flags = RST_STORE_SHARED,
    .read = st_read,
    .release = st_release,
    .write = st_write,
    .move = st_move,
    .link = st_link,
    .remove = st_remove,
    .list = st_list,
    .lock = st_lock,
    .unlock = st_unlock,
    .map = NULL,        /* no shared mapping: a death during restore sets the archive aside */
    .describe = st_describe,
    .destroy = st_destroy,
};

static rst_status open_fail(sqlite_store *s, rst_status st, char *err, size_t cap, const char *fmt, ...) {
    if (err && cap) {
        char what[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof what, fmt, ap);
        va_end(ap);
        snprintf(err, cap, "%s: %s", s->describe, what);
    }
    st_destroy(s);
    return st;
}

rst_status sqlite_store_open(const char *db_path, const char *name,
                             const rst_store_ops **ops, void **ctx,
                             char *err, size_t errcap) {
    if (err && errcap) err[0] = '\0';
    if (!db_path || !*db_path || !name || !*name || !ops || !ctx) {
        if (err && errcap) snprintf(err, errcap, "sqlite_store_open: a NULL or empty argument");
        return RST_ERR_INVALID;
    }
    sqlite_store *s = calloc(1, sizeof *s);
    if (!s) return RST_ERR_NOMEM;
    s->lock_fd = -1;
    s->db_path = strdup(db_path);
    s->name = strdup(name);
    if (asprintf(&s->lock_path, "%s.lock", db_path) < 0) s->lock_path = NULL;
    if (!s->db_path || !s->name || !s->lock_path) { st_destroy(s); return RST_ERR_NOMEM; }
    snprintf(s->describe, sizeof s->describe, "SQLite database '%s', archive '%s'", db_path, name);

    s->lock_fd = open(s->lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (s->lock_fd < 0)
        return open_fail(s, RST_ERR_IO, err, errcap, "cannot open the lock file '%s': %s", s->lock_path, strerror(errno));
    if (sqlite3_open_v2(db_path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK)
        return open_fail(s, RST_ERR_IO, err, errcap, "cannot open it: %s", s->db ? sqlite3_errmsg(s->db) : "out of memory");
    sqlite3_busy_timeout(s->db, 10000);   /* other processes' transactions are short */
    const char *setup =
        "PRAGMA journal_mode = WAL;"
        "PRAGMA synchronous = FULL;"
        "CREATE TABLE IF NOT EXISTS restoration_slots ("
        "  archive TEXT NOT NULL, kind INTEGER NOT NULL, idx INTEGER NOT NULL, data BLOB NOT NULL,"
        "  PRIMARY KEY (archive, kind, idx));";
    char *msg = NULL;
    if (sqlite3_exec(s->db, setup, NULL, NULL, &msg) != SQLITE_OK) {
        rst_status st = open_fail(s, RST_ERR_IO, err, errcap, "cannot set it up: %s", msg ? msg : "unknown error");
        sqlite3_free(msg);
        return st;
    }
    *ops = &sqlite_ops;
    *ctx = s;
    return RST_OK;
}
