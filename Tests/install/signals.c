/* signals: a C host must keep the signal dispositions it had, and its own
 * crashes must look as they would without the library.
 *
 *   signals ARCHIVE check   prints "ok" when no disposition changed across
 *                           library load, create, save, restore and destroy
 *   signals ARCHIVE abort   uses the library, then abort()s: the process must
 *                           end by SIGABRT with nothing written by the library
 *
 * Every failing check prints which one. */
#include <restoration.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; \
    fprintf(stderr, "signals.c:%d: FAILED: %s: ", __LINE__, #cond); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

static const int watched[] = { SIGSEGV, SIGABRT, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS,
                               SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD, SIGUSR1 };
#define NWATCHED (sizeof watched / sizeof watched[0])

static void host_crash_reporter(int sig) { (void)sig; }

static void snapshot(struct sigaction *out) {
    for (size_t i = 0; i < NWATCHED; i++) sigaction(watched[i], NULL, &out[i]);
}

static void compare(const struct sigaction *before, const char *when) {
    struct sigaction now[NWATCHED];
    snapshot(now);
    for (size_t i = 0; i < NWATCHED; i++)
        CHECK(now[i].sa_handler == before[i].sa_handler && now[i].sa_flags == before[i].sa_flags,
              "%s changed the disposition of signal %d (%s)", when, watched[i], strsignal(watched[i]));
}

static void use_the_library(const char *archive) {
    rst_engine_options opts = RST_ENGINE_OPTIONS_INIT;
    opts.archive_path = archive;
    rst_engine *e = NULL;
    rst_status s = rst_engine_create(&opts, &e);
    CHECK(s == RST_OK, "rst_engine_create: %s", rst_last_error());
    if (s != RST_OK) return;
    CHECK(rst_register_object(e, "Root", NULL, NULL, NULL, NULL, NULL) == RST_OK, "register: %s", rst_last_error());
    CHECK(rst_save(e) == RST_OK, "rst_save: %s", rst_last_error());
    CHECK(rst_restore(e) == RST_OK, "rst_restore: %s", rst_last_error());
    rst_engine_destroy(e);
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: signals ARCHIVE check|abort\n"); return 2; }
    if (strcmp(argv[2], "abort") == 0) {
        use_the_library(argv[1]);
        if (failures) return 1;
        abort();
    }
    /* The library is loaded (and its initializers ran) before main: the
     * crash signals must still be at their defaults here. */
    struct sigaction start[NWATCHED];
    snapshot(start);
    for (size_t i = 0; i < 7; i++)
        CHECK(start[i].sa_handler == SIG_DFL, "signal %d (%s) has a handler at main(): the library installed it at load",
              watched[i], strsignal(watched[i]));
    /* A host with its own crash reporter keeps it. */
    struct sigaction mine;
    memset(&mine, 0, sizeof mine);
    mine.sa_handler = host_crash_reporter;
    sigemptyset(&mine.sa_mask);
    sigaction(SIGSEGV, &mine, NULL);
    sigaction(SIGABRT, &mine, NULL);
    struct sigaction before[NWATCHED];
    snapshot(before);
    use_the_library(argv[1]);
    compare(before, "create, save, restore and destroy");
    if (failures) { fprintf(stderr, "signals: %d check(s) failed\n", failures); return 1; }
    printf("ok\n");
    return 0;
}
