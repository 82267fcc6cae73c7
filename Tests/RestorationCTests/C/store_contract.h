/* store_contract.h: what every rst_store_ops must do, checked through the
 * C ABI on any store (the file store, the memory store, a host's store):
 *
 *   int store_contract(const rst_store_ops *ops, void *ctx, const char *name);
 *
 * runs the checks on an EMPTY store (returns 0; a failed check exits 1
 * naming itself, through check.h) and leaves the store empty; it does not
 * destroy it. Also here: a counting store that wraps any other and counts
 * reads/releases, locks/unlocks and destroys, so a test can check that the
 * engine keeps every pair balanced:
 *
 *   counting_store *cs = counting_wrap(ops, ctx);
 *   rst_engine_create_with_store(&o, &counting_ops, cs, &e);
 *
 * Include after check.h. */
#ifndef RST_TEST_STORE_CONTRACT_H
#define RST_TEST_STORE_CONTRACT_H

#include "restoration_store.h"
#include <stdbool.h>

/* ---- the contract ---- */

static void sc_put(const rst_store_ops *ops, void *ctx, rst_slot s, uint64_t i, const char *text) {
    CHECK_OK(ops->write(ctx, s, i, text, strlen(text)));
}

/* The slot holds exactly `text` (NULL: empty). */
static void sc_expect(const rst_store_ops *ops, void *ctx, rst_slot s, uint64_t i, const char *text, const char *name) {
    const void *data = NULL; size_t len = 0; void *hold = NULL;
    rst_status st = ops->read(ctx, s, i, &data, &len, &hold);
    if (text == NULL) {
        CHECK_MSG(st == RST_ERR_NOT_FOUND, "%s: slot %d/%llu should be empty, read gave %s", name, (int)s, (unsigned long long)i, rst_status_name(st));
        return;
    }
    CHECK_MSG(st == RST_OK, "%s: read of slot %d/%llu gave %s", name, (int)s, (unsigned long long)i, rst_status_name(st));
    CHECK_MSG(data != NULL && len == strlen(text) && memcmp(data, text, len) == 0,
              "%s: slot %d/%llu holds %zu bytes, not \"%s\"", name, (int)s, (unsigned long long)i, len, text);
    ops->release(ctx, hold);
}

static void sc_list(const rst_store_ops *ops, void *ctx, rst_slot s, const uint64_t *want, size_t n, const char *name) {
    uint64_t got[8] = { 0 };
    size_t count = 99;
    CHECK_OK(ops->list(ctx, s, got, 8, &count));
    CHECK_MSG(count == n, "%s: slot %d lists %zu indexes, not %zu", name, (int)s, count, n);
    for (size_t k = 0; k < n && k < 8; k++)
        CHECK_MSG(got[k] == want[k], "%s: slot %d: index %zu is %llu, not %llu (ascending)", name, (int)s, k,
                  (unsigned long long)got[k], (unsigned long long)want[k]);
}

static int store_contract(const rst_store_ops *ops, void *ctx, const char *name) {
    CHECK_MSG(ops != NULL && ops->version == RST_STORE_VERSION, "%s: version", name);
    CHECK_MSG((ops->flags & ~RST_STORE_SHARED) == 0, "%s: unknown flags", name);
    const char *d = ops->describe(ctx);
    CHECK_MSG(d != NULL && d[0] != '\0', "%s: describe() is empty", name);
    CHECK_MSG(ops->describe(ctx) == d || strcmp(ops->describe(ctx), d) == 0, "%s: describe() changes", name);

    /* empty slots */
    for (int s = RST_SLOT_ARCHIVE; s <= RST_SLOT_CRASHED; s++) {
        uint64_t i = s == RST_SLOT_GENERATION ? 1 : 0;
        sc_expect(ops, ctx, (rst_slot)s, i, NULL, name);
        size_t count = 99;
        CHECK_OK(ops->list(ctx, (rst_slot)s, NULL, 0, &count));
        CHECK_MSG(count == 0, "%s: empty slot %d lists %zu", name, s, count);
        /* remove of an empty slot is RST_OK */
        CHECK_MSG(ops->remove(ctx, (rst_slot)s, i) == RST_OK, "%s: remove of empty slot %d is not RST_OK", name, s);
    }

    /* write, read back, replace; a hold stays valid and unchanged across a replacement */
    sc_put(ops, ctx, RST_SLOT_ARCHIVE, 0, "first archive");
    sc_expect(ops, ctx, RST_SLOT_ARCHIVE, 0, "first archive", name);
    {
        const void *data = NULL; size_t len = 0; void *hold = NULL;
        CHECK_OK(ops->read(ctx, RST_SLOT_ARCHIVE, 0, &data, &len, &hold));
        sc_put(ops, ctx, RST_SLOT_ARCHIVE, 0, "second, longer archive");
        CHECK_MSG(len == 13 && memcmp(data, "first archive", 13) == 0, "%s: a hold changed when the slot was replaced", name);
        ops->release(ctx, hold);
    }
    sc_expect(ops, ctx, RST_SLOT_ARCHIVE, 0, "second, longer archive", name);
    /* zero bytes are bytes, not an empty slot */
    sc_put(ops, ctx, RST_SLOT_MARKER, 0, "");
    sc_expect(ops, ctx, RST_SLOT_MARKER, 0, "", name);
    CHECK_OK(ops->remove(ctx, RST_SLOT_MARKER, 0));
    sc_expect(ops, ctx, RST_SLOT_MARKER, 0, NULL, name);

    /* move: to an empty slot, then replacing one; `from` empty afterwards */
    sc_put(ops, ctx, RST_SLOT_GENERATION, 1, "gen one");
    CHECK_OK(ops->move(ctx, RST_SLOT_GENERATION, 1, RST_SLOT_GENERATION, 2));
    sc_expect(ops, ctx, RST_SLOT_GENERATION, 1, NULL, name);
    sc_expect(ops, ctx, RST_SLOT_GENERATION, 2, "gen one", name);
    sc_put(ops, ctx, RST_SLOT_GENERATION, 1, "gen newer");
    CHECK_OK(ops->move(ctx, RST_SLOT_GENERATION, 1, RST_SLOT_GENERATION, 2));
    sc_expect(ops, ctx, RST_SLOT_GENERATION, 2, "gen newer", name);
    sc_expect(ops, ctx, RST_SLOT_GENERATION, 1, NULL, name);
    /* a move from an empty slot fails and changes nothing */
    CHECK_MSG(ops->move(ctx, RST_SLOT_GENERATION, 5, RST_SLOT_GENERATION, 2) != RST_OK, "%s: move from an empty slot returned RST_OK", name);
    sc_expect(ops, ctx, RST_SLOT_GENERATION, 2, "gen newer", name);

    /* link (optional): both hold the bytes; replacing */
    if (ops->link) {
        CHECK_OK(ops->link(ctx, RST_SLOT_ARCHIVE, 0, RST_SLOT_GENERATION, 2));
        sc_expect(ops, ctx, RST_SLOT_ARCHIVE, 0, "second, longer archive", name);
        sc_expect(ops, ctx, RST_SLOT_GENERATION, 2, "second, longer archive", name);
        /* the copy is a copy: replacing the archive leaves it */
        sc_put(ops, ctx, RST_SLOT_ARCHIVE, 0, "third");
        sc_expect(ops, ctx, RST_SLOT_GENERATION, 2, "second, longer archive", name);
    }

    /* set-asides: list ascending; *count beyond cap */
    const uint64_t ms[] = { 1700000000300ull, 1700000000100ull, 1700000000200ull };
    for (int k = 0; k < 3; k++) {
        CHECK_OK(ops->move(ctx, RST_SLOT_ARCHIVE, 0, RST_SLOT_INVALID, ms[k]));
        sc_put(ops, ctx, RST_SLOT_ARCHIVE, 0, "again");
    }
    {
        const uint64_t want[] = { 1700000000100ull, 1700000000200ull, 1700000000300ull };
        sc_list(ops, ctx, RST_SLOT_INVALID, want, 3, name);
        uint64_t two[2] = { 0, 0 };
        size_t count = 0;
        CHECK_OK(ops->list(ctx, RST_SLOT_INVALID, two, 2, &count));
        CHECK_MSG(count == 3, "%s: list with cap 2 of 3 indexes set *count to %zu, not 3", name, count);
        CHECK_MSG(two[0] == want[0] && two[1] == want[1], "%s: list with cap 2 did not give the 2 lowest", name);
        count = 0;
        CHECK_OK(ops->list(ctx, RST_SLOT_INVALID, NULL, 0, &count));
        CHECK_EQ(count, 3);
        for (int k = 0; k < 3; k++) CHECK_OK(ops->remove(ctx, RST_SLOT_INVALID, want[k]));
        sc_list(ops, ctx, RST_SLOT_INVALID, NULL, 0, name);
    }
    {
        const uint64_t want[] = { 2 };
        sc_list(ops, ctx, RST_SLOT_GENERATION, want, 1, name);
        const uint64_t one[] = { 0 };
        sc_list(ops, ctx, RST_SLOT_ARCHIVE, one, 1, name);
    }

    /* lock and unlock, twice */
    for (int k = 0; k < 2; k++) {
        CHECK_OK(ops->lock(ctx));
        ops->unlock(ctx);
    }

    /* map (optional): the region starts zeroed for a new slot, and a read
     * returns what was stored through it */
    if (ops->map) {
        void *addr = NULL;
        CHECK_OK(ops->map(ctx, RST_SLOT_QUARANTINE, 16, &addr));
        CHECK(addr != NULL);
        static const char zero[16];
        CHECK_MSG(memcmp(addr, zero, 16) == 0, "%s: a new mapped slot is not zero-filled", name);
        memcpy(addr, "mapped bytes 16!", 16);
        sc_expect(ops, ctx, RST_SLOT_QUARANTINE, 0, "mapped bytes 16!", name);
        CHECK_OK(ops->remove(ctx, RST_SLOT_QUARANTINE, 0));
        sc_expect(ops, ctx, RST_SLOT_QUARANTINE, 0, NULL, name);
    }

    /* leave it empty */
    CHECK_OK(ops->remove(ctx, RST_SLOT_ARCHIVE, 0));
    CHECK_OK(ops->remove(ctx, RST_SLOT_GENERATION, 2));
    for (int s = RST_SLOT_ARCHIVE; s <= RST_SLOT_CRASHED; s++) {
        size_t count = 99;
        CHECK_OK(ops->list(ctx, (rst_slot)s, NULL, 0, &count));
        CHECK_MSG(count == 0, "%s: slot %d not empty at the end (%zu)", name, s, count);
    }
    printf("%s: store contract: ok\n", name);
    return 0;
}

/* ---- a counting store around any store ---- */

typedef struct counting_store {
    const rst_store_ops *inner;
    void *ctx;
    int reads, releases, locks, unlocks, destroys, writes;
    int depth;          /* locks held now */
    bool held_in_callback; /* set by the test when a callback runs with the lock held */
    /* injected failures: the next call of that kind fails with this status (0: none) */
    rst_status fail_write, fail_read, fail_lock;
    const char *fail_sentence; /* given to rst_store_set_error() before failing */
    bool read_ok_without_data;
} counting_store;

static counting_store *counting_wrap(const rst_store_ops *inner, void *ctx) {
    counting_store *c = calloc(1, sizeof *c);
    c->inner = inner; c->ctx = ctx;
    return c;
}

static rst_status cnt_read(void *ctx, rst_slot s, uint64_t i, const void **data, size_t *len, void **hold) {
    counting_store *c = ctx;
    if (c->read_ok_without_data && s == RST_SLOT_ARCHIVE) { c->read_ok_without_data = false; return RST_OK; }
    if (c->fail_read) { rst_status f = c->fail_read; c->fail_read = RST_OK; if (c->fail_sentence) rst_store_set_error(c->fail_sentence); return f; }
    rst_status st = c->inner->read(c->ctx, s, i, data, len, hold);
    if (st == RST_OK) c->reads++;
    return st;
}
static void cnt_release(void *ctx, void *hold) { counting_store *c = ctx; c->releases++; c->inner->release(c->ctx, hold); }
static rst_status cnt_write(void *ctx, rst_slot s, uint64_t i, const void *data, size_t len) {
    counting_store *c = ctx;
    if (c->fail_write && s == RST_SLOT_ARCHIVE) { rst_status f = c->fail_write; c->fail_write = RST_OK; if (c->fail_sentence) rst_store_set_error(c->fail_sentence); return f; }
    if (s == RST_SLOT_ARCHIVE) c->writes++;
    return c->inner->write(c->ctx, s, i, data, len);
}
static rst_status cnt_move(void *ctx, rst_slot a, uint64_t ai, rst_slot b, uint64_t bi) { counting_store *c = ctx; return c->inner->move(c->ctx, a, ai, b, bi); }
static rst_status cnt_link(void *ctx, rst_slot a, uint64_t ai, rst_slot b, uint64_t bi) { counting_store *c = ctx; return c->inner->link(c->ctx, a, ai, b, bi); }
static rst_status cnt_remove(void *ctx, rst_slot s, uint64_t i) { counting_store *c = ctx; return c->inner->remove(c->ctx, s, i); }
static rst_status cnt_list(void *ctx, rst_slot s, uint64_t *ix, size_t cap, size_t *count) { counting_store *c = ctx; return c->inner->list(c->ctx, s, ix, cap, count); }
static rst_status cnt_lock(void *ctx) {
    counting_store *c = ctx;
    if (c->fail_lock) { rst_status f = c->fail_lock; c->fail_lock = RST_OK; if (c->fail_sentence) rst_store_set_error(c->fail_sentence); return f; }
    rst_status st = c->inner->lock(c->ctx);
    if (st == RST_OK) { c->locks++; c->depth++; }
    return st;
}
static void cnt_unlock(void *ctx) { counting_store *c = ctx; c->unlocks++; c->depth--; c->inner->unlock(c->ctx); }
static rst_status cnt_map(void *ctx, rst_slot s, size_t len, void **addr) { counting_store *c = ctx; return c->inner->map(c->ctx, s, len, addr); }
static const char *cnt_describe(void *ctx) { counting_store *c = ctx; return c->inner->describe(c->ctx); }
/* destroys the inner store; the counting_store itself stays for the test to read (and free) */
static void cnt_destroy(void *ctx) { counting_store *c = ctx; c->destroys++; c->inner->destroy(c->ctx); }

/* The table for a counting store over an inner one with (or without) link and map. */
static rst_store_ops counting_ops(const rst_store_ops *inner) {
    rst_store_ops o = { RST_STORE_VERSION, inner->flags, cnt_read, cnt_release, cnt_write, cnt_move,
                        inner->link ? cnt_link : NULL, cnt_remove, cnt_list, cnt_lock, cnt_unlock,
                        inner->map ? cnt_map : NULL, cnt_describe, cnt_destroy, NULL, NULL, NULL };
    return o;
}

#endif
