/* sqlite_store.h: a Restoration store that keeps its slots in an SQLite
 * database — the pattern for an app that already keeps its state in one.
 *
 * One table holds every slot of every archive kept in the database:
 *
 *     CREATE TABLE restoration_slots (
 *         archive TEXT    NOT NULL,   -- the name given to sqlite_store_open
 *         kind    INTEGER NOT NULL,   -- an rst_slot
 *         idx     INTEGER NOT NULL,   -- the slot's index
 *         data    BLOB    NOT NULL,
 *         PRIMARY KEY (archive, kind, idx))
 *
 * Every write, move, link and remove is one transaction, and the database
 * runs with `PRAGMA synchronous = FULL`, so a committed write survives a
 * crash or a power loss and an interrupted one leaves the old bytes. `lock`
 * is an flock(2) on `<database>.lock`, exclusive across threads (each
 * store has its own open file description) and processes (RST_STORE_SHARED).
 * `map` is not offered: a death during a restore sets the archive aside
 * instead of quarantining one record (see docs/STORAGE.md).
 */
#ifndef SQLITE_STORE_H
#define SQLITE_STORE_H

#include <restoration_store.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Opens (creating when needed) the database at `db_path` and gives the
 *  store for the archive called `name` inside it. Pass both to
 *  rst_engine_create_with_store(), which owns them from then on (its
 *  `destroy` closes the database).
 *  @param err, errcap where a failure's sentence goes (may be NULL/0).
 *  @return RST_OK; RST_ERR_INVALID (NULL or empty arguments); RST_ERR_IO
 *          (the database cannot be opened or set up); RST_ERR_NOMEM. */
rst_status sqlite_store_open(const char *db_path, const char *name,
                             const rst_store_ops **ops, void **ctx,
                             char *err, size_t errcap);

#ifdef __cplusplus
}
#endif
#endif
