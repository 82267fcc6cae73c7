"""restoration.tk widget by widget, in this process under Xvfb: every
widget type saved and restored, a password never written, a save after the
window was destroyed, a toplevel's geometry, bad archive values."""
import os
import tkinter as tk
from tkinter import ttk

import pytest

import restoration
import restoration.tk


@pytest.fixture
def tkroot(display):
    os.environ["DISPLAY"] = display
    roots = []

    def make():
        root = tk.Tk()
        roots.append(root)
        return root

    yield make
    for r in roots:
        try:
            r.destroy()
        except tk.TclError:
            pass


def build(root):
    w = {}
    w["top"] = tk.Toplevel(root, name="inspector")
    book = ttk.Notebook(root, name="book")
    book.pack()
    one, two = ttk.Frame(book, name="one"), ttk.Frame(book, name="two")
    book.add(one, text="1")
    book.add(two, text="2")
    w["book"] = book
    paned = ttk.Panedwindow(one, name="paned", orient="horizontal", width=400, height=200)
    paned.pack(fill="both", expand=True)
    a, b = ttk.Frame(paned, name="a", width=200), ttk.Frame(paned, name="b", width=200)
    paned.add(a)
    paned.add(b)
    w["paned"] = paned
    w["entry"] = tk.Entry(a, name="entry")
    w["entry"].pack()
    w["secret"] = ttk.Entry(a, name="secret", show="*")
    w["secret"].pack()
    w["text"] = tk.Text(b, name="text", height=5)
    w["text"].pack()
    w["list"] = tk.Listbox(two, name="list", height=5)
    for i in range(50):
        w["list"].insert("end", f"row {i}")
    w["list"].pack()
    w["tree"] = ttk.Treeview(two, name="tree", height=4)
    for i in range(40):
        w["tree"].insert("", "end", iid=f"i{i}", text=f"item {i}")
    w["tree"].pack()
    w["scale"] = tk.Scale(two, name="scale", from_=0, to=100, orient="horizontal")
    w["scale"].pack()
    w["check"] = tk.IntVar(root, 0, name="check")
    tk.Checkbutton(two, name="check", variable=w["check"]).pack()
    w["radio"] = tk.StringVar(root, "a", name="radio")
    for v in "abc":
        ttk.Radiobutton(two, name=f"r{v}", value=v, variable=w["radio"]).pack()
    w["spin"] = tk.Spinbox(two, name="spin", from_=0, to=10)
    w["spin"].pack()
    w["combo"] = ttk.Combobox(two, name="combo", values=("x", "y", "z"))
    w["combo"].pack()
    return w


def test_every_widget_type_round_trips(tkroot, tmp_path):
    path = tmp_path / "tk.rst"
    root = tkroot()
    w = build(root)
    engine = restoration.Engine(path)
    tracker = restoration.tk.track(engine, root, autosave=False)
    assert tracker.reason == restoration.RestoreReason.FIRST_LAUNCH
    root.update()
    w["top"].geometry("300x200+40+50")
    w["book"].select(1)
    w["paned"].sashpos(0, 120)
    w["entry"].insert(0, "hello")
    w["entry"].icursor(2)
    w["secret"].insert(0, "pa55-word-xyz")
    w["text"].insert("1.0", "\n".join(f"line {i}" for i in range(40)))
    w["text"].mark_set("insert", "7.3")
    w["text"].yview_moveto(0.5)
    w["list"].selection_set(33)
    w["list"].yview(30)
    w["tree"].selection_set(("i20", "i21"))
    w["tree"].focus("i21")
    w["tree"].yview_moveto(0.5)
    w["scale"].set(42)
    w["check"].set(1)
    w["radio"].set("c")
    w["spin"].delete(0, "end")
    w["spin"].insert(0, "7")
    w["combo"].set("z")
    root.update()
    engine.save()
    root.destroy()
    engine.close()
    assert b"pa55-word-xyz" not in path.read_bytes()

    root = tkroot()
    w = build(root)
    engine = restoration.Engine(path)
    tracker = restoration.tk.track(engine, root, autosave=False)
    assert tracker.reason == restoration.RestoreReason.RELAUNCH
    root.update()
    w["book"].select(0)           # the paned window's page shown: its sash laid out
    root.update()
    assert w["top"].winfo_width() == 300 and w["top"].winfo_height() == 200
    assert w["paned"].sashpos(0) == 120
    assert w["entry"].get() == "hello" and w["entry"].index("insert") == 2
    assert w["secret"].get() == ""
    assert w["text"].index("insert") == "7.3" and w["text"].get("1.0", "1.end") == "line 0"
    assert abs(w["text"].yview()[0] - 0.5) < 0.05
    assert w["list"].curselection() == (33,) and w["list"].nearest(0) == 30
    assert w["tree"].selection() == ("i20", "i21") and w["tree"].focus() == "i21"
    assert abs(w["tree"].yview()[0] - 0.5) < 0.05
    assert w["scale"].get() == 42
    assert w["check"].get() == 1 and w["radio"].get() == "c"
    assert w["spin"].get() == "7" and w["combo"].get() == "z"
    engine.close()


def test_a_save_after_the_window_is_destroyed_keeps_what_it_showed(tkroot, tmp_path):
    path = tmp_path / "tk.rst"
    root = tkroot()
    entry = tk.Entry(root, name="entry")
    entry.pack()
    with restoration.Engine(path) as engine:
        restoration.tk.track(engine, root)
        entry.insert(0, "last words")
        root.update()
        engine.save()
        root.destroy()
        engine.mark_dirty()
        engine.save()             # the widgets are gone: what they showed is written
    root = tkroot()
    entry = tk.Entry(root, name="entry")
    with restoration.Engine(path) as engine:
        restoration.tk.track(engine, root)
        assert entry.get() == "last words"


def test_close_saves_then_destroys(tkroot, tmp_path):
    path = tmp_path / "tk.rst"
    root = tkroot()
    entry = tk.Entry(root, name="entry")
    entry.pack()
    engine = restoration.Engine(path, autosave_delay_ms=60000)
    restoration.tk.track(engine, root)
    entry.insert(0, "typed")
    root.update()
    root.tk.call(root.wm_protocol("WM_DELETE_WINDOW"))      # as the window manager asks
    with pytest.raises(tk.TclError):
        root.winfo_exists()
    engine.close()
    info = restoration.read_archive_info(path)
    assert info.object_count == 2


def test_bad_archive_values_leave_widgets_alone(tkroot, tmp_path):
    """Values of the wrong type or out of range (another program's archive,
    an older layout): the widget keeps its state, the record is listed as
    skipped with the reason, the others are restored."""
    path = tmp_path / "tk.rst"

    class Fake:
        def __init__(self, values):
            self.values = values

        def encode_restorable_state(self, c):
            for k, v in self.values.items():
                c.encode(k, v)

        def decode_restorable_state(self, c):
            pass

    with restoration.Engine(path) as e:
        e.register("tk", Fake({"geometry": "200x100+0+0"}))
        e.register("tk/list", Fake({"selection": [999, 2], "top": 500}))
        e.register("tk/entry", Fake({"text": 12}))
        e.save()
    root = tkroot()
    lb = tk.Listbox(root, name="list")
    for i in range(5):
        lb.insert("end", str(i))
    entry = tk.Entry(root, name="entry")
    with restoration.Engine(path, log=lambda lv, m: None) as engine:
        restoration.tk.track(engine, root)
        root.update()
        assert lb.curselection() == (2,)
        assert entry.get() == ""
        skip, = engine.last_restore_skips()
        assert skip.path == "tk/entry" and skip.reason == restoration.SkipReason.DECODE_FAILED
        assert "key 'text' holds an int, not a str" in skip.detail


def test_an_invalid_archive_opens_the_window_as_built(tkroot, tmp_path):
    path = tmp_path / "tk.rst"
    path.write_bytes(b"RST? not an archive" * 20)
    root = tkroot()
    entry = tk.Entry(root, name="entry")
    entry.insert(0, "as built")
    with restoration.Engine(path, log=lambda lv, m: None) as engine:
        tracker = restoration.tk.track(engine, root)
        assert isinstance(tracker.error, restoration.CorruptError)
        assert entry.get() == "as built"
        engine.save()                 # a good archive replaces it
    with restoration.Engine(path) as engine:
        engine.register("tk", None)
        engine.register("tk/entry", None)
        assert engine.restore() == restoration.RestoreReason.RELAUNCH
