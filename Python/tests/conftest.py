import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "state.rst"


def run_python(code: str, *args: str, timeout: float = 60, env: dict | None = None) -> subprocess.CompletedProcess:
    """Runs `code` in a fresh interpreter (the one running the tests)."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})})


class Box:
    """A restorable object holding a dict of values."""

    def __init__(self, **values):
        self.values = dict(values)
        self.decoded = None
        self.finished = 0
        self.released = 0

    def encode_restorable_state(self, coder):
        for k, v in self.values.items():
            coder.encode(k, v)

    def decode_restorable_state(self, coder):
        self.decoded = {k: coder.decode(k, None) for k in self.values}

    def application_finished_restoring_state(self):
        self.finished += 1

    def restoration_released(self):
        self.released += 1


@pytest.fixture(scope="session")
def display(tmp_path_factory):
    if shutil.which("Xvfb") is None:
        pytest.fail("Xvfb is not installed (Debian: xvfb)")
    work = tmp_path_factory.mktemp("xvfb")
    r, w = os.pipe()
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(w), "-screen", "0", "1024x768x24", "-nolisten", "tcp"],
                            pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=open(work / "xvfb.log", "w"))
    os.close(w)
    number = b""
    deadline = time.monotonic() + 20
    while not number.endswith(b"\n") and time.monotonic() < deadline:
        chunk = os.read(r, 16)
        if not chunk:
            break
        number += chunk
    os.close(r)
    if not number.strip():
        xvfb.kill()
        pytest.fail(f"Xvfb did not start: {(work / 'xvfb.log').read_text()}")
    yield f":{number.decode().strip()}"
    xvfb.kill()
    xvfb.wait()
