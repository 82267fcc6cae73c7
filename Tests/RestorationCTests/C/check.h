/* check.h: a tiny assertion kit for the C ABI test programs.
 *
 * CHECK(cond)            fails (prints file:line and exits 1) when cond is false
 * CHECK_EQ(a, b)         integers
 * CHECK_STR(a, b)        C strings (NULL-safe)
 * CHECK_ST(call, status) an rst_* call returns `status`; prints rst_last_error() otherwise
 * CHECK_OK(call)         CHECK_ST(call, RST_OK)
 * CHECK_ERR(call, status, fragment)
 *                        the call returns `status` and rst_last_error() contains
 *                        `fragment` (NULL: only non-empty)
 * DONE()                 prints "ok N checks" and returns 0 from main
 *
 * Every program includes this once; everything is static. */
#ifndef RST_TEST_CHECK_H
#define RST_TEST_CHECK_H

#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#include "restoration.h"

/* every helper is static; a program need not use them all */
#define CHECK_HELPER static __attribute__((unused))

static _Atomic long check_count = 0; /* atomic: threads.c checks from several threads */
static const char *check_prog = "test";

#define FAIL_AT(file, line, ...) do {                                   \
        fprintf(stderr, "%s:%d: FAILED: ", file, line);                  \
        fprintf(stderr, __VA_ARGS__);                                    \
        fprintf(stderr, "\n");                                           \
        fflush(stdout); fflush(stderr);                                  \
        _exit(1);                                                        \
    } while (0)

#define CHECK(cond) do {                                                \
        check_count++;                                                   \
        if (!(cond)) FAIL_AT(__FILE__, __LINE__, "%s (last error: \"%s\")", #cond, rst_last_error()); \
    } while (0)

#define CHECK_MSG(cond, ...) do {                                       \
        check_count++;                                                   \
        if (!(cond)) FAIL_AT(__FILE__, __LINE__, __VA_ARGS__);           \
    } while (0)

#define CHECK_EQ(a, b) do {                                             \
        long long check_a_ = (long long)(a), check_b_ = (long long)(b); \
        check_count++;                                                   \
        if (check_a_ != check_b_)                                        \
            FAIL_AT(__FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b, check_a_, check_b_); \
    } while (0)

#define CHECK_STR(a, b) do {                                            \
        const char *check_a_ = (a), *check_b_ = (b);                     \
        check_count++;                                                   \
        if (check_a_ == NULL || check_b_ == NULL || strcmp(check_a_, check_b_) != 0) \
            FAIL_AT(__FILE__, __LINE__, "%s == %s: \"%s\" != \"%s\"", #a, #b, \
                    check_a_ ? check_a_ : "(null)", check_b_ ? check_b_ : "(null)"); \
    } while (0)

#define CHECK_ST(call, status) do {                                     \
        rst_status check_s_ = (call);                                    \
        check_count++;                                                   \
        if (check_s_ != (status))                                        \
            FAIL_AT(__FILE__, __LINE__, "%s returned %s, expected %s (last error: \"%s\")", #call, \
                    rst_status_name(check_s_), rst_status_name(status), rst_last_error()); \
    } while (0)

#define CHECK_OK(call) CHECK_ST(call, RST_OK)

/* The status, and a non-empty message containing each fragment (NULL ends the list). */
#define CHECK_ERR(call, status, ...) do {                               \
        CHECK_ST(call, status);                                          \
        check_message(__FILE__, __LINE__, #call, __VA_ARGS__, (const char *)NULL); \
    } while (0)

/* rst_last_error() is non-empty and contains each fragment. */
#define CHECK_LAST_ERROR(...) check_message(__FILE__, __LINE__, "rst_last_error()", __VA_ARGS__, (const char *)NULL)

CHECK_HELPER void check_message(const char *file, int line, const char *what, ...) {
    const char *msg = rst_last_error();
    check_count++;
    if (msg == NULL) FAIL_AT(file, line, "%s: rst_last_error() is NULL", what);
    if (msg[0] == '\0') FAIL_AT(file, line, "%s: rst_last_error() is empty", what);
    va_list ap;
    va_start(ap, what);
    const char *frag;
    while ((frag = va_arg(ap, const char *)) != NULL) {
        if (strstr(msg, frag) == NULL)
            FAIL_AT(file, line, "%s: rst_last_error() \"%s\" does not mention \"%s\"", what, msg, frag);
    }
    va_end(ap);
}

#define DONE() do {                                                     \
        printf("%s: ok %ld checks\n", check_prog, (long)check_count);         \
        fflush(stdout);                                                  \
        return 0;                                                        \
    } while (0)

/* ---- small helpers ---- */

CHECK_HELPER char *xasprintf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0) { perror("vasprintf"); _exit(2); }
    va_end(ap);
    return s;
}

/* Waits for a child, through EINTR. */
CHECK_HELPER void reap_child(pid_t pid, int *status) {
    while (waitpid(pid, status, 0) < 0 && errno == EINTR) {}
}

/* Reads a whole file; NULL (and errno) when it cannot. */
CHECK_HELPER unsigned char *read_file(const char *path, size_t *len) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0) { close(fd); return NULL; }
    size_t n = (size_t)st.st_size;
    unsigned char *buf = malloc(n ? n : 1);
    size_t off = 0;
    while (off < n) {
        ssize_t r = read(fd, buf + off, n - off);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) { free(buf); close(fd); return NULL; }
        off += (size_t)r;
    }
    close(fd);
    *len = n;
    return buf;
}

CHECK_HELPER void write_file(const char *path, const void *p, size_t n) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) { perror(path); _exit(2); }
    size_t off = 0;
    while (off < n) {
        ssize_t w = write(fd, (const char *)p + off, n - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) { perror(path); _exit(2); }
        off += (size_t)w;
    }
    close(fd);
}

CHECK_HELPER int file_exists(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0;
}

/* Number of entries of `dir` whose names contain `infix` (NULL: all but . and ..). */
CHECK_HELPER int count_entries(const char *dir, const char *infix) {
    DIR *d = opendir(dir);
    if (d == NULL) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (infix == NULL || strstr(e->d_name, infix) != NULL) n++;
    }
    closedir(d);
    return n;
}

/* The first entry of `dir` whose name contains `infix`, as a full path (malloc'd), or NULL. */
CHECK_HELPER char *find_entry(const char *dir, const char *infix) {
    DIR *d = opendir(dir);
    if (d == NULL) return NULL;
    char *out = NULL;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strstr(e->d_name, infix) != NULL) { out = xasprintf("%s/%s", dir, e->d_name); break; }
    }
    closedir(d);
    return out;
}

CHECK_HELPER int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* An engine for `archive` (NULL: buffers only) with otherwise default options. */
CHECK_HELPER rst_engine *new_engine(const char *archive) {
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.archive_path = archive;
    rst_engine *e = NULL;
    rst_status s = rst_engine_create(&o, &e);
    if (s != RST_OK || e == NULL) FAIL_AT(__FILE__, __LINE__, "rst_engine_create: %s: %s", rst_status_name(s), rst_last_error());
    return e;
}

/* Collects log lines (an rst_engine_options.log callback); ctx is ignored. */
CHECK_HELPER char log_text[65536];
CHECK_HELPER void collect_log(rst_engine *e, int level, const char *message, void *ctx) {
    (void)e; (void)ctx;
    size_t used = strlen(log_text);
    snprintf(log_text + used, sizeof log_text - used, "[%d] %s\n", level, message);
}

#endif
