/* The pollable half of "When to save" (docs/LIFECYCLE.md): one epoll descriptor over a timerfd
 * (the next autosave, CLOCK_MONOTONIC) and an eventfd (signal saves), as
 * sd-event does. Readable exactly while the engine's dispatch has work:
 * the timer is re-armed (which clears its expirations) on every change of
 * the due time, and both are drained by the dispatch. Hidden (rlfd_*). */
#ifndef RESTORATION_LIFECYCLE_FDS_H
#define RESTORATION_LIFECYCLE_FDS_H

#include <stdint.h>

#define RLFD_HIDDEN __attribute__((visibility("hidden")))

/** Creates the three descriptors (close-on-exec, non-blocking).
 *  0, or an errno value (nothing left open). */
RLFD_HIDDEN int     rlfd_create(int *epoll_fd, int *timer_fd, int *event_fd);
/** Arms the timer at `due_ms` of CLOCK_MONOTONIC (<= now: readable at
 *  once); a negative value disarms it. Either clears pending expirations. */
RLFD_HIDDEN int     rlfd_arm(int timer_fd, int64_t due_ms);
/** Reads away the timer's expirations and the eventfd's count. */
RLFD_HIDDEN void    rlfd_drain(int timer_fd, int event_fd);
/** Adds one to the eventfd (wakes a poller). */
RLFD_HIDDEN void    rlfd_wake(int event_fd);
/** CLOCK_MONOTONIC in milliseconds. */
RLFD_HIDDEN int64_t rlfd_now_ms(void);
/** Waits until `fd` or `stop_fd` is readable; 1: fd, 0: stop, -1: error. */
RLFD_HIDDEN int     rlfd_wait(int fd, int stop_fd);
/** Blocks every signal in the calling thread (the autosave thread leaves
 *  signals to the host's threads). */
RLFD_HIDDEN void    rlfd_block_signals(void);

#endif
