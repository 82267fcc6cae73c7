/* See include/lifecycle_fds.h. */
#define _GNU_SOURCE 1
#include "lifecycle_fds.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

int rlfd_create(int *epoll_fd, int *timer_fd, int *event_fd) {
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) return errno;
    int tf = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    if (tf < 0) { int e = errno; close(ep); return e; }
    int ev = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (ev < 0) { int e = errno; close(ep); close(tf); return e; }
    struct epoll_event a = { .events = EPOLLIN, .data = { .fd = tf } };
    struct epoll_event b = { .events = EPOLLIN, .data = { .fd = ev } };
    if (epoll_ctl(ep, EPOLL_CTL_ADD, tf, &a) != 0 || epoll_ctl(ep, EPOLL_CTL_ADD, ev, &b) != 0) {
        int e = errno; close(ep); close(tf); close(ev); return e;
    }
    *epoll_fd = ep; *timer_fd = tf; *event_fd = ev;
    return 0;
}

int rlfd_arm(int timer_fd, int64_t due_ms) {
    struct itimerspec its = { 0 };
    if (due_ms >= 0) {
        if (due_ms == 0) due_ms = 1; /* 0 would disarm */
        its.it_value.tv_sec = due_ms / 1000;
        its.it_value.tv_nsec = (long)(due_ms % 1000) * 1000000L;
    }
    return timerfd_settime(timer_fd, TFD_TIMER_ABSTIME, &its, NULL) == 0 ? 0 : errno;
}

void rlfd_drain(int timer_fd, int event_fd) {
    uint64_t n;
    while (read(timer_fd, &n, sizeof n) < 0 && errno == EINTR) {}
    while (read(event_fd, &n, sizeof n) < 0 && errno == EINTR) {}
}

void rlfd_wake(int event_fd) {
    uint64_t one = 1;
    while (write(event_fd, &one, sizeof one) < 0 && errno == EINTR) {}
}

int64_t rlfd_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int rlfd_wait(int fd, int stop_fd) {
    struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = stop_fd, .events = POLLIN } };
    for (;;) {
        int r = poll(p, 2, -1);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -1;
        if (p[1].revents) return 0;
        if (p[0].revents) return 1;
    }
}

void rlfd_block_signals(void) {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
}
