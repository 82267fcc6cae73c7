#!/usr/bin/env bash
# restoration-qt under Xvfb: make install-qt / uninstall-qt staged (the
# manual page restoration-qt(3) linted, every function in it), an app
# built with pkg-config alone, Tests/qt/widgets.cpp (every widget type, the
# library's failures; again under ASan and UBSan), then Examples/qt-notes
# as a user sees it:
#  1. a session: type a search, click a note far down the list, scroll the
#     list, drag the splitter, type in the editor, switch tab, untick a
#     checkbox, pick a combo entry, type a password, resize the window; once
#     the autosave wrote it, a screenshot and kill -9;
#  2. relaunch with the notes in reverse order: RECOVER, and every widget
#     read back as it was (the selected note and the note at the top of the
#     list follow the note, not the row), the password empty and absent
#     from the archive; a screenshot;
#  3. SIGTERM right after a change (autosave in 60 s): it ends by SIGTERM,
#     the change saved; relaunch RELAUNCH with it;
#  4. the window closed right after a change (autosave in 60 s): the save
#     when it closes keeps it; relaunch with it;
#  5. the window maximized with no window manager (its geometry does not
#     move): once autosaved, kill -9; the relaunch is maximized.
# Screenshots: .build/qt-notes-{before,restored,sigterm,closed}.png.
#   Tests/qt/run.sh [SUMMARY_FILE]
set -u
cd "$(dirname "$0")/../.."
SUMMARY=${1:-/dev/null}
pass=0; fail=0
ok()  { pass=$((pass+1)); echo "qt: ok: $*"; }
bad() { fail=$((fail+1)); echo "qt: FAILED: $*"; }
finish() {
  echo "qt: $pass passed, $fail failed" | tee -a "$SUMMARY"
  [ -n "${NPID:-}" ] && kill -9 "$NPID" 2>/dev/null
  [ -n "${XPID:-}" ] && kill "$XPID" 2>/dev/null
  rm -rf "${WORK:-/nonexistent}"
  [ $fail -eq 0 ]; exit $?
}

BIN=$(swift build --show-bin-path)
swift build --product restoration >/dev/null || { bad "build librestoration"; finish; }
ln -sf librestoration.so "$BIN/librestoration.so.1"
WORK=$(mktemp -d)
SHOTS=${QT_SCREENSHOTS:-$PWD/.build}
mkdir -p "$SHOTS"
make --no-print-directory qt QT_RST_LIB="$BIN" QT_OUT="$WORK/qt" > "$WORK/make.log" 2>&1 \
  || { bad "make qt: $(cat "$WORK/make.log")"; finish; }
readelf -d "$WORK/qt/librestoration-qt.so.1" | grep -q 'SONAME.*\[librestoration-qt.so.1\]' \
  && ok "librestoration-qt.so.1 built (SONAME)" || bad "SONAME of librestoration-qt"
g++ -std=c++17 -fPIC -Wall -Wextra -Werror -IInclude -IToolkits/qt $(pkg-config --cflags Qt6Widgets) \
  Examples/qt-notes/notes.cpp -o "$WORK/notes" -L"$WORK/qt" -lrestoration-qt -L"$BIN" -lrestoration \
  $(pkg-config --libs Qt6Widgets) -Wl,-rpath,"$WORK/qt" -Wl,-rpath,"$BIN" || { bad "compile Examples/qt-notes/notes.cpp"; finish; }
g++ -std=c++17 -fPIC -Wall -Wextra -Werror -IInclude -IToolkits/qt $(pkg-config --cflags Qt6Widgets) \
  Tests/qt/widgets.cpp -o "$WORK/widgets" -L"$WORK/qt" -lrestoration-qt -L"$BIN" -lrestoration \
  $(pkg-config --libs Qt6Widgets) -Wl,-rpath,"$WORK/qt" -Wl,-rpath,"$BIN" || { bad "compile Tests/qt/widgets.cpp"; finish; }
ok "compiled"
# make install-qt, staged: the library, its links, header and restoration-qt.pc.
DEST="$WORK/dest"
if make --no-print-directory install-qt QT_RST_LIB="$BIN" QT_OUT="$WORK/qt" DESTDIR="$DEST" PREFIX=/usr > "$WORK/install.log" 2>&1 \
   && [ "$(readlink "$DEST/usr/lib/librestoration-qt.so")" = librestoration-qt.so.1 ] \
   && [ -f "$DEST/usr/lib/$(readlink "$DEST/usr/lib/librestoration-qt.so.1")" ] \
   && [ -f "$DEST/usr/include/restoration-qt.h" ] \
   && grep -qx 'Libs: -L${libdir} -lrestoration-qt' "$DEST/usr/lib/pkgconfig/restoration-qt.pc" \
   && grep -qx 'libdir=/usr/lib' "$DEST/usr/lib/pkgconfig/restoration-qt.pc"; then
  ok "make install-qt (staged)"
else bad "make install-qt: $(cat "$WORK/install.log"; find "$DEST" | tr '\n' ' ')"; fi
# Its manual page, restoration-qt(3): no mandoc -T lint warning, every function of the header in it.
MAN3="$DEST/usr/share/man/man3/restoration-qt.3"
if [ -f "$MAN3" ]; then
  LINT=$(mandoc -T lint -W warning "$MAN3" 2>&1)
  [ -z "$LINT" ] && ok "restoration-qt(3) installed, no mandoc -T lint warning" || bad "mandoc -T lint restoration-qt.3: $LINT"
  missing=
  for f in $(sed -n 's/^RESTORATION_QT_API [^(]*[ *]\([A-Za-z]*\)(.*/\1/p' Toolkits/qt/restoration-qt.h); do
    grep -q "^\.Nm RestorationQt::$f\b" "$MAN3" && grep -q "^\.Fn RestorationQt::$f " "$MAN3" || missing="$missing $f"
  done
  [ -z "$missing" ] && ok "restoration-qt(3) names and declares every function of restoration-qt.h" || bad "restoration-qt(3) lacks:$missing"
  grep -q '@VERSION@\|@DATE@' "$MAN3" && bad "restoration-qt(3): a placeholder left" || ok "restoration-qt(3): version and date filled in"
else bad "make install-qt installed no restoration-qt.3"; fi
make --no-print-directory uninstall-qt DESTDIR="$DEST" PREFIX=/usr > /dev/null 2>&1
[ -z "$(find "$DEST" -type f -o -type l)" ] && ok "make uninstall-qt removes it all" || bad "left after uninstall-qt: $(find "$DEST" -type f -o -type l)"
# An app built with pkg-config alone against an installed prefix (librestoration's
# own restoration.pc stands for the in-tree build).
PFX="$WORK/prefix"
mkdir -p "$WORK/pc"
sed -e "s|@PREFIX@|$PWD|g" -e "s|@LIBDIR@|$BIN|g" -e "s|@INCLUDEDIR@|$PWD/Include|g" -e "s|@VERSION@|0|g" \
  restoration.pc.in > "$WORK/pc/restoration.pc"
if make --no-print-directory install-qt QT_RST_LIB="$BIN" QT_OUT="$WORK/qt-pfx" PREFIX="$PFX" > "$WORK/install2.log" 2>&1 \
   && PKG_CONFIG_PATH="$PFX/lib/pkgconfig:$WORK/pc" g++ -std=c++17 -fPIC -Wall -Wextra -Werror Examples/qt-notes/notes.cpp \
      -o "$WORK/notes-pc" $(PKG_CONFIG_PATH="$PFX/lib/pkgconfig:$WORK/pc" pkg-config --cflags --libs restoration-qt) 2> "$WORK/pc.log" \
   && readelf -d "$WORK/notes-pc" | grep -q 'NEEDED.*\[librestoration-qt.so.1\]'; then
  ok "an app built with pkg-config --cflags --libs restoration-qt alone"
else bad "pkg-config restoration-qt: $(cat "$WORK/install2.log" "$WORK/pc.log")"; fi

# Xvfb on a free display (it writes the number it took); real X through xcb.
exec 9<> "$WORK/display"
Xvfb -displayfd 9 -screen 0 1024x768x24 -nolisten tcp > "$WORK/xvfb.log" 2>&1 &
XPID=$!
for _ in $(seq 1 100); do [ -s "$WORK/display" ] && break; sleep 0.1; done
DISPLAY=":$(head -1 "$WORK/display" | tr -d '[:space:]')"
[ "$DISPLAY" != ":" ] || { bad "Xvfb did not start: $(cat "$WORK/xvfb.log")"; finish; }
export DISPLAY QT_QPA_PLATFORM=xcb XDG_RUNTIME_DIR="$WORK/runtime" NO_AT_BRIDGE=1
mkdir -m 700 "$XDG_RUNTIME_DIR"
STATE="$WORK/state"; mkdir -p "$STATE"

# 0. Widget by widget (Tests/qt/widgets.cpp): each type saved and restored.
mkdir -p "$WORK/widgets-state"
if timeout 120 "$WORK/widgets" "$WORK/widgets-state" > "$WORK/widgets.log" 2>&1; then ok "$(grep '^widgets:' "$WORK/widgets.log")"
else bad "Tests/qt/widgets.cpp: $(grep -v '^restoration-qt:' "$WORK/widgets.log")"; fi
# The same, the library and the test built with AddressSanitizer and UBSan
# (leaks not checked: Qt's and D-Bus's own allocations at exit would count).
mkdir -p "$WORK/asan" "$WORK/asan-state"
if g++ -std=c++17 -fPIC -shared -g -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -IInclude $(pkg-config --cflags Qt6Widgets) \
     Toolkits/qt/restoration-qt.cpp -o "$WORK/asan/librestoration-qt.so.1" -Wl,-soname,librestoration-qt.so.1 \
     -L"$BIN" -lrestoration $(pkg-config --libs Qt6Widgets) \
   && g++ -std=c++17 -fPIC -g -O1 -fsanitize=address,undefined -IInclude -IToolkits/qt $(pkg-config --cflags Qt6Widgets) \
     Tests/qt/widgets.cpp -o "$WORK/asan/widgets" -L"$WORK/asan" -l:librestoration-qt.so.1 -L"$BIN" -lrestoration \
     $(pkg-config --libs Qt6Widgets) -Wl,-rpath,"$WORK/asan" -Wl,-rpath,"$BIN"; then
  if ASAN_OPTIONS=detect_leaks=0:halt_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
     timeout 300 "$WORK/asan/widgets" "$WORK/asan-state" > "$WORK/asan.log" 2>&1 \
     && ! grep -q 'runtime error\|AddressSanitizer' "$WORK/asan.log"; then
    ok "under ASan and UBSan: $(grep '^widgets:' "$WORK/asan.log")"
  else bad "Tests/qt/widgets.cpp under ASan/UBSan: $(grep -v '^restoration-qt:' "$WORK/asan.log")"; fi
else bad "compile with -fsanitize=address,undefined"; fi
shot() { rm -f "$1"; if import -window root "$1" 2>"$WORK/import.log" && [ -s "$1" ]; then ok "screenshot $1"; else bad "screenshot $1: $(cat "$WORK/import.log")"; fi; }
wait_file() { for _ in $(seq 1 300); do [ -f "$1" ] && return 0; sleep 0.1; done; return 1; }
field() { sed -n "s/^$1=//p" "$2" | head -1; }

# 1. A session; the autosave writes it; kill -9.
NOTES_SET="search=Grüße aus Xvfb;select=Note 120;scroll=60;split=-80;editor=first line
second line;tab=settings;wrap=0;theme=Dark;password=hunter2;width=700;height=520" NOTES_READY="$WORK/ready" \
  "$WORK/notes" "$STATE" > "$WORK/run1.log" 2>&1 &
NPID=$!
if wait_file "$WORK/ready"; then ok "autosaved after the changes"; else bad "no autosave within 30 s: $(cat "$WORK/run1.log")"; finish; fi
shot "$SHOTS/qt-notes-before.png"
kill -9 "$NPID"; wait "$NPID" 2>/dev/null; NPID=
grep -q RST_REASON_FIRST_LAUNCH "$WORK/run1.log" && ok "first launch" || bad "first launch reason: $(cat "$WORK/run1.log")"
grep -qx "select=Note 120" "$WORK/ready" && grep -qx "top=Note 060" "$WORK/ready" && grep -qx "tab=settings" "$WORK/ready" \
  && grep -qx "wrap=0" "$WORK/ready" && grep -qx "width=700" "$WORK/ready" \
  && ok "the session's changes: $(tr '\n' ' ' < "$WORK/ready")" || bad "the scripted changes did not all happen: $(tr '\n' ' ' < "$WORK/ready")"
if grep -q hunter2 "$STATE/notes.rst"; then bad "the password is in the archive"; else ok "the password is not in the archive"; fi

# 2. Relaunch, the notes reversed: RECOVER, every widget back.
rm -f "$WORK/dump" "$WORK/dump.quit"
NOTES_AUTOSAVE_MS=60000 NOTES_DUMP="$WORK/dump" NOTES_REVERSE=1 "$WORK/notes" "$STATE" > "$WORK/run2.log" 2>&1 &
NPID=$!
wait_file "$WORK/dump" || { bad "relaunch wrote no state: $(cat "$WORK/run2.log")"; finish; }
shot "$SHOTS/qt-notes-restored.png"
touch "$WORK/dump.quit"; wait "$NPID"; rc=$?; NPID=
[ $rc -eq 0 ] && ok "closed normally" || bad "exit status $rc: $(cat "$WORK/run2.log")"
expect() { if grep -qxF "$1" "$WORK/dump"; then ok "$1"; else bad "expected '$1' in: $(tr '\n' ' ' < "$WORK/dump")"; fi; }
same() { local v; v=$(field "$1" "$WORK/ready"); expect "$1=$v"; }
expect "reason=RST_REASON_RECOVER"
expect "dirty_at_start=0"          # the signals of the restore itself are not changes
for k in width height tab search select top editor cursor wrap theme; do same "$k"; done
# The splitter: the same share for the list (the window laid out again may scale both panes).
share() { field split "$1" | awk -F, '{ if ($1 + $2 > 0) printf "%.3f", $1 / ($1 + $2); else print "none" }'; }
s1=$(share "$WORK/ready"); s2=$(share "$WORK/dump")
if awk -v a="$s1" -v b="$s2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a < 0.45 && d < 0.01) }'; then
  ok "splitter: the list's share $s2 (dragged: $s1)"; else bad "splitter: the list's share $s2, dragged to $s1"; fi
expect "selected_index=29"         # reversed: the note, not row 120
expect "password="

# 3. SIGTERM right after a change: the signal save writes it.
rm -f "$WORK/ready"
NOTES_AUTOSAVE_MS=60000 NOTES_SET="search=after SIGTERM" NOTES_READY_DIRTY="$WORK/ready" "$WORK/notes" "$STATE" > "$WORK/run3.log" 2>&1 &
NPID=$!
wait_file "$WORK/ready"
grep -qx dirty "$WORK/ready" 2>/dev/null && ok "dirty before SIGTERM" || bad "not dirty before SIGTERM: $(cat "$WORK/run3.log")"
kill -TERM "$NPID"; wait "$NPID"; rc=$?; NPID=
[ $rc -eq 143 ] && ok "ended by SIGTERM" || bad "exit status $rc after SIGTERM (expected 143): $(cat "$WORK/run3.log")"
rm -f "$WORK/dump" "$WORK/dump.quit"
NOTES_AUTOSAVE_MS=60000 NOTES_DUMP="$WORK/dump" "$WORK/notes" "$STATE" > "$WORK/run4.log" 2>&1 &
NPID=$!
wait_file "$WORK/dump" || { bad "relaunch after SIGTERM wrote no state: $(cat "$WORK/run4.log")"; finish; }
shot "$SHOTS/qt-notes-sigterm.png"
touch "$WORK/dump.quit"; wait "$NPID"; NPID=
expect "reason=RST_REASON_RELAUNCH"
expect "dirty_at_start=0"
expect "search=after SIGTERM"
expect "select=Note 120"

# 4. The window closed right after a change: saved as it closes.
rm -f "$WORK/ready"
NOTES_AUTOSAVE_MS=60000 NOTES_SET="search=after close;close=1" NOTES_READY_DIRTY="$WORK/ready" "$WORK/notes" "$STATE" > "$WORK/run5.log" 2>&1 &
NPID=$!
for _ in $(seq 1 300); do kill -0 "$NPID" 2>/dev/null || break; sleep 0.1; done
wait "$NPID"; rc=$?; NPID=
grep -qx dirty "$WORK/ready" 2>/dev/null && ok "dirty before closing" || bad "not dirty before closing: $(cat "$WORK/run5.log")"
[ $rc -eq 0 ] && ok "closing the window ended it" || bad "exit status $rc after closing: $(cat "$WORK/run5.log")"
rm -f "$WORK/dump" "$WORK/dump.quit"
NOTES_DUMP="$WORK/dump" "$WORK/notes" "$STATE" > "$WORK/run6.log" 2>&1 &
NPID=$!
wait_file "$WORK/dump" || { bad "relaunch after closing wrote no state: $(cat "$WORK/run6.log")"; finish; }
shot "$SHOTS/qt-notes-closed.png"
touch "$WORK/dump.quit"; wait "$NPID"; NPID=
expect "reason=RST_REASON_RELAUNCH"
expect "search=after close"
expect "editor=first line\\nsecond line"

# 5. Maximized with no window manager (the geometry does not move): a change,
#    autosaved; kill -9; the relaunch is maximized.
rm -f "$WORK/ready"
NOTES_SET="maximize=1" NOTES_READY="$WORK/ready" "$WORK/notes" "$STATE" > "$WORK/run7.log" 2>&1 &
NPID=$!
wait_file "$WORK/ready" || bad "maximized: no autosave: $(cat "$WORK/run7.log")"
grep -qx "maximized=1" "$WORK/ready" 2>/dev/null && ok "maximized by the session" || bad "not maximized: $(tr '\n' ' ' < "$WORK/ready" 2>/dev/null)"
kill -9 "$NPID"; wait "$NPID" 2>/dev/null; NPID=
rm -f "$WORK/dump" "$WORK/dump.quit"
NOTES_AUTOSAVE_MS=60000 NOTES_DUMP="$WORK/dump" "$WORK/notes" "$STATE" > "$WORK/run8.log" 2>&1 &
NPID=$!
wait_file "$WORK/dump" || { bad "relaunch after the maximize wrote no state: $(cat "$WORK/run8.log")"; finish; }
touch "$WORK/dump.quit"; wait "$NPID"; NPID=
expect "reason=RST_REASON_RECOVER"
expect "maximized=1"
expect "dirty_at_start=0"
expect "search=after close"

if grep -h 'restoration-qt:' "$WORK"/run*.log; then bad "restoration-qt warnings (above)"; else ok "no restoration-qt warning"; fi
finish
