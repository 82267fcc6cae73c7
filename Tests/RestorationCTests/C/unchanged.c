/* unchanged.c: unchanged state is not written, whoever saves it, and a
 * FALLBACK fills the archive slot at the next save of a dirty-only host.
 *
 *   unchanged second-engine DIR   engine A saves; engine B on the same path,
 *                                 which never restored, saves the same state:
 *                                 the archive (inode, mtime, bytes) and the
 *                                 generations are untouched; a changed state
 *                                 is written
 *   unchanged fallback DIR        two saves (generation 1), the archive
 *                                 corrupted: the relaunch reports FALLBACK and
 *                                 is dirty; a flush writes the archive (the
 *                                 same state); the launch after is RELAUNCH
 */
#include "check.h"

static char title[64];
static void enc(void *inst, rst_coder *c) { CHECK_OK(rst_encode_string(c, "title", (const char *)inst)); }
static void dec(void *inst, rst_coder *c) {
    const char *s = NULL;
    CHECK_OK(rst_decode_string(c, "title", &s, NULL));
    snprintf((char *)inst, 64, "%s", s);
}
static const rst_object_callbacks cbs = { enc, dec, NULL, NULL };

static rst_engine *engine(const char *archive, uint32_t generations) {
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.archive_path = archive;
    o.generations = generations;
    o.log = collect_log;
    rst_engine *e = NULL;
    CHECK_OK(rst_engine_create(&o, &e));
    CHECK_OK(rst_register_object(e, "Doc", NULL, NULL, &cbs, title, NULL));
    return e;
}

static struct stat stat_of(const char *p) {
    struct stat st;
    CHECK_MSG(stat(p, &st) == 0, "cannot stat %s: %s", p, strerror(errno));
    return st;
}

int main(int argc, char **argv) {
    check_prog = "unchanged";
    if (argc < 3) { fprintf(stderr, "usage: unchanged second-engine|fallback DIR\n"); return 2; }
    char *archive = xasprintf("%s/state.rst", argv[2]);
    char *gen1 = xasprintf("%s.1", archive);

    if (strcmp(argv[1], "second-engine") == 0) {
        snprintf(title, sizeof title, "draft");
        rst_engine *a = engine(archive, 2);
        CHECK_OK(rst_save(a));
        rst_engine_destroy(a);
        struct stat before = stat_of(archive);
        CHECK_MSG(!file_exists(gen1), "a first save made a generation");
        usleep(20 * 1000);   /* a rewrite would show in the mtime */

        /* a tool that only saves, or a second engine: never restored */
        rst_engine *b = engine(archive, 2);
        CHECK_OK(rst_save(b));
        struct stat after = stat_of(archive);
        CHECK_MSG(before.st_ino == after.st_ino, "the unchanged state was written again (inode %lu -> %lu)",
                  (unsigned long)before.st_ino, (unsigned long)after.st_ino);
        CHECK_MSG(before.st_mtim.tv_sec == after.st_mtim.tv_sec && before.st_mtim.tv_nsec == after.st_mtim.tv_nsec,
                  "the unchanged archive's mtime moved");
        CHECK_MSG(!file_exists(gen1), "an unchanged save rotated a generation: %s exists", gen1);
        /* and again: nothing read, nothing written */
        CHECK_OK(rst_save(b));
        CHECK_EQ(stat_of(archive).st_ino, before.st_ino);
        /* a change is written, and the old archive becomes generation 1 */
        snprintf(title, sizeof title, "final");
        CHECK_OK(rst_save(b));
        CHECK(stat_of(archive).st_ino != before.st_ino);
        CHECK_MSG(file_exists(gen1), "the replaced archive was not kept as generation 1");
        rst_engine_destroy(b);
        DONE();
    }

    if (strcmp(argv[1], "fallback") == 0) {
        snprintf(title, sizeof title, "first");
        rst_engine *a = engine(archive, 2);
        CHECK_OK(rst_save(a));
        snprintf(title, sizeof title, "second");
        CHECK_OK(rst_save(a));
        rst_engine_destroy(a);
        CHECK(file_exists(gen1));
        /* the archive is damaged: its last byte (the checksum) flipped */
        size_t n = 0;
        unsigned char *b = read_file(archive, &n);
        CHECK(b != NULL && n > 8);
        b[n - 1] ^= 0xff;
        write_file(archive, b, n);
        free(b);

        title[0] = '\0';
        rst_engine *e = engine(archive, 2);
        CHECK_OK(rst_restore(e));
        CHECK_EQ(rst_last_restore_reason(e), RST_REASON_FALLBACK);
        CHECK_STR(title, "first");
        CHECK_MSG(rst_is_dirty(e), "a FALLBACK restore left the engine clean: a host that saves only when dirty never fills the archive slot");
        /* an idle host: only its flush at exit */
        CHECK_OK(rst_flush(e));
        CHECK_MSG(file_exists(archive), "the flush after a FALLBACK did not write the archive");
        CHECK(!rst_is_dirty(e));
        rst_engine_destroy(e);

        title[0] = '\0';
        e = engine(archive, 2);
        CHECK_OK(rst_restore(e));
        CHECK_MSG(rst_last_restore_reason(e) == RST_REASON_RELAUNCH, "the launch after a FALLBACK and a flush reports %s, not RST_REASON_RELAUNCH",
                  rst_restore_reason_name(rst_last_restore_reason(e)));
        CHECK_STR(title, "first");
        CHECK(!rst_is_dirty(e));
        rst_engine_destroy(e);
        DONE();
    }
    return 2;
}
