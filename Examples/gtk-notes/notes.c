/* gtk-notes: a GTK 4 application in C that restores its state with
 * librestoration 1.1 — the window size, the visible page of a stack, an
 * entry's text, a list's selection (by the item's identity, not its
 * index) and its scroll position. It marks the engine dirty on each
 * change, lets the engine autosave through the GLib main loop
 * (g_unix_fd_add on rst_event_fd), saves on SIGTERM/SIGINT/SIGHUP, keeps 2
 * generations, and tells after a crash that it recovered (RECOVER).
 *
 *   notes STATE_DIR
 *
 * Test hooks (Tests/gtk/run.sh, under Xvfb), all optional:
 *   NOTES_SET="page=P;entry=T;select=ITEM;scroll=Y;width=W;height=H"
 *       applied once the window is shown, as a user would; when the
 *       autosave has written it, the file $NOTES_READY is created.
 *   NOTES_DUMP=FILE   once restored and laid out, writes the state shown
 *       (reason=…, width=…, …) to FILE, a screenshot to $NOTES_SCREENSHOT
 *       (PNG) if set, then quits (flush, destroy).
 *   NOTES_REVERSE=1   the list model in reverse order (the selection must
 *       follow the item, not the index).
 *   NOTES_AUTOSAVE_MS=N  the autosave delay; NOTES_READY_DIRTY=FILE: FILE
 *       is written right after the changes, while still dirty (with a long
 *       delay, only a signal save can then save them). */
#define _GNU_SOURCE 1
#include <gtk/gtk.h>
#include <glib-unix.h>
#include <restoration.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ITEMS 150

typedef struct app {
    rst_engine     *engine;
    GtkWindow      *window;
    GtkStack       *stack;
    GtkEntry       *entry;
    GtkStringList  *model;
    GtkSingleSelection *selection;
    GtkAdjustment  *vadj;
    GtkLabel       *status;
    /* restored values waiting for the widgets (scroll needs a layout) */
    double          pending_scroll;
    bool            scroll_pending;
    rst_restore_reason reason;
    bool            restored;
} app;

/* ---- what each object saves and restores ---- */

static void window_encode(void *inst, rst_coder *c) {
    app *a = inst;
    int w = 0, h = 0;
    gtk_window_get_default_size(a->window, &w, &h);
    rst_encode_int(c, "width", w);
    rst_encode_int(c, "height", h);
}
static void window_decode(void *inst, rst_coder *c) {
    app *a = inst;
    int64_t w = 0, h = 0;
    if (rst_decode_int(c, "width", &w) == RST_OK && rst_decode_int(c, "height", &h) == RST_OK && w > 0 && h > 0)
        gtk_window_set_default_size(a->window, (int)w, (int)h);
}

static void stack_encode(void *inst, rst_coder *c) {
    app *a = inst;
    const char *name = gtk_stack_get_visible_child_name(a->stack);
    rst_encode_string(c, "page", name ? name : "");
}
static void stack_decode(void *inst, rst_coder *c) {
    app *a = inst;
    const char *page = NULL;
    if (rst_decode_string(c, "page", &page, NULL) == RST_OK && gtk_stack_get_child_by_name(a->stack, page))
        gtk_stack_set_visible_child_name(a->stack, page);
}

static void entry_encode(void *inst, rst_coder *c) {
    app *a = inst;
    rst_encode_string(c, "text", gtk_editable_get_text(GTK_EDITABLE(a->entry)));
}
static void entry_decode(void *inst, rst_coder *c) {
    app *a = inst;
    const char *text = NULL;
    if (rst_decode_string(c, "text", &text, NULL) == RST_OK) gtk_editable_set_text(GTK_EDITABLE(a->entry), text);
}

static const char *selected_item(app *a) {
    GObject *item = gtk_single_selection_get_selected_item(a->selection);
    return item ? gtk_string_object_get_string(GTK_STRING_OBJECT(item)) : NULL;
}

/* The list: its selection by the item's identity (its string), and the scroll offset. */
static void list_encode(void *inst, rst_coder *c) {
    app *a = inst;
    const char *sel = selected_item(a);
    if (sel) rst_encode_string(c, "selected", sel);
    rst_encode_double(c, "scroll", a->scroll_pending ? a->pending_scroll : gtk_adjustment_get_value(a->vadj));
}
static void list_decode(void *inst, rst_coder *c) {
    app *a = inst;
    const char *sel = NULL;
    if (rst_decode_string(c, "selected", &sel, NULL) == RST_OK) {
        guint n = g_list_model_get_n_items(G_LIST_MODEL(a->model));
        for (guint i = 0; i < n; i++) {
            if (strcmp(gtk_string_list_get_string(a->model, i), sel) == 0) {
                gtk_single_selection_set_selected(a->selection, i);
                break;
            }
        }
    }
    double y = 0;
    if (rst_decode_double(c, "scroll", &y) == RST_OK) {
        a->pending_scroll = y;
        a->scroll_pending = true;      /* applied once the list is laid out */
    }
}

static const rst_object_callbacks window_cb = { window_encode, window_decode, NULL, NULL };
static const rst_object_callbacks stack_cb  = { stack_encode, stack_decode, NULL, NULL };
static const rst_object_callbacks entry_cb  = { entry_encode, entry_decode, NULL, NULL };
static const rst_object_callbacks list_cb   = { list_encode, list_decode, NULL, NULL };

/* ---- the engine in the GLib main loop ---- */

static gboolean on_engine_fd(gint fd, GIOCondition cond, gpointer user_data) {
    (void)fd; (void)cond;
    rst_dispatch(user_data);            /* the autosave runs here, on the GTK thread */
    return G_SOURCE_CONTINUE;
}

static void mark_dirty(app *a) {
    if (a->restored) rst_mark_dirty(a->engine, NULL);
}
static void on_changed(GObject *obj, GParamSpec *pspec, gpointer user_data) { (void)obj; (void)pspec; mark_dirty(user_data); }
static void on_entry_changed(GtkEditable *e, gpointer user_data) { (void)e; mark_dirty(user_data); }
static void on_scrolled(GtkAdjustment *adj, gpointer user_data) {
    app *a = user_data;
    if (a->scroll_pending) return;
    (void)adj;
    mark_dirty(a);
}
/* The restored scroll offset, once the list is long enough to hold it. */
static void on_adjustment_changed(GtkAdjustment *adj, gpointer user_data) {
    app *a = user_data;
    if (!a->scroll_pending || gtk_adjustment_get_page_size(adj) <= 0) return;
    /* Through another value, so that the list view moves its rows (GTK 4.8). */
    gtk_adjustment_set_value(adj, a->pending_scroll > 0 ? a->pending_scroll - 1 : 1);
    gtk_adjustment_set_value(adj, a->pending_scroll);
    if (gtk_adjustment_get_value(adj) >= a->pending_scroll - 0.5) a->scroll_pending = false;
}

static void log_to_stderr(rst_engine *e, int level, const char *message, void *ctx) {
    (void)e; (void)ctx;
    if (level >= RST_LOG_INFO) fprintf(stderr, "notes: restoration: %s\n", message);
}

static bool note_reason(rst_engine *e, const rst_archive_info *info, void *ctx) {
    (void)e;
    app *a = ctx;
    a->reason = (rst_restore_reason)info->restore_reason;
    /* An app could restore less after a crash (RECOVER) here. */
    return true;
}

/* ---- test hooks ---- */

static char *hook_value(const char *spec, const char *key) {
    size_t k = strlen(key);
    for (const char *p = spec; p && *p; ) {
        const char *end = strchr(p, ';');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n > k && strncmp(p, key, k) == 0 && p[k] == '=') return g_strndup(p + k + 1, n - k - 1);
        p = end ? end + 1 : NULL;
    }
    return NULL;
}

static gboolean wait_saved(gpointer user_data) {
    app *a = user_data;
    if (rst_is_dirty(a->engine)) return G_SOURCE_CONTINUE;
    const char *ready = g_getenv("NOTES_READY");
    if (ready) g_file_set_contents(ready, "saved\n", -1, NULL);
    return G_SOURCE_REMOVE;
}

static gboolean apply_test_changes(gpointer user_data) {
    app *a = user_data;
    const char *spec = g_getenv("NOTES_SET");
    char *v;
    if ((v = hook_value(spec, "width"))) { char *h = hook_value(spec, "height");
        gtk_window_set_default_size(a->window, atoi(v), h ? atoi(h) : 400); g_free(h); g_free(v); }
    if ((v = hook_value(spec, "page"))) { gtk_stack_set_visible_child_name(a->stack, v); g_free(v); }
    if ((v = hook_value(spec, "entry"))) { gtk_editable_set_text(GTK_EDITABLE(a->entry), v); g_free(v); }
    if ((v = hook_value(spec, "select"))) {
        guint n = g_list_model_get_n_items(G_LIST_MODEL(a->model));
        for (guint i = 0; i < n; i++)
            if (strcmp(gtk_string_list_get_string(a->model, i), v) == 0) gtk_single_selection_set_selected(a->selection, i);
        g_free(v);
    }
    if ((v = hook_value(spec, "scroll"))) { gtk_adjustment_set_value(a->vadj, g_ascii_strtod(v, NULL)); g_free(v); }
    rst_mark_dirty(a->engine, NULL);
    if (g_getenv("NOTES_READY_DIRTY")) {   /* test hook: ready while still dirty (not saved yet) */
        g_file_set_contents(g_getenv("NOTES_READY_DIRTY"), rst_is_dirty(a->engine) ? "dirty\n" : "clean\n", -1, NULL);
        return G_SOURCE_REMOVE;
    }
    g_timeout_add(50, wait_saved, a);
    return G_SOURCE_REMOVE;
}

static void screenshot(app *a, const char *path) {
    GtkWidget *w = GTK_WIDGET(a->window);
    int width = gtk_widget_get_width(w), height = gtk_widget_get_height(w);
    GdkPaintable *paintable = gtk_widget_paintable_new(w);
    GtkSnapshot *snap = gtk_snapshot_new();
    gdk_paintable_snapshot(paintable, snap, width, height);
    GskRenderNode *node = gtk_snapshot_free_to_node(snap);
    if (node) {
        GskRenderer *r = gtk_native_get_renderer(GTK_NATIVE(w));
        graphene_rect_t bounds = GRAPHENE_RECT_INIT(0, 0, (float)width, (float)height);
        GdkTexture *t = gsk_renderer_render_texture(r, node, &bounds);
        gdk_texture_save_to_png(t, path);
        g_object_unref(t);
        gsk_render_node_unref(node);
    }
    g_object_unref(paintable);
}

static gboolean dump_and_quit(gpointer user_data) {
    app *a = user_data;
    static int waited;
    static char *restored_page;
    if (restored_page == NULL) {
        /* The page as restored; then the list page is shown so that the
         * restored scroll offset can be laid out and checked. */
        restored_page = g_strdup(gtk_stack_get_visible_child_name(a->stack));
        a->restored = false;            /* what the dump does is not the user's: not saved */
        gtk_stack_set_visible_child_name(a->stack, "list");
        return G_SOURCE_CONTINUE;
    }
    if (a->scroll_pending) {                            /* not laid out yet */
        on_adjustment_changed(a->vadj, a);
        if (g_getenv("NOTES_DEBUG")) fprintf(stderr, "notes: scroll pending %.0f: value %.0f upper %.0f page %.0f\n", a->pending_scroll,
            gtk_adjustment_get_value(a->vadj), gtk_adjustment_get_upper(a->vadj), gtk_adjustment_get_page_size(a->vadj));
        if (a->scroll_pending && waited++ < 20) return G_SOURCE_CONTINUE;
    }
    static int settled;
    if (settled == 0) {
        /* GTK 4.8's list view follows value changes made while it is mapped:
         * nudge the restored offset so it scrolls its rows there too. */
        double v = gtk_adjustment_get_value(a->vadj);
        gtk_adjustment_set_value(a->vadj, v > 0 ? v - 1 : v + 1);
        gtk_adjustment_set_value(a->vadj, v);
    }
    if (settled++ < 3) return G_SOURCE_CONTINUE;        /* frames drawn at that offset */
    int w = 0, h = 0;
    gtk_window_get_default_size(a->window, &w, &h);
    const char *sel = selected_item(a);
    char *text = g_strdup_printf("reason=%s\nwidth=%d\nheight=%d\npage=%s\nentry=%s\nselect=%s\nselected_index=%u\nscroll=%.0f\n",
                                 rst_restore_reason_name(a->reason), w, h,
                                 restored_page,
                                 gtk_editable_get_text(GTK_EDITABLE(a->entry)), sel ? sel : "",
                                 gtk_single_selection_get_selected(a->selection), gtk_adjustment_get_value(a->vadj));
    g_file_set_contents(g_getenv("NOTES_DUMP"), text, -1, NULL);
    g_free(text);
    const char *shot = g_getenv("NOTES_SCREENSHOT");
    if (shot) screenshot(a, shot);
    gtk_window_destroy(a->window);
    return G_SOURCE_REMOVE;
}

/* ---- the window ---- */

static GtkWidget *page_label(const char *text) {
    GtkWidget *l = gtk_label_new(text);
    gtk_widget_set_margin_top(l, 24);
    return l;
}

static void activate(GtkApplication *gapp, gpointer user_data) {
    app *a = user_data;
    a->window = GTK_WINDOW(gtk_application_window_new(gapp));
    gtk_window_set_title(a->window, "Notes — restored by librestoration");
    gtk_window_set_default_size(a->window, 480, 360);

    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
    a->status = GTK_LABEL(gtk_label_new(""));
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(a->status));
    a->stack = GTK_STACK(gtk_stack_new());
    GtkWidget *switcher = gtk_stack_switcher_new();
    gtk_stack_switcher_set_stack(GTK_STACK_SWITCHER(switcher), a->stack);
    gtk_box_append(GTK_BOX(box), switcher);

    /* Page "list": the entry and the list. */
    GtkWidget *list_page = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
    a->entry = GTK_ENTRY(gtk_entry_new());
    gtk_entry_set_placeholder_text(a->entry, "Search or note…");
    gtk_box_append(GTK_BOX(list_page), GTK_WIDGET(a->entry));
    a->model = gtk_string_list_new(NULL);
    bool reverse = g_getenv("NOTES_REVERSE") != NULL;
    for (int i = 0; i < ITEMS; i++) {
        char name[32];
        snprintf(name, sizeof name, "Item %03d", reverse ? ITEMS - 1 - i : i);
        gtk_string_list_append(a->model, name);
    }
    a->selection = gtk_single_selection_new(G_LIST_MODEL(g_object_ref(a->model)));
    gtk_single_selection_set_autoselect(a->selection, FALSE);
    gtk_single_selection_set_can_unselect(a->selection, TRUE);
    gtk_single_selection_set_selected(a->selection, GTK_INVALID_LIST_POSITION);
    static const char row[] =
        "<interface><template class=\"GtkListItem\"><property name=\"child\"><object class=\"GtkLabel\">"
        "<property name=\"xalign\">0</property><binding name=\"label\"><lookup name=\"string\" type=\"GtkStringObject\">"
        "<lookup name=\"item\">GtkListItem</lookup></lookup></binding></object></property></template></interface>";
    GtkListItemFactory *factory = gtk_builder_list_item_factory_new_from_bytes(NULL, g_bytes_new_static(row, sizeof row - 1));
    GtkWidget *view = gtk_list_view_new(GTK_SELECTION_MODEL(a->selection), factory);
    GtkWidget *scrolled = gtk_scrolled_window_new();
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scrolled), view);
    gtk_widget_set_vexpand(scrolled, TRUE);
    a->vadj = gtk_scrolled_window_get_vadjustment(GTK_SCROLLED_WINDOW(scrolled));
    gtk_box_append(GTK_BOX(list_page), scrolled);
    gtk_stack_add_titled(a->stack, list_page, "list", "List");
    gtk_stack_add_titled(a->stack, page_label("Details of the selected item"), "details", "Details");
    gtk_stack_add_titled(a->stack, page_label("Settings"), "settings", "Settings");
    gtk_widget_set_vexpand(GTK_WIDGET(a->stack), TRUE);
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(a->stack));
    gtk_window_set_child(a->window, box);

    /* Register, then restore into the widgets before the window shows. */
    rst_object *root = NULL;
    rst_register_object(a->engine, "window", NULL, NULL, &window_cb, a, &root);
    rst_register_object(a->engine, "stack", root, NULL, &stack_cb, a, NULL);
    rst_register_object(a->engine, "entry", root, NULL, &entry_cb, a, NULL);
    rst_register_object(a->engine, "list", root, NULL, &list_cb, a, NULL);
    rst_status s = rst_restore(a->engine);
    if (s != RST_OK && s != RST_ERR_NOT_FOUND)
        fprintf(stderr, "notes: restore: %s: %s\n", rst_status_name(s), rst_last_error());
    a->reason = rst_last_restore_reason(a->engine);
    char *status = g_strdup_printf("%s%s", rst_restore_reason_name(a->reason),
                                   a->reason == RST_REASON_RECOVER ? ": recovered after a crash — the state of the last autosave" :
                                   a->reason == RST_REASON_RELAUNCH ? ": welcome back" :
                                   a->reason == RST_REASON_FALLBACK ? ": the archive was damaged; an older generation" : ": first launch");
    gtk_label_set_text(a->status, status);
    g_free(status);
    fprintf(stderr, "notes: %s\n", rst_restore_reason_name(a->reason));

    /* Changes mark the engine dirty; the engine autosaves on this loop. */
    g_signal_connect(a->window, "notify::default-width", G_CALLBACK(on_changed), a);
    g_signal_connect(a->window, "notify::default-height", G_CALLBACK(on_changed), a);
    g_signal_connect(a->stack, "notify::visible-child-name", G_CALLBACK(on_changed), a);
    g_signal_connect(a->entry, "changed", G_CALLBACK(on_entry_changed), a);
    g_signal_connect(a->selection, "notify::selected", G_CALLBACK(on_changed), a);
    g_signal_connect(a->vadj, "value-changed", G_CALLBACK(on_scrolled), a);
    g_signal_connect(a->vadj, "changed", G_CALLBACK(on_adjustment_changed), a);
    a->restored = true;

    gtk_window_present(a->window);
    if (g_getenv("NOTES_SET")) g_timeout_add(300, apply_test_changes, a);
    if (g_getenv("NOTES_DUMP")) g_timeout_add(300, dump_and_quit, a);
}

static void shutdown_app(GApplication *gapp, gpointer user_data) {
    (void)gapp;
    app *a = user_data;
    rst_status s = rst_flush(a->engine);
    if (s != RST_OK) fprintf(stderr, "notes: save: %s: %s\n", rst_status_name(s), rst_last_error());
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: notes STATE_DIR\n"); return 2; }
    static app a;
    char *path = g_build_filename(argv[1], "notes.rst", NULL);
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.archive_path = path;
    o.app_version = "notes 1.0";
    o.idiom = "desktop";
    o.autosave_delay_ms = 100;          /* a burst of typing saves once, 100 ms after it */
    o.autosave_max_delay_ms = 2000;     /* ...and continuous changes every 2 s */
    if (g_getenv("NOTES_AUTOSAVE_MS")) {  /* test hook: a long delay leaves only the signal save */
        o.autosave_delay_ms = (uint32_t)atoi(g_getenv("NOTES_AUTOSAVE_MS"));
        o.autosave_max_delay_ms = 0;
    }
    o.generations = 2;
    o.should_restore = note_reason;
    o.log = log_to_stderr;
    o.ctx = &a;
    rst_status s = rst_engine_create(&o, &a.engine);
    if (s != RST_OK) { fprintf(stderr, "notes: %s: %s\n", rst_status_name(s), rst_last_error()); return 1; }
    g_unix_fd_add(rst_event_fd(a.engine), G_IO_IN, on_engine_fd, a.engine);
    int sigs[] = { SIGTERM, SIGINT, SIGHUP };
    s = rst_save_on_signals(a.engine, sigs, 3);
    if (s != RST_OK) fprintf(stderr, "notes: signals: %s: %s\n", rst_status_name(s), rst_last_error());

    GtkApplication *gapp = gtk_application_new("org.restoration.Notes", G_APPLICATION_NON_UNIQUE);
    g_signal_connect(gapp, "activate", G_CALLBACK(activate), &a);
    g_signal_connect(gapp, "shutdown", G_CALLBACK(shutdown_app), &a);
    char *gargv[] = { argv[0], NULL };
    int status = g_application_run(G_APPLICATION(gapp), 1, gargv);
    g_object_unref(gapp);
    rst_engine_destroy(a.engine);
    g_free(path);
    return status;
}
