"""The engine from Python: values, errors, stores, restore reasons, budgets,
sensitivity, classes and migrations."""
import os
import pathlib
import select
import signal
import time

import pytest

import restoration as r
from conftest import Box, run_python

VALUES = {
    "flag": True, "off": False, "count": -42, "big": 2**63 - 1, "ratio": 0.1, "neg": -1e300,
    "name": "Grüße, 世界", "empty": "", "blob": b"\x00\x01\xff", "noblob": b"",
    "file": pathlib.Path("/tmp/résumé.txt"), "rawfile": pathlib.Path(os.fsdecode(b"/tmp/\xff\xfe")),
    "ints": [1, -2, 2**62], "noints": [], "names": ["a", "", "ü"], "floats": [0.5, -2.0],
    "mixed": [1, "two", 3.0, b"4", True, [5, 6], {"seven": 7}],
    "record": {"x": 1, "y": 2.5, "inner": {"z": "deep", "list": ["p", "q"]}},
}


def test_every_value_type_round_trips_through_a_file(state):
    with r.Engine(state) as e:
        e.register("box", Box(**VALUES))
        e.save()
    box = Box(**{k: None for k in VALUES})
    with r.Engine(state) as e:
        e.register("box", box)
        assert e.restore() == r.RestoreReason.RELAUNCH
        assert box.finished == 1
    assert box.decoded == VALUES
    assert box.released == 1


def test_bytes_export_and_memory_store(state):
    with r.Engine(store=r.MemoryStore()) as e:
        e.register("box", Box(**VALUES))
        data = e.save_to_bytes()
        e.save()
        box = Box(**{k: None for k in VALUES})
        e.unregister("box")
        e.register("box", box)
        e.restore()
        assert box.decoded == VALUES
    with r.Engine() as e:
        box = Box(**{k: None for k in VALUES})
        e.register("box", box)
        e.restore_from_bytes(data)
        assert e.last_restore_reason == r.RestoreReason.BUFFER
        assert box.decoded == VALUES


def test_object_references_and_paths(state):
    class Node(Box):
        pass
    a, b = Node(), Node()
    b.values = {"peer": a, "peers": [a, b]}
    with r.Engine(state) as e:
        ra = e.register("a", a)
        rb = e.register("b", b, parent=ra, cls="Node")
        assert rb.path == "a/b" and rb.class_name == "Node" and rb.parent.obj is a
        assert e.find("a/b") is b
        e.save()
    a2, b2 = Node(), Node()
    b2.values = dict.fromkeys(b.values)
    with r.Engine(state) as e:
        e.register("a", a2)
        e.register("a/b", b2)
        e.restore()
    assert b2.decoded == {"peer": a2, "peers": [a2, b2]}


def test_decode_defaults_types_and_missing_keys(state):
    seen = {}

    class Reader:
        def encode_restorable_state(self, c):
            c.encode("n", 3)
            c.encode("s", "x")
            with c.record("rec"):
                c.encode("k", 1)

        def decode_restorable_state(self, c):
            seen["missing"] = c.decode("nope", default=7)
            seen["float"] = c.decode("n", default=0.0)
            seen["contains"] = ("n" in c, "nope" in c)
            seen["type"] = c.value_type("s")
            with c.record("rec") as rc:
                seen["k"] = rc.decode("k")
            try:
                c.decode("s", default=0)
            except r.TypeMismatchError as exc:
                seen["mismatch"] = (exc.status, str(exc))
            try:
                c.decode("nope")
            except r.NotFoundError as exc:
                seen["notfound"] = str(exc)
            try:
                c.decode("rec")
            except r.InvalidError as exc:
                seen["nokeys"] = str(exc)
            seen["schema"] = c.decode("rec", default={"k": 0, "other": "d"})
            seen["coder"] = c

    with r.Engine(state) as e:
        e.register("r", Reader())
        e.save()
        e.restore()
    assert seen["missing"] == 7 and seen["float"] == 3.0 and type(seen["float"]) is float
    assert seen["contains"] == (True, False)
    assert seen["type"] == r.ValueType.STRING
    assert seen["k"] == 1
    assert seen["mismatch"][0] == r.Status.RST_ERR_TYPE and "key 's' holds a string, not an int" in seen["mismatch"][1]
    assert "nope" in seen["notfound"]
    assert "coder.record('rec')" in seen["nokeys"]
    assert seen["schema"] == {"k": 1, "other": "d"}
    with pytest.raises(r.StateError, match="after its callback"):
        seen["coder"].decode("n")


def test_values_that_cannot_be_stored_fail_the_save_naming_the_key(state):
    cases = [({"k": object()}, r.TypeMismatchError, "key 'k': cannot store an object"),
             ({"k": 2**64}, r.TypeMismatchError, "does not fit in 64 bits"),
             ({"k": "a\0b"}, r.InvalidError, "NUL"),
             ({"k": {1: 2}}, r.TypeMismatchError, "keys are str")]
    for values, cls, text in cases:
        with r.Engine(state) as e:
            e.register("box", Box(**values))
            with pytest.raises(r.RestorationError) as info:
                e.save()
            assert isinstance(info.value.__cause__, cls), info.value
            assert text in str(info.value.__cause__)
            assert text in str(info.value)          # the library's sentence carries it
            assert not state.exists()


def test_errors_carry_the_status_and_the_library_sentence(state, tmp_path):
    with r.Engine(state) as e:
        with pytest.raises(r.NotFoundError) as info:
            e.restore()
        assert info.value.status == r.Status.RST_ERR_NOT_FOUND
        assert info.value.status.name == "RST_ERR_NOT_FOUND"
        assert str(state) in str(info.value) or "archive" in str(info.value)
        assert e.last_restore_reason == r.RestoreReason.FIRST_LAUNCH
        e.register("a", Box())
        with pytest.raises(r.DuplicateError) as info:
            e.register("a", Box())
        assert info.value.status == r.Status.RST_ERR_DUPLICATE and "a" in str(info.value)
        with pytest.raises(r.NotFoundError, match="no object at path 'nowhere'"):
            e.register("x", Box(), parent="nowhere")
        with pytest.raises(r.TypeMismatchError, match="no encode_restorable_state"):
            e.register("y", object())
    with pytest.raises(r.InvalidError):
        r.Engine(tmp_path)          # a directory
    with pytest.raises(r.InvalidError):
        r.Engine(state, generations=17)
    (tmp_path / "bad.rst").write_bytes(b"not an archive at all" * 10)
    with pytest.raises(r.CorruptError):
        r.read_archive_info(tmp_path / "bad.rst")
    e = r.Engine(state)
    e.close()
    with pytest.raises(r.StateError, match="closed"):
        e.save()


def test_reasons_relaunch_and_recover_after_sigkill(state):
    code = """
        import os, signal, sys, restoration as r
        class B:
            def encode_restorable_state(self, c): c.encode("n", 5)
            def decode_restorable_state(self, c): pass
        e = r.Engine(sys.argv[1])
        e.register("b", B())
        e.save()
        if sys.argv[2] == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        e.close()
    """
    assert run_python(code, str(state), "close").returncode == 0
    with r.Engine(state) as e:
        e.register("b", Box(n=0))
        assert e.restore() == r.RestoreReason.RELAUNCH
    assert run_python(code, str(state), "kill").returncode == -signal.SIGKILL
    with r.Engine(state) as e:
        box = Box(n=0)
        e.register("b", box)
        assert e.restore() == r.RestoreReason.RECOVER
        assert box.decoded == {"n": 5}
        info = r.read_archive_info(state)
        assert info.object_count == 1 and info.format_version >= 1


def test_classes_fallback_skips_and_report(state):
    with r.Engine(state) as e:
        e.register("doc1", Box(title="one"), cls="Doc")
        e.register("doc2", Box(title="two"), cls="Doc")
        e.register("odd", Box(title="odd"), cls="Unknown")
        e.register("lost", Box(title="lost"), cls="Nobody")
        e.save()
    made = []

    def make_doc(identifier, parent, coder):
        assert parent is None
        b = Box(title=None)
        made.append((identifier, coder.decode("title")))
        return b if identifier != "doc2" else None

    def fallback(identifier, parent, coder):
        if identifier == "odd":
            b = Box(title=None)
            b.restoration_class = "Unknown"
            return b
        return None

    with r.Engine(state) as e:
        e.register_class("Doc", make_doc)
        e.set_fallback_factory(fallback)
        e.restore()
        assert made == [("doc1", "one"), ("doc2", "two")]
        assert e.find("doc1").decoded == {"title": "one"}
        assert e.find("odd").decoded == {"title": "odd"}
        assert e.ref("odd").class_name == "Unknown"
        report = e.last_restore_report()
        assert (report.archived, report.restored, report.skipped) == (4, 2, 2)
        skips = {s.path: s.reason for s in e.last_restore_skips()}
        assert skips == {"doc2": r.SkipReason.DECLINED, "lost": r.SkipReason.DECLINED}


def test_migration_renames_a_key(state):
    with r.Engine(state) as e:
        e.set_class_version("Doc", 1)
        e.register("d", Box(old=3), cls="Doc")
        e.save()
    box = Box(new=None)
    with r.Engine(state) as e:
        e.set_class_version("Doc", 2)
        versions = []

        def migrate(coder, from_version):
            versions.append((from_version, coder.class_version))
            coder.rename("old", "new")

        e.register_migration("Doc", 1, migrate)
        e.register("d", box, cls="Doc")
        e.restore()
    assert versions == [(1, 1)]
    assert box.decoded == {"new": 3}


def test_sensitivity_secret_local_encrypted(state):
    key = bytes(range(32))

    class Login:
        def encode_restorable_state(self, c):
            c.encode("user", "ann")
            c.encode("password", "hunter2-secret", sensitivity=r.Sensitivity.SECRET)
            c.encode("token", "tok-sealed-123", sensitivity=r.Sensitivity.ENCRYPTED)
            c.encode("host", "local-only-host")

        def decode_restorable_state(self, c):
            self.got = {k: c.decode(k, None) for k in ("user", "password", "token", "host")}

    with r.Engine(state, encryption_key=lambda: key) as e:
        e.set_key_sensitivity("host", r.Sensitivity.LOCAL)
        e.register("login", Login())
        e.save()
        exported = e.export(portable=True)
    raw = state.read_bytes()
    assert b"hunter2-secret" not in raw and b"tok-sealed-123" not in raw and b"local-only-host" in raw
    assert b"local-only-host" not in exported and b"ann" in exported
    login = Login()
    with r.Engine(state, encryption_key=lambda: key) as e:
        e.register("login", login)
        e.restore()
    assert login.got == {"user": "ann", "password": None, "token": "tok-sealed-123", "host": "local-only-host"}


def test_budget_trim_and_sizes(state):
    with r.Engine(state, size_budget=600, budget_policy=r.Budget.TRIM, log=lambda lv, m: None) as e:
        e.register("top", Box(v="t"))
        e.register("top/keep", Box(v="k"))
        big = e.register("top/big", Box(v="x" * 2000))
        big.set_priority(-1)
        e.save()
        sizes = {s.path: s for s in e.last_save_sizes()}
        assert sizes["top/big"].trimmed and not sizes["top/keep"].trimmed
    with r.Engine(state, size_budget=600, budget_policy=r.Budget.FAIL) as e:
        e.register("big", Box(v="x" * 2000))
        with pytest.raises(r.LimitError):
            e.save()


def test_generations_and_a_store_written_in_python(state):
    class DictStore(r.Store):
        def __init__(self):
            self.slots = {}
            self.ops = []

        def describe(self):
            return "a dict"

        def read(self, slot, index):
            self.ops.append(("read", slot))
            return self.slots.get((slot, index))

        def write(self, slot, index, data):
            self.ops.append(("write", slot))
            self.slots[(slot, index)] = data

        def move(self, fs, fi, ts, ti):
            if (fs, fi) not in self.slots:
                raise r.NotFoundError("empty")
            self.slots[(ts, ti)] = self.slots.pop((fs, fi))

        def remove(self, slot, index):
            self.slots.pop((slot, index), None)

        def list(self, slot):
            return [i for (s, i) in self.slots if s == slot]

        def lock(self):
            pass

        def unlock(self):
            pass

    store = DictStore()
    with r.Engine(store=store, generations=2) as e:
        box = Box(n=1)
        e.register("b", box)
        e.save()
        box.values["n"] = 2
        e.save()
        assert (r.Slot.ARCHIVE, 0) in store.slots and (r.Slot.GENERATION, 1) in store.slots
        box.values["n"] = None
        e.restore_generation(1)
        assert e.last_restore_reason == r.RestoreReason.FALLBACK
        assert box.decoded == {"n": 1}


def test_own_loop_event_fd_and_dispatch(state):
    saves = []
    with r.Engine(state, autosave_delay_ms=30) as e:
        e.set_save_listener(lambda st, trig: saves.append((st, trig)))
        box = e.register("b", Box(n=1))
        box.mark_dirty()
        assert e.is_dirty and 0 <= e.next_timeout_ms <= 30
        deadline = time.monotonic() + 10
        while e.is_dirty and time.monotonic() < deadline:
            ready, _, _ = select.select([e.event_fd], [], [], max(e.next_timeout_ms, 0) / 1000 + 0.01)
            if ready:
                e.dispatch()
        assert not e.is_dirty
        assert saves == [(r.Status.RST_OK, r.SaveTrigger.AUTO)]
    assert state.exists()


def test_signal_save_then_the_signal_ends_the_program(state):
    code = """
        import select, sys, restoration as r
        class B:
            def encode_restorable_state(self, c): c.encode("n", 99)
            def decode_restorable_state(self, c): pass
        e = r.Engine(sys.argv[1], autosave_delay_ms=60000)
        e.register("b", B())
        e.mark_dirty()
        fd = e.event_fd
        e.save_on_signals()
        print("ready", flush=True)
        while True:
            if select.select([fd], [], [], 5)[0]:
                e.dispatch()
    """
    import subprocess, sys, textwrap
    p = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), str(state)], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=30) == -signal.SIGTERM
    box = Box(n=0)
    with r.Engine(state) as e:
        e.register("b", box)
        e.restore()
    assert box.decoded == {"n": 99}


def test_extended_restoration_and_discard(state):
    tokens = []

    class Slow(Box):
        def application_finished_restoring_state(self):
            tokens.append(engine.extend_restoration(5000))

    with r.Engine(state) as engine:
        e = engine
        e.register("b", Slow(n=1))
        e.save()
        e.restore()
        token, = tokens
        token.complete()
        with pytest.raises(r.StateError):
            token.complete()
        e.discard()
        assert not state.exists()


def test_an_object_registered_twice_is_still_a_reference_after_one_goes(state):
    target = Box()
    holder = Box()
    with r.Engine(state) as e:
        e.register("first", target)
        e.register("second", target)
        e.register("holder", holder)
        e.unregister("second")
        holder.values = {"ref": target}
        e.save()
    with pytest.raises(r.TypeMismatchError, match="cannot store an object"):
        with r.Engine(state) as e:
            e.register("holder", Box(ref=object()))
            try:
                e.save()
            except r.RestorationError as exc:
                raise exc.__cause__
