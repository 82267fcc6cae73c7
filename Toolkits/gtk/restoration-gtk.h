/* restoration-gtk: a GTK 4 widget tree saved and restored by librestoration.
 *
 *   rst_gtk_track(engine, GTK_WIDGET(window), NULL, NULL);
 *   rst_restore(engine);
 *   gtk_window_present(window);
 *
 * rst_gtk_track() registers every named widget of the tree (a name given
 * with gtk_widget_set_name(), else a GtkBuilder id) as a restoration object
 * under its nearest named ancestor, so the record paths are the names
 * ("window/pages/divider/notes"). Unnamed widgets are not saved; their named
 * descendants are. Each record's class is the widget's type name
 * ("GtkEntry", "GtkNotebook", an app's own subclass name), so an app can
 * set class versions and register migrations for them. At restore each
 * widget gets back what a user changed (docs/GTK.md lists it per widget
 * type); afterwards every change the user makes marks the engine dirty —
 * what GTK moves by itself does not (a restored entry's text selected as it
 * takes the focus, a scroll position a layout clamps), so a launch without
 * input writes nothing. The engine's descriptor is watched by the GLib main
 * loop (autosave on the GTK thread), and the window saves at close-request,
 * while its widgets still exist.
 *
 * Choices a C user may depend on:
 * - The root is always registered: as its name, else its GtkBuilder id,
 *   else "window". Call rst_gtk_track() once per root, after the tree is
 *   built and before rst_restore(); widgets added later are not tracked.
 * - Password entries (GtkPasswordEntry, or a GtkEntry/GtkText whose
 *   visibility was off at any time the library looked: tracking, a save, a
 *   change of visibility) never have their text written.
 * - A widget that is destroyed keeps its last state in the archive until the
 *   engine is destroyed; the library holds no reference to tracked widgets.
 * - Every function runs on the GTK main thread, and so must the engine's
 *   saves: the library dispatches them from the GLib main loop, so do not
 *   also start rst_start_autosave_thread() (its saves would read widgets
 *   from another thread); rst_save(), rst_flush() on the GTK thread are fine.
 * - Problems with single widgets (a name with '/', two siblings of the same
 *   name) are logged with g_warning() in the "restoration-gtk" domain, the
 *   widget is left out, and rst_gtk_track() returns the first such status
 *   after tracking all the others.
 *
 * Link: pkg-config --cflags --libs restoration-gtk (GTK 4.8 or later). */
#ifndef RESTORATION_GTK_H
#define RESTORATION_GTK_H

#include <gtk/gtk.h>
#include <restoration.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#  define RST_GTK_API __attribute__((visibility("default")))
#else
#  define RST_GTK_API
#endif

#define RST_GTK_VERSION_STRING "1.1.0"

/** Registers the named widgets of `root`'s tree (root included) with `e`,
 *  under `parent` (NULL: as a root object; else an object of `e`, e.g. the
 *  app's "windows" scope in a multi-window app), hooks the engine into the
 *  GLib main loop (once per engine: g_unix_fd_add() on rst_event_fd(), whose
 *  source calls rst_dispatch(); nothing for an engine without archive_path)
 *  and flushes the engine (with an archive_path) at the window's
 *  close-request and when `root` is unrealized. Values are applied when rst_restore() (or
 *  rst_restore_from_buffer()) decodes them; scroll positions once the
 *  widget is laid out.
 *  @param[out] out the root's object (to register the app's own objects
 *         under it), or NULL.
 *  @return RST_OK; RST_ERR_INVALID (NULL engine or root, a root already
 *          tracked); any status of rst_register_object() for the root
 *          (rst_last_error() says why); after tracking the rest, the first
 *          status of a widget that was left out (logged with g_warning). */
RST_GTK_API rst_status rst_gtk_track(rst_engine *e, GtkWidget *root, rst_object *parent,
                                     rst_object **out);

/** Returns an item's identity for list views: a non-empty UTF-8 string that
 *  names the row's item in every run (a file name, a database key), or NULL
 *  when the item has none. The string is borrowed: it is copied at once. */
typedef const char *(*rst_gtk_identity_fn)(GObject *item, void *ctx);

/** How a GtkListView, GtkColumnView or GtkGridView names its items: the
 *  selection is saved as the identities of the selected items and restored
 *  by finding them in the model as it is at restore (reordered, grown or
 *  shrunk); the scroll position as the identity of the row at the top.
 *  Without this call a model of GtkStringObject items uses each string;
 *  other models restore neither selection nor top row (only the scroll
 *  offset in pixels). Call it before rst_restore().
 *  @param fn NULL removes the callback.
 *  @return RST_OK; RST_ERR_INVALID when `view` is not one of these views. */
RST_GTK_API rst_status rst_gtk_set_identity(GtkWidget *view, rst_gtk_identity_fn fn, void *ctx);

/** Leaves `widget` and all its descendants out of rst_gtk_track() (call it
 *  before): nothing of them is saved or restored, even if named.
 *  @return RST_OK; RST_ERR_INVALID for a NULL or non-widget argument. */
RST_GTK_API rst_status rst_gtk_skip(GtkWidget *widget);

/** Makes `widget` transparent to paths (call it before rst_gtk_track()):
 *  its named descendants are registered under its nearest registered
 *  ancestor, as if it had no name, so that naming, adding or removing such
 *  a container (a paned, a box) between releases keeps its children's
 *  records. A named transparent widget still has its own record, beside
 *  its children (a GtkPaned keeps its divider position). No effect on the
 *  root given to rst_gtk_track(), which is always a path component.
 *  @return RST_OK; RST_ERR_INVALID for a NULL or non-widget argument. */
RST_GTK_API rst_status rst_gtk_set_transparent(GtkWidget *widget);

/** The object rst_gtk_track() registered for `widget`, to register the app's
 *  own objects under it or to pass to rst_mark_dirty().
 *  @return the object; NULL when the widget is not tracked. */
RST_GTK_API rst_object *rst_gtk_object(GtkWidget *widget);

#ifdef __cplusplus
}
#endif
#endif /* RESTORATION_GTK_H */
