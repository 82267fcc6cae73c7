/* broken-gtk.c: the GTK negative control of Tests/deathtest/run.sh — a
 * window with a long scrolled list whose scroll offset is restored with the
 * plain C API (no restoration-gtk), in two modes that differ in one thing:
 *
 *   broken-gtk DIR good    the restored offset is kept pending and applied
 *                          once the list is laid out (its adjustment's range
 *                          reaches it); while pending, a save writes the
 *                          pending value: every point and the round trip pass
 *   broken-gtk DIR early   the fault: the offset is applied in decode, before
 *                          the first layout, when the adjustment has no range
 *                          yet, so GTK clamps it to 0 and the state is lost;
 *                          the round trip names 'list v'
 *
 * Object: "list" (v double: the vertical offset). While it runs it scrolls
 * the list every 200 ms as a user would and autosaves; at most 60 s.
 * Run it under X (Xvfb) with GDK_BACKEND=x11. */
#include <gtk/gtk.h>
#include <restoration.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rst_engine *engine;
static rst_object *list_object;
static GtkAdjustment *vadj;
static gboolean early, pending;
static double pending_v;
static int ticks;

static void list_encode(void *instance, rst_coder *c) {
    (void)instance;
    rst_encode_double(c, "v", pending ? pending_v : gtk_adjustment_get_value(vadj));
}

static void list_decode(void *instance, rst_coder *c) {
    (void)instance;
    double v = 0;
    if (rst_decode_double(c, "v", &v) != RST_OK) return;
    if (early) { gtk_adjustment_set_value(vadj, v); return; }   /* the fault: no range yet, clamped to 0 */
    pending_v = v;
    pending = TRUE;
}

static const rst_object_callbacks list_cb = { list_encode, list_decode, NULL, NULL };

/* The list laid out: its range now reaches the pending offset. */
static void on_range(GtkAdjustment *a, gpointer data) {
    (void)data;
    if (pending && gtk_adjustment_get_upper(a) - gtk_adjustment_get_page_size(a) >= pending_v) {
        pending = FALSE;
        gtk_adjustment_set_value(a, pending_v);
    }
}

static void on_scrolled(GtkAdjustment *a, gpointer data) {
    (void)a; (void)data;
    if (!pending) rst_mark_dirty(engine, list_object);
}

static gboolean scroll_step(gpointer data) {
    (void)data;
    if (++ticks > 300) { g_application_quit(g_application_get_default()); return G_SOURCE_REMOVE; }
    pending = FALSE;
    gtk_adjustment_set_value(vadj, 100 + (ticks * 37) % 700);
    return G_SOURCE_CONTINUE;
}

static void activate(GtkApplication *app, gpointer data) {
    (void)data;
    GtkWidget *window = gtk_application_window_new(app);
    gtk_window_set_default_size(GTK_WINDOW(window), 300, 300);
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0);
    for (int i = 0; i < 200; i++) {
        char text[32];
        snprintf(text, sizeof text, "Row %03d", i);
        gtk_box_append(GTK_BOX(box), gtk_label_new(text));
    }
    GtkWidget *scrolled = gtk_scrolled_window_new();
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scrolled), box);
    gtk_window_set_child(GTK_WINDOW(window), scrolled);
    vadj = gtk_scrolled_window_get_vadjustment(GTK_SCROLLED_WINDOW(scrolled));
    g_signal_connect(vadj, "changed", G_CALLBACK(on_range), NULL);
    g_signal_connect(vadj, "value-changed", G_CALLBACK(on_scrolled), NULL);

    rst_register_object(engine, "list", NULL, "List", &list_cb, NULL, &list_object);
    rst_status s = rst_restore(engine);
    fprintf(stderr, "broken-gtk %s: restore: %s, %s\n", early ? "early" : "good", rst_status_name(s),
            rst_restore_reason_name(rst_last_restore_reason(engine)));
    gtk_window_present(GTK_WINDOW(window));
    g_timeout_add(200, scroll_step, NULL);
}

/* The autosave, driven from the GLib loop. */
static gboolean dispatch(gpointer data) {
    (void)data;
    rst_dispatch(engine);
    return G_SOURCE_CONTINUE;
}

int main(int argc, char **argv) {
    if (argc != 3 || (strcmp(argv[2], "good") != 0 && strcmp(argv[2], "early") != 0)) {
        fprintf(stderr, "usage: broken-gtk DIR good|early\n");
        return 2;
    }
    early = strcmp(argv[2], "early") == 0;
    char *path = g_build_filename(argv[1], "broken-gtk.rst", NULL);
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.archive_path = path;
    o.autosave_delay_ms = 50;
    if (rst_engine_create(&o, &engine) != RST_OK) { fprintf(stderr, "broken-gtk: %s\n", rst_last_error()); return 1; }
    g_timeout_add(20, dispatch, NULL);
    GtkApplication *app = gtk_application_new("org.restoration.BrokenGtk", G_APPLICATION_NON_UNIQUE);
    g_signal_connect(app, "activate", G_CALLBACK(activate), NULL);
    char *gargv[] = { argv[0], NULL };
    int status = g_application_run(G_APPLICATION(app), 1, gargv);
    g_object_unref(app);
    rst_save(engine);
    rst_engine_destroy(engine);
    g_free(path);
    return status;
}
