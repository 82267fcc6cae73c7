/* The signal half of rst_save_on_signals (docs/LIFECYCLE.md), in C because a
 * signal handler must be async-signal-safe: it only stores to lock-free
 * atomics and write(2)s to eventfds. Everything here is hidden inside
 * librestoration (it exports rst_* only); the names start with rsig_.
 *
 * A *client* is one engine: its eventfd (written by the handler) and the
 * signals it claimed. On the first delivery of a claimed signal the handler
 * marks every client that claimed it and wakes each one; each client's
 * dispatcher saves and calls rsig_done(); the last one restores the
 * signal's previous disposition and re-raises it (kill(getpid(), sig)), so
 * the process ends as it would have. The re-raise happens with no lock of
 * this file held: a previous handler that exit()s runs inside that kill(),
 * and its atexit may flush and destroy engines.
 *
 * A claimed signal always ends the program: a watchdog thread (one per
 * process, started by the first claim, every signal blocked in it) wakes on
 * a semaphore the handler posts and settles, at each client's deadline, the
 * saves not done by then, so the signal is re-raised even when no dispatch
 * runs (the host blocked in read(), waitpid(), a prompt). A second delivery
 * of the same signal while the saves run does not wait for them: the
 * previous disposition is restored and the signal re-raised at once
 * (Ctrl-C twice). */
#ifndef RESTORATION_LIFECYCLE_SIGNALS_H
#define RESTORATION_LIFECYCLE_SIGNALS_H

#include <stdbool.h>
#include <stdint.h>

#define RSIG_HIDDEN __attribute__((visibility("hidden")))

/** A new client waking `event_fd`, whose saves may take `deadline_ms`
 *  (0: 1000) after a delivery before the signal goes on without them;
 *  returns its id (>= 0), or -1 when all RSIG_MAX_CLIENTS slots are taken. */
RSIG_HIDDEN int  rsig_client_new(int event_fd, uint32_t deadline_ms);
/** Claims `sig` for client `id`: installs the handler (SA_RESTART) the
 *  first time any client claims it, remembering the previous disposition;
 *  starts the watchdog thread once per process. 0, or an errno value. */
RSIG_HIDDEN int  rsig_claim(int id, int sig);
/** The signal waiting for client `id` to save (and clears it); 0: none. */
RSIG_HIDDEN int  rsig_take_pending(int id);
/** The signal waiting for client `id` (left in place); 0: none. */
RSIG_HIDDEN int  rsig_peek_pending(int id);
/** True when the previous disposition of `sig` is SIG_DFL (the re-raise
 *  ends the process). */
RSIG_HIDDEN bool rsig_previous_is_default(int sig);
/** True while client `id` still owes its save for `sig` (false once its
 *  deadline passed: the signal went on without it). */
RSIG_HIDDEN bool rsig_still_owed(int id, int sig);
/** Client `id` has finished its save for `sig`; the last one restores the
 *  previous disposition and re-raises the signal (after its deadline, or
 *  twice: nothing). */
RSIG_HIDDEN void rsig_done(int id, int sig);
/** Releases client `id`: a signal it had not finished yet counts as done
 *  (so the process still ends), and a signal no other client holds gets its
 *  previous disposition back. */
RSIG_HIDDEN void rsig_client_release(int id);

#endif
