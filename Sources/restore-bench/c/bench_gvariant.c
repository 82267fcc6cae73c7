/* GLib's GVariant, as a C program stores state: one a{sv} per object, the
 * way GTK 4.22's save-state stores a window's state (a vardict of named
 * values).
 *
 * Archive type a(ssia{sv}): one (identifier, class name, parent, values)
 * tuple per object, in pre-order. The parent and the reference ("link")
 * are the target's pre-order index (int32): an index is what a program
 * serializing its own array would write, it is the cheapest form to store
 * and to resolve, and it matches the Codable baselines (a path would cost a
 * string build at save and a lookup at restore). The values:
 *
 *   flag b, number x, ratio d, title s, blob ay (fixed array), link i
 *   (absent at the root), note a{sv} {text s, count x}, rows ax (fixed array)
 *
 * save    = a GVariantBuilder over the host's C structs (one nested builder
 *           per object and per note), g_variant_builder_end, then
 *           g_variant_get_data / g_variant_get_size, which serialize. The
 *           archive is the serialized variant's own buffer (not copied).
 * restore = the bytes copied to a fresh buffer (untimed, as if read from a
 *           file), then timed: g_variant_new_from_data(trusted = FALSE, as
 *           for a file), and for every object g_variant_get_child_value,
 *           g_variant_get "(&s&si@a{sv})", g_variant_lookup /
 *           g_variant_lookup_value for each value, a malloc'd bench_obj
 *           filled (strings copied, class name mapped to its index through
 *           a GHashTable made once), parents linked; references linked in a
 *           second pass (an index may point forward in general).
 * verify  = every value, class, parent and reference identity. */
#include <glib.h>
#include "bench_c.h"

typedef struct ctx {
    const bench_graph *g;
    bench_obj *live;
    GVariant *archive;                 /* the saved variant; its data is the archive */
    gsize archive_len;
    guint8 *input;                     /* restore's input: a copy of the archive bytes */
    bench_obj **restored;              /* restore's result, in archive order */
    uint64_t restored_count;
    GHashTable *class_index;           /* class name -> index + 1 */
    char err[1024];
    char info[256];
} ctx;

#define ARCHIVE_TYPE "a(ssia{sv})"

BENCH_EXPORT const char *bench_c_name(void) { return "GLib GVariant a{sv} per object (C)"; }
BENCH_EXPORT const char *bench_c_error(void *p) { return ((ctx *)p)->err; }
BENCH_EXPORT const char *bench_c_info(void *p) { return ((ctx *)p)->info; }

static void free_restored(ctx *x) {
    if (x->restored == NULL) return;
    for (uint64_t i = 0; i < x->restored_count; i++) {
        if (x->restored[i]) { bench_free_strings(x->restored[i]); free(x->restored[i]); }
    }
    free(x->restored);
    x->restored = NULL;
    x->restored_count = 0;
}

BENCH_EXPORT void bench_c_end_restore(void *p) {
    ctx *x = p;
    free_restored(x);
    g_free(x->input);
    x->input = NULL;
}

BENCH_EXPORT void bench_c_close(void *p) {
    ctx *x = p;
    if (x == NULL) return;
    bench_c_end_restore(x);
    if (x->archive) g_variant_unref(x->archive);
    if (x->class_index) g_hash_table_destroy(x->class_index);
    bench_free_live(x->live, x->g->n);
    free(x);
}

BENCH_EXPORT void *bench_c_open(const bench_graph *g, char *err, size_t errlen) {
    if (bench_check_graph(g, err, errlen) != 0) return NULL;
    if (g->n > (uint64_t)G_MAXINT32) { snprintf(err, errlen, "too many objects for int32 indexes"); return NULL; }
    ctx *x = calloc(1, sizeof *x);
    if (x == NULL) { snprintf(err, errlen, "calloc failed"); return NULL; }
    x->g = g;
    snprintf(x->info, sizeof x->info, "GLib %u.%u.%u", glib_major_version, glib_minor_version, glib_micro_version);
    x->live = bench_live_objects(g);
    if (x->live == NULL) { snprintf(err, errlen, "out of memory"); bench_c_close(x); return NULL; }
    x->class_index = g_hash_table_new(g_str_hash, g_str_equal);
    for (uint64_t k = 0; k < g->class_count; k++)
        g_hash_table_insert(x->class_index, (gpointer)g->class_names[k], GSIZE_TO_POINTER(k + 1));
    return x;
}

BENCH_EXPORT int bench_c_prepare_save(void *p) {
    ctx *x = p;
    if (x->archive) { g_variant_unref(x->archive); x->archive = NULL; x->archive_len = 0; }
    return 0;
}

BENCH_EXPORT int64_t bench_c_save(void *p) {
    ctx *x = p;
    const bench_graph *g = x->g;
    GVariantBuilder all;
    g_variant_builder_init(&all, G_VARIANT_TYPE(ARCHIVE_TYPE));
    for (uint64_t i = 0; i < g->n; i++) {
        const bench_obj *o = &x->live[i];
        GVariantBuilder d, note;
        g_variant_builder_init(&d, G_VARIANT_TYPE_VARDICT);
        g_variant_builder_add(&d, "{sv}", "flag", g_variant_new_boolean(o->flag));
        g_variant_builder_add(&d, "{sv}", "number", g_variant_new_int64(o->number));
        g_variant_builder_add(&d, "{sv}", "ratio", g_variant_new_double(o->ratio));
        g_variant_builder_add(&d, "{sv}", "title", g_variant_new_string(o->title));
        g_variant_builder_add(&d, "{sv}", "blob", g_variant_new_fixed_array(G_VARIANT_TYPE_BYTE, o->blob, BENCH_BLOB, 1));
        if (o->ref) g_variant_builder_add(&d, "{sv}", "link", g_variant_new_int32((gint32)o->ref->index));
        g_variant_builder_init(&note, G_VARIANT_TYPE_VARDICT);
        g_variant_builder_add(&note, "{sv}", "text", g_variant_new_string(o->note_text));
        g_variant_builder_add(&note, "{sv}", "count", g_variant_new_int64(o->note_count));
        g_variant_builder_add(&d, "{sv}", "note", g_variant_builder_end(&note));
        g_variant_builder_add(&d, "{sv}", "rows", g_variant_new_fixed_array(G_VARIANT_TYPE_INT64, o->rows, BENCH_ROWS, sizeof(int64_t)));
        g_variant_builder_add(&all, "(ssi@a{sv})", o->identifier, g->class_names[o->class_index],
                              (gint32)(o->parent ? o->parent->index : -1), g_variant_builder_end(&d));
    }
    x->archive = g_variant_ref_sink(g_variant_builder_end(&all));
    const void *data = g_variant_get_data(x->archive);     /* serializes */
    x->archive_len = g_variant_get_size(x->archive);
    if (data == NULL && x->archive_len != 0) { snprintf(x->err, sizeof x->err, "g_variant_get_data returned NULL"); return -1; }
    return (int64_t)x->archive_len;
}

BENCH_EXPORT int bench_c_prepare_restore(void *p) {
    ctx *x = p;
    bench_c_end_restore(x);
    if (x->archive == NULL) { snprintf(x->err, sizeof x->err, "nothing saved"); return -1; }
    x->input = g_malloc(x->archive_len ? x->archive_len : 1);      /* 16-byte aligned, as a file read would be */
    memcpy(x->input, g_variant_get_data(x->archive), x->archive_len);
    return 0;
}

#define BAD(...) do { snprintf(x->err, sizeof x->err, __VA_ARGS__); goto fail; } while (0)

BENCH_EXPORT int bench_c_restore(void *p) {
    ctx *x = p;
    GVariant *root = g_variant_new_from_data(G_VARIANT_TYPE(ARCHIVE_TYPE), x->input, x->archive_len, FALSE, NULL, NULL);
    g_variant_ref_sink(root);
    gsize n = g_variant_n_children(root);
    int32_t *links = malloc((n ? n : 1) * sizeof *links);
    x->restored = calloc(n ? n : 1, sizeof *x->restored);
    x->restored_count = n;
    GVariant *rec = NULL, *dict = NULL, *v = NULL, *note = NULL;
    if (links == NULL || x->restored == NULL) BAD("out of memory");
    for (gsize i = 0; i < n; i++) {
        const char *id, *cls;
        gint32 parent, link;
        rec = g_variant_get_child_value(root, i);
        g_variant_get(rec, "(&s&si@a{sv})", &id, &cls, &parent, &dict);
        bench_obj *o = calloc(1, sizeof *o);
        if (o == NULL) BAD("out of memory");
        x->restored[i] = o;
        o->index = -1;
        o->identifier = bench_strdup(id);
        gsize k = GPOINTER_TO_SIZE(g_hash_table_lookup(x->class_index, cls));
        if (k == 0) BAD("object %zu: unknown class %s", (size_t)i, cls);
        o->class_index = (int64_t)k - 1;
        if (parent >= 0) {
            if ((gsize)parent >= i) BAD("object %zu: parent index %d is not earlier", (size_t)i, parent);
            o->parent = x->restored[parent];
        }
        gboolean flag;
        gint64 number, count;
        gdouble ratio;
        if (!g_variant_lookup(dict, "flag", "b", &flag)) BAD("object %zu: no flag", (size_t)i);
        o->flag = flag;
        if (!g_variant_lookup(dict, "number", "x", &number)) BAD("object %zu: no number", (size_t)i);
        o->number = number;
        if (!g_variant_lookup(dict, "ratio", "d", &ratio)) BAD("object %zu: no ratio", (size_t)i);
        o->ratio = ratio;
        if (!g_variant_lookup(dict, "title", "s", &o->title)) BAD("object %zu: no title", (size_t)i);
        gsize len = 0;
        v = g_variant_lookup_value(dict, "blob", G_VARIANT_TYPE_BYTESTRING);
        if (v == NULL) BAD("object %zu: no blob", (size_t)i);
        const guint8 *bytes = g_variant_get_fixed_array(v, &len, 1);
        if (len != BENCH_BLOB) BAD("object %zu: blob of %zu bytes", (size_t)i, (size_t)len);
        memcpy(o->blob, bytes, BENCH_BLOB);
        g_variant_unref(v); v = NULL;
        links[i] = g_variant_lookup(dict, "link", "i", &link) ? link : -1;
        note = g_variant_lookup_value(dict, "note", G_VARIANT_TYPE_VARDICT);
        if (note == NULL) BAD("object %zu: no note", (size_t)i);
        if (!g_variant_lookup(note, "text", "s", &o->note_text)) BAD("object %zu: no note.text", (size_t)i);
        if (!g_variant_lookup(note, "count", "x", &count)) BAD("object %zu: no note.count", (size_t)i);
        o->note_count = count;
        g_variant_unref(note); note = NULL;
        v = g_variant_lookup_value(dict, "rows", G_VARIANT_TYPE("ax"));
        if (v == NULL) BAD("object %zu: no rows", (size_t)i);
        const gint64 *rows = g_variant_get_fixed_array(v, &len, sizeof(gint64));
        if (len != BENCH_ROWS) BAD("object %zu: %zu rows", (size_t)i, (size_t)len);
        memcpy(o->rows, rows, sizeof o->rows);
        g_variant_unref(v); v = NULL;
        g_variant_unref(dict); dict = NULL;
        g_variant_unref(rec); rec = NULL;
    }
    /* References may point anywhere in the array: link after all exist. */
    for (gsize i = 0; i < n; i++) {
        if (links[i] < 0) continue;
        if ((gsize)links[i] >= n) BAD("object %zu: bad reference index %d", (size_t)i, links[i]);
        x->restored[i]->ref = x->restored[links[i]];
    }
    free(links);
    g_variant_unref(root);
    return 0;
fail:
    if (v) g_variant_unref(v);
    if (note) g_variant_unref(note);
    if (dict) g_variant_unref(dict);
    if (rec) g_variant_unref(rec);
    free(links);
    g_variant_unref(root);
    return -1;
}

BENCH_EXPORT const char *bench_c_verify(void *p) {
    ctx *x = p;
    if (x->restored == NULL) return "nothing restored";
    if (x->restored_count != x->g->n) {
        snprintf(x->err, sizeof x->err, "restored %llu objects, expected %llu",
                 (unsigned long long)x->restored_count, (unsigned long long)x->g->n);
        return x->err;
    }
    return bench_check_graph_objects(x->g, x->restored, x->err, sizeof x->err) ? x->err : NULL;
}
