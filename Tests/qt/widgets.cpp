/* restoration-qt, widget by widget (Tests/qt/run.sh runs it under Xvfb):
 * every supported type marks the engine dirty when changed and comes back
 * in a fresh tree; restoring marks nothing; skip(), setIdentityRole() (rows
 * found again by a custom role in a reordered model, several selected), a
 * table's header, a floated dock, a password field after a "show" toggle,
 * the app's own object under a widget (object()),
 * widgets tracked later, destroyed widgets, a closed window's record kept
 * and given back to the window opened again, and the failures: NULL
 * arguments, a second attach, two siblings with one name, a name with '/'.
 * Then a window maximized, full screen, minimized with no window manager
 * (the geometry does not move): each a change, the maximized state back in
 * a new window; Qt's own widgets (two unnamed QTabWidgets' scroll buttons,
 * two file dialogs' insides under one named widget) never tracked, and
 * track() succeeds without a warning.
 *   widgets STATE_DIR     prints "widgets: N checks, M failed" */
#include <restoration-qt.h>

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QFile>
#include <QFileDialog>
#include <QHeaderView>
#include <QLineEdit>
#include <QMainWindow>
#include <QRadioButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSlider>
#include <QSpinBox>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTableWidget>
#include <QTextEdit>
#include <QVBoxLayout>

#include <cstdio>

#include <QCloseEvent>

static int checks, failures;

/* restoration-qt's warnings, counted (and still printed). */
static int qtWarnings;
static QtMessageHandler previousHandler;
static void countWarnings(QtMsgType type, const QMessageLogContext &context, const QString &message) {
    if (message.startsWith(QLatin1String("restoration-qt:"))) qtWarnings++;
    previousHandler(type, context, message);
}

/* A window that refuses to close (an "unsaved changes?" answer). */
class Refusing : public QWidget {
protected:
    void closeEvent(QCloseEvent *e) override { e->ignore(); }
};
#define CHECK(cond) do { checks++; if (!(cond)) { failures++; \
    std::fprintf(stderr, "widgets.cpp:%d: FAILED: %s\n", __LINE__, #cond); } } while (0)

static void settle(int ms) {
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < ms) QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
}

struct Tree {
    QWidget *root;
    QStackedWidget *stack;
    QTextEdit *rich, *plain;
    QSpinBox *spin;
    QDoubleSpinBox *dspin;
    QSlider *slider, *skippedLater;
    QRadioButton *one, *two;
    QCheckBox *check;
    QComboBox *combo, *editable;
    QLineEdit *inner, *skipped, *echoOnEdit, *dup1, *dup2, *slash, *shown;
    QScrollArea *area;
    QTableWidget *table;
};

static Tree build(bool reverse) {
    Tree t;
    t.root = new QWidget;
    t.root->setObjectName("root");
    t.root->resize(600, 500);
    auto *box = new QVBoxLayout(t.root);
    auto add = [box](auto *w, const char *name) { w->setObjectName(name); box->addWidget(w); return w; };
    t.stack = add(new QStackedWidget, "stack");
    for (const char *page : { "first", "second", "third" }) {
        auto *p = new QWidget;
        p->setObjectName(page);
        t.stack->addWidget(p);
    }
    t.rich = add(new QTextEdit, "rich");
    t.plain = add(new QTextEdit, "plain");
    t.plain->setAcceptRichText(false);
    t.spin = add(new QSpinBox, "spin");
    t.spin->setRange(0, 1000);
    t.dspin = add(new QDoubleSpinBox, "dspin");
    t.dspin->setRange(0, 100);
    t.dspin->setDecimals(3);
    t.slider = add(new QSlider(Qt::Horizontal), "slider");
    t.skippedLater = add(new QSlider(Qt::Horizontal), "skippedLater");
    t.one = add(new QRadioButton("one"), "one");
    t.two = add(new QRadioButton("two"), "two");
    t.one->setChecked(true);
    t.check = add(new QCheckBox("check"), "check");
    t.combo = add(new QComboBox, "combo");
    t.combo->addItems({ "alpha", "beta", "gamma" });
    t.editable = add(new QComboBox, "editable");
    t.editable->setEditable(true);
    t.editable->addItems({ "x", "y" });
    auto *unnamed = new QWidget;               // not registered: its children go under "root"
    auto *ubox = new QVBoxLayout(unnamed);
    t.inner = new QLineEdit;
    t.inner->setObjectName("inner");
    ubox->addWidget(t.inner);
    box->addWidget(unnamed);
    t.skipped = add(new QLineEdit, "skipped");
    t.echoOnEdit = add(new QLineEdit, "echoOnEdit");
    t.echoOnEdit->setEchoMode(QLineEdit::PasswordEchoOnEdit);
    t.shown = add(new QLineEdit, "shown");                 // a password with a "show" toggle
    t.shown->setEchoMode(QLineEdit::Password);
    t.dup1 = add(new QLineEdit, "dup");
    t.dup2 = add(new QLineEdit, "dup");
    t.slash = add(new QLineEdit, "a/b");
    t.area = add(new QScrollArea, "area");
    auto *big = new QWidget;
    big->setMinimumSize(2000, 2000);
    t.area->setWidget(big);
    t.table = add(new QTableWidget(100, 2), "table");
    t.table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    t.table->setSelectionBehavior(QAbstractItemView::SelectRows);
    for (int r = 0; r < 100; r++) {
        int id = reverse ? 99 - r : r;
        auto *item = new QTableWidgetItem("same text");    // DisplayRole: no identity
        item->setData(Qt::UserRole, QString("id-%1").arg(id));
        t.table->setItem(r, 0, item);
        t.table->setItem(r, 1, new QTableWidgetItem(QString::number(id)));
    }
    RestorationQt::setIdentityRole(t.table, Qt::UserRole);
    return t;
}

/* The app's own object, registered under a tracked widget. */
static int64_t appValue;
static const rst_object_callbacks appCallbacks = {
    [](void *, rst_coder *c) { rst_encode_int(c, "count", appValue); },
    [](void *, rst_coder *c) { (void)rst_decode_int(c, "count", &appValue); },
    nullptr, nullptr,
};

static rst_engine *engineAt(const QByteArray &path) {
    rst_engine_options o;
    rst_engine_options_init(&o, RST_ENGINE_OPTIONS_VERSION);
    o.archive_path = path.constData();
    rst_engine *e = nullptr;
    if (rst_engine_create(&o, &e) != RST_OK) std::fprintf(stderr, "widgets: %s\n", rst_last_error());
    return e;
}

static int rowOf(QTableWidget *t, const QString &id) {
    for (int r = 0; r < t->rowCount(); r++)
        if (t->item(r, 0)->data(Qt::UserRole).toString() == id) return r;
    return -1;
}

/* A change: the engine dirty; then saved, clean again. */
#define CHANGED(e, what) do { CHECK(!rst_is_dirty(e)); what; CHECK(rst_is_dirty(e)); \
    CHECK(rst_save(e) == RST_OK); CHECK(!rst_is_dirty(e)); } while (0)

int main(int argc, char **argv) {
    QApplication app(argc, argv);
    if (argc < 2) { std::fprintf(stderr, "usage: widgets STATE_DIR\n"); return 2; }
    const QByteArray path = QByteArray(argv[1]) + "/widgets.rst";
    QFile::remove(QString::fromLocal8Bit(path));

    // ---- session 1: track, change each widget, save ----
    rst_engine *e = engineAt(path);
    CHECK(e != nullptr);
    CHECK(RestorationQt::attach(nullptr) == RST_ERR_INVALID);
    CHECK(RestorationQt::attach(e, false) == RST_OK);
    CHECK(RestorationQt::attach(e, false) == RST_ERR_STATE);
    Tree a = build(false);
    CHECK(RestorationQt::track(nullptr, a.root) == RST_ERR_INVALID);
    CHECK(RestorationQt::track(e, nullptr) == RST_ERR_INVALID);
    RestorationQt::skip(a.skipped);
    rst_status st = RestorationQt::track(e, a.root);
    CHECK(st == RST_ERR_DUPLICATE || st == RST_ERR_INVALID);   // the second "dup", "a/b": left out, the rest tracked
    CHECK(rst_find_object(e, "root") != nullptr);
    CHECK(rst_find_object(e, "root/inner") != nullptr);         // under the unnamed container
    CHECK(rst_find_object(e, "root/dup") != nullptr);
    CHECK(rst_find_object(e, "root/skipped") == nullptr);
    CHECK(rst_find_object(e, "root/stack/second") != nullptr);
    CHECK(rst_find_object(e, "root/spin") != nullptr);
    CHECK(RestorationQt::object(e, a.spin) == rst_find_object(e, "root/spin"));
    CHECK(RestorationQt::object(e, a.skipped) == nullptr);
    CHECK(RestorationQt::object(e, nullptr) == nullptr);
    CHECK(RestorationQt::object(nullptr, a.spin) == nullptr);
    CHECK(rst_register_object(e, "appdata", RestorationQt::object(e, a.stack), nullptr, &appCallbacks, nullptr, nullptr) == RST_OK);
    appValue = 31;
    CHECK(RestorationQt::restore(e) == RST_ERR_NOT_FOUND);
    CHECK(!rst_is_dirty(e));
    a.root->show();
    settle(300);
    CHECK(rst_save(e) == RST_OK);                              // whatever the first show did

    CHANGED(e, a.stack->setCurrentIndex(2));
    CHANGED(e, a.rich->setHtml("<b>bold</b> text"));
    CHANGED(e, a.plain->setPlainText("plain\ntext"));
    CHANGED(e, { QTextCursor c = a.plain->textCursor(); c.setPosition(3); a.plain->setTextCursor(c); });
    CHANGED(e, a.spin->setValue(421));
    CHANGED(e, a.dspin->setValue(12.345));
    CHANGED(e, a.slider->setValue(77));
    CHANGED(e, a.skippedLater->setValue(55));
    CHANGED(e, a.two->setChecked(true));
    CHANGED(e, a.check->setChecked(true));
    CHANGED(e, a.combo->setCurrentIndex(2));
    CHANGED(e, a.editable->setEditText("typed"));
    CHANGED(e, a.inner->setText("inside"));
    CHANGED(e, a.dup1->setText("first dup"));
    CHANGED(e, a.echoOnEdit->setText("secret-echo"));
    a.shown->setEchoMode(QLineEdit::Normal);                  // "show password": still never saved
    CHANGED(e, a.shown->setText("revealed-secret"));
    CHANGED(e, a.area->verticalScrollBar()->setValue(500));
    CHANGED(e, a.area->horizontalScrollBar()->setValue(300));
    CHANGED(e, a.table->selectRow(7));
    CHANGED(e, { a.table->selectionModel()->select(a.table->model()->index(3, 0),
                 QItemSelectionModel::Select | QItemSelectionModel::Rows); });
    CHANGED(e, a.table->scrollToItem(a.table->item(40, 0), QAbstractItemView::PositionAtTop));
    a.table->horizontalHeader()->resizeSection(1, 123);       // by the program: saved with the next change
    CHANGED(e, a.table->horizontalHeader()->setSortIndicator(1, Qt::DescendingOrder));
    CHANGED(e, a.table->horizontalHeader()->moveSection(1, 0));
    CHANGED(e, a.root->resize(640, a.root->height() + 20));
    settle(100);
    const QSize savedSize = a.root->size();
    CHECK(savedSize.width() == 640);
    a.skipped->setText("not saved");
    CHECK(!rst_is_dirty(e));                                   // skipped: not watched
    RestorationQt::skip(a.skippedLater);                       // after tracking: unregistered
    CHECK(rst_find_object(e, "root/skippedLater") == nullptr);
    a.skippedLater->setValue(66);
    CHECK(!rst_is_dirty(e));
    // A widget created later, tracked under its nearest tracked ancestor.
    auto *late = new QLineEdit(a.root);
    late->setObjectName("late");
    CHECK(RestorationQt::track(e, late) == RST_OK);
    CHECK(rst_find_object(e, "root/late") != nullptr);
    CHANGED(e, late->setText("late text"));
    delete late;                                               // destroyed: unregistered
    CHECK(rst_find_object(e, "root/late") == nullptr);
    const int topRow = a.table->indexAt(QPoint(0, 0)).row();
    CHECK(topRow == 40);
    CHECK(rst_save(e) == RST_OK);
    const QByteArray savedGeometry = a.root->saveGeometry();
    CHECK(RestorationQt::finish(e) == RST_OK);
    delete a.root;
    QFile f(QString::fromLocal8Bit(path));
    CHECK(f.open(QIODevice::ReadOnly));
    const QByteArray bytes = f.readAll();
    CHECK(!bytes.isEmpty());
    CHECK(!bytes.contains("secret-echo"));                     // a non-Normal echo mode is never saved
    CHECK(!bytes.contains("revealed-secret"));
    CHECK(bytes.contains("first dup"));

    // ---- session 2: a fresh tree (the table reversed), restored ----
    e = engineAt(path);
    CHECK(RestorationQt::attach(e, false) == RST_OK);
    Tree b = build(true);
    RestorationQt::skip(b.skipped);
    RestorationQt::skip(b.skippedLater);
    RestorationQt::track(e, b.root);
    appValue = 0;
    CHECK(rst_register_object(e, "appdata", RestorationQt::object(e, b.stack), nullptr, &appCallbacks, nullptr, nullptr) == RST_OK);
    CHECK(RestorationQt::restore(e) == RST_OK);
    CHECK(appValue == 31);                                     // the app's object beside the widgets
    CHECK(rst_find_object(e, "root/stack/appdata") != nullptr);
    CHECK(!rst_is_dirty(e));
    // Saved before the window is shown (a kill between the restore and the
    // first show leaves this archive): the geometry as restored, not what
    // saveGeometry() of the hidden window says.
    CHECK(rst_save(e) == RST_OK);
    {
        QFile g(QString::fromLocal8Bit(path));
        CHECK(g.open(QIODevice::ReadOnly) && g.readAll().contains(savedGeometry));
    }
    b.root->show();
    settle(800);
    CHECK(!rst_is_dirty(e));                                   // restoring and showing: no change
    CHECK(b.root->size() == savedSize);
    CHECK(b.stack->currentIndex() == 2);
    CHECK(b.rich->toPlainText() == "bold text" && b.rich->toHtml().contains("font-weight"));
    CHECK(b.plain->toPlainText() == "plain\ntext");
    CHECK(b.plain->textCursor().position() == 3);
    CHECK(b.spin->value() == 421);
    CHECK(b.dspin->value() == 12.345);
    CHECK(b.slider->value() == 77);
    CHECK(b.skippedLater->value() == 0);
    CHECK(b.two->isChecked() && !b.one->isChecked());
    CHECK(b.check->isChecked());
    CHECK(b.combo->currentIndex() == 2);
    CHECK(b.editable->currentText() == "typed");
    CHECK(b.inner->text() == "inside");
    CHECK(b.dup1->text() == "first dup");
    CHECK(b.dup2->text().isEmpty());
    CHECK(b.skipped->text().isEmpty());
    CHECK(b.echoOnEdit->text().isEmpty());
    CHECK(b.shown->text().isEmpty());
    CHECK(b.area->verticalScrollBar()->value() == 500);
    CHECK(b.area->horizontalScrollBar()->value() == 300);
    // Rows by their UserRole identity in the reversed table.
    QList<int> selected;
    for (const QModelIndex &i : b.table->selectionModel()->selectedRows(0)) selected << i.row();
    std::sort(selected.begin(), selected.end());
    CHECK((selected == QList<int>{ rowOf(b.table, "id-7"), rowOf(b.table, "id-3") }));
    CHECK(b.table->currentIndex().row() == rowOf(b.table, "id-3") || b.table->currentIndex().row() == rowOf(b.table, "id-7"));
    CHECK(b.table->indexAt(QPoint(0, 0)).row() == rowOf(b.table, "id-40"));
    CHECK(b.table->horizontalHeader()->sectionSize(1) == 123);
    CHECK(b.table->horizontalHeader()->sortIndicatorSection() == 1);
    CHECK(b.table->horizontalHeader()->sortIndicatorOrder() == Qt::DescendingOrder);
    CHECK(b.table->horizontalHeader()->visualIndex(1) == 0);
    CHECK(RestorationQt::finish(e) == RST_OK);
    CHECK(RestorationQt::finish(nullptr) == RST_OK);
    RestorationQt::skip(nullptr);
    RestorationQt::setIdentityRole(nullptr, Qt::UserRole);
    delete b.root;

    // ---- windows: one closed (WA_DeleteOnClose) keeps its record; one
    // opened after restore() gets its state ----
    const QByteArray wpath = QByteArray(argv[1]) + "/windows.rst";
    QFile::remove(QString::fromLocal8Bit(wpath));
    auto tool = [](int level) {
        auto *t = new QWidget;
        t->setObjectName("tool");
        t->setAttribute(Qt::WA_DeleteOnClose);
        auto *spin = new QSpinBox(t);
        spin->setObjectName("level");
        spin->setValue(level);
        return t;
    };
    auto levelOf = [](QWidget *t) { return t->findChild<QSpinBox *>("level")->value(); };
    e = engineAt(wpath);
    auto *main1 = new QLineEdit;
    main1->setObjectName("main");
    QWidget *tool1 = tool(0);
    CHECK(RestorationQt::track(e, main1) == RST_OK);
    CHECK(RestorationQt::track(e, tool1) == RST_OK);
    CHECK(RestorationQt::restore(e) == RST_ERR_NOT_FOUND);
    main1->show();
    tool1->show();
    settle(200);
    tool1->findChild<QSpinBox *>("level")->setValue(9);
    CHECK(rst_is_dirty(e));
    tool1->close();                                            // saves, then the window is deleted
    CHECK(!rst_is_dirty(e));
    settle(100);
    CHECK(rst_find_object(e, "tool/level") != nullptr);        // kept, frozen
    main1->setText("after the tool closed");
    CHECK(rst_is_dirty(e));
    CHECK(rst_save(e) == RST_OK);                              // writes the frozen tool too
    CHECK(RestorationQt::finish(e) == RST_OK);
    delete main1;

    e = engineAt(wpath);
    auto *main2 = new QLineEdit;
    main2->setObjectName("main");
    CHECK(RestorationQt::track(e, main2) == RST_OK);
    CHECK(RestorationQt::restore(e) == RST_OK);                // "tool" has no widget yet: kept
    CHECK(main2->text() == "after the tool closed");
    CHECK(rst_find_object(e, "tool/level") != nullptr);
    QWidget *tool2 = tool(0);
    CHECK(RestorationQt::track(e, tool2) == RST_OK);           // opened later: takes its record
    CHECK(levelOf(tool2) == 9);
    CHECK(!rst_is_dirty(e));
    tool2->show();
    settle(100);
    tool2->findChild<QSpinBox *>("level")->setValue(4);        // watched like any tracked widget
    CHECK(rst_is_dirty(e));
    tool2->close();
    settle(100);
    QWidget *tool3 = tool(0);                                  // opened again in the same session
    CHECK(RestorationQt::track(e, tool3) == RST_OK);
    CHECK(levelOf(tool3) == 4);
    // A window the app deletes without closing it: saved as it goes, its
    // records kept.
    tool3->show();
    settle(100);
    tool3->findChild<QSpinBox *>("level")->setValue(7);
    CHECK(rst_is_dirty(e));
    delete tool3;
    CHECK(!rst_is_dirty(e));
    CHECK(rst_find_object(e, "tool/level") != nullptr);
    tool3 = tool(0);
    CHECK(RestorationQt::track(e, tool3) == RST_OK);
    CHECK(levelOf(tool3) == 7);

    // A close the window refuses: it stays watched.
    auto *refusing = new Refusing;
    refusing->setObjectName("refusing");
    auto *field = new QLineEdit(refusing);
    field->setObjectName("field");
    CHECK(RestorationQt::track(e, refusing) == RST_OK);
    refusing->show();
    settle(100);
    CHECK(rst_save(e) == RST_OK);
    CHECK(!refusing->close());
    settle(100);
    field->setText("typed after a refused close");
    CHECK(rst_is_dirty(e));
    delete refusing;
    CHECK(RestorationQt::finish(e) == RST_OK);
    delete tool3;
    delete main2;

    // ---- a QMainWindow's dock: floated by the user, floating again ----
    const QByteArray dpath = QByteArray(argv[1]) + "/docks.rst";
    QFile::remove(QString::fromLocal8Bit(dpath));
    auto mainWindow = [](QDockWidget **dock) {
        auto *mw = new QMainWindow;
        mw->setObjectName("mw");
        mw->setCentralWidget(new QLineEdit);
        *dock = new QDockWidget("Dock");
        (*dock)->setObjectName("dock");
        (*dock)->setWidget(new QLineEdit);
        mw->addDockWidget(Qt::LeftDockWidgetArea, *dock);
        mw->resize(500, 400);
        return mw;
    };
    QDockWidget *dock1 = nullptr, *dock2 = nullptr;
    e = engineAt(dpath);
    QMainWindow *mw1 = mainWindow(&dock1);
    CHECK(RestorationQt::track(e, mw1) == RST_OK);
    CHECK(RestorationQt::restore(e) == RST_ERR_NOT_FOUND);
    mw1->show();
    settle(200);
    CHECK(rst_save(e) == RST_OK);
    CHANGED(e, dock1->setFloating(true));
    CHECK(RestorationQt::finish(e) == RST_OK);
    delete mw1;
    e = engineAt(dpath);
    QMainWindow *mw2 = mainWindow(&dock2);
    CHECK(RestorationQt::track(e, mw2) == RST_OK);
    CHECK(RestorationQt::restore(e) == RST_OK);
    mw2->show();
    settle(200);
    CHECK(dock2->isFloating());
    CHECK(RestorationQt::finish(e) == RST_OK);
    delete mw2;

    // ---- window states with no window manager: the geometry does not move ----
    const QByteArray spath = QByteArray(argv[1]) + "/states.rst";
    QFile::remove(QString::fromLocal8Bit(spath));
    e = engineAt(spath);
    auto *sw1 = new QWidget;
    sw1->setObjectName("win");
    sw1->resize(400, 300);
    CHECK(RestorationQt::track(e, sw1) == RST_OK);
    CHECK(RestorationQt::restore(e) == RST_ERR_NOT_FOUND);
    sw1->show();
    settle(300);
    CHECK(rst_save(e) == RST_OK);
    const QRect normal = sw1->geometry();
    // Each state change marks the engine dirty (what follows it, a resize
    // Qt makes itself, is let settle before the save).
#define STATE_CHANGED(e, what) do { CHECK(!rst_is_dirty(e)); what; CHECK(rst_is_dirty(e)); \
    settle(200); CHECK(rst_save(e) == RST_OK); CHECK(!rst_is_dirty(e)); } while (0)
    STATE_CHANGED(e, sw1->showMaximized());
    CHECK(sw1->isMaximized());
    CHECK(sw1->geometry() == normal);                          // no window manager: nothing moved
    STATE_CHANGED(e, sw1->showFullScreen());
    STATE_CHANGED(e, sw1->showNormal());
    // Minimized: Qt hides the window, which saves at once.
    auto archiveBytes = [&spath] { QFile a(QString::fromLocal8Bit(spath)); return a.open(QIODevice::ReadOnly) ? a.readAll() : QByteArray(); };
    const QByteArray beforeMinimize = archiveBytes();
    sw1->showMinimized();
    settle(200);
    CHECK(sw1->isMinimized());
    CHECK(!rst_is_dirty(e) && archiveBytes() != beforeMinimize);
    STATE_CHANGED(e, sw1->showMaximized());
    settle(200);
    CHECK(sw1->isMaximized());
    CHECK(!rst_is_dirty(e));
    CHECK(RestorationQt::finish(e) == RST_OK);
    delete sw1;
    e = engineAt(spath);
    auto *sw2 = new QWidget;
    sw2->setObjectName("win");
    sw2->resize(400, 300);
    CHECK(RestorationQt::track(e, sw2) == RST_OK);
    CHECK(RestorationQt::restore(e) == RST_OK);
    sw2->show();
    settle(300);
    CHECK(sw2->isMaximized());
    CHECK(!rst_is_dirty(e));                                   // restoring the state is not a change
    CHECK(RestorationQt::finish(e) == RST_OK);
    delete sw2;

    // ---- Qt's own widgets: never tracked, never a failure ----
    e = engineAt(QByteArray(argv[1]) + "/internal.rst");
    auto *holder = new QWidget;
    holder->setObjectName("holder");
    auto *hbox = new QVBoxLayout(holder);
    for (const char *page : { "p1", "p2" }) {
        auto *tabs = new QTabWidget;                           // unnamed: its insides go under "holder"
        auto *named = new QLineEdit;
        named->setObjectName(page);
        tabs->addTab(named, page);
        tabs->addTab(new QWidget, "other");
        hbox->addWidget(tabs);
    }
    for (int i = 0; i < 2; i++) {
        auto *dialog = new QFileDialog(holder);                // Qt names its insides itself
        dialog->setOption(QFileDialog::DontUseNativeDialog);
    }
    CHECK(!holder->findChildren<QWidget *>("ScrollLeftButton").isEmpty());   // (the test is sound)
    CHECK(!holder->findChildren<QWidget *>("lookInCombo").isEmpty());
    qtWarnings = 0;
    previousHandler = qInstallMessageHandler(countWarnings);
    CHECK(RestorationQt::track(e, holder) == RST_OK);
    qInstallMessageHandler(previousHandler);
    CHECK(qtWarnings == 0);
    CHECK(rst_find_object(e, "holder/p1") != nullptr);         // the pages inside Qt's widgets are tracked
    CHECK(rst_find_object(e, "holder/p2") != nullptr);
    CHECK(rst_find_object(e, "holder/ScrollLeftButton") == nullptr);
    CHECK(rst_find_object(e, "holder/ScrollRightButton") == nullptr);
    CHECK(rst_find_object(e, "holder/QFileDialog") == nullptr);
    CHECK(rst_find_object(e, "holder/lookInCombo") == nullptr);
    CHECK(RestorationQt::finish(e) == RST_OK);
    delete holder;

    std::printf("widgets: %d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
