#!/usr/bin/env bash
# restoration-gtk and the GTK 4 example (Examples/gtk-notes) under Xvfb, as
# a user sees them:
#   1. a session changes everything (types in the search entry and the note,
#      selects a row far down the list and scrolls it near the top, moves the
#      divider, resizes the window, ticks a box, moves a scale, types a
#      password); once the autosave wrote it, a screenshot, then kill -9;
#   2. relaunch: RECOVER, every value read back from the widgets, the row
#      actually drawn at the top of the list, the password not in any file;
#      a screenshot;
#   3. relaunch with the list model reversed: the selection and the top row
#      follow the items, not the indexes; a screenshot;
#   4. switch page and type, resize the window from outside (xdotool), then
#      SIGTERM at once (autosave 60 s away): the signal save keeps it, the
#      process ends by SIGTERM, next launch RELAUNCH;
#   5. type, then close the window at once: the save at close-request keeps it;
#   6. on the details page, type a title and click at its start, then close
#      the window (saved); then launch twice more with no input at all and
#      close: the title entry takes the focus and GTK selects its text
#      (select-on-focus moves the cursor), which is not a change, so neither
#      launch writes anything: the archive's inode and mtime are unchanged
#      and no generation file appears or changes.
# Before them, the manual page restoration-gtk(3) as make install-gtk
# installs it (mandoc -T lint, every function named), and Tests/gtk/widgets.c
# checks every supported widget type and the failures (bad archive values,
# skipped, duplicate and invalid names, destroyed widgets and engines), what
# GTK moves by itself, transparency, notebook page names, classes.
# Screenshots (the whole X screen, xwd → PNG) are kept in $GTK_ARTEFACTS
# (default .build/gtk-test/): before.png, restored.png, restored-reversed.png.
#   Tests/gtk/run.sh [SUMMARY_FILE]
set -u
cd "$(dirname "$0")/../.."
SUMMARY=${1:-/dev/null}
pass=0; fail=0
ok()  { pass=$((pass+1)); echo "gtk: ok: $*"; }
bad() { fail=$((fail+1)); echo "gtk: FAILED: $*"; }
finish() {
    [ -n "${P:-}" ] && kill -9 "$P" 2>/dev/null
    [ -n "${XPID:-}" ] && kill "$XPID" 2>/dev/null
    echo "gtk: $pass passed, $fail failed" | tee -a "$SUMMARY"
    rm -rf "${WORK:-/nonexistent}"; [ $fail -eq 0 ]; exit $?
}

# librestoration (in-tree) and librestoration-gtk (.build/gtk), then the example against them.
GTKLOG=$(mktemp)
make --no-print-directory gtk > "$GTKLOG" 2>&1 || { tail -30 "$GTKLOG"; rm -f "$GTKLOG"; bad "make gtk (librestoration-gtk)"; finish; }
rm -f "$GTKLOG"
BIN=$(swift build --show-bin-path)
LIB=$PWD/.build/gtk
WORK=$(mktemp -d)
ART=${GTK_ARTEFACTS:-$PWD/.build/gtk-test}
mkdir -p "$ART"; rm -f "$ART"/*.png
cc -std=c11 -Wall -Wextra -Werror -IInclude -IToolkits/gtk Examples/gtk-notes/notes.c $(pkg-config --cflags --libs gtk4) \
   -L"$LIB" -lrestoration-gtk -L"$BIN" -lrestoration -Wl,-rpath,"$LIB" -Wl,-rpath,"$BIN" -o "$WORK/notes" \
   || { bad "compile Examples/gtk-notes/notes.c"; finish; }
ok "compiled"

# The manual page restoration-gtk(3), as make install-gtk installs it (staged,
# with this build standing for the release one): no mandoc -T lint warning,
# every function of the header in it; make uninstall-gtk removes it.
mkdir -p "$WORK/fakedist/gtk"
cp -P "$LIB"/librestoration-gtk.so* "$WORK/fakedist/gtk/" && : > "$WORK/fakedist/gtk/restoration-gtk.pc"
MAN3="$WORK/dest/usr/share/man/man3/restoration-gtk.3"
if make --no-print-directory -o dist-gtk install-gtk DIST="$WORK/fakedist" DESTDIR="$WORK/dest" PREFIX=/usr > "$WORK/install.log" 2>&1 \
   && [ -f "$MAN3" ]; then
    LINT=$(mandoc -T lint -W warning "$MAN3" 2>&1)
    [ -z "$LINT" ] && ok "restoration-gtk(3) installed, no mandoc -T lint warning" || bad "mandoc -T lint restoration-gtk.3: $LINT"
    missing=
    for f in $(sed -n 's/^RST_GTK_API [^(]*[ *]\(rst_gtk_[a-z_]*\)(.*/\1/p' Toolkits/gtk/restoration-gtk.h); do
        grep -q "^\.Nm $f\b" "$MAN3" && grep -q "^\.Fn $f " "$MAN3" || missing="$missing $f"
    done
    [ -z "$missing" ] && ok "restoration-gtk(3) names and declares every function of restoration-gtk.h" || bad "restoration-gtk(3) lacks:$missing"
    grep -q '@VERSION@\|@DATE@' "$MAN3" && bad "restoration-gtk(3): a placeholder left" || ok "restoration-gtk(3): version and date filled in"
else bad "make install-gtk (staged): $(cat "$WORK/install.log")"; fi
make --no-print-directory uninstall-gtk DESTDIR="$WORK/dest" PREFIX=/usr > /dev/null 2>&1
[ -z "$(find "$WORK/dest" -type f -o -type l)" ] && ok "make uninstall-gtk removes it all" || bad "left after uninstall-gtk: $(find "$WORK/dest" -type f -o -type l)"

# Xvfb on a free display (it writes the number it took).
exec 9<> "$WORK/display"
Xvfb -displayfd 9 -screen 0 1024x768x24 -nolisten tcp > "$WORK/xvfb.log" 2>&1 &
XPID=$!
for _ in $(seq 1 100); do [ -s "$WORK/display" ] && break; sleep 0.1; done
DISPLAY=":$(head -1 "$WORK/display" | tr -d '[:space:]')"
[ "$DISPLAY" != ":" ] || { bad "Xvfb did not start: $(cat "$WORK/xvfb.log")"; finish; }
export DISPLAY GDK_BACKEND=x11 GSK_RENDERER=cairo NO_AT_BRIDGE=1 GTK_A11Y=none
STATE="$WORK/state"; mkdir -p "$STATE"

# 0. The library widget by widget (Tests/gtk/widgets.c, through buffers).
if cc -std=c11 -Wall -Wextra -Werror -IInclude -IToolkits/gtk -ITests/RestorationCTests/C Tests/gtk/widgets.c \
     $(pkg-config --cflags --libs gtk4) -L"$LIB" -lrestoration-gtk -L"$BIN" -lrestoration \
     -Wl,-rpath,"$LIB" -Wl,-rpath,"$BIN" -o "$WORK/widgets"; then
    if timeout 60 "$WORK/widgets" > "$WORK/widgets.log" 2>&1; then ok "widgets: $(grep -m1 '^widgets: ok' "$WORK/widgets.log")"
    else bad "widgets: $(cat "$WORK/widgets.log")"; fi
else bad "compile Tests/gtk/widgets.c"; fi

wait_file() { for _ in $(seq 1 300); do [ -s "$1" ] && return 0; sleep 0.1; done; return 1; }
# What the X screen shows, as PNG (xwd, then ImageMagick's convert).
screenshot() {
    if xwd -root -silent > "$WORK/shot.xwd" 2>/dev/null && convert "xwd:$WORK/shot.xwd" "$ART/$1" 2>/dev/null \
       && [ -s "$ART/$1" ]; then ok "screenshot $ART/$1"; else bad "screenshot $1 (xwd, convert)"; fi
}
# Launches the example to read its restored state (the autosave far away,
# so that reading changes nothing), waits for the dump, then kill -9.
dump() {
    local name=$1; shift
    rm -f "$WORK/dump"
    env NOTES_DUMP="$WORK/dump" NOTES_AUTOSAVE_MS=600000 "$@" "$WORK/notes" "$STATE" > "$WORK/$name.log" 2>&1 &
    P=$!
    if ! wait_file "$WORK/dump"; then bad "$name: no state written: $(cat "$WORK/$name.log")"; kill -9 $P; P=; return 1; fi
    sleep 0.3
    [ -n "${SHOT:-}" ] && screenshot "$SHOT"
    kill -9 $P; wait $P 2>/dev/null; P=
}
expect() { if grep -qxF "$1" "$WORK/dump"; then ok "$1"; else bad "expected '$1' in: $(tr '\n' ' ' < "$WORK/dump")"; fi; }

# 1. A user changes everything; the autosave writes it; kill -9.
NOTES_SET="entry=Grüße aus Xvfb;note=Buy milk, then call Ann.;select=Item 120;top=110;divider=300;width=700;height=520;wrap=1;size=20;password=hunter2-secret" \
  NOTES_READY="$WORK/ready" "$WORK/notes" "$STATE" > "$WORK/run1.log" 2>&1 &
P=$!
if wait_file "$WORK/ready"; then ok "autosaved after the changes"; else bad "no autosave within 30 s: $(cat "$WORK/run1.log")"; fi
sleep 0.3
screenshot before.png
kill -9 "$P"; wait "$P" 2>/dev/null; P=
SEEN=$(sed -n 's/^top_row=//p' "$WORK/ready")
case "$SEEN" in "Item 109"|"Item 110") ok "scrolled: '$SEEN' at the top";; *) bad "scrolled: '$SEEN' at the top";; esac
grep -q RST_REASON_FIRST_LAUNCH "$WORK/run1.log" && ok "first launch" || bad "first launch reason: $(cat "$WORK/run1.log")"
if grep -rqa hunter2-secret "$STATE"; then bad "the password is in $(grep -rla hunter2-secret "$STATE")"; else ok "the password is in no file"; fi

# 2. Relaunch: RECOVER, and every piece of state back, as the widgets show it.
SHOT=restored.png dump relaunch
expect "reason=RST_REASON_RECOVER"
expect "width=700"
expect "height=520"
expect "page=list"
expect "entry=Grüße aus Xvfb"
expect "note=Buy milk, then call Ann."
expect "divider=300"
expect "select=Item 120"
expect "selected_index=120"
expect "top_row=$SEEN"             # the row drawn at the top, not only the adjustment's value
expect "wrap=1"
expect "size=20"
expect "password="
# The list and the note as the user saw them before the kill, pixel for pixel
# (the status line above them says RECOVER now, and the list's overlay
# scrollbar indicator, drawn from GTK's estimate of the rows, are left out).
same_region() {
    local r=$1
    convert "$ART/before.png" -crop "$r" +repage "$WORK/a.png" && convert "$ART/restored.png" -crop "$r" +repage "$WORK/b.png" \
      && [ "$(compare -metric AE "$WORK/a.png" "$WORK/b.png" null: 2>&1)" = 0 ]
}
if same_region 288x420+0+60 && same_region 390x420+305+60; then ok "the restored window shows what was there before (screenshots)"; else bad "the restored window differs from before.png (see $ART)"; fi

# 3. The model reversed: the selection and the top row follow the items.
SHOT=restored-reversed.png dump reversed NOTES_REVERSE=1
expect "select=Item 120"
expect "selected_index=29"
expect "top_row=$SEEN"

# 4. A change, then SIGTERM at once (autosave 60 s away): the signal save writes it.
rm -f "$WORK/ready"
NOTES_AUTOSAVE_MS=60000 NOTES_SET="page=settings;entry=after SIGTERM" NOTES_READY_DIRTY="$WORK/ready" \
  "$WORK/notes" "$STATE" > "$WORK/run4.log" 2>&1 &
P=$!
wait_file "$WORK/ready"
grep -qx dirty "$WORK/ready" 2>/dev/null && ok "dirty before SIGTERM" || bad "not dirty before SIGTERM"
# The window resized from outside, as by the window manager (xdotool).
WID=$(xdotool search --onlyvisible --name "Notes" 2>/dev/null | head -1)
if [ -n "$WID" ] && xdotool windowsize "$WID" 640 450; then sleep 0.5; else bad "xdotool could not resize the window"; fi
kill -TERM "$P"; wait "$P"; rc=$?; P=
[ $rc -eq 143 ] && ok "ended by SIGTERM" || bad "exit status $rc after SIGTERM (expected 143): $(cat "$WORK/run4.log")"
SHOT= dump after-sigterm
expect "reason=RST_REASON_RELAUNCH"
expect "page=settings"
expect "entry=after SIGTERM"
expect "width=640"
expect "height=450"
expect "top_row=$SEEN"

# 5. A change, then the window closed at once: the save at close-request keeps it.
rm -f "$WORK/ready"
NOTES_AUTOSAVE_MS=60000 NOTES_SET="entry=after close;note=closed at once" NOTES_READY_DIRTY="$WORK/ready" NOTES_CLOSE=1 \
  timeout 60 "$WORK/notes" "$STATE" > "$WORK/run5.log" 2>&1
rc=$?
grep -qx dirty "$WORK/ready" 2>/dev/null && ok "dirty before the close" || bad "not dirty before the close"
[ $rc -eq 0 ] && ok "closed" || bad "exit status $rc after the close: $(cat "$WORK/run5.log")"
SHOT= dump after-close
expect "reason=RST_REASON_RELAUNCH"
expect "entry=after close"
expect "note=closed at once"
expect "divider=300"

# 6. An idle relaunch writes nothing. A session leaves the details page
#    shown, its title typed and the cursor clicked to the start, and closes.
rm -f "$WORK/ready"
NOTES_AUTOSAVE_MS=60000 NOTES_SET="page=details;title=Groceries;title_cursor=0" NOTES_READY_DIRTY="$WORK/ready" NOTES_CLOSE=1 \
  timeout 60 "$WORK/notes" "$STATE" > "$WORK/run6.log" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -qx dirty "$WORK/ready" 2>/dev/null && ok "details page: typed and closed" || bad "details page session: exit $rc: $(cat "$WORK/run6.log")"
# What is in the state directory: every file's name, inode, size and mtime (ns).
listing() { (cd "$STATE" && for f in *; do [ "$f" = notes.rst.lock ] || stat -c '%n %i %s %Y.%y' "$f"; done); }
BEFORE=$(listing)
for launch in 1 2; do
    NOTES_QUIT_MS=2000 timeout 60 "$WORK/notes" "$STATE" > "$WORK/idle$launch.log" 2>&1
    rc=$?
    [ $rc -eq 0 ] && grep -q RST_REASON_RELAUNCH "$WORK/idle$launch.log" && ok "idle launch $launch: RELAUNCH, closed" \
      || bad "idle launch $launch: exit $rc: $(cat "$WORK/idle$launch.log")"
    AFTER=$(listing)
    if [ "$AFTER" = "$BEFORE" ]; then ok "idle launch $launch wrote nothing (inode, size, mtime and generations unchanged)"
    else bad "idle launch $launch wrote: before: $(echo $BEFORE) after: $(echo $AFTER)"; fi
done
SHOT= dump after-idle
expect "page=details"
expect "title=Groceries"
finish
