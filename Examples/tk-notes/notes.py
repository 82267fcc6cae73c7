#!/usr/bin/env python3
"""tk-notes: a Tkinter application whose state is restored by
restoration.tk, the twin of Examples/gtk-notes: the window size, the
notebook's page, a search entry, a list's selection and the row at its top,
the divider between the list and the note, the note's text and cursor, and
the settings page (a check button, a scale, radio buttons, a spin box, a
combo box, a tree's selection; the password entry is never saved). The
engine autosaves on Tk's event loop, saves on SIGTERM/SIGINT/SIGHUP and when
the window is closed, keeps 2 generations, and the status line tells after a
crash that it recovered (RECOVER).

    notes.py STATE_DIR

Test hooks (Python/tests/test_tk.py, under Xvfb), all optional:
  NOTES_SET="page=P;entry=T;note=T;select=N;top=N;divider=X;width=W;height=H;
             wrap=0|1;size=N;theme=T;columns=N;font=F;section=ID;password=T"
      applied once the window is shown, as a user would; when the autosave
      has written them, the file $NOTES_READY is created.
  NOTES_READY_DIRTY=FILE  written right after the changes instead, while
      still dirty; NOTES_CLOSE=1 then asks to close the window as the
      window manager does (WM_DELETE_WINDOW).
  NOTES_DUMP=FILE  once restored and laid out, writes what the widgets show
      (reason=…, width=…, top=…) to FILE, then keeps running.
  NOTES_LOOP=MS    the size scale moves one step every MS milliseconds
      until the process ends (the state keeps changing, the autosave keeps
      saving: for `restorectl test`).
  NOTES_AUTOSAVE_MS=N  the autosave delay (default 300).
"""
from __future__ import annotations

import os
import signal
import sys
import tkinter as tk
from pathlib import Path
from tkinter import ttk

import restoration
import restoration.tk

ITEMS = 150


class Notes:
    def __init__(self, root: tk.Tk) -> None:
        self.root = root
        root.title("Notes")
        root.geometry("640x480")
        self.status = ttk.Label(root, name="status", anchor="w")
        self.status.pack(side="bottom", fill="x")
        self.book = ttk.Notebook(root, name="book")
        self.book.pack(fill="both", expand=True)

        # The list page: a search entry over a list, a divider, the note.
        page = ttk.Frame(self.book, name="list")
        self.book.add(page, text="List")
        self.search = ttk.Entry(page, name="search")
        self.search.pack(side="top", fill="x")
        self.paned = tk.PanedWindow(page, name="paned", orient="horizontal", sashwidth=6)
        self.paned.pack(fill="both", expand=True)
        left = ttk.Frame(self.paned, name="left")
        self.items = tk.Listbox(left, name="items", exportselection=False, height=12)
        bar = ttk.Scrollbar(left, orient="vertical", command=self.items.yview)
        self.items.configure(yscrollcommand=bar.set)
        bar.pack(side="right", fill="y")
        self.items.pack(side="left", fill="both", expand=True)
        for i in range(ITEMS):
            self.items.insert("end", f"Item {i:03d}")
        self.note = tk.Text(self.paned, name="note", width=30, height=10, undo=True)
        self.paned.add(left, minsize=100)
        self.paned.add(self.note, minsize=100)

        # The settings page.
        settings = ttk.Frame(self.book, name="settings")
        self.book.add(settings, text="Settings")
        self.wrap = tk.BooleanVar(root, False, name="wrap")
        ttk.Checkbutton(settings, name="wrap", text="Wrap lines", variable=self.wrap).grid(row=0, column=0, sticky="w")
        self.size = ttk.Scale(settings, name="size", from_=8, to=40, orient="horizontal")
        self.size.set(12)
        self.size.grid(row=1, column=0, sticky="ew")
        self.theme = tk.StringVar(root, "light", name="theme")
        for i, t in enumerate(("light", "dark")):
            ttk.Radiobutton(settings, name=t, text=t, value=t, variable=self.theme).grid(row=2, column=i, sticky="w")
        self.columns = ttk.Spinbox(settings, name="columns", from_=1, to=6)
        self.columns.set("1")
        self.columns.grid(row=3, column=0, sticky="w")
        self.font = ttk.Combobox(settings, name="font", values=("Sans", "Serif", "Mono"), state="readonly")
        self.font.set("Sans")
        self.font.grid(row=4, column=0, sticky="w")
        self.password = ttk.Entry(settings, name="password", show="•")
        self.password.grid(row=5, column=0, sticky="w")
        self.tree = ttk.Treeview(settings, name="sections", height=5, show="tree")
        for s in range(30):
            self.tree.insert("", "end", iid=f"s{s}", text=f"Section {s}")
        self.tree.grid(row=6, column=0, columnspan=2, sticky="nsew")


def apply(app: Notes, spec: str) -> None:
    """NOTES_SET: the changes a user would make."""
    size: dict[str, str] = {}
    for part in spec.split(";"):
        key, _, value = part.partition("=")
        if key == "page":
            app.root.tk.call(str(app.book), "select", f"{app.book}.{value}")
        elif key == "entry":
            app.search.delete(0, "end")
            app.search.insert(0, value)
        elif key == "note":
            app.note.delete("1.0", "end")
            app.note.insert("1.0", value)
            app.note.mark_set("insert", "1.4")
        elif key == "select":
            app.items.selection_clear(0, "end")
            app.items.selection_set(int(value))
        elif key == "top":
            app.items.yview(int(value))
        elif key == "divider":
            app.root.update_idletasks()
            app.paned.sash_place(0, int(value), app.paned.sash_coord(0)[1])
        elif key in ("width", "height"):
            size[key] = value
        elif key == "wrap":
            app.wrap.set(value == "1")
        elif key == "size":
            app.size.set(float(value))
        elif key == "theme":
            app.theme.set(value)
        elif key == "columns":
            app.columns.set(value)
        elif key == "font":
            app.font.set(value)
        elif key == "section":
            app.tree.selection_set(value)
            app.tree.see(value)
        elif key == "password":
            app.password.insert(0, value)
        elif key:
            raise SystemExit(f"notes: NOTES_SET: unknown key '{key}'")
    if size:
        app.root.geometry(f"{size.get('width', app.root.winfo_width())}x{size.get('height', app.root.winfo_height())}")


def dump(app: Notes, reason: str, path: str) -> None:
    """NOTES_DUMP: the state as the widgets show it."""
    r = app.root
    page = str(app.root.tk.call(str(app.book), "select")).rsplit(".", 1)[-1]
    app.root.tk.call(str(app.book), "select", 0)     # the list page, to read the list as drawn
    r.update()
    lines = [
        f"reason={reason}",
        f"width={r.winfo_width()}",
        f"height={r.winfo_height()}",
        f"page={page}",
        f"entry={app.search.get()}",
        f"note={app.note.get('1.0', 'end-1c')}",
        f"note_cursor={app.note.index('insert')}",
        f"select={','.join(str(i) for i in range(app.items.size()) if app.items.selection_includes(i))}",
        f"top={app.items.index('@0,0')}",
        f"divider={app.paned.sash_coord(0)[0]}",
        f"wrap={int(app.wrap.get())}",
        f"size={int(float(app.size.get()))}",
        f"theme={app.theme.get()}",
        f"columns={app.columns.get()}",
        f"font={app.font.get()}",
        f"section={','.join(app.tree.selection())}",
        f"password={app.password.get()}",
    ]
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: notes.py STATE_DIR", file=sys.stderr)
        return 2
    state = Path(sys.argv[1])
    root = tk.Tk(className="Notes")
    app = Notes(root)
    engine = restoration.Engine(state / "notes.rst", app_version="1.0", generations=2,
                                autosave_delay_ms=int(os.environ.get("NOTES_AUTOSAVE_MS", "300")))
    tracker = restoration.tk.track(engine, root)
    engine.save_on_signals((signal.SIGTERM, signal.SIGINT, signal.SIGHUP))
    reason = tracker.reason or restoration.RestoreReason.FIRST_LAUNCH
    print(f"notes: {reason.c_name}", flush=True)
    app.status.configure(text="Recovered after a crash" if reason == restoration.RestoreReason.RECOVER
                         else f"Restore: {reason.name.lower()}")

    changes = os.environ.get("NOTES_SET")
    ready = os.environ.get("NOTES_READY")
    ready_dirty = os.environ.get("NOTES_READY_DIRTY")
    dump_to = os.environ.get("NOTES_DUMP")
    loop_ms = int(os.environ.get("NOTES_LOOP", "0"))
    applied = False

    def on_save(status: restoration.Status, trigger: restoration.SaveTrigger) -> None:
        if applied and ready and status == restoration.Status.RST_OK and not engine.is_dirty:
            Path(ready).write_text("saved\n")

    engine.set_save_listener(on_save)

    def start() -> None:
        nonlocal applied
        if changes:
            apply(app, changes)
            root.update_idletasks()
            applied = True
            tracker.changed()
            if ready_dirty:
                Path(ready_dirty).write_text("dirty\n" if engine.is_dirty else "clean\n")
            if os.environ.get("NOTES_CLOSE") == "1":
                root.tk.call(root.wm_protocol("WM_DELETE_WINDOW"))   # as the window manager asks
                return
        if loop_ms:
            def step() -> None:
                app.size.set(8 + (float(app.size.get()) - 7) % 32)
                root.after(loop_ms, step)
            root.after(loop_ms, step)
        if dump_to:
            root.after(300, lambda: dump(app, reason.c_name, dump_to))

    root.after(200, start)
    root.mainloop()
    engine.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
