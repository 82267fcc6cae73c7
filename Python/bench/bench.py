#!/usr/bin/env python3
"""Saving and restoring 10,000 objects from Python: the engine against what
a Python program does today at exit, pickle and json, in one run, with the
same state (each object: a bool, an int, a float, a str, bytes, a reference
to another object, a nested record of a str and an int, and a list of
ints: the C benchmark's mix).

    python bench.py [--objects N] [--rounds R] [--dir DIR]

Each figure is the best of R rounds (default 7), in milliseconds:
  save     engine: Engine.save() of every registered object to a file
           (written whole, fsync, atomic rename); pickle/json: dump of the
           objects' state to a file, then fsync and rename (the same
           durability), and also to memory (save_to_bytes, dumps).
  restore  engine: Engine.restore() with every object re-created by its
           class's factory (as pickle re-creates them); pickle/json: load
           and re-create the objects. References are object references in
           the engine and pickle, indexes in json. Also: the program makes
           its objects and registers them, then Engine.restore() decodes
           into them (registration and restore timed).
"""
from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import restoration


class Node:
    __slots__ = ("name", "flag", "number", "ratio", "title", "blob", "link", "note_text", "note_count", "rows")

    def __init__(self, name: str, i: int, link: Node | None) -> None:
        self.name = name
        self.flag = i % 2 == 0
        self.number = i * 7919
        self.ratio = i / 3.0
        self.title = f"Object number {i}"
        self.blob = bytes((i + k) % 256 for k in range(16))
        self.link = link
        self.note_text = f"note {i}"
        self.note_count = i % 17
        self.rows = [i, i + 1, i + 2, i + 3]

    # restoration
    def encode_restorable_state(self, c: restoration.Coder) -> None:
        e = c.encode
        e("flag", self.flag)
        e("number", self.number)
        e("ratio", self.ratio)
        e("title", self.title)
        e("blob", self.blob)
        if self.link is not None:
            e("link", self.link)
        with c.record("note"):
            e("text", self.note_text)
            e("count", self.note_count)
        e("rows", self.rows)

    def decode_restorable_state(self, c: restoration.Coder) -> None:
        d = c.decode
        self.flag = d("flag")
        self.number = d("number")
        self.ratio = d("ratio")
        self.title = d("title")
        self.blob = d("blob")
        self.link = d("link", None)
        with c.record("note"):
            self.note_text = d("text")
            self.note_count = d("count")
        self.rows = d("rows")

    # pickle (what __slots__ classes need)
    def __getstate__(self) -> tuple[Any, ...]:
        return (self.name, self.flag, self.number, self.ratio, self.title, self.blob, self.link,
                self.note_text, self.note_count, self.rows)

    def __setstate__(self, s: tuple[Any, ...]) -> None:
        (self.name, self.flag, self.number, self.ratio, self.title, self.blob, self.link,
         self.note_text, self.note_count, self.rows) = s

    def same(self, other: Node) -> bool:
        return all(getattr(self, a) == getattr(other, a) for a in self.__slots__ if a != "link") and \
            (self.link is None) == (other.link is None) and \
            (self.link is None or self.link.name == other.link.name)  # type: ignore[union-attr]


def make_nodes(n: int) -> list[Node]:
    nodes: list[Node] = []
    for i in range(n):
        nodes.append(Node(f"n{i}", i, nodes[i - 1] if i % 3 and i else None))
    return nodes


def durable_write(path: Path, data: bytes) -> None:
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def to_json(nodes: list[Node]) -> str:
    index = {id(n): i for i, n in enumerate(nodes)}
    return json.dumps([{"name": n.name, "flag": n.flag, "number": n.number, "ratio": n.ratio, "title": n.title,
                        "blob": n.blob.hex(), "link": None if n.link is None else index[id(n.link)],
                        "note": {"text": n.note_text, "count": n.note_count}, "rows": n.rows} for n in nodes])


def from_json(text: str) -> list[Node]:
    items = json.loads(text)
    nodes = [Node.__new__(Node) for _ in items]
    for n, d in zip(nodes, items):
        n.name, n.flag, n.number, n.ratio, n.title = d["name"], d["flag"], d["number"], d["ratio"], d["title"]
        n.blob = bytes.fromhex(d["blob"])
        n.link = None if d["link"] is None else nodes[d["link"]]
        n.note_text, n.note_count, n.rows = d["note"]["text"], d["note"]["count"], d["rows"]
    return nodes


def best_ms(fn: Callable[[], Any], rounds: int) -> float:
    """The fastest of `rounds` runs (as timeit: on a shared machine the
    others measure the neighbours)."""
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return min(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--objects", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--dir", type=Path, default=None)
    args = ap.parse_args()
    work = args.dir or Path(tempfile.mkdtemp(prefix="restoration-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    nodes = make_nodes(args.objects)

    # The engine: every object registered, saved to a file.
    archive = work / "state.rst"
    engine = restoration.Engine(archive)
    for n in nodes:
        engine.register(n.name, n, cls="Node")
    save_engine = best_ms(engine.save, args.rounds)
    save_engine_mem = best_ms(engine.save_to_bytes, args.rounds)
    engine.close()

    restored: list[Node] = []

    def make(identifier: str, parent: Any, coder: restoration.Coder) -> Node:
        n = Node.__new__(Node)
        n.name = identifier
        restored.append(n)
        return n

    def restore_engine() -> None:
        restored.clear()
        e = restoration.Engine(archive, crash_guard=False)
        e.register_class("Node", make)
        t = time.perf_counter()
        e.restore()
        timings.append((time.perf_counter() - t) * 1000)
        e.close()   # untimed: releasing 10,000 objects

    timings: list[float] = []
    for _ in range(args.rounds):
        restore_engine()
    restore_engine_ms = min(timings)
    assert len(restored) == len(nodes) and all(a.same(b) for a, b in zip(nodes, restored)), "engine restore differs"

    # The other way a program restores: it makes its objects itself at
    # start, registers them, and the engine decodes into them (timed: the
    # registration and the restore; the objects' creation is the program's).
    def restore_registered() -> None:
        fresh = [Node.__new__(Node) for _ in nodes]
        e = restoration.Engine(archive, crash_guard=False)
        t = time.perf_counter()
        for n, old in zip(fresh, nodes):
            n.name = old.name
            e.register(n.name, n, cls="Node")
        e.restore()
        timings.append((time.perf_counter() - t) * 1000)
        restored[:] = fresh
        e.close()

    timings.clear()
    for _ in range(args.rounds):
        restore_registered()
    restore_registered_ms = min(timings)
    assert all(a.same(b) for a, b in zip(nodes, restored)), "engine restore (registered) differs"

    # pickle and json, to a file as durably, and in memory.
    pfile, jfile = work / "state.pickle", work / "state.json"
    save_pickle = best_ms(lambda: durable_write(pfile, pickle.dumps(nodes, protocol=pickle.HIGHEST_PROTOCOL)), args.rounds)
    save_pickle_mem = best_ms(lambda: pickle.dumps(nodes, protocol=pickle.HIGHEST_PROTOCOL), args.rounds)
    restore_pickle = best_ms(lambda: pickle.loads(pfile.read_bytes()), args.rounds)
    assert all(a.same(b) for a, b in zip(nodes, pickle.loads(pfile.read_bytes())))
    save_json = best_ms(lambda: durable_write(jfile, to_json(nodes).encode()), args.rounds)
    save_json_mem = best_ms(lambda: to_json(nodes), args.rounds)
    restore_json = best_ms(lambda: from_json(jfile.read_text()), args.rounds)
    assert all(a.same(b) for a, b in zip(nodes, from_json(jfile.read_text())))

    sizes = {name: p.stat().st_size for name, p in (("engine", archive), ("pickle", pfile), ("json", jfile))}
    print(f"{args.objects} objects, best of {args.rounds} rounds (ms); Python {sys.version.split()[0]}, "
          f"librestoration {restoration.library_version()}")
    print(f"{'':10}{'save (file)':>14}{'save (memory)':>15}{'restore':>10}{'bytes':>11}")
    for name, s, sm, r in (("engine", save_engine, save_engine_mem, restore_engine_ms),
                           ("pickle", save_pickle, save_pickle_mem, restore_pickle),
                           ("json", save_json, save_json_mem, restore_json)):
        print(f"{name:10}{s:14.1f}{sm:15.1f}{r:10.1f}{sizes[name]:11}")
    print(f"engine, objects registered by the program: register and restore {restore_registered_ms:.1f}")
    print(f"engine / pickle: save {save_engine / save_pickle:.2f}x (file), "
          f"{save_engine_mem / save_pickle_mem:.2f}x (memory); restore {restore_engine_ms / restore_pickle:.2f}x "
          f"(factories), {restore_registered_ms / restore_pickle:.2f}x (registered by the program)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
