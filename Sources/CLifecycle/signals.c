/* See include/lifecycle_signals.h. */
#define _GNU_SOURCE 1
#include "lifecycle_signals.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#define RSIG_MAX_CLIENTS 64
#define RSIG_MAX_SIGNAL 65

typedef struct rsig_client {
    atomic_int       in_use;
    atomic_int       event_fd;
    atomic_int       pending;      /* signal waiting for this client's save; 0: none */
    atomic_uint_fast64_t claimed;  /* bit (sig - 1) */
} rsig_client;

static rsig_client clients[RSIG_MAX_CLIENTS];
/* Per signal: installed by us, delivered once already, clients still saving. */
static atomic_int installed[RSIG_MAX_SIGNAL];
static atomic_int fired[RSIG_MAX_SIGNAL];
static atomic_int outstanding[RSIG_MAX_SIGNAL];
static struct sigaction previous[RSIG_MAX_SIGNAL];
/* Claims, releases and the restoration of dispositions (never the handler). */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

static void restore_and_raise(int sig) {
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
        restore_and_raise(sig);
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
        restore_and_raise(sig);
        errno = saved_errno;
        return;
    }
    for (int i = 0; i < RSIG_MAX_CLIENTS; i++) {
        if (atomic_load(&clients[i].in_use) && (atomic_load(&clients[i].claimed) & bit)) {
            atomic_store(&clients[i].pending, sig);
            uint64_t one = 1;
            ssize_t w;
            do { w = write(atomic_load(&clients[i].event_fd), &one, sizeof one); } while (w < 0 && errno == EINTR);
        }
    }
    errno = saved_errno;
}

int rsig_client_new(int event_fd) {
    pthread_mutex_lock(&table_lock);
    int id = -1;
    for (int i = 0; i < RSIG_MAX_CLIENTS; i++) {
        if (!atomic_load(&clients[i].in_use)) {
            atomic_store(&clients[i].event_fd, event_fd);
            atomic_store(&clients[i].pending, 0);
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
    int err = 0;
    if (!atomic_load(&installed[sig])) {
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

int rsig_take_pending(int id) {
    if (id < 0 || id >= RSIG_MAX_CLIENTS) return 0;
    return atomic_exchange(&clients[id].pending, 0);
}

int rsig_peek_pending(int id) {
    if (id < 0 || id >= RSIG_MAX_CLIENTS) return 0;
    return atomic_load(&clients[id].pending);
}

bool rsig_previous_is_default(int sig) {
    if (sig <= 0 || sig >= RSIG_MAX_SIGNAL) return false;
    pthread_mutex_lock(&table_lock);
    bool d = !(previous[sig].sa_flags & SA_SIGINFO) && previous[sig].sa_handler == SIG_DFL;
    pthread_mutex_unlock(&table_lock);
    return d;
}

void rsig_done(int id, int sig) {
    (void)id;
    if (sig <= 0 || sig >= RSIG_MAX_SIGNAL) return;
    pthread_mutex_lock(&table_lock);
    if (atomic_fetch_sub(&outstanding[sig], 1) == 1 && atomic_load(&installed[sig])) {
        /* The claim is spent: every client's bit for it goes. */
        uint64_t bit = (uint64_t)1 << (sig - 1);
        for (int i = 0; i < RSIG_MAX_CLIENTS; i++) atomic_fetch_and(&clients[i].claimed, ~bit);
        restore_and_raise(sig);
    }
    pthread_mutex_unlock(&table_lock);
}

void rsig_client_release(int id) {
    if (id < 0 || id >= RSIG_MAX_CLIENTS) return;
    int pending = atomic_exchange(&clients[id].pending, 0);
    if (pending) rsig_done(id, pending);
    pthread_mutex_lock(&table_lock);
    uint64_t mine = atomic_exchange(&clients[id].claimed, 0);
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
