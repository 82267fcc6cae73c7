#!/usr/bin/env bash
# Process-death testing of this project's programs with `restorectl test`
# (docs/TESTING.md): Examples/countries-c and Examples/countries-swift (their
# demo-loop mode), and Examples/gtk-notes and Examples/qt-notes under Xvfb
# (NOTES_SET, NOTES_LOOP) pass every kill point and the round trip;
# Examples/curses-picker passes them in a pseudo-terminal, typed into
# (--pty --keys); Examples/sqlite-store's program, whose engine has a store
# of its own, passes the points it reaches; the negative controls of
# Tests/deathtest/broken.c and broken-gtk.c fail as they should, naming the
# key or the record, and a program that never reaches a point fails the run.
#   Tests/deathtest/run.sh [SUMMARY_FILE]
# Needs cc, libncurses-dev and libsqlite3-dev (`make deps deps-recipes`);
# for gtk-notes libgtk-4-dev and Xvfb (`make deps-gtk`), for
# qt-notes g++ and qt6-base-dev (`make deps-qt`). DEATHTEST_NO_GTK=1 leaves
# gtk-notes and broken-gtk out, DEATHTEST_NO_QT=1 qt-notes.
set -u
cd "$(dirname "$0")/../.."
SUMMARY=${1:-/dev/null}
pass=0; fail=0
ok()  { pass=$((pass+1)); echo "deathtest: ok: $*"; }
bad() { fail=$((fail+1)); echo "deathtest: FAILED: $*"; }
finish() { echo "deathtest: $pass passed, $fail failed" | tee -a "$SUMMARY"; [ -n "${XPID:-}" ] && kill "$XPID" 2>/dev/null; rm -rf "${WORK:-/nonexistent}"; [ $fail -eq 0 ]; exit $?; }

for p in restoration restorectl countries-swift countries_detail CountriesPanesPlugin; do
  swift build --product "$p" >/dev/null || { bad "build $p"; finish; }
done
BIN=$(swift build --show-bin-path)
ln -sf librestoration.so "$BIN/librestoration.so.1"
CTL="$BIN/restorectl"
WORK=$(mktemp -d)
cc -std=c11 -Wall -Wextra -Werror -IInclude Examples/countries-c/countries.c -L"$BIN" -lrestoration -Wl,-rpath,"$BIN" \
   -o "$WORK/countries" || { bad "compile Examples/countries-c"; finish; }
cc -std=c11 -Wall -Wextra -Werror -IInclude Tests/deathtest/broken.c -L"$BIN" -lrestoration -Wl,-rpath,"$BIN" \
   -o "$WORK/broken" || { bad "compile Tests/deathtest/broken.c"; finish; }
cc -std=c11 -Wall -Wextra -Werror -IInclude Examples/curses-picker/picker.c -L"$BIN" -lrestoration -Wl,-rpath,"$BIN" -lncurses \
   -o "$WORK/picker" || { bad "compile Examples/curses-picker (libncurses-dev)"; finish; }
cc -std=c11 -Wall -Wextra -Werror -IInclude -IExamples/sqlite-store Examples/sqlite-store/notes_db.c Examples/sqlite-store/sqlite_store.c \
   -L"$BIN" -lrestoration -Wl,-rpath,"$BIN" -lsqlite3 -o "$WORK/notes_db" || { bad "compile Examples/sqlite-store (libsqlite3-dev)"; finish; }

# A fresh state directory (with the countries plugins when asked).
state() {
  local d="$WORK/state-$1"; rm -rf "$d"; mkdir -p "$d"; chmod 755 "$d"
  if [ "${2:-}" = plugins ]; then
    mkdir -p "$d/plugins"; chmod 755 "$d/plugins"
    install -m 644 "$BIN/libcountries_detail.so" "$BIN/libCountriesPanesPlugin.so" "$d/plugins/"
  fi
  echo "$d"
}
# run NAME ARGS...: restorectl test, output in $WORK/NAME.out, status in $rc.
run() { local name=$1; shift; timeout 900 "$CTL" test "$@" > "$WORK/$name.out" 2> "$WORK/$name.err"; rc=$?; }
show() { cat "$WORK/$1.out"; head -c 4000 "$WORK/$1.err"; }
all_pass() {   # NAME: every point passed and the round trip too
  if [ $rc -eq 0 ] && grep -q "^8 passed, 0 failed, 0 not reached; round trip passed$" "$WORK/$1.out"; then ok "$1: 8 points and the round trip pass"
  else bad "$1 (exit $rc):"; show "$1"; fi
}
expect_line() {   # NAME STATUS FIXED-STRING
  if [ $rc -eq "$2" ] && grep -qF -- "$3" "$WORK/$1.out"; then ok "$1: exit $2, '$3'"
  else bad "$1: expected exit $2 and '$3' (exit $rc):"; show "$1"; fi
}

# 1. The examples pass every point and the round trip. Their demo loops
# change the state by themselves from the start, so their round trips save
# right after the restore (--settle 0); the picker's waits for its first
# idle moment (the default).
S=$(state countries-c plugins)
run countries-c --roundtrip --settle 0 --timeout 20 -- "$WORK/countries" "$S" demo-loop; all_pass countries-c
S=$(state countries-swift plugins)
run countries-swift --roundtrip --settle 0 --timeout 20 -- "$BIN/countries-swift" "$S" demo-loop; all_pass countries-swift

# The curses example in a pseudo-terminal, typed into as a person would.
S=$(state picker)
run picker --pty --keys Examples/curses-picker/keys.txt --roundtrip --timeout 20 -- "$WORK/picker" "$S"; all_pass picker
# The keys from standard input ('-') do the same.
S=$(state picker-stdin)
timeout 900 "$CTL" test --pty --keys - --points save-replaced,autosave --timeout 20 -- "$WORK/picker" "$S" \
  < Examples/curses-picker/keys.txt > "$WORK/picker-stdin.out" 2> "$WORK/picker-stdin.err"; rc=$?
expect_line picker-stdin 0 "2 passed, 0 failed, 0 not reached"
# Without a terminal it cannot start: the run fails, saying what its input was.
S=$(state picker-nopty); run picker-nopty --points save-begin --timeout 20 -- "$WORK/picker" "$S"
expect_line picker-nopty 1 "its standard input was /dev/null (a terminal program needs --pty)"

# A store of the program's own (SQLite): no archive path, judged by the
# relaunches' reports. Its loop saves with rst_save (no autosave), and its
# store has no map (a death in a decode sets the whole archive aside).
run sqlite --points save-begin,save-encoded,save-written,save-replaced,restore-begin,restore-finished --timeout 20 -- "$WORK/notes_db" "$WORK/notes.db" loop
expect_line sqlite 0 "6 passed, 0 failed, 0 not reached"
grep -q "^store SQLite database '$WORK/notes.db'" "$WORK/sqlite.out" && ok "sqlite: the store named" || { bad "sqlite: the store line"; show sqlite; }

# The toolkit examples under Xvfb (one X server for both). NOTES_SET: each
# launch changes the state as a user would (the list scrolled far down, a
# row selected, text typed); NOTES_LOOP: then a control moves every 200 ms,
# so the autosave keeps saving until restorectl kills it.
xvfb() {   # starts Xvfb once; sets DISPLAY
  [ -n "${XPID:-}" ] && return 0
  exec 9<> "$WORK/display"
  Xvfb -displayfd 9 -screen 0 1024x768x24 -nolisten tcp > "$WORK/xvfb.log" 2>&1 &
  XPID=$!
  for _ in $(seq 1 100); do [ -s "$WORK/display" ] && break; sleep 0.1; done
  [ -s "$WORK/display" ] || { bad "Xvfb did not start: $(cat "$WORK/xvfb.log")"; return 1; }
  export DISPLAY=":$(head -1 "$WORK/display" | tr -d '[:space:]')" NO_AT_BRIDGE=1 XDG_RUNTIME_DIR="$WORK/runtime"
  mkdir -m 700 -p "$XDG_RUNTIME_DIR"
}

GTK=
if [ -n "${DEATHTEST_NO_GTK:-}" ]; then
  echo "deathtest: gtk-notes left out (DEATHTEST_NO_GTK)"
elif ! pkg-config --exists gtk4 || ! command -v Xvfb >/dev/null; then
  bad "gtk-notes: needs libgtk-4-dev and Xvfb (make deps-gtk), or DEATHTEST_NO_GTK=1"
elif ! make --no-print-directory gtk > "$WORK/make-gtk.log" 2>&1; then
  bad "make gtk (librestoration-gtk): $(tail -30 "$WORK/make-gtk.log")"
elif ! cc -std=c11 -Wall -Wextra -Werror -IInclude -IToolkits/gtk Examples/gtk-notes/notes.c $(pkg-config --cflags --libs gtk4) \
        -L"$PWD/.build/gtk" -lrestoration-gtk -L"$BIN" -lrestoration -Wl,-rpath,"$PWD/.build/gtk" -Wl,-rpath,"$BIN" -o "$WORK/notes"; then
  bad "compile Examples/gtk-notes"
elif ! cc -std=c11 -Wall -Wextra -Werror -IInclude Tests/deathtest/broken-gtk.c $(pkg-config --cflags --libs gtk4) \
        -L"$BIN" -lrestoration -Wl,-rpath,"$BIN" -o "$WORK/broken-gtk"; then
  bad "compile Tests/deathtest/broken-gtk.c"
elif xvfb; then
  GTK=1
  # The list shown (its offset applied after the first layout), then on a
  # hidden page (its offset pending in every save).
  for page in list details; do
    S=$(state gtk-notes-$page)
    GDK_BACKEND=x11 GSK_RENDERER=cairo GTK_A11Y=none NOTES_LOOP=200 \
    NOTES_SET="page=$page;entry=Grüße aus Xvfb;note=Buy milk;select=Item 120;top=110;divider=300;width=700;height=520;wrap=1" \
      run gtk-notes-$page --roundtrip --settle 0 --timeout 30 -- "$WORK/notes" "$S"
    all_pass gtk-notes-$page
    # Relaunched with nobody changing anything: the round trip at its first
    # idle moment (after the first frames) gives back what it restored.
    GDK_BACKEND=x11 GSK_RENDERER=cairo GTK_A11Y=none \
      run gtk-notes-$page-idle --roundtrip --points restore-finished --timeout 30 -- "$WORK/notes" "$S"
    expect_line gtk-notes-$page-idle 0 "1 passed, 0 failed, 0 not reached; round trip passed"
  done
fi

if [ -n "${DEATHTEST_NO_QT:-}" ]; then
  echo "deathtest: qt-notes left out (DEATHTEST_NO_QT)"
elif ! pkg-config --exists Qt6Widgets || ! command -v Xvfb >/dev/null; then
  bad "qt-notes: needs qt6-base-dev and Xvfb (make deps-qt), or DEATHTEST_NO_QT=1"
elif ! make --no-print-directory qt QT_RST_LIB="$BIN" QT_OUT="$WORK/qt" > "$WORK/make-qt.log" 2>&1; then
  bad "make qt (librestoration-qt): $(tail -30 "$WORK/make-qt.log")"
elif ! g++ -std=c++17 -fPIC -Wall -Wextra -Werror -IInclude -IToolkits/qt $(pkg-config --cflags Qt6Widgets) \
        Examples/qt-notes/notes.cpp -o "$WORK/qt-notes" -L"$WORK/qt" -lrestoration-qt -L"$BIN" -lrestoration \
        $(pkg-config --libs Qt6Widgets) -Wl,-rpath,"$WORK/qt" -Wl,-rpath,"$BIN"; then
  bad "compile Examples/qt-notes"
elif xvfb; then
  # The list shown, then on a hidden tab.
  for tab in split settings; do
    S=$(state qt-notes-$tab)
    QT_QPA_PLATFORM=xcb NOTES_LOOP=200 \
    NOTES_SET="search=milk;select=Note 120;scroll=1500;split=60;editor=Buy milk;tab=$tab;wrap=0;width=700;height=520" \
      run qt-notes-$tab --roundtrip --settle 0 --timeout 30 -- "$WORK/qt-notes" "$S"
    all_pass qt-notes-$tab
    QT_QPA_PLATFORM=xcb run qt-notes-$tab-idle --roundtrip --points restore-finished --timeout 30 -- "$WORK/qt-notes" "$S"
    expect_line qt-notes-$tab-idle 0 "1 passed, 0 failed, 0 not reached; round trip passed"
  done
fi

# 2. Negative controls.
S=$(state good); run broken-good --roundtrip --settle 0 --timeout 20 -- "$WORK/broken" "$S" good; all_pass broken-good
S=$(state drop-key); run drop-key --roundtrip --settle 0 --points save-replaced --timeout 20 -- "$WORK/broken" "$S" drop-key
expect_line drop-key 1 'root label: saved string = "label '
S=$(state corrupt); run corrupt --roundtrip --settle 0 --points save-replaced --timeout 20 -- "$WORK/broken" "$S" corrupt
expect_line corrupt 1 'root count: saved int = '
grep -qE "^  root count: saved int = ([0-9]+), restored then saved int = [0-9]+$" "$WORK/corrupt.out" \
  && ok "corrupt: one line naming the key" || { bad "corrupt: the difference line"; show corrupt; }
# A change after the first frame (broken.c drift): the round trip at the
# first idle moment names it; right after the restore (--settle 0) misses it.
S=$(state drift); run drift --roundtrip --points save-replaced --timeout 20 -- "$WORK/broken" "$S" drift
expect_line drift 1 "  root count: saved int = "
S=$(state drift-0); run drift-0 --roundtrip --settle 0 --points save-replaced --timeout 20 -- "$WORK/broken" "$S" drift
expect_line drift-0 0 "1 passed, 0 failed, 0 not reached; round trip passed"
# Sealed (ENCRYPTED) values: a fresh nonce at every save, yet the round trip passes.
S=$(state sealed); run sealed --roundtrip --settle 0 --points save-replaced --timeout 20 -- "$WORK/broken" "$S" sealed
expect_line sealed 0 "1 sealed (ENCRYPTED) value compared by inner type and length only"
S=$(state sealed-drop); run sealed-drop --roundtrip --settle 0 --points save-replaced --timeout 20 -- "$WORK/broken" "$S" sealed-drop
expect_line sealed-drop 1 "  root label: saved sealed string ("
S=$(state forget-child); run forget-child --roundtrip --settle 0 --points save-replaced --timeout 20 -- "$WORK/broken" "$S" forget-child
expect_line forget-child 1 "root/child: saved (class Child), restored then saved: missing"
S=$(state decline-later); run decline-later --points save-replaced --timeout 20 -- "$WORK/broken" "$S" decline-later
expect_line decline-later 1 "save-replaced  FAIL         the relaunch skipped 'root/child' (RST_SKIP_DECLINED"
# A program that never reaches a point fails the run (it was not tested),
# unless --allow-not-reached; a point reached with nothing saved is no PASS.
S=$(state idle); run idle --timeout 1 -- "$WORK/broken" "$S" idle
expect_line idle 1 "FAILED: 7 of 8 points not reached, so not tested"
grep -q "^restore-begin     FIRST LAUNCH reached, but nothing was saved before it" "$WORK/idle.out" \
  && ok "idle: restore-begin with nothing saved is FIRST LAUNCH" || { bad "idle: FIRST LAUNCH"; show idle; }
S=$(state idle-allowed); run idle-allowed --allow-not-reached --points save-begin,autosave --timeout 1 -- "$WORK/broken" "$S" idle
expect_line idle-allowed 0 "0 passed, 0 failed, 2 not reached"
S=$(state exit); run exit --json --points save-begin --timeout 20 -- "$WORK/broken" "$S" exit
expect_line exit 1 '"reason_code": "not_reached_exited"'
if ! command -v python3 >/dev/null; then echo "deathtest: --json not parsed (no python3)"
elif python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["ok"] is False and d["not_reached"] == 1 and d["points"][0]["verdict"] == "NOT REACHED"' "$WORK/exit.out" 2>/dev/null; then
  ok "exit: --json parses"; else bad "exit: --json"; show exit; fi
# The GTK negative control (Tests/deathtest/broken-gtk.c): the same window
# passes when its scroll offset waits for the first layout, and fails the
# round trip, naming the key, when it is applied before (clamped to 0).
if [ -n "$GTK" ]; then
  S=$(state gtk-good)
  GDK_BACKEND=x11 GSK_RENDERER=cairo GTK_A11Y=none run broken-gtk-good --roundtrip --settle 0 --timeout 30 -- "$WORK/broken-gtk" "$S" good
  all_pass broken-gtk-good
  S=$(state gtk-early)
  GDK_BACKEND=x11 GSK_RENDERER=cairo GTK_A11Y=none run broken-gtk-early --roundtrip --settle 0 --points save-replaced --timeout 30 -- "$WORK/broken-gtk" "$S" early
  expect_line broken-gtk-early 1 'list v: saved double = '
  grep -qE "^  list v: saved double = [1-9][0-9.]*, restored then saved double = 0(\.0)?$" "$WORK/broken-gtk-early.out" \
    && ok "broken-gtk-early: the offset saved, 0 after the restore" || { bad "broken-gtk-early: the difference line"; show broken-gtk-early; }
fi
run usage --points nowhere -- "$WORK/broken" "$WORK" good
[ $rc -eq 2 ] && grep -q "'nowhere' is not a kill point" "$WORK/usage.err" && ok "usage: an unknown point is exit 2" || { bad "usage (exit $rc)"; show usage; }
finish
