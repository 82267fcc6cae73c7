/* broken.c: the negative controls of Tests/deathtest/run.sh — a small
 * program that restores at start and autosaves while it runs (like the
 * examples' demo loops), with one deliberate fault per mode. `restorectl
 * test` must catch each one and name it.
 *
 *   broken DIR good            no fault: every point and the round trip pass
 *   broken DIR drop-key        decode forgets the key "label": the round trip
 *                              names 'root label'
 *   broken DIR corrupt         decode adds 1000 to "count": the round trip
 *                              names 'root count'
 *   broken DIR forget-child    registers "root/child" only until it has run
 *                              once: the round trip names 'root/child'
 *   broken DIR decline-later   "root/child" comes back from a factory that
 *                              declines a record written by the second launch
 *                              or later (each launch counts itself in "n"):
 *                              after save-replaced the relaunch skips it and
 *                              the point fails naming 'root/child'
 *   broken DIR idle            restores, then never saves: save points are
 *                              NOT REACHED (restorectl gives up at --timeout),
 *                              and the run exits 1 (0 with --allow-not-reached)
 *   broken DIR exit            restores and exits at once: NOT REACHED (exited)
 *   broken DIR drift           restores, and 100 ms later (after its first
 *                              frame, as GTK's select-on-focus moves a
 *                              restored cursor) moves "count" by one, once:
 *                              the round trip names 'root count' when it
 *                              saves at the first idle moment (--settle),
 *                              not right after the restore (--settle 0)
 *   broken DIR sealed          no fault, "label" ENCRYPTED (sealed with a key
 *                              of the program's): the round trip passes,
 *                              though sealed bytes differ at every save
 *   broken DIR sealed-drop     "label" ENCRYPTED, and decode forgets it: the
 *                              round trip still names 'root label'
 *
 * Objects: "root" (count int, label string, ratio double), "root/child"
 * (n int). At most 60 s, then it saves and exits.
 */
#define _POSIX_C_SOURCE 200809L
#include <restoration.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *mode;
static int64_t count, n;
static char label[64] = "start";
static double ratio = 0.5;

static void root_encode(void *i, rst_coder *c) {
    (void)i;
    rst_encode_int(c, "count", count);
    rst_encode_string(c, "label", label);
    rst_encode_double(c, "ratio", ratio);
}
static void root_decode(void *i, rst_coder *c) {
    (void)i;
    rst_decode_int(c, "count", &count);
    if (strcmp(mode, "corrupt") == 0) count += 1000;
    const char *s = NULL;
    if (strcmp(mode, "drop-key") != 0 && strcmp(mode, "sealed-drop") != 0 && rst_decode_string(c, "label", &s, NULL) == RST_OK)
        snprintf(label, sizeof label, "%s", s);
    rst_decode_double(c, "ratio", &ratio);
}
/* The key of the sealed modes (a real program takes it from a keyring). */
static rst_status the_key(rst_engine *e, uint8_t key[32], void *ctx) {
    (void)e; (void)ctx;
    for (int i = 0; i < 32; i++) key[i] = (uint8_t)(i * 7 + 1);
    return RST_OK;
}

static void child_encode(void *i, rst_coder *c) { (void)i; rst_encode_int(c, "n", n); }
static void child_decode(void *i, rst_coder *c) { (void)i; rst_decode_int(c, "n", &n); }
static const rst_object_callbacks root_cb = { root_encode, root_decode, NULL, NULL };
static const rst_object_callbacks child_cb = { child_encode, child_decode, NULL, NULL };

static rst_object *child_factory(rst_engine *e, rst_object *parent, const char *identifier, rst_coder *c, void *ctx) {
    (void)ctx;
    int64_t launches = 0;
    rst_decode_int(c, "n", &launches);
    if (launches >= 2) return NULL;   /* the fault: it cannot read what a later launch wrote */
    rst_object *o = NULL;
    rst_register_object(e, identifier, parent, "Child", &child_cb, NULL, &o);
    return o;
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: broken DIR good|drop-key|corrupt|forget-child|decline-later|idle|exit|drift|sealed|sealed-drop\n"); return 2; }
    mode = argv[2];
    char archive[4096], ran[4096];
    snprintf(archive, sizeof archive, "%s/broken.rst", argv[1]);
    snprintf(ran, sizeof ran, "%s/ran-once", argv[1]);
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.archive_path = archive;
    o.autosave_delay_ms = 20;
    bool sealed = strncmp(mode, "sealed", 6) == 0;
    if (sealed) o.encryption_key = the_key;
    rst_engine *e = NULL;
    if (rst_engine_create(&o, &e) != RST_OK) { fprintf(stderr, "broken: %s\n", rst_last_error()); return 1; }
    if (sealed && rst_set_key_sensitivity(e, "Root", "label", RST_SENSITIVITY_ENCRYPTED) != RST_OK) {
        fprintf(stderr, "broken: %s\n", rst_last_error());
        return 1;
    }
    rst_object *root = NULL;
    rst_register_object(e, "root", NULL, "Root", &root_cb, NULL, &root);
    bool forget = strcmp(mode, "forget-child") == 0 && access(ran, F_OK) == 0;
    bool later = strcmp(mode, "decline-later") == 0;
    if (later) rst_register_class(e, "Child", child_factory, NULL);
    else if (!forget) rst_register_object(e, "child", root, "Child", &child_cb, NULL, NULL);
    rst_status s = rst_restore(e);
    if (later) {   /* this launch counts itself */
        if (!rst_find_object(e, "root/child")) rst_register_object(e, "child", root, "Child", &child_cb, NULL, NULL);
        n++;
    }
    printf("broken %s: restore: %s, count %lld, label %s\n", mode, rst_status_name(s), (long long)count, label);
    fflush(stdout);
    if (strcmp(mode, "forget-child") == 0) { FILE *f = fopen(ran, "w"); if (f) fclose(f); }
    if (strcmp(mode, "exit") == 0) { rst_engine_destroy(e); return 0; }
    for (int i = 0; i < 3000; i++) {   /* 60 s */
        if (strcmp(mode, "drift") == 0) {
            if (i == 5) { count++; rst_mark_dirty(e, NULL); }
        } else if (strcmp(mode, "idle") != 0) {
            count++;
            snprintf(label, sizeof label, "label %lld", (long long)count);
            ratio = (double)count / 7;
            if (!later) n = count * 2;
            rst_mark_dirty(e, NULL);
        }
        nanosleep(&(struct timespec){ .tv_nsec = 20000000 }, NULL);
        rst_dispatch(e);
    }
    rst_save(e);
    rst_engine_destroy(e);
    return 0;
}
