#!/usr/bin/env bash
# The Python package's tests as a user installs it (make test-python):
#   1. the library and restorectl in-tree (swift build --product ...);
#   2. a fresh virtual environment with /usr/bin/python3 (Debian's, which has
#      tkinter) and `pip install ./Python`, as docs/PYTHON.md tells users
#      (with pip's isolated build from PyPI; offline, Debian's python3-cffi
#      and setuptools through --no-build-isolation), plus pytest and mypy;
#   3. pytest on Python/tests (Xvfb for the Tkinter example, `restorectl
#      test` on it), under a timeout.
# Appends "python: N passed, M failed" to SUMMARY_FILE.
#   Python/tests/run.sh [SUMMARY_FILE]
set -u
cd "$(dirname "$0")/../.."
SUMMARY=${1:-/dev/null}
PYTHON=${PYTHON:-/usr/bin/python3}
VENV=${PY_VENV:-$PWD/.build/python-venv}
CONFIG=${CONFIG:-debug}
LOG=$PWD/.build/python-test.log
mkdir -p .build
: > "$LOG"
report() { echo "python: $1 passed, $2 failed${3:+ ($3)}" | tee -a "$SUMMARY"; }

for product in restoration restorectl; do
    if ! swift build -c "$CONFIG" --product $product >> "$LOG" 2>&1; then
        tail -30 "$LOG"; report 0 1 "swift build --product $product"; exit 1
    fi
done
BIN=$(swift build -c "$CONFIG" --show-bin-path)
export RESTORECTL="$BIN/restorectl"
SOMAJOR=$(sed -n 's/^#define RST_VERSION_MAJOR \([0-9]*\).*/\1/p' Include/restoration.h)
ln -sf librestoration.so "$BIN/librestoration.so.$SOMAJOR"

"$PYTHON" -c 'import tkinter' 2>/dev/null || { report 0 1 "$PYTHON has no tkinter (Debian: python3-tk)"; exit 1; }
rm -rf "$VENV"
"$PYTHON" -m venv --system-site-packages "$VENV" || { report 0 1 "$PYTHON -m venv (Debian: python3-venv)"; exit 1; }
export RESTORATION_BUILD_DIR="$BIN"
if ! "$VENV/bin/pip" install -q ./Python >> "$LOG" 2>&1; then
    echo "python: pip's isolated build failed (offline?); building with the system's cffi and setuptools"
    "$VENV/bin/pip" install -q --no-build-isolation ./Python >> "$LOG" 2>&1 \
        || { tail -30 "$LOG"; report 0 1 "pip install ./Python"; exit 1; }
fi
"$VENV/bin/pip" install -q pytest mypy >> "$LOG" 2>&1 || echo "python: pip could not install pytest/mypy; using what the system has"
rm -rf Python/build Python/restoration.egg-info

# Run from the tests folder so that `import restoration` is the installed package.
JUNIT=$PWD/.build/python-junit.xml
rm -f "$JUNIT"
(cd Python/tests && RESTORATION_REQUIRE_MYPY=1 RESTORATION_REQUIRE_RESTORECTL=1 timeout 900 "$VENV/bin/python" -m pytest -q -p no:cacheprovider \
    --junitxml="$JUNIT" --rootdir=. -c /dev/null . 2>&1 | tee -a "$LOG")
read -r tests failures errors skipped < <("$VENV/bin/python" - "$JUNIT" <<'PY'
import sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except (OSError, ET.ParseError):
    print(0, 1, 0, 0); sys.exit()
s = root if root.tag == "testsuite" else root.find("testsuite")
print(s.get("tests"), s.get("failures"), s.get("errors"), s.get("skipped"))
PY
)
passed=$((tests - failures - errors - skipped))
failed=$((failures + errors + skipped))    # a skip here is a missing tool: counted as a failure
report "$passed" "$failed"
[ "$failed" -eq 0 ]
