/* qt-notes: a Qt 6 application whose whole state comes back after a
 * relaunch, a kill -9 or a logout — the window's size, the tab, the search
 * field, the list's selected note (by its name, not its row) and the row at
 * its top, the editor's text and cursor, the splitter, a checkbox and a
 * combo box — through restoration-qt: the restoration code is the block
 * marked "Restoration" in main(): the engine's options, rst_engine_create()
 * and four calls to the library (docs/QT.md). A password field is never
 * saved.
 *
 *   notes STATE_DIR
 *
 * Test hooks (Tests/qt/run.sh, under Xvfb), all optional:
 *   NOTES_SET="tab=T;search=S;select=NOTE;scroll=Y;split=DX;editor=TEXT;wrap=1;theme=NAME;
 *              password=P;width=W;height=H;maximize=1;close=1"
 *       done once the window is shown, as a user would: typed (the search
 *       text replaced, the editor's appended), clicked, dragged (in that
 *       order: the notes page first, then the tab; maximize=1 last, as
 *       the title bar's maximize button). When
 *       the autosave has written it, the state shown is written to
 *       $NOTES_READY; with $NOTES_READY_DIRTY, "dirty" or "clean" is
 *       written there right after the changes instead (no wait); close=1
 *       then closes the window at once.
 *   NOTES_DUMP=FILE   once restored, shown and laid out, writes the state
 *       shown (reason=…, width=…, top=… the row at the top of the list, …,
 *       dirty_at_start=0 when restoring and showing marked nothing) to FILE, then waits for FILE.quit to exist and closes the window.
 *   NOTES_REVERSE=1   the notes in reverse order (the selection and the top
 *       row must follow the note, not the row number).
 *   NOTES_AUTOSAVE_MS=N  the autosave delay (long: only a signal save or
 *       the save when the window closes can write the changes).
 *   NOTES_LOOP=MS     after NOTES_SET's changes (or at once without it),
 *       the theme combo box moves to the next entry every MS milliseconds,
 *       as a user picking one, until the process ends: the state keeps
 *       changing and the autosave keeps saving (Tests/deathtest/run.sh
 *       kills it at every point with `restorectl test`). */
#include <restoration-qt.h>

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QMainWindow>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QSplitter>
#include <QStatusBar>
#include <QStringListModel>
#include <QTabBar>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <cstdio>
#include <cstdlib>

enum { NOTES = 150 };

struct Notes {
    QMainWindow *window;
    QLineEdit *search;
    QTabWidget *tabs;
    QSplitter *split;
    QListView *list;
    QStringListModel *model;
    QPlainTextEdit *editor;
    QCheckBox *wrap;
    QComboBox *theme;
    QLineEdit *password;
};

static Notes build() {
    Notes n;
    n.window = new QMainWindow;
    n.window->setObjectName("notes");
    n.window->setAttribute(Qt::WA_DeleteOnClose);
    n.window->setWindowTitle("Notes — restored by librestoration");
    auto *central = new QWidget;
    auto *box = new QVBoxLayout(central);
    n.search = new QLineEdit;
    n.search->setObjectName("search");
    n.search->setPlaceholderText("Search…");
    box->addWidget(n.search);
    n.tabs = new QTabWidget;
    n.tabs->setObjectName("tabs");
    box->addWidget(n.tabs);

    n.split = new QSplitter(Qt::Horizontal);
    n.split->setObjectName("split");
    QStringList names;
    for (int i = 0; i < NOTES; i++)
        names << QString::asprintf("Note %03d", qEnvironmentVariableIsSet("NOTES_REVERSE") ? NOTES - 1 - i : i);
    n.model = new QStringListModel(names, n.window);
    n.list = new QListView;
    n.list->setObjectName("list");
    n.list->setModel(n.model);
    n.list->setEditTriggers(QAbstractItemView::NoEditTriggers);
    n.editor = new QPlainTextEdit;
    n.editor->setObjectName("editor");
    n.editor->setPlaceholderText("Write a note…");
    n.split->addWidget(n.list);
    n.split->addWidget(n.editor);
    n.tabs->addTab(n.split, "Notes");

    auto *settings = new QWidget;
    settings->setObjectName("settings");
    auto *form = new QVBoxLayout(settings);
    n.wrap = new QCheckBox("Wrap long lines");
    n.wrap->setObjectName("wrap");
    n.wrap->setChecked(true);
    QObject::connect(n.wrap, &QCheckBox::toggled, n.editor, [e = n.editor](bool on) {
        e->setLineWrapMode(on ? QPlainTextEdit::WidgetWidth : QPlainTextEdit::NoWrap);
    });
    n.theme = new QComboBox;
    n.theme->setObjectName("theme");
    n.theme->addItems({ "Light", "Dark", "Solarized" });
    n.password = new QLineEdit;
    n.password->setObjectName("password");
    n.password->setEchoMode(QLineEdit::Password);
    n.password->setPlaceholderText("Sync password (never saved)");
    form->addWidget(n.wrap);
    form->addWidget(n.theme);
    form->addWidget(n.password);
    form->addStretch();
    n.tabs->addTab(settings, "Settings");
    n.window->setCentralWidget(central);
    n.window->resize(520, 380);
    return n;
}

/* ---- test hooks ---- */

static QString hookValue(const QString &spec, const QString &key) {
    for (const QString &part : spec.split(';'))
        if (part.startsWith(key + '=')) return part.mid(key.size() + 1);
    return QString();
}

static QString row(const QListView *v, const QModelIndex &i) {
    return i.isValid() ? v->model()->data(i, Qt::DisplayRole).toString() : QString();
}

static QString dump(const Notes &n, const char *reason, const QString &tab) {
    QString s;
    QModelIndex cur = n.list->currentIndex();
    QStringList sizes;
    for (int size : n.split->sizes()) sizes << QString::number(size);
    QString editor = n.editor->toPlainText();
    editor.replace('\\', "\\\\").replace('\n', "\\n");
    s += QString("reason=%1\n").arg(reason);
    s += QString("width=%1\nheight=%2\n").arg(n.window->width()).arg(n.window->height());
    s += QString("maximized=%1\n").arg(n.window->isMaximized());
    s += QString("tab=%1\n").arg(tab);
    s += QString("search=%1\n").arg(n.search->text());
    s += QString("select=%1\nselected_index=%2\n").arg(row(n.list, cur)).arg(cur.row());
    s += QString("top=%1\n").arg(row(n.list, n.list->indexAt(QPoint(0, 0))));
    s += QString("editor=%1\ncursor=%2\n").arg(editor).arg(n.editor->textCursor().position());
    s += QString("split=%1\n").arg(sizes.join(','));
    s += QString("wrap=%1\ntheme=%2\npassword=%3\n").arg(n.wrap->isChecked()).arg(n.theme->currentText(), n.password->text());
    return s;
}

static void writeFile(const QString &path, const QString &text) {
    QFile f(path);
    if (f.open(QIODevice::WriteOnly | QIODevice::Truncate)) f.write(text.toUtf8());
}

/* A user's input, as the window system delivers it. */
static void mouse(QWidget *w, QEvent::Type type, QPoint at, Qt::MouseButton button, Qt::MouseButtons buttons) {
    QMouseEvent e(type, QPointF(at), QPointF(w->mapToGlobal(at)), button, buttons, Qt::NoModifier);
    QApplication::sendEvent(w, &e);
}
static void click(QWidget *w, QPoint at) {
    mouse(w, QEvent::MouseButtonPress, at, Qt::LeftButton, Qt::LeftButton);
    mouse(w, QEvent::MouseButtonRelease, at, Qt::LeftButton, Qt::NoButton);
}
static void drag(QWidget *handle, int dx) {
    QPoint from = handle->rect().center(), to = from + QPoint(dx, 0);
    mouse(handle, QEvent::MouseButtonPress, from, Qt::LeftButton, Qt::LeftButton);
    mouse(handle, QEvent::MouseMove, to, Qt::NoButton, Qt::LeftButton);
    mouse(handle, QEvent::MouseButtonRelease, to, Qt::LeftButton, Qt::NoButton);
}
static void type(QWidget *w, const QString &text) {
    for (QChar ch : text) {
        int key = ch == '\n' ? int(Qt::Key_Return) : int(Qt::Key_unknown);
        QString t = ch == '\n' ? QString("\r") : QString(ch);
        QKeyEvent press(QEvent::KeyPress, key, Qt::NoModifier, t), release(QEvent::KeyRelease, key, Qt::NoModifier, t);
        QApplication::sendEvent(w, &press);
        QApplication::sendEvent(w, &release);
    }
}

/* NOTES_LOOP: the next theme every MS milliseconds, for good. */
static void startLoop(const Notes &n) {
    const int ms = qEnvironmentVariableIntValue("NOTES_LOOP");
    if (ms <= 0) return;
    auto *loop = new QTimer(n.window);
    QObject::connect(loop, &QTimer::timeout, n.window, [n] {
        n.theme->setCurrentIndex((n.theme->currentIndex() + 1) % n.theme->count());
    });
    loop->start(ms);
}

static void applyTestChanges(const Notes &n, rst_engine *engine) {
    const QString spec = qEnvironmentVariable("NOTES_SET");
    QString v;
    if (!(v = hookValue(spec, "search")).isEmpty()) {     // replaces the text, as select-all and typing do
        n.search->selectAll();
        type(n.search, v);
    }
    if (!(v = hookValue(spec, "select")).isEmpty()) {
        QModelIndexList hits = n.model->match(n.model->index(0, 0), Qt::DisplayRole, v, 1, Qt::MatchExactly);
        if (!hits.isEmpty()) {
            n.list->scrollTo(hits.first());
            click(n.list->viewport(), n.list->visualRect(hits.first()).center());
        }
    }
    if (!(v = hookValue(spec, "scroll")).isEmpty()) n.list->verticalScrollBar()->setValue(v.toInt());
    if (!(v = hookValue(spec, "split")).isEmpty()) drag(n.split->handle(1), v.toInt());
    if (!(v = hookValue(spec, "editor")).isEmpty()) {
        n.editor->setFocus();
        type(n.editor, v);
    }
    if (!(v = hookValue(spec, "tab")).isEmpty()) {
        for (int i = 0; i < n.tabs->count(); i++)
            if (n.tabs->widget(i)->objectName() == v)
                click(n.tabs->tabBar(), n.tabs->tabBar()->tabRect(i).center());
    }
    if (hookValue(spec, "wrap") == (n.wrap->isChecked() ? "0" : "1")) click(n.wrap, QPoint(8, n.wrap->height() / 2));
    if (!(v = hookValue(spec, "theme")).isEmpty()) n.theme->setCurrentIndex(n.theme->findText(v));
    if (!(v = hookValue(spec, "password")).isEmpty()) type(n.password, v);
    if (!(v = hookValue(spec, "width")).isEmpty()) n.window->resize(v.toInt(), hookValue(spec, "height").toInt());
    if (hookValue(spec, "maximize") == "1") n.window->showMaximized();
    startLoop(n);

    if (qEnvironmentVariableIsSet("NOTES_READY_DIRTY")) {
        writeFile(qEnvironmentVariable("NOTES_READY_DIRTY"), rst_is_dirty(engine) ? "dirty\n" : "clean\n");
        if (hookValue(spec, "close") == "1") n.window->close();
        return;
    }
    auto *poll = new QTimer(n.window);
    QObject::connect(poll, &QTimer::timeout, n.window, [n, engine, poll] {
        if (rst_is_dirty(engine)) return;
        poll->stop();
        QString tab = n.tabs->currentWidget()->objectName();
        writeFile(qEnvironmentVariable("NOTES_READY"), dump(n, "", tab));
    });
    poll->start(50);
}

static void dumpWhenLaidOut(const Notes &n, rst_engine *engine) {
    // Restoring and showing changed nothing the user did: not dirty.
    const bool dirty = rst_is_dirty(engine);
    // The tab as restored; then the notes page, so the list is shown and
    // its restored top row laid out, as when the user opens that tab.
    QString tab = n.tabs->currentWidget()->objectName();
    n.tabs->setCurrentWidget(n.split);
    QTimer::singleShot(1000, n.window, [n, engine, tab, dirty] {
        const char *reason = rst_restore_reason_name(rst_last_restore_reason(engine));
        const QString path = qEnvironmentVariable("NOTES_DUMP");
        writeFile(path, dump(n, reason, tab) + QString("dirty_at_start=%1\n").arg(dirty));
        auto *wait = new QTimer(n.window);
        QObject::connect(wait, &QTimer::timeout, n.window, [n, path] {
            if (QFile::exists(path + ".quit")) n.window->close();
        });
        wait->start(100);
    });
}

/* A long delay leaves only the signal save or the save on close. */
static void testAutosaveDelay(rst_engine_options *o) {
    if (!qEnvironmentVariableIsSet("NOTES_AUTOSAVE_MS")) return;
    o->autosave_delay_ms = uint32_t(qEnvironmentVariableIntValue("NOTES_AUTOSAVE_MS"));
    o->autosave_max_delay_ms = 0;
}

int main(int argc, char **argv) {
    QApplication app(argc, argv);
    if (argc < 2) { std::fprintf(stderr, "usage: notes STATE_DIR\n"); return 2; }
    Notes n = build();

    // Restoration: an engine saving to STATE_DIR/notes.rst (100 ms after a
    // change, every 2 s while changes go on, 2 generations), in Qt's loop.
    rst_engine_options o;
    rst_engine_options_init(&o, RST_ENGINE_OPTIONS_VERSION);
    const QByteArray path = QDir(QString::fromLocal8Bit(argv[1])).filePath("notes.rst").toLocal8Bit();
    o.archive_path = path.constData();
    o.app_version = "qt-notes 1.0";
    o.autosave_delay_ms = 100;                          // a burst of typing saves once, 100 ms after it
    o.autosave_max_delay_ms = 2000;                     // ...and continuous changes every 2 s
    o.generations = 2;
    testAutosaveDelay(&o);                              // test hook: NOTES_AUTOSAVE_MS
    rst_engine *engine = nullptr;
    if (rst_engine_create(&o, &engine) != RST_OK) { std::fprintf(stderr, "notes: %s\n", rst_last_error()); return 1; }
    RestorationQt::attach(engine);                      // autosave in this loop; save on SIGTERM/SIGINT/SIGHUP
    RestorationQt::track(engine, n.window);             // every named widget
    rst_status s = RestorationQt::restore(engine);      // RST_ERR_NOT_FOUND: a first launch
    if (s != RST_OK && s != RST_ERR_NOT_FOUND) std::fprintf(stderr, "notes: restore: %s\n", rst_last_error());

    rst_restore_reason reason = rst_last_restore_reason(engine);
    std::fprintf(stderr, "notes: %s\n", rst_restore_reason_name(reason));
    n.window->statusBar()->showMessage(reason == RST_REASON_RECOVER ? "Recovered after a crash: the state of the last autosave"
                                       : reason == RST_REASON_RELAUNCH ? "Welcome back"
                                       : reason == RST_REASON_FALLBACK ? "The last state was damaged: an older one"
                                       : "First launch");
    n.window->show();
    if (qEnvironmentVariableIsSet("NOTES_SET")) QTimer::singleShot(300, n.window, [n, engine] { applyTestChanges(n, engine); });
    else QTimer::singleShot(300, n.window, [n] { startLoop(n); });
    if (qEnvironmentVariableIsSet("NOTES_DUMP")) QTimer::singleShot(800, n.window, [n, engine] { dumpWhenLaidOut(n, engine); });
    int status = app.exec();
    RestorationQt::finish(engine);                      // after the loop: save if needed, destroy
    return status;
}
