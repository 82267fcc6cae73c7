/* callgrind-driver: the benchmark's value mix through the C ABI, for
 * instruction counts that repeat on a noisy machine (Tests/perf/callgrind.sh).
 *
 *   callgrind-driver N [ARCHIVE]
 *                         N objects (default 20000): a tree with fan-out 8,
 *                         each with a bool, an int, a double, a 16-character
 *                         string, 32 bytes, a reference to an earlier object,
 *                         a record {text, count} and 4 ints. One
 *                         rst_save_to_buffer, then one rst_restore_from_buffer
 *                         into a new engine with the first half pre-registered
 *                         and the rest made by a host class's factory.
 *                         With ARCHIVE: then one rst_save to that file and one
 *                         rst_restore of it into a third engine (set up the
 *                         same way), printing the restore's peak memory above
 *                         the memory before it (VmHWM after clear_refs).
 * MIGRATE=1: the restoring engines set class "Node" to version 1 and
 * register a one-step migration from 0 that renames "number" to "amount" and
 * adds "added" = amount + 1 (restore-bench's engine-migrate row); decode
 * reads the migrated record.
 * NO_RESTORE=1 (with FILE_ONLY=1): everything but the file's rst_restore,
 * so that massif's peak of that run is the heap before the restore
 * (callgrind.sh's MASSIF=1 subtracts it).
 * Prints the archive's size; exits 1 (saying which check) if anything fails. */
#include <restoration.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* VmRSS or VmHWM of this process, in KiB (0 if /proc says nothing). */
static long status_kib(const char *field) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256]; long v = 0; size_t n = strlen(field);
    if (!f) return 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, n) == 0 && line[n] == ':') { v = atol(line + n + 1); break; }
    fclose(f);
    return v;
}

typedef struct node {
    int index, parent, ref;
    char ident[16];
    int64_t number, rows[4], count;
    double ratio;
    char title[17], text[13];
    unsigned char blob[32];
    rst_object *obj;
    int decoded;
} node;

static node *nodes;
static int n_nodes;
static rst_object **restored;   /* index -> object in the restoring engine */

#define FAIL(...) do { fprintf(stderr, "callgrind-driver: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

static void encode(void *inst, rst_coder *c) {
    node *n = inst;
    rst_encode_bool(c, "flag", n->index & 1);
    rst_encode_int(c, "number", n->number);
    rst_encode_double(c, "ratio", n->ratio);
    rst_encode_string(c, "title", n->title);
    rst_encode_bytes(c, "blob", n->blob, 32);
    if (n->ref >= 0) rst_encode_object(c, "link", nodes[n->ref].obj);
    rst_encode_begin_record(c, "note");
    rst_encode_string(c, "text", n->text);
    rst_encode_int(c, "count", n->count);
    rst_encode_end_record(c);
    rst_encode_int_array(c, "rows", n->rows, 4);
}

static int migrating;

static rst_status migrate(rst_coder *c, uint32_t from, void *ctx) {
    (void)ctx;
    int64_t amount;
    rst_status st;
    if (from != 0) return RST_ERR_STATE;
    if ((st = rst_coder_rename(c, "number", "amount")) != RST_OK) return st;
    if ((st = rst_decode_int(c, "amount", &amount)) != RST_OK) return st;
    return rst_encode_int(c, "added", amount + 1);
}

static void decode(void *inst, rst_coder *c) {
    node *n = inst;
    bool b; int64_t i, added = 0, rows[4]; double d; const char *s; const void *p; size_t len, count;
    rst_object *ref;
    int ok = rst_decode_bool(c, "flag", &b) == RST_OK
          && rst_decode_int(c, migrating ? "amount" : "number", &i) == RST_OK && i == n->number
          && (!migrating || (rst_decode_int(c, "added", &added) == RST_OK && added == i + 1))
          && rst_decode_double(c, "ratio", &d) == RST_OK
          && rst_decode_string(c, "title", &s, &len) == RST_OK && len == 16
          && rst_decode_bytes(c, "blob", &p, &len) == RST_OK && len == 32
          && (n->index == 0 || rst_decode_object(c, "link", &ref) == RST_OK)
          && rst_decode_begin_record(c, "note") == RST_OK
          && rst_decode_string(c, "text", &s, &len) == RST_OK
          && rst_decode_int(c, "count", &i) == RST_OK
          && rst_decode_end_record(c) == RST_OK
          && rst_decode_int_array(c, "rows", rows, 4, &count) == RST_OK && count == 4;
    if (!ok) FAIL("decode of object %d failed: %s", n->index, rst_last_error());
    n->decoded = 1;
}

static const rst_object_callbacks cb = { encode, decode, NULL, NULL };

static rst_object *factory(rst_engine *e, rst_object *parent, const char *identifier, rst_coder *c, void *ctx) {
    (void)c; (void)ctx;
    /* the identifier is "o<index>" */
    int index = atoi(identifier + 1);
    if (index < 0 || index >= n_nodes) return NULL;
    rst_object *o = NULL;
    if (rst_register_object(e, identifier, parent, "Node", &cb, &nodes[index], &o) != RST_OK) return NULL;
    restored[index] = o;
    return o;
}

int main(int argc, char **argv) {
    n_nodes = argc > 1 ? atoi(argv[1]) : 20000;
    if (n_nodes < 2) FAIL("N must be at least 2");
    nodes = calloc((size_t)n_nodes, sizeof *nodes);
    restored = calloc((size_t)n_nodes, sizeof *restored);
    uint64_t x = 42;
    for (int i = 0; i < n_nodes; i++) {
        node *n = &nodes[i];
        x = x * 6364136223846793005u + 1442695040888963407u;
        n->index = i;
        n->parent = i == 0 ? -1 : (i - 1) / 8;
        n->ref = i == 0 ? -1 : (int)((x >> 33) % (uint64_t)i);
        snprintf(n->ident, sizeof n->ident, "o%d", i);
        n->number = (int64_t)(x >> 32);
        n->ratio = (double)(x >> 11) / 9007199254740992.0;
        for (int k = 0; k < 16; k++) n->title[k] = (char)('a' + (x >> (k * 3)) % 26);
        for (int k = 0; k < 12; k++) n->text[k] = (char)('A' + (x >> (k * 5)) % 26);
        for (int k = 0; k < 32; k++) n->blob[k] = (unsigned char)(x >> (k % 8 * 8));
        for (int k = 0; k < 4; k++) n->rows[k] = (int64_t)((x >> (k * 16)) & 0xFFFF);
        n->count = (int64_t)(x % 1000);
    }
    rst_engine_options opts = RST_ENGINE_OPTIONS_INIT;
    rst_engine *s, *r;
    if (rst_engine_create(&opts, &s) != RST_OK) FAIL("create: %s", rst_last_error());
    for (int i = 0; i < n_nodes; i++)
        if (rst_register_object(s, nodes[i].ident, i ? nodes[nodes[i].parent].obj : NULL, "Node", &cb, &nodes[i], &nodes[i].obj) != RST_OK)
            FAIL("register %d: %s", i, rst_last_error());
    /* FILE_ONLY=1 with ARCHIVE: skip the buffer save and restore (and the
     * file save when ARCHIVE exists), so that the file restore's peak memory
     * is not hidden by heap that they freed. */
    int file_only = argc > 2 && getenv("FILE_ONLY") && strcmp(getenv("FILE_ONLY"), "1") == 0;
    void *buf = NULL; size_t len = 0;
    if (!file_only && rst_save_to_buffer(s, &buf, &len) != RST_OK) FAIL("save: %s", rst_last_error());

    if (rst_engine_create(&opts, &r) != RST_OK) FAIL("create: %s", rst_last_error());
    if (rst_register_class(r, "Node", factory, NULL) != RST_OK) FAIL("class: %s", rst_last_error());
    migrating = getenv("MIGRATE") && strcmp(getenv("MIGRATE"), "1") == 0;
    if (migrating && (rst_set_class_version(r, "Node", 1) != RST_OK || rst_register_migration(r, "Node", 0, migrate, NULL) != RST_OK))
        FAIL("migration: %s", rst_last_error());
    for (int i = 0; i < (n_nodes + 1) / 2; i++)
        if (rst_register_object(r, nodes[i].ident, i ? restored[nodes[i].parent] : NULL, "Node", &cb, &nodes[i], &restored[i]) != RST_OK)
            FAIL("pre-register %d: %s", i, rst_last_error());
    if (!file_only) {
        if (rst_restore_from_buffer(r, buf, len) != RST_OK) FAIL("restore: %s", rst_last_error());
        for (int i = 0; i < n_nodes; i++) if (!nodes[i].decoded) FAIL("object %d was not decoded", i);
    }
    printf("%d objects, archive %zu bytes\n", n_nodes, len);
    if (argc > 2) {
        rst_engine_options fopts = RST_ENGINE_OPTIONS_INIT;
        fopts.archive_path = argv[2];
        rst_engine *fs, *fr;
        if (rst_engine_create(&fopts, &fs) != RST_OK) FAIL("create: %s", rst_last_error());
        for (int i = 0; i < n_nodes; i++)
            if (rst_register_object(fs, nodes[i].ident, i ? nodes[nodes[i].parent].obj : NULL, "Node", &cb, &nodes[i], &nodes[i].obj) != RST_OK)
                FAIL("register %d: %s", i, rst_last_error());
        if ((!file_only || access(argv[2], F_OK) != 0) && rst_save(fs) != RST_OK) FAIL("rst_save: %s", rst_last_error());
        if (file_only) { FILE *a = fopen(argv[2], "rb"); if (a) { fseek(a, 0, SEEK_END); len = (size_t)ftell(a); fclose(a); } }
        if (rst_engine_create(&fopts, &fr) != RST_OK) FAIL("create: %s", rst_last_error());
        if (rst_register_class(fr, "Node", factory, NULL) != RST_OK) FAIL("class: %s", rst_last_error());
        if (migrating && (rst_set_class_version(fr, "Node", 1) != RST_OK || rst_register_migration(fr, "Node", 0, migrate, NULL) != RST_OK))
            FAIL("migration: %s", rst_last_error());
        for (int i = 0; i < n_nodes; i++) nodes[i].decoded = 0;
        for (int i = 0; i < (n_nodes + 1) / 2; i++)
            if (rst_register_object(fr, nodes[i].ident, i ? restored[nodes[i].parent] : NULL, "Node", &cb, &nodes[i], &restored[i]) != RST_OK)
                FAIL("pre-register %d: %s", i, rst_last_error());
        FILE *cr = fopen("/proc/self/clear_refs", "w");
        if (cr) { fputs("5", cr); fclose(cr); }
        long before = status_kib("VmRSS");
        if (getenv("NO_RESTORE") && strcmp(getenv("NO_RESTORE"), "1") == 0) return 0;
        if (rst_restore(fr) != RST_OK) FAIL("rst_restore: %s", rst_last_error());
        long peak = status_kib("VmHWM");
        for (int i = 0; i < n_nodes; i++) if (!nodes[i].decoded) FAIL("object %d was not decoded (file)", i);
        printf("rst_restore of the file: peak %.1f MiB above the %.1f MiB before it (%.2fx the archive)\n",
               (peak - before) / 1024.0, before / 1024.0, (peak - before) * 1024.0 / (double)len);
        rst_engine_destroy(fr);
        rst_engine_destroy(fs);
    }
    rst_free(buf);
    rst_engine_destroy(r);
    rst_engine_destroy(s);
    free(restored); free(nodes);
    return 0;
}
