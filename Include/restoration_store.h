/**
 * @file restoration_store.h
 * @brief Where archives live: the storage door (@since 1.2).
 *
 * The engine reaches its archive and every file beside it — older
 * generations, invalid archives set aside, the crash-loop marker, the
 * quarantine, the session — only through a *store*: a table of functions
 * and a context, shaped like libgit2's backends and SQLite's VFS. The
 * built-in file store is what `rst_engine_options.archive_path` means; a
 * host can give its own (its database, its configuration system, a server)
 * or wrap the file store (to log, mirror or inject faults). docs/STORAGE.md
 * states the contract in full and shows the SQLite store of
 * `Examples/sqlite-store`.
 *
 * A store holds *slots*: a kind (::rst_slot) and an index. Each slot holds
 * bytes or nothing (zero bytes are bytes, not an empty slot).
 *
 * Where the contract leaves a choice, this library's:
 * - the engine checks every length and count a store returns: a `list`
 *   count above 2^20, or an archive or generation read of more than
 *   RST_MAX_ARCHIVE_BYTES, fails
 *   the operation (RST_ERR_IO, RST_ERR_LIMIT), never a crash; indexes are
 *   sorted again by the engine;
 * - a failure's sentence: the one the store gave to rst_store_set_error(),
 *   else "<describe()>: <operation> of slot <kind> <index> failed
 *   (<status>)"; either way rst_last_error() names the C function first;
 * - RST_ERR_NOT_FOUND from `remove` counts as RST_OK; from `move` (an
 *   empty `from`) it is a failure; the built-in stores return it then;
 * - `read` returning RST_OK without `*data`: RST_ERR_IO naming the store
 *   (its `hold`, if set, is released);
 * - the session slot is written at the first save or restore that can; a
 *   store that maps gets it through `map` (so rst_close_session() can zero
 *   it from a signal handler), else through `write`.
 */
#ifndef RESTORATION_STORE_H
#define RESTORATION_STORE_H

#include "restoration.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The table version this engine accepts. A version-2 table (@since 1.3)
 *  appends three ownership members — `acquire`, `release_ownership`,
 *  `attach` — after `destroy`; stores that roam between machines (the etcd
 *  store of restoration_etcd.h) fill them and set `version` to 2. */
#define RST_STORE_VERSION 1
/** rst_store_ops.flags: other processes may use the same place, so `lock`
 *  must exclude them too. */
#define RST_STORE_SHARED 1u

typedef enum rst_slot {
    RST_SLOT_ARCHIVE    = 0, /**< the current archive (index 0) */
    RST_SLOT_GENERATION = 1, /**< index k = 1..16: the k-th older archive */
    RST_SLOT_INVALID    = 2, /**< an invalid archive set aside; index = UTC ms */
    RST_SLOT_MARKER     = 3, /**< the crash-loop marker (index 0) */
    RST_SLOT_QUARANTINE = 4, /**< (index 0) */
    RST_SLOT_SESSION    = 5, /**< (index 0) */
    RST_SLOT_CRASHED    = 6, /**< an archive set aside after a crash loop; index = UTC ms */
    RST_SLOT_CONFLICT   = 7  /**< @since 1.3: an archive that could not be written
                                  because this instance was fenced; index = UTC ms
                                  (or the next free one). Never written over the
                                  archive, never restored by itself. */
} rst_slot;

/** @since 1.3: what a version-2 store tells the engine, through
 *  rst_store_host.notify. */
typedef enum rst_store_event {
    RST_STORE_EVENT_HANDOFF_REQUESTED = 1, /**< another machine asks for the state */
    RST_STORE_EVENT_OWNER_LOST        = 2, /**< another instance owns the state now */
    RST_STORE_EVENT_OFFLINE           = 3, /**< saves are kept locally, not published */
    RST_STORE_EVENT_ONLINE            = 4  /**< published again (everything pending is out) */
} rst_store_event;

/** @since 1.3: the engine's side of a version-2 store, given to `attach`.
 *  Valid until the store's `destroy`. */
typedef struct rst_store_host {
    void *engine;                                        /**< opaque; passed back to notify */
    /** Thread-safe and never blocks: it only queues the event. The store may
     *  call it from any thread (its own included) and from inside its own
     *  functions. */
    void (*notify)(void *engine, rst_store_event ev);
} rst_store_host;

/** A store. Every function gets the `ctx` given with the table. Each
 *  returns RST_OK or a status; a failing function may call
 *  rst_store_set_error() first, and its sentence is kept in the engine's
 *  error (else the engine writes one naming describe()). A status other than
 *  RST_OK and RST_ERR_NOT_FOUND fails the engine's operation with it. */
typedef struct rst_store_ops {
    uint32_t version;                      /**< RST_STORE_VERSION */
    uint32_t flags;                        /**< 0 or RST_STORE_SHARED */
    /** The slot's bytes, valid and unchanged until `release(ctx, *hold)`.
     *  RST_ERR_NOT_FOUND when the slot is empty. The engine never writes
     *  through `*data` and releases every hold. A store may map a file
     *  instead of copying it. */
    rst_status (*read)(void *ctx, rst_slot slot, uint64_t index,
                       const void **data, size_t *len, void **hold);
    void       (*release)(void *ctx, void *hold);
    /** Atomic and durable: after RST_OK every later read — by any process,
     *  after a crash or a power loss — sees the new bytes; after a failure,
     *  or a crash during the call, the old bytes (nothing, for an empty
     *  slot). Never a mix. */
    rst_status (*write)(void *ctx, rst_slot slot, uint64_t index,
                        const void *data, size_t len);
    /** Atomic: afterwards `to` holds what `from` held (replacing it) and
     *  `from` is empty. */
    rst_status (*move)(void *ctx, rst_slot from, uint64_t from_index,
                       rst_slot to, uint64_t to_index);
    /** Optional (NULL): as move, but `from` keeps its bytes too. */
    rst_status (*link)(void *ctx, rst_slot from, uint64_t from_index,
                       rst_slot to, uint64_t to_index);
    /** Empties a slot; an empty slot is RST_OK. */
    rst_status (*remove)(void *ctx, rst_slot slot, uint64_t index);
    /** The indexes present in `slot`, ascending, at most `cap` of them;
     *  `*count` is the number present, even when it exceeds `cap`. */
    rst_status (*list)(void *ctx, rst_slot slot, uint64_t *indexes,
                       size_t cap, size_t *count);
    /** Exclusive among every engine, thread and process using the same place
     *  (processes: with RST_STORE_SHARED). Held around a save's write and
     *  rotation, a discard and a set-aside; never while an object callback,
     *  should_save, should_restore, did_finish_restoring or a save listener
     *  runs (`log` may run with it held and must not call the engine). */
    rst_status (*lock)(void *ctx);
    void       (*unlock)(void *ctx);
    /** Optional (NULL): a writable region of `len` bytes for the slot,
     *  starting with its bytes (zero-filled beyond them, or when it is new),
     *  valid until the engine removes the slot or the store is destroyed,
     *  whose contents survive the death of the process and are what a later
     *  read returns (the file store: a shared mapping of the marker file).
     *  With it the engine keeps per-object quarantine; without it a death
     *  during a restore sets the archive aside. */
    rst_status (*map)(void *ctx, rst_slot slot, size_t len, void **addr);
    /** Names the place, for sentences: "file '/home/u/.local/state/app/state.rst'".
     *  The string lives as long as the store. */
    const char *(*describe)(void *ctx);
    /** Called exactly once: by rst_engine_destroy(), or by
     *  rst_engine_create_with_store() when it fails. */
    void       (*destroy)(void *ctx);
    /* Members below are read only from a version-2 table (@since 1.3); each
       is optional (NULL: the store has no notion of ownership). */
    /** Takes ownership of the place for this instance, before the engine's
     *  first read or write of any slot; called once. RST_OK: this instance
     *  owns the state until release_ownership() or until the store raises
     *  RST_STORE_EVENT_OWNER_LOST. RST_ERR_FENCED (with a sentence naming
     *  the machine that owns it) when a live instance elsewhere owns it and
     *  no handoff was asked for or granted in time; the engine then restores
     *  nothing and every save goes to a conflict copy. */
    rst_status (*acquire)(void *ctx);
    /** Gives ownership up, after the engine's last save (a clean end or a
     *  handoff); another machine may acquire at once. */
    void       (*release_ownership)(void *ctx);
    /** Gives the store the engine's event door; called once, before
     *  `acquire`. The store may call host->notify from then until destroy. */
    void       (*attach)(void *ctx, const rst_store_host *host);
} rst_store_ops;

/** A store table with its `version` set, the members named after it (C99
 *  designated initializers); members not named are NULL or 0, so a store
 *  without `link` or `map`, or with `flags` 0, leaves them out:
 *
 *      static const rst_store_ops my_ops = RST_STORE_OPS_INIT(
 *          .read = my_read, .release = my_release, .write = my_write,
 *          .move = my_move, .remove = my_remove, .list = my_list,
 *          .lock = my_lock, .unlock = my_unlock,
 *          .describe = my_describe, .destroy = my_destroy);
 *
 *  Naming the members keeps a table right whatever their order, and a
 *  table written for this version stays valid when later versions append
 *  members (they are 0 here). It makes a table of RST_STORE_VERSION; a
 *  version-2 table (the ownership members) is written out with
 *  `.version = 2` instead. C++ before C++20 has no designated
 *  initializers: set the members one by one there. */
#define RST_STORE_OPS_INIT(...) { .version = RST_STORE_VERSION, __VA_ARGS__ }

/** Creates an engine on a store, as rst_engine_create() does on a path:
 *  with a store, autosave and signals, sessions and restore reasons,
 *  generations and fallback, the crash-loop guard, quarantine (when `map`
 *  is set), carried records and rst_discard() all work as with a path. The
 *  engine owns the `ops`/`ctx` pair from then on (one pair per engine:
 *  engines that share a place each get their own `ctx`).
 *  @param opts as for rst_engine_create(), with `archive_path` NULL (else
 *         RST_ERR_INVALID).
 *  @param ops every member set but `link` and `map` (else RST_ERR_INVALID),
 *         no unknown flags (RST_ERR_INVALID), `version` RST_STORE_VERSION
 *         (else RST_ERR_VERSION). The table must outlive the engine.
 *  @return RST_OK; the errors of rst_engine_create(); on any failure
 *          `ops->destroy(ctx)` has been called (when `ops` and its
 *          `destroy` are set). */
RST_API rst_status rst_engine_create_with_store(const rst_engine_options *opts,
                                                const rst_store_ops *ops, void *ctx,
                                                rst_engine **out);
/** The built-in file store for `archive_path`, to wrap or to pass to
 *  rst_engine_create_with_store(): 1.1's file names (`<archive>.k`,
 *  `.invalid-<ms>`, `.crashed-<ms>`, `.restoring`, `.quarantine`,
 *  `.session`, `.lock`), durability and locking.
 *  @param[out] ops a static table; @param[out] ctx freed by its destroy().
 *  @return RST_OK; RST_ERR_INVALID (NULL, empty, a path ending in '/' or
 *          naming a directory); RST_ERR_LIMIT; RST_ERR_NOMEM. */
RST_API rst_status rst_file_store(const char *archive_path,
                                  const rst_store_ops **ops, void **ctx);
/** A store that keeps its slots in this process's memory (tests; hosts that
 *  persist the bytes themselves). No `map`: a death during restore sets the
 *  archive aside.
 *  @return RST_OK; RST_ERR_INVALID (NULL); RST_ERR_NOMEM. */
RST_API rst_status rst_memory_store(const rst_store_ops **ops, void **ctx);
/** Called by a store function that is about to fail: `sentence` (copied;
 *  thread-local, as rst_last_error()) becomes the engine's error for that
 *  operation. NULL clears it. */
RST_API void       rst_store_set_error(const char *sentence);

#ifdef __cplusplus
}
#endif
#endif /* RESTORATION_STORE_H */
