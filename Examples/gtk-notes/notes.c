/* gtk-notes: a GTK 4 application in C whose state is restored by
 * restoration-gtk (Toolkits/gtk): the window size, the page of a stack, a
 * search entry, a list's selection (by the item's identity, not its index)
 * and the row at its top, the divider between the list and the note, the
 * note's text, the details page's title entry, and the settings page (a check button, a scale; the password
 * entry is never saved). The engine autosaves on the GLib main loop, saves
 * on SIGTERM/SIGINT/SIGHUP and at the window's close, keeps 2 generations,
 * and the status line tells after a crash that it recovered (RECOVER).
 *
 *   notes STATE_DIR
 *
 * Test hooks (Tests/gtk/run.sh, under Xvfb), all optional:
 *   NOTES_SET="page=P;entry=T;title=T;title_cursor=N;note=T;select=ITEM;top=ROW;
 *              divider=X;width=W;height=H;wrap=0|1;size=N;password=T"
 *       applied once the window is shown, as a user would (title_cursor=N
 *       puts the details page's title cursor at N, as a click in its text; top=ROW
 *       scrolls the list so that row index ROW is at its top); when the
 *       autosave has written them, the file $NOTES_READY is created.
 *   NOTES_READY_DIRTY=FILE  written right after the changes instead, while
 *       still dirty (with a long NOTES_AUTOSAVE_MS only a signal save or the
 *       close can save them); NOTES_CLOSE=1 then closes the window.
 *   NOTES_DUMP=FILE   once restored and laid out, writes the state the
 *       widgets show (reason=…, width=…, top_row=…: the row drawn at the top
 *       of the list) to FILE, then keeps running (for a screenshot). The
 *       page is shown as restored, then the list page is brought up to read
 *       the list: run it with a long NOTES_AUTOSAVE_MS and kill it.
 *   NOTES_REVERSE=1   the list model in reverse order (the selection and
 *       the top row must follow the item, not the index).
 *   NOTES_LOOP=MS     after NOTES_SET's changes (or at once without it),
 *       the text size scale moves one step every MS milliseconds, as a
 *       user dragging it, until the process ends: the state keeps
 *       changing and the autosave keeps saving (Tests/deathtest/run.sh
 *       kills it at every point with `restorectl test`).
 *   NOTES_AUTOSAVE_MS=N  the autosave delay.
 *   NOTES_QUIT_MS=N   closes the window N ms after the launch, as the
 *       title bar's close button does (an idle launch: no input at all). */
#define _GNU_SOURCE 1
#include <gtk/gtk.h>
#include <restoration.h>
#include <restoration-gtk.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ITEMS 150

typedef struct app {
    rst_engine *engine;
    rst_restore_reason reason;
    GtkWindow *window;
    GtkStack *stack;
    GtkEditable *search, *title, *password;
    GtkTextView *note;
    GtkPaned *divider;
    GtkListView *list;
    GtkCheckButton *wrap;
    GtkRange *size;
} app;

/* restoration: a row is named by its string ("Item 042"), whatever its index. */
static const char *row_identity(GObject *item, void *ctx) {
    (void)ctx;
    return gtk_string_object_get_string(GTK_STRING_OBJECT(item));
}

static bool note_reason(rst_engine *e, const rst_archive_info *info, void *ctx) {
    (void)e;
    ((app *)ctx)->reason = (rst_restore_reason)info->restore_reason;
    return true;                        /* an app could restore less after a crash here */
}

static void log_to_stderr(rst_engine *e, int level, const char *message, void *ctx) {
    (void)e; (void)ctx;
    if (level >= RST_LOG_INFO) fprintf(stderr, "notes: restoration: %s\n", message);
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

static GtkSingleSelection *selection_of(app *a) { return GTK_SINGLE_SELECTION(gtk_list_view_get_model(a->list)); }

static GtkAdjustment *list_vadj(app *a) { return gtk_scrollable_get_vadjustment(GTK_SCROLLABLE(a->list)); }

static char *top_row(app *a);

/* Once saved: the file $NOTES_READY, with the row the user sees at the top. */
static gboolean wait_saved(gpointer user_data) {
    app *a = user_data;
    if (rst_is_dirty(a->engine)) return G_SOURCE_CONTINUE;
    char *top = top_row(a), *text = g_strdup_printf("top_row=%s\n", top);
    g_file_set_contents(g_getenv("NOTES_READY"), text, -1, NULL);
    g_free(text);
    g_free(top);
    return G_SOURCE_REMOVE;
}

static gboolean apply_test_changes(gpointer user_data);

/* NOTES_LOOP: one step of the text size scale (8, 9, … 32, 8, …). */
static gboolean loop_step(gpointer user_data) {
    app *a = user_data;
    double v = gtk_range_get_value(a->size) + 1;
    gtk_range_set_value(a->size, v > 32 ? 8 : v);
    return G_SOURCE_CONTINUE;
}

static void start_loop(app *a) {
    const char *ms = g_getenv("NOTES_LOOP");
    if (ms && atoi(ms) > 0) g_timeout_add((guint)atoi(ms), loop_step, a);
}

/* First the window's size, then (once laid out at that size) the rest. */
static gboolean resize_first(gpointer user_data) {
    app *a = user_data;
    char *v = hook_value(g_getenv("NOTES_SET"), "width"), *h = hook_value(g_getenv("NOTES_SET"), "height");
    if (v) gtk_window_set_default_size(a->window, atoi(v), h ? atoi(h) : 400);
    g_free(v);
    g_free(h);
    g_timeout_add(300, apply_test_changes, a);
    return G_SOURCE_REMOVE;
}

static gboolean apply_test_changes(gpointer user_data) {
    app *a = user_data;
    const char *spec = g_getenv("NOTES_SET");
    char *v;
    if ((v = hook_value(spec, "page"))) { gtk_stack_set_visible_child_name(a->stack, v); g_free(v); }
    if ((v = hook_value(spec, "entry"))) { gtk_editable_set_text(a->search, v); g_free(v); }
    if ((v = hook_value(spec, "title"))) { gtk_editable_set_text(a->title, v); g_free(v); }
    if ((v = hook_value(spec, "title_cursor"))) { gtk_editable_set_position(a->title, atoi(v)); g_free(v); }
    if ((v = hook_value(spec, "note"))) { gtk_text_buffer_set_text(gtk_text_view_get_buffer(a->note), v, -1); g_free(v); }
    if ((v = hook_value(spec, "password"))) { gtk_editable_set_text(a->password, v); g_free(v); }
    if ((v = hook_value(spec, "divider"))) { gtk_paned_set_position(a->divider, atoi(v)); g_free(v); }
    if ((v = hook_value(spec, "wrap"))) { gtk_check_button_set_active(a->wrap, atoi(v) != 0); g_free(v); }
    if ((v = hook_value(spec, "size"))) { gtk_range_set_value(a->size, g_ascii_strtod(v, NULL)); g_free(v); }
    if ((v = hook_value(spec, "select"))) {
        GListModel *m = G_LIST_MODEL(selection_of(a));
        for (guint i = 0; i < g_list_model_get_n_items(m); i++) {
            GtkStringObject *o = g_list_model_get_item(m, i);
            if (strcmp(gtk_string_object_get_string(o), v) == 0) gtk_single_selection_set_selected(selection_of(a), i);
            g_object_unref(o);
        }
        g_free(v);
    }
    if ((v = hook_value(spec, "top"))) {   /* the wheel: rows of equal height */
        GtkAdjustment *adj = list_vadj(a);
        gtk_adjustment_set_value(adj, atoi(v) * gtk_adjustment_get_upper(adj) / ITEMS);
        g_free(v);
    }
    start_loop(a);
    if (g_getenv("NOTES_READY_DIRTY")) {   /* ready while still dirty (not saved yet) */
        g_file_set_contents(g_getenv("NOTES_READY_DIRTY"), rst_is_dirty(a->engine) ? "dirty\n" : "clean\n", -1, NULL);
        if (g_getenv("NOTES_CLOSE")) gtk_window_close(a->window);   /* as the title bar's close button */
        return G_SOURCE_REMOVE;
    }
    if (g_getenv("NOTES_READY")) g_timeout_add(50, wait_saved, a);
    return G_SOURCE_REMOVE;
}

static gboolean quit_now(gpointer user_data) {
    gtk_window_close(((app *)user_data)->window);   /* as the title bar's close button */
    return G_SOURCE_REMOVE;
}

/* The row drawn at the top of the list: what the user sees there. */
static char *top_row(app *a) {
    GtkWidget *w = gtk_widget_pick(GTK_WIDGET(a->list), 12, 2, GTK_PICK_DEFAULT);
    for (; w && w != GTK_WIDGET(a->list); w = gtk_widget_get_parent(w))
        if (GTK_IS_LABEL(w)) return g_strdup(gtk_label_get_text(GTK_LABEL(w)));
    return g_strdup("");
}

static gboolean dump_state(gpointer user_data) {
    app *a = user_data;
    static char *restored_page, *last_top;
    static int polls, stable;
    if (!restored_page) {
        /* The page as restored; then the list page, to read the list. */
        restored_page = g_strdup(gtk_stack_get_visible_child_name(a->stack));
        gtk_stack_set_visible_child_full(a->stack, "list", GTK_STACK_TRANSITION_TYPE_NONE);
        return G_SOURCE_CONTINUE;
    }
    char *top = top_row(a);               /* wait until the list holds still */
    stable = last_top && strcmp(top, last_top) == 0 ? stable + 1 : 0;
    g_free(last_top);
    last_top = top;
    if (stable < 4 && ++polls < 100) return G_SOURCE_CONTINUE;
    int w = 0, h = 0;
    gtk_window_get_default_size(a->window, &w, &h);
    GObject *item = gtk_single_selection_get_selected_item(selection_of(a));
    GtkTextBuffer *buf = gtk_text_view_get_buffer(a->note);
    GtkTextIter s, e;
    gtk_text_buffer_get_bounds(buf, &s, &e);
    char *note = gtk_text_buffer_get_text(buf, &s, &e, FALSE);
    char *text = g_strdup_printf(
        "reason=%s\nwidth=%d\nheight=%d\npage=%s\nentry=%s\ntitle=%s\nnote=%s\ndivider=%d\nselect=%s\nselected_index=%u\n"
        "top_row=%s\nscroll=%.0f\nwrap=%d\nsize=%.0f\npassword=%s\n",
        rst_restore_reason_name(a->reason), w, h, restored_page, gtk_editable_get_text(a->search), gtk_editable_get_text(a->title), note,
        gtk_paned_get_position(a->divider), item ? gtk_string_object_get_string(GTK_STRING_OBJECT(item)) : "",
        gtk_single_selection_get_selected(selection_of(a)), top, gtk_adjustment_get_value(list_vadj(a)),
        gtk_check_button_get_active(a->wrap), gtk_range_get_value(a->size), gtk_editable_get_text(a->password));
    g_file_set_contents(g_getenv("NOTES_DUMP"), text, -1, NULL);
    g_free(text);
    g_free(note);
    return G_SOURCE_REMOVE;
}

/* ---- the window ---- */

static GtkWidget *named(GtkWidget *w, const char *name) {
    gtk_widget_set_name(w, name);       /* a name: restored under it */
    return w;
}

static GtkWidget *list_page(app *a) {
    GtkStringList *model = gtk_string_list_new(NULL);
    bool reverse = g_getenv("NOTES_REVERSE") != NULL;
    for (int i = 0; i < ITEMS; i++) {
        char name[32];
        snprintf(name, sizeof name, "Item %03d", reverse ? ITEMS - 1 - i : i);
        gtk_string_list_append(model, name);
    }
    GtkSingleSelection *selection = gtk_single_selection_new(G_LIST_MODEL(model));
    gtk_single_selection_set_autoselect(selection, FALSE);
    gtk_single_selection_set_can_unselect(selection, TRUE);
    gtk_single_selection_set_selected(selection, GTK_INVALID_LIST_POSITION);
    static const char row[] =
        "<interface><template class=\"GtkListItem\"><property name=\"child\"><object class=\"GtkLabel\">"
        "<property name=\"xalign\">0</property><binding name=\"label\"><lookup name=\"string\" type=\"GtkStringObject\">"
        "<lookup name=\"item\">GtkListItem</lookup></lookup></binding></object></property></template></interface>";
    GtkListItemFactory *factory = gtk_builder_list_item_factory_new_from_bytes(NULL, g_bytes_new_static(row, sizeof row - 1));
    a->list = GTK_LIST_VIEW(named(gtk_list_view_new(GTK_SELECTION_MODEL(selection), factory), "notes"));
    GtkWidget *scrolled = gtk_scrolled_window_new();
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scrolled), GTK_WIDGET(a->list));
    gtk_widget_set_vexpand(scrolled, TRUE);

    GtkWidget *left = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
    a->search = GTK_EDITABLE(named(gtk_search_entry_new(), "search"));
    gtk_box_append(GTK_BOX(left), GTK_WIDGET(a->search));
    gtk_box_append(GTK_BOX(left), scrolled);

    a->note = GTK_TEXT_VIEW(named(gtk_text_view_new(), "note"));
    gtk_text_view_set_wrap_mode(a->note, GTK_WRAP_WORD_CHAR);
    GtkWidget *note_scroll = named(gtk_scrolled_window_new(), "note-scroll");
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(note_scroll), GTK_WIDGET(a->note));

    a->divider = GTK_PANED(named(gtk_paned_new(GTK_ORIENTATION_HORIZONTAL), "divider"));
    gtk_paned_set_start_child(a->divider, left);
    gtk_paned_set_end_child(a->divider, note_scroll);
    gtk_paned_set_position(a->divider, 220);
    return GTK_WIDGET(a->divider);
}

static GtkWidget *details_page(app *a) {
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
    gtk_box_append(GTK_BOX(box), gtk_label_new("Details of the selected item"));
    a->title = GTK_EDITABLE(named(gtk_entry_new(), "title"));
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(a->title));
    return box;
}

static GtkWidget *settings_page(app *a) {
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
    a->wrap = GTK_CHECK_BUTTON(named(gtk_check_button_new_with_label("Wrap long notes"), "wrap"));
    a->size = GTK_RANGE(named(gtk_scale_new_with_range(GTK_ORIENTATION_HORIZONTAL, 8, 32, 1), "text-size"));
    gtk_range_set_value(a->size, 12);
    a->password = GTK_EDITABLE(named(gtk_password_entry_new(), "password"));  /* never saved */
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(a->wrap));
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(a->size));
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(a->password));
    return box;
}

static void activate(GtkApplication *gapp, gpointer user_data) {
    app *a = user_data;
    a->window = GTK_WINDOW(named(gtk_application_window_new(gapp), "window"));
    gtk_window_set_title(a->window, "Notes — restored by librestoration");
    gtk_window_set_default_size(a->window, 480, 360);

    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
    GtkWidget *status = gtk_label_new("");
    gtk_box_append(GTK_BOX(box), status);
    a->stack = GTK_STACK(named(gtk_stack_new(), "pages"));
    GtkWidget *switcher = gtk_stack_switcher_new();
    gtk_stack_switcher_set_stack(GTK_STACK_SWITCHER(switcher), a->stack);
    gtk_box_append(GTK_BOX(box), switcher);
    gtk_stack_add_titled(a->stack, list_page(a), "list", "List");
    gtk_stack_add_titled(a->stack, details_page(a), "details", "Details");
    gtk_stack_add_titled(a->stack, settings_page(a), "settings", "Settings");
    gtk_widget_set_vexpand(GTK_WIDGET(a->stack), TRUE);
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(a->stack));
    gtk_window_set_child(a->window, box);

    /* restoration: every named widget of the window, then restore. */
    rst_gtk_set_identity(GTK_WIDGET(a->list), row_identity, NULL);
    rst_status s = rst_gtk_track(a->engine, GTK_WIDGET(a->window), NULL, NULL);
    int sigs[] = { SIGTERM, SIGINT, SIGHUP };   /* after track: it hooked the engine into the loop */
    if (s == RST_OK) s = rst_save_on_signals(a->engine, sigs, 3);
    if (s == RST_OK) s = rst_restore(a->engine);
    if (s != RST_OK && s != RST_ERR_NOT_FOUND)
        fprintf(stderr, "notes: restore: %s: %s\n", rst_status_name(s), rst_last_error());

    a->reason = rst_last_restore_reason(a->engine);
    char *text = g_strdup_printf("%s%s", rst_restore_reason_name(a->reason),
                                 a->reason == RST_REASON_RECOVER ? ": recovered after a crash — the state of the last autosave" :
                                 a->reason == RST_REASON_RELAUNCH ? ": welcome back" :
                                 a->reason == RST_REASON_FALLBACK ? ": the archive was damaged; an older generation" : ": first launch");
    gtk_label_set_text(GTK_LABEL(status), text);
    g_free(text);
    fprintf(stderr, "notes: %s\n", rst_restore_reason_name(a->reason));

    gtk_window_present(a->window);
    /* Opened on the details page: the title is where the user types (GTK
     * selects its text as it takes the focus). */
    if (g_strcmp0(gtk_stack_get_visible_child_name(a->stack), "details") == 0) gtk_widget_grab_focus(GTK_WIDGET(a->title));
    if (g_getenv("NOTES_SET")) g_timeout_add(300, resize_first, a);
    else start_loop(a);
    if (g_getenv("NOTES_DUMP")) g_timeout_add(300, dump_state, a);
    if (g_getenv("NOTES_QUIT_MS")) g_timeout_add((guint)atoi(g_getenv("NOTES_QUIT_MS")), quit_now, a);
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

    GtkApplication *gapp = gtk_application_new("org.restoration.Notes", G_APPLICATION_NON_UNIQUE);
    g_signal_connect(gapp, "activate", G_CALLBACK(activate), &a);
    char *gargv[] = { argv[0], NULL };
    int status = g_application_run(G_APPLICATION(gapp), 1, gargv);
    g_object_unref(gapp);
    rst_engine_destroy(a.engine);
    g_free(path);
    return status;
}
