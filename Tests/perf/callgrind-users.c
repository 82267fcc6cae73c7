/* callgrind-users: the shape of state users have, through the C ABI, for
 * instruction counts beside Tests/perf/callgrind-driver.c (callgrind.sh).
 *
 *   callgrind-users N     N objects (default 20000) of 20 classes in a tree
 *                         six levels below its root (fan-out 6), each named
 *                         by a 24-character identifier and carrying the kinds
 *                         of values the first driver has: a bool, a timestamp
 *                         in milliseconds under a key of its class's own, a
 *                         double, a string of 0 to 60 characters, 8 to 40
 *                         bytes, a reference to an earlier object, a record
 *                         {text of 0 to 40 characters, a negative count} and
 *                         4 ints (an id and a hash over the full 64-bit range,
 *                         a negative number, a timestamp in microseconds). One
 *                         rst_save_to_buffer, then one rst_restore_from_buffer
 *                         into a new engine with the first half pre-registered
 *                         and the rest made by their classes' factories.
 * SMALL=1: every integer is replaced by a small one (0 to 63, one varint
 * byte), the rest unchanged: callgrind.sh compares the two, since integers of
 * any magnitude should cost about the same.
 * Prints the archive's size; exits 1 (saying which check) if anything fails. */
#include <restoration.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLASSES 20
#define FANOUT 6
#define IDENT_LEN 24

static const char *class_names[CLASSES] = {
    "ApplicationWindow", "DocumentTab", "EditorView", "ScrollPosition", "SelectionRange",
    "SearchPanel", "SidebarSection", "TreeExpansion", "SplitLayout", "TerminalSession",
    "MediaPlayer", "PlaylistEntry", "MailFolder", "MessageDraft", "CalendarWeek",
    "FormField", "UndoHistory", "ToolbarState", "NetworkRequest", "PreferencePage",
};
/* the key under which each class keeps its timestamp */
static const char *class_keys[CLASSES] = {
    "openedAtMs", "focusedAtMs", "editedAtMs", "scrolledAtMs", "selectedAtMs",
    "searchedAtMs", "resizedAtMs", "expandedAtMs", "splitAtMs", "startedAtMs",
    "playedAtMs", "queuedAtMs", "syncedAtMs", "savedAtMs", "weekStartMs",
    "filledAtMs", "undoneAtMs", "shownAtMs", "sentAtMs", "visitedAtMs",
};

typedef struct node {
    int index, parent, ref, cls, title_len, text_len, blob_len;
    char ident[IDENT_LEN + 1];
    int64_t created_ms, count, rows[4];
    double ratio;
    char title[61], text[41];
    unsigned char blob[40];
    rst_object *obj;
    int decoded;
} node;

static node *nodes;
static int n_nodes;
static rst_object **restored;   /* index -> object in the restoring engine */

#define FAIL(...) do { fprintf(stderr, "callgrind-users: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

static void encode(void *inst, rst_coder *c) {
    node *n = inst;
    rst_encode_bool(c, "visible", n->index & 1);
    rst_encode_int(c, class_keys[n->cls], n->created_ms);
    rst_encode_double(c, "zoomRatio", n->ratio);
    rst_encode_string(c, "title", n->title);
    rst_encode_bytes(c, "token", n->blob, (size_t)n->blob_len);
    if (n->ref >= 0) rst_encode_object(c, "related", nodes[n->ref].obj);
    rst_encode_begin_record(c, "status");
    rst_encode_string(c, "message", n->text);
    rst_encode_int(c, "balance", n->count);
    rst_encode_end_record(c);
    rst_encode_int_array(c, "columns", n->rows, 4);
}

static void decode(void *inst, rst_coder *c) {
    node *n = inst;
    bool b; int64_t i, rows[4]; double d; const char *s; const void *p; size_t len, count;
    rst_object *ref;
    int ok = rst_decode_bool(c, "visible", &b) == RST_OK && b == (n->index & 1)
          && rst_decode_int(c, class_keys[n->cls], &i) == RST_OK && i == n->created_ms
          && rst_decode_double(c, "zoomRatio", &d) == RST_OK && d == n->ratio
          && rst_decode_string(c, "title", &s, &len) == RST_OK && len == (size_t)n->title_len
          && rst_decode_bytes(c, "token", &p, &len) == RST_OK && len == (size_t)n->blob_len
          && (n->ref < 0 || rst_decode_object(c, "related", &ref) == RST_OK)
          && rst_decode_begin_record(c, "status") == RST_OK
          && rst_decode_string(c, "message", &s, &len) == RST_OK && len == (size_t)n->text_len
          && rst_decode_int(c, "balance", &i) == RST_OK && i == n->count
          && rst_decode_end_record(c) == RST_OK
          && rst_decode_int_array(c, "columns", rows, 4, &count) == RST_OK && count == 4
          && memcmp(rows, n->rows, sizeof rows) == 0;
    if (!ok) FAIL("decode of object %d (%s) failed: %s", n->index, class_names[n->cls], rst_last_error());
    n->decoded = 1;
}

static const rst_object_callbacks cb = { encode, decode, NULL, NULL };

static rst_object *factory(rst_engine *e, rst_object *parent, const char *identifier, rst_coder *c, void *ctx) {
    (void)c;
    /* the identifier ends in the index's 13 digits */
    if (strlen(identifier) != IDENT_LEN) return NULL;
    int index = atoi(identifier + IDENT_LEN - 13);
    if (index < 0 || index >= n_nodes) return NULL;
    node *n = &nodes[index];
    if ((const char *)ctx != class_names[n->cls]) return NULL;
    rst_object *o = NULL;
    if (rst_register_object(e, identifier, parent, class_names[n->cls], &cb, n, &o) != RST_OK) return NULL;
    restored[index] = o;
    return o;
}

int main(int argc, char **argv) {
    n_nodes = argc > 1 ? atoi(argv[1]) : 20000;
    if (n_nodes < 2) FAIL("N must be at least 2");
    int small = getenv("SMALL") && strcmp(getenv("SMALL"), "1") == 0;
    nodes = calloc((size_t)n_nodes, sizeof *nodes);
    restored = calloc((size_t)n_nodes, sizeof *restored);
    if (!nodes || !restored) FAIL("out of memory");
    uint64_t x = 42, y;
#define NEXT() (x = x * 6364136223846793005u + 1442695040888963407u)
#define INT(v) (small ? (int64_t)((uint64_t)(v) & 63) : (int64_t)(v))
    for (int i = 0; i < n_nodes; i++) {
        node *n = &nodes[i];
        NEXT();
        n->index = i;
        n->parent = i == 0 ? -1 : (i - 1) / FANOUT;
        n->ref = i == 0 ? -1 : (int)((x >> 33) % (uint64_t)i);
        n->cls = (int)((x >> 20) % CLASSES);
        /* 10 characters of the class's name ('_' after a shorter one),
         * '-', 13 digits: 24 */
        const char *name = class_names[n->cls];
        size_t name_len = strlen(name) < 10 ? strlen(name) : 10;
        memset(n->ident, '_', 10);
        memcpy(n->ident, name, name_len);
        snprintf(n->ident + 10, sizeof n->ident - 10, "-%013d", i % 1000000000);
        n->created_ms = INT(1700000000000 + (int64_t)(x >> 28));          /* ~2023, in ms */
        y = NEXT();
        n->rows[0] = INT(y);                                               /* an id: full range */
        y = NEXT();
        n->rows[1] = INT(y ^ (y << 17));                                   /* a hash: full range */
        y = NEXT();
        n->rows[2] = small ? INT(y) : -(int64_t)(y >> (y % 40));           /* negative */
        y = NEXT();
        n->rows[3] = INT(1700000000000000 + (int64_t)(y >> 14));           /* microseconds */
        n->ratio = (double)(x >> 11) / 9007199254740992.0;
        n->title_len = (int)(x % 61);
        for (int k = 0; k < n->title_len; k++) n->title[k] = (char)('a' + (x >> (k % 21 * 3)) % 26);
        NEXT();
        n->text_len = (int)(x % 41);
        for (int k = 0; k < n->text_len; k++) n->text[k] = (char)('A' + (x >> (k % 12 * 5)) % 26);
        n->blob_len = 8 + (int)((x >> 8) % 33);
        for (int k = 0; k < n->blob_len; k++) n->blob[k] = (unsigned char)(x >> (k % 8 * 8));
        n->count = small ? INT(x >> 3) : -(int64_t)(x >> 1);                /* negative */
    }
    rst_engine_options opts = RST_ENGINE_OPTIONS_INIT;
    rst_engine *s, *r;
    if (rst_engine_create(&opts, &s) != RST_OK) FAIL("create: %s", rst_last_error());
    for (int i = 0; i < n_nodes; i++)
        if (rst_register_object(s, nodes[i].ident, i ? nodes[nodes[i].parent].obj : NULL, class_names[nodes[i].cls],
                                &cb, &nodes[i], &nodes[i].obj) != RST_OK)
            FAIL("register %d: %s", i, rst_last_error());
    void *buf = NULL; size_t len = 0;
    if (rst_save_to_buffer(s, &buf, &len) != RST_OK) FAIL("save: %s", rst_last_error());

    if (rst_engine_create(&opts, &r) != RST_OK) FAIL("create: %s", rst_last_error());
    for (int k = 0; k < CLASSES; k++)
        if (rst_register_class(r, class_names[k], factory, (void *)class_names[k]) != RST_OK)
            FAIL("class %s: %s", class_names[k], rst_last_error());
    for (int i = 0; i < (n_nodes + 1) / 2; i++)
        if (rst_register_object(r, nodes[i].ident, i ? restored[nodes[i].parent] : NULL, class_names[nodes[i].cls],
                                &cb, &nodes[i], &restored[i]) != RST_OK)
            FAIL("pre-register %d: %s", i, rst_last_error());
    if (rst_restore_from_buffer(r, buf, len) != RST_OK) FAIL("restore: %s", rst_last_error());
    for (int i = 0; i < n_nodes; i++) if (!nodes[i].decoded) FAIL("object %d was not decoded", i);
    int depth = 0;
    for (int i = n_nodes - 1; i > 0; i = nodes[i].parent) depth++;
    printf("%d objects of %d classes, %d levels below the root, %s integers, archive %zu bytes\n",
           n_nodes, CLASSES, depth, small ? "small" : "full-range", len);
    rst_free(buf);
    rst_engine_destroy(r);
    rst_engine_destroy(s);
    free(restored); free(nodes);
    return 0;
}
