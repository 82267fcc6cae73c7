"""An exception in every kind of callback fails its operation with a status
and its text (never lost); callbacks from the autosave thread; a thread
saving while another runs Python (the GIL is released); the interpreter
exiting with engines still alive."""
import threading
import time

import pytest

import restoration as r
from conftest import Box, run_python


class Boom(Exception):
    pass


def test_encode_exception_fails_the_save_with_its_text(state):
    class Bad(Box):
        def encode_restorable_state(self, coder):
            coder.encode("ok", 1)
            raise Boom("the disk of my mind is full")

    with r.Engine(state) as e:
        e.register("bad", Bad())
        with pytest.raises(r.RestorationError) as info:
            e.save()
        assert isinstance(info.value.__cause__, Boom)
        assert "Boom: the disk of my mind is full" in str(info.value)
        assert info.value.status == r.Status.RST_ERR_INVALID
        assert not state.exists()

    class Typed(Box):
        def encode_restorable_state(self, coder):
            raise r.LimitError("too many notes")

    with r.Engine(state) as e:
        e.register("typed", Typed())
        with pytest.raises(r.LimitError) as info:
            e.save()
        assert "too many notes" in str(info.value)


def test_decode_and_factory_exceptions_become_skips_with_their_text(state):
    with r.Engine(state) as e:
        e.register("a", Box(n=1))
        e.register("b", Box(n=2), cls="B")
        e.save()

    class BadDecode(Box):
        def decode_restorable_state(self, coder):
            raise Boom("cannot read n")

    def factory(identifier, parent, coder):
        raise Boom(f"no B for {identifier}")

    logs = []
    with r.Engine(state, log=lambda lv, m: logs.append((lv, m))) as e:
        e.register("a", BadDecode(n=None))
        e.register_class("B", factory)
        e.restore()
        skips = {s.path: s for s in e.last_restore_skips()}
    assert skips["a"].reason == r.SkipReason.DECODE_FAILED and "Boom: cannot read n" in skips["a"].detail
    assert skips["b"].reason == r.SkipReason.DECLINED
    assert any("Boom: no B for b" in m for lv, m in logs), logs
    assert any("Boom: cannot read n" in m for lv, m in logs), logs


def test_migration_exception_skips_the_record(state):
    with r.Engine(state) as e:
        e.set_class_version("M", 1)
        e.register("m", Box(n=1), cls="M")
        e.save()

    def migrate(coder, v):
        raise Boom("migration broke")

    with r.Engine(state, log=lambda lv, m: None) as e:
        e.set_class_version("M", 2)
        e.register_migration("M", 1, migrate)
        e.register("m", Box(n=None), cls="M")
        e.restore()
        skip, = e.last_restore_skips()
    assert skip.reason == r.SkipReason.MIGRATION_FAILED and "Boom: migration broke" in skip.detail


@pytest.mark.parametrize("hook", ["finished", "did_finish_restoring", "should_restore"])
def test_restore_callbacks_raise_out_of_restore(state, hook):
    with r.Engine(state) as e:
        e.register("b", Box(n=1))
        e.save()

    class Hooked(Box):
        def application_finished_restoring_state(self):
            if hook == "finished":
                raise Boom("finished failed")

    def did_finish():
        if hook == "did_finish_restoring":
            raise Boom("did_finish failed")

    def should_restore(info):
        if hook == "should_restore":
            raise Boom("should_restore failed")
        return True

    with r.Engine(state, did_finish_restoring=did_finish, should_restore=should_restore) as e:
        e.register("b", Hooked(n=None))
        if hook == "should_restore":
            with pytest.raises(r.RejectedError) as info:
                e.restore()
            assert isinstance(info.value.__cause__, Boom)
        else:
            with pytest.raises(Boom, match=hook.split("_")[0]):
                e.restore()


def test_should_save_log_listener_key_and_release_exceptions(state):
    def should_save():
        raise Boom("no saving today")

    with r.Engine(state, should_save=should_save) as e:
        e.register("b", Box(n=1))
        with pytest.raises(r.RejectedError) as info:
            e.save()
        assert isinstance(info.value.__cause__, Boom) and "no saving today" in str(info.value.__cause__)

    with r.Engine(state) as e:
        e.register("b", Box(n=1))

        def listener(status, trigger):
            raise Boom("listener failed")

        e.set_save_listener(listener)
        with pytest.raises(Boom, match="listener failed"):
            e.save()
        assert state.exists()      # the save itself succeeded

    def log(level, message):
        raise Boom("log failed")

    with r.Engine(state, log=log) as e:
        e.register("a", Box(n=1), cls="Gone")
        with pytest.raises(Boom, match="log failed"):
            e.restore()            # the skipped record is logged

    def key():
        raise Boom("no key")

    class Sealed(Box):
        def encode_restorable_state(self, c):
            c.encode("t", "x", sensitivity=r.Sensitivity.ENCRYPTED)

    with r.Engine(state, encryption_key=key, log=lambda lv, m: None) as e:
        e.register("s", Sealed())
        with pytest.raises(Boom, match="no key"):
            e.save()

    class Release(Box):
        def restoration_released(self):
            raise Boom("release failed")

    e = r.Engine(state)
    e.register("x", Release())
    with pytest.raises(Boom, match="release failed"):
        e.unregister("x")
    e.register("y", Release())
    with pytest.raises(Boom, match="release failed"):
        e.close()
    assert e.closed


def test_store_exception_fails_the_save_with_its_text(state):
    class Broken(r.Store):
        def describe(self):
            return "the broken store"

        def read(self, slot, index):
            return None

        def write(self, slot, index, data):
            raise OSError(28, "No space left on device")

        def move(self, *a):
            raise r.NotFoundError("empty")

        def remove(self, slot, index):
            pass

        def list(self, slot):
            return []

        def lock(self):
            pass

        def unlock(self):
            pass

    with r.Engine(store=Broken()) as e:
        e.register("b", Box(n=1))
        with pytest.raises(r.StorageError) as info:
            e.save()
        assert "No space left on device" in str(info.value)
        assert "the broken store" in str(info.value)
        assert isinstance(info.value.__cause__, OSError)
        with pytest.raises(r.NotFoundError):
            e.restore()


def test_callbacks_from_the_autosave_thread(state):
    threads = []
    statuses = []
    done = threading.Event()

    class Tracked(Box):
        def encode_restorable_state(self, coder):
            threads.append(threading.get_ident())
            super().encode_restorable_state(coder)

    def listener(status, trigger):
        statuses.append((status, trigger, threading.get_ident()))
        done.set()

    with r.Engine(state, autosave_delay_ms=20) as e:
        e.set_save_listener(listener)
        box = e.register("b", Tracked(n=7))
        e.start_autosave_thread()
        box.mark_dirty()
        assert done.wait(10), "no autosave within 10 s"
        assert threads and threads[0] != threading.get_ident()
        assert statuses[0][:2] == (r.Status.RST_OK, r.SaveTrigger.AUTO) and statuses[0][2] == threads[0]

        # An exception on the autosave thread fails that autosave: the
        # listener sees the status, the log the text, background_errors the
        # exception itself.
        done.clear()
        box.obj.encode_restorable_state = lambda c: (_ for _ in ()).throw(Boom("autosave broke"))
        box.mark_dirty()
        assert done.wait(10)
        assert statuses[-1][0] == r.Status.RST_ERR_INVALID
        assert any(isinstance(x, Boom) for x in e.background_errors)
        del box.obj.encode_restorable_state     # fixed: the next save succeeds
        e.flush()
    got = Box(n=None)
    with r.Engine(state) as e:
        e.register("b", got)
        e.restore()
    assert got.decoded == {"n": 7}


def test_a_save_on_another_thread_lets_python_run(state):
    """The GIL is released around the save: while a thread is inside
    rst_save (its store waits for an event), the main thread runs Python
    and sets that event."""
    gate = threading.Event()
    entered = threading.Event()

    class Gated(r.Store):
        def __init__(self):
            self.slots = {}

        def read(self, slot, index):
            return self.slots.get((slot, index))

        def write(self, slot, index, data):
            if slot == r.Slot.ARCHIVE:
                entered.set()
                assert gate.wait(10)
            self.slots[(slot, index)] = data

        def move(self, fs, fi, ts, ti):
            self.slots[(ts, ti)] = self.slots.pop((fs, fi))

        def remove(self, slot, index):
            self.slots.pop((slot, index), None)

        def list(self, slot):
            return [i for (s, i) in self.slots if s == slot]

        def lock(self):
            pass

        def unlock(self):
            pass

    errors = []
    with r.Engine(store=Gated()) as e:
        e.register("b", Box(n=1))
        t = threading.Thread(target=lambda: errors.append(e.save()))
        t.start()
        assert entered.wait(10)
        count = sum(range(100000))     # Python runs meanwhile
        gate.set()
        t.join(10)
        assert not t.is_alive() and errors == [None] and count


def test_interpreter_exit_with_engines_alive(state, tmp_path):
    code = """
        import sys, threading, restoration as r
        class B:
            def encode_restorable_state(self, c): c.encode("n", 1)
            def decode_restorable_state(self, c): pass
            def restoration_released(self): print("released", flush=True)
        e = r.Engine(sys.argv[1], autosave_delay_ms=1)
        e.register("b", B())
        e.start_autosave_thread()
        for _ in range(2000):
            e.mark_dirty()
        m = r.Engine(store=r.MemoryStore(), log=lambda lv, msg: None)
        m.register("c", B())
        leaked = [e, m]           # never closed: the interpreter exits with them
    """
    for _ in range(5):
        p = run_python(code, str(state))
        assert p.returncode == 0, p.stderr
        assert p.stdout.count("released") == 2, p.stdout
        assert "Traceback" not in p.stderr and "Fatal" not in p.stderr, p.stderr
    with r.Engine(state) as e:
        e.register("b", Box(n=0))
        assert e.restore() == r.RestoreReason.RELAUNCH


def test_close_from_a_callback_is_refused(state):
    class Closer(Box):
        def encode_restorable_state(self, coder):
            engine.close()

    engine = r.Engine(state)
    engine.register("c", Closer())
    with pytest.raises(r.RestorationError) as info:
        engine.save()
    assert isinstance(info.value.__cause__, r.StateError)
    assert "not from inside one of the engine's own callbacks" in str(info.value)
    assert not engine.closed
    engine.unregister("c")
    engine.close()
    assert engine.closed
