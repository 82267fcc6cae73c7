"""What a Python user meets first: `python -m restoration`, the types
(`py.typed`, mypy --strict on the example), the version."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import restoration
from conftest import REPO


def run(*args, env=None):
    # From "/", importing the package the tests import (installed or not).
    pkg = str(Path(restoration.__file__).resolve().parents[1])
    return subprocess.run([sys.executable, "-m", "restoration", *args], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONPATH": pkg, **(env or {})}, cwd="/")


def test_version():
    p = run("--version")
    assert p.returncode == 0
    assert p.stdout.strip() == f"restoration {restoration.__version__} (librestoration {restoration.library_version()})"
    assert restoration.library_version().count(".") == 2


def test_runs_restorectl_or_says_how(tmp_path):
    fake = tmp_path / "restorectl"
    fake.write_text('#!/bin/sh\necho "restorectl called with: $*"\n')
    fake.chmod(0o755)
    p = run("inspect", "x.rst", env={"RESTORECTL": str(fake)})
    assert p.returncode == 0 and p.stdout.strip() == "restorectl called with: inspect x.rst"
    p = run("inspect", env={"PATH": str(tmp_path / "empty"), "RESTORECTL": ""})
    assert p.returncode == 2
    assert "restorectl is not installed" in p.stderr and "make install" in p.stderr


def test_typed_package():
    pkg = Path(restoration.__file__).parent
    assert (pkg / "py.typed").exists()


def test_mypy_strict_accepts_the_example_and_the_package(tmp_path):
    if shutil.which("mypy", path=os.path.dirname(sys.executable)) is None:
        if os.environ.get("RESTORATION_REQUIRE_MYPY") == "1":
            pytest.fail("mypy is not installed in this environment (pip install mypy)")
        pytest.skip("mypy is not installed (make test-python installs it)")
    mypy = shutil.which("mypy", path=os.path.dirname(sys.executable))
    p = subprocess.run([mypy, "--strict", "--cache-dir", str(tmp_path / "cache"),
                        str(REPO / "Examples" / "tk-notes" / "notes.py")],
                       capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    p = subprocess.run([mypy, "--strict", "--cache-dir", str(tmp_path / "cache"), "-p", "restoration"],
                       capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
