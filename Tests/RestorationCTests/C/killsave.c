/* killsave.c: kill -9 at random moments during repeated saves.
 *
 *   killsave once DIR          one save (generation 1, or last + 1); no temporary file is left
 *   killsave loop DIR          restores the last generation, prints "ready" after its first
 *                              save, then saves generation+1, +2, ... until killed
 *   killsave verify DIR MIN    restores: the archive is valid, every object carries the same
 *                              generation (no mix of two saves), with a payload that matches
 *                              it, and the generation is at least MIN; prints "generation G"
 *
 * Every object carries the generation; the payload length varies with it, so
 * consecutive archives have different sizes.
 */
#include "check.h"

#define N_OBJECTS 24

typedef struct obj { char path[32]; int64_t gen; bool decoded; bool payload_ok; } obj;
static obj objs[N_OBJECTS];
static int64_t generation;

static size_t payload_len(int64_t gen) { return (size_t)((gen * 37) % 700); }

static void enc(void *inst, rst_coder *c) {
    (void)inst;
    static char payload[800];
    size_t n = payload_len(generation);
    memset(payload, 'a' + (int)(generation % 26), n);
    payload[n] = '\0';
    CHECK_OK(rst_encode_int(c, "gen", generation));
    CHECK_OK(rst_encode_string(c, "payload", payload));
    int64_t arr[4] = { generation, generation, generation, generation };
    CHECK_OK(rst_encode_int_array(c, "again", arr, 4));
}
static void dec(void *inst, rst_coder *c) {
    obj *o = inst;
    o->decoded = true;
    CHECK_OK(rst_decode_int(c, "gen", &o->gen));
    const char *p = NULL; size_t n = 0;
    CHECK_OK(rst_decode_string(c, "payload", &p, &n));
    o->payload_ok = n == payload_len(o->gen);
    for (size_t i = 0; i < n; i++) if (p[i] != 'a' + (int)(o->gen % 26)) o->payload_ok = false;
    int64_t arr[4]; size_t count = 0;
    CHECK_OK(rst_decode_int_array(c, "again", arr, 4, &count));
    CHECK_EQ(count, 4);
    for (int i = 0; i < 4; i++) if (arr[i] != o->gen) o->payload_ok = false;
}
static const rst_object_callbacks cbs = { enc, dec, NULL, NULL };

static rst_engine *build(const char *archive, uint32_t flags) {
    rst_engine_options opt = RST_ENGINE_OPTIONS_INIT;
    opt.archive_path = archive;
    opt.flags = flags;
    rst_engine *e = NULL;
    CHECK_OK(rst_engine_create(&opt, &e));
    /* 4 roots with 5 children each: 24 objects */
    for (int r = 0; r < 4; r++) {
        obj *ro = &objs[r * 6];
        snprintf(ro->path, sizeof ro->path, "R%d", r);
        rst_object *root = NULL;
        CHECK_OK(rst_register_object(e, ro->path, NULL, NULL, &cbs, ro, &root));
        for (int k = 1; k < 6; k++) {
            obj *o = &objs[r * 6 + k];
            char id[8];
            snprintf(id, sizeof id, "c%d", k);
            snprintf(o->path, sizeof o->path, "R%d/c%d", r, k);
            CHECK_OK(rst_register_object(e, id, root, NULL, &cbs, o, NULL));
        }
    }
    return e;
}

/* Restores and checks consistency; returns the generation (0: no archive and allowed). */
static int64_t restore_and_check(rst_engine *e) {
    for (int i = 0; i < N_OBJECTS; i++) { objs[i].decoded = false; objs[i].gen = -1; }
    CHECK_OK(rst_restore(e));
    int64_t g = objs[0].gen;
    for (int i = 0; i < N_OBJECTS; i++) {
        CHECK_MSG(objs[i].decoded, "%s was not restored", objs[i].path);
        CHECK_MSG(objs[i].gen == g, "a mix of two saves: %s has generation %lld, %s has %lld",
                  objs[0].path, (long long)g, objs[i].path, (long long)objs[i].gen);
        CHECK_MSG(objs[i].payload_ok, "%s: payload does not match generation %lld", objs[i].path, (long long)objs[i].gen);
    }
    rst_restore_report rep;
    CHECK_OK(rst_last_restore_report(e, &rep));
    CHECK_EQ(rep.archived, N_OBJECTS);
    CHECK_EQ(rep.restored, N_OBJECTS);
    return g;
}

int main(int argc, char **argv) {
    check_prog = "killsave";
    if (argc < 3) { fprintf(stderr, "usage: killsave once|loop|verify DIR [MIN]\n"); return 2; }
    const char *dir = argv[2];
    char *archive = xasprintf("%s/state.rst", dir);

    if (strcmp(argv[1], "once") == 0 || strcmp(argv[1], "loop") == 0) {
        /* the loop is killed at random: its own restore must not leave a crash-loop marker */
        rst_engine *e = build(archive, RST_ENGINE_NO_CRASH_GUARD);
        generation = file_exists(archive) ? restore_and_check(e) : 0;
        if (strcmp(argv[1], "once") == 0) {
            generation++;
            CHECK_OK(rst_save(e));
            CHECK_EQ(count_entries(dir, ".tmp-"), 0); /* a save removes leftovers of killed saves */
            CHECK_EQ(restore_and_check(e), generation);
            printf("generation %lld\n", (long long)generation);
            rst_engine_destroy(e);
            DONE();
        }
        for (long k = 0;; k++) {
            generation++;
            rst_status s = rst_save(e);
            if (s != RST_OK) { fprintf(stderr, "killsave: save %lld failed: %s: %s\n", (long long)generation, rst_status_name(s), rst_last_error()); return 1; }
            if (k == 0) { printf("ready\n"); fflush(stdout); }
        }
    }

    if (strcmp(argv[1], "verify") == 0) {
        long long min = argc > 3 ? atoll(argv[3]) : 1;
        rst_engine *e = build(archive, 0);
        int64_t g = restore_and_check(e);
        CHECK_MSG(g >= min, "generation %lld went back below %lld", (long long)g, min);
        rst_archive_info *info = NULL;
        CHECK_OK(rst_read_archive_info(archive, &info));
        CHECK_EQ(info->object_count, N_OBJECTS);
        rst_free(info);
        char *marker = xasprintf("%s.restoring", archive);
        CHECK(!file_exists(marker));
        printf("generation %lld\n", (long long)g);
        rst_engine_destroy(e);
        free(marker);
        DONE();
    }
    fprintf(stderr, "unknown command %s\n", argv[1]);
    return 2;
}
