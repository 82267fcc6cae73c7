#!/usr/bin/env bash
# The GTK 4 example (Examples/gtk-notes) under Xvfb: change its state as a
# user would, kill -9 it once the autosave wrote it, relaunch (with the list
# model reversed: the selection must follow the item, not the index), and
# check the restored state and the reason (RECOVER) through its test hook;
# then SIGTERM with an unsaved change: it ends by SIGTERM, the change saved
# by the signal save, and the next launch reads RELAUNCH. A
# screenshot of the restored window is written to $GTK_SCREENSHOT
# (default .build/gtk-notes-restored.png).
#   Tests/gtk/run.sh [SUMMARY_FILE]
set -u
cd "$(dirname "$0")/../.."
SUMMARY=${1:-/dev/null}
pass=0; fail=0
ok()  { pass=$((pass+1)); echo "gtk: ok: $*"; }
bad() { fail=$((fail+1)); echo "gtk: FAILED: $*"; }
finish() { echo "gtk: $pass passed, $fail failed" | tee -a "$SUMMARY"; [ -n "${XPID:-}" ] && kill "$XPID" 2>/dev/null; rm -rf "${WORK:-/nonexistent}"; [ $fail -eq 0 ]; exit $?; }

BIN=$(swift build --show-bin-path)
swift build --product restoration >/dev/null || { bad "build librestoration"; finish; }
ln -sf librestoration.so "$BIN/librestoration.so.1"
WORK=$(mktemp -d)
cc -std=c11 -Wall -Wextra -Werror -IInclude Examples/gtk-notes/notes.c $(pkg-config --cflags --libs gtk4) \
   -L"$BIN" -lrestoration -Wl,-rpath,"$BIN" -o "$WORK/notes" || { bad "compile Examples/gtk-notes/notes.c"; finish; }
ok "compiled"

# Xvfb on a free display (it writes the number it took).
exec 9<> "$WORK/display"
Xvfb -displayfd 9 -screen 0 1024x768x24 -nolisten tcp > "$WORK/xvfb.log" 2>&1 &
XPID=$!
for _ in $(seq 1 100); do [ -s "$WORK/display" ] && break; sleep 0.1; done
DISPLAY=":$(head -1 "$WORK/display" | tr -d '[:space:]')"
[ "$DISPLAY" != ":" ] || { bad "Xvfb did not start: $(cat "$WORK/xvfb.log")"; finish; }
export DISPLAY GDK_BACKEND=x11 GSK_RENDERER=cairo NO_AT_BRIDGE=1 GTK_A11Y=none
STATE="$WORK/state"; mkdir -p "$STATE"

# 1. A user changes everything; the autosave writes it; kill -9.
NOTES_SET="page=details;entry=Grüße aus Xvfb;select=Item 042;scroll=600;width=700;height=520" NOTES_READY="$WORK/ready" \
  "$WORK/notes" "$STATE" > "$WORK/run1.log" 2>&1 &
P=$!
for _ in $(seq 1 200); do [ -f "$WORK/ready" ] && break; sleep 0.1; done
if [ -f "$WORK/ready" ]; then ok "autosaved after the changes"; else bad "no autosave within 20 s: $(cat "$WORK/run1.log")"; fi
kill -9 "$P"; wait "$P" 2>/dev/null
grep -q RST_REASON_FIRST_LAUNCH "$WORK/run1.log" && ok "first launch" || bad "first launch reason: $(cat "$WORK/run1.log")"

# 2. Relaunch: RECOVER, and every piece of state back.
SHOT=${GTK_SCREENSHOT:-$PWD/.build/gtk-notes-restored.png}
mkdir -p "$(dirname "$SHOT")"; rm -f "$SHOT"
NOTES_DUMP="$WORK/dump" NOTES_SCREENSHOT="$SHOT" NOTES_REVERSE=1 timeout 60 "$WORK/notes" "$STATE" > "$WORK/run2.log" 2>&1
[ -f "$WORK/dump" ] || { bad "relaunch wrote no state: $(cat "$WORK/run2.log")"; finish; }
expect() { if grep -qxF "$1" "$WORK/dump"; then ok "$1"; else bad "expected '$1' in: $(tr '\n' ' ' < "$WORK/dump")"; fi; }
expect "reason=RST_REASON_RECOVER"
expect "width=700"
expect "height=520"
expect "page=details"
expect "entry=Grüße aus Xvfb"
expect "select=Item 042"
expect "selected_index=107"        # reversed model: the item, not index 42
expect "scroll=600"
if [ -s "$SHOT" ] && head -c 8 "$SHOT" | od -An -tx1 | grep -q "89 50 4e 47"; then ok "screenshot $SHOT"; else bad "no screenshot"; fi

# 3. SIGTERM with the change not saved yet (autosave in 60 s): the signal
#    save writes it, the process ends by SIGTERM, the next launch RELAUNCH.
rm -f "$WORK/ready"
NOTES_AUTOSAVE_MS=60000 NOTES_SET="entry=after SIGTERM" NOTES_READY_DIRTY="$WORK/ready" "$WORK/notes" "$STATE" > "$WORK/run3.log" 2>&1 &
P=$!
for _ in $(seq 1 200); do [ -f "$WORK/ready" ] && break; sleep 0.1; done
grep -qx dirty "$WORK/ready" 2>/dev/null && ok "dirty before SIGTERM" || bad "not dirty before SIGTERM"
kill -TERM "$P"; wait "$P"; rc=$?
[ $rc -eq 143 ] && ok "ended by SIGTERM" || bad "exit status $rc after SIGTERM (expected 143): $(cat "$WORK/run3.log")"
rm -f "$WORK/dump"
NOTES_DUMP="$WORK/dump" timeout 60 "$WORK/notes" "$STATE" > "$WORK/run4.log" 2>&1
expect "reason=RST_REASON_RELAUNCH"
expect "entry=after SIGTERM"
finish
