/**
 * @file restoration_etcd.h
 * @brief restoration-etcd: a store (restoration_store.h, table version 2)
 *        that keeps a program's state in an etcd v3 cluster, so it follows
 *        its user from one machine to another (@since 1.3).
 *
 * The store speaks to etcd's JSON gateway (`/v3/kv/...`, `/v3/lease/...`,
 * `/v3/auth/authenticate`) with libcurl; it adds no consensus, replication
 * or lock of its own: every guarantee below is one etcd transaction, lease
 * or range. docs/ROAMING.md gives the key layout and how to run a cluster
 * for it.
 *
 * - **One owner.** `acquire` creates the `owner` key on a lease, only if it
 *   is absent; the store's own thread keeps the lease alive every TTL/3.
 *   `release_ownership` and `destroy` revoke it. A live owner elsewhere:
 *   RST_ERR_FENCED naming its machine, or (with `handoff_wait_ms`) a
 *   `handoff` key the owner's store sees within one TTL
 *   (RST_STORE_EVENT_HANDOFF_REQUESTED there).
 * - **Fencing.** Every publish is one transaction that compares the owner
 *   key's `create_revision` with the one this instance created; a failed
 *   comparison is RST_ERR_FENCED and RST_STORE_EVENT_OWNER_LOST, and the
 *   state another instance wrote stays as it is.
 * - **Atomic replace.** A slot's bytes are content-addressed chunks of at
 *   most 1 MiB, then one transaction replaces the slot's head (digest,
 *   size, chunk list, writer machine, fence).
 * - **Local first.** Every write goes to a file store in `cache_dir` and
 *   returns from there; publishing happens on the store's thread. Without
 *   the cluster: RST_STORE_EVENT_OFFLINE, the local copy serves, and the
 *   newest bytes are published when the cluster answers again
 *   (RST_STORE_EVENT_ONLINE). A publish's failure (other than the network)
 *   is returned by the next write of the archive and by rst_etcd_flush().
 * - `read` and `list` never need ownership; `write`, `move`, `link` and
 *   `remove` of every slot but RST_SLOT_CONFLICT do: before `acquire` they
 *   are RST_ERR_STATE; once fenced (a failed acquire, OWNER_LOST, or after
 *   `release_ownership`) RST_ERR_FENCED, nothing written. Conflict copies
 *   are always accepted, and published.
 * - Chunks no head refers to are removed by the owner's thread
 *   (`RESTORATION_ETCD_GC_INTERVAL_MS`, default 60000, between passes).
 *
 * The machine is named by `/etc/machine-id` (else
 * `/var/lib/dbus/machine-id`, else the boot id) and the host name;
 * `RESTORATION_MACHINE_ID` and `RESTORATION_HOSTNAME` override them (any
 * non-empty text without `/` or a newline).
 *
 * Thread safety: the table's functions are called by one engine, one call
 * at a time (as restoration_store.h says); rst_etcd_flush() may be called
 * from any thread.
 */
#ifndef RESTORATION_ETCD_H
#define RESTORATION_ETCD_H

#include <stddef.h>
#include <stdint.h>
#include "restoration_store.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RST_ETCD_VERSION_STRING "1.3.0"
#define RST_ETCD_OPTIONS_VERSION 1

/** How to reach the cluster and where the state lives in it. Strings are
 *  copied by rst_etcd_store(). */
typedef struct rst_etcd_options {
    uint32_t    version;            /**< RST_ETCD_OPTIONS_VERSION (1) */
    /** "http://127.0.0.1:2379,https://b:2379": tried in order; a request
     *  that cannot connect, or is answered "unavailable", goes to the next. */
    const char *endpoints;
    /** The keys' common prefix, e.g.
     *  "/restoration/v1/u/alice/a/org.example.Notes/i/default/". */
    const char *prefix;
    const char *user, *password;    /**< etcd authentication, or NULL */
    /** TLS: the CA that signed the cluster's certificates (checked, never
     *  skipped), and this client's certificate and key; or NULL. */
    const char *ca_file, *cert_file, *key_file;
    uint32_t    lease_ttl_s;        /**< the owner key's lease; 0: 10; at least 2 */
    uint32_t    timeout_ms;         /**< one request; 0: 2000 */
    /** 0: a live owner elsewhere makes acquire fail at once; else ask it to
     *  hand off and wait this long. */
    uint32_t    handoff_wait_ms;
    /** The local copy; NULL: $XDG_STATE_HOME/restoration/etcd/<hash of
     *  prefix> ($HOME/.local/state when XDG_STATE_HOME is unset). */
    const char *cache_dir;
    /** The largest archive, generation or conflict copy; 0: 8 MiB. A larger
     *  one is RST_ERR_LIMIT before anything is written anywhere. */
    size_t      max_archive_bytes;
} rst_etcd_options;

/** Every member 0 / NULL but the version. */
#define RST_ETCD_OPTIONS_INIT { .version = RST_ETCD_OPTIONS_VERSION }

/** Fills `o` as RST_ETCD_OPTIONS_INIT does (for C++ and bindings).
 *  @return RST_OK; RST_ERR_INVALID (NULL); RST_ERR_VERSION (`version`
 *          outside 1..RST_ETCD_OPTIONS_VERSION). */
RST_API rst_status rst_etcd_options_init(rst_etcd_options *o, uint32_t version);

/** Creates an etcd store. It checks its arguments only and sends nothing:
 *  the first request is `acquire` (or a `read`/`list` of a reader that
 *  never acquires).
 *  @param[out] ops a static version-2 table (no `map`).
 *  @param[out] ctx freed by the table's `destroy`.
 *  @return RST_OK; RST_ERR_INVALID (NULL, empty endpoints or prefix, an
 *          endpoint that is not http:// or https://, `lease_ttl_s` 1, a
 *          cache folder that cannot be made); RST_ERR_VERSION; RST_ERR_NOMEM. */
RST_API rst_status rst_etcd_store(const rst_etcd_options *o, const rst_store_ops **ops, void **ctx);

/** Waits up to `timeout_ms` until everything written so far is published
 *  (or known not to be).
 *  @param ctx a context rst_etcd_store() made.
 *  @return RST_OK: published; RST_ERR_UNAVAILABLE: not within the time (the
 *          writes are kept locally and published later); the publish's own
 *          failure otherwise (RST_ERR_FENCED, RST_ERR_LIMIT, RST_ERR_REJECTED,
 *          RST_ERR_IO, with etcd's words in rst_last_error()). */
RST_API rst_status rst_etcd_flush(void *ctx, uint32_t timeout_ms);

/** The sentence of this thread's last failing call into this library (the
 *  same text the store gives the engine with rst_store_set_error()), for a
 *  program that drives the table itself. "" before any failure; never NULL;
 *  thread-local, valid until this thread's next failing call. */
RST_API const char *rst_etcd_last_error(void);

#ifdef __cplusplus
}
#endif
#endif /* RESTORATION_ETCD_H */
