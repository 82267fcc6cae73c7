/* files.c: validation before any callback, and the archive's files.
 *
 * Every truncation and a bit flip at every byte of a small archive (buffers
 * and files) are refused before any callback; foreign and empty files; a
 * file or buffer larger than RST_MAX_ARCHIVE_BYTES; a missing archive;
 * saving onto a symlink, a dangling symlink, a directory and a FIFO; a
 * read-only directory; leftover temporary files; rst_discard.
 *
 *   files DIR
 */
#include "check.h"
#include "restoration_store.h"
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

static int callbacks; /* any callback of a restore */

static bool cb_should_restore(rst_engine *e, const rst_archive_info *i, void *ctx) { (void)e; (void)i; (void)ctx; callbacks++; return true; }
static void cb_did_finish(rst_engine *e, void *ctx) { (void)e; (void)ctx; callbacks++; }
static void cb_decode(void *inst, rst_coder *c) { (void)inst; (void)c; callbacks++; }
static void cb_finished(void *inst) { (void)inst; callbacks++; }
static void cb_encode(void *inst, rst_coder *c) {
    const char *name = inst;
    CHECK_OK(rst_encode_string(c, "name", name));
    CHECK_OK(rst_encode_int(c, "n", 42));
    CHECK_OK(rst_encode_bool(c, "on", false));
    CHECK_OK(rst_encode_double(c, "x", 0.5));
    int64_t v[3] = { 1, 2, 3 };
    CHECK_OK(rst_encode_int_array(c, "v", v, 3));
}
static const rst_object_callbacks cbs = { cb_encode, cb_decode, cb_finished, NULL };
static rst_object *cb_factory(rst_engine *e, rst_object *p, const char *id, rst_coder *c, void *ctx) {
    (void)c; (void)ctx;
    callbacks++;
    rst_object *o = NULL;
    CHECK_OK(rst_register_object(e, id, p, NULL, &cbs, "made", &o));
    return o;
}

/* A restoring engine whose every callback counts; no object is registered,
   so a valid archive would call the fallback factory. */
static rst_engine *restorer(const char *archive) {
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.archive_path = archive;
    o.should_restore = cb_should_restore;
    o.did_finish_restoring = cb_did_finish;
    o.log = collect_log;
    rst_engine *e = NULL;
    CHECK_OK(rst_engine_create(&o, &e));
    CHECK_OK(rst_set_fallback_factory(e, cb_factory, NULL));
    return e;
}

static rst_engine *saver(const char *archive) {
    rst_engine *e = new_engine(archive);
    rst_object *root = NULL;
    CHECK_OK(rst_register_object(e, "Root", NULL, "K", &cbs, "root", &root));
    CHECK_OK(rst_register_object(e, "Kid", root, NULL, &cbs, "kid", NULL));
    return e;
}

static const char *volatile blocked_in = "?";
static void on_alarm(int sig) {
    (void)sig;
    static const char msg[] = "files: FAILED: blocked for 5 s on a FIFO in ";
    if (write(2, msg, sizeof msg - 1) < 0 || write(2, blocked_in, strlen(blocked_in)) < 0 || write(2, "\n", 1) < 0) { /* nothing to do */ }
    _exit(1);
}

static bool refused(rst_status s) { return s == RST_ERR_CORRUPT || s == RST_ERR_VERSION; }

static void validation(const char *dir) {
    char *archive = xasprintf("%s/small.rst", dir);
    rst_engine *s = saver(archive);
    CHECK_OK(rst_save(s));
    size_t len = 0;
    unsigned char *good = read_file(archive, &len);
    CHECK(good != NULL && len > 16);
    void *buf = NULL; size_t blen = 0;
    CHECK_OK(rst_save_to_buffer(s, &buf, &blen));
    CHECK_EQ(blen, len);
    rst_free(buf);
    rst_engine_destroy(s);

    /* sanity: the good archive restores, and calls back */
    rst_engine *r = restorer(archive);
    callbacks = 0;
    CHECK_OK(rst_restore(r));
    CHECK(callbacks > 0);
    rst_engine_destroy(r);
    char *marker = xasprintf("%s.restoring", archive);

    /* every truncation, from a buffer and from a file */
    unsigned char *copy = malloc(len);
    for (size_t n = 0; n < len; n++) {
        r = restorer(archive);
        callbacks = 0;
        rst_status st = rst_restore_from_buffer(r, n ? good : NULL, n);
        CHECK_MSG(refused(st), "truncated to %zu of %zu bytes: %s (%s)", n, len, rst_status_name(st), rst_last_error());
        CHECK_LAST_ERROR("buffer");
        CHECK_MSG(callbacks == 0, "truncated to %zu bytes: %d callbacks ran", n, callbacks);

        write_file(archive, good, n);
        st = rst_restore(r);
        CHECK_MSG(refused(st), "file truncated to %zu of %zu bytes: %s (%s)", n, len, rst_status_name(st), rst_last_error());
        CHECK_LAST_ERROR(archive);
        CHECK_MSG(callbacks == 0, "file truncated to %zu bytes: %d callbacks ran", n, callbacks);
        CHECK(!file_exists(marker));
        /* a corrupt archive is never deleted: set aside intact (RESET) */
        CHECK(!file_exists(archive));
        CHECK_EQ(rst_last_restore_reason(r), RST_REASON_RESET);
        CHECK(find_entry(dir, ".invalid-") != NULL);
        write_file(archive, good, n);
        rst_archive_info *info = NULL;
        CHECK_MSG(refused(rst_read_archive_info(archive, &info)), "rst_read_archive_info of %zu bytes", n);
        CHECK(info == NULL);
        rst_engine_destroy(r);
    }

    /* a bit flip at every byte: every bit from a buffer, one bit per byte from a file */
    for (size_t i = 0; i < len; i++) {
        r = restorer(archive);
        for (int bit = 0; bit < 8; bit++) {
            memcpy(copy, good, len);
            copy[i] ^= (unsigned char)(1u << bit);
            callbacks = 0;
            rst_status st = rst_restore_from_buffer(r, copy, len);
            CHECK_MSG(refused(st), "bit %d of byte %zu flipped: %s (%s)", bit, i, rst_status_name(st), rst_last_error());
            CHECK_MSG(callbacks == 0, "bit %d of byte %zu flipped: %d callbacks ran", bit, i, callbacks);
        }
        memcpy(copy, good, len);
        copy[i] ^= (unsigned char)(1u << (i % 8));
        write_file(archive, copy, len);
        callbacks = 0;
        rst_status st = rst_restore(r);
        CHECK_MSG(refused(st), "file with bit %zu of byte %zu flipped: %s", i % 8, i, rst_status_name(st));
        CHECK_LAST_ERROR(archive);
        CHECK_EQ(callbacks, 0);
        rst_engine_destroy(r);
    }

    /* foreign files */
    const char *foreign[] = { "hello, world\n", "\x89PNG\r\n\x1a\n\0\0\0\rIHDR", "\177ELF\002\001\001" };
    for (size_t k = 0; k < sizeof foreign / sizeof foreign[0]; k++) {
        write_file(archive, foreign[k], strlen(foreign[k]) + 1);
        r = restorer(archive);
        callbacks = 0;
        CHECK_ST(rst_restore(r), RST_ERR_CORRUPT);
        CHECK_LAST_ERROR(archive);
        CHECK_EQ(callbacks, 0);
        rst_engine_destroy(r);
    }
    /* a good archive followed by trailing garbage */
    {
        unsigned char *longer = malloc(len + 7);
        memcpy(longer, good, len);
        memcpy(longer + len, "garbage", 7);
        r = restorer(archive);
        callbacks = 0;
        CHECK(refused(rst_restore_from_buffer(r, longer, len + 7)));
        CHECK_EQ(callbacks, 0);
        rst_engine_destroy(r);
        free(longer);
    }

    /* the good one still restores (validation is not sticky) */
    write_file(archive, good, len);
    r = restorer(archive);
    callbacks = 0;
    CHECK_OK(rst_restore(r));
    CHECK(callbacks > 0);
    rst_engine_destroy(r);

    free(copy); free(good); free(marker); free(archive);
}

static void limits_and_missing(const char *dir) {
    char *archive = xasprintf("%s/huge.rst", dir);
    int fd = open(archive, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    CHECK(ftruncate(fd, (off_t)RST_MAX_ARCHIVE_BYTES + 1) == 0); /* sparse */
    close(fd);
    rst_engine *r = restorer(archive);
    callbacks = 0;
    CHECK_ERR(rst_restore(r), RST_ERR_LIMIT, archive, "RST_MAX_ARCHIVE_BYTES");
    CHECK_EQ(callbacks, 0);
    /* too large is invalid too: set aside intact, never read */
    CHECK(!file_exists(archive));
    CHECK_EQ(rst_last_restore_reason(r), RST_REASON_RESET);
    char *huge_aside = find_entry(dir, "huge.rst.invalid-");
    CHECK(huge_aside != NULL);
    rst_archive_info *info = NULL;
    CHECK_ERR(rst_read_archive_info(huge_aside, &info), RST_ERR_LIMIT, huge_aside);
    CHECK(info == NULL);
    CHECK(unlink(huge_aside) == 0);

    /* a buffer larger than the limit: refused from its length (the pages are never touched) */
    size_t big = (size_t)RST_MAX_ARCHIVE_BYTES + 1;
    void *p = mmap(NULL, big, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    CHECK(p != MAP_FAILED);
    CHECK_ERR(rst_restore_from_buffer(r, p, big), RST_ERR_LIMIT, "RST_MAX_ARCHIVE_BYTES");
    CHECK_EQ(callbacks, 0);
    munmap(p, big);
    rst_engine_destroy(r);
    unlink(archive);
    free(archive);

    /* a missing archive */
    archive = xasprintf("%s/missing.rst", dir);
    r = restorer(archive);
    callbacks = 0;
    CHECK_ERR(rst_restore(r), RST_ERR_NOT_FOUND, archive);
    CHECK_EQ(callbacks, 0);
    CHECK_ERR(rst_read_archive_info(archive, &info), RST_ERR_NOT_FOUND, archive);
    CHECK(!file_exists(archive));
    char *marker = xasprintf("%s.restoring", archive);
    CHECK(!file_exists(marker));
    /* the report is not touched by a restore that never reached pass 1 */
    rst_restore_report rep;
    CHECK_ST(rst_last_restore_report(r, &rep), RST_ERR_STATE);
    rst_engine_destroy(r);
    /* a missing directory */
    char *deep = xasprintf("%s/no/such/dir/a.rst", dir);
    r = restorer(deep);
    CHECK_ERR(rst_restore(r), RST_ERR_NOT_FOUND, deep);
    rst_engine_destroy(r);
    /* rst_save creates the missing folders, mode 0700 (XDG), and the archive restores */
    rst_engine *s = saver(deep);
    CHECK_ST(rst_save(s), RST_OK);
    rst_engine_destroy(s);
    CHECK(file_exists(deep));
    char *created = xasprintf("%s/no", dir);
    struct stat dst;
    CHECK(stat(created, &dst) == 0 && S_ISDIR(dst.st_mode) && (dst.st_mode & 07777) == 0700);
    r = restorer(deep);
    CHECK_ST(rst_restore(r), RST_OK);
    rst_engine_destroy(r);
    /* a folder that cannot be created (a regular file is in the way): RST_ERR_IO naming it */
    char *blocker = xasprintf("%s/plain-file", dir);
    write_file(blocker, "x", 1);
    char *under = xasprintf("%s/plain-file/sub/a.rst", dir);
    s = saver(under);
    CHECK_ERR(rst_save(s), RST_ERR_IO, "plain-file", "not a directory");
    rst_engine_destroy(s);
    free(under); free(blocker); free(created);
    free(deep); free(marker); free(archive);
}

static void non_regular_targets(const char *dir) {
    /* a symlink to a file: RST_ERR_IO, the link and its target untouched */
    char *target = xasprintf("%s/target.txt", dir);
    char *link = xasprintf("%s/link.rst", dir);
    write_file(target, "precious", 8);
    CHECK(symlink(target, link) == 0);
    rst_engine *s = saver(link);
    CHECK_ERR(rst_save(s), RST_ERR_IO, link, "symbolic link");
    struct stat st;
    CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
    size_t n = 0;
    unsigned char *t = read_file(target, &n);
    CHECK(t != NULL && n == 8 && memcmp(t, "precious", 8) == 0);
    free(t);
    CHECK_EQ(count_entries(dir, ".tmp-"), 0);
    rst_engine_destroy(s);

    /* a dangling symlink: nothing is created where it points */
    char *nowhere = xasprintf("%s/nowhere.txt", dir);
    char *dangling = xasprintf("%s/dangling.rst", dir);
    CHECK(symlink(nowhere, dangling) == 0);
    s = saver(dangling);
    CHECK_ERR(rst_save(s), RST_ERR_IO, dangling);
    CHECK(!file_exists(nowhere));
    CHECK(lstat(dangling, &st) == 0 && S_ISLNK(st.st_mode));
    rst_engine_destroy(s);

    /* a directory */
    char *dirpath = xasprintf("%s/adir.rst", dir);
    CHECK(mkdir(dirpath, 0700) == 0);
    char *inside = xasprintf("%s/keep", dirpath);
    write_file(inside, "k", 1);
    /* refused when the engine is created (and by rst_file_store): nothing is created */
    {
        rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
        o.archive_path = dirpath;
        rst_engine *de = NULL;
        CHECK_ERR(rst_engine_create(&o, &de), RST_ERR_INVALID, dirpath, "directory");
        /* the message names what the user gave, as they spelled it */
        CHECK_MSG(strstr(rst_last_error(), "archive_path '") != NULL && strstr(rst_last_error(), "opts->the") == NULL,
                  "the message does not name archive_path as the user gave it: %s", rst_last_error());
        CHECK(de == NULL);
        CHECK(lstat(dirpath, &st) == 0 && S_ISDIR(st.st_mode));
        CHECK(file_exists(inside));
        CHECK_EQ(count_entries(dir, "adir.rst."), 0);
        /* a path ending in '/', even of a folder that does not exist */
        char *slash = xasprintf("%s/new-folder/", dir);
        o.archive_path = slash;
        CHECK_ERR(rst_engine_create(&o, &de), RST_ERR_INVALID, "ends in '/'");
        CHECK(de == NULL);
        CHECK(!file_exists(slash));
        const rst_store_ops *fops = NULL; void *fctx = NULL;
        CHECK_ERR(rst_file_store(dirpath, &fops, &fctx), RST_ERR_INVALID, "directory");
        CHECK_ERR(rst_file_store(slash, &fops, &fctx), RST_ERR_INVALID, "ends in '/'");
        CHECK_ERR(rst_file_store("", &fops, &fctx), RST_ERR_INVALID, NULL);
        CHECK_ERR(rst_file_store(NULL, &fops, &fctx), RST_ERR_INVALID, NULL);
        CHECK(fops == NULL && fctx == NULL);
        free(slash);
    }

    /* a FIFO: refused, and no hang */
    char *fifo = xasprintf("%s/fifo.rst", dir);
    CHECK(mkfifo(fifo, 0600) == 0);
    s = saver(fifo);
    signal(SIGALRM, on_alarm);
    alarm(5);
    blocked_in = "rst_save";
    CHECK_ERR(rst_save(s), RST_ERR_IO, fifo);
    rst_engine *r = restorer(fifo);
    blocked_in = "rst_restore (FileStore.read opens the FIFO without O_NONBLOCK)";
    rst_status rs = rst_restore(r);
    CHECK_MSG(rs != RST_OK, "restore from a FIFO returned RST_OK");
    CHECK_LAST_ERROR(fifo);
    rst_archive_info *info = NULL;
    blocked_in = "rst_read_archive_info";
    CHECK(rst_read_archive_info(fifo, &info) != RST_OK);
    alarm(0);
    CHECK(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
    rst_engine_destroy(r);
    rst_engine_destroy(s);
    free(target); free(link); free(nowhere); free(dangling); free(dirpath); free(inside); free(fifo);
}

/* Runs in a child: as "nobody" when we are root (root ignores permissions). */
static void read_only_child(const char *rodir) {
    char *archive = xasprintf("%s/state.rst", rodir);
    rst_engine *s = saver(archive);
    CHECK_OK(rst_save(s));
    size_t n0 = 0;
    unsigned char *before = read_file(archive, &n0);
    CHECK(before != NULL);
    CHECK(chmod(rodir, 0500) == 0);
    CHECK(access(rodir, W_OK) != 0); /* really read-only for us */
    CHECK_OK(rst_save(s)); /* unchanged state: nothing to write */
    CHECK_OK(rst_register_object(s, "Other", NULL, NULL, &cbs, "other", NULL));
    CHECK_ERR(rst_save(s), RST_ERR_IO, archive, "Permission denied");
    size_t n1 = 0;
    unsigned char *after = read_file(archive, &n1);
    CHECK(after != NULL && n1 == n0 && memcmp(before, after, n0) == 0);
    CHECK_EQ(count_entries(rodir, ".tmp-"), 0);
    rst_engine_destroy(s);

    /* restore still works from the existing archive */
    rst_engine *r = restorer(archive);
    callbacks = 0;
    rst_status st = rst_restore(r);
    CHECK_MSG(st == RST_OK, "restore in a read-only directory: %s: %s", rst_status_name(st), rst_last_error());
    CHECK(callbacks > 0);
    rst_archive_info *info = NULL;
    CHECK_OK(rst_read_archive_info(archive, &info));
    rst_free(info);
    rst_engine_destroy(r);
    CHECK(chmod(rodir, 0700) == 0);
    free(before); free(after); free(archive);
    printf("files: read-only child: ok %ld checks\n", (long)check_count);
    fflush(stdout);
    _exit(0);
}

static void read_only_directory(const char *dir) {
    char *rodir = xasprintf("%s/ro", dir);
    CHECK(mkdir(rodir, 0700) == 0);
    if (geteuid() == 0) {
        CHECK(chmod(dir, 0711) == 0);
        CHECK(chown(rodir, 65534, 65534) == 0);
    }
    fflush(stdout); fflush(stderr);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        if (geteuid() == 0) {
            if (setgid(65534) != 0 || setuid(65534) != 0) { perror("setuid"); _exit(3); }
        }
        read_only_child(rodir);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the read-only directory child failed (status 0x%x)", status);
    if (geteuid() == 0) CHECK(chmod(rodir, 0700) == 0);
    free(rodir);
}

static void leftovers_and_discard(const char *dir) {
    char *sub = xasprintf("%s/discard", dir);
    CHECK(mkdir(sub, 0700) == 0);
    char *archive = xasprintf("%s/state.rst", sub);

    /* discard with nothing there */
    rst_engine *s = saver(archive);
    CHECK_OK(rst_discard(s));
    CHECK_OK(rst_save(s));

    /* leftovers of a crashed save do not break restore, and the next save removes them */
    char *tmp1 = xasprintf("%s.tmp-99999-1", archive);
    char *tmp2 = xasprintf("%s.tmp-1-2", archive);
    write_file(tmp1, "half an archive", 15);
    write_file(tmp2, "", 0);
    rst_engine *r = restorer(archive);
    callbacks = 0;
    CHECK_OK(rst_restore(r));
    CHECK(callbacks > 0);
    rst_engine_destroy(r);
    /* a change, so that the save writes (unchanged state is not written again) */
    CHECK_OK(rst_register_object(s, "Other", NULL, NULL, &cbs, "other", NULL));
    CHECK_OK(rst_save(s));
    CHECK(!file_exists(tmp1));
    CHECK(!file_exists(tmp2));

    /* set-aside copies, a marker, temporaries and the lock all go; other files stay */
    char *crashed1 = xasprintf("%s.crashed-1700000000000", archive);
    char *crashed2 = xasprintf("%s.crashed-1700000000001-1", archive);
    char *marker = xasprintf("%s.restoring", archive);
    char *unrelated1 = xasprintf("%s/other.rst", sub);
    char *unrelated2 = xasprintf("%s/state.rst.bak", sub);
    char *unrelated3 = xasprintf("%s/other.rst.crashed-1", sub);
    write_file(crashed1, "old", 3);
    write_file(crashed2, "old", 3);
    write_file(marker, "pid=1\n", 6);
    write_file(tmp1, "x", 1);
    write_file(unrelated1, "u", 1);
    write_file(unrelated2, "u", 1);
    write_file(unrelated3, "u", 1);
    CHECK_OK(rst_discard(s));
    CHECK(!file_exists(archive));
    CHECK(!file_exists(crashed1));
    CHECK(!file_exists(crashed2));
    CHECK(!file_exists(marker));
    CHECK(!file_exists(tmp1));
    CHECK_MSG(count_entries(sub, NULL) == 3, "left after discard: %d entries (expected the 3 unrelated files)", count_entries(sub, NULL));
    CHECK(file_exists(unrelated1));
    CHECK(file_exists(unrelated2));
    CHECK(file_exists(unrelated3));
    /* again: nothing left, still RST_OK */
    CHECK_OK(rst_discard(s));
    r = restorer(archive);
    callbacks = 0;
    CHECK_ERR(rst_restore(r), RST_ERR_NOT_FOUND, archive);
    CHECK_EQ(callbacks, 0);
    rst_engine_destroy(r);
    /* and a save after a discard works */
    CHECK_OK(rst_save(s));
    CHECK(file_exists(archive));
    rst_engine_destroy(s);

    free(sub); free(archive); free(tmp1); free(tmp2); free(crashed1); free(crashed2); free(marker);
    free(unrelated1); free(unrelated2); free(unrelated3);
}


/* Save never writes through fd 0, 1 or 2: with stdio closed, the archive is still right. */
static void closed_stdio(const char *dir) {
    char *archive = xasprintf("%s/stdio.rst", dir);
    fflush(stdout); fflush(stderr);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        close(0); close(1); close(2);
        rst_engine *s = saver(archive);
        if (rst_save(s) != RST_OK) _exit(10);
        if (rst_save(s) != RST_OK) _exit(11);
        /* stray writes to the stdio descriptors must not land in any file of ours */
        rst_engine_destroy(s);
        rst_engine *r = restorer(archive);
        callbacks = 0;
        if (rst_restore(r) != RST_OK || callbacks == 0) _exit(12);
        rst_engine_destroy(r);
        _exit(0);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the closed-stdio child failed (status 0x%x)", status);
    rst_engine *r = restorer(archive);
    callbacks = 0;
    CHECK_OK(rst_restore(r));
    CHECK(callbacks > 0);
    rst_engine_destroy(r);
    free(archive);
}

int main(int argc, char **argv) {
    check_prog = "files";
    if (argc != 2) { fprintf(stderr, "usage: files DIR\n"); return 2; }
    signal(SIGPIPE, SIG_IGN);
    validation(argv[1]);
    limits_and_missing(argv[1]);
    non_regular_targets(argv[1]);
    leftovers_and_discard(argv[1]);
    read_only_directory(argv[1]);
    closed_stdio(argv[1]);
    DONE();
}
