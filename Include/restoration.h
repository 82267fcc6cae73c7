/**
 * @file restoration.h
 * @brief Restoration: state preservation and restoration for Linux programs.
 *
 * The model (read this once; every other comment refers back to it)
 * ------------------------------------------------------------------
 * An *engine* owns one archive. The host *registers objects*, each with an
 * *identifier* and an optional *parent*; the identifiers from the root down,
 * joined by '/', form the object's *path* ("Tabs/Nav/List"), unique within
 * the engine. At rst_save() every object's `encode` callback writes keyed,
 * typed values through an ::rst_coder, and the engine replaces the archive
 * file atomically and durably. At rst_restore() the engine validates the
 * whole archive first, then runs three passes:
 *
 *   1. materialize, parents first: each record is matched to the object
 *      already registered at its path, else created by the factory of its
 *      class (host classes first, then plugin classes), else by the
 *      fallback factory; a record nothing produces is skipped with its
 *      descendants;
 *   2. decode, in dependency order: parents before children, referenced
 *      objects before the objects that reference them (cycles in archive
 *      order);
 *   3. finish: `finished` on every restored object, then the engine's
 *      `did_finish_restoring`.
 *
 * Errors: every fallible function returns an ::rst_status; RST_OK is 0.
 * On failure, rst_last_error() returns a sentence naming what was wrong and
 * where (file, record path, key). The message is thread-local, and is only
 * replaced by the next *failing* call on the same thread.
 *
 * Threads: every function may be called from any thread. The engine
 * serializes save, restore, register and unregister with a recursive lock;
 * callbacks run on the thread that called rst_save()/rst_restore() and may
 * register and find objects.
 *
 * Memory: anything the library returns for the caller to own is freed with
 * rst_free(); everything else is borrowed, with its lifetime stated.
 *
 * Order: by subject — the engine; objects and their classes; saving and
 * restoring; the coder; when to save (lifecycle); surviving change
 * (evolution); sensitive values and size budgets; diagnostics. A
 * declaration (or a group) added after library 1.0 says `@since 1.1` or
 * `@since 1.2`; everything else is in 1.0.
 *
 * See docs/ARCHITECTURE.md and docs/FORMAT.md in the source tree.
 */
#ifndef RESTORATION_H
#define RESTORATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#  define RST_API __attribute__((visibility("default")))
#else
#  define RST_API
#endif


/* ======================================================================== */
/* The engine: versions, limits, errors, options, create and destroy        */
/* ======================================================================== */

/* ------------------------------------------------------------------------ */
/** @name Versions */
/**@{*/
#define RST_VERSION_MAJOR 1          /**< library version; also rst_version() */
#define RST_VERSION_MINOR 2
#define RST_VERSION_PATCH 0
#define RST_VERSION_STRING "1.2.0"
/** Encodes a version as one comparable number: RST_VERSION_CHECK(1,0,0). */
#define RST_VERSION_CHECK(major, minor, patch) (((major) * 1000000) + ((minor) * 1000) + (patch))
#define RST_VERSION_NUMBER RST_VERSION_CHECK(RST_VERSION_MAJOR, RST_VERSION_MINOR, RST_VERSION_PATCH)
#define RST_ABI_VERSION   1          /**< this header's C ABI */
#define RST_FORMAT_VERSION 1         /**< archive format written by this library */
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Limits
 * Every limit the engine enforces, in release builds too. Exceeding one at
 * save time or in an archive returns RST_ERR_LIMIT. */
/**@{*/
#define RST_MAX_ARCHIVE_BYTES     (256u * 1024u * 1024u) /**< archive file or buffer */
#define RST_MAX_IDENTIFIER_BYTES  255u     /**< one identifier, UTF-8 bytes */
#define RST_MAX_CLASS_NAME_BYTES  255u     /**< one class name, UTF-8 bytes */
#define RST_MAX_KEY_BYTES         255u     /**< one key, UTF-8 bytes */
#define RST_MAX_RECORD_DEPTH      32u      /**< nested records inside one object */
#define RST_MAX_TREE_DEPTH        65536u   /**< objects in one parent chain: depths 0 (a root)
                                                 to RST_MAX_TREE_DEPTH - 1 */
#define RST_MAX_VALUES_PER_RECORD 65536u   /**< keys in one object or nested record */
#define RST_MAX_OBJECTS           16777216u /**< objects in one archive */
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Handles */
/**@{*/
/** One archive's restoration machinery. Create with rst_engine_create(). */
typedef struct rst_engine rst_engine;
/** A registered object. Owned by its engine: valid until it is
 *  unregistered (directly or with an ancestor) or the engine is destroyed. */
typedef struct rst_object rst_object;
/** Keyed values of one object. Borrowed: valid only during the callback it
 *  is passed to; using it afterwards returns RST_ERR_STATE. */
typedef struct rst_coder  rst_coder;
/**@}*/

/** Status codes. Append-only: values never change meaning. */
typedef enum rst_status {
    RST_OK = 0,
    RST_ERR_INVALID   = 1,  /**< bad argument or misuse (NULL, bad identifier, ...) */
    RST_ERR_NOT_FOUND = 2,  /**< no such key, object, class or archive file */
    RST_ERR_DUPLICATE = 3,  /**< path, key or class name already registered */
    RST_ERR_TYPE      = 4,  /**< the key holds a value of another type */
    RST_ERR_CORRUPT   = 5,  /**< archive failed validation; nothing was decoded */
    RST_ERR_VERSION   = 6,  /**< archive format or plugin ABI not supported */
    RST_ERR_IO        = 7,  /**< the file system failed; errno is in the message */
    RST_ERR_PLUGIN    = 8,  /**< a plugin failed to load or to create its object */
    RST_ERR_REJECTED  = 9,  /**< should_save/should_restore said no, or the
                                 crash-loop guard refused a restore */
    RST_ERR_NOMEM     = 10, /**< an allocation failed */
    RST_ERR_STATE     = 11, /**< not allowed now (encode outside encode, ...) */
    RST_ERR_LIMIT     = 12, /**< a size, count or depth limit was exceeded */
    RST_ERR_FENCED    = 13, /**< @since 1.3: another instance owns this state now;
                                 nothing was written over it */
    RST_ERR_UNAVAILABLE = 14 /**< @since 1.3: the store cannot be reached now; see
                                 the message */
} rst_status;

/** The library's version, the text RST_VERSION_STRING holds for the
 *  library actually loaded (compare it with the header's to detect a
 *  mismatch).
 *  @return static storage; never NULL. */
RST_API const char *rst_version(void);
/** The enumerator's name of a status.
 *  @return "RST_ERR_CORRUPT" for RST_ERR_CORRUPT; "RST_ERR_UNKNOWN" for a
 *          value this library does not define. Static storage; never NULL. */
RST_API const char *rst_status_name(rst_status s);
/** A sentence about the last failing call on this thread.
 *  @return the sentence, "" if no call failed on this thread yet; never NULL.
 *          Valid until the next failing call on this thread; a successful
 *          call does not clear it. */
RST_API const char *rst_last_error(void);
/** Frees memory the library returned to the caller (archive buffers,
 *  rst_archive_info, plugin lists, paths). NULL is fine.
 *  @return nothing; it cannot fail. */
RST_API void        rst_free(void *p);

/* ------------------------------------------------------------------------ */
/** @name Engine */
/**@{*/

/** What an archive says about when and by whom it was saved. */
typedef struct rst_archive_info {
    uint32_t    format_version;
    const char *app_version;      /**< host's version string at save time ("" if none) */
    const char *system_version;   /**< OS release at save time (uname) */
    const char *idiom;            /**< host-chosen, e.g. "desktop", "kiosk" ("" if none) */
    int64_t     saved_at_ms;      /**< UTC milliseconds since the epoch */
    uint64_t    object_count;     /**< records in the archive */
    /* Members below: @since 1.1 (always allocated by the library, so a
       reader built against 1.0 is unaffected). */
    uint32_t    restore_reason;   /**< an ::rst_restore_reason: why this archive is
                                       being restored (should_restore); 0
                                       (FIRST_LAUNCH) from rst_read_archive_info() */
    uint32_t    generation;       /**< 0: the current archive; k: `<archive>.k` */
} rst_archive_info;

/** Log levels of rst_engine_options.log. */
#define RST_LOG_DEBUG   0
#define RST_LOG_INFO    1
#define RST_LOG_WARNING 2
#define RST_LOG_ERROR   3

/** rst_engine_options.flags. */
#define RST_ENGINE_NO_CRASH_GUARD (1u << 0) /**< rst_restore() neither checks nor writes
                                                 the crash-loop marker (tools that
                                                 restore by hand, such as restorectl) */

typedef struct rst_engine_options {
    uint32_t    version;          /**< RST_ENGINE_OPTIONS_VERSION */
    const char *archive_path;     /**< rst_save/rst_restore file; NULL: buffers only.
                                       Copied: the caller's string need not outlive
                                       rst_engine_create(). */
    const char *plugin_dir;       /**< NULL: no plugins. Copied. */
    const char *app_version;      /**< recorded in the archive. Copied. */
    const char *idiom;            /**< recorded in the archive. Copied. */
    /** Asked at every save; false: RST_ERR_REJECTED, the old archive stays. NULL: yes. */
    bool (*should_save)(rst_engine *e, void *ctx);
    /** Asked after validation, before any other callback; `info` is valid
     *  during the call only. false: RST_ERR_REJECTED. NULL: yes. */
    bool (*should_restore)(rst_engine *e, const rst_archive_info *info, void *ctx);
    /** Called after every restored object's `finished`. May be NULL. */
    void (*did_finish_restoring)(rst_engine *e, void *ctx);
    void       *ctx;              /**< passed to the callbacks above and to `log` */
    uint32_t    flags;            /**< RST_ENGINE_* flags, 0 by default */
    /** Diagnostics that change no result (a rejected plugin, a skipped
     *  record, a set-aside archive). `message` is valid during the call.
     *  NULL: WARNING and above go to stderr. */
    void (*log)(rst_engine *e, int level, const char *message, void *ctx);
    /* Members above: version 1. Members below: version 2 (@since 1.1); a
       struct with version 1 is still accepted and they read as 0. */
    /** Autosave (see "When to save"): a save becomes due this long after the
     *  last rst_mark_dirty(). 0: no autosave. Non-zero needs archive_path
     *  (else RST_ERR_INVALID). */
    uint32_t    autosave_delay_ms;
    /** ...but never later than this after the first mark since the last
     *  successful save (the ceiling), and the longest wait between retries.
     *  0: 10 × autosave_delay_ms. Non-zero and below autosave_delay_ms:
     *  RST_ERR_INVALID. */
    uint32_t    autosave_max_delay_ms;
    /** Older good archives kept as `<archive>.1` (newest) … `<archive>.K`:
     *  0..16 (more: RST_ERR_INVALID). Non-zero needs archive_path. */
    uint32_t    generations;
    /** Saves that carry unclaimed records (@since 1.1; see "Carried
     *  records" below): 0 none, UINT32_MAX always. */
    uint32_t    carry_saves;
    /* Members below: version 3 (@since 1.2); a struct of version 1 or 2 is
       still accepted and they read as 0. */
    /** Bytes an archive may take; 0: no budget. See "Size budgets". */
    uint64_t    size_budget;
    /** What a save over `size_budget` does: RST_BUDGET_WARN (0),
     *  RST_BUDGET_TRIM (1) or RST_BUDGET_FAIL (2); other values:
     *  RST_ERR_INVALID at create. */
    uint32_t    budget_policy;
    /** Gives the 32-byte key that seals RST_SENSITIVITY_ENCRYPTED values (see
     *  "Sensitive values"): asked once per save that writes such a value and
     *  once per restore that meets one. Return RST_OK after filling `key`;
     *  anything else: no key (the values are left out, or cannot be opened).
     *  The engine wipes its copy of the key after use. NULL: no key. */
    rst_status (*encryption_key)(rst_engine *e, uint8_t key[32], void *ctx);
    /** How long a claimed signal waits for rst_dispatch() to do its save
     *  before the library re-raises it anyway, without the save (see
     *  "When to save", Signals). 0: 1000 ms; a struct of version 1 or 2
     *  also gets 1000 ms. */
    uint32_t    signal_deadline_ms;
} rst_engine_options;
#define RST_ENGINE_OPTIONS_VERSION 3

/** rst_engine_options.budget_policy (@since 1.2). */
#define RST_BUDGET_WARN 0u /**< save anyway; one WARNING names the largest subtrees */
#define RST_BUDGET_TRIM 1u /**< leave out whole low-priority subtrees until it fits */
#define RST_BUDGET_FAIL 2u /**< RST_ERR_LIMIT; the old archive stays */
/** Initializes an ::rst_engine_options: the version, every other member
 *  zero (NULL), whatever members later versions append. In C this is a
 *  designated initializer, so `-Wextra` does not warn; C++ before C++20 gets
 *  `{ RST_ENGINE_OPTIONS_VERSION }`, on which g++ `-Wextra` warns about the
 *  members left out: there, call rst_engine_options_init() instead. */
#if defined(__cplusplus)
#  define RST_ENGINE_OPTIONS_INIT { RST_ENGINE_OPTIONS_VERSION }
#else
#  define RST_ENGINE_OPTIONS_INIT { .version = RST_ENGINE_OPTIONS_VERSION }
#endif

/** Initializes `opts` as RST_ENGINE_OPTIONS_INIT does, for a given version
 *  of the struct: every member zero (NULL), then `opts->version = version`.
 *  Pass RST_ENGINE_OPTIONS_VERSION; an older version (a caller compiled
 *  against an older header) clears only the members that version has.
 *  @param[out] opts the struct to initialize; NULL: RST_ERR_INVALID.
 *  @param version 1..RST_ENGINE_OPTIONS_VERSION; else RST_ERR_VERSION and
 *         `*opts` is untouched.
 *  @return RST_OK, RST_ERR_INVALID, RST_ERR_VERSION. */
RST_API rst_status rst_engine_options_init(rst_engine_options *opts, uint32_t version);

/** Creates an engine.
 *  @param opts required (NULL: RST_ERR_INVALID); opts->version outside
 *         1..RST_ENGINE_OPTIONS_VERSION: RST_ERR_VERSION. Strings are copied.
 *         With version 1 nothing past `log` is read. Version 2:
 *         generations > 16, autosave_max_delay_ms below a
 *         non-zero autosave_delay_ms, autosave or generations without
 *         archive_path: RST_ERR_INVALID. An archive_path that is empty,
 *         ends in '/' or names a directory: RST_ERR_INVALID, and nothing
 *         is created (@since 1.2).
 *  @param[out] out the new engine, destroyed with rst_engine_destroy().
 *  @return RST_OK, RST_ERR_INVALID, RST_ERR_VERSION, RST_ERR_NOMEM. */
RST_API rst_status rst_engine_create(const rst_engine_options *opts, rst_engine **out);
/** Destroys an engine: every object's `release` (children before parents),
 *  then every loaded plugin's `fini`. NULL is fine. It does not save (call
 *  rst_flush() first). Before the objects go it releases the engine's
 *  signals (their earlier disposition comes back when no other engine
 *  holds them; a claimed signal already delivered but not yet dispatched is
 *  re-raised now, so the process still ends), stops and joins the autosave
 *  thread, closes rst_event_fd's descriptor, and closes the session (the
 *  next process's restore reads RELAUNCH). Must not be called from
 *  one of the engine's own callbacks (it is then ignored, with an ERROR log).
 *  @return nothing; a refused call is reported through the engine's log. */
RST_API void       rst_engine_destroy(rst_engine *e);
/**@}*/

/* ======================================================================== */
/* Objects: register, find, classes, factories, plugins, priority           */
/* ======================================================================== */

/* ------------------------------------------------------------------------ */
/** @name Objects */
/**@{*/

/** How the engine talks to a registered object. All members may be NULL.
 *  The engine keeps the pointer: make the struct static. */
typedef struct rst_object_callbacks {
    void (*encode)(void *instance, rst_coder *coder);   /**< at save, archive order */
    void (*decode)(void *instance, rst_coder *coder);   /**< at restore, pass 2 */
    void (*finished)(void *instance);                   /**< at restore, pass 3 */
    /** Called once when the object leaves the engine (unregistered, its
     *  parent unregistered, or the engine destroyed), so a factory-made
     *  instance can be freed. */
    void (*release)(void *instance);
} rst_object_callbacks;

/** Registers an object.
 *  @param identifier non-empty UTF-8, no '/', at most RST_MAX_IDENTIFIER_BYTES
 *         bytes (else RST_ERR_INVALID; longer: RST_ERR_LIMIT). Copied.
 *  @param parent NULL for a root, else an object of the same engine.
 *  @param class_name the restoration class that can re-create it, or NULL. Copied.
 *  @param callbacks may be NULL (an object that only scopes its children).
 *  @param instance passed back to the callbacks; see rst_object_instance().
 *  @param[out] out the object, or NULL if the caller does not need it.
 *  @return RST_OK; RST_ERR_DUPLICATE if the path is taken; RST_ERR_INVALID
 *          (NULL engine or identifier, bad UTF-8, '/', a parent of another
 *          engine); RST_ERR_LIMIT for an identifier or class name longer than
 *          its limit, or past RST_MAX_TREE_DEPTH; RST_ERR_STATE while the
 *          engine is being destroyed. */
RST_API rst_status  rst_register_object(rst_engine *e, const char *identifier,
                                        rst_object *parent, const char *class_name,
                                        const rst_object_callbacks *callbacks,
                                        void *instance, rst_object **out);
/** Unregisters an object and its descendants (descendants' `release` first).
 *  @return RST_OK; RST_ERR_STATE from inside any callback of a save or
 *          restore (encode, factory, decode, finished); RST_ERR_INVALID for
 *          NULL or an object of another engine. */
RST_API rst_status  rst_unregister_object(rst_engine *e, rst_object *o);
/** The object at `path` ("Tabs/Nav/List").
 *  @return the object; NULL if none, or for bad input (NULL arguments, bad
 *          UTF-8: then rst_last_error() says which). */
RST_API rst_object *rst_find_object(rst_engine *e, const char *path);
/** @return the instance given at registration; NULL for NULL. */
RST_API void       *rst_object_instance(const rst_object *o);
/** @return the identifier, valid while the object is registered; NULL for NULL. */
RST_API const char *rst_object_identifier(const rst_object *o);
/** @return the parent; NULL at a root (or for NULL). */
RST_API rst_object *rst_object_parent(const rst_object *o);

/** The object's path, "Tabs/Nav/List". @param[out] out rst_free() it.
 *  @return RST_OK; RST_ERR_INVALID (NULL object or out); RST_ERR_NOMEM. */
RST_API rst_status rst_object_path(const rst_object *o, char **out);
/** @return the class name given at registration, valid while the object is
 *          registered; NULL when it has none (or for NULL). */
RST_API const char *rst_object_class_name(const rst_object *o);

/** Sets an object's priority for RST_BUDGET_TRIM (default 0; lower is
 *  trimmed first).
 *  @since 1.2 (see "Size budgets").
 *  @return RST_OK; RST_ERR_INVALID for a NULL object. */
RST_API rst_status rst_set_object_priority(rst_object *o, int32_t priority);
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Restoration classes */
/**@{*/

/** Creates the object for a record: registers it with exactly this parent
 *  and identifier and returns it, or returns NULL to decline. `coder` can be
 *  read (rst_decode_*) to choose what to create; it is valid during the
 *  call. `identifier` is valid during the call. */
typedef rst_object *(*rst_factory_fn)(rst_engine *e, rst_object *parent,
                                      const char *identifier, rst_coder *coder,
                                      void *ctx);
/** Registers a host restoration class. A host class hides a plugin class of
 *  the same name. The name is copied.
 *  @return RST_OK; RST_ERR_DUPLICATE if the name is taken; RST_ERR_INVALID
 *          (NULL engine, name or factory; an empty or non-UTF-8 name);
 *          RST_ERR_LIMIT for a name longer than RST_MAX_CLASS_NAME_BYTES. */
RST_API rst_status rst_register_class(rst_engine *e, const char *class_name,
                                      rst_factory_fn factory, void *ctx);
/** Sets (or, with NULL, clears) the factory asked when no class can
 *  re-create a record.
 *  @return RST_OK; RST_ERR_INVALID for a NULL engine. */
RST_API rst_status rst_set_fallback_factory(rst_engine *e, rst_factory_fn factory, void *ctx);
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Plugin classes
 * Classes a plugin in plugin_dir offers (docs/ARCHITECTURE.md). */
/**@{*/

/** State of one plugin file (rst_plugin_info.state). */
typedef enum rst_plugin_state {
    RST_PLUGIN_DISCOVERED = 0,  /**< found, not loaded yet (loading is lazy) */
    RST_PLUGIN_LOADED     = 1,  /**< manifest accepted, init succeeded */
    RST_PLUGIN_REJECTED   = 2   /**< see reason */
} rst_plugin_state;

/** One class a plugin offers. */
typedef struct rst_plugin_class_info {
    const char *class_name;
    const char *factory_symbol;
    const char *signature;
    bool        usable;         /**< false: rejected or lost to another plugin */
    const char *reason;         /**< why not usable; "" when usable */
} rst_plugin_class_info;

/** One file in plugin_dir. */
typedef struct rst_plugin_info {
    const char *path;           /**< absolute path of the file */
    const char *name;           /**< manifest name ("" before loading or if rejected early) */
    const char *version;        /**< manifest version ("" likewise) */
    rst_plugin_state state;
    const char *reason;         /**< why rejected; "" otherwise */
    size_t      class_count;
    const rst_plugin_class_info *classes;
} rst_plugin_info;

/** Loads every plugin of plugin_dir now, as a restore that needs an unknown
 *  class would (once per engine; later calls return RST_OK at once).
 *  @return RST_OK; RST_ERR_INVALID (NULL engine, no plugin_dir); RST_ERR_IO
 *          if plugin_dir cannot be read; RST_ERR_STATE once the engine is
 *          gone. Rejected plugins are not an error: see rst_list_plugins(). */
RST_API rst_status rst_load_plugins(rst_engine *e);
/** Lists the files of plugin_dir (sorted by name) with their state, classes
 *  and rejection reasons, without loading anything.
 *  @param[out] out one allocation holding the array and all its strings:
 *         rst_free() it. NULL with *count 0 when there are none.
 *  @param[out] count number of entries.
 *  @return RST_OK; RST_ERR_INVALID (NULL engine, out or count; no
 *          plugin_dir); RST_ERR_IO if plugin_dir cannot be read;
 *          RST_ERR_NOMEM. */
RST_API rst_status rst_list_plugins(rst_engine *e, rst_plugin_info **out, size_t *count);
/**@}*/

/* ======================================================================== */
/* Saving and restoring: save, restore, buffers, discard, export,           */
/* ======================================================================== */
/* archive info, reports, skips, reasons, generations                       */

/* ------------------------------------------------------------------------ */
/** @name Save and restore */
/**@{*/

/** Saves every registered object to archive_path: a temporary file in the
 *  same directory (mode 0600), fsync, rename, fsync of the directory. When it
 *  returns RST_OK the new archive is durable; on any failure (should_save
 *  said no: RST_ERR_REJECTED; an encode error; an I/O error) the old archive
 *  is untouched — with one exception: if only making the rename durable
 *  fails (fsync of the directory, or syncfs when the directory cannot be
 *  opened), the new archive is in place and RST_ERR_IO says it is not
 *  durable. Saves (and discards) of one archive by
 *  several threads or processes are serialized by an advisory lock file
 *  (`<archive>.lock`). Clears the crash-loop marker.
 *  A missing archive folder is created, with any missing ancestors, mode
 *  0700 (as the XDG Base Directory specification asks of programs writing
 *  under $XDG_STATE_HOME), each made durable before the archive is written;
 *  a folder that cannot be created fails the save with RST_ERR_IO and a
 *  sentence naming it and the errno.
 *  @return RST_OK; RST_ERR_INVALID (NULL engine, no archive_path);
 *          RST_ERR_REJECTED (should_save); any status of an encode call
 *          (RST_ERR_INVALID, RST_ERR_DUPLICATE, RST_ERR_LIMIT, RST_ERR_STATE);
 *          RST_ERR_LIMIT past RST_MAX_OBJECTS or RST_MAX_ARCHIVE_BYTES;
 *          RST_ERR_IO (a symlink, directory or other non-regular file at
 *          archive_path, an archive folder that cannot be created, or any
 *          file system error); RST_ERR_STATE from one of the engine's own
 *          callbacks. */
RST_API rst_status rst_save(rst_engine *e);
/** Restores from archive_path (see the file comment for the three passes).
 *  With generations, a missing or invalid archive falls back to the newest
 *  valid one (see "What happened last time"; should_restore's info says
 *  which and why). Validation happens before any callback. A valid archive returns RST_OK
 *  even when records were skipped (see rst_last_restore_report()).
 *  @return RST_OK; RST_ERR_INVALID (NULL engine, no archive_path);
 *          RST_ERR_NOT_FOUND when there is no archive; RST_ERR_CORRUPT,
 *          RST_ERR_VERSION, RST_ERR_LIMIT for a bad file; RST_ERR_IO (the
 *          archive, or a crash-loop marker that exists but cannot be read);
 *          RST_ERR_REJECTED when should_restore said no or the crash-loop
 *          guard set the archive aside (its new name is in the message);
 *          RST_ERR_STATE from one of the engine's own callbacks. A
 *          crash-loop marker that is torn or foreign, or that cannot be
 *          written or removed, is only a warning (log), never a reason to
 *          set the archive aside. */
RST_API rst_status rst_restore(rst_engine *e);
/** Saves to memory, as rst_save() but without any file.
 *  @param[out] out a buffer to free with rst_free().
 *  @param[out] len its length.
 *  @return RST_OK; RST_ERR_INVALID (NULL engine, out or len); RST_ERR_NOMEM;
 *          otherwise as rst_save() (RST_ERR_REJECTED, encode statuses,
 *          RST_ERR_LIMIT, RST_ERR_STATE). */
RST_API rst_status rst_save_to_buffer(rst_engine *e, void **out, size_t *len);
/** Restores from memory (no crash-loop guard). `data` is only read during
 *  the call.
 *  @return RST_OK; RST_ERR_INVALID (NULL engine, NULL data with len > 0);
 *          RST_ERR_CORRUPT, RST_ERR_VERSION, RST_ERR_LIMIT for bad bytes;
 *          RST_ERR_REJECTED (should_restore); RST_ERR_STATE from one of the
 *          engine's own callbacks. */
RST_API rst_status rst_restore_from_buffer(rst_engine *e, const void *data, size_t len);
/** Deletes the saved state (force-quit): the archive, its set-aside
 *  `.crashed-*` copies, leftover temporary files and markers; waits for a
 *  save in progress (the lock).
 *  @return RST_OK, also when there was none; RST_ERR_INVALID (NULL engine,
 *          no archive_path); RST_ERR_IO; RST_ERR_STATE from one of the
 *          engine's own callbacks. */
RST_API rst_status rst_discard(rst_engine *e);
/** Reads only the header of the archive at `path` (the whole file is still
 *  validated). @param[out] out one allocation, strings included: rst_free() it.
 *  @return RST_OK; RST_ERR_INVALID (NULL path or out, or a path that is not
 *          valid UTF-8, as in rst_engine_create()); RST_ERR_NOT_FOUND;
 *          RST_ERR_IO; RST_ERR_CORRUPT, RST_ERR_VERSION, RST_ERR_LIMIT;
 *          RST_ERR_NOMEM. */
RST_API rst_status rst_read_archive_info(const char *path, rst_archive_info **out);

/** What the last restore did. */
typedef struct rst_restore_report {
    uint64_t archived;         /**< records in the archive */
    uint64_t restored;         /**< objects decoded */
    uint64_t skipped;          /**< records no object could be found or created
                                    for, with their descendants */
    uint64_t plugins_loaded;   /**< by this engine so far (plugins load once per engine) */
    uint64_t plugins_rejected; /**< by this engine so far */
} rst_restore_report;
/** Copies the report of the engine's last restore into `out`.
 *  @return RST_OK; RST_ERR_INVALID (NULL engine or out); RST_ERR_STATE
 *          before any restore reached pass 1. */
RST_API rst_status rst_last_restore_report(rst_engine *e, rst_restore_report *out);
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Portable exports (@since 1.2) */
/**@{*/
#define RST_EXPORT_PORTABLE 1u /**< leave out LOCAL and ENCRYPTED values */
/** Writes the engine's state to a new buffer as rst_save_to_buffer() does,
 *  but it is not a save: no carry count, no listener, no kill point, no
 *  budget, no WARNING about the values it leaves out; `should_save` is not
 *  asked and the engine stays dirty. Carried records are included (without
 *  their LOCAL and sealed values when portable). Without RST_EXPORT_PORTABLE,
 *  ENCRYPTED values are sealed afresh when `encryption_key` gives a key (and
 *  left out silently when it does not). With
 *  RST_EXPORT_PORTABLE, LOCAL and ENCRYPTED values are left out (they belong
 *  to this machine or its key), so the buffer can be restored on another
 *  machine with rst_restore_from_buffer(). `restorectl export --portable IN
 *  OUT` does the same for a file.
 *  @param flags 0 or RST_EXPORT_PORTABLE; others: RST_ERR_INVALID.
 *  @param[out] buf freed with rst_free(); @param[out] len its length.
 *  @return as rst_save_to_buffer(). */
RST_API rst_status rst_export(rst_engine *e, uint32_t flags, void **buf, size_t *len);
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name What happened last time (@since 1.1; docs/LIFECYCLE.md)
 *
 * Sessions: an engine with an archive_path (or a store) records
 * `<archive>.session` (the store's session slot: pid, process start time,
 * boot id) as soon as the archive's folder exists — at its first restore,
 * or else at the save that creates the folder — and removes it in
 * rst_engine_destroy() and rst_close_session(). A restore that finds the
 * session of a process that is gone (exited, even if not yet reaped: a
 * zombie) or of an earlier boot reports RECOVER, otherwise RELAUNCH; an open session of a live process (this one included) counts
 * as RELAUNCH. The verdict is taken once per engine, at its first save or
 * restore, so a save before the restore does not hide a crash. rst_discard()
 * removes the session file with the rest; the engine's next save or
 * restore records it again.
 *
 * Generations (options version 2, generations = K > 0): each save that
 * writes keeps the archive it replaces as `<archive>.1`, shifting older
 * ones up to `<archive>.K` (the oldest drops off): under the store's lock,
 * generation k moves to k+1 (oldest first), the archive is linked to
 * generation 1, then the new archive is written. Every step is atomic, so
 * the path always holds one complete archive and the chain is always
 * newest first (a kill may leave a gap or two equal neighbours, never a
 * mix); a failed save loses at most the oldest generation. A save whose
 * archive would be the same bytes as the one in place (save time aside)
 * writes nothing and rotates nothing. rst_restore() of a missing or invalid
 * (CORRUPT, VERSION, LIMIT) archive restores the newest valid generation:
 * reason FALLBACK, info->generation = k, a WARNING log; an invalid archive
 * is set aside intact as `<archive>.invalid-<UTC ms>`; invalid generations
 * passed over are left as they are. Nothing is promoted: the archive path
 * stays empty until the next save. When an archive or a generation existed
 * but none could be restored: reason RESET, the restore fails with the
 * archive's status (RST_ERR_NOT_FOUND when only generations existed), and
 * the archive and every invalid generation are set aside intact as
 * `<archive>.invalid-<UTC ms>` (also with generations = 0), so no save
 * rotates or overwrites them; the next restore reports FIRST_LAUNCH. The
 * archive and its generations share one crash-loop marker
 * (`<archive>.restoring`, naming the bytes restored): a copy that crashed
 * the restore is set aside as `<archive>.crashed-<ms>`. rst_discard()
 * removes the generations, the marker, the set-aside copies and the
 * `.invalid-*` copies. */
/**@{*/

/** Why a restore restores what it does. Stable numbers. */
typedef enum rst_restore_reason {
    RST_REASON_FIRST_LAUNCH = 0, /**< no archive (never saved, or discarded) */
    RST_REASON_RELAUNCH     = 1, /**< the previous session ended cleanly */
    RST_REASON_RECOVER      = 2, /**< the previous session died: the archive is its last save */
    RST_REASON_BUFFER       = 3, /**< rst_restore_from_buffer() */
    RST_REASON_FALLBACK     = 4, /**< the current archive was missing or invalid
                                      (or rst_restore_generation() asked): an older generation */
    RST_REASON_RESET        = 5, /**< @since 1.2: an archive or a generation existed but
                                      none could be restored; every invalid file was set
                                      aside intact, and the restore returns the current
                                      archive's failure (RST_ERR_NOT_FOUND when only
                                      generations existed) */
    RST_REASON_HANDOFF      = 6  /**< @since 1.3: the previous session ended cleanly
                                      on another machine */
} rst_restore_reason;

/** The reason of the engine's last restore: set when the restore has
 *  chosen its archive, so should_restore (info->restore_reason) and later
 *  calls agree; kept when the restore then fails (REJECTED, ...).
 *  @return FIRST_LAUNCH before any restore, when the last found no archive
 *          and no generation, or for NULL. */
RST_API rst_restore_reason rst_last_restore_reason(rst_engine *e);
/** Restores generation `generation` on request: `<archive>.k`, reason
 *  FALLBACK, info->generation = k, with the crash-loop guard of that file;
 *  nothing is set aside or promoted. 0: the current archive, exactly as
 *  rst_restore() (fallback included). Works whatever the engine's
 *  `generations` option (the files may be from an earlier run).
 *  @return as rst_restore(); RST_ERR_NOT_FOUND for a generation that does
 *          not exist (k > 16 included); RST_ERR_CORRUPT (or VERSION, LIMIT)
 *          for an invalid one, left as it is. */
RST_API rst_status rst_restore_generation(rst_engine *e, uint32_t generation);
/** The enumerator's name of a reason.
 *  @return "RST_REASON_RECOVER" for RST_REASON_RECOVER; "RST_REASON_UNKNOWN"
 *          for a value this library does not define. Static storage. */
RST_API const char *rst_restore_reason_name(rst_restore_reason r);
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Every skip explained (@since 1.1)
 * Why each record of the last restore was not restored. */
/**@{*/

/** Why a record of the last restore was skipped (rst_skipped_record.reason).
 *  Stable numbers; 1–10 are the v1.1 contract, later values are appended. */
typedef enum rst_skip_reason {
    RST_SKIP_NO_FACTORY       = 1, /**< nothing registered, no factory, no fallback */
    RST_SKIP_DECLINED         = 2, /**< the factory returned NULL */
    RST_SKIP_FACTORY_ERROR    = 3, /**< the factory returned a wrong object */
    RST_SKIP_PLUGIN_REJECTED  = 4, /**< the class's plugin failed to load */
    RST_SKIP_PARENT_SKIPPED   = 5, /**< an ancestor was skipped */
    RST_SKIP_QUARANTINED      = 6, /**< the previous restore died in this record */
    RST_SKIP_NO_MIGRATION     = 7, /**< no migration from the record's version */
    RST_SKIP_MIGRATION_FAILED = 8, /**< a migration returned non-OK */
    RST_SKIP_TOO_NEW          = 9, /**< saved by a newer class version */
    RST_SKIP_EXPIRED          = 10,/**< its extended restoration missed the deadline */
    /** This library's addition: the object was created (or found) but its
     *  `decode` reported failure with rst_coder_fail() (a Swift
     *  `decodeRestorableState` that threw): it keeps what it decoded, gets
     *  no `finished` and is not counted as restored, so it is listed here. */
    RST_SKIP_DECODE_FAILED    = 11,
    /** @since 1.2: left out of the last save by RST_BUDGET_TRIM (the top
     *  path of a trimmed subtree; its descendants were not saved and are not
     *  listed). The detail names the budget. */
    RST_SKIP_TRIMMED          = 12
} rst_skip_reason;

/** One skipped record (rst_last_restore_skips()). Every string lives in the
 *  same allocation as the array. */
typedef struct rst_skipped_record {
    const char     *path;         /**< "Tabs/Nav/List" */
    const char     *class_name;   /**< "" when none */
    uint32_t        reason;       /**< rst_skip_reason */
    uint32_t        version;      /**< the record's class version (0 in v1 archives) */
    const char     *detail;       /**< a sentence; never NULL */
} rst_skipped_record;

/** Every record the engine's last restore skipped, in archive order,
 *  descendants included (reason RST_SKIP_PARENT_SKIPPED), plus the objects
 *  whose decode failed (RST_SKIP_DECODE_FAILED): `*count` equals the
 *  report's `skipped` (rst_last_restore_report()). When several producers
 *  were asked for one record (its class's factory, then the fallback), the
 *  reason is the last one's.
 *  @param[out] out one allocation holding the array and all its strings:
 *         free it with one rst_free(). NULL with `*count` 0 when nothing
 *         was skipped.
 *  @param[out] count the number of entries.
 *  @return RST_OK; RST_ERR_INVALID (NULL engine, out or count);
 *          RST_ERR_STATE before any restore reached pass 1 (as
 *          rst_last_restore_report()); RST_ERR_NOMEM. */
RST_API rst_status  rst_last_restore_skips(rst_engine *e, rst_skipped_record **out, size_t *count);
/** The enumerator's name of a skip reason.
 *  @return "RST_SKIP_DECLINED" for RST_SKIP_DECLINED; "RST_SKIP_UNKNOWN"
 *          for a value this library does not define. Static storage; never NULL. */
RST_API const char *rst_skip_reason_name(rst_skip_reason r);
/**@}*/

/* ======================================================================== */
/* The coder: encode and decode of every type, records, arrays, fail        */
/* ======================================================================== */

/* ------------------------------------------------------------------------ */
/** @name Coder: encode (inside an encode callback)
 * Keys are non-empty UTF-8 of at most RST_MAX_KEY_BYTES bytes and unique
 * within their record (a repeat: RST_ERR_DUPLICATE). Any error fails the
 * whole save, whatever the callback does next. Outside an encode callback:
 * RST_ERR_STATE. */
/**@{*/
/** Stores a bool.
 *  @return RST_OK; RST_ERR_INVALID (NULL coder or key, a bad key);
 *          RST_ERR_DUPLICATE (the key is already in this record);
 *          RST_ERR_LIMIT (RST_MAX_KEY_BYTES, RST_MAX_VALUES_PER_RECORD,
 *          RST_MAX_ARCHIVE_BYTES); RST_ERR_STATE outside an encode callback;
 *          after an earlier encode error of the same save, that error's status. */
RST_API rst_status rst_encode_bool  (rst_coder *c, const char *key, bool v);
/** Stores a 64-bit signed integer.
 *  @return RST_OK; RST_ERR_INVALID (NULL coder or key, a bad key);
 *          RST_ERR_DUPLICATE (the key is already in this record);
 *          RST_ERR_LIMIT (RST_MAX_KEY_BYTES, RST_MAX_VALUES_PER_RECORD,
 *          RST_MAX_ARCHIVE_BYTES); RST_ERR_STATE outside an encode callback;
 *          after an earlier encode error of the same save, that error's status. */
RST_API rst_status rst_encode_int   (rst_coder *c, const char *key, int64_t v);
/** Stores a double, bit for bit (NaN payloads, -0.0 and infinities survive).
 *  @return RST_OK; RST_ERR_INVALID (NULL coder or key, a bad key);
 *          RST_ERR_DUPLICATE (the key is already in this record);
 *          RST_ERR_LIMIT (RST_MAX_KEY_BYTES, RST_MAX_VALUES_PER_RECORD,
 *          RST_MAX_ARCHIVE_BYTES); RST_ERR_STATE outside an encode callback;
 *          after an earlier encode error of the same save, that error's status. */
RST_API rst_status rst_encode_double(rst_coder *c, const char *key, double v);
/** Stores a string; `utf8` must be valid UTF-8 without NUL inside.
 *  @return RST_OK; RST_ERR_INVALID (NULL coder or key, a bad key, a NULL or non-UTF-8 value);
 *          RST_ERR_DUPLICATE (the key is already in this record);
 *          RST_ERR_LIMIT (RST_MAX_KEY_BYTES, RST_MAX_VALUES_PER_RECORD,
 *          RST_MAX_ARCHIVE_BYTES); RST_ERR_STATE outside an encode callback;
 *          after an earlier encode error of the same save, that error's status. */
RST_API rst_status rst_encode_string(rst_coder *c, const char *key, const char *utf8);
/** Stores bytes; `p` may be NULL when n is 0.
 *  @return RST_OK; RST_ERR_INVALID (NULL coder or key, a bad key, NULL p with n > 0);
 *          RST_ERR_DUPLICATE (the key is already in this record);
 *          RST_ERR_LIMIT (RST_MAX_KEY_BYTES, RST_MAX_VALUES_PER_RECORD,
 *          RST_MAX_ARCHIVE_BYTES); RST_ERR_STATE outside an encode callback;
 *          after an earlier encode error of the same save, that error's status. */
RST_API rst_status rst_encode_bytes (rst_coder *c, const char *key, const void *p, size_t n);
/** A reference to another registered object of the same engine.
 *  @return RST_OK; RST_ERR_INVALID (NULL coder or key, a bad key, a NULL reference or an object of another engine);
 *          RST_ERR_DUPLICATE (the key is already in this record);
 *          RST_ERR_LIMIT (RST_MAX_KEY_BYTES, RST_MAX_VALUES_PER_RECORD,
 *          RST_MAX_ARCHIVE_BYTES); RST_ERR_STATE outside an encode callback,
 *          or for an object registered after this save began;
 *          after an earlier encode error of the same save, that error's status. */
RST_API rst_status rst_encode_object(rst_coder *c, const char *key, rst_object *ref);
/** Stores `n` integers; `v` may be NULL when n is 0.
 *  @return RST_OK; RST_ERR_INVALID (NULL coder or key, a bad key, NULL v with n > 0);
 *          RST_ERR_DUPLICATE (the key is already in this record);
 *          RST_ERR_LIMIT (RST_MAX_KEY_BYTES, RST_MAX_VALUES_PER_RECORD,
 *          RST_MAX_ARCHIVE_BYTES); RST_ERR_STATE outside an encode callback;
 *          after an earlier encode error of the same save, that error's status. */
RST_API rst_status rst_encode_int_array   (rst_coder *c, const char *key, const int64_t *v, size_t n);
/** Stores `n` strings (each valid UTF-8); `v` may be NULL when n is 0.
 *  @return RST_OK; RST_ERR_INVALID (NULL coder or key, a bad key, NULL v with n > 0, a NULL or non-UTF-8 element);
 *          RST_ERR_DUPLICATE (the key is already in this record);
 *          RST_ERR_LIMIT (RST_MAX_KEY_BYTES, RST_MAX_VALUES_PER_RECORD,
 *          RST_MAX_ARCHIVE_BYTES); RST_ERR_STATE outside an encode callback;
 *          after an earlier encode error of the same save, that error's status. */
RST_API rst_status rst_encode_string_array(rst_coder *c, const char *key, const char *const *v, size_t n);
/** Opens a nested keyed record under `key`; values go into it until the
 *  matching rst_encode_end_record(). Depth is limited by RST_MAX_RECORD_DEPTH.
 *  A record left open when the callback returns fails the save.
 *  @return RST_OK; RST_ERR_INVALID (NULL coder or key, a bad key);
 *          RST_ERR_DUPLICATE (the key is already in this record);
 *          RST_ERR_LIMIT (RST_MAX_KEY_BYTES, RST_MAX_VALUES_PER_RECORD, RST_MAX_RECORD_DEPTH,
 *          RST_MAX_ARCHIVE_BYTES); RST_ERR_STATE outside an encode callback;
 *          after an earlier encode error of the same save, that error's status. */
RST_API rst_status rst_encode_begin_record(rst_coder *c, const char *key);
/** Closes the record opened by the matching rst_encode_begin_record().
 *  @return RST_OK; RST_ERR_INVALID (NULL coder); RST_ERR_STATE outside an
 *          encode callback, or with no record open. */
RST_API rst_status rst_encode_end_record  (rst_coder *c);
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Coder: decode (inside decode, or a factory's coder)
 * A missing key: RST_ERR_NOT_FOUND; a key of another type: RST_ERR_TYPE;
 * outputs are untouched on error. Strings and bytes are borrowed: valid until
 * the callback returns; strings are NUL-terminated and `len` (which may be
 * NULL) excludes the NUL. */
/**@{*/
/** True when the record holds `key`, whatever its value (a stored false, 0,
 *  0.0, "" or empty bytes included).
 *  @return true or false; false also on misuse (NULL coder or key, outside
 *          a callback), when rst_last_error() says why. */
RST_API bool       rst_coder_contains (rst_coder *c, const char *key);
/** Reads a bool.
 *  @return RST_OK; RST_ERR_INVALID (NULL coder, key or out); RST_ERR_NOT_FOUND
 *          (no such key); RST_ERR_TYPE (another type); RST_ERR_STATE outside
 *          a decode callback or factory. */
RST_API rst_status rst_decode_bool    (rst_coder *c, const char *key, bool *out);
/** Reads a 64-bit signed integer.
 *  @return RST_OK; RST_ERR_INVALID (NULL coder, key or out); RST_ERR_NOT_FOUND
 *          (no such key); RST_ERR_TYPE (another type); RST_ERR_STATE outside
 *          a decode callback or factory. */
RST_API rst_status rst_decode_int     (rst_coder *c, const char *key, int64_t *out);
/** Reads a double.
 *  @return RST_OK; RST_ERR_INVALID (NULL coder, key or out); RST_ERR_NOT_FOUND
 *          (no such key); RST_ERR_TYPE (another type); RST_ERR_STATE outside
 *          a decode callback or factory. */
RST_API rst_status rst_decode_double  (rst_coder *c, const char *key, double *out);
/** Reads a string (borrowed, NUL-terminated); since 1.2 also an OS string
 *  that is valid UTF-8.
 *  @return RST_OK; RST_ERR_INVALID (NULL coder, key or out); RST_ERR_NOT_FOUND
 *          (no such key); RST_ERR_TYPE (another type, or an OS string that is
 *          not valid UTF-8); RST_ERR_STATE outside a decode callback or
 *          factory. */
RST_API rst_status rst_decode_string  (rst_coder *c, const char *key, const char **out, size_t *len);
/** Reads bytes (borrowed); empty bytes give a non-NULL pointer and len 0.
 *  Since 1.2 it also reads an OS string's raw bytes.
 *  @return RST_OK; RST_ERR_INVALID (NULL coder, key or out); RST_ERR_NOT_FOUND
 *          (no such key); RST_ERR_TYPE (another type); RST_ERR_STATE outside
 *          a decode callback or factory. */
RST_API rst_status rst_decode_bytes   (rst_coder *c, const char *key, const void **out, size_t *len);
/** The referenced object.
 *  @return RST_OK; RST_ERR_INVALID (NULL coder, key or out); RST_ERR_NOT_FOUND
 *          (no such key); RST_ERR_TYPE (another type); RST_ERR_STATE outside
 *          a decode callback or factory. During pass 1 (a factory's coder), a record not yet materialized:
 *          RST_ERR_STATE. A reference to a skipped record: RST_ERR_NOT_FOUND. */
RST_API rst_status rst_decode_object  (rst_coder *c, const char *key, rst_object **out);
/** Copies the array into buf. `count` is required and always set: the
 *  array's length, also on RST_ERR_LIMIT; 0 when the key is absent or holds
 *  another type.  *  cap < count: RST_ERR_LIMIT, so buf NULL, cap 0 asks for
 *  the count.
 *  @return RST_OK; RST_ERR_INVALID (NULL coder, key or count); RST_ERR_NOT_FOUND
 *          (no such key); RST_ERR_TYPE (another type); RST_ERR_STATE outside
 *          a decode callback or factory. RST_ERR_LIMIT when cap < count. */
RST_API rst_status rst_decode_int_array(rst_coder *c, const char *key,
                                        int64_t *buf, size_t cap, size_t *count);
/** Element `index` of a string array. `count` (may be NULL) is always set
 *  when the key holds a string array; index out of range: RST_ERR_NOT_FOUND.
 *  @return RST_OK; RST_ERR_INVALID (NULL coder, key or out); RST_ERR_NOT_FOUND
 *          (no such key); RST_ERR_TYPE (another type); RST_ERR_STATE outside
 *          a decode callback or factory. */
RST_API rst_status rst_decode_string_array(rst_coder *c, const char *key, size_t index,
                                           const char **out, size_t *len, size_t *count);
/** Enters the nested record under `key`; rst_decode_end_record() leaves it.
 *  An unbalanced begin is harmless: the coder resets when the callback returns.
 *  @return RST_OK; RST_ERR_INVALID (NULL coder, or key); RST_ERR_NOT_FOUND
 *          (no such key); RST_ERR_TYPE (another type); RST_ERR_STATE outside
 *          a decode callback or factory. RST_ERR_LIMIT past RST_MAX_RECORD_DEPTH. */
RST_API rst_status rst_decode_begin_record(rst_coder *c, const char *key);
/** Leaves the record entered by the matching rst_decode_begin_record().
 *  @return RST_OK; RST_ERR_INVALID (NULL coder); RST_ERR_STATE outside a
 *          decode callback or factory, or at the object's top level. */
RST_API rst_status rst_decode_end_record  (rst_coder *c);
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Coder: value types */
/**@{*/

/** The type of a stored value (rst_coder_value_type()). Stable numbers. */
typedef enum rst_value_type {
    RST_TYPE_NONE         = 0,  /**< no such key */
    RST_TYPE_BOOL         = 1,
    RST_TYPE_INT          = 2,
    RST_TYPE_DOUBLE       = 3,
    RST_TYPE_STRING       = 4,
    RST_TYPE_BYTES        = 5,
    RST_TYPE_OBJECT       = 6,
    RST_TYPE_INT_ARRAY    = 7,
    RST_TYPE_STRING_ARRAY = 8,
    RST_TYPE_RECORD       = 9,
    RST_TYPE_OBJECT_ARRAY = 10, /**< @since 1.1: rst_encode_object_array() */
    RST_TYPE_OS_STRING    = 11, /**< @since 1.2: rst_encode_os_string() (a file name) */
    RST_TYPE_SEALED       = 12, /**< @since 1.2: a sealed (ENCRYPTED) value not opened yet: what a migration sees */
    RST_TYPE_UNKNOWN      = 15  /**< written by a newer format; skipped by this reader */
} rst_value_type;

/** The type stored under `key` in the current record. Works in encode
 *  callbacks too, for keys already written.
 *  @return the type; RST_TYPE_NONE if the key is absent, or on misuse (NULL
 *          coder or key, outside a callback): then rst_last_error() says why;
 *          RST_TYPE_UNKNOWN for a type of a newer format. */
RST_API rst_value_type rst_coder_value_type(rst_coder *c, const char *key);
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Coder: arrays of object references (@since 1.1) */
/**@{*/

/** Stores an array of references (a navigation stack), value type
 *  RST_TYPE_OBJECT_ARRAY. The same rules as rst_encode_object() for each
 *  element; each element is a dependency edge for the decode order
 *  (referenced objects decode first; cycles in archive order). `v` may be
 *  NULL when n is 0 (an empty array).
 *  @return RST_OK; RST_ERR_INVALID (NULL coder or key, a bad key, NULL v
 *          with n > 0, a NULL element or an object of another engine);
 *          RST_ERR_DUPLICATE; RST_ERR_LIMIT; RST_ERR_STATE outside an
 *          encode callback, or for an object registered after this save
 *          began; after an earlier encode error of the same save, that
 *          error's status. */
RST_API rst_status rst_encode_object_array(rst_coder *c, const char *key,
                                           rst_object *const *v, size_t n);
/** Element `index` of an array of references, as rst_decode_string_array()
 *  reads strings. `*count` (count may be NULL) is always set: the array's
 *  length, 0 when the key is absent or holds another type. An element whose
 *  record was skipped decodes as NULL with RST_OK.
 *  @param[out] out the object, or NULL for a skipped record; required.
 *  @return RST_OK; RST_ERR_INVALID (NULL coder, key or out);
 *          RST_ERR_NOT_FOUND (no such key, or index >= count);
 *          RST_ERR_TYPE (another type); RST_ERR_STATE outside a decode
 *          callback or factory, and in a factory (pass 1) for an element
 *          whose record is not materialized yet. */
RST_API rst_status rst_decode_object_array(rst_coder *c, const char *key, size_t index,
                                           rst_object **out, size_t *count);
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Coder: OS strings, for file names (@since 1.2)
 * Linux file names and paths are bytes, not always UTF-8. An *OS string* is
 * any bytes but NUL, stored losslessly with its own type
 * (RST_TYPE_OS_STRING). `restorectl` shows it as text when it is valid UTF-8
 * and escapes the other bytes (`caf\xe9`; a backslash as `\\`);
 * `restorectl save --from` reads that form back to the same bytes. */
/**@{*/
/** Encodes `v` (NUL-terminated, any bytes) as an OS string; "" is a
 *  valid (empty) OS string. Inside a migration step it adds or replaces the
 *  key like the other rst_encode_* functions.
 *  @return as rst_encode_string(), but any bytes are accepted; NULL `v`:
 *          RST_ERR_INVALID (and the save fails). */
RST_API rst_status rst_encode_os_string(rst_coder *c, const char *key, const char *v);
/** Decodes an OS string or a string. `*out` (NUL-terminated) lives like a
 *  decoded string: until the callback returns.
 *  @return RST_OK, RST_ERR_NOT_FOUND, RST_ERR_TYPE (another type). Note:
 *          rst_decode_string() of an OS string gives RST_ERR_TYPE unless it
 *          is valid UTF-8; rst_decode_bytes() reads its raw bytes. */
RST_API rst_status rst_decode_os_string(rst_coder *c, const char *key, const char **out);
/** Copies a string or OS string into the caller's buffer, with its NUL.
 *  Whenever `cap` > 0 and the call does not return RST_OK, `buf` holds ""
 *  (`buf[0]` is NUL); with `cap` 0 nothing is written, so
 *  `rst_decode_string_copy(c, key, NULL, 0, &len)` asks for the size
 *  (RST_ERR_LIMIT, `len` set; `len + 1` bytes are needed).
 *  @param[out] len its length without the NUL (may be NULL), also when it
 *         does not fit; 0 when the key is missing or of another type.
 *  @return RST_OK; RST_ERR_NOT_FOUND; RST_ERR_TYPE (neither a string nor an
 *          OS string); RST_ERR_LIMIT when it does not fit in `cap` bytes
 *          (it needs its length + 1); RST_ERR_INVALID for a NULL `buf` with
 *          `cap` > 0, a NULL coder or key. */
RST_API rst_status rst_decode_string_copy(rst_coder *c, const char *key,
                                          char *buf, size_t cap, size_t *len);
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Coder: a callback that fails */
/**@{*/

/** Reports that the callback `c` was passed to failed as a whole, with a
 *  sentence saying why: the one way a callback reports failure, the same
 *  for C hosts, Swift hosts and plugins (docs/ARCHITECTURE.md, "Errors"):
 *  - in an encode callback, the save fails with `status` and the message,
 *    and the old archive stays, as when an encode call fails;
 *  - in a decode callback, the object keeps what it decoded, the failure is
 *    logged at RST_LOG_WARNING, the object is not counted as restored (it
 *    counts in `skipped`) and gets no `finished`; the restore goes on;
 *  - in a factory, the failure is logged at RST_LOG_WARNING; what the
 *    factory returns still decides.
 *  Only the first report of a callback counts.
 *  @param status the error (RST_OK or a value this library does not define:
 *         RST_ERR_INVALID is used).
 *  @param message a sentence, copied; NULL: "the callback failed".
 *  @return RST_OK when recorded; RST_ERR_INVALID for a NULL coder;
 *          RST_ERR_STATE outside an encode, decode or factory callback. */
RST_API rst_status rst_coder_fail(rst_coder *c, rst_status status, const char *message);
/**@}*/

/* ======================================================================== */
/* Lifecycle: dirty, autosave, dispatch, descriptor, thread, signals,       */
/* ======================================================================== */
/* closing the session, the save listener                                   */

/* ------------------------------------------------------------------------ */
/** @name When to save (@since 1.1; docs/LIFECYCLE.md)
 *
 * The engine is *dirty* from a rst_mark_dirty() until a save that began
 * after that mark succeeds (rst_save(), rst_flush() or an autosave; a save
 * to a buffer does not count).
 *
 * Autosave (options version 2, autosave_delay_ms > 0): a save becomes *due*
 * autosave_delay_ms after the last mark, but never later than
 * autosave_max_delay_ms after the first mark since the last successful save
 * (a debounce with a ceiling; a mark that arrives during a save counts from
 * that save's start). Due saves run only from rst_dispatch() — on the
 * host's loop thread, or on the engine's own thread after
 * rst_start_autosave_thread() — never by surprise on another thread. A due
 * save that fails (encode, file system, or should_save refused: all count
 * the same) stays due: it is retried after autosave_delay_ms, then twice
 * that, doubling up to autosave_max_delay_ms; the engine stays dirty
 * until a save succeeds. Logging (library 1.2): the first failure is
 * logged at RST_LOG_WARNING with its sentence and the wait; further
 * failures with the same status and sentence (the wait aside) are logged
 * at RST_LOG_DEBUG only, plus one WARNING summary with their count at most
 * once a minute; a different failure is logged at WARNING at once; the
 * first success after failures is logged at RST_LOG_INFO.
 *
 * A restore by itself never makes the engine dirty: rst_mark_dirty() on
 * the thread running this engine's restore, while it runs (a factory, a
 * migration, decode, finished, did_finish_restoring), returns RST_OK and
 * is ignored. Marks from other threads during the restore count. One
 * exception (library 1.3): a restore that reports RST_REASON_FALLBACK
 * leaves the engine dirty (autosave armed, the event fd readable when due),
 * so a host that saves only when dirty fills the archive slot at its next
 * autosave or rst_flush(), even with the bytes of the generation restored;
 * the launch after that is RELAUNCH or RECOVER, not FALLBACK again.
 *
 * Unchanged state is not written, whoever saves it: a save whose archive
 * equals the one in the store (the save time aside) writes nothing and
 * rotates no generation. An engine that has neither restored nor saved
 * compares with the store's archive too, reading it once.
 *
 * Host loop: give the loop rst_event_fd(); when it is readable call
 * rst_dispatch(). A loop that cannot watch a descriptor calls
 * rst_dispatch() when rst_next_timeout_ms() says. See docs/LIFECYCLE.md for
 * GLib/GTK, Qt, libuv, poll() and curses.
 *
 * Logging: without a `log` callback the engine writes RST_LOG_WARNING and
 * above to stderr; a full-screen (curses) program should pass one, or a
 * failing autosave writes over its screen.
 *
 * Signals: rst_save_on_signals(). The handler is installed with SA_RESTART
 * (the host's blocking calls — read(), waitpid() — are restarted, not
 * failed with EINTR; poll(), select() and epoll_wait() still return EINTR,
 * as the kernel does for them) and only writes to the engine's eventfd and
 * posts a semaphore: the save itself runs in rst_dispatch().
 *
 * A claimed signal always ends the program as it would have. After its
 * save, the library gives the signal its previous disposition back and
 * re-raises it with no lock of the library held, so a previous handler
 * that calls exit() and an atexit() that calls rst_flush() and
 * rst_engine_destroy() complete. When no rst_dispatch() has done the save
 * within signal_deadline_ms (options version 3; 0 and older structs: 1000
 * ms) — the host is blocked outside its loop: a prompt, waitpid(), a
 * read() — a library thread (started by the first claim, every signal
 * blocked in it) re-raises the signal anyway: the changes since the last
 * save are lost and the session stays open, so the next restore reports
 * RECOVER. A loop that waits on rst_next_timeout_ms() must therefore wake
 * within the deadline: cap its wait below it.
 *
 * Choices where the contract is silent: SIGKILL, SIGSTOP and the fault signals
 * (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGABRT, SIGSYS) cannot be
 * claimed (RST_ERR_INVALID); the claim is spent by its first delivery
 * (claim again to catch the next one); a second delivery of the same
 * signal before the saves finish does not wait for them (the previous
 * disposition is restored and the signal re-raised at once: Ctrl-C twice
 * quits); the signal is re-raised with kill(getpid(), sig)
 * (process-directed); when its previous disposition was SIG_DFL the process
 * ends, so the session is closed after the save (the next launch reads
 * RELAUNCH, not RECOVER; not after the deadline); with a previous handler,
 * that handler runs and the session stays open (unless the handler ends the
 * process through exit() and an atexit() destroys the engine). A save that
 * is still running at the deadline does not hold the signal back (the
 * archive is replaced atomically, so the old one stays whole). Several
 * engines on one signal: it is re-raised when each has saved or passed its
 * own deadline. A failed signal save is logged at RST_LOG_ERROR and the
 * signal goes on. */
/**@{*/

/** Marks the engine dirty (`o`, which may be NULL, is the object whose
 *  state changed; it must belong to `e`). Cheap, callable from any thread
 *  and from callbacks; never waits for a running save (it takes a small
 *  lock of its own, not the engine's).
 *  @return RST_OK; RST_ERR_INVALID (NULL engine, an object of another
 *          engine). */
RST_API rst_status rst_mark_dirty(rst_engine *e, rst_object *o);
/** @return true while the engine is dirty; false for NULL. */
RST_API bool       rst_is_dirty(rst_engine *e);
/** Saves now if dirty (rst_save()), else does nothing. Runs on the calling
 *  thread, waiting for a save in progress on another thread.
 *  @return RST_OK (also when clean); any status of rst_save(). */
RST_API rst_status rst_flush(rst_engine *e);
/** One descriptor for the host's loop, readable (POLLIN) exactly while
 *  rst_dispatch() has work: a due autosave or a signal save. An epoll
 *  descriptor over a timerfd (CLOCK_MONOTONIC, re-armed at each change of
 *  the due time) and an eventfd (signals); close-on-exec. Owned by the
 *  engine: do not read or close it; rst_engine_destroy() closes it. Every
 *  call returns the same descriptor. Handing it out is taken as a promise
 *  to poll it (rst_save_on_signals() relies on that).
 *  @return the descriptor; -1 on error (rst_last_error(): NULL engine or no
 *          archive_path: RST_ERR_INVALID; the descriptors cannot be made:
 *          RST_ERR_IO or RST_ERR_NOMEM). */
RST_API int        rst_event_fd(rst_engine *e);
/** Does the work that is due now, on the calling thread: a signal save
 *  (then the signal goes on, which may end the process inside this call),
 *  else a due autosave. Never blocks waiting for work; makes the descriptor
 *  unreadable again when nothing is left. Calls from several threads (the
 *  autosave thread included) are serialized: a call while another is
 *  running returns RST_OK at once. From inside one of the engine's
 *  callbacks the due save fails with RST_ERR_STATE (and is retried).
 *  @return RST_OK (nothing due, or the work succeeded); RST_ERR_INVALID for
 *          NULL; the failing autosave's status (the save stays due; the
 *          failure is also logged at RST_LOG_WARNING). */
RST_API rst_status rst_dispatch(rst_engine *e);
/** For loops that cannot poll a descriptor: milliseconds until
 *  rst_dispatch() has work (0: now; 0 too while a claimed signal waits for
 *  its save). Asking is taken as a promise to dispatch when it says (for
 *  rst_save_on_signals()).
 *  @return -1 when nothing is pending (clean, no autosave, no signal) or
 *          for NULL. */
RST_API int64_t    rst_next_timeout_ms(rst_engine *e);
/** Starts one engine-owned thread that waits on the descriptor and
 *  dispatches: encode callbacks (and should_save, log) then run on that
 *  thread, so they must be thread-safe. All signals are blocked in it.
 *  Joined by rst_engine_destroy(). rst_dispatch() may still be called too.
 *  @return RST_OK; RST_ERR_INVALID (NULL engine, no archive_path);
 *          RST_ERR_STATE for a second call; RST_ERR_IO, RST_ERR_NOMEM when
 *          the thread or its descriptors cannot be made. */
RST_API rst_status rst_start_autosave_thread(rst_engine *e);
/** On the first delivery of any of `signals` the engine saves (if dirty)
 *  through its dispatcher — never in the handler, which only writes to an
 *  eventfd and is async-signal-safe — then restores the signal's previous
 *  disposition and re-raises it, so the process ends as it would have
 *  (killed by that signal). Several engines may claim one signal: each
 *  saves on its own dispatch path; the signal is re-raised when the last
 *  has finished — or, when no dispatch saved within signal_deadline_ms,
 *  without the save. Works with autosave_delay_ms == 0. Calling it again
 *  adds signals (and re-arms spent ones). See the section comment for the
 *  deadline, SA_RESTART and the choices.
 *  @param signal_numbers `count` signal numbers; NULL only with count 0.
 *  @return RST_OK; RST_ERR_INVALID (NULL engine, no archive_path, NULL
 *          signals with count > 0, a signal that cannot be claimed);
 *          RST_ERR_STATE without a dispatcher (neither the autosave thread
 *          running, nor rst_event_fd() handed out, nor rst_next_timeout_ms()
 *          asked by a loop that dispatches when it says); RST_ERR_LIMIT past 64
 *          engines holding signals at once; RST_ERR_IO if sigaction fails. */
RST_API rst_status rst_save_on_signals(rst_engine *e, const int *signal_numbers, size_t count);
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Saving: a listener; closing the session (@since 1.2)
 * Called after every attempt to save this engine's state to its store or
 * archive path — rst_save(), rst_flush() when it saves, an autosave, a save
 * on a signal — with the status of that attempt. Not after buffer saves
 * (rst_save_to_buffer) or exports (rst_export), nor when rst_flush() finds
 * nothing to save. Runs on the thread that saved, with no lock of the
 * engine held: it may call rst_mark_dirty(), rst_is_dirty() and
 * rst_last_save_sizes(). During a save on a signal it runs inside
 * rst_dispatch(), not in the signal handler. It runs before the saving
 * call returns (so rst_last_error() after a failed rst_save() is still that
 * save's). A failure is told with its status; the sentence is in the log
 * (autosave, signal) or rst_last_error() (rst_save, rst_flush). A save from
 * inside one of the engine's own callbacks (did_finish_restoring calling
 * rst_save()) runs its listener with that outer callback's lock held. */
/**@{*/
#define RST_SAVE_CALL   0u  /**< rst_save(), rst_flush() */
#define RST_SAVE_AUTO   1u  /**< autosave (rst_dispatch(), the autosave thread) */
#define RST_SAVE_SIGNAL 2u  /**< the save of a signal claimed by rst_save_on_signals() */
typedef void (*rst_save_listener)(rst_engine *e, rst_status status,
                                  uint32_t trigger, void *ctx);
/** Sets (or with NULL removes) the engine's save listener; one per engine,
 *  a second call replaces the first (a save running on another thread may
 *  still call the one it replaced, once).
 *  @return RST_OK; RST_ERR_INVALID for a NULL engine. */
RST_API rst_status rst_set_save_listener(rst_engine *e, rst_save_listener fn, void *ctx);
/** Marks this engine's session as ended cleanly, so the next restore of its
 *  archive reports RST_REASON_RELAUNCH instead of RECOVER. For a host whose
 *  own signal handler ends the process (a curses program that must restore
 *  the terminal): call it from that handler before `_exit()`/`exit()`.
 *  Async-signal-safe — no lock, no allocation — with an `archive_path`
 *  (or the unwrapped rst_file_store(): `open`, `read`, `memcmp`, `unlink`
 *  of `<archive>.session`, prepared when the session was recorded) and
 *  with a store that has `map` (the session slot is mapped when recorded,
 *  and closing zeroes it; the slot itself is removed at destroy). With a
 *  store without `map`, it calls the store's `remove` of the session slot:
 *  async-signal-safe only if that function is. Calling it twice, or before
 *  any save or restore, is harmless; a later save or restore records the
 *  session again. NULL or an engine without a store or archive path:
 *  nothing. The engine also closes the session itself at
 *  rst_engine_destroy() and when it re-raises a claimed signal into the
 *  default disposition after its save. */
RST_API void rst_close_session(rst_engine *e);
/**@}*/

/* ======================================================================== */
/* Surviving change: class versions, migrations, carried records,           */
/* ======================================================================== */
/* quarantine, restoration that finishes later (docs/EVOLUTION.md)          */

/* ------------------------------------------------------------------------ */
/** @name Class versions and migrations (@since 1.1; docs/EVOLUTION.md)
 * A class's version is stored in every record of that class (archive
 * format: header flag 1, docs/FORMAT.md); archives written by 1.0, and
 * records of classes with no version set, read as version 0. At restore,
 * after validation and before pass 1, a record whose version is below its
 * class's current version runs the chain of migrations from, from+1, ...
 * up to the current version; factories and decode then see the migrated
 * record. The plugins an archive needs are loaded before the migrations, so
 * that migrations a plugin's `init` registers apply to that restore.
 * A missing step (RST_SKIP_NO_MIGRATION), a step returning non-OK
 * (RST_SKIP_MIGRATION_FAILED) or a record saved by a newer version of its
 * class (RST_SKIP_TOO_NEW) skips that record with its descendants; the rest
 * of the restore goes on. A record of a class with no version set restores
 * as in 1.0, whatever version it stores. */
/**@{*/

/** Sets the current version of a class, for every object of that class
 *  name (registered by the host, made by a factory, host or plugin). The
 *  last call wins; setting 0 is "set" too (a record of version 1 is then
 *  too new). Plugins call it from `init`. May be called at any time,
 *  from any thread; a restore uses the versions set when its migrate step
 *  runs, a save those set when it begins.
 *  @param class_name non-empty UTF-8, at most RST_MAX_CLASS_NAME_BYTES (copied).
 *  @return RST_OK; RST_ERR_INVALID (NULL engine or name, bad UTF-8, empty);
 *          RST_ERR_LIMIT (a name longer than RST_MAX_CLASS_NAME_BYTES). */
RST_API rst_status rst_set_class_version(rst_engine *e, const char *class_name, uint32_t version);

/** A migration step: edits the record through `c` from `from_version` to
 *  `from_version + 1`. Inside it:
 *  - rst_decode_* reads the record as it stands (strings and bytes borrowed
 *    until the step returns); rst_coder_contains and rst_coder_value_type work;
 *  - rst_encode_* adds a key, or replaces its value in place (no
 *    RST_ERR_DUPLICATE); rst_coder_remove() and rst_coder_rename() edit it;
 *  - rst_decode_begin_record() enters an existing nested record for editing,
 *    rst_encode_begin_record() adds (or replaces with) a new empty one and
 *    enters it; rst_decode_end_record() and rst_encode_end_record() both
 *    leave the record entered;
 *  - object references (single or arrays) cannot be read or written (no
 *    object exists yet: RST_ERR_STATE); they are kept as they are and can be
 *    renamed or removed;
 *  - rst_coder_class_version() returns `from_version`;
 *  - rst_coder_fail() reports failure like returning non-OK.
 *  The result must satisfy every archive limit (RST_MAX_VALUES_PER_RECORD,
 *  RST_MAX_RECORD_DEPTH, key rules; else the step counts as failed); if the
 *  rebuilt archive exceeds RST_MAX_ARCHIVE_BYTES the restore fails with
 *  RST_ERR_LIMIT. Runs with the engine's lock held, on the restoring thread.
 *  @return RST_OK, or any other status to fail: the record and its
 *          descendants are skipped (RST_SKIP_MIGRATION_FAILED). */
typedef rst_status (*rst_migrate_fn)(rst_coder *c, uint32_t from_version, void *ctx);

/** Registers the step that migrates records of `class_name` from
 *  `from_version` to `from_version + 1`. Plugins call it from `init`.
 *  @return RST_OK; RST_ERR_DUPLICATE (that class already has a step from that
 *          version); RST_ERR_INVALID (NULL engine, name or fn, a bad name,
 *          from_version UINT32_MAX); RST_ERR_LIMIT (a long name). */
RST_API rst_status rst_register_migration(rst_engine *e, const char *class_name,
                                          uint32_t from_version, rst_migrate_fn fn, void *ctx);

/** The class version of the values `c` holds: in a migration, the version it
 *  migrates from; in decode and factories, the record's version (after
 *  migration, its class's current version; a 1.0 archive: 0); in encode,
 *  the current version of the object's class (0 when none is set).
 *  @return the version; 0 on misuse (NULL coder, outside a callback), when
 *          rst_last_error() says why. */
RST_API uint32_t   rst_coder_class_version(rst_coder *c);

/** Removes `key` from the record (or nested record) a migration edits.
 *  @return RST_OK; RST_ERR_NOT_FOUND (no such key); RST_ERR_INVALID (NULL
 *          coder or key); RST_ERR_STATE outside a migration (a save's
 *          archive is append-only). */
RST_API rst_status rst_coder_remove(rst_coder *c, const char *key);

/** Renames `from_key` to `to_key` in the record a migration edits, keeping
 *  the value and its position.
 *  @return RST_OK (also when the names are equal); RST_ERR_NOT_FOUND (no
 *          `from_key`); RST_ERR_DUPLICATE (`to_key` is taken); RST_ERR_INVALID
 *          (NULL arguments, a bad `to_key`); RST_ERR_LIMIT (a `to_key`
 *          longer than RST_MAX_KEY_BYTES); RST_ERR_STATE outside a migration. */
RST_API rst_status rst_coder_rename(rst_coder *c, const char *from_key, const char *to_key);
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Carried records: unclaimed records are carried, not lost (@since 1.1)
 * Driven by `rst_engine_options.carry_saves` (options version 2; see
 * "Engine"; 0: none, UINT32_MAX: always). A record a restore skipped because
 * nothing could produce it (RST_SKIP_NO_FACTORY or RST_SKIP_PLUGIN_REJECTED:
 * no registered object, factory or fallback — its plugin was uninstalled,
 * say) is kept verbatim with its descendants and written back by the next
 * `carry_saves` successful saves (rst_save, rst_save_to_buffer), after the
 * live records, under the same path, as long as its parent is present in
 * that save (or it is a root). Judged record by record (@since 1.2): when a
 * live object now holds a carried record's path, that record is not written
 * (the live object's state is) and its carried descendants are written
 * under the live object. The
 * archive stores each carried record's count left (format flag 2,
 * docs/FORMAT.md), so a relaunch continues the count instead of restarting
 * it. References from and to carried records are kept when both ends are
 * written (resolved by path at each save); a reference whose other end is
 * not written is left out (an array loses that element). A carried record
 * claimed again at a later restore is restored normally. Records skipped
 * for any other reason (declined, quarantined, migrations, too new) are not
 * carried. `restorectl inspect` marks carried records and their saves left. */
/**@{*/
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Per-object crash quarantine (@since 1.1)
 * Not an options member: two engine flags (rst_engine_options.flags).
 *
 * In 1.0, a process that dies during a restore makes the next restore of
 * that archive set it aside. With quarantine, the crash-loop marker also
 * names the record whose factory, migration, `decode` or `finished` was
 * running (rewritten in place through a shared mapping: a memory store per
 * callback, no system call, kept by the page cache when the process is
 * killed). The next restore that finds such a marker of a dead process
 * writes `<archive>.quarantine` naming that record, removes the marker,
 * and restores everything else: the record and its descendants are skipped
 * (RST_SKIP_QUARANTINED, with RST_SKIP_PARENT_SKIPPED below it), the
 * restore returns RST_OK and the archive stays in place. A second death
 * while a quarantine is in effect, or a death outside any object callback
 * (should_restore, did_finish_restoring, the engine itself), sets the
 * archive aside as in 1.0 (and removes the quarantine). The quarantine lasts
 * until the next successful rst_save() (the archive then holds the new
 * state; a quarantined record is not carried) or rst_discard(); it is
 * ignored, and removed, once the archive bytes change. The engine that
 * restores next decides: one without quarantine sets the archive aside
 * whatever the marker names.
 *
 * An engine quarantines when created with an options struct of version 2
 * or later, unless RST_ENGINE_NO_QUARANTINE is set; with a version-1
 * struct (a 1.0 binary) it keeps 1.0's behaviour unless RST_ENGINE_QUARANTINE
 * opts in. Needs the crash-loop guard (not with RST_ENGINE_NO_CRASH_GUARD).
 * `restorectl quarantine ARCHIVE` shows a quarantine, `--clear` ends it. */
/**@{*/
#define RST_ENGINE_NO_QUARANTINE  (1u << 1) /**< keep 1.0's crash-loop behaviour (options v2) */
#define RST_ENGINE_QUARANTINE     (1u << 2) /**< this library's addition: quarantine with a
                                                 version-1 options struct */
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Restoration that finishes later (@since 1.1)
 * UIKit's extendStateRestoration / completeStateRestoration, for state that
 * loads asynchronously. */
/**@{*/

/** An extension of a restore. Owned by the engine: valid until the engine
 *  is destroyed (completing or expiring does not free it), never freed by
 *  the caller. */
typedef struct rst_restore_token rst_restore_token;

/** Extends the restore in progress. Call it from a `decode` or `finished`
 *  callback of that restore. While a token is open, did_finish_restoring is
 *  not called and the crash-loop marker stays (naming the record whose
 *  callback extended: a death before the last token completes counts as a
 *  death during the restore, and an engine with quarantine quarantines that
 *  record). rst_restore() returns as usual; the objects' `finished` run as
 *  usual.
 *
 *  Deadlines: a token not completed `deadline_ms` milliseconds after this
 *  call (monotonic clock) expires: its object is listed by
 *  rst_last_restore_skips() as RST_SKIP_EXPIRED (it keeps what it decoded;
 *  the report counts it as skipped, not restored), and when no token is
 *  left open, did_finish_restoring runs on the thread that noticed. Expiry
 *  is noticed on time by the dispatcher — rst_event_fd() turns readable at
 *  the deadline, rst_next_timeout_ms() counts it, and rst_dispatch() (or the
 *  autosave thread) expires the token — and otherwise when the engine is
 *  next called (rst_complete_restoration, rst_save, rst_save_to_buffer,
 *  rst_restore, rst_restore_from_buffer, rst_discard,
 *  rst_last_restore_report, rst_last_restore_skips), whichever is first.
 *  `deadline_ms` 0: no deadline. A new restore expires the previous one's
 *  open tokens first (calling its did_finish_restoring); rst_engine_destroy
 *  expires them without calling it.
 *  @param[out] out the token, owned by the engine.
 *  @return RST_OK; RST_ERR_INVALID (NULL engine or out); RST_ERR_STATE
 *          anywhere but a decode or finished callback of a restore in
 *          progress (a factory, a migration, an encode, another thread). */
RST_API rst_status rst_extend_restoration(rst_engine *e, uint32_t deadline_ms,
                                          rst_restore_token **out);

/** Completes a token. The last open token's completion runs
 *  did_finish_restoring on the calling thread (any thread; the engine's lock
 *  is taken) and removes the crash-loop marker.
 *  @return RST_OK; RST_ERR_INVALID (NULL engine or token, a token of
 *          another engine); RST_ERR_STATE for a token already completed or
 *          expired (nothing is freed twice). */
RST_API rst_status rst_complete_restoration(rst_engine *e, rst_restore_token *t);
/**@}*/

/* ======================================================================== */
/* Sensitive values and size budgets                                        */
/* ======================================================================== */

/* ------------------------------------------------------------------------ */
/** @name Sensitive values (@since 1.2)
 * An app says once which values must not reach the disk as they are:
 * RST_SENSITIVITY_SECRET values are never written (not to a store, file,
 * buffer, generation, carried record or export; a decode of them gives
 * RST_ERR_NOT_FOUND); RST_SENSITIVITY_ENCRYPTED values are written sealed
 * (XChaCha20-Poly1305, libsodium) under the 32-byte key the options'
 * `encryption_key` gives, with the record path, class and key as associated
 * data, so a sealed value cannot be moved to another record; a value that
 * cannot be opened (no key, wrong key, tampered, moved) decodes as
 * RST_ERR_NOT_FOUND and the restore goes on, with one WARNING per restore
 * counting them. Without a key at save an ENCRYPTED value is not written
 * (as SECRET), with one WARNING per save. RST_SENSITIVITY_LOCAL values are
 * written, and left out of portable exports (rst_export()). See
 * docs/SECURITY.md for what this protects against and what it does not.
 *
 * Details a program can rely on:
 * - A nested record under a SECRET key is left out whole; under an
 *   ENCRYPTED key it keeps its structure and every value in it is sealed
 *   (unless the policy names a key inside it); under a LOCAL key it is left
 *   out whole from portable exports. An object reference (or an array of
 *   them) under an ENCRYPTED key is written as it is: it only names another
 *   record of the same archive.
 * - The associated data of a sealed value is the record's path, its class
 *   name and the value's own key (not the keys of the nested records around
 *   it): a sealed value copied to another record, another class or another
 *   key does not open.
 * - The key is asked at the first ENCRYPTED value of a save (not at all by
 *   a save without one) and once by a restore whose archive holds a sealed
 *   value, before any factory or decode; the engine keeps its copy only for
 *   that save or restore, then wipes it. The callback runs on the saving or
 *   restoring thread with the engine's lock held: it must not call the
 *   engine.
 * - A restore opens sealed values after migrations run: a migration sees a
 *   sealed value as a value of unknown type, and one it moves to another key
 *   no longer opens.
 * - Carried records are written without the keys the policy makes SECRET
 *   (even when an older build wrote them) and with their sealed values
 *   copied still sealed (they keep their path and class, so they open when
 *   a build with the key restores them). */
/**@{*/
typedef enum rst_sensitivity {
    RST_SENSITIVITY_NORMAL    = 0,
    RST_SENSITIVITY_SECRET    = 1, /**< never written: not to a store, file or buffer */
    RST_SENSITIVITY_ENCRYPTED = 2, /**< written sealed with the host's key */
    RST_SENSITIVITY_LOCAL     = 3  /**< written, left out of portable exports */
} rst_sensitivity;
/** The app's policy: every value under `key` in records of `class_name`
 *  (NULL: every class), at any depth of their nested records, whoever
 *  encodes it (host, plugin, Swift). A later call for the same class and
 *  key replaces the earlier; RST_SENSITIVITY_NORMAL removes it.
 *  Takes effect at the next save or export (a save in progress keeps the
 *  policy it began with).
 *  @return RST_OK; RST_ERR_INVALID (NULL engine or key, an empty key or
 *          class name, unknown `s`); RST_ERR_LIMIT (over-long key or class
 *          name). */
RST_API rst_status rst_set_key_sensitivity(rst_engine *e, const char *class_name,
                                           const char *key, rst_sensitivity s);
/** Inside an encode callback, before `key` is encoded in this record:
 *  sets its sensitivity for this record only (the nested record open now,
 *  or the object's own values outside any); wins over the policy.
 *  @return RST_OK; RST_ERR_STATE outside an encode, or after `key` was
 *          encoded in this record — then the save fails too (the value is
 *          already written as it is) and the old archive stays;
 *          RST_ERR_INVALID (NULL key, unknown `s`); RST_ERR_LIMIT (an
 *          over-long key). */
RST_API rst_status rst_coder_set_sensitivity(rst_coder *c, const char *key,
                                             rst_sensitivity s);
/**@}*/

/* ------------------------------------------------------------------------ */
/** @name Size budgets (@since 1.2)
 * Every save (to the store or archive path, or to a buffer with
 * rst_save_to_buffer(); not rst_export()) measures each record: its own
 * bytes in the archive and its subtree's (own plus every descendant's). The
 * roots' subtree bytes plus the header and the shared tables are the
 * archive's size, exactly. With `size_budget` (options version 3) a save
 * over budget does what `budget_policy` says: RST_BUDGET_WARN saves and logs
 * one WARNING naming the budget, the size and the three largest subtrees of
 * non-root records; RST_BUDGET_FAIL fails with RST_ERR_LIMIT, the old
 * archive intact, with the same facts in the sentence; RST_BUDGET_TRIM
 * leaves out whole subtrees of non-root records — lowest priority first
 * (a subtree's priority is its top record's object priority), the largest
 * first among equals — until the archive fits, and fails as FAIL if only
 * roots are left. The archive lists the top path of each trimmed subtree;
 * the next restore reports each as RST_SKIP_TRIMMED. `restorectl du
 * ARCHIVE` shows the sizes as a tree. See docs/BUDGETS.md.
 *
 * Choices this library makes where the contract is silent:
 *  - The budget counts the whole archive (header, tables and checksum
 *    included). Keys and names are shared and belong to no record.
 *  - WARN logs its WARNING at every save that is over budget.
 *  - TRIM writes the archive again without the chosen subtrees: the encode
 *    callbacks of the objects that stay are called a second time.
 *  - References to a trimmed object are dropped: rst_encode_object() of it
 *    writes nothing (RST_TYPE_NONE at restore) and an object array leaves
 *    the element out. Carried records under a trimmed object go with it.
 *  - The list of trimmed paths is a value in the first root record (a
 *    type 1.1 readers skip, so they read a trimmed archive); its bytes are
 *    part of that record's own bytes.
 *  - At the next restore the trimmed tops come after the archive's own
 *    skips in rst_last_restore_skips(), and the report's `skipped` counts
 *    them (`archived` does not: they are not in the archive). */
/**@{*/
/** One record of the last save (rst_last_save_sizes()). */
typedef struct rst_size_entry {
    const char *path;           /**< "Tabs/Nav/List" */
    const char *class_name;     /**< "" when none */
    uint64_t    own_bytes;      /**< the record's own bytes in the archive */
    uint64_t    subtree_bytes;  /**< own_bytes plus every descendant's */
    uint32_t    trimmed;        /**< 1: left out of that save by RST_BUDGET_TRIM */
} rst_size_entry;
/** Every record the last successful or budget-failed save considered, in
 *  archive order, trimmed ones included (with `trimmed = 1` and the sizes
 *  they would have taken). A save that failed before its archive was
 *  complete for another reason (an encode error, should_save) leaves the
 *  previous list; one that failed writing the file lists the archive it
 *  could not write. The buffer saves of rst_save_to_buffer() count;
 *  rst_export() does not. Safe to call from a save listener.
 *  @param[out] out one block (the strings inside it), freed with one
 *         rst_free(); NULL with `*count = 0` before any save.
 *  @return RST_OK; RST_ERR_INVALID for NULL arguments; RST_ERR_NOMEM. */
RST_API rst_status rst_last_save_sizes(rst_engine *e, rst_size_entry **out, size_t *count);
/**@}*/

/* ======================================================================== */
/* Diagnostics: testing process death                                       */
/* ======================================================================== */

/* ------------------------------------------------------------------------ */
/** @name Testing process death (@since 1.2)
 * No functions: the library reads three environment variables once per
 * process, with secure_getenv() (so never in set-user-ID or set-group-ID
 * programs), when it creates its first engine. See docs/TESTING.md and
 * `restorectl test`.
 *
 * RESTORATION_KILL_AT=POINT[:N] — the process sends itself SIGKILL (no
 * handler, no atexit, no flush) the N-th time (default 1) any engine with
 * a store or an archive path reaches POINT: `save-begin` (rst_save() begins, before
 * should_save), `save-encoded` (every encode done, nothing written),
 * `save-written` (the new archive durable in its temporary, not yet
 * renamed), `save-replaced` (renamed into place, before anything after
 * it), `restore-begin` (every rst_restore(), with or without an archive),
 * `restore-decoding` (in the turn of the first decode callback: the
 * crash marker names its record), `restore-finished` (after
 * did_finish_restoring, the crash marker removed), `autosave` (a due
 * autosave starts, before its save). rst_save_to_buffer(),
 * rst_restore_from_buffer() and rst_export() reach none. An invalid value
 * is ignored and logged once (WARNING) through the first engine that saves
 * or restores a file.
 *
 * RESTORATION_TEST_EXIT=restored with RESTORATION_TEST_REPORT=FILE — when
 * the first rst_restore() of the process has finished (after
 * did_finish_restoring, or after it found nothing or failed), FILE gets a
 * JSON report, written atomically: {"reason": "RST_REASON_…",
 * "generation": G, "restored": N, "skipped": [{"path", "reason":
 * "RST_SKIP_…", "detail"}], "archive_bytes": B, "store": "file '<path>'",
 * "status": "RST_OK" or the failure's, "error": its message}. Then the
 * process ends with _exit(0): stdio is flushed, but no atexit handler,
 * destructor or signal handler runs, so nothing saves on the way out. A
 * report that cannot be written: logged at ERROR, _exit(70).
 * RESTORATION_TEST_EXIT=roundtrip first saves the state just restored to
 * FILE.rst (the archive is not touched; the report adds "roundtrip"); with
 * RESTORATION_TEST_SETTLE=MS (1 to 600000) that save waits for the first
 * rst_dispatch() MS milliseconds or more after the restore (the program's
 * first idle moment), and the program runs on until then.
 * Without RESTORATION_TEST_REPORT (or with another value): one WARNING,
 * and the program goes on. */
/**@{*/
/**@}*/

#ifdef __cplusplus
}
#endif
#endif /* RESTORATION_H */
