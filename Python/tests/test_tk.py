"""restoration.tk and Examples/tk-notes under Xvfb, as a user sees them:
a session changes every widget, the autosave writes it, kill -9; the
relaunch reads RECOVER and every value back from the widgets; SIGTERM saves
and ends the program; closing the window saves. Screenshots (xwd, then
ImageMagick's convert) go to $TK_ARTEFACTS (default .build/tk-test/)."""
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import restoration
from conftest import REPO

NOTES = REPO / "Examples" / "tk-notes" / "notes.py"
ART = Path(os.environ.get("TK_ARTEFACTS", REPO / ".build" / "tk-test"))
CHANGES = ("entry=Grüße aus Xvfb;note=Buy milk, then call Ann.;select=120;top=110;divider=300;"
           "width=700;height=520;wrap=1;size=20;theme=dark;columns=3;font=Mono;section=s17;"
           "password=hunter2-secret;page=settings")


class App:
    def __init__(self, display, state: Path, work: Path):
        self.display, self.state, self.work = display, state, work

    def env(self, **extra):
        # The example imports the package the tests import.
        pkg = str(Path(restoration.__file__).resolve().parents[1])
        env = {k: v for k, v in os.environ.items() if not k.startswith("NOTES_")}
        env.update(DISPLAY=self.display, PYTHONPATH=os.pathsep.join(filter(None, [pkg, env.get("PYTHONPATH")])))
        env.update({k: str(v) for k, v in extra.items()})
        return env

    def start(self, **extra):
        return subprocess.Popen([sys.executable, str(NOTES), str(self.state)], env=self.env(**extra),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def wait_file(self, path: Path, proc, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if path.exists() and path.stat().st_size:
                return
            if proc.poll() is not None:
                raise AssertionError(f"notes ended ({proc.returncode}) before {path.name}: {proc.stdout.read()}")
            time.sleep(0.05)
        proc.kill()
        raise AssertionError(f"no {path.name} within {timeout} s: {proc.stdout.read()}")

    def dump(self, shot=None, **extra):
        out = self.work / "dump"
        out.unlink(missing_ok=True)
        p = self.start(NOTES_DUMP=out, NOTES_AUTOSAVE_MS=600000, **extra)
        try:
            self.wait_file(out, p)
            if shot:
                time.sleep(0.3)
                screenshot(self.display, shot)
        finally:
            p.kill()
            p.wait()
        return dict(line.split("=", 1) for line in out.read_text(encoding="utf-8").splitlines())


def screenshot(display, name):
    ART.mkdir(parents=True, exist_ok=True)
    xwd = subprocess.run(["xwd", "-root", "-silent", "-display", display], capture_output=True, timeout=30)
    assert xwd.returncode == 0, xwd.stderr
    png = ART / name
    conv = subprocess.run(["convert", "xwd:-", str(png)], input=xwd.stdout, capture_output=True, timeout=60)
    assert conv.returncode == 0 and png.stat().st_size > 0, conv.stderr


EXPECTED = {
    "width": "700", "height": "520", "page": "settings", "entry": "Grüße aus Xvfb",
    "note": "Buy milk, then call Ann.", "note_cursor": "1.4", "select": "120", "top": "110",
    "divider": "300", "wrap": "1", "size": "20", "theme": "dark", "columns": "3", "font": "Mono",
    "section": "s17", "password": "",
}


def no_password_in(state: Path):
    for f in state.rglob("*"):
        if f.is_file():
            assert b"hunter2-secret" not in f.read_bytes(), f"the password is in {f}"


def test_tk_notes_killed_and_relaunched(display, tmp_path):
    app = App(display, tmp_path / "state", tmp_path)
    # 1. A user changes everything; the autosave writes it; kill -9.
    ready = tmp_path / "ready"
    p = app.start(NOTES_SET=CHANGES, NOTES_READY=ready)
    app.wait_file(ready, p)
    time.sleep(0.3)
    screenshot(display, "before.png")
    p.send_signal(signal.SIGKILL)
    p.wait()
    assert "notes: RST_REASON_FIRST_LAUNCH" in p.stdout.read()
    no_password_in(app.state)

    # 2. Relaunch: RECOVER, and every value back, as the widgets show it.
    got = app.dump(shot="restored.png")
    assert got.pop("reason") == "RST_REASON_RECOVER"
    assert got == EXPECTED

    # 3. A change, then SIGTERM at once (autosave a minute away): the signal save keeps it.
    dirty = tmp_path / "dirty"
    p = app.start(NOTES_SET="page=list;entry=after SIGTERM", NOTES_READY_DIRTY=dirty, NOTES_AUTOSAVE_MS=60000)
    app.wait_file(dirty, p)
    assert dirty.read_text() == "dirty\n"
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=30) == -signal.SIGTERM
    got = app.dump()
    assert (got["reason"], got["page"], got["entry"], got["divider"]) == ("RST_REASON_RELAUNCH", "list", "after SIGTERM", "300")

    # 4. A change, then the window closed at once: the save at WM_DELETE_WINDOW keeps it.
    dirty.unlink()
    p = app.start(NOTES_SET="entry=after close;note=closed at once", NOTES_READY_DIRTY=dirty,
                  NOTES_AUTOSAVE_MS=60000, NOTES_CLOSE=1)
    assert p.wait(timeout=30) == 0, p.stdout.read()
    assert dirty.read_text() == "dirty\n"
    got = app.dump()
    assert (got["reason"], got["entry"], got["note"], got["select"]) == ("RST_REASON_RELAUNCH", "after close", "closed at once", "120")
    no_password_in(app.state)


def _restorectl():
    tool = os.environ.get("RESTORECTL") or shutil.which("restorectl")
    if not tool:
        built = REPO / ".build" / "debug" / "restorectl"
        tool = str(built) if built.exists() else None
    if tool is None:
        if os.environ.get("RESTORATION_REQUIRE_RESTORECTL") == "1":
            pytest.fail("no restorectl (RESTORECTL, PATH or .build/debug)")
        pytest.skip("no restorectl (make test-python builds it)")
    return tool


@pytest.mark.parametrize("page", ["list", "settings"])
def test_restorectl_test_passes_every_kill_point(display, tmp_path, page):
    """`restorectl test` kills tk-notes at every save and restore point (the
    state changing all the time: NOTES_LOOP) and checks each relaunch, then
    the round trip: what was restored is saved again unchanged (the list
    page shown, or hidden with its layout still pending)."""
    import json
    tool = _restorectl()
    state = tmp_path / "state"
    state.mkdir()
    app = App(display, state, tmp_path)
    env = app.env(NOTES_LOOP=200, NOTES_SET="entry=Grüße aus Xvfb;note=Buy milk;select=120;top=110;"
                                          f"divider=300;width=700;height=520;wrap=1;page={page}")
    # --settle 0: NOTES_LOOP keeps changing the state, so the round trip
    # saves right after the restore, before the loop moves anything.
    p = subprocess.run([tool, "test", "--roundtrip", "--settle", "0", "--json", "--timeout", "30", "--",
                        sys.executable, str(NOTES), str(state)],
                       env=env, capture_output=True, text=True, timeout=900)
    report = json.loads(p.stdout)
    verdicts = {pt["point"]: pt["verdict"] for pt in report["points"]}
    assert report["ok"] and p.returncode == 0, (verdicts, report.get("roundtrip"), p.stderr[-3000:])
    assert set(verdicts.values()) == {"PASS"} and len(verdicts) == 8, verdicts
    assert report["roundtrip"]["verdict"] == "PASS", report["roundtrip"]
