"""One archive, two languages: Python saves and C restores, C saves and
Python restores, value by value, every value type (the C half is
tests/c/crosslang.c, compiled here against the library the package uses)."""
import os
import pathlib
import shutil
import subprocess

import pytest

import restoration as r
from conftest import REPO

HERE = pathlib.Path(__file__).resolve().parent
OSPATH = pathlib.Path(os.fsdecode(b"/tmp/\xff\xfe-r\xc3\xa9sum\xc3\xa9"))


def _library_dirs() -> list[str]:
    """Where the package's extension finds librestoration (its rpath), else
    the in-tree build, else the system's."""
    import restoration._native as native
    out = subprocess.run(["readelf", "-d", native.__file__], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if "RUNPATH" in line or "RPATH" in line:
            return line.split("[", 1)[1].rstrip("]").split(":")
    return [str(REPO / ".build" / "debug")]


@pytest.fixture(scope="module")
def crosslang(tmp_path_factory) -> str:
    if shutil.which("cc") is None:
        pytest.fail("no C compiler (cc) to build the C half of the test")
    exe = tmp_path_factory.mktemp("c") / "crosslang"
    libdirs = _library_dirs()
    include = os.environ.get("RESTORATION_INCLUDE", str(REPO / "Include"))
    cmd = ["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", f"-I{include}", str(HERE / "c" / "crosslang.c"),
           *[f"-L{d}" for d in libdirs], "-lrestoration", *[f"-Wl,-rpath,{d}" for d in libdirs], "-o", str(exe)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    assert p.returncode == 0, f"{' '.join(cmd)}\n{p.stderr}"
    return str(exe)


class Peer:
    def encode_restorable_state(self, coder):
        pass

    def decode_restorable_state(self, coder):
        pass


class Values:
    def __init__(self, peer):
        self.peer = peer
        self.got = {}

    def encode_restorable_state(self, c):
        c.encode("flag", True)
        c.encode("off", False)
        c.encode("count", -42)
        c.encode("big", 2**63 - 1)
        c.encode("ratio", 0.1)
        c.encode("neg", -1e300)
        c.encode("name", "Grüße, 世界")
        c.encode("empty", "")
        c.encode("blob", b"\x00\x01\xff\x7f")
        c.encode("noblob", b"")
        c.encode("file", OSPATH)
        c.encode("ints", [1, -2, 2**62, -2**63])
        c.encode("noints", [])
        c.encode("names", ["a", "", "Grüße"])
        c.encode("peer", self.peer)
        c.encode("peers", [self.peer, self.peer])
        c.encode("record", {"x": 1, "y": 2.5, "inner": {"z": "deep"}})
        c.encode("floats", [0.5, -2.0])

    def decode_restorable_state(self, c):
        for key in ("flag", "off", "count", "big", "ratio", "neg", "name", "empty", "blob", "noblob",
                    "file", "ints", "noints", "names", "peer", "peers"):
            self.got[key] = c.decode(key)
        self.got["types"] = {k: c.value_type(k) for k in ("file", "ints", "names", "peers", "record")}
        # C lists no keys in its records: the default names them.
        self.got["record"] = c.decode("record", default={"x": 0, "y": 0.0, "inner": {"z": ""}})
        with c.record("record") as rec:
            self.got["record.x"] = rec.decode("x")


EXPECTED = {
    "flag": True, "off": False, "count": -42, "big": 2**63 - 1, "ratio": 0.1, "neg": -1e300,
    "name": "Grüße, 世界", "empty": "", "blob": b"\x00\x01\xff\x7f", "noblob": b"", "file": OSPATH,
    "ints": [1, -2, 2**62, -2**63], "noints": [], "names": ["a", "", "Grüße"],
    "record": {"x": 1, "y": 2.5, "inner": {"z": "deep"}}, "record.x": 1,
}


def test_python_saves_c_restores(crosslang, state):
    with r.Engine(state) as e:
        peer = Peer()
        e.register("peer", peer)
        e.register("values", Values(peer), cls="Values")
        e.save()
    p = subprocess.run([crosslang, "check", str(state)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "failed" in p.stdout and ", 0 failed" in p.stdout


def test_c_saves_python_restores(crosslang, state):
    p = subprocess.run([crosslang, "save", str(state)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    peer = Peer()
    values = Values(peer)
    with r.Engine(state) as e:
        e.register("peer", peer)
        e.register("values", values, cls="Values")
        e.restore()
        assert e.last_restore_report().restored == 2
    got = values.got
    for key, want in EXPECTED.items():
        assert got[key] == want, f"{key}: {got[key]!r} != {want!r}"
        assert type(got[key]) is type(want), key
    assert got["peer"] is peer and got["peers"] == [peer, peer]
    assert got["types"] == {"file": r.ValueType.OS_STRING, "ints": r.ValueType.INT_ARRAY,
                            "names": r.ValueType.STRING_ARRAY, "peers": r.ValueType.OBJECT_ARRAY,
                            "record": r.ValueType.RECORD}
