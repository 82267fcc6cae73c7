/* See include/lifecycle_signals.h. */
#define _GNU_SOURCE 1
#include "lifecycle_signals.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RSIG_MAX_CLIENTS 64
#define RSIG_MAX_SIGNAL 65

typedef struct rsig_client {
    atomic_int       in_use;
    atomic_int       event_fd;
    atomic_int       deadline_ms;  /* how long a delivered signal waits for this client */
    atomic_uint_fast64_t pending;  /* bit (sig - 1): waiting for this client's dispatch */
    atomic_uint_fast64_t owed;     /* bit (sig - 1): this client's save not settled yet */
    atomic_uint_fast64_t claimed;  /* bit (sig - 1) */
} rsig_client;

static rsig_client clients[RSIG_MAX_CLIENTS];
/* Per signal: installed by us, delivered once already, clients still owing
 * their save, when it was delivered (CLOCK_MONOTONIC ms). */
static atomic_int installed[RSIG_MAX_SIGNAL];
static atomic_int fired[RSIG_MAX_SIGNAL];
static atomic_int outstanding[RSIG_MAX_SIGNAL];
static _Atomic int64_t fired_at[RSIG_MAX_SIGNAL];
static struct sigaction previous[RSIG_MAX_SIGNAL];
/* Claims, releases and the restoration of dispositions (never the handler).
 * Never held while a signal is raised: a previous handler that exit()s runs
 * inside that kill(), and its atexit may destroy an engine (which takes it). */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

/* The watchdog: one library thread per process, started by the first claim,
 * all signals blocked. The handler posts `watch` (sem_post is
 * async-signal-safe); the watchdog re-raises a signal whose clients have not
 * settled their saves within their deadlines. */
static sem_t watch;
static int watchdog_running;   /* under table_lock */
static pid_t watchdog_pid;     /* the process that started it (a forked child starts its own) */

static int64_t mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* From the handler only: no lock (async-signal-safe calls only). */
static void restore_and_raise_in_handler(int sig) {
    sigaction(sig, &previous[sig], NULL);
    atomic_store(&installed[sig], 0);
    /* Process-directed: any thread that does not block it takes it. */
    kill(getpid(), sig);
}

static void handler(int sig) {
    int saved_errno = errno;
    if (sig <= 0 || sig >= RSIG_MAX_SIGNAL) { errno = saved_errno; return; }
    if (atomic_exchange(&fired[sig], 1) != 0) {
        /* Delivered again while the saves run: end now. */
        restore_and_raise_in_handler(sig);
        errno = saved_errno;
        return;
    }
    uint64_t bit = (uint64_t)1 << (sig - 1);
    int n = 0;
    for (int i = 0; i < RSIG_MAX_CLIENTS; i++) {
        if (atomic_load(&clients[i].in_use) && (atomic_load(&clients[i].claimed) & bit)) n++;
    }
    atomic_store(&outstanding[sig], n);
    if (n == 0) {
        restore_and_raise_in_handler(sig);
        errno = saved_errno;
        return;
    }
    atomic_store(&fired_at[sig], mono_ms());   /* before any owed bit: the watchdog reads it after */
    for (int i = 0; i < RSIG_MAX_CLIENTS; i++) {
        if (atomic_load(&clients[i].in_use) && (atomic_load(&clients[i].claimed) & bit)) {
            atomic_fetch_or(&clients[i].owed, bit);
            atomic_fetch_or(&clients[i].pending, bit);
            uint64_t one = 1;
            ssize_t w;
            do { w = write(atomic_load(&clients[i].event_fd), &one, sizeof one); } while (w < 0 && errno == EINTR);
        }
    }
    sem_post(&watch);
    errno = saved_errno;
}

/* Client `id` no longer owes its save for `sig` (saved, released, or past its
 * deadline: `forced`). The last one gives the signal its previous
 * disposition back and re-raises it — after letting go of the lock. */
static void settle(int id, int sig, bool forced) {
    uint64_t bit = (uint64_t)1 << (sig - 1);
    if (!(atomic_fetch_and(&clients[id].owed, ~bit) & bit)) return;   /* settled already */
    if (forced) atomic_fetch_and(&clients[id].pending, ~bit);
    if (atomic_fetch_sub(&outstanding[sig], 1) != 1) return;
    pthread_mutex_lock(&table_lock);
    bool raise_it = atomic_load(&installed[sig]) != 0;
    if (raise_it) {
        /* The claim is spent: every client's bit for it goes. */
        for (int i = 0; i < RSIG_MAX_CLIENTS; i++) atomic_fetch_and(&clients[i].claimed, ~bit);
        sigaction(sig, &previous[sig], NULL);
        atomic_store(&installed[sig], 0);
    }
    pthread_mutex_unlock(&table_lock);
    if (raise_it) kill(getpid(), sig);   /* no lock of ours held */
}

static void *watchdog_main(void *arg) {
    (void)arg;
    for (;;) {
        int64_t now = mono_ms(), next = -1;
        for (int i = 0; i < RSIG_MAX_CLIENTS; i++) {
            if (!atomic_load(&clients[i].in_use)) continue;
            uint64_t owed = atomic_load(&clients[i].owed);
            for (int sig = 1; owed != 0 && sig < RSIG_MAX_SIGNAL; sig++) {
                uint64_t bit = (uint64_t)1 << (sig - 1);
                if (!(owed & bit)) continue;
                owed &= ~bit;
                int64_t due = atomic_load(&fired_at[sig]) + atomic_load(&clients[i].deadline_ms);
                if (due <= now) settle(i, sig, true);
                else if (next < 0 || due < next) next = due;
            }
        }
        int r;
        if (next < 0) {
            do { r = sem_wait(&watch); } while (r != 0 && errno == EINTR);
        } else {
            struct timespec ts = { .tv_sec = next / 1000, .tv_nsec = (long)(next % 1000) * 1000000 };
            do { r = sem_clockwait(&watch, CLOCK_MONOTONIC, &ts); } while (r != 0 && errno == EINTR);
        }
    }
    return NULL;
}

/* Starts the watchdog once per process (table_lock held). 0 or an errno. */
static int start_watchdog_locked(void) {
    if (watchdog_running && watchdog_pid == getpid()) return 0;
    if (sem_init(&watch, 0, 0) != 0) return errno;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);   /* the thread inherits it: it never takes a signal */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    int err = pthread_create(&t, &attr, watchdog_main, NULL);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (err != 0) return err;
    watchdog_running = 1;
    watchdog_pid = getpid();
    return 0;
}

int rsig_client_new(int event_fd, uint32_t deadline_ms) {
    pthread_mutex_lock(&table_lock);
    int id = -1;
    for (int i = 0; i < RSIG_MAX_CLIENTS; i++) {
        if (!atomic_load(&clients[i].in_use)) {
            atomic_store(&clients[i].event_fd, event_fd);
            atomic_store(&clients[i].deadline_ms, deadline_ms == 0 ? 1000 : (int)(deadline_ms > INT32_MAX ? INT32_MAX : deadline_ms));
            atomic_store(&clients[i].pending, 0);
            atomic_store(&clients[i].owed, 0);
            atomic_store(&clients[i].claimed, 0);
            atomic_store(&clients[i].in_use, 1);
            id = i;
            break;
        }
    }
    pthread_mutex_unlock(&table_lock);
    return id;
}

int rsig_claim(int id, int sig) {
    if (id < 0 || id >= RSIG_MAX_CLIENTS || sig <= 0 || sig >= RSIG_MAX_SIGNAL) return EINVAL;
    pthread_mutex_lock(&table_lock);
    int err = start_watchdog_locked();
    if (err == 0 && !atomic_load(&installed[sig])) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = handler;
        sa.sa_flags = SA_RESTART;
        sigemptyset(&sa.sa_mask);
        atomic_store(&fired[sig], 0);
        if (sigaction(sig, &sa, &previous[sig]) != 0) {
            err = errno;
        } else {
            atomic_store(&installed[sig], 1);
        }
    }
    if (err == 0) atomic_fetch_or(&clients[id].claimed, (uint64_t)1 << (sig - 1));
    pthread_mutex_unlock(&table_lock);
    return err;
}

static int lowest_signal(uint64_t bits) {
    return bits == 0 ? 0 : __builtin_ctzll(bits) + 1;
}

int rsig_take_pending(int id) {
    if (id < 0 || id >= RSIG_MAX_CLIENTS) return 0;
    for (;;) {
        uint64_t p = atomic_load(&clients[id].pending);
        int sig = lowest_signal(p);
        if (sig == 0) return 0;
        uint64_t bit = (uint64_t)1 << (sig - 1);
        if (atomic_fetch_and(&clients[id].pending, ~bit) & bit) return sig;
    }
}

int rsig_peek_pending(int id) {
    if (id < 0 || id >= RSIG_MAX_CLIENTS) return 0;
    return lowest_signal(atomic_load(&clients[id].pending));
}

bool rsig_previous_is_default(int sig) {
    if (sig <= 0 || sig >= RSIG_MAX_SIGNAL) return false;
    pthread_mutex_lock(&table_lock);
    bool d = !(previous[sig].sa_flags & SA_SIGINFO) && previous[sig].sa_handler == SIG_DFL;
    pthread_mutex_unlock(&table_lock);
    return d;
}

bool rsig_still_owed(int id, int sig) {
    if (id < 0 || id >= RSIG_MAX_CLIENTS || sig <= 0 || sig >= RSIG_MAX_SIGNAL) return false;
    return (atomic_load(&clients[id].owed) & ((uint64_t)1 << (sig - 1))) != 0;
}

void rsig_done(int id, int sig) {
    if (id < 0 || id >= RSIG_MAX_CLIENTS || sig <= 0 || sig >= RSIG_MAX_SIGNAL) return;
    settle(id, sig, false);
}

void rsig_client_release(int id) {
    if (id < 0 || id >= RSIG_MAX_CLIENTS) return;
    /* Signals it had not settled count as settled (so the process still ends). */
    uint64_t owed = atomic_load(&clients[id].owed);
    for (int sig = 1; owed != 0 && sig < RSIG_MAX_SIGNAL; sig++) {
        uint64_t bit = (uint64_t)1 << (sig - 1);
        if (owed & bit) { owed &= ~bit; settle(id, sig, true); }
    }
    pthread_mutex_lock(&table_lock);
    uint64_t mine = atomic_exchange(&clients[id].claimed, 0);
    atomic_store(&clients[id].pending, 0);
    atomic_store(&clients[id].in_use, 0);
    for (int sig = 1; sig < RSIG_MAX_SIGNAL; sig++) {
        uint64_t bit = (uint64_t)1 << (sig - 1);
        if (!(mine & bit) || !atomic_load(&installed[sig]) || atomic_load(&fired[sig])) continue;
        int others = 0;
        for (int i = 0; i < RSIG_MAX_CLIENTS; i++) {
            if (atomic_load(&clients[i].in_use) && (atomic_load(&clients[i].claimed) & bit)) others++;
        }
        if (others == 0) {
            sigaction(sig, &previous[sig], NULL);
            atomic_store(&installed[sig], 0);
        }
    }
    pthread_mutex_unlock(&table_lock);
}
