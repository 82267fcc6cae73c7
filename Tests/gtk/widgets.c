/* widgets.c: restoration-gtk widget by widget, through buffers (run by
 * Tests/gtk/run.sh under Xvfb). A window of every supported type is
 * changed, saved, and restored into a second copy of the window; then the
 * failures: values of the wrong type or out of range in the archive, a
 * skipped widget, duplicate and invalid names, a destroyed widget, an
 * engine destroyed before its widgets. Then list selections by identity
 * (column view, grid view with several rows) into reordered models, and a
 * scrolled window's offsets applied after the first layout; every kind of
 * change marking the engine dirty, through an archive file. Then what GTK
 * moves by itself after a restore (a focused entry's select-on-focus, a
 * window's natural size, a scroll position clamped by a layout) not marking
 * it dirty; transparent containers; notebook pages by name; the records'
 * classes and a migration registered for one. */
#include "check.h"
#include <gtk/gtk.h>
#include <restoration-gtk.h>

typedef struct ui {
    GtkWindow *win;
    GtkNotebook *book;
    GtkExpander *exp;
    GtkSpinButton *spin;
    GtkRange *scale;
    GtkToggleButton *toggle;
    GtkSwitch *sw;
    GtkEditable *entry, *secret, *password, *skipped, *search;
    GtkTextView *tv;
    GtkCheckButton *check;
    GtkStack *stack;
    GtkPaned *paned;
    GtkBox *box;
} ui;

static GtkWidget *named(GtkWidget *w, const char *name) { gtk_widget_set_name(w, name); return w; }

static void build(ui *u) {
    u->win = GTK_WINDOW(named(gtk_window_new(), "win"));
    gtk_window_set_default_size(u->win, 300, 200);
    u->box = GTK_BOX(gtk_box_new(GTK_ORIENTATION_VERTICAL, 0));
    gtk_window_set_child(u->win, GTK_WIDGET(u->box));
    GtkBox *b = u->box;
    u->book = GTK_NOTEBOOK(named(gtk_notebook_new(), "book"));
    for (int i = 0; i < 3; i++) gtk_notebook_append_page(u->book, gtk_label_new("page"), NULL);
    gtk_box_append(b, GTK_WIDGET(u->book));
    u->exp = GTK_EXPANDER(named(gtk_expander_new("more"), "exp"));
    gtk_box_append(b, GTK_WIDGET(u->exp));
    u->spin = GTK_SPIN_BUTTON(named(gtk_spin_button_new_with_range(0, 100, 1), "spin"));
    gtk_box_append(b, GTK_WIDGET(u->spin));
    u->scale = GTK_RANGE(named(gtk_scale_new_with_range(GTK_ORIENTATION_HORIZONTAL, 0, 10, 0.5), "scale"));
    gtk_box_append(b, GTK_WIDGET(u->scale));
    u->toggle = GTK_TOGGLE_BUTTON(named(gtk_toggle_button_new_with_label("t"), "toggle"));
    gtk_box_append(b, GTK_WIDGET(u->toggle));
    u->sw = GTK_SWITCH(named(gtk_switch_new(), "switch"));
    gtk_box_append(b, GTK_WIDGET(u->sw));
    u->entry = GTK_EDITABLE(named(gtk_entry_new(), "entry"));
    gtk_box_append(b, GTK_WIDGET(u->entry));
    u->secret = GTK_EDITABLE(named(gtk_entry_new(), "secret"));
    gtk_entry_set_visibility(GTK_ENTRY(u->secret), FALSE);
    gtk_box_append(b, GTK_WIDGET(u->secret));
    u->password = GTK_EDITABLE(named(gtk_password_entry_new(), "password"));
    gtk_box_append(b, GTK_WIDGET(u->password));
    u->skipped = GTK_EDITABLE(named(gtk_entry_new(), "skipped"));
    rst_gtk_skip(GTK_WIDGET(u->skipped));
    gtk_box_append(b, GTK_WIDGET(u->skipped));
    u->search = GTK_EDITABLE(named(gtk_search_entry_new(), "search"));
    gtk_box_append(b, GTK_WIDGET(u->search));
    u->tv = GTK_TEXT_VIEW(named(gtk_text_view_new(), "tv"));
    gtk_box_append(b, GTK_WIDGET(u->tv));
    GtkWidget *group = named(gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 0), "group");   /* a scope */
    GtkWidget *unnamed = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 0);                 /* not one */
    u->check = GTK_CHECK_BUTTON(named(gtk_check_button_new(), "check"));
    gtk_box_append(GTK_BOX(unnamed), GTK_WIDGET(u->check));
    gtk_box_append(GTK_BOX(group), unnamed);
    gtk_box_append(b, group);
    u->stack = GTK_STACK(named(gtk_stack_new(), "stack"));
    gtk_stack_add_named(u->stack, gtk_label_new("1"), "one");
    gtk_stack_add_named(u->stack, gtk_label_new("2"), "two");
    gtk_box_append(b, GTK_WIDGET(u->stack));
    u->paned = GTK_PANED(named(gtk_paned_new(GTK_ORIENTATION_HORIZONTAL), "paned"));
    gtk_paned_set_start_child(u->paned, gtk_label_new("l"));
    gtk_paned_set_end_child(u->paned, gtk_label_new("r"));
    gtk_box_append(b, GTK_WIDGET(u->paned));
}

static char *tv_text(GtkTextView *tv, int *cursor) {
    GtkTextBuffer *buf = gtk_text_view_get_buffer(tv);
    GtkTextIter s, e;
    gtk_text_buffer_get_bounds(buf, &s, &e);
    gtk_text_buffer_get_iter_at_mark(buf, &s, gtk_text_buffer_get_insert(buf));
    *cursor = gtk_text_iter_get_offset(&s);
    gtk_text_buffer_get_start_iter(buf, &s);
    return gtk_text_buffer_get_text(buf, &s, &e, FALSE);
}

static rst_engine *engine(void) {
    rst_engine *e = NULL;
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.app_version = "widgets 1";
    CHECK_OK(rst_engine_create(&o, &e));
    return e;
}

/* The app's own object beside the widgets, under a tracked widget. */
static int64_t app_value;
static void app_encode(void *inst, rst_coder *c) { (void)inst; rst_encode_int(c, "count", 7); }
static void app_decode(void *inst, rst_coder *c) { (void)inst; rst_decode_int(c, "count", &app_value); }
static const rst_object_callbacks app_cb = { app_encode, app_decode, NULL, NULL };

/* An archive with the window's paths and values of the wrong type or range. */
static void bad_encode(void *inst, rst_coder *c) {
    const char *what = inst;
    if (strcmp(what, "win") == 0) { rst_encode_string(c, "width", "big"); rst_encode_int(c, "height", -5); }
    if (strcmp(what, "book") == 0) rst_encode_int(c, "page", 99);
    if (strcmp(what, "spin") == 0) rst_encode_string(c, "value", "42");
    if (strcmp(what, "scale") == 0) rst_encode_double(c, "value", 1.0 / 0.0);
    if (strcmp(what, "entry") == 0) { rst_encode_string(c, "text", "ok"); rst_encode_int(c, "cursor", 1000000000); }
    if (strcmp(what, "tv") == 0) rst_encode_int(c, "text", 7);
    if (strcmp(what, "stack") == 0) rst_encode_string(c, "page", "nope");
    if (strcmp(what, "paned") == 0) rst_encode_int(c, "position", -40);
    if (strcmp(what, "switch") == 0) rst_encode_int(c, "active", 1);
}
static const rst_object_callbacks bad_cb = { bad_encode, NULL, NULL, NULL };


/* ---- lists and scrolled windows ---- */

static GtkStringList *strings(int n, gboolean reverse) {
    GtkStringList *l = gtk_string_list_new(NULL);
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "s%02d", reverse ? n - 1 - i : i);
        gtk_string_list_append(l, name);
    }
    return l;
}
static int identity_calls;
static const char *grid_identity(GObject *item, void *ctx) {
    CHECK_STR(ctx, "grid");
    identity_calls++;
    return gtk_string_object_get_string(GTK_STRING_OBJECT(item));
}
static GtkWidget *list_window(gboolean reverse, GtkColumnView **cv, GtkGridView **gv) {
    GtkWidget *win = named(gtk_window_new(), "lists");
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0);
    gtk_window_set_child(GTK_WINDOW(win), box);
    GtkSingleSelection *single = gtk_single_selection_new(G_LIST_MODEL(strings(30, reverse)));
    gtk_single_selection_set_autoselect(single, FALSE);
    *cv = GTK_COLUMN_VIEW(named(gtk_column_view_new(GTK_SELECTION_MODEL(single)), "columns"));
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(*cv));
    GtkMultiSelection *multi = gtk_multi_selection_new(G_LIST_MODEL(strings(30, reverse)));
    *gv = GTK_GRID_VIEW(named(gtk_grid_view_new(GTK_SELECTION_MODEL(multi), NULL), "grid"));
    rst_gtk_set_identity(GTK_WIDGET(*gv), grid_identity, "grid");
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(*gv));
    return win;
}
static const char *selected_string(GtkSelectionModel *m, guint pos) {
    GtkStringObject *o = g_list_model_get_item(G_LIST_MODEL(m), pos);
    const char *s = gtk_string_object_get_string(o);
    g_object_unref(o);
    return s;
}

/* A window with a scrolled window "sw" over a 2000 x `height` area. */
static GtkWidget *scroll_window_of(GtkScrolledWindow **sw, int height) {
    GtkWidget *win = named(gtk_window_new(), "scrolling");
    gtk_window_set_default_size(GTK_WINDOW(win), 300, 200);
    *sw = GTK_SCROLLED_WINDOW(named(gtk_scrolled_window_new(), "sw"));
    GtkWidget *area = gtk_drawing_area_new();
    gtk_drawing_area_set_content_width(GTK_DRAWING_AREA(area), 2000);
    gtk_drawing_area_set_content_height(GTK_DRAWING_AREA(area), height);
    gtk_scrolled_window_set_child(*sw, area);
    gtk_window_set_child(GTK_WINDOW(win), GTK_WIDGET(*sw));
    return win;
}
static GtkWidget *scroll_window(GtkScrolledWindow **sw) { return scroll_window_of(sw, 2000); }
static gboolean laid_out(GtkScrolledWindow *sw) {
    GtkAdjustment *v = gtk_scrolled_window_get_vadjustment(sw);
    return gtk_widget_get_mapped(GTK_WIDGET(sw)) && gtk_adjustment_get_upper(v) >= 500 && gtk_adjustment_get_page_size(v) > 0;
}
static gboolean scrolled_to(GtkScrolledWindow *sw, double h, double v) {
    return gtk_adjustment_get_value(gtk_scrolled_window_get_hadjustment(sw)) == h
        && gtk_adjustment_get_value(gtk_scrolled_window_get_vadjustment(sw)) == v;
}
/* Runs the main loop for `ms` milliseconds. */
static void run_loop(int ms) {
    gint64 end = g_get_monotonic_time() + (gint64)ms * 1000;
    while (g_get_monotonic_time() < end)
        if (!g_main_context_iteration(NULL, FALSE)) g_usleep(2000);
}
static gboolean run_until_laid_out(GtkScrolledWindow *sw) {
    for (int i = 0; i < 250 && !laid_out(sw); i++) run_loop(20);
    return laid_out(sw);
}


/* ---- what GTK moves by itself; transparency; notebooks; classes ---- */

/* A window "w" with an entry "e" first in the focus chain, a button after it. */
static GtkWidget *focus_window(GtkEditable **entry) {
    GtkWidget *w = named(gtk_window_new(), "w");
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0);
    *entry = GTK_EDITABLE(named(gtk_entry_new(), "e"));
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(*entry));
    gtk_box_append(GTK_BOX(box), gtk_button_new_with_label("ok"));
    gtk_window_set_child(GTK_WINDOW(w), box);
    return w;
}

/* A window "w": with `paned`, a GtkPaned "split" (transparent when asked)
 * holding the entry "left" and the check button "right"; without, the two
 * directly in a box. */
static GtkWidget *split_window(gboolean paned, gboolean transparent, GtkEditable **left, GtkCheckButton **right, GtkPaned **split) {
    GtkWidget *w = named(gtk_window_new(), "w");
    *left = GTK_EDITABLE(named(gtk_entry_new(), "left"));
    *right = GTK_CHECK_BUTTON(named(gtk_check_button_new(), "right"));
    if (paned) {
        *split = GTK_PANED(named(gtk_paned_new(GTK_ORIENTATION_HORIZONTAL), "split"));
        if (transparent) CHECK_OK(rst_gtk_set_transparent(GTK_WIDGET(*split)));
        gtk_paned_set_start_child(*split, GTK_WIDGET(*left));
        gtk_paned_set_end_child(*split, GTK_WIDGET(*right));
        gtk_window_set_child(GTK_WINDOW(w), GTK_WIDGET(*split));
    } else {
        GtkWidget *box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 0);
        gtk_box_append(GTK_BOX(box), GTK_WIDGET(*left));
        gtk_box_append(GTK_BOX(box), GTK_WIDGET(*right));
        gtk_window_set_child(GTK_WINDOW(w), box);
        if (split) *split = NULL;
    }
    return w;
}

/* A notebook "book" in a window "nb" with one page per name ("" : an unnamed page). */
static GtkWidget *book_window(const char *const *pages, size_t n, GtkNotebook **book) {
    GtkWidget *w = named(gtk_window_new(), "nb");
    *book = GTK_NOTEBOOK(named(gtk_notebook_new(), "book"));
    for (size_t i = 0; i < n; i++) {
        GtkWidget *page = gtk_label_new(pages[i]);
        if (*pages[i]) gtk_widget_set_name(page, pages[i]);
        gtk_notebook_append_page(*book, page, NULL);
    }
    gtk_window_set_child(GTK_WINDOW(w), GTK_WIDGET(*book));
    return w;
}
static const char *current_page_name(GtkNotebook *b) {
    return gtk_widget_get_name(gtk_notebook_get_nth_page(b, gtk_notebook_get_current_page(b)));
}

/* A migration of GtkEntry records from version 0: the text upper-cased. */
static int migrations_run;
static rst_status upper_text(rst_coder *c, uint32_t from, void *ctx) {
    CHECK_EQ(from, 0);
    CHECK_STR(ctx, "entries");
    const char *text = NULL;
    size_t len = 0;
    if (rst_decode_string(c, "text", &text, &len) != RST_OK) return RST_OK;   /* a password entry: no text */
    char *up = g_utf8_strup(text, (gssize)len);
    rst_status s = rst_encode_string(c, "text", up);
    g_free(up);
    migrations_run++;
    return s;
}

/* A record as restoration-gtk 1.0 wrote it: no class. */
static void old_entry_encode(void *inst, rst_coder *c) {
    (void)inst;
    rst_encode_string(c, "text", "written by 1.0");
    rst_encode_int(c, "cursor", 3);
}
static const rst_object_callbacks old_entry_cb = { old_entry_encode, NULL, NULL, NULL };

int main(int argc, char **argv) {
    (void)argc;
    check_prog = "widgets";
    (void)argv;
    gtk_init();

    /* 1. Track, change, save. */
    ui a;
    build(&a);
    GtkWidget *dup1 = named(gtk_label_new("x"), "dup"), *dup2 = named(gtk_label_new("y"), "dup");
    gtk_box_append(a.box, dup1);
    gtk_box_append(a.box, dup2);
    rst_engine *ea = engine();
    rst_object *root = NULL;
    CHECK_EQ(rst_gtk_track(ea, GTK_WIDGET(a.win), NULL, &root), RST_ERR_DUPLICATE);   /* the second "dup" */
    CHECK(root != NULL);
    CHECK(rst_gtk_object(dup1) != NULL);
    CHECK(rst_gtk_object(dup2) == NULL);
    CHECK(rst_gtk_object(GTK_WIDGET(a.spin)) != NULL);             /* the others are tracked */
    CHECK(rst_gtk_object(GTK_WIDGET(a.skipped)) == NULL);
    char *path = NULL;
    CHECK_OK(rst_object_path(rst_gtk_object(GTK_WIDGET(a.check)), &path));
    CHECK_STR(path, "win/group/check");                           /* named ancestors only */
    rst_free(path);
    CHECK(rst_find_object(ea, "win/skipped") == NULL);
    CHECK_EQ(rst_gtk_track(ea, GTK_WIDGET(a.win), NULL, NULL), RST_ERR_INVALID);      /* twice */
    CHECK(!rst_is_dirty(ea));
    rst_object *group_a = rst_gtk_object(gtk_widget_get_parent(gtk_widget_get_parent(GTK_WIDGET(a.check))));
    CHECK(group_a != NULL);
    CHECK_OK(rst_register_object(ea, "appdata", group_a, NULL, &app_cb, NULL, NULL));

    gtk_window_set_default_size(a.win, 640, 480);
    CHECK(rst_is_dirty(ea));                                      /* a change marks it dirty */
    gtk_notebook_set_current_page(a.book, 2);
    gtk_expander_set_expanded(a.exp, TRUE);
    gtk_spin_button_set_value(a.spin, 42);
    gtk_range_set_value(a.scale, 7.5);
    gtk_toggle_button_set_active(a.toggle, TRUE);
    gtk_switch_set_active(a.sw, TRUE);
    gtk_editable_set_text(a.entry, "héllo");
    gtk_editable_set_position(a.entry, 2);
    gtk_editable_set_text(a.secret, "pw-entry-123");
    gtk_editable_set_text(a.password, "pw-password-456");
    gtk_editable_set_text(a.skipped, "skipped text");
    gtk_text_buffer_set_text(gtk_text_view_get_buffer(a.tv), "line1\nline2", -1);
    GtkTextIter at;
    gtk_text_buffer_get_iter_at_offset(gtk_text_view_get_buffer(a.tv), &at, 3);
    gtk_text_buffer_place_cursor(gtk_text_view_get_buffer(a.tv), &at);
    gtk_check_button_set_active(a.check, TRUE);
    gtk_stack_set_visible_child_name(a.stack, "two");
    gtk_paned_set_position(a.paned, 123);
    void *buf = NULL;
    size_t len = 0;
    CHECK_OK(rst_save_to_buffer(ea, &buf, &len));
    CHECK(memmem(buf, len, "pw-entry-123", 12) == NULL);          /* passwords are never written */
    CHECK(memmem(buf, len, "pw-password-456", 15) == NULL);
    CHECK(memmem(buf, len, "skipped text", 12) == NULL);
    CHECK(memmem(buf, len, "h\xc3\xa9llo", 6) != NULL);          /* (the search is sound) */
    rst_free(buf);
    /* An entry that hides its text later, and shows it again, stays a password. */
    GtkWidget *pw = named(gtk_window_new(), "pw");
    GtkEditable *later = GTK_EDITABLE(named(gtk_entry_new(), "later"));
    gtk_window_set_child(GTK_WINDOW(pw), GTK_WIDGET(later));
    rst_engine *epw = engine();
    CHECK_OK(rst_gtk_track(epw, pw, NULL, NULL));
    gtk_editable_set_text(later, "visible-then-hidden");
    CHECK_OK(rst_save_to_buffer(epw, &buf, &len));
    CHECK(memmem(buf, len, "visible-then-hidden", 19) != NULL);
    rst_free(buf);
    gtk_entry_set_visibility(GTK_ENTRY(later), FALSE);
    CHECK_OK(rst_save_to_buffer(epw, &buf, &len));
    CHECK(memmem(buf, len, "visible-then-hidden", 19) == NULL);
    rst_free(buf);
    gtk_entry_set_visibility(GTK_ENTRY(later), TRUE);              /* "show password" */
    CHECK_OK(rst_save_to_buffer(epw, &buf, &len));
    CHECK(memmem(buf, len, "visible-then-hidden", 19) == NULL);
    rst_free(buf);
    rst_engine_destroy(epw);
    gtk_window_destroy(GTK_WINDOW(pw));
    CHECK_OK(rst_save_to_buffer(ea, &buf, &len));

    /* 2. A second copy of the window gets it all back, and stays clean. */
    ui b;
    build(&b);
    rst_engine *eb = engine();
    CHECK_OK(rst_gtk_track(eb, GTK_WIDGET(b.win), NULL, NULL));
    CHECK_OK(rst_register_object(eb, "appdata", rst_find_object(eb, "win/group"), NULL, &app_cb, NULL, NULL));
    CHECK_OK(rst_restore_from_buffer(eb, buf, len));
    CHECK_EQ(app_value, 7);                                       /* the app's object, restored beside */
    CHECK(!rst_is_dirty(eb));                                     /* restoring is not a change */
    int w = 0, h = 0, cursor = 0;
    gtk_window_get_default_size(b.win, &w, &h);
    CHECK_EQ(w, 640);
    CHECK_EQ(h, 480);
    CHECK_EQ(gtk_notebook_get_current_page(b.book), 2);
    CHECK(gtk_expander_get_expanded(b.exp));
    CHECK(gtk_spin_button_get_value(b.spin) == 42);
    CHECK(gtk_range_get_value(b.scale) == 7.5);
    CHECK(gtk_toggle_button_get_active(b.toggle));
    CHECK(gtk_switch_get_active(b.sw));
    CHECK_STR(gtk_editable_get_text(b.entry), "héllo");
    CHECK_EQ(gtk_editable_get_position(b.entry), 2);
    CHECK_STR(gtk_editable_get_text(b.secret), "");
    CHECK_STR(gtk_editable_get_text(b.password), "");
    CHECK_STR(gtk_editable_get_text(b.skipped), "");
    char *text = tv_text(b.tv, &cursor);
    CHECK_STR(text, "line1\nline2");
    CHECK_EQ(cursor, 3);
    g_free(text);
    CHECK(gtk_check_button_get_active(b.check));
    CHECK_STR(gtk_stack_get_visible_child_name(b.stack), "two");
    CHECK_EQ(gtk_paned_get_position(b.paned), 123);
    gtk_editable_set_text(b.entry, "changed");
    CHECK(rst_is_dirty(eb));                                      /* and tracks changes afterwards */
    rst_free(buf);

    /* 3. A destroyed widget keeps its last state in the archive. */
    gtk_editable_set_text(a.entry, "last words");
    gtk_box_remove(a.box, GTK_WIDGET(a.entry));                   /* the box held the only reference */
    CHECK(rst_find_object(ea, "win/entry") != NULL);
    CHECK_OK(rst_save_to_buffer(ea, &buf, &len));
    ui c;
    build(&c);
    rst_engine *ec = engine();
    CHECK_OK(rst_gtk_track(ec, GTK_WIDGET(c.win), NULL, NULL));
    CHECK_OK(rst_restore_from_buffer(ec, buf, len));
    CHECK_STR(gtk_editable_get_text(c.entry), "last words");
    rst_free(buf);

    /* 4. Untrusted values: wrong types, out of range, unknown names: ignored. */
    rst_engine *ex = engine();
    rst_object *xr = NULL;
    CHECK_OK(rst_register_object(ex, "win", NULL, NULL, &bad_cb, "win", &xr));
    const char *kids[] = { "book", "spin", "scale", "entry", "tv", "stack", "paned", "switch" };
    for (size_t i = 0; i < sizeof kids / sizeof kids[0]; i++)
        CHECK_OK(rst_register_object(ex, kids[i], xr, NULL, &bad_cb, (void *)kids[i], NULL));
    CHECK_OK(rst_save_to_buffer(ex, &buf, &len));
    ui d;
    build(&d);
    rst_engine *ed = engine();
    CHECK_OK(rst_gtk_track(ed, GTK_WIDGET(d.win), NULL, NULL));
    CHECK_OK(rst_restore_from_buffer(ed, buf, len));
    gtk_window_get_default_size(d.win, &w, &h);
    CHECK_EQ(w, 300);
    CHECK_EQ(h, 200);
    CHECK_EQ(gtk_notebook_get_current_page(d.book), 0);
    CHECK(gtk_spin_button_get_value(d.spin) == 0);
    CHECK(gtk_range_get_value(d.scale) == 0);
    CHECK_STR(gtk_editable_get_text(d.entry), "ok");              /* the text is fine, the cursor not */
    text = tv_text(d.tv, &cursor);
    CHECK_STR(text, "");
    g_free(text);
    CHECK_STR(gtk_stack_get_visible_child_name(d.stack), "one");
    CHECK(!gtk_switch_get_active(d.sw));
    rst_free(buf);
    rst_engine_destroy(ex);

    /* 5. Misuse. */
    CHECK_EQ(rst_gtk_set_identity(GTK_WIDGET(d.spin), NULL, NULL), RST_ERR_INVALID);   /* not a list view */
    GtkWidget *slash = named(gtk_window_new(), "a/b");
    CHECK_EQ(rst_gtk_track(ed, slash, NULL, NULL), RST_ERR_INVALID);
    CHECK(rst_gtk_object(slash) == NULL);
    gtk_window_destroy(GTK_WINDOW(slash));

    /* 6. Engines destroyed before their widgets; widgets destroyed before their engine. */
    rst_engine_destroy(ea);
    rst_engine_destroy(eb);
    gtk_editable_set_text(b.entry, "after the engine");           /* nothing listens any more */
    CHECK(rst_gtk_object(GTK_WIDGET(b.entry)) == NULL);
    gtk_window_destroy(a.win);
    gtk_window_destroy(b.win);
    gtk_window_destroy(c.win);
    gtk_window_destroy(d.win);
    CHECK_OK(rst_save_to_buffer(ec, &buf, &len));                 /* states of destroyed widgets */
    rst_free(buf);
    rst_engine_destroy(ec);
    rst_engine_destroy(ed);

    /* 7. A column view (GtkStringObject items: their strings) and a grid
     *    view with several rows selected (an identity callback) restored
     *    into models in reverse order. */
    GtkColumnView *cv;
    GtkGridView *gv;
    GtkWidget *lw = list_window(FALSE, &cv, &gv);
    rst_engine *el = engine();
    CHECK_OK(rst_gtk_track(el, lw, NULL, NULL));
    GtkSelectionModel *cm = gtk_column_view_get_model(cv), *gm = gtk_grid_view_get_model(gv);
    gtk_selection_model_select_item(cm, 4, TRUE);
    gtk_selection_model_select_item(gm, 3, FALSE);
    gtk_selection_model_select_item(gm, 5, FALSE);
    gtk_selection_model_select_item(gm, 7, FALSE);
    CHECK(rst_is_dirty(el));
    CHECK_OK(rst_save_to_buffer(el, &buf, &len));
    CHECK(identity_calls > 0);
    GtkWidget *lw2 = list_window(TRUE, &cv, &gv);
    rst_engine *el2 = engine();
    CHECK_OK(rst_gtk_track(el2, lw2, NULL, NULL));
    CHECK_OK(rst_restore_from_buffer(el2, buf, len));
    cm = gtk_column_view_get_model(cv);
    gm = gtk_grid_view_get_model(gv);
    CHECK_EQ(gtk_single_selection_get_selected(GTK_SINGLE_SELECTION(cm)), 25);   /* s04, reversed */
    CHECK_STR(selected_string(cm, 25), "s04");
    GtkBitset *sel = gtk_selection_model_get_selection(gm);
    CHECK_EQ(gtk_bitset_get_size(sel), 3);
    CHECK(gtk_bitset_contains(sel, 26) && gtk_bitset_contains(sel, 24) && gtk_bitset_contains(sel, 22));
    gtk_bitset_unref(sel);
    CHECK(!rst_is_dirty(el2));
    rst_free(buf);
    rst_engine_destroy(el);
    rst_engine_destroy(el2);
    gtk_window_destroy(GTK_WINDOW(lw));
    gtk_window_destroy(GTK_WINDOW(lw2));

    /* 8. A scrolled window's offsets, restored before the window is shown,
     *    are there once it is laid out; the layout does not mark it dirty. */
    GtkScrolledWindow *sw;
    GtkWidget *sww = scroll_window(&sw);
    rst_engine *es = engine();
    CHECK_OK(rst_gtk_track(es, sww, NULL, NULL));
    gtk_window_present(GTK_WINDOW(sww));
    CHECK(run_until_laid_out(sw));
    gtk_adjustment_set_value(gtk_scrolled_window_get_hadjustment(sw), 150);
    gtk_adjustment_set_value(gtk_scrolled_window_get_vadjustment(sw), 700);
    CHECK(rst_is_dirty(es));
    CHECK_OK(rst_save_to_buffer(es, &buf, &len));
    GtkScrolledWindow *sw2;
    GtkWidget *sww2 = scroll_window(&sw2);
    rst_engine *es2 = engine();
    CHECK_OK(rst_gtk_track(es2, sww2, NULL, NULL));
    CHECK_OK(rst_restore_from_buffer(es2, buf, len));
    void *pending = NULL;
    size_t pending_len = 0;
    CHECK_OK(rst_save_to_buffer(es2, &pending, &pending_len));        /* before the layout: the pending offsets */
    gtk_window_present(GTK_WINDOW(sww2));
    CHECK(run_until_laid_out(sw2));
    for (int i = 0; i < 100 && !scrolled_to(sw2, 150, 700); i++) run_loop(20);
    run_loop(200);
    CHECK(scrolled_to(sw2, 150, 700));
    CHECK(!rst_is_dirty(es2));
    GtkScrolledWindow *sw3;
    GtkWidget *sww3 = scroll_window(&sw3);
    rst_engine *es3 = engine();
    CHECK_OK(rst_gtk_track(es3, sww3, NULL, NULL));
    CHECK_OK(rst_restore_from_buffer(es3, pending, pending_len));
    gtk_window_present(GTK_WINDOW(sww3));
    CHECK(run_until_laid_out(sw3));
    for (int i = 0; i < 100 && !scrolled_to(sw3, 150, 700); i++) run_loop(20);
    CHECK(scrolled_to(sw3, 150, 700));
    /* Content shorter than the saved offset: the nearest offset at once,
     *    and the user's scrolling afterwards is not taken back. */
    GtkScrolledWindow *sw4;
    GtkWidget *sww4 = scroll_window_of(&sw4, 600);
    rst_engine *es4 = engine();
    CHECK_OK(rst_gtk_track(es4, sww4, NULL, NULL));
    CHECK_OK(rst_restore_from_buffer(es4, buf, len));
    gtk_window_present(GTK_WINDOW(sww4));
    CHECK(run_until_laid_out(sw4));
    GtkAdjustment *v4 = gtk_scrolled_window_get_vadjustment(sw4);
    double bottom = gtk_adjustment_get_upper(v4) - gtk_adjustment_get_page_size(v4);
    for (int i = 0; i < 50 && gtk_adjustment_get_value(v4) != bottom; i++) run_loop(20);
    CHECK(gtk_adjustment_get_value(v4) == bottom);
    CHECK(gtk_adjustment_get_value(gtk_scrolled_window_get_hadjustment(sw4)) == 150);
    run_loop(300);
    CHECK(!rst_is_dirty(es4));
    gtk_adjustment_set_value(v4, 10);                                  /* the user scrolls */
    run_loop(300);
    CHECK(gtk_adjustment_get_value(v4) == 10);
    CHECK(rst_is_dirty(es4));
    rst_engine_destroy(es4);
    gtk_window_destroy(GTK_WINDOW(sww4));
    rst_free(buf);
    rst_free(pending);
    rst_engine_destroy(es);
    rst_engine_destroy(es2);
    rst_engine_destroy(es3);
    gtk_window_destroy(GTK_WINDOW(sww));
    gtk_window_destroy(GTK_WINDOW(sww2));
    gtk_window_destroy(GTK_WINDOW(sww3));

    /* 9. Each kind of change a user makes marks the engine dirty. */
    char dir[] = "/tmp/rst-gtk-widgets.XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char *archive = xasprintf("%s/w.rst", dir);
    ui f;
    build(&f);
    rst_engine *ef = new_engine(archive);
    CHECK_OK(rst_gtk_track(ef, GTK_WIDGET(f.win), NULL, NULL));
    CHECK_OK(rst_restore(ef) == RST_ERR_NOT_FOUND ? RST_OK : RST_ERR_STATE);
#define DIRTIES(what, change) do {                                          \
        CHECK_OK(rst_flush(ef));                                            \
        CHECK(!rst_is_dirty(ef));                                           \
        change;                                                             \
        if (!rst_is_dirty(ef)) { fprintf(stderr, "not dirty after: %s\n", what); CHECK(rst_is_dirty(ef)); } \
    } while (0)
    DIRTIES("window size", gtk_window_set_default_size(f.win, 500, 400));
    DIRTIES("notebook page", gtk_notebook_set_current_page(f.book, 1));
    DIRTIES("expander", gtk_expander_set_expanded(f.exp, TRUE));
    DIRTIES("spin button", gtk_spin_button_set_value(f.spin, 3));
    DIRTIES("scale", gtk_range_set_value(f.scale, 2));
    DIRTIES("toggle button", gtk_toggle_button_set_active(f.toggle, TRUE));
    DIRTIES("switch", gtk_switch_set_active(f.sw, TRUE));
    DIRTIES("entry text", gtk_editable_set_text(f.entry, "abc"));
    DIRTIES("entry cursor", gtk_editable_set_position(f.entry, 1));
    DIRTIES("search entry", gtk_editable_set_text(f.search, "query"));
    DIRTIES("text view", gtk_text_buffer_set_text(gtk_text_view_get_buffer(f.tv), "x", -1));
    GtkTextBuffer *newbuf = gtk_text_buffer_new(NULL);
    DIRTIES("text view buffer replaced", gtk_text_view_set_buffer(f.tv, newbuf));
    DIRTIES("replaced buffer", gtk_text_buffer_set_text(newbuf, "in the new buffer", -1));
    g_object_unref(newbuf);
    DIRTIES("check button", gtk_check_button_set_active(f.check, TRUE));
    DIRTIES("stack", gtk_stack_set_visible_child_name(f.stack, "two"));
    DIRTIES("paned", gtk_paned_set_position(f.paned, 77));
    CHECK_OK(rst_flush(ef));
    rst_engine_destroy(ef);
    ui g;
    build(&g);
    rst_engine *eg = new_engine(archive);
    CHECK_OK(rst_gtk_track(eg, GTK_WIDGET(g.win), NULL, NULL));
    CHECK_OK(rst_restore(eg));
    text = tv_text(g.tv, &cursor);
    CHECK_STR(text, "in the new buffer");
    g_free(text);
    CHECK_STR(gtk_editable_get_text(g.search), "query");
    CHECK_EQ(gtk_paned_get_position(g.paned), 77);
    rst_engine_destroy(eg);
    gtk_window_destroy(f.win);
    gtk_window_destroy(g.win);
    unlink(archive);
    const char *beside[] = { "session", "lock", "1", "2" };
    for (size_t i = 0; i < sizeof beside / sizeof beside[0]; i++) {
        char *f2 = xasprintf("%s.%s", archive, beside[i]);
        unlink(f2);
        free(f2);
    }
    free(archive);
    rmdir(dir);

    /* 10. GtkBuilder ids name widgets too; objects without an id are not saved. */
    static const char xml[] =
        "<interface><object class=\"GtkWindow\" id=\"bwin\"><child><object class=\"GtkBox\">"
        "<child><object class=\"GtkEntry\" id=\"bentry\"/></child>"
        "<child><object class=\"GtkLabel\"/></child>"
        "</object></child></object></interface>";
    GtkBuilder *builder = gtk_builder_new_from_string(xml, -1);
    GtkWidget *bwin = GTK_WIDGET(gtk_builder_get_object(builder, "bwin"));
    GtkWidget *bentry = GTK_WIDGET(gtk_builder_get_object(builder, "bentry"));
    rst_engine *ebld = engine();
    CHECK_OK(rst_gtk_track(ebld, bwin, NULL, NULL));
    CHECK(rst_find_object(ebld, "bwin") != NULL);
    CHECK(rst_find_object(ebld, "bwin/bentry") == rst_gtk_object(bentry));
    CHECK(rst_gtk_object(gtk_widget_get_next_sibling(bentry)) == NULL);
    CHECK(rst_gtk_object(gtk_widget_get_parent(bentry)) == NULL);
    rst_engine_destroy(ebld);
    gtk_window_destroy(GTK_WINDOW(bwin));
    g_object_unref(builder);
    /* 11. What GTK moves by itself after a restore is not a change: a
     *     restored entry taking the focus has its text selected and its
     *     cursor moved to the end (select-on-focus); a window without a
     *     default size gets its natural size when shown. A user's change
     *     afterwards still is one, and the next save writes what is shown. */
    GtkEditable *fe1, *fe2;
    GtkWidget *fw1 = focus_window(&fe1);
    rst_engine *ef1 = engine();
    CHECK_OK(rst_gtk_track(ef1, fw1, NULL, NULL));
    gtk_editable_set_text(fe1, "abcdef");
    CHECK_EQ(gtk_editable_get_position(fe1), 0);
    CHECK_OK(rst_save_to_buffer(ef1, &buf, &len));
    rst_engine_destroy(ef1);
    gtk_window_destroy(GTK_WINDOW(fw1));
    GtkWidget *fw2 = focus_window(&fe2);
    rst_engine *ef2 = engine();
    CHECK_OK(rst_gtk_track(ef2, fw2, NULL, NULL));
    CHECK_OK(rst_restore_from_buffer(ef2, buf, len));
    rst_free(buf);
    CHECK_STR(gtk_editable_get_text(fe2), "abcdef");
    CHECK_EQ(gtk_editable_get_position(fe2), 0);
    gtk_window_present(GTK_WINDOW(fw2));                     /* the entry takes the focus */
    for (int i = 0; i < 100 && gtk_editable_get_position(fe2) != 6; i++) run_loop(20);
    run_loop(200);
    int sel_start = -1, sel_end = -1;
    CHECK(gtk_editable_get_selection_bounds(fe2, &sel_start, &sel_end));   /* GTK did select it all */
    CHECK_EQ(sel_start, 0);
    CHECK_EQ(sel_end, 6);
    CHECK_EQ(gtk_editable_get_position(fe2), 6);
    gtk_window_get_default_size(GTK_WINDOW(fw2), &w, &h);
    CHECK(w > 0 && h > 0);                                    /* GTK gave it its natural size */
    if (rst_is_dirty(ef2)) CHECK_MSG(0, "restoring, focusing and showing marked the engine dirty");
    gtk_editable_set_position(fe2, 2);                        /* the user clicks into the text */
    CHECK(rst_is_dirty(ef2));
    CHECK_OK(rst_save_to_buffer(ef2, &buf, &len));
    CHECK(memmem(buf, len, "abcdef", 6) != NULL);
    rst_free(buf);
    rst_engine_destroy(ef2);
    gtk_window_destroy(GTK_WINDOW(fw2));

    /*     A scroll position a layout clamps (the content got shorter after
     *     the restore settled) is not a change; the user's scroll is. */
    GtkScrolledWindow *lsw1, *lsw2;
    GtkWidget *lsww1 = scroll_window(&lsw1);
    rst_engine *el1 = engine();
    CHECK_OK(rst_gtk_track(el1, lsww1, NULL, NULL));
    gtk_window_present(GTK_WINDOW(lsww1));
    CHECK(run_until_laid_out(lsw1));
    gtk_adjustment_set_value(gtk_scrolled_window_get_vadjustment(lsw1), 1500);
    CHECK_OK(rst_save_to_buffer(el1, &buf, &len));
    rst_engine_destroy(el1);
    gtk_window_destroy(GTK_WINDOW(lsww1));
    GtkWidget *lsww2 = scroll_window(&lsw2);
    rst_engine *el3 = engine();
    CHECK_OK(rst_gtk_track(el3, lsww2, NULL, NULL));
    CHECK_OK(rst_restore_from_buffer(el3, buf, len));
    rst_free(buf);
    gtk_window_present(GTK_WINDOW(lsww2));
    CHECK(run_until_laid_out(lsw2));
    GtkAdjustment *lv = gtk_scrolled_window_get_vadjustment(lsw2);
    for (int i = 0; i < 100 && gtk_adjustment_get_value(lv) != 1500; i++) run_loop(20);
    run_loop(300);                                            /* the restore settled */
    CHECK(gtk_adjustment_get_value(lv) == 1500);
    CHECK(!rst_is_dirty(el3));
    GtkWidget *area = gtk_scrolled_window_get_child(lsw2);
    if (GTK_IS_VIEWPORT(area)) area = gtk_viewport_get_child(GTK_VIEWPORT(area));
    gtk_drawing_area_set_content_height(GTK_DRAWING_AREA(area), 1000);   /* the content shrinks */
    for (int i = 0; i < 100 && gtk_adjustment_get_value(lv) >= 1500; i++) run_loop(20);
    run_loop(100);
    CHECK(gtk_adjustment_get_value(lv) < 1000);               /* GTK clamped it */
    if (rst_is_dirty(el3)) CHECK_MSG(0, "a scroll position clamped by a layout marked the engine dirty");
    gtk_adjustment_set_value(lv, 20);                         /* the user scrolls */
    CHECK(rst_is_dirty(el3));
    rst_engine_destroy(el3);
    gtk_window_destroy(GTK_WINDOW(lsww2));

    /* 12. A transparent container: its named children are registered
     *     beside it, so adding or removing it keeps their records; its own
     *     record (the divider) stays. */
    GtkEditable *left;
    GtkCheckButton *right;
    GtkPaned *split;
    GtkWidget *tw1 = split_window(FALSE, FALSE, &left, &right, NULL);   /* release 1: no paned */
    rst_engine *et1 = engine();
    CHECK_OK(rst_gtk_track(et1, tw1, NULL, NULL));
    gtk_editable_set_text(left, "kept across releases");
    gtk_check_button_set_active(right, TRUE);
    CHECK_OK(rst_save_to_buffer(et1, &buf, &len));
    rst_engine_destroy(et1);
    gtk_window_destroy(GTK_WINDOW(tw1));
    GtkWidget *tw2 = split_window(TRUE, TRUE, &left, &right, &split);   /* release 2: a named, transparent paned */
    rst_engine *et2 = engine();
    CHECK_OK(rst_gtk_track(et2, tw2, NULL, NULL));
    CHECK(rst_find_object(et2, "w/left") == rst_gtk_object(GTK_WIDGET(left)));
    CHECK(rst_find_object(et2, "w/right") == rst_gtk_object(GTK_WIDGET(right)));
    CHECK(rst_find_object(et2, "w/split") == rst_gtk_object(GTK_WIDGET(split)));
    CHECK(rst_find_object(et2, "w/split/left") == NULL);
    CHECK_OK(rst_restore_from_buffer(et2, buf, len));
    rst_free(buf);
    CHECK_STR(gtk_editable_get_text(left), "kept across releases");
    CHECK(gtk_check_button_get_active(right));
    gtk_paned_set_position(split, 87);
    CHECK(rst_is_dirty(et2));                                 /* its own state is still saved */
    CHECK_OK(rst_save_to_buffer(et2, &buf, &len));
    rst_engine_destroy(et2);
    gtk_window_destroy(GTK_WINDOW(tw2));
    GtkWidget *tw3 = split_window(TRUE, TRUE, &left, &right, &split);
    rst_engine *et3 = engine();
    CHECK_OK(rst_gtk_track(et3, tw3, NULL, NULL));
    CHECK_OK(rst_restore_from_buffer(et3, buf, len));
    CHECK_EQ(gtk_paned_get_position(split), 87);
    CHECK_STR(gtk_editable_get_text(left), "kept across releases");
    rst_engine_destroy(et3);
    gtk_window_destroy(GTK_WINDOW(tw3));
    GtkWidget *tw4 = split_window(FALSE, FALSE, &left, &right, NULL);   /* release 3: the paned removed */
    rst_engine *et4 = engine();
    CHECK_OK(rst_gtk_track(et4, tw4, NULL, NULL));
    CHECK_OK(rst_restore_from_buffer(et4, buf, len));
    rst_free(buf);
    CHECK_STR(gtk_editable_get_text(left), "kept across releases");
    CHECK(gtk_check_button_get_active(right));
    rst_engine_destroy(et4);
    gtk_window_destroy(GTK_WINDOW(tw4));
    GtkWidget *tw5 = split_window(TRUE, FALSE, &left, &right, &split);  /* not transparent: under it */
    rst_engine *et5 = engine();
    CHECK_OK(rst_gtk_track(et5, tw5, NULL, NULL));
    CHECK(rst_find_object(et5, "w/split/left") == rst_gtk_object(GTK_WIDGET(left)));
    rst_engine_destroy(et5);
    gtk_window_destroy(GTK_WINDOW(tw5));
    CHECK_EQ(rst_gtk_set_transparent(NULL), RST_ERR_INVALID);

    /* 13. Notebook pages by name: the page comes back by its name in a
     *     notebook whose pages moved; a name no page has is ignored; an
     *     unnamed page (and an archive of 1.0) by index. */
    GtkNotebook *nb;
    const char *pages1[] = { "inbox", "drafts", "sent" };
    GtkWidget *nw1 = book_window(pages1, 3, &nb);
    rst_engine *en1 = engine();
    CHECK_OK(rst_gtk_track(en1, nw1, NULL, NULL));
    gtk_notebook_set_current_page(nb, 2);
    CHECK(rst_is_dirty(en1));
    CHECK_OK(rst_save_to_buffer(en1, &buf, &len));
    rst_engine_destroy(en1);
    gtk_window_destroy(GTK_WINDOW(nw1));
    const char *pages2[] = { "sent", "archive", "inbox", "drafts" };    /* reordered, one added */
    GtkWidget *nw2 = book_window(pages2, 4, &nb);
    rst_engine *en2 = engine();
    CHECK_OK(rst_gtk_track(en2, nw2, NULL, NULL));
    CHECK_OK(rst_restore_from_buffer(en2, buf, len));
    CHECK_STR(current_page_name(nb), "sent");
    CHECK_EQ(gtk_notebook_get_current_page(nb), 0);
    rst_engine_destroy(en2);
    gtk_window_destroy(GTK_WINDOW(nw2));
    const char *pages3[] = { "inbox", "drafts", "outbox" };           /* "sent" is gone */
    GtkWidget *nw3 = book_window(pages3, 3, &nb);
    rst_engine *en3 = engine();
    CHECK_OK(rst_gtk_track(en3, nw3, NULL, NULL));
    CHECK_OK(rst_restore_from_buffer(en3, buf, len));
    rst_free(buf);
    CHECK_EQ(gtk_notebook_get_current_page(nb), 0);           /* not the page at the old index 2 */
    rst_engine_destroy(en3);
    gtk_window_destroy(GTK_WINDOW(nw3));
    const char *pages4[] = { "", "", "" };                    /* unnamed pages: by index */
    GtkWidget *nw4 = book_window(pages4, 3, &nb);
    rst_engine *en4 = engine();
    CHECK_OK(rst_gtk_track(en4, nw4, NULL, NULL));
    gtk_notebook_set_current_page(nb, 1);
    CHECK_OK(rst_save_to_buffer(en4, &buf, &len));
    rst_engine_destroy(en4);
    gtk_window_destroy(GTK_WINDOW(nw4));
    GtkWidget *nw5 = book_window(pages1, 3, &nb);              /* an index restores into named pages too */
    rst_engine *en5 = engine();
    CHECK_OK(rst_gtk_track(en5, nw5, NULL, NULL));
    CHECK_OK(rst_restore_from_buffer(en5, buf, len));
    rst_free(buf);
    CHECK_STR(current_page_name(nb), "drafts");
    rst_engine_destroy(en5);
    gtk_window_destroy(GTK_WINDOW(nw5));

    /* 14. Each record's class is its widget's type name: a migration
     *     registered for "GtkEntry" runs on the entries' records (and only
     *     theirs); a record without a class (restoration-gtk 1.0) restores
     *     as before, unmigrated. */
    ui m1;
    build(&m1);
    rst_engine *em1 = engine();
    CHECK_OK(rst_gtk_track(em1, GTK_WIDGET(m1.win), NULL, NULL));
    CHECK_STR(rst_object_class_name(rst_gtk_object(GTK_WIDGET(m1.entry))), "GtkEntry");
    CHECK_STR(rst_object_class_name(rst_gtk_object(GTK_WIDGET(m1.book))), "GtkNotebook");
    CHECK_STR(rst_object_class_name(rst_gtk_object(GTK_WIDGET(m1.search))), "GtkSearchEntry");
    CHECK_STR(rst_object_class_name(rst_gtk_object(GTK_WIDGET(m1.win))), "GtkWindow");
    gtk_editable_set_text(m1.entry, "lower case");
    gtk_editable_set_text(m1.search, "search text");
    CHECK_OK(rst_save_to_buffer(em1, &buf, &len));
    rst_engine_destroy(em1);
    ui m2;
    build(&m2);
    rst_engine *em2 = engine();
    CHECK_OK(rst_gtk_track(em2, GTK_WIDGET(m2.win), NULL, NULL));
    CHECK_OK(rst_set_class_version(em2, "GtkEntry", 1));
    CHECK_OK(rst_register_migration(em2, "GtkEntry", 0, upper_text, "entries"));
    CHECK_OK(rst_restore_from_buffer(em2, buf, len));
    rst_free(buf);
    CHECK_STR(gtk_editable_get_text(m2.entry), "LOWER CASE");
    CHECK_STR(gtk_editable_get_text(m2.search), "search text");   /* a GtkSearchEntry: not migrated */
    CHECK(migrations_run >= 1);
    CHECK(!rst_is_dirty(em2));
    rst_engine_destroy(em2);
    rst_engine *eold = engine();                              /* the 1.0 layout: no classes */
    rst_object *oldw = NULL;
    CHECK_OK(rst_register_object(eold, "win", NULL, NULL, NULL, NULL, &oldw));
    CHECK_OK(rst_register_object(eold, "entry", oldw, NULL, &old_entry_cb, NULL, NULL));
    CHECK_OK(rst_save_to_buffer(eold, &buf, &len));
    rst_engine_destroy(eold);
    ui m3;
    build(&m3);
    rst_engine *em3 = engine();
    CHECK_OK(rst_gtk_track(em3, GTK_WIDGET(m3.win), NULL, NULL));
    CHECK_OK(rst_set_class_version(em3, "GtkEntry", 1));
    CHECK_OK(rst_register_migration(em3, "GtkEntry", 0, upper_text, "entries"));
    int before_old = migrations_run;
    CHECK_OK(rst_restore_from_buffer(em3, buf, len));
    rst_free(buf);
    CHECK_STR(gtk_editable_get_text(m3.entry), "written by 1.0");
    CHECK_EQ(gtk_editable_get_position(m3.entry), 3);
    CHECK_EQ(migrations_run, before_old);
    rst_engine_destroy(em3);
    gtk_window_destroy(m1.win);
    gtk_window_destroy(m2.win);
    gtk_window_destroy(m3.win);
    DONE();
}
