/* restoration-qt: restores a Qt 6 widget tree with librestoration in a few
 * lines, with the engine's guarantees (an autosave a moment after each
 * change, so a kill -9 loses at most that moment; a save on SIGTERM, SIGINT
 * and SIGHUP; a save when a window closes).
 *
 *   rst_engine *engine = ...;                    // rst_engine_create(), with an archive_path
 *   RestorationQt::attach(engine);               // autosaves on Qt's event loop, saves on signals
 *   RestorationQt::track(engine, &window);       // every named widget under the window
 *   RestorationQt::restore(engine);              // the saved state into the widgets
 *   window.show();
 *   int status = app.exec();
 *   RestorationQt::finish(engine);               // save if needed, then rst_engine_destroy()
 *
 * What is saved, per widget type, and the pitfalls this library handles:
 * docs/QT.md. Every function must be called on the GUI thread, with a
 * QApplication alive. Link with `pkg-config --libs restoration-qt`.
 */
#ifndef RESTORATION_QT_H
#define RESTORATION_QT_H

#include <restoration.h>

class QWidget;
class QAbstractItemView;

#define RESTORATION_QT_VERSION_STRING "1.0.0"

/* The library is built with -fvisibility=hidden: these functions are its
 * whole ABI. */
#if defined(__GNUC__)
#  define RESTORATION_QT_API __attribute__((visibility("default")))
#else
#  define RESTORATION_QT_API
#endif

namespace RestorationQt {

/** Plugs the engine into Qt's event loop: a QSocketNotifier on
 *  rst_event_fd() calls rst_dispatch(), so autosaves (and signal saves) run
 *  on the GUI thread. With `saveOnSignals`, rst_save_on_signals(SIGTERM,
 *  SIGINT, SIGHUP): such a signal saves, then ends the process as it would
 *  have. Call once per engine, after QApplication exists.
 *  @return RST_OK; RST_ERR_INVALID (NULL engine, no QApplication);
 *          RST_ERR_STATE (already attached); the status of
 *          rst_save_on_signals() (the notifier stays installed), with
 *          rst_last_error() saying why. */
RESTORATION_QT_API rst_status attach(rst_engine *engine, bool saveOnSignals = true);

/** Registers `root` and every descendant widget that has an objectName
 *  except Qt's own inner widgets, which are never tracked and so never make
 *  it fail: those Qt names itself (a name starting with "qt_", a tab bar's
 *  "ScrollLeftButton" and "ScrollRightButton", a standard dialog named
 *  after its class), a QTabBar's buttons, and everything inside Qt's
 *  standard dialogs (QFileDialog, QColorDialog, QFontDialog, QInputDialog,
 *  QMessageBox, QProgressDialog, QErrorMessage); the widgets inside a
 *  "qt_"-named one (a tab widget's pages, a scroll area's contents) are
 *  still tracked. Each widget is registered under its nearest registered
 *  ancestor, so the record path is the chain of names
 *  ("notes/tabs/split/list"); unnamed widgets in between do not count. A root without an objectName is registered under its class name.
 *  A widget inside an already tracked tree is registered under it, so
 *  widgets created later can be tracked the same way. Widgets marked with
 *  skip() and their descendants are left out. Each tracked widget marks the
 *  engine dirty when the user changes it (signals fired by restore() are
 *  ignored); for a window, a resize, a move, and a change of its
 *  maximized, minimized or full-screen state even when the geometry does
 *  not move (no window manager); a window minimized when saved comes back
 *  minimized. A tracked window saves (rst_flush) when it closes or is
 *  hidden (also when the app deletes it: Qt hides it first), before a
 *  WA_DeleteOnClose window is gone, and its widgets' records outlive it
 *  with the values they had then; a widget destroyed while its window is
 *  shown is unregistered. A widget tracked at the path of a record kept
 *  that way, or of a record restore() found no widget for, takes that
 *  record and its values (a window opened later gets its state back).
 *  Set item views' models before calling it.
 *  @return RST_OK; RST_ERR_INVALID (NULL engine or root); otherwise the
 *          first failing rst_register_object() status (a name with '/',
 *          two siblings with one name: RST_ERR_DUPLICATE): that widget and
 *          its subtree are left out, each failure printed with qWarning()
 *          naming the widget, and the others are still tracked. */
RESTORATION_QT_API rst_status track(rst_engine *engine, QWidget *root);

/** Restores the saved state into the tracked widgets (rst_restore()),
 *  ignoring the change signals it causes. Scroll positions and the top row
 *  of item views are applied once the widget is shown and laid out. Call it
 *  once, after tracking every window that exists at start: a second call
 *  would set every window back to the archive. Records no tracked widget
 *  claims are kept (written again by every save) until a widget is
 *  tracked at their path: windows opened later get their state then.
 *  @return as rst_restore(): RST_OK; RST_ERR_NOT_FOUND on a first launch;
 *          RST_ERR_INVALID for a NULL engine. */
RESTORATION_QT_API rst_status restore(rst_engine *engine);

/** Leaves `widget` and its descendants out: before track(), they are not
 *  registered; after, the widget's record is unregistered (its state is no
 *  longer saved). NULL is ignored. */
RESTORATION_QT_API void skip(QWidget *widget);

/** The model role whose value (as a string) identifies a row of `view`:
 *  the current row, the selected rows and the row at the top of the view
 *  are saved and found again by it, so they follow the item when the model
 *  is reordered. Default Qt::DisplayRole. Rows are those of the view's
 *  root index, column 0. Call before restore(). NULL is ignored. */
RESTORATION_QT_API void setIdentityRole(QAbstractItemView *view, int role);

/** The object registered for `widget` by track(), so the app can register
 *  its own objects under it (rst_register_object(engine, "id", object(engine,
 *  widget), ...)): they are saved and restored beside the widget's record.
 *  @return the object while the widget is tracked; NULL for a widget not
 *          tracked by this engine (unnamed, skipped, destroyed) or NULL
 *          arguments. */
RESTORATION_QT_API rst_object *object(rst_engine *engine, QWidget *widget);

/** At the end, after the event loop returned: rst_flush() (a failure is
 *  printed with qWarning and returned), removes the notifier and every
 *  tracked widget's connections, then rst_engine_destroy(). The engine must
 *  not be used afterwards. NULL is fine. An engine given to attach(),
 *  track() or restore() must end with finish(), not rst_engine_destroy()
 *  alone: the library's notifier and bookkeeping for it go here.
 *  @return the status of rst_flush(). */
RESTORATION_QT_API rst_status finish(rst_engine *engine);

} // namespace RestorationQt

#endif
