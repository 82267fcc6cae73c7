/* restoration-gtk: the widgets of a GTK 4 tree as restoration objects.
 * See restoration-gtk.h for the contract and docs/GTK.md for the user's
 * view. One node per named widget: what to save (capture), what to apply
 * at restore (apply), which signals mark the engine dirty (watch). */
#define _GNU_SOURCE 1
#include "restoration-gtk.h"
#include <glib-unix.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "restoration-gtk"

/* Values marked sensitive are written by no save; librestoration 1.2 has
 * the call, an older one does not: then the text is still never written,
 * because password entries encode no text at all. */
#pragma weak rst_coder_set_sensitivity

#define SKIP_KEY     "rst-gtk-skip"
#define TRANSPARENT_KEY "rst-gtk-transparent"
#define NODE_KEY     "rst-gtk-node"
#define IDENTITY_KEY "rst-gtk-identity"
/* Frames a restored scroll offset waits for the content to grow to it. */
#define SCROLL_WAIT_FRAMES 120
/* At most this many selected items are saved. */
#define MAX_SELECTED 10000

typedef enum kind {
    K_SCOPE, K_WINDOW, K_PANED, K_STACK, K_NOTEBOOK, K_SPIN, K_EDITABLE, K_TEXTVIEW,
    K_TOGGLE, K_RANGE, K_SCROLLED, K_LIST, K_EXPANDER
} kind;

typedef struct value {
    const char *key;            /* a literal */
    char type;                  /* 'b' 'i' 'd' 's' 'a' */
    gboolean b;
    gint64 i;
    double d;
    char *s;
    GPtrArray *a;               /* of char * */
} value;

typedef struct tracker {        /* one per engine */
    rst_engine *engine;
    guint source;               /* the engine's descriptor in the main loop */
    int refs;                   /* nodes alive */
    int applying;               /* > 0 while the library changes widgets */
    gboolean has_file;          /* an archive_path: flushes can save */
} tracker;

typedef struct identity { rst_gtk_identity_fn fn; void *ctx; } identity;

#define WATCHED 3
typedef struct node {
    tracker *t;
    struct node *top;           /* the tracked root's node */
    GtkWidget *widget;          /* weak: NULL once destroyed */
    kind kind;
    rst_object *object;
    GArray *snap;               /* of value: the last state seen */
    gboolean frozen;            /* root only: unrealized, widgets going away */
    GObject *watched[WATCHED];  /* buffer, adjustments, model: strong refs */
    /* a restored scroll position waiting for a layout */
    gboolean pending;
    double ph, pv, ptop_off;
    char *ptop;
    guint tick;
    int ticks, stable;
    gboolean applied_once;
    gboolean secret;            /* an entry once seen hiding its text: never saved */
    gboolean laying_out;        /* a scroll's bounds moved in this dispatch (a layout) */
    double bounds[WATCHED][2];  /* a watched adjustment's upper and page size, last seen */
    guint layout_idle;          /* clears `laying_out` before the next input is handled */
    double last_upper[2];       /* the content's size at the last frame (h, v) */
    gboolean top_looked;        /* top_pos: where the restored top row is in the model */
    guint top_pos;
} node;

static GHashTable *trackers;    /* rst_engine * -> tracker * */
static const rst_object_callbacks node_callbacks;

/* ---- small helpers ---- */

static void value_clear(value *v) {
    g_free(v->s);
    if (v->a) g_ptr_array_unref(v->a);
}

static value *add(GArray *snap, const char *key, char type) {
    value v = { .key = key, .type = type };
    g_array_append_val(snap, v);
    return &g_array_index(snap, value, snap->len - 1);
}
static void add_bool(GArray *s, const char *k, gboolean b) { add(s, k, 'b')->b = b; }
static void add_int(GArray *s, const char *k, gint64 i) { add(s, k, 'i')->i = i; }
static void add_double(GArray *s, const char *k, double d) { add(s, k, 'd')->d = d; }
static void add_string(GArray *s, const char *k, const char *str) {
    if (str && g_utf8_validate(str, -1, NULL)) add(s, k, 's')->s = g_strdup(str);
}

static const char *widget_id(GtkWidget *w) {
    const char *name = gtk_widget_get_name(w);
    if (name && *name && strcmp(name, G_OBJECT_TYPE_NAME(w)) != 0) return name;
    if (GTK_IS_BUILDABLE(w)) {
        const char *id = gtk_buildable_get_buildable_id(GTK_BUILDABLE(w));
        if (id && *id && !g_str_has_prefix(id, "___object_")) return id;  /* GtkBuilder's own ids */
    }
    return NULL;
}

static gboolean is_list(GtkWidget *w) {
    return GTK_IS_LIST_VIEW(w) || GTK_IS_GRID_VIEW(w) || GTK_IS_COLUMN_VIEW(w);
}

static gboolean is_password(GtkWidget *w) {
    if (GTK_IS_PASSWORD_ENTRY(w)) return TRUE;
    if (GTK_IS_ENTRY(w)) return !gtk_entry_get_visibility(GTK_ENTRY(w));
    if (GTK_IS_TEXT(w)) return !gtk_text_get_visibility(GTK_TEXT(w));
    return FALSE;
}

static kind kind_of(GtkWidget *w) {
    if (GTK_IS_WINDOW(w)) return K_WINDOW;
    if (GTK_IS_PANED(w)) return K_PANED;
    if (GTK_IS_STACK(w)) return K_STACK;
    if (GTK_IS_NOTEBOOK(w)) return K_NOTEBOOK;
    if (GTK_IS_SPIN_BUTTON(w)) return K_SPIN;
    if (GTK_IS_EDITABLE(w)) return K_EDITABLE;
    if (GTK_IS_TEXT_VIEW(w)) return K_TEXTVIEW;
    if (GTK_IS_CHECK_BUTTON(w) || GTK_IS_TOGGLE_BUTTON(w) || GTK_IS_SWITCH(w)) return K_TOGGLE;
    if (GTK_IS_RANGE(w)) return K_RANGE;
    if (GTK_IS_SCROLLED_WINDOW(w)) return K_SCROLLED;
    if (is_list(w)) return K_LIST;
    if (GTK_IS_EXPANDER(w)) return K_EXPANDER;
    return K_SCOPE;
}

static GListModel *list_model(GtkWidget *w) {
    if (GTK_IS_LIST_VIEW(w)) return G_LIST_MODEL(gtk_list_view_get_model(GTK_LIST_VIEW(w)));
    if (GTK_IS_GRID_VIEW(w)) return G_LIST_MODEL(gtk_grid_view_get_model(GTK_GRID_VIEW(w)));
    if (GTK_IS_COLUMN_VIEW(w)) return G_LIST_MODEL(gtk_column_view_get_model(GTK_COLUMN_VIEW(w)));
    return NULL;
}

/* The item's identity, copied; NULL when it has none. */
static char *item_identity(GtkWidget *view, GObject *item) {
    if (!item) return NULL;
    const identity *id = g_object_get_data(G_OBJECT(view), IDENTITY_KEY);
    const char *s = NULL;
    if (id) s = id->fn(item, id->ctx);
    else if (GTK_IS_STRING_OBJECT(item)) s = gtk_string_object_get_string(GTK_STRING_OBJECT(item));
    return s && *s && g_utf8_validate(s, -1, NULL) ? g_strdup(s) : NULL;
}
static gboolean has_identity(GtkWidget *view) {
    if (g_object_get_data(G_OBJECT(view), IDENTITY_KEY)) return TRUE;
    GListModel *m = list_model(view);
    if (!m) return FALSE;
    if (g_type_is_a(g_list_model_get_item_type(m), GTK_TYPE_STRING_OBJECT)) return TRUE;
    /* Selection models often say G_TYPE_OBJECT: look at an item. */
    GObject *first = g_list_model_get_n_items(m) > 0 ? g_list_model_get_item(m, 0) : NULL;
    gboolean strings = first && GTK_IS_STRING_OBJECT(first);
    if (first) g_object_unref(first);
    return strings;
}
static char *identity_at(GtkWidget *view, GListModel *m, guint pos) {
    GObject *item = g_list_model_get_item(m, pos);
    char *s = item_identity(view, item);
    if (item) g_object_unref(item);
    return s;
}
static guint find_identity(GtkWidget *view, GListModel *m, const char *wanted) {
    guint n = g_list_model_get_n_items(m);
    for (guint i = 0; i < n; i++) {
        char *s = identity_at(view, m, i);
        gboolean same = s && strcmp(s, wanted) == 0;
        g_free(s);
        if (same) return i;
    }
    return GTK_INVALID_LIST_POSITION;
}

static GtkAdjustment *vadjustment(node *n) {
    if (n->kind == K_SCROLLED) return gtk_scrolled_window_get_vadjustment(GTK_SCROLLED_WINDOW(n->widget));
    return gtk_scrollable_get_vadjustment(GTK_SCROLLABLE(n->widget));
}

/* A scrolled window whose child is a tracked list view leaves the vertical
 * position to the view (it restores it by the top row's identity). */
static gboolean vertical_left_to_child(node *n) {
    GtkWidget *child = gtk_scrolled_window_get_child(GTK_SCROLLED_WINDOW(n->widget));
    return child && is_list(child) && g_object_get_data(G_OBJECT(child), NODE_KEY) != NULL;
}

/* A password entry, or one that hid its text at any time it was looked at
 * (a "show password" toggle does not make it saveable). */
static gboolean secret_entry(node *n) {
    if (n->widget && is_password(n->widget)) n->secret = TRUE;
    return n->secret;
}

/* ---- capture: the widget's state as values ---- */

static void capture(node *n) {
    GtkWidget *w = n->widget;
    if (!w || n->top->frozen) return;
    GArray *s = n->snap;
    g_array_set_size(s, 0);
    switch (n->kind) {
    case K_SCOPE: break;
    case K_WINDOW: {
        int width = 0, height = 0;
        gtk_window_get_default_size(GTK_WINDOW(w), &width, &height);
        if (width > 0) add_int(s, "width", width);
        if (height > 0) add_int(s, "height", height);
        add_bool(s, "maximized", gtk_window_is_maximized(GTK_WINDOW(w)));
        add_bool(s, "fullscreen", gtk_window_is_fullscreen(GTK_WINDOW(w)));
        break;
    }
    case K_PANED: add_int(s, "position", gtk_paned_get_position(GTK_PANED(w))); break;
    case K_STACK: add_string(s, "page", gtk_stack_get_visible_child_name(GTK_STACK(w))); break;
    case K_NOTEBOOK: {
        /* By the page's name when it has one (pages can be added, removed,
         * reordered), else by index. */
        int current = gtk_notebook_get_current_page(GTK_NOTEBOOK(w));
        GtkWidget *page = current >= 0 ? gtk_notebook_get_nth_page(GTK_NOTEBOOK(w), current) : NULL;
        const char *name = page ? widget_id(page) : NULL;
        if (name) add_string(s, "page", name);
        else add_int(s, "page", current);
        break;
    }
    case K_SPIN: add_double(s, "value", gtk_spin_button_get_value(GTK_SPIN_BUTTON(w))); break;
    case K_EDITABLE:
        if (secret_entry(n)) break;                /* never a password */
        add_string(s, "text", gtk_editable_get_text(GTK_EDITABLE(w)));
        add_int(s, "cursor", gtk_editable_get_position(GTK_EDITABLE(w)));
        break;
    case K_TEXTVIEW: {
        GtkTextBuffer *b = gtk_text_view_get_buffer(GTK_TEXT_VIEW(w));
        GtkTextIter start, end, cursor;
        gtk_text_buffer_get_bounds(b, &start, &end);
        char *text = gtk_text_buffer_get_text(b, &start, &end, FALSE);
        add_string(s, "text", text);
        g_free(text);
        gtk_text_buffer_get_iter_at_mark(b, &cursor, gtk_text_buffer_get_insert(b));
        add_int(s, "cursor", gtk_text_iter_get_offset(&cursor));
        break;
    }
    case K_TOGGLE:
        add_bool(s, "active", GTK_IS_CHECK_BUTTON(w) ? gtk_check_button_get_active(GTK_CHECK_BUTTON(w))
                            : GTK_IS_TOGGLE_BUTTON(w) ? gtk_toggle_button_get_active(GTK_TOGGLE_BUTTON(w))
                            : gtk_switch_get_active(GTK_SWITCH(w)));
        break;
    case K_RANGE: add_double(s, "value", gtk_range_get_value(GTK_RANGE(w))); break;
    case K_EXPANDER: add_bool(s, "expanded", gtk_expander_get_expanded(GTK_EXPANDER(w))); break;
    case K_SCROLLED: {
        GtkScrolledWindow *sw = GTK_SCROLLED_WINDOW(w);
        add_double(s, "h", n->pending ? n->ph : gtk_adjustment_get_value(gtk_scrolled_window_get_hadjustment(sw)));
        if (!vertical_left_to_child(n))
            add_double(s, "v", n->pending ? n->pv : gtk_adjustment_get_value(gtk_scrolled_window_get_vadjustment(sw)));
        break;
    }
    case K_LIST: {
        GListModel *m = list_model(w);
        if (!m) break;
        gboolean named = has_identity(w);
        if (named) {
            GtkBitset *sel = gtk_selection_model_get_selection(GTK_SELECTION_MODEL(m));
            GPtrArray *ids = g_ptr_array_new_with_free_func(g_free);
            GtkBitsetIter it;
            guint pos;
            for (gboolean ok = gtk_bitset_iter_init_first(&it, sel, &pos); ok && ids->len < MAX_SELECTED;
                 ok = gtk_bitset_iter_next(&it, &pos)) {
                char *id = identity_at(w, m, pos);
                if (id) g_ptr_array_add(ids, id);
            }
            gtk_bitset_unref(sel);
            add(s, "selected", 'a')->a = ids;
        }
        GtkAdjustment *va = vadjustment(n);
        if (n->pending) {
            if (n->ptop) { add_string(s, "top", n->ptop); add_double(s, "top_offset", n->ptop_off); }
            add_double(s, "scroll", n->pv);
        } else if (va) {
            double v = gtk_adjustment_get_value(va), upper = gtk_adjustment_get_upper(va);
            guint count = g_list_model_get_n_items(m);
            if (named && !GTK_IS_GRID_VIEW(w) && count > 0 && upper > 0) {
                double row = upper / count;
                guint pos = (guint)MIN((double)(count - 1), floor((v + 0.5) / row));
                char *top = identity_at(w, m, pos);
                if (top) { add_string(s, "top", top); add_double(s, "top_offset", v - pos * row); }
                g_free(top);
            }
            add_double(s, "scroll", v);
        }
        break;
    }
    }
}

/* ---- encode ---- */

static void node_encode(void *instance, rst_coder *c) {
    node *n = instance;
    if (n->kind == K_EDITABLE && secret_entry(n) && rst_coder_set_sensitivity)
        (void)rst_coder_set_sensitivity(c, "text", RST_SENSITIVITY_SECRET);   /* RST_ERR_*: not fatal */
    capture(n);                         /* no-op once the widget is gone: the last state seen */
    for (guint i = 0; i < n->snap->len; i++) {
        value *v = &g_array_index(n->snap, value, i);
        switch (v->type) {
        case 'b': rst_encode_bool(c, v->key, v->b); break;
        case 'i': rst_encode_int(c, v->key, v->i); break;
        case 'd': rst_encode_double(c, v->key, v->d); break;
        case 's': rst_encode_string(c, v->key, v->s); break;
        case 'a': rst_encode_string_array(c, v->key, (const char *const *)v->a->pdata, v->a->len); break;
        }
    }
}

/* ---- the restored scroll position, once laid out ---- */

static void set_value_moving(GtkAdjustment *a, double target) {
    /* Through another value: a list view moves its rows only on a change
     * (GTK 4.8 keeps showing the top when the value was already there). */
    gtk_adjustment_set_value(a, target >= 1 ? target - 1 : target + 1);
    gtk_adjustment_set_value(a, target);
}

/* Where a list's restored top row is now (its identity, in the model as it
 * is), else the saved offset. */
static double scroll_target(node *n, GtkAdjustment *a, double wanted, gboolean by_row) {
    double upper = gtk_adjustment_get_upper(a);
    double target = wanted;
    if (by_row && n->ptop) {
        GListModel *m = list_model(n->widget);
        guint count = m ? g_list_model_get_n_items(m) : 0;
        if (!n->top_looked && m) {      /* once per restore: a search of the model */
            n->top_pos = find_identity(n->widget, m, n->ptop);
            n->top_looked = TRUE;
        }
        guint pos = n->top_looked && n->top_pos < count ? n->top_pos : GTK_INVALID_LIST_POSITION;
        if (pos != GTK_INVALID_LIST_POSITION && count > 0) {
#if GTK_CHECK_VERSION(4, 12, 0)
            if (!n->applied_once) {
                if (GTK_IS_LIST_VIEW(n->widget))
                    gtk_list_view_scroll_to(GTK_LIST_VIEW(n->widget), pos, GTK_LIST_SCROLL_NONE, NULL);
                else if (GTK_IS_COLUMN_VIEW(n->widget))
                    gtk_column_view_scroll_to(GTK_COLUMN_VIEW(n->widget), pos, NULL, GTK_LIST_SCROLL_NONE, NULL);
            }
#endif
            double row = upper / count;
            target = pos * row + CLAMP(n->ptop_off, 0, row);
        }
    }
    return MAX(0, target);
}

/* Sets the nearest offset the content allows now; TRUE once it is the
 * restored one, or the content stopped growing (its size held since the
 * last frame), or had SCROLL_WAIT_FRAMES to grow to it. */
static gboolean apply_one(node *n, int axis, GtkAdjustment *a, double wanted, gboolean by_row) {
    if (!a) return FALSE;
    double target = scroll_target(n, a, wanted, by_row);
    double upper = gtk_adjustment_get_upper(a);
    gboolean grew = upper != n->last_upper[axis];
    n->last_upper[axis] = upper;
    double reachable = MAX(0, upper - gtk_adjustment_get_page_size(a));
    double now = MIN(target, reachable);
    if (!n->applied_once || fabs(gtk_adjustment_get_value(a) - now) > 0.5) {
        n->t->applying++;
        set_value_moving(a, now);
        n->t->applying--;
        return FALSE;                   /* check again next frame */
    }
    return target <= reachable + 0.5 || !grew || n->ticks >= SCROLL_WAIT_FRAMES;
}

static gboolean scroll_tick(GtkWidget *w, GdkFrameClock *clock, gpointer data) {
    (void)clock;
    node *n = data;
    if (!n->pending) { n->tick = 0; return G_SOURCE_REMOVE; }
    GtkAdjustment *va = vadjustment(n);
    if (!gtk_widget_get_mapped(w) || !va || gtk_adjustment_get_page_size(va) <= 0)
        return G_SOURCE_CONTINUE;       /* not laid out (a hidden page): wait */
    n->ticks++;
    gboolean done;
    if (n->kind == K_SCROLLED) {
        GtkAdjustment *ha = gtk_scrolled_window_get_hadjustment(GTK_SCROLLED_WINDOW(w));
        done = apply_one(n, 0, ha, n->ph, FALSE);
        if (!vertical_left_to_child(n)) done = apply_one(n, 1, va, n->pv, FALSE) && done;
    } else {
        done = apply_one(n, 1, va, n->pv, !GTK_IS_GRID_VIEW(w));
    }
    n->applied_once = TRUE;
    /* Done when it held for 3 frames (a first layout may move it back). */
    n->stable = done ? n->stable + 1 : 0;
    if (n->stable >= 3 || n->ticks > SCROLL_WAIT_FRAMES + 30) {
        n->pending = FALSE;
        g_clear_pointer(&n->ptop, g_free);
        n->tick = 0;
        capture(n);
        return G_SOURCE_REMOVE;
    }
    return G_SOURCE_CONTINUE;
}

static void start_scroll(node *n) {
    n->pending = TRUE;
    n->ticks = n->stable = 0;
    n->applied_once = FALSE;
    n->top_looked = FALSE;
    n->last_upper[0] = n->last_upper[1] = -1;
    if (!n->tick) n->tick = gtk_widget_add_tick_callback(n->widget, scroll_tick, n, NULL);
}

/* ---- decode: untrusted values, each checked before use ---- */

static gboolean get_int(rst_coder *c, const char *key, gint64 lo, gint64 hi, gint64 *out) {
    int64_t v;
    if (rst_decode_int(c, key, &v) != RST_OK || v < lo || v > hi) return FALSE;
    *out = v;
    return TRUE;
}
static gboolean get_double(rst_coder *c, const char *key, double *out) {
    double v;
    if (rst_decode_double(c, key, &v) != RST_OK || !isfinite(v) || fabs(v) > 1e12) return FALSE;
    *out = v;
    return TRUE;
}
static gboolean get_bool(rst_coder *c, const char *key, gboolean *out) {
    bool v;
    if (rst_decode_bool(c, key, &v) != RST_OK) return FALSE;
    *out = v;
    return TRUE;
}
static const char *get_string(rst_coder *c, const char *key) {
    const char *s = NULL;
    size_t len = 0;
    if (rst_decode_string(c, key, &s, &len) != RST_OK || !s || !g_utf8_validate(s, (gssize)len, NULL)
        || strlen(s) != len) return NULL;
    return s;
}

static void restore_list(node *n, rst_coder *c) {
    GtkWidget *w = n->widget;
    GListModel *m = list_model(w);
    size_t count = 0;
    const char *first = NULL;
    if (m && has_identity(w) && rst_coder_value_type(c, "selected") == RST_TYPE_STRING_ARRAY) {
        (void)rst_decode_string_array(c, "selected", 0, &first, NULL, &count);   /* sets count */
        GHashTable *wanted = g_hash_table_new(g_str_hash, g_str_equal);
        for (size_t i = 0; i < count && i < MAX_SELECTED; i++) {
            const char *id = NULL;
            if (rst_decode_string_array(c, "selected", i, &id, NULL, NULL) == RST_OK && id)
                g_hash_table_add(wanted, (gpointer)id);
        }
        GtkSelectionModel *sel = GTK_SELECTION_MODEL(m);
        gboolean single = GTK_IS_SINGLE_SELECTION(m);
        gtk_selection_model_unselect_all(sel);
        guint n_items = g_list_model_get_n_items(m);
        for (guint i = 0; i < n_items && g_hash_table_size(wanted) > 0; i++) {
            char *id = identity_at(w, m, i);
            if (id && g_hash_table_contains(wanted, id)) {
                gtk_selection_model_select_item(sel, i, FALSE);
                if (single) { g_free(id); break; }
            }
            g_free(id);
        }
        g_hash_table_unref(wanted);
    }
    double v = 0, off = 0;
    const char *top = get_string(c, "top");
    if (get_double(c, "scroll", &v)) {
        n->pv = MAX(0, v);
        g_clear_pointer(&n->ptop, g_free);
        if (top && *top && get_double(c, "top_offset", &off)) { n->ptop = g_strdup(top); n->ptop_off = off; }
        start_scroll(n);
    }
}

static void apply(node *n, rst_coder *c) {
    GtkWidget *w = n->widget;
    gint64 i;
    double d;
    gboolean b;
    const char *s;
    switch (n->kind) {
    case K_SCOPE: break;
    case K_WINDOW: {
        gint64 width = 0, height = 0;
        int cw = 0, ch = 0;
        gtk_window_get_default_size(GTK_WINDOW(w), &cw, &ch);
        if (get_int(c, "width", 1, 100000, &width)) cw = (int)width;
        if (get_int(c, "height", 1, 100000, &height)) ch = (int)height;
        gtk_window_set_default_size(GTK_WINDOW(w), cw > 0 ? cw : -1, ch > 0 ? ch : -1);   /* -1: unset */
        if (get_bool(c, "maximized", &b) && b) gtk_window_maximize(GTK_WINDOW(w));
        if (get_bool(c, "fullscreen", &b) && b) gtk_window_fullscreen(GTK_WINDOW(w));
        break;
    }
    case K_PANED:
        if (get_int(c, "position", 0, 100000, &i)) gtk_paned_set_position(GTK_PANED(w), (int)i);
        break;
    case K_STACK:
        if ((s = get_string(c, "page")) && gtk_stack_get_child_by_name(GTK_STACK(w), s))
            gtk_stack_set_visible_child_full(GTK_STACK(w), s, GTK_STACK_TRANSITION_TYPE_NONE);
        break;
    case K_NOTEBOOK: {
        GtkNotebook *book = GTK_NOTEBOOK(w);
        if (rst_coder_value_type(c, "page") == RST_TYPE_STRING) {
            /* A name no page has any more is ignored (not another page's index). */
            if ((s = get_string(c, "page"))) {
                for (int p = 0; p < gtk_notebook_get_n_pages(book); p++) {
                    const char *name = widget_id(gtk_notebook_get_nth_page(book, p));
                    if (name && strcmp(name, s) == 0) { gtk_notebook_set_current_page(book, p); break; }
                }
            }
        } else if (get_int(c, "page", 0, gtk_notebook_get_n_pages(book) - 1, &i)) {
            gtk_notebook_set_current_page(book, (int)i);
        }
        break;
    }
    case K_SPIN:
        if (get_double(c, "value", &d)) gtk_spin_button_set_value(GTK_SPIN_BUTTON(w), d);
        break;
    case K_EDITABLE:
        if (secret_entry(n)) break;
        if ((s = get_string(c, "text"))) {
            gtk_editable_set_text(GTK_EDITABLE(w), s);
            if (get_int(c, "cursor", -1, g_utf8_strlen(s, -1), &i)) gtk_editable_set_position(GTK_EDITABLE(w), (int)i);
        }
        break;
    case K_TEXTVIEW:
        if ((s = get_string(c, "text"))) {
            GtkTextBuffer *buf = gtk_text_view_get_buffer(GTK_TEXT_VIEW(w));
            gtk_text_buffer_set_text(buf, s, -1);
            GtkTextIter at;
            if (get_int(c, "cursor", 0, g_utf8_strlen(s, -1), &i)) {
                gtk_text_buffer_get_iter_at_offset(buf, &at, (int)i);
                gtk_text_buffer_place_cursor(buf, &at);
            }
        }
        break;
    case K_TOGGLE:
        if (!get_bool(c, "active", &b)) break;
        if (GTK_IS_CHECK_BUTTON(w)) gtk_check_button_set_active(GTK_CHECK_BUTTON(w), b);
        else if (GTK_IS_TOGGLE_BUTTON(w)) gtk_toggle_button_set_active(GTK_TOGGLE_BUTTON(w), b);
        else gtk_switch_set_active(GTK_SWITCH(w), b);
        break;
    case K_RANGE:
        if (get_double(c, "value", &d)) gtk_range_set_value(GTK_RANGE(w), d);
        break;
    case K_EXPANDER:
        if (get_bool(c, "expanded", &b)) gtk_expander_set_expanded(GTK_EXPANDER(w), b);
        break;
    case K_SCROLLED: {
        double h = 0, v = 0;
        gboolean has_h = get_double(c, "h", &h), has_v = get_double(c, "v", &v);
        if (has_h || has_v) {
            n->ph = MAX(0, h);
            n->pv = MAX(0, v);
            start_scroll(n);
        }
        break;
    }
    case K_LIST: restore_list(n, c); break;
    }
}

static void node_decode(void *instance, rst_coder *c) {
    node *n = instance;
    if (!n->widget) return;
    n->t->applying++;
    apply(n, c);
    n->t->applying--;
    capture(n);
}

/* ---- changes mark the engine dirty ----
 * Only a change of what the widget shows, made by the user (or the app),
 * marks the engine dirty. GTK also moves state by itself: a restored entry
 * taking the focus has all its text selected, the cursor at the end
 * (select-on-focus); a layout clamps or shifts a scroll position. Those
 * update the node's snapshot, so the next save writes what is shown, but
 * are not changes: a launch without input writes nothing. */

static gboolean value_equal(const value *a, const value *b) {
    if (strcmp(a->key, b->key) != 0 || a->type != b->type) return FALSE;
    switch (a->type) {
    case 'b': return !a->b == !b->b;
    case 'i': return a->i == b->i;
    case 'd': return a->d == b->d;
    case 's': return strcmp(a->s, b->s) == 0;
    case 'a':
        if (a->a->len != b->a->len) return FALSE;
        for (guint i = 0; i < a->a->len; i++)
            if (strcmp(g_ptr_array_index(a->a, i), g_ptr_array_index(b->a, i)) != 0) return FALSE;
        return TRUE;
    }
    return FALSE;
}

static gboolean snap_equal(GArray *a, GArray *b) {
    if (a->len != b->len) return FALSE;
    for (guint i = 0; i < a->len; i++)
        if (!value_equal(&g_array_index(a, value, i), &g_array_index(b, value, i))) return FALSE;
    return TRUE;
}

static void clear_value(gpointer p) { value_clear(p); }
static GArray *new_snap(void) {
    GArray *a = g_array_new(FALSE, TRUE, sizeof(value));
    g_array_set_clear_func(a, clear_value);
    return a;
}

/* The widget's state seen again; the engine marked dirty when it differs
 * from the last state seen and `by_user` (not GTK's own doing). */
static void seen(node *n, gboolean by_user) {
    if (n->t->applying > 0 || !n->widget || n->top->frozen) return;
    GArray *before = n->snap;
    n->snap = new_snap();
    capture(n);
    gboolean same = snap_equal(before, n->snap);
    g_array_unref(before);
    if (!same && by_user) rst_mark_dirty(n->t->engine, n->object);
}
static void changed(node *n) { seen(n, TRUE); }
static void on_notify(GObject *o, GParamSpec *p, gpointer data) { (void)o; (void)p; changed(data); }
static void on_signal(gpointer instance, gpointer data) { (void)instance; changed(data); }

static gboolean snap_has(GArray *s, const char *key) {
    for (guint i = 0; i < s->len; i++)
        if (strcmp(g_array_index(s, value, i).key, key) == 0) return TRUE;
    return FALSE;
}
/* A window without a default size gets one from GTK as it is first shown
 * (its natural size, before it is mapped): not the user's. */
static void on_window_size(GObject *o, GParamSpec *p, gpointer data) {
    node *n = data;
    (void)o; (void)p;
    gboolean natural = n->widget && !gtk_widget_get_mapped(n->widget)
                       && (!snap_has(n->snap, "width") || !snap_has(n->snap, "height"));
    seen(n, !natural);
}

/* GTK's select-on-focus: the whole text selected, the cursor at its end. */
static gboolean selects_all(GtkEditable *e) {
    int start = 0, end = 0;
    if (!gtk_editable_get_selection_bounds(e, &start, &end)) return FALSE;
    int length = (int)g_utf8_strlen(gtk_editable_get_text(e), -1);
    return length > 0 && start == 0 && end == length && gtk_editable_get_position(e) == length;
}
static void on_cursor(GObject *o, GParamSpec *p, gpointer data) {
    (void)p;
    seen(data, !selects_all(GTK_EDITABLE(o)));
}

/* A layout changes an adjustment's bounds and, when the value no longer
 * fits or the content moved, its value: GTK 4 emits "value-changed" with
 * the new bounds already in place, then "changed". A value changed while
 * its bounds differ from those last seen, or after a "changed" in the same
 * dispatch, is the layout's. `laying_out` is cleared by an idle of high
 * priority, which runs before the next frame handles input. */
static gboolean bounds_moved(node *n, GtkAdjustment *a) {
    for (int i = 0; i < WATCHED; i++) {
        if (n->watched[i] != (GObject *)a) continue;
        double upper = gtk_adjustment_get_upper(a), page = gtk_adjustment_get_page_size(a);
        gboolean moved = upper != n->bounds[i][0] || page != n->bounds[i][1];
        n->bounds[i][0] = upper;
        n->bounds[i][1] = page;
        return moved;
    }
    return FALSE;
}
static gboolean layout_over(gpointer data) {
    node *n = data;
    n->laying_out = FALSE;
    n->layout_idle = 0;
    return G_SOURCE_REMOVE;
}
static void on_bounds(GtkAdjustment *a, gpointer data) {
    node *n = data;
    (void)bounds_moved(n, a);
    n->laying_out = TRUE;
    if (!n->layout_idle) n->layout_idle = g_idle_add_full(G_PRIORITY_HIGH, layout_over, n, NULL);
}
/* A layout moving a scroll position being restored is not the user's. */
static void on_scrolled(GtkAdjustment *a, gpointer data) {
    node *n = data;
    gboolean layout = bounds_moved(n, a) || n->laying_out;
    if (!n->pending) seen(n, !layout);
}
static void on_selection(GtkSelectionModel *m, guint pos, guint count, gpointer data) {
    (void)m; (void)pos; (void)count;
    changed(data);
}

static void unwatch(node *n) {
    for (int i = 0; i < WATCHED; i++) {
        if (!n->watched[i]) continue;
        g_signal_handlers_disconnect_by_data(n->watched[i], n);
        g_clear_object(&n->watched[i]);
    }
}
static void watch(node *n, int slot, gpointer obj, const char *signal, GCallback cb) {
    if (!obj) return;
    if (n->watched[slot] != obj) {
        if (n->watched[slot]) { g_signal_handlers_disconnect_by_data(n->watched[slot], n); g_object_unref(n->watched[slot]); }
        n->watched[slot] = g_object_ref(obj);
    }
    g_signal_connect(obj, signal, cb, n);
}

/* The objects behind the widget (buffer, adjustments, model), watched again
 * when the app replaces one. */
static void rewatch(node *n) {
    unwatch(n);
    GtkWidget *w = n->widget;
    switch (n->kind) {
    case K_TEXTVIEW: {
        GtkTextBuffer *b = gtk_text_view_get_buffer(GTK_TEXT_VIEW(w));
        watch(n, 0, b, "changed", G_CALLBACK(on_signal));
        watch(n, 0, b, "notify::cursor-position", G_CALLBACK(on_notify));
        break;
    }
    case K_SCROLLED:
        watch(n, 0, gtk_scrolled_window_get_hadjustment(GTK_SCROLLED_WINDOW(w)), "value-changed", G_CALLBACK(on_scrolled));
        watch(n, 0, gtk_scrolled_window_get_hadjustment(GTK_SCROLLED_WINDOW(w)), "changed", G_CALLBACK(on_bounds));
        watch(n, 1, gtk_scrolled_window_get_vadjustment(GTK_SCROLLED_WINDOW(w)), "value-changed", G_CALLBACK(on_scrolled));
        watch(n, 1, gtk_scrolled_window_get_vadjustment(GTK_SCROLLED_WINDOW(w)), "changed", G_CALLBACK(on_bounds));
        break;
    case K_LIST:
        watch(n, 0, list_model(w), "selection-changed", G_CALLBACK(on_selection));
        watch(n, 1, gtk_scrollable_get_vadjustment(GTK_SCROLLABLE(w)), "value-changed", G_CALLBACK(on_scrolled));
        watch(n, 1, gtk_scrollable_get_vadjustment(GTK_SCROLLABLE(w)), "changed", G_CALLBACK(on_bounds));
        break;
    default: break;
    }
    for (int i = 0; i < WATCHED; i++)
        if (n->watched[i] && GTK_IS_ADJUSTMENT(n->watched[i])) (void)bounds_moved(n, GTK_ADJUSTMENT(n->watched[i]));
}
static void on_replaced(GObject *o, GParamSpec *p, gpointer data) {
    (void)o; (void)p;
    rewatch(data);
    changed(data);                      /* a new buffer or model shows other state */
}

static void connect_widget(node *n) {
    GtkWidget *w = n->widget;
    GCallback cb = G_CALLBACK(on_notify);
    switch (n->kind) {
    case K_SCOPE: break;
    case K_WINDOW:
        g_signal_connect(w, "notify::default-width", G_CALLBACK(on_window_size), n);
        g_signal_connect(w, "notify::default-height", G_CALLBACK(on_window_size), n);
        g_signal_connect(w, "notify::maximized", cb, n);
        g_signal_connect(w, "notify::fullscreened", cb, n);
        break;
    case K_PANED: g_signal_connect(w, "notify::position", cb, n); break;
    case K_STACK: g_signal_connect(w, "notify::visible-child-name", cb, n); break;
    case K_NOTEBOOK: g_signal_connect(w, "notify::page", cb, n); break;
    case K_SPIN: g_signal_connect(w, "value-changed", G_CALLBACK(on_signal), n); break;
    case K_EDITABLE:
        g_signal_connect(w, "notify::text", cb, n);
        g_signal_connect(w, "notify::cursor-position", G_CALLBACK(on_cursor), n);
        if (GTK_IS_ENTRY(w) || GTK_IS_TEXT(w)) g_signal_connect(w, "notify::visibility", cb, n);
        break;
    case K_TEXTVIEW: g_signal_connect(w, "notify::buffer", G_CALLBACK(on_replaced), n); break;
    case K_TOGGLE: g_signal_connect(w, "notify::active", cb, n); break;
    case K_RANGE: g_signal_connect(w, "value-changed", G_CALLBACK(on_signal), n); break;
    case K_EXPANDER: g_signal_connect(w, "notify::expanded", cb, n); break;
    case K_SCROLLED:
        g_signal_connect(w, "notify::hadjustment", G_CALLBACK(on_replaced), n);
        g_signal_connect(w, "notify::vadjustment", G_CALLBACK(on_replaced), n);
        break;
    case K_LIST:
        g_signal_connect(w, "notify::model", G_CALLBACK(on_replaced), n);
        g_signal_connect(w, "notify::vadjustment", G_CALLBACK(on_replaced), n);
        break;
    }
    rewatch(n);
}

/* ---- the life of a node ---- */

/* Forgets the widget: handlers, tick, weak pointer; the snapshot stays. */
static void detach(node *n) {
    unwatch(n);
    if (n->layout_idle) g_source_remove(n->layout_idle);
    n->layout_idle = 0;
    if (!n->widget) return;
    if (n->tick) gtk_widget_remove_tick_callback(n->widget, n->tick);
    n->tick = 0;
    n->pending = FALSE;
    g_signal_handlers_disconnect_by_data(n->widget, n);
    g_object_set_data(G_OBJECT(n->widget), NODE_KEY, NULL);
    g_object_remove_weak_pointer(G_OBJECT(n->widget), (gpointer *)&n->widget);
    n->widget = NULL;
}

static void on_destroy(GtkWidget *w, gpointer data) { (void)w; detach(data); }

static void tracker_unref(tracker *t) {
    if (--t->refs > 0) return;
    if (t->source) g_source_remove(t->source);
    g_hash_table_remove(trackers, t->engine);
    g_free(t);
}

static void node_release(void *instance) {
    node *n = instance;
    detach(n);
    g_array_unref(n->snap);             /* clears the values */
    g_free(n->ptop);
    tracker *t = n->t;
    g_free(n);
    tracker_unref(t);
}

static const rst_object_callbacks node_callbacks = { node_encode, node_decode, NULL, node_release };

static rst_status add_node(tracker *t, node *top, GtkWidget *w, const char *id, rst_object *parent, node **out) {
    node *n = g_new0(node, 1);
    n->t = t;
    n->top = top ? top : n;
    n->widget = w;
    n->kind = kind_of(w);
    n->snap = new_snap();
    /* The class is the widget's type name, so that an app can register
     * migrations for the records of one widget type. */
    rst_status s = rst_register_object(t->engine, id, parent, G_OBJECT_TYPE_NAME(w), &node_callbacks, n, &n->object);
    if (s != RST_OK) {
        g_array_unref(n->snap);
        g_free(n);
        return s;
    }
    t->refs++;                          /* node_release gives it back */
    g_object_add_weak_pointer(G_OBJECT(w), (gpointer *)&n->widget);
    g_object_set_data(G_OBJECT(w), NODE_KEY, n);
    g_signal_connect(w, "destroy", G_CALLBACK(on_destroy), n);
    connect_widget(n);
    capture(n);
    *out = n;
    return RST_OK;
}

static char *widget_path(GtkWidget *w) {
    GString *p = g_string_new(NULL);
    for (GtkWidget *x = w; x; x = gtk_widget_get_parent(x)) {
        const char *id = widget_id(x);
        g_string_prepend(p, id ? id : G_OBJECT_TYPE_NAME(x));
        if (gtk_widget_get_parent(x)) g_string_prepend_c(p, '/');
    }
    return g_string_free(p, FALSE);
}

static void walk(tracker *t, node *top, GtkWidget *w, rst_object *parent, rst_status *first) {
    if (is_list(w)) return;             /* rows come and go: not tracked */
    for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c)) {
        if (g_object_get_data(G_OBJECT(c), SKIP_KEY)) continue;
        const char *id = widget_id(c);
        gboolean transparent = g_object_get_data(G_OBJECT(c), TRANSPARENT_KEY) != NULL;
        if (!id) { walk(t, top, c, parent, first); continue; }
        node *n = NULL;
        rst_status s = add_node(t, top, c, id, parent, &n);
        if (s != RST_OK) {
            char *path = widget_path(c);
            g_warning("%s (%s) is not saved: %s: %s", path, G_OBJECT_TYPE_NAME(c), rst_status_name(s), rst_last_error());
            g_free(path);
            if (*first == RST_OK) *first = s;
            continue;
        }
        walk(t, top, c, transparent ? parent : n->object, first);   /* transparent: its children beside it */
    }
}

/* ---- the main loop and the window ---- */

static gboolean on_engine_fd(gint fd, GIOCondition cond, gpointer data) {
    (void)fd;
    tracker *t = data;
    if (cond & (G_IO_NVAL | G_IO_ERR)) { t->source = 0; return G_SOURCE_REMOVE; }
    rst_dispatch(t->engine);            /* the autosave, on the GTK thread */
    return G_SOURCE_CONTINUE;
}

static void flush(node *top, const char *when) {
    if (!top->t->has_file) return;      /* an engine of buffers: the app saves */
    rst_status s = rst_flush(top->t->engine);
    if (s != RST_OK) g_warning("saving at %s: %s: %s", when, rst_status_name(s), rst_last_error());
}

static gboolean on_close_request(GtkWindow *w, gpointer data) {
    (void)w;
    flush(data, "close-request");       /* the widgets still exist here */
    return FALSE;                       /* the app's handlers and the close go on */
}

/* Every node of this root keeps what it shows now; later signals of widgets
 * being torn down are not the user's. */
static void on_unrealize(GtkWidget *w, gpointer data) {
    (void)w;
    node *top = data;
    top->frozen = TRUE;
    flush(top, "unrealize");
}
static void on_realize(GtkWidget *w, gpointer data) { (void)w; ((node *)data)->frozen = FALSE; }

rst_status rst_gtk_track(rst_engine *e, GtkWidget *root, rst_object *parent, rst_object **out) {
    if (out) *out = NULL;
    g_return_val_if_fail(e != NULL, RST_ERR_INVALID);
    g_return_val_if_fail(GTK_IS_WIDGET(root), RST_ERR_INVALID);
    if (g_object_get_data(G_OBJECT(root), NODE_KEY)) {
        g_critical("rst_gtk_track: %s is already tracked", G_OBJECT_TYPE_NAME(root));
        return RST_ERR_INVALID;
    }
    if (!trackers) trackers = g_hash_table_new(g_direct_hash, g_direct_equal);
    tracker *t = g_hash_table_lookup(trackers, e);
    gboolean fresh = t == NULL;
    if (fresh) {
        t = g_new0(tracker, 1);
        t->engine = e;
        g_hash_table_insert(trackers, e, t);
    }
    const char *id = widget_id(root);
    node *top = NULL;
    t->refs++;                          /* held while tracking */
    rst_status s = add_node(t, NULL, root, id ? id : "window", parent, &top);
    if (s == RST_OK) {
        if (fresh) {
            int fd = rst_event_fd(e);   /* -1 without archive_path: no autosave to run */
            t->has_file = fd >= 0;
            if (fd >= 0) t->source = g_unix_fd_add(fd, G_IO_IN, on_engine_fd, t);
        }
        if (GTK_IS_WINDOW(root)) g_signal_connect(root, "close-request", G_CALLBACK(on_close_request), top);
        g_signal_connect(root, "unrealize", G_CALLBACK(on_unrealize), top);
        g_signal_connect(root, "realize", G_CALLBACK(on_realize), top);
        rst_status first = RST_OK;
        walk(t, top, root, top->object, &first);
        if (out) *out = top->object;
        s = first;
    }
    tracker_unref(t);
    return s;
}

static void free_identity(gpointer p) { g_free(p); }

rst_status rst_gtk_set_identity(GtkWidget *view, rst_gtk_identity_fn fn, void *ctx) {
    g_return_val_if_fail(GTK_IS_WIDGET(view) && is_list(view), RST_ERR_INVALID);
    identity *id = NULL;
    if (fn) {
        id = g_new(identity, 1);
        id->fn = fn;
        id->ctx = ctx;
    }
    g_object_set_data_full(G_OBJECT(view), IDENTITY_KEY, id, free_identity);
    return RST_OK;
}

rst_status rst_gtk_skip(GtkWidget *widget) {
    g_return_val_if_fail(GTK_IS_WIDGET(widget), RST_ERR_INVALID);
    g_object_set_data(G_OBJECT(widget), SKIP_KEY, GINT_TO_POINTER(1));
    return RST_OK;
}

rst_status rst_gtk_set_transparent(GtkWidget *widget) {
    g_return_val_if_fail(GTK_IS_WIDGET(widget), RST_ERR_INVALID);
    g_object_set_data(G_OBJECT(widget), TRANSPARENT_KEY, GINT_TO_POINTER(1));
    return RST_OK;
}

rst_object *rst_gtk_object(GtkWidget *widget) {
    g_return_val_if_fail(GTK_IS_WIDGET(widget), NULL);
    node *n = g_object_get_data(G_OBJECT(widget), NODE_KEY);
    return n ? n->object : NULL;
}
