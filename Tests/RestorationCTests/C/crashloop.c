/* crashloop.c: the crash-loop guard, across processes.
 *
 *   crashloop save DIR         saves DIR/state.rst and copies its bytes to DIR/original.bin
 *   crashloop crash DIR MODE   restores; the second object's decode dies (MODE abort: abort(),
 *                              kill: raise(SIGKILL)); never returns
 *   crashloop check DIR        the next run: a restore without the guard still works and
 *                              leaves everything in place; a guarded restore returns
 *                              RST_ERR_REJECTED, names DIR/state.rst.crashed-<ms>, which
 *                              holds the original bytes, and runs no callback; the
 *                              archive is gone; a save makes restore work again
 */
#include "check.h"
#include <signal.h>
#include <sys/stat.h>

static int callbacks;
static const char *crash_mode;
static int decodes;

static void enc(void *inst, rst_coder *c) { CHECK_OK(rst_encode_string(c, "name", (const char *)inst)); }
static void dec(void *inst, rst_coder *c) {
    (void)inst; (void)c;
    callbacks++;
    decodes++;
    if (crash_mode && decodes == 2) {
        fflush(stdout); fflush(stderr);
        if (strcmp(crash_mode, "kill") == 0) raise(SIGKILL);
        abort();
    }
}
static void fin(void *inst) { (void)inst; callbacks++; }
static const rst_object_callbacks cbs = { enc, dec, fin, NULL };
static bool should_restore(rst_engine *e, const rst_archive_info *i, void *ctx) { (void)e; (void)i; (void)ctx; callbacks++; return true; }

static void on_alarm(int sig) {
    (void)sig;
    static const char msg[] = "crashloop: FAILED: rst_restore blocked for 5 s on a FIFO at the crash-loop marker's path\n";
    if (write(2, msg, sizeof msg - 1) < 0) { /* nothing to do */ }
    _exit(1);
}

/* A valid marker (see CrashGuard.swift) for the archive as it is now:
   process `pid` with start time `start`, of boot `boot` (NULL: this boot). */
static char *fake_marker(const char *archive, int pid, const char *start, const char *boot) {
    size_t n = 0;
    unsigned char *b = read_file(archive, &n);
    CHECK(b != NULL && n >= 4);
    char this_boot[64] = "unknown";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) { if (fgets(this_boot, sizeof this_boot, f) == NULL) strcpy(this_boot, "unknown"); fclose(f); }
    this_boot[strcspn(this_boot, " \n")] = '\0';
    char *m = xasprintf("restoration-crash-marker 1\npid=%d\nstart=%s\nboot=%s\narchive=%zu:%02x%02x%02x%02x\nend\n",
                        pid, start, boot ? boot : this_boot, n, b[n - 4], b[n - 3], b[n - 2], b[n - 1]);
    free(b);
    return m;
}

/* A 1.0 host (options version 1): the whole-archive crash-loop guard. A
 * version-2 struct quarantines one object instead (quarantine.c). */
static rst_engine *engine(const char *archive, uint32_t flags) {
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.version = 1;
    o.archive_path = archive;
    o.should_restore = should_restore;
    o.flags = flags;
    o.log = collect_log;
    rst_engine *e = NULL;
    CHECK_OK(rst_engine_create(&o, &e));
    rst_object *root = NULL;
    CHECK_OK(rst_register_object(e, "Root", NULL, NULL, &cbs, "root", &root));
    CHECK_OK(rst_register_object(e, "A", root, NULL, &cbs, "a", NULL));
    CHECK_OK(rst_register_object(e, "B", root, NULL, &cbs, "b", NULL));
    return e;
}

int main(int argc, char **argv) {
    check_prog = "crashloop";
    if (argc < 3) { fprintf(stderr, "usage: crashloop save|crash|check DIR [MODE]\n"); return 2; }
    const char *dir = argv[2];
    char *archive = xasprintf("%s/state.rst", dir);
    char *original = xasprintf("%s/original.bin", dir);
    char *marker = xasprintf("%s.restoring", archive);

    if (strcmp(argv[1], "save") == 0) {
        rst_engine *e = engine(archive, 0);
        CHECK_OK(rst_save(e));
        size_t n = 0;
        unsigned char *b = read_file(archive, &n);
        CHECK(b != NULL);
        write_file(original, b, n);
        rst_engine_destroy(e);
        free(b);
        DONE();
    }

    if (strcmp(argv[1], "crash") == 0) {
        crash_mode = argc > 3 ? argv[3] : "abort";
        rst_engine *e = engine(archive, 0);
        rst_status s = rst_restore(e);
        fprintf(stderr, "crashloop: the restore returned %s instead of dying (%d decodes)\n", rst_status_name(s), decodes);
        return 1;
    }

    if (strcmp(argv[1], "check") == 0) {
        size_t n0 = 0;
        unsigned char *orig = read_file(original, &n0);
        CHECK(orig != NULL);
        CHECK_MSG(file_exists(marker), "no crash-loop marker %s after the crash", marker);

        /* buffers have no guard */
        {
            rst_engine *e = engine(NULL, 0);
            callbacks = 0;
            CHECK_OK(rst_restore_from_buffer(e, orig, n0));
            CHECK(callbacks > 0);
            rst_engine_destroy(e);
            CHECK(file_exists(marker));
        }
        /* RST_ENGINE_NO_CRASH_GUARD neither checks nor touches the marker */
        {
            rst_engine *e = engine(archive, RST_ENGINE_NO_CRASH_GUARD);
            callbacks = 0;
            CHECK_OK(rst_restore(e));
            CHECK(callbacks > 0);
            CHECK(file_exists(archive));
            CHECK(file_exists(marker));
            rst_engine_destroy(e);
        }
        /* the guarded restore: refused, set aside, nothing runs */
        rst_engine *e = engine(archive, 0);
        callbacks = 0;
        log_text[0] = '\0';
        int64_t t0 = now_ms();
        CHECK_ERR(rst_restore(e), RST_ERR_REJECTED, archive, ".crashed-");
        int64_t t1 = now_ms();
        CHECK_EQ(callbacks, 0);
        CHECK(!file_exists(archive));
        CHECK(!file_exists(marker));
        char *aside = find_entry(dir, "state.rst.crashed-");
        CHECK(aside != NULL);
        CHECK_LAST_ERROR(aside);
        CHECK_MSG(strstr(log_text, aside) != NULL, "the log does not name %s: %s", aside, log_text);
        long long ms = atoll(aside + strlen(archive) + strlen(".crashed-"));
        CHECK_MSG(ms >= t0 - 1000 && ms <= t1 + 1000, "set-aside name %s is not <archive>.crashed-<UTC ms now>", aside);
        size_t n1 = 0;
        unsigned char *kept = read_file(aside, &n1);
        CHECK(kept != NULL);
        CHECK_EQ(n1, n0);
        CHECK(memcmp(kept, orig, n0) == 0);
        /* the set-aside archive is still a valid archive, for restorectl */
        rst_archive_info *info = NULL;
        CHECK_OK(rst_read_archive_info(aside, &info));
        CHECK_EQ(info->object_count, 3);
        rst_free(info);

        /* again: there is no archive now */
        CHECK_ERR(rst_restore(e), RST_ERR_NOT_FOUND, archive);
        CHECK_EQ(callbacks, 0);

        /* a save clears the guard; restore works again; the set-aside copy stays */
        CHECK_OK(rst_save(e));
        callbacks = 0;
        CHECK_OK(rst_restore(e));
        CHECK(callbacks > 0);
        CHECK(!file_exists(marker));
        CHECK(file_exists(aside));
        CHECK_OK(rst_restore(e)); /* and again */

        /* a stale marker of this very pid but another start time is a dead process */
        char *fake = fake_marker(archive, (int)getpid(), "1", NULL);
        write_file(marker, fake, strlen(fake));
        CHECK_ERR(rst_restore(e), RST_ERR_REJECTED, ".crashed-");
        CHECK_EQ(count_entries(dir, "state.rst.crashed-"), 2);
        /* a marker that cannot be parsed (foreign, torn, empty, of an older
           format) never condemns the archive: ignored with a warning, replaced */
        CHECK_OK(rst_save(e));
        CHECK(!file_exists(marker));
        const char *unusable[] = { "\x01garbage", "", "pid=1\nstart=1\nboot=x\n", NULL };
        for (int i = 0; unusable[i]; i++) {
            write_file(marker, unusable[i], strlen(unusable[i]));
            log_text[0] = '\0';
            callbacks = 0;
            CHECK_OK(rst_restore(e));
            CHECK(callbacks > 0);
            CHECK_MSG(strstr(log_text, "ignoring crash-loop marker") != NULL, "no warning for unusable marker %d: %s", i, log_text);
            CHECK(!file_exists(marker));
            CHECK_EQ(count_entries(dir, "state.rst.crashed-"), 2);
        }
        /* a torn marker: every proper prefix of a valid one is ignored */
        size_t flen = strlen(fake);
        for (size_t cut = 0; cut < flen; cut++) {
            write_file(marker, fake, cut);
            CHECK_MSG(rst_restore(e) == RST_OK, "a marker torn at byte %zu of %zu condemned the archive: %s", cut, flen, rst_last_error());
        }
        /* a marker of an earlier boot, or naming another version of the archive, condemns nothing */
        char *other_boot = fake_marker(archive, (int)getpid(), "1", "not-this-boot");
        write_file(marker, other_boot, strlen(other_boot));
        CHECK_OK(rst_restore(e));
        char *other_archive = fake_marker(archive, (int)getpid(), "1", NULL);
        char *colon = strstr(other_archive, "archive=");
        CHECK(colon != NULL);
        colon[8] = colon[8] == '9' ? '8' : '9'; /* another size */
        write_file(marker, other_archive, strlen(other_archive));
        CHECK_OK(rst_restore(e));
        CHECK_EQ(count_entries(dir, "state.rst.crashed-"), 2);
        free(other_boot); free(other_archive);
        /* a FIFO at the marker's path: no hang, the restore runs (unguarded, with a warning) */
        CHECK(mkfifo(marker, 0600) == 0);
        signal(SIGALRM, on_alarm);
        alarm(5);
        log_text[0] = '\0';
        callbacks = 0;
        CHECK_OK(rst_restore(e));
        alarm(0);
        CHECK(callbacks > 0);
        CHECK_MSG(strstr(log_text, "FIFO") != NULL, "no warning naming the FIFO: %s", log_text);
        struct stat fst;
        CHECK(lstat(marker, &fst) == 0 && S_ISFIFO(fst.st_mode));
        CHECK(unlink(marker) == 0);
        CHECK(rst_save(e) == RST_OK);
        CHECK_EQ(count_entries(dir, "state.rst.crashed-"), 2);
        /* back to where the rest of this program expects: 3 set-aside copies */
        free(fake);
        fake = fake_marker(archive, (int)getpid(), "1", NULL);
        write_file(marker, fake, strlen(fake));
        CHECK_ERR(rst_restore(e), RST_ERR_REJECTED, ".crashed-");
        CHECK_EQ(count_entries(dir, "state.rst.crashed-"), 3);

        /* rst_save clears a marker left by a dead restore (a save that
           writes; an unchanged one writes nothing and leaves it) */
        CHECK_OK(rst_save(e));
        free(fake);
        fake = fake_marker(archive, (int)getpid(), "1", NULL);
        write_file(marker, fake, strlen(fake));
        CHECK_OK(rst_save(e));
        CHECK(file_exists(marker));
        CHECK_OK(rst_register_object(e, "C", NULL, NULL, &cbs, "c", NULL));
        CHECK_OK(rst_save(e));
        CHECK(!file_exists(marker));
        callbacks = 0;
        CHECK_OK(rst_restore(e));
        CHECK(callbacks > 0);
        CHECK_EQ(count_entries(dir, "state.rst.crashed-"), 3);

        /* rst_discard removes the set-aside copies and markers */
        CHECK_OK(rst_save(e));
        write_file(marker, fake, strlen(fake));
        CHECK_OK(rst_discard(e));
        CHECK_EQ(count_entries(dir, "state.rst"), 0);
        rst_engine_destroy(e);
        free(fake); free(aside); free(kept); free(orig);
        free(archive); free(original); free(marker);
        DONE();
    }
    fprintf(stderr, "unknown command %s\n", argv[1]);
    return 2;
}
