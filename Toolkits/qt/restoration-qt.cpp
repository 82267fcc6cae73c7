/* restoration-qt: a Qt 6 widget tree saved and restored through
 * librestoration's C API. One Node per tracked widget (the registered
 * object's instance); one EngineState per engine (the notifier, the event
 * filter, the "restoring" guard). No moc: functor connections and a plain
 * eventFilter override. See restoration-qt.h and docs/QT.md. */
#include "restoration-qt.h"

#include <QAbstractButton>
#include <QAbstractItemView>
#include <QAbstractScrollArea>
#include <QAbstractSlider>
#include <QApplication>
#include <QComboBox>
#include <QDockWidget>
#include <QGuiApplication>
#include <QHeaderView>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QHash>
#include <QItemSelectionModel>
#include <QLineEdit>
#include <QMainWindow>
#include <QPlainTextEdit>
#include <QPointer>
#include <QScrollBar>
#include <QSet>
#include <QSocketNotifier>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabBar>
#include <QTabWidget>
#include <QTextCursor>
#include <QTextEdit>
#include <QTimer>
#include <QToolBar>
#include <QTableView>
#include <QTreeView>

#include <csignal>
#include <cstring>
#include <vector>

/* Sensitive values are a 1.2 addition: the symbol may be missing from an
 * older librestoration.so.1, so it is referenced weakly and called when
 * present. A password field's text is never encoded either way. */
#pragma weak rst_coder_set_sensitivity

namespace {

const char kSkipProperty[] = "_restoration_qt_skip";
const char kRoleProperty[] = "_restoration_qt_identity_role";

struct EngineState;

/* A value of a widget's record (see capture() and write()). */
struct Value {
    const char *key;                    // one of kKeys
    QVariant v;                         // invalid: a secret, never written
};
using Values = std::vector<Value>;

struct Node {
    EngineState *state = nullptr;
    QPointer<QWidget> widget;
    QString name;                       // for messages
    rst_object *object = nullptr;
    std::vector<QMetaObject::Connection> connections;
    // Scroll positions restored before the widget could take them.
    bool scrollPending = false;
    bool hasH = false, hasV = false;
    int h = 0, v = 0;
    bool hasTop = false;
    QString top;
    QByteArray lastGeometry;            // windows: what was last saved or restored
    Qt::WindowStates lastState;         // windows: maximized, minimized, full screen, last seen
    // A window's geometry restored before it was shown: QWidget::saveGeometry()
    // of a hidden window does not give back what restoreGeometry() took (no
    // frame yet), so until it is shown a save writes the restored bytes.
    bool geometryPending = false;
    QByteArray restoredGeometry;
    // Without a widget (destroyed after its window closed, or not created
    // yet): the values its record keeps.
    Values frozen;
    Values closed;          // captured when its window closed
    bool closedCaptured = false;
    bool secret = false;                // a QLineEdit once seen hiding its text: never saved
};

class Filter : public QObject {
public:
    explicit Filter(EngineState *s) : state(s) {}
    bool eventFilter(QObject *watched, QEvent *event) override;
    EngineState *state;
};

struct EngineState {
    rst_engine *engine = nullptr;
    QSocketNotifier *notifier = nullptr;
    Filter *filter = nullptr;
    bool restoring = false;
    bool finishing = false;
    QHash<QWidget *, Node *> nodes;     // the live ones
    QHash<rst_object *, Node *> byObject;   // all, frozen ones included
    QSet<QWidget *> closing;            // windows closed: their teardown is not a change
};

QHash<rst_engine *, EngineState *> &engines() {
    static QHash<rst_engine *, EngineState *> all;
    return all;
}

const char kClass[] = "restoration-qt";
rst_object *makeFrozen(rst_engine *e, rst_object *parent, const char *identifier, rst_coder *coder, void *ctx);

EngineState *stateFor(rst_engine *e, bool create) {
    EngineState *s = engines().value(e);
    if (!s && create) {
        s = new EngineState;
        s->engine = e;
        s->filter = new Filter(s);
        engines().insert(e, s);
        // Records of widgets not tracked (yet) at restore are kept, frozen.
        rst_status st = rst_register_class(e, kClass, makeFrozen, s);
        if (st != RST_OK)
            qWarning("restoration-qt: register the class '%s': %s: %s", kClass, rst_status_name(st), rst_last_error());
    }
    return s;
}

/* The nodes of `window`'s widgets (those of windows inside it included). */
QList<Node *> nodesIn(EngineState *s, QWidget *window) {
    QList<Node *> out;
    for (Node *n : s->nodes) {
        for (QWidget *a = n->widget; a; a = a->parentWidget())
            if (a == window) { out << n; break; }
    }
    return out;
}

struct RestoringGuard {
    explicit RestoringGuard(EngineState *s) : s(s), was(s->restoring) { s->restoring = true; }
    ~RestoringGuard() { s->restoring = was; }
    EngineState *s;
    bool was;
};

QByteArray utf8(const QString &s) { return s.toUtf8(); }

void warn(const Node *n, const char *what, rst_status st) {
    qWarning("restoration-qt: %s '%s': %s: %s", what, qPrintable(n->name), rst_status_name(st), rst_last_error());
}

/* ---- what changes mark the engine dirty ---- */

void changed(Node *n) {
    EngineState *s = n->state;
    if (s->restoring || s->finishing || !n->widget) return;
    QWidget *window = n->widget->window();
    if (s->closing.contains(window) && !window->isVisible()) return;   // torn down after a close
    rst_status st = rst_mark_dirty(s->engine, n->object);
    if (st != RST_OK) warn(n, "mark dirty", st);
}

/* ---- item views: rows by identity ---- */

int identityRole(const QAbstractItemView *v) {
    QVariant r = v->property(kRoleProperty);
    return r.isValid() ? r.toInt() : int(Qt::DisplayRole);
}

QString identityOf(const QAbstractItemView *v, int row) {
    QAbstractItemModel *m = v->model();
    return m->data(m->index(row, 0, v->rootIndex()), identityRole(v)).toString();
}

int findRow(const QAbstractItemView *v, const QString &id) {
    QAbstractItemModel *m = v->model();
    if (!m) return -1;
    const int rows = m->rowCount(v->rootIndex());
    for (int r = 0; r < rows; r++)
        if (identityOf(v, r) == id) return r;
    return -1;
}

QString topIdentity(const QAbstractItemView *v) {
    QModelIndex i = v->indexAt(QPoint(0, 0));
    if (!i.isValid() || !v->model() || i.parent() != v->rootIndex()) return QString();
    return identityOf(v, i.row());
}

/* ---- scroll positions, applied once shown and laid out ----
 * A view scrolls by itself after it is shown (QAbstractItemView brings its
 * current row into view as it handles its Show event; a layout changes the
 * ranges), so the saved offsets are applied after the Show event, again
 * whenever a range changes, and a last time kSettleMs after the show (as
 * far as the range then goes); until then they stay pending: scroll bar
 * moves are not changes, and a save writes the pending values. */
const int kSettleMs = 300;

void applyScroll(Node *n, bool last) {
    auto *area = qobject_cast<QAbstractScrollArea *>(n->widget.data());
    if (!area || !n->scrollPending || !area->isVisible()) return;
    QScrollBar *hb = area->horizontalScrollBar(), *vb = area->verticalScrollBar();
    bool fits = (!n->hasH || hb->maximum() >= n->h) && (!n->hasV || vb->maximum() >= n->v);
    if (fits || last) {
        RestoringGuard g(n->state);
        if (n->hasH) hb->setValue(n->h);
        if (n->hasV) vb->setValue(n->v);
        auto *view = qobject_cast<QAbstractItemView *>(area);
        if (view && n->hasTop && view->model() && topIdentity(view) != n->top) {
            int row = findRow(view, n->top);   // the model changed order: the same item at the top
            if (row >= 0) view->scrollTo(view->model()->index(row, 0, view->rootIndex()), QAbstractItemView::PositionAtTop);
        }
    }
    if (last) n->scrollPending = false;
}

/* Timers run in the filter's context (gone with the engine's state at
 * finish()) and check the widget through a QPointer. */
void settleScroll(EngineState *s, QWidget *w) {
    QPointer<QWidget> p(w);
    QTimer::singleShot(0, s->filter, [s, p] {
        if (Node *m = p ? s->nodes.value(p) : nullptr) applyScroll(m, false);
    });
    QTimer::singleShot(kSettleMs, s->filter, [s, p] {
        if (Node *m = p ? s->nodes.value(p) : nullptr) applyScroll(m, true);
    });
}

Values capture(Node *n);

bool Filter::eventFilter(QObject *watched, QEvent *event) {
    auto *w = qobject_cast<QWidget *>(watched);
    Node *n = w ? state->nodes.value(w) : nullptr;
    if (!n) return false;
    switch (event->type()) {
    case QEvent::Close:
        if (w->isWindow() && !state->finishing) {
            // Before the window (WA_DeleteOnClose) and its widgets are gone:
            // their values, for their records once destroyed; a save.
            for (Node *m : nodesIn(state, w)) {
                m->closed = capture(m);
                m->closedCaptured = true;
            }
            rst_status st = rst_flush(state->engine);
            if (st != RST_OK) warn(n, "save when closing", st);
            state->closing.insert(w);
            // A close the window refused (closeEvent ignored): it lives on.
            QPointer<QWidget> p(w);
            QTimer::singleShot(0, this, [this, p] {
                if (!p || !p->isVisible()) return;
                state->closing.remove(p);
                for (Node *m : nodesIn(state, p)) {
                    m->closed.clear();
                    m->closedCaptured = false;
                }
            });
        }
        break;
    case QEvent::Hide:
        // Hidden without a close: hide(), minimized, or deleted by the app
        // (~QWidget hides the window while its widgets still exist). The
        // same capture and save as at a close, in case it is destroyed.
        if (w->isWindow() && !state->finishing && !state->closing.contains(w)) {
            for (Node *m : nodesIn(state, w)) {
                m->closed = capture(m);
                m->closedCaptured = true;
            }
            rst_status st = rst_flush(state->engine);
            if (st != RST_OK) warn(n, "save when hidden", st);
        }
        break;
    case QEvent::Show:
        if (w->isWindow()) {
            state->closing.remove(w);
            for (Node *m : nodesIn(state, w)) {
                m->closed.clear();
                m->closedCaptured = false;
            }
            QPointer<QWidget> p(w);
            QTimer::singleShot(0, this, [this, p] {
                if (Node *m = p ? state->nodes.value(p) : nullptr) {
                    m->lastGeometry = p->saveGeometry();
                    m->geometryPending = false;
                }
            });
        }
        if (n->scrollPending) settleScroll(state, w);
        break;
    case QEvent::WindowStateChange:
        // Maximized, minimized or full screen: a change even when the
        // geometry does not move (no window manager: a kiosk, Xvfb).
        if (w->isWindow() && w->windowState() != n->lastState) {
            n->lastState = w->windowState();
            changed(n);                 // ignored while restore() sets it
        }
        break;
    case QEvent::Resize:
    case QEvent::Move:
        if (w->isWindow() && w->isVisible() && !n->lastGeometry.isEmpty() && w->saveGeometry() != n->lastGeometry)
            changed(n);
        break;
    default:
        break;
    }
    return false;
}

/* ---- values: what a widget's record holds ----
 * capture() reads a live widget and applyValues() sets one; writeValues() and readValues()
 * move values through a coder. A window's values are also captured when it
 * closes: once it is destroyed its records are still written (frozen), and
 * a widget tracked again at the same path gets them back. */
const char *const kKeys[] = { "geometry", "minimized", "state", "index", "page", "text", "html", "cursor", "value",
                              "checked", "hscroll", "vscroll", "top", "current", "selected", "header" };

/* The header whose state (column widths and order, sort column) a view's
 * record holds: a tree view's, a table view's horizontal one. */
QHeaderView *headerOf(QWidget *w) {
    if (auto *tree = qobject_cast<QTreeView *>(w)) return tree->header();
    if (auto *table = qobject_cast<QTableView *>(w)) return table->horizontalHeader();
    return nullptr;
}

const QVariant *get(const Values &vals, const char *key, int type) {
    for (const Value &v : vals)
        if (std::strcmp(v.key, key) == 0 && v.v.isValid() && v.v.typeId() == type) return &v.v;
    return nullptr;                     // absent, or of another type (an archive is untrusted)
}
bool getBytes(const Values &vals, const char *key, QByteArray *out) {
    const QVariant *v = get(vals, key, QMetaType::QByteArray);
    if (v) *out = v->toByteArray();
    return v;
}
bool getString(const Values &vals, const char *key, QString *out) {
    const QVariant *v = get(vals, key, QMetaType::QString);
    if (v) *out = v->toString();
    return v;
}
bool getInt(const Values &vals, const char *key, int *out) {
    const QVariant *v = get(vals, key, QMetaType::LongLong);
    if (!v || v->toLongLong() < INT_MIN || v->toLongLong() > INT_MAX) return false;
    *out = int(v->toLongLong());
    return true;
}

/* A password field stays secret once seen so, even after a "show password"
 * toggle sets its echo mode back to Normal (checked when tracked, at each
 * change of its text, and at each save). */
bool isSecret(Node *n, const QLineEdit *le) {
    if (le->echoMode() != QLineEdit::Normal) n->secret = true;
    return n->secret;
}

Values capture(Node *n) {
    Values out;
    QWidget *w = n->widget;
    auto put = [&out](const char *key, QVariant v) { out.push_back({ key, std::move(v) }); };
    auto putInt = [&put](const char *key, qlonglong v) { put(key, QVariant(v)); };
    if (w->isWindow()) {
        n->lastGeometry = w->saveGeometry();
        put("geometry", n->geometryPending ? n->restoredGeometry : n->lastGeometry);
        // Maximized and full screen are in the geometry's bytes; minimized is not.
        put("minimized", bool(w->windowState() & Qt::WindowMinimized));
        if (auto *mw = qobject_cast<QMainWindow *>(w)) put("state", mw->saveState());
    }
    QWidget *page = nullptr;
    if (auto *sp = qobject_cast<QSplitter *>(w)) {
        put("state", sp->saveState());
    } else if (auto *tw = qobject_cast<QTabWidget *>(w)) {
        putInt("index", tw->currentIndex());
        page = tw->currentWidget();
    } else if (auto *sw = qobject_cast<QStackedWidget *>(w)) {
        putInt("index", sw->currentIndex());
        page = sw->currentWidget();
    } else if (auto *le = qobject_cast<QLineEdit *>(w)) {
        if (isSecret(n, le)) {
            put("text", QVariant());    // a password: never written
        } else {
            put("text", le->text());
            putInt("cursor", le->cursorPosition());
        }
    } else if (auto *pe = qobject_cast<QPlainTextEdit *>(w)) {
        put("text", pe->toPlainText());
        putInt("cursor", pe->textCursor().position());
    } else if (auto *te = qobject_cast<QTextEdit *>(w)) {
        if (te->acceptRichText()) put("html", te->toHtml());
        else put("text", te->toPlainText());
        putInt("cursor", te->textCursor().position());
    } else if (auto *cb = qobject_cast<QComboBox *>(w)) {
        putInt("index", cb->currentIndex());
        put("text", cb->currentText());
    } else if (auto *ds = qobject_cast<QDoubleSpinBox *>(w)) {
        put("value", ds->value());
    } else if (auto *sb = qobject_cast<QSpinBox *>(w)) {
        putInt("value", sb->value());
    } else if (auto *sl = qobject_cast<QAbstractSlider *>(w)) {
        putInt("value", sl->value());
    } else if (auto *bt = qobject_cast<QAbstractButton *>(w)) {
        if (bt->isCheckable()) put("checked", bt->isChecked());
    }
    if (page && !page->objectName().isEmpty()) put("page", page->objectName());
    auto *area = qobject_cast<QAbstractScrollArea *>(w);
    if (!area) return out;
    putInt("hscroll", n->scrollPending && n->hasH ? n->h : area->horizontalScrollBar()->value());
    putInt("vscroll", n->scrollPending && n->hasV ? n->v : area->verticalScrollBar()->value());
    auto *view = qobject_cast<QAbstractItemView *>(area);
    if (!view || !view->model()) return out;
    QString top = n->scrollPending && n->hasTop ? n->top : topIdentity(view);
    if (!top.isEmpty()) put("top", top);
    QModelIndex cur = view->currentIndex();
    if (cur.isValid() && cur.parent() == view->rootIndex()) put("current", identityOf(view, cur.row()));
    if (QItemSelectionModel *sm = view->selectionModel()) {
        QSet<int> unique;
        for (const QModelIndex &i : sm->selectedIndexes())
            if (i.parent() == view->rootIndex()) unique.insert(i.row());
        QList<int> rows(unique.begin(), unique.end());
        std::sort(rows.begin(), rows.end());
        QStringList ids;
        for (int r : rows) ids << identityOf(view, r);
        put("selected", ids);
    }
    if (QHeaderView *h = headerOf(view)) {
        put("header", h->saveState());
    }
    return out;
}

void writeValues(rst_coder *c, const Values &vals) {
    for (const Value &v : vals) {
        if (!v.v.isValid()) {
            if (rst_coder_set_sensitivity) (void)rst_coder_set_sensitivity(c, v.key, RST_SENSITIVITY_SECRET);
            continue;
        }
        switch (v.v.typeId()) {
        case QMetaType::QByteArray: {
            const QByteArray b = v.v.toByteArray();
            rst_encode_bytes(c, v.key, b.constData(), size_t(b.size()));
            break;
        }
        case QMetaType::QString: rst_encode_string(c, v.key, utf8(v.v.toString()).constData()); break;
        case QMetaType::Bool: rst_encode_bool(c, v.key, v.v.toBool()); break;
        case QMetaType::Double: rst_encode_double(c, v.key, v.v.toDouble()); break;
        case QMetaType::QStringList: {
            std::vector<QByteArray> ids;
            for (const QString &id : v.v.toStringList()) ids.push_back(utf8(id));
            std::vector<const char *> ptrs;
            for (const QByteArray &b : ids) ptrs.push_back(b.constData());
            rst_encode_string_array(c, v.key, ptrs.data(), ptrs.size());
            break;
        }
        default: rst_encode_int(c, v.key, v.v.toLongLong()); break;
        }
    }
}

Values readValues(rst_coder *c) {
    Values out;
    for (const char *k : kKeys) {
        switch (rst_coder_value_type(c, k)) {
        case RST_TYPE_BOOL: {
            bool b = false;
            if (rst_decode_bool(c, k, &b) == RST_OK) out.push_back({ k, QVariant(b) });
            break;
        }
        case RST_TYPE_INT: {
            int64_t i = 0;
            if (rst_decode_int(c, k, &i) == RST_OK) out.push_back({ k, QVariant(qlonglong(i)) });
            break;
        }
        case RST_TYPE_DOUBLE: {
            double d = 0;
            if (rst_decode_double(c, k, &d) == RST_OK) out.push_back({ k, QVariant(d) });
            break;
        }
        case RST_TYPE_STRING: {
            const char *p = nullptr;
            size_t len = 0;
            if (rst_decode_string(c, k, &p, &len) == RST_OK) out.push_back({ k, QString::fromUtf8(p, qsizetype(len)) });
            break;
        }
        case RST_TYPE_BYTES: {
            const void *p = nullptr;
            size_t len = 0;
            if (rst_decode_bytes(c, k, &p, &len) == RST_OK)
                out.push_back({ k, QByteArray(static_cast<const char *>(p), qsizetype(len)) });
            break;
        }
        case RST_TYPE_STRING_ARRAY: {
            size_t count = 0;
            const char *p = nullptr;
            size_t len = 0;
            (void)rst_decode_string_array(c, k, 0, &p, nullptr, &count);   // the count, also when empty
            QStringList list;
            for (size_t i = 0; i < count; i++)
                if (rst_decode_string_array(c, k, i, &p, &len, nullptr) == RST_OK) list << QString::fromUtf8(p, qsizetype(len));
            out.push_back({ k, list });
            break;
        }
        default:
            break;
        }
    }
    return out;
}

/* ---- apply (change signals are ignored meanwhile) ---- */

template <typename Container>
void setPage(Container *box, const Values &vals) {
    QString page;
    int index = -1;
    if (getString(vals, "page", &page))
        for (int i = 0; i < box->count(); i++)
            if (box->widget(i) && box->widget(i)->objectName() == page) index = i;
    int saved = -1;
    if (index < 0 && getInt(vals, "index", &saved) && saved >= 0 && saved < box->count()) index = saved;
    if (index >= 0) box->setCurrentIndex(index);
}

void applyView(Node *n, QAbstractItemView *view, const Values &vals) {
    QAbstractItemModel *m = view->model();
    QItemSelectionModel *sm = view->selectionModel();
    if (!m || !sm) return;
    const QVariant *ids = get(vals, "selected", QMetaType::QStringList);
    // Many selected rows: one pass over the model, not one per row.
    QHash<QString, int> rows;
    if (ids && ids->toStringList().size() > 1) {
        const int count = m->rowCount(view->rootIndex());
        for (int r = count - 1; r >= 0; r--) rows.insert(identityOf(view, r), r);   // the first row wins
    }
    auto find = [&](const QString &id) { return rows.isEmpty() ? findRow(view, id) : rows.value(id, -1); };
    QString cur;
    if (getString(vals, "current", &cur)) {
        int row = find(cur);
        if (row >= 0) sm->setCurrentIndex(m->index(row, 0, view->rootIndex()), QItemSelectionModel::NoUpdate);
    }
    if (ids) {
        QItemSelection sel;
        const int lastColumn = qMax(0, m->columnCount(view->rootIndex()) - 1);
        for (const QString &id : ids->toStringList()) {
            int row = find(id);
            if (row >= 0) sel.select(m->index(row, 0, view->rootIndex()), m->index(row, lastColumn, view->rootIndex()));
        }
        sm->select(sel, QItemSelectionModel::ClearAndSelect);
    }
    n->hasTop = getString(vals, "top", &n->top);
    QByteArray state;
    if (QHeaderView *h = headerOf(view); h && getBytes(vals, "header", &state)) h->restoreState(state);
}

void applyValues(Node *n, const Values &vals) {
    QWidget *w = n->widget;
    if (!w) return;
    RestoringGuard g(n->state);
    QByteArray b;
    if (w->isWindow() && getBytes(vals, "geometry", &b)) {
        w->restoreGeometry(b);
        n->lastGeometry = w->saveGeometry();
        n->geometryPending = !w->isVisible();
        n->restoredGeometry = b;
    }
    if (const QVariant *v = get(vals, "minimized", QMetaType::Bool); w->isWindow() && v && v->toBool())
        w->setWindowState(w->windowState() | Qt::WindowMinimized);
    if (auto *mw = qobject_cast<QMainWindow *>(w)) {
        if (getBytes(vals, "state", &b)) mw->restoreState(b);
    } else if (auto *sp = qobject_cast<QSplitter *>(w)) {
        if (getBytes(vals, "state", &b)) sp->restoreState(b);
    } else if (auto *tw = qobject_cast<QTabWidget *>(w)) {
        setPage(tw, vals);
    } else if (auto *sw = qobject_cast<QStackedWidget *>(w)) {
        setPage(sw, vals);
    } else if (auto *le = qobject_cast<QLineEdit *>(w)) {
        QString text;
        int cursor = 0;
        if (!isSecret(n, le) && getString(vals, "text", &text)) {
            le->setText(text);
            if (getInt(vals, "cursor", &cursor)) le->setCursorPosition(qBound(0, cursor, int(text.size())));
        }
    } else if (qobject_cast<QPlainTextEdit *>(w) || qobject_cast<QTextEdit *>(w)) {
        auto *pe = qobject_cast<QPlainTextEdit *>(w);
        auto *te = qobject_cast<QTextEdit *>(w);
        QString text;
        if (te && getString(vals, "html", &text)) te->setHtml(text);
        else if (getString(vals, "text", &text)) { if (pe) pe->setPlainText(text); else te->setPlainText(text); }
        int cursor = 0;
        if (getInt(vals, "cursor", &cursor)) {
            QTextCursor tc = pe ? pe->textCursor() : te->textCursor();
            const int end = (pe ? pe->document() : te->document())->characterCount() - 1;
            tc.setPosition(qBound(0, cursor, qMax(0, end)));
            if (pe) pe->setTextCursor(tc); else te->setTextCursor(tc);
        }
    } else if (auto *cb = qobject_cast<QComboBox *>(w)) {
        int index = -1;
        QString text;
        bool hasText = getString(vals, "text", &text);
        if (!cb->isEditable() && hasText && cb->findText(text) >= 0) cb->setCurrentIndex(cb->findText(text));
        else if (getInt(vals, "index", &index) && index >= -1 && index < cb->count()) cb->setCurrentIndex(index);
        if (cb->isEditable() && hasText) cb->setEditText(text);
    } else if (auto *ds = qobject_cast<QDoubleSpinBox *>(w)) {
        if (const QVariant *v = get(vals, "value", QMetaType::Double); v && qIsFinite(v->toDouble())) ds->setValue(v->toDouble());
    } else if (auto *sb = qobject_cast<QSpinBox *>(w)) {
        int v = 0;
        if (getInt(vals, "value", &v)) sb->setValue(v);
    } else if (auto *sl = qobject_cast<QAbstractSlider *>(w)) {
        int v = 0;
        if (getInt(vals, "value", &v)) sl->setValue(v);
    } else if (auto *bt = qobject_cast<QAbstractButton *>(w)) {
        if (const QVariant *v = get(vals, "checked", QMetaType::Bool); v && bt->isCheckable()) bt->setChecked(v->toBool());
    }
    if (auto *area = qobject_cast<QAbstractScrollArea *>(w)) {
        n->hasH = getInt(vals, "hscroll", &n->h);
        n->hasV = getInt(vals, "vscroll", &n->v);
        n->hasTop = false;
        if (auto *view = qobject_cast<QAbstractItemView *>(area)) applyView(n, view, vals);
        n->scrollPending = n->hasH || n->hasV || n->hasTop;
        if (n->scrollPending && area->isVisible()) settleScroll(n->state, w);   // applied after the first show
    }
}

/* ---- the object callbacks ---- */

void encodeNode(void *instance, rst_coder *c) {
    auto *n = static_cast<Node *>(instance);
    writeValues(c, n->widget ? capture(n) : n->frozen);
}

void decodeNode(void *instance, rst_coder *c) {
    auto *n = static_cast<Node *>(instance);
    Values vals = readValues(c);
    if (n->widget) applyValues(n, vals);
    else n->frozen = std::move(vals);   // no widget yet: kept until one is tracked at this path
}

void releaseNode(void *instance) {
    auto *n = static_cast<Node *>(instance);
    for (auto &conn : n->connections) QObject::disconnect(conn);
    if (n->widget) n->widget->removeEventFilter(n->state->filter);
    // A destroyed widget: its QPointer is null; find it by value.
    for (auto it = n->state->nodes.begin(); it != n->state->nodes.end();) {
        if (it.value() == n) it = n->state->nodes.erase(it); else ++it;
    }
    n->state->byObject.remove(n->object);
    delete n;
}

const rst_object_callbacks kCallbacks = { encodeNode, decodeNode, nullptr, releaseNode };

/* The class factory: a record no tracked widget claimed at restore becomes
 * a frozen node, written back at each save until a widget takes it. */
rst_object *makeFrozen(rst_engine *e, rst_object *parent, const char *identifier, rst_coder *coder, void *ctx) {
    auto *s = static_cast<EngineState *>(ctx);
    auto *n = new Node;
    n->state = s;
    n->name = QString::fromUtf8(identifier);
    n->frozen = readValues(coder);
    if (rst_register_object(e, identifier, parent, kClass, &kCallbacks, n, &n->object) != RST_OK) {
        delete n;
        return nullptr;
    }
    s->byObject.insert(n->object, n);
    return n->object;
}

/* The frozen node registered at parent/name, if any. */
Node *frozenAt(EngineState *s, rst_object *parent, const QString &name) {
    QByteArray path;
    if (parent) {
        char *p = nullptr;
        if (rst_object_path(parent, &p) != RST_OK) return nullptr;
        path = QByteArray(p) + '/';
        rst_free(p);
    }
    path += utf8(name);
    Node *n = s->byObject.value(rst_find_object(s->engine, path.constData()));
    return n && !n->widget ? n : nullptr;
}

/* ---- tracking ---- */

void connectChanges(Node *n) {
    QWidget *w = n->widget;
    auto on = [n] { changed(n); };
    auto &cs = n->connections;
    if (w->isWindow()) {
        n->lastState = w->windowState();
        w->installEventFilter(n->state->filter);
    }
    if (auto *sp = qobject_cast<QSplitter *>(w)) cs.push_back(QObject::connect(sp, &QSplitter::splitterMoved, w, on));
    else if (auto *tw = qobject_cast<QTabWidget *>(w)) cs.push_back(QObject::connect(tw, &QTabWidget::currentChanged, w, on));
    else if (auto *sw = qobject_cast<QStackedWidget *>(w)) cs.push_back(QObject::connect(sw, &QStackedWidget::currentChanged, w, on));
    else if (auto *le = qobject_cast<QLineEdit *>(w)) {
        isSecret(n, le);
        cs.push_back(QObject::connect(le, &QLineEdit::textChanged, w, [n, le] { isSecret(n, le); changed(n); }));
        cs.push_back(QObject::connect(le, &QLineEdit::cursorPositionChanged, w, on));
    } else if (auto *pe = qobject_cast<QPlainTextEdit *>(w)) {
        cs.push_back(QObject::connect(pe, &QPlainTextEdit::textChanged, w, on));
        cs.push_back(QObject::connect(pe, &QPlainTextEdit::cursorPositionChanged, w, on));
    } else if (auto *te = qobject_cast<QTextEdit *>(w)) {
        cs.push_back(QObject::connect(te, &QTextEdit::textChanged, w, on));
        cs.push_back(QObject::connect(te, &QTextEdit::cursorPositionChanged, w, on));
    } else if (auto *cb = qobject_cast<QComboBox *>(w)) {
        cs.push_back(QObject::connect(cb, &QComboBox::currentIndexChanged, w, on));
        cs.push_back(QObject::connect(cb, &QComboBox::editTextChanged, w, on));
    } else if (auto *ds = qobject_cast<QDoubleSpinBox *>(w)) cs.push_back(QObject::connect(ds, &QDoubleSpinBox::valueChanged, w, on));
    else if (auto *sb = qobject_cast<QSpinBox *>(w)) cs.push_back(QObject::connect(sb, &QSpinBox::valueChanged, w, on));
    else if (auto *sl = qobject_cast<QAbstractSlider *>(w)) cs.push_back(QObject::connect(sl, &QAbstractSlider::valueChanged, w, on));
    else if (auto *bt = qobject_cast<QAbstractButton *>(w)) cs.push_back(QObject::connect(bt, &QAbstractButton::toggled, w, on));
    // Docks and toolbars: their place is in their QMainWindow's state.
    else if (auto *dw = qobject_cast<QDockWidget *>(w)) {
        cs.push_back(QObject::connect(dw, &QDockWidget::topLevelChanged, w, on));
        cs.push_back(QObject::connect(dw, &QDockWidget::dockLocationChanged, w, on));
    } else if (auto *tb = qobject_cast<QToolBar *>(w)) {
        cs.push_back(QObject::connect(tb, &QToolBar::topLevelChanged, w, on));
        cs.push_back(QObject::connect(tb, &QToolBar::orientationChanged, w, on));
    }
    if (QHeaderView *h = headerOf(w)) {
        cs.push_back(QObject::connect(h, &QHeaderView::sectionMoved, w, on));
        cs.push_back(QObject::connect(h, &QHeaderView::sortIndicatorChanged, w, on));
        // Sections also resize as the view lays out (a stretched last
        // section): only a drag by the user is a change.
        cs.push_back(QObject::connect(h, &QHeaderView::sectionResized, w, [n] {
            if (QGuiApplication::mouseButtons() != Qt::NoButton) changed(n);
        }));
    }
    if (auto *area = qobject_cast<QAbstractScrollArea *>(w)) {
        w->installEventFilter(n->state->filter);    // Show: the pending scroll
        for (QScrollBar *bar : { area->horizontalScrollBar(), area->verticalScrollBar() }) {
            cs.push_back(QObject::connect(bar, &QScrollBar::valueChanged, w, [n] {
                if (!n->scrollPending) changed(n);
            }));
            cs.push_back(QObject::connect(bar, &QScrollBar::rangeChanged, w, [n] { applyScroll(n, false); }));
        }
        if (auto *view = qobject_cast<QAbstractItemView *>(w)) {
            if (QItemSelectionModel *sm = view->selectionModel()) {
                cs.push_back(QObject::connect(sm, &QItemSelectionModel::currentChanged, w, on));
                cs.push_back(QObject::connect(sm, &QItemSelectionModel::selectionChanged, w, on));
            }
        }
    }
    EngineState *s = n->state;
    rst_object *obj = n->object;
    cs.push_back(QObject::connect(w, &QObject::destroyed, s->filter, [s, obj, w] {
        s->closing.remove(w);
        if (s->finishing) return;
        Node *n = s->byObject.value(obj);
        if (n && n->closedCaptured) {
            // Its window closed first: the record stays, with the values it had then.
            for (auto &conn : n->connections) QObject::disconnect(conn);
            n->connections.clear();
            s->nodes.remove(w);
            n->frozen = std::move(n->closed);
            n->closed.clear();
            n->closedCaptured = false;
            n->scrollPending = false;
            return;
        }
        rst_status st = rst_unregister_object(s->engine, obj);   // releaseNode frees the node
        if (st != RST_OK) qWarning("restoration-qt: unregister a destroyed widget: %s: %s", rst_status_name(st), rst_last_error());
    }));
}

bool skipped(const QWidget *w) { return w->property(kSkipProperty).toBool(); }

/* Qt's standard dialogs: everything inside them is Qt's (QFileDialog's
 * "lookInCombo", "sidebar", ... come from its own .ui file). */
bool isQtDialog(const QObject *o) {
    for (const char *cls : { "QFileDialog", "QColorDialog", "QFontDialog", "QInputDialog", "QMessageBox",
                             "QProgressDialog", "QErrorMessage" })
        if (o->inherits(cls)) return true;
    return false;
}

/* A widget Qt made and named itself: never tracked, so it can never make
 * track() fail (two unnamed QTabWidgets under one named widget each have a
 * tab bar with "ScrollLeftButton" and "ScrollRightButton"). Its children
 * are still walked: a tab widget's pages and a scroll area's contents live
 * inside "qt_"-named widgets. */
bool qtNamed(const QWidget *w, const QString &name) {
    return name.startsWith(QLatin1String("qt_")) || name == QLatin1String("ScrollLeftButton")
        || name == QLatin1String("ScrollRightButton")
        || (isQtDialog(w) && name == QLatin1String(w->metaObject()->className()));   // set by the dialog's .ui
}
/* Widgets that are Qt's whatever their names, with all their descendants:
 * a tab bar's buttons (scroll, close), the insides of a standard dialog. */
bool qtOwned(const QWidget *w) {
    QWidget *parent = w->parentWidget();
    return parent && (qobject_cast<QTabBar *>(parent) || isQtDialog(parent));
}

void trackTree(EngineState *s, QWidget *w, rst_object *parent, bool isRoot, rst_status *first) {
    if (skipped(w) || (!isRoot && qtOwned(w))) return;
    rst_object *under = parent;
    if (Node *existing = s->nodes.value(w)) {
        under = existing->object;
    } else {
        QString name = w->objectName();
        if (isRoot && name.isEmpty()) name = QString::fromLatin1(w->metaObject()->className());
        if (!name.isEmpty() && (isRoot || !qtNamed(w, name))) {
            auto *n = new Node;
            n->state = s;
            n->widget = w;
            n->name = name;
            rst_status st = rst_register_object(s->engine, utf8(name).constData(), parent, kClass, &kCallbacks, n, &n->object);
            Node *frozen = st == RST_ERR_DUPLICATE ? frozenAt(s, parent, name) : nullptr;
            if (frozen) {
                // A record kept for this path: this widget takes it, and its values.
                delete n;
                frozen->widget = w;
                frozen->name = name;
                s->nodes.insert(w, frozen);
                Values vals = std::move(frozen->frozen);
                frozen->frozen.clear();
                applyValues(frozen, vals);
                connectChanges(frozen);
                under = frozen->object;
            } else if (st != RST_OK) {
                qWarning("restoration-qt: track widget '%s' (%s): %s: %s; it and its children are not saved",
                         qPrintable(name), w->metaObject()->className(), rst_status_name(st), rst_last_error());
                if (*first == RST_OK) *first = st;
                delete n;
                return;
            } else {
                s->nodes.insert(w, n);
                s->byObject.insert(n->object, n);
                connectChanges(n);
                under = n->object;
            }
        }
    }
    for (QObject *child : w->children())
        if (auto *cw = qobject_cast<QWidget *>(child)) trackTree(s, cw, under, false, first);
}

} // namespace

namespace RestorationQt {

rst_status attach(rst_engine *engine, bool saveOnSignals) {
    if (!engine || !qApp) {
        qWarning("restoration-qt: attach: %s", !engine ? "a NULL engine" : "no QApplication yet");
        return RST_ERR_INVALID;
    }
    EngineState *s = stateFor(engine, true);
    if (s->notifier) {
        qWarning("restoration-qt: attach: this engine is already attached");
        return RST_ERR_STATE;
    }
    s->notifier = new QSocketNotifier(rst_event_fd(engine), QSocketNotifier::Read);
    QObject::connect(s->notifier, &QSocketNotifier::activated, s->filter, [engine] {
        rst_status st = rst_dispatch(engine);    // autosave or signal save, on the GUI thread
        if (st != RST_OK) qWarning("restoration-qt: autosave: %s: %s", rst_status_name(st), rst_last_error());
    });
    if (!saveOnSignals) return RST_OK;
    const int sigs[] = { SIGTERM, SIGINT, SIGHUP };
    rst_status st = rst_save_on_signals(engine, sigs, 3);
    if (st != RST_OK) qWarning("restoration-qt: save on signals: %s: %s", rst_status_name(st), rst_last_error());
    return st;
}

rst_status track(rst_engine *engine, QWidget *root) {
    if (!engine || !root) {
        qWarning("restoration-qt: track: a NULL %s", !engine ? "engine" : "root widget");
        return RST_ERR_INVALID;
    }
    EngineState *s = stateFor(engine, true);
    rst_object *parent = nullptr;
    for (QWidget *a = root->parentWidget(); a && !parent; a = a->parentWidget())
        if (Node *n = s->nodes.value(a)) parent = n->object;
    rst_status first = RST_OK;
    trackTree(s, root, parent, parent == nullptr, &first);
    return first;
}

rst_status restore(rst_engine *engine) {
    if (!engine) return RST_ERR_INVALID;
    EngineState *s = stateFor(engine, true);
    RestoringGuard g(s);
    return rst_restore(engine);
}

void skip(QWidget *widget) {
    if (!widget) return;
    widget->setProperty(kSkipProperty, true);
    for (EngineState *s : engines()) {
        if (Node *n = s->nodes.value(widget)) {
            rst_status st = rst_unregister_object(s->engine, n->object);
            if (st != RST_OK) qWarning("restoration-qt: skip: %s: %s", rst_status_name(st), rst_last_error());
        }
    }
}

rst_object *object(rst_engine *engine, QWidget *widget) {
    EngineState *s = engine && widget ? stateFor(engine, false) : nullptr;
    Node *n = s ? s->nodes.value(widget) : nullptr;
    return n ? n->object : nullptr;
}

void setIdentityRole(QAbstractItemView *view, int role) {
    if (view) view->setProperty(kRoleProperty, role);
}

rst_status finish(rst_engine *engine) {
    if (!engine) return RST_OK;
    rst_status st = rst_flush(engine);
    if (st != RST_OK) qWarning("restoration-qt: save at exit: %s: %s", rst_status_name(st), rst_last_error());
    EngineState *s = engines().take(engine);
    if (s) {
        s->finishing = true;
        delete s->notifier;
        s->notifier = nullptr;
    }
    rst_engine_destroy(engine);        // every node's release: connections and filters removed
    if (s) {
        delete s->filter;
        delete s;
    }
    return st;
}

} // namespace RestorationQt
