/* reliability.c: reliability defects (docs/RELIABILITY.md) that need a process of their own.
 *
 *   reliability discard-race DIR   two processes save 150 times each while a
 *                                  third discards in a loop: every save succeeds
 *                                  (defect 5: discard ignored the lock)
 *   reliability paths DIR          a path that is not UTF-8 is refused by
 *                                  rst_read_archive_info as by rst_engine_create
 *                                  (defect 6: it opened the U+FFFD-named file)
 *   reliability stdio DIR          stdin/stdout/stderr closed and no descriptor
 *                                  free above 2: the temporary file opened on fd 0
 *                                  is removed and the error says so (defect 8)
 */
#include "check.h"
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

static void enc(void *inst, rst_coder *c) { CHECK_OK(rst_encode_string(c, "name", (const char *)inst)); }
static const rst_object_callbacks cbs = { enc, NULL, NULL, NULL };

static rst_engine *saver(const char *archive) {
    rst_engine *e = new_engine(archive);
    CHECK_OK(rst_register_object(e, "Root", NULL, NULL, &cbs, "root", NULL));
    return e;
}

#define SAVES 150

static int discard_race(const char *dir) {
    char *archive = xasprintf("%s/race.rst", dir);
    pid_t savers[2], discarder;
    fflush(stdout); fflush(stderr);
    for (int k = 0; k < 2; k++) {
        savers[k] = fork();
        CHECK(savers[k] >= 0);
        if (savers[k] == 0) {
            rst_engine *e = saver(archive);
            int failed = 0;
            for (int i = 0; i < SAVES; i++) {
                rst_status s = rst_save(e);
                if (s != RST_OK) {
                    if (failed < 3) fprintf(stderr, "reliability: saver %d, save %d: %s: %s\n", k, i, rst_status_name(s), rst_last_error());
                    failed++;
                }
            }
            rst_engine_destroy(e);
            _exit(failed > 100 ? 100 : failed);
        }
    }
    discarder = fork();
    CHECK(discarder >= 0);
    if (discarder == 0) {
        rst_engine *e = saver(archive);
        char *stop = xasprintf("%s/stop", dir);
        int failed = 0;
        for (int i = 0; i < 100000 && !file_exists(stop); i++) {
            rst_status s = rst_discard(e);
            if (s != RST_OK) {
                if (failed < 3) fprintf(stderr, "reliability: discard %d: %s: %s\n", i, rst_status_name(s), rst_last_error());
                failed++;
            }
        }
        rst_engine_destroy(e);
        _exit(failed > 100 ? 100 : failed);
    }
    int failed_saves = 0;
    for (int k = 0; k < 2; k++) {
        int st = 0;
        CHECK(waitpid(savers[k], &st, 0) == savers[k]);
        CHECK_MSG(WIFEXITED(st), "saver %d died (status 0x%x)", k, st);
        failed_saves += WEXITSTATUS(st);
    }
    char *stop = xasprintf("%s/stop", dir);
    write_file(stop, "", 0);
    int st = 0;
    CHECK(waitpid(discarder, &st, 0) == discarder);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the discarder failed %d times (status 0x%x)", WEXITSTATUS(st), st);
    CHECK_MSG(failed_saves == 0, "%d of %d saves failed while another process discarded", failed_saves, 2 * SAVES);
    CHECK_EQ(count_entries(dir, ".tmp-"), 0);
    printf("reliability: discard-race: %d saves, all succeeded\n", 2 * SAVES);
    free(archive); free(stop);
    return 0;
}

static int paths(const char *dir) {
    /* a valid archive under the name U+FFFD.rst */
    char *replacement = xasprintf("%s/\xef\xbf\xbd.rst", dir);
    rst_engine *e = saver(replacement);
    CHECK_OK(rst_save(e));
    rst_engine_destroy(e);
    char *bad = xasprintf("%s/\xff.rst", dir);
    rst_archive_info *info = NULL;
    CHECK_ERR(rst_read_archive_info(bad, &info), RST_ERR_INVALID, "path is not valid UTF-8");
    CHECK(info == NULL);
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.archive_path = bad;
    rst_engine *e2 = NULL;
    CHECK_ERR(rst_engine_create(&o, &e2), RST_ERR_INVALID, "archive_path is not valid UTF-8");
    CHECK(e2 == NULL);
    /* the UTF-8 name itself works */
    CHECK_OK(rst_read_archive_info(replacement, &info));
    rst_free(info);
    free(replacement); free(bad);
    return 0;
}

static int stdio_closed(const char *dir) {
    char *archive = xasprintf("%s/stdio.rst", dir);
    rst_engine *e = saver(archive);
    CHECK_OK(rst_save(e)); /* the lock file exists */
    /* A change, so that the next save writes (unchanged state is not written again). */
    CHECK_OK(rst_register_object(e, "Other", NULL, NULL, &cbs, "other", NULL));
    enum { LIMIT = 64 };
    int devnull = open("/dev/null", O_RDWR);
    CHECK(devnull >= 0);
    /* Every descriptor 3..LIMIT-1 in use but one (`hole`), which the lock file will take. */
    int report = -1, report_out = -1, hole = -1;
    for (int fd = 3; fd < LIMIT; fd++) {
        if (fcntl(fd, F_GETFD) != -1) continue;
        CHECK(dup2(devnull, fd) == fd);
        hole = fd;
    }
    CHECK(hole > 3);
    for (int fd = hole - 1; fd >= 3 && report_out < 0; fd--) {
        if (fd == devnull) continue;
        if (report < 0) { CHECK(dup2(2, fd) == fd); report = fd; }
        else { CHECK(dup2(1, fd) == fd); report_out = fd; }
    }
    CHECK(report > 0 && report_out > 0);
    CHECK(close(hole) == 0);
    struct rlimit old;
    CHECK(getrlimit(RLIMIT_NOFILE, &old) == 0);
    struct rlimit low = { LIMIT, old.rlim_max };
    fflush(stdout); fflush(stderr);
    close(0); close(1); close(2);
    int lr = setrlimit(RLIMIT_NOFILE, &low);
    rst_status s = rst_save(e);
    char *msg = strdup(rst_last_error());
    int temps = count_entries(dir, ".tmp-");
    setrlimit(RLIMIT_NOFILE, &old);
    /* stdio back: 0 from /dev/null, 1 and 2 to the saved stderr */
    int fd0 = open("/dev/null", O_RDONLY);
    int fd1 = dup(report_out), fd2 = dup(report);
    if (fd0 != 0 || fd1 != 1 || fd2 != 2) { dprintf(report, "reliability: cannot reopen stdio (%d %d %d)\n", fd0, fd1, fd2); _exit(1); }
    CHECK_EQ(lr, 0);
    CHECK_MSG(s == RST_ERR_IO, "rst_save with no descriptor above 2 returned %s: %s", rst_status_name(s), msg);
    CHECK_MSG(strstr(msg, "cannot be moved above 2") != NULL && strstr(msg, "(now removed)") != NULL && strstr(msg, "errno") != NULL,
              "the error does not say the temporary was created on fd 0-2, could not be moved, and was removed: %s", msg);
    CHECK_MSG(temps == 0, "%d temporary file(s) left after the failed move above fd 2: %s", temps, msg);
    /* and the engine saves again */
    CHECK_OK(rst_save(e));
    CHECK_EQ(count_entries(dir, ".tmp-"), 0);
    rst_engine_destroy(e);
    free(msg); free(archive);
    return 0;
}

int main(int argc, char **argv) {
    check_prog = "reliability";
    if (argc < 3) { fprintf(stderr, "usage: reliability discard-race|paths|stdio DIR\n"); return 2; }
    int r = 2;
    if (strcmp(argv[1], "discard-race") == 0) r = discard_race(argv[2]);
    else if (strcmp(argv[1], "paths") == 0) r = paths(argv[2]);
    else if (strcmp(argv[1], "stdio") == 0) r = stdio_closed(argv[2]);
    else { fprintf(stderr, "unknown command %s\n", argv[1]); return 2; }
    if (r != 0) return r;
    DONE();
}
