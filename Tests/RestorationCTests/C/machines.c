/* machines.c: sessions name their machine. Two "machines" on one host
 * (RESTORATION_MACHINE_ID / RESTORATION_HOSTNAME, read once per process):
 * a session recorded on another machine is not judged by its pid — even a
 * live process of this boot — but reads RECOVER with a WARNING naming that
 * machine; an invalid override is ignored with one WARNING.
 *
 *   machines DIR
 */
#include "check.h"
#include <signal.h>

static void enc(void *inst, rst_coder *c) { CHECK_OK(rst_encode_string(c, "v", (const char *)inst)); }
static void dec(void *inst, rst_coder *c) { (void)inst; (void)c; }
static const rst_object_callbacks cbs = { enc, dec, NULL, NULL };

static rst_engine *engine(const char *archive) {
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.archive_path = archive;
    o.log = collect_log;
    rst_engine *e = NULL;
    CHECK_OK(rst_engine_create(&o, &e));
    CHECK_OK(rst_register_object(e, "Doc", NULL, NULL, &cbs, "text", NULL));
    return e;
}

int main(int argc, char **argv) {
    check_prog = "machines";
    if (argc < 2) { fprintf(stderr, "usage: machines DIR\n"); return 2; }
    char *archive = xasprintf("%s/state.rst", argv[1]);
    char *session = xasprintf("%s.session", archive);
    if (argc > 2 && strcmp(argv[2], "invalid") == 0) {
        rst_engine *x = engine(archive);
        log_text[0] = 0;
        CHECK_OK(rst_save(x));
        CHECK_MSG(strstr(log_text, "RESTORATION_MACHINE_ID is ignored") != NULL, "no WARNING for an invalid machine id:\n%s", log_text);
        rst_engine_destroy(x);
        DONE();
    }
    int ready[2];
    CHECK(pipe(ready) == 0);
    fflush(stdout); fflush(stderr);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        /* "laptop": saves and stays alive with its session open */
        setenv("RESTORATION_MACHINE_ID", "laptop-machine-id", 1);
        setenv("RESTORATION_HOSTNAME", "laptop", 1);
        rst_engine *e = engine(archive);
        CHECK_OK(rst_save(e));
        if (write(ready[1], "r", 1) != 1) _exit(3);
        for (;;) pause();
    }
    char c;
    CHECK(read(ready[0], &c, 1) == 1);
    size_t n = 0;
    unsigned char *rec = read_file(session, &n);
    CHECK_MSG(rec != NULL && n > 0, "the laptop's session was not recorded");
    CHECK_MSG(memmem(rec, n, "machine=laptop-machine-id\nhost=laptop\n", 38) != NULL, "the session record does not name its machine: %.*s", (int)n, rec);
    free(rec);

    /* "desktop": same host, same boot, the laptop's pid alive: RECOVER all the same */
    setenv("RESTORATION_MACHINE_ID", "desktop-machine-id", 1);
    setenv("RESTORATION_HOSTNAME", "desktop", 1);
    rst_engine *e = engine(archive);
    log_text[0] = 0;
    CHECK_OK(rst_restore(e));
    CHECK_MSG(rst_last_restore_reason(e) == RST_REASON_RECOVER, "a session of another machine reads %s",
              rst_restore_reason_name(rst_last_restore_reason(e)));
    CHECK_MSG(strstr(log_text, "laptop (machine laptop-machine-id)") != NULL && strstr(log_text, "may still be running") != NULL,
              "no WARNING naming the other machine:\n%s", log_text);
    rst_engine_destroy(e);
    kill(pid, SIGKILL);
    reap_child(pid, NULL);

    /* an invalid override: ignored, one WARNING (a new process: the
     * identity is read once per process, and a fork inherits it) */
    fflush(stdout); fflush(stderr);
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        setenv("RESTORATION_MACHINE_ID", "a/b", 1);
        execl(argv[0], argv[0], argv[1], "invalid", (char *)NULL);
        _exit(5);
    }
    int status = 0;
    reap_child(pid, &status);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child with an invalid machine id ended with 0x%x", status);
    DONE();
}
