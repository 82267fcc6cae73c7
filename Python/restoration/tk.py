"""Tkinter windows restored by Tk's own path names.

    engine = restoration.Engine(path, autosave_delay_ms=500)
    tracker = restoration.tk.track(engine, root)   # registers, restores, autosaves

Every widget under ``root`` is registered under its Tk parent by its Tk name
(``.!notebook.list.note`` is the object ``tk/!notebook/list/note``), so name
the widgets whose state matters (``name="note"``) or create them in a stable
order. Saved and restored: a toplevel's geometry; a ``ttk.Notebook``'s tab;
``PanedWindow``/``ttk.Panedwindow`` sashes; ``Entry``/``ttk.Entry`` and
``Text`` content and cursor (and a Text's scroll); ``Listbox`` and
``ttk.Treeview`` selection and scroll; ``Scale``/``ttk.Scale``;
``Checkbutton``/``Radiobutton`` variables; ``Spinbox`` and ``Combobox``
values. An entry with ``show=`` set (a password) is never written.

The engine autosaves on Tk's event loop (``createfilehandler`` on the
engine's event descriptor) when the user changes something, and saves when
the window manager asks to close the window (``WM_DELETE_WINDOW``).
"""
from __future__ import annotations

import tkinter
from collections.abc import Callable
from typing import Any

from . import _core
from ._errors import NotFoundError, RestorationError

__all__ = ["track", "Tracker"]

_TOPLEVEL = {"Tk", "Toplevel"}
_ENTRY = {"Entry", "TEntry"}
_SPIN = {"Spinbox", "TSpinbox"}
_SCALE = {"Scale", "TScale"}
_CHOICE = {"Checkbutton", "TCheckbutton", "Radiobutton", "TRadiobutton"}
_PANED = {"Panedwindow", "TPanedwindow"}

# Events that mean the user changed something.
_CHANGE_EVENTS = ("<KeyRelease>", "<ButtonRelease>", "<<NotebookTabChanged>>", "<<ListboxSelect>>",
                  "<<TreeviewSelect>>", "<<ComboboxSelected>>", "<MouseWheel>", "<Button-4>", "<Button-5>")


class _Widget:
    """One widget's state, read from the widget at save and written to it
    at restore."""

    def __init__(self, tracker: Tracker, widget: tkinter.Misc, kind: str) -> None:
        self.tracker = tracker
        self.widget = widget
        self.kind = kind
        self.later: dict[str, Any] = {}
        self.last: dict[str, Any] = {}

    # -- save ------------------------------------------------------------------

    def encode_restorable_state(self, c: _core.Coder) -> None:
        values: dict[str, Any] = {}
        try:
            self._read(values)
            self.last = values
        except tkinter.TclError:
            values = self.last    # the widget was destroyed: what it showed last
        for key, value in values.items():
            c.encode(key, value)

    def _read(self, out: dict[str, Any]) -> None:
        """The widget's state as it shows it now (TclError: it is gone)."""
        w: Any = self.widget
        k = self.kind
        later = self.later      # restored, not yet laid out: what the user will see
        if k in _TOPLEVEL:
            out["geometry"] = later.get("geometry") or w.wm_geometry()
            out["state"] = w.wm_state()
        elif k == "TNotebook":
            tabs = w.tabs()
            if tabs:
                current = w.select()
                out["tab"] = w.index(current)
                out["tab_name"] = str(current).rsplit(".", 1)[-1]
        elif k in _PANED:
            out["sashes"] = later["sashes"] if "sashes" in later else self._sashes()
        elif k in _ENTRY or k in _SPIN or k == "TCombobox":
            if k in _ENTRY and str(w.cget("show")):
                return            # a password: never written
            out["text"] = w.get()
            out["cursor"] = int(w.index("insert"))
        elif k == "Text":
            out["text"] = w.get("1.0", "end-1c")
            out["cursor"] = w.index("insert")
            out["top"] = float(later.get("top", w.yview()[0]))
        elif k == "Listbox":
            out["selection"] = [int(i) for i in w.curselection()]
            if "top" in later:
                out["top"] = int(later["top"])
            else:
                out["top"] = int(w.nearest(0)) if w.winfo_ismapped() else int(float(w.yview()[0]) * w.size() + 0.5)
        elif k == "Treeview":
            out["selection"] = [str(i) for i in w.selection()]
            out["focus"] = str(w.focus())
            out["top"] = float(later.get("top", w.yview()[0]))
        elif k in _SCALE:
            out["value"] = float(w.get())
        elif k in _CHOICE:
            name = str(w.cget("variable"))
            if name:
                value = w.getvar(name)
                out["variable"] = name
                out["value"] = value if isinstance(value, (bool, int, float)) else str(value)

    def _sashes(self) -> list[int]:
        w: Any = self.widget
        if self.kind == "TPanedwindow":
            return [int(w.sashpos(i)) for i in range(len(w.panes()) - 1)]
        return [int(w.sash_coord(i)[0 if str(w.cget("orient")) == "horizontal" else 1])
                for i in range(len(w.panes()) - 1)]

    # -- restore ---------------------------------------------------------------

    def decode_restorable_state(self, c: _core.Coder) -> None:
        w: Any = self.widget
        k = self.kind
        if k in _TOPLEVEL:
            geometry = c.decode("geometry", "")
            if geometry:
                w.wm_geometry(geometry)
                if not w.winfo_ismapped():
                    self.later["geometry"] = geometry
            if c.decode("state", "") == "zoomed":
                try:
                    w.wm_state("zoomed")
                except tkinter.TclError:
                    pass
        elif k == "TNotebook":
            name = c.decode("tab_name", "")
            tabs = [str(t) for t in w.tabs()]
            match = [t for t in tabs if t.rsplit(".", 1)[-1] == name]
            if match:
                w.select(match[0])
            else:
                i = c.decode("tab", -1)
                if 0 <= i < len(tabs):
                    w.select(i)
        elif k in _PANED:
            self.later["sashes"] = c.decode("sashes", [])
        elif k in _ENTRY or k in _SPIN or k == "TCombobox":
            if k in _ENTRY and str(w.cget("show")):
                return
            if "text" in c:
                self._set_entry(c.decode("text", ""), c.decode("cursor", 0))
        elif k == "Text":
            if "text" in c:
                w.delete("1.0", "end")
                w.insert("1.0", c.decode("text", ""))
                w.mark_set("insert", c.decode("cursor", "1.0"))
                self.later["top"] = c.decode("top", 0.0)
                w.edit_modified(False)
        elif k == "Listbox":
            sel = c.decode("selection", [])
            w.selection_clear(0, "end")
            for i in sel:
                if 0 <= i < w.size():
                    w.selection_set(i)
            if sel and 0 <= sel[0] < w.size():
                w.activate(sel[0])
            self.later["top"] = c.decode("top", 0)
        elif k == "Treeview":
            items = [i for i in c.decode("selection", []) if w.exists(i)]
            w.selection_set(items)
            focus = c.decode("focus", "")
            if focus and w.exists(focus):
                w.focus(focus)
            self.later["top"] = c.decode("top", 0.0)
        elif k in _SCALE:
            if "value" in c:
                w.set(c.decode("value", 0.0))
        elif k in _CHOICE:
            name = c.decode("variable", "")
            if name and "value" in c and name == str(w.cget("variable")):
                w.setvar(name, c.decode("value"))

    def _set_entry(self, text: str, cursor: int) -> None:
        w: Any = self.widget
        if self.kind == "TCombobox" or self.kind == "TSpinbox":
            w.set(text)
        else:
            state = str(w.cget("state"))
            if state != "normal":
                w.configure(state="normal")
            w.delete(0, "end")
            w.insert(0, text)
            if state != "normal":
                w.configure(state=state)
        w.icursor(cursor)

    def application_finished_restoring_state(self) -> None:
        if self.later:
            self.apply_later()
            # Once more when the widget has its real size (sashes and
            # scrolling are laid out again when it gets one); until then a
            # save writes the restored values, not the unmapped widget's.
            w: Any = self.widget
            if w.winfo_ismapped() and w.winfo_width() > 1:
                w.after_idle(self._final)
            else:
                w.bind("<Configure>", self._on_configure, add="+")

    def _on_configure(self, event: Any) -> None:
        w: Any = self.widget
        if self.later and event.widget is w and w.winfo_width() > 1:
            w.after_idle(self._final)

    def _final(self) -> None:
        if self.later:
            self.apply_later()
            self.later.clear()

    def apply_later(self) -> None:
        w: Any = self.widget
        try:
            if "sashes" in self.later:
                for i, pos in enumerate(self.later["sashes"]):
                    if self.kind == "TPanedwindow":
                        w.sashpos(i, pos)
                    elif str(w.cget("orient")) == "horizontal":
                        w.sash_place(i, pos, w.sash_coord(i)[1])
                    else:
                        w.sash_place(i, w.sash_coord(i)[0], pos)
            if "top" in self.later:
                top = self.later["top"]
                if self.kind == "Listbox":
                    w.yview(int(top))
                else:
                    w.yview_moveto(float(top))
        except tkinter.TclError:
            pass     # the widget is gone


class Tracker:
    """What ``track`` set up: the engine, the widgets it registered, the
    restore reason (None when nothing was restored yet) and ``error``: the
    exception of a restore that failed (an invalid archive; the window then
    opens as the program built it)."""

    def __init__(self, engine: _core.Engine, root: tkinter.Misc, name: str) -> None:
        self.engine = engine
        self.root = root
        self.name = name
        self.widgets: dict[str, _Widget] = {}
        self.reason: _core.RestoreReason | None = None
        self.error: RestorationError | None = None
        self._fd: int | None = None
        self._close_chain: Callable[[], object] | None = None

    # -- registration -----------------------------------------------------------

    def add(self, widget: tkinter.Misc, parent: _core.ObjectRef | None = None) -> None:
        """Registers ``widget`` and every widget under it (for widgets made
        after ``track``)."""
        if parent is None and widget is not self.root:
            parent = self.engine.ref(self._path(widget.master)) if widget.master is not None else None
        if widget is self.root:
            ident = self.name
        else:
            ident = widget.winfo_name()
        kind = widget.winfo_class()
        if widget.winfo_toplevel() is widget:
            kind = "Toplevel"      # a Tk(className=...) reports its class name
        state = _Widget(self, widget, kind) if self._tracked(kind) else None
        ref = self.engine.register(ident, state, parent=parent)
        if state is not None:
            self.widgets[str(widget)] = state
        if kind in _CHOICE or kind in _SCALE:
            self._trace(widget)
        for child in widget.winfo_children():
            self.add(child, ref)

    def _path(self, widget: tkinter.Misc) -> str:
        if widget is self.root:
            return self.name
        assert widget.master is not None
        return self._path(widget.master) + "/" + widget.winfo_name()

    @staticmethod
    def _tracked(kind: str) -> bool:
        return kind in _TOPLEVEL | _ENTRY | _SPIN | _SCALE | _CHOICE | _PANED or kind in (
            "TNotebook", "Text", "Listbox", "Treeview", "TCombobox")

    def _trace(self, widget: Any) -> None:
        try:
            name = str(widget.cget("variable"))
        except tkinter.TclError:
            return
        if name:
            widget.tk.call("trace", "add", "variable", name, "write",
                           widget.register(lambda *a: self.changed()))

    # -- saving -----------------------------------------------------------------

    def changed(self, *args: Any) -> None:
        """Something changed: an autosave becomes due."""
        if not self.engine.closed:
            self.engine.mark_dirty()

    def save(self) -> None:
        self.engine.save()

    def _dispatch(self, fd: int, mask: int) -> None:
        try:
            self.engine.dispatch()
        except RestorationError:
            pass       # logged by the engine; the save stays due and is retried

    def _close(self) -> None:
        try:
            self.engine.save()
        finally:
            if self._close_chain is not None:
                self._close_chain()
            else:
                self.root.destroy()

    def stop(self) -> None:
        """Stops watching the engine (before closing it without Tk)."""
        if self._fd is not None:
            self.root.tk.deletefilehandler(self._fd)
            self._fd = None


def track(engine: _core.Engine, root: tkinter.Tk | tkinter.Toplevel, *, name: str = "tk",
          restore: bool = True, autosave: bool = True, save_at_close: bool = True) -> Tracker:
    """Registers every widget under ``root`` with ``engine`` (under the
    object ``name``), restores them (``restore``; the reason is in
    ``tracker.reason``, FIRST_LAUNCH when there is no archive; a restore
    that fails leaves the widgets as they are, its exception in
    ``tracker.error``), autosaves
    on Tk's event loop after the user's changes (``autosave``; the engine
    needs ``autosave_delay_ms``) and saves when the window manager asks to
    close ``root`` (``save_at_close``; then ``root.destroy()``, or the
    handler ``root`` had)."""
    tracker = Tracker(engine, root, name)
    tracker.add(root)
    if restore:
        try:
            tracker.reason = engine.restore()
        except NotFoundError:
            tracker.reason = engine.last_restore_reason
        except RestorationError as exc:
            # A window still opens on an archive that cannot be restored
            # (invalid, refused): as it was built, the failure kept here.
            tracker.reason = engine.last_restore_reason
            tracker.error = exc
    if autosave:
        fd = engine.event_fd
        root.tk.createfilehandler(fd, tkinter.READABLE, tracker._dispatch)
        tracker._fd = fd
        for sequence in _CHANGE_EVENTS:
            root.bind_all(sequence, tracker.changed, add="+")
        root.bind("<Configure>", lambda e: tracker.changed() if e.widget is root else None, add="+")
    def destroyed(event: Any) -> None:
        if event.widget is root:
            tracker.stop()      # no more dispatch from a dead Tk; saves write what it showed last
    root.bind("<Destroy>", destroyed, add="+")
    if save_at_close:
        previous = root.wm_protocol("WM_DELETE_WINDOW")
        if previous:
            tracker._close_chain = lambda: root.tk.call(previous)
        root.wm_protocol("WM_DELETE_WINDOW", tracker._close)
    return tracker
