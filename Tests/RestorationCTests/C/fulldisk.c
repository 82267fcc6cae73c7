/* fulldisk.c: a restore on a full file system (a tmpfs with no free
 * block left) must not die by SIGBUS from the engine's shared mappings
 * (the crash-loop marker, the session); it restores, and so does the next
 * launch.
 *
 *   fulldisk save DIR      saves DIR/state.rst (version 2 options: quarantine, so the marker is mapped)
 *   fulldisk restore DIR   restores it (the disk is full by then) and checks every value came back;
 *                          prints "reason <RST_REASON_…>"
 */
#include "check.h"

static char name_a[64], name_b[64];

static void enc(void *inst, rst_coder *c) { CHECK_OK(rst_encode_string(c, "name", (const char *)inst)); }
static void dec(void *inst, rst_coder *c) {
    const char *s = NULL;
    CHECK_OK(rst_decode_string(c, "name", &s, NULL));
    snprintf((char *)inst, 64, "%s", s);
}
static const rst_object_callbacks cbs = { enc, dec, NULL, NULL };

static rst_engine *engine(const char *archive) {
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;   /* the current version: quarantine maps the marker */
    o.archive_path = archive;
    o.log = collect_log;
    rst_engine *e = NULL;
    CHECK_OK(rst_engine_create(&o, &e));
    rst_object *root = NULL;
    CHECK_OK(rst_register_object(e, "Root", NULL, NULL, &cbs, name_a, &root));
    CHECK_OK(rst_register_object(e, "B", root, NULL, &cbs, name_b, NULL));
    return e;
}

int main(int argc, char **argv) {
    check_prog = "fulldisk";
    if (argc < 3) { fprintf(stderr, "usage: fulldisk save|restore DIR\n"); return 2; }
    char *archive = xasprintf("%s/state.rst", argv[2]);
    if (strcmp(argv[1], "save") == 0) {
        snprintf(name_a, sizeof name_a, "alpha");
        snprintf(name_b, sizeof name_b, "beta");
        rst_engine *e = engine(archive);
        CHECK_OK(rst_save(e));
        rst_engine_destroy(e);
        DONE();
    }
    if (strcmp(argv[1], "restore") == 0) {
        rst_engine *e = engine(archive);
        CHECK_OK(rst_restore(e));
        CHECK_STR(name_a, "alpha");
        CHECK_STR(name_b, "beta");
        printf("reason %s\n", rst_restore_reason_name(rst_last_restore_reason(e)));
        rst_engine_destroy(e);
        DONE();
    }
    return 2;
}
