#!/usr/bin/env bash
# Tests/install/run.sh [SUMMARY]: the library as a C user gets it.
#
# make install into a temporary prefix from a read-only checkout, every
# build product in BUILDDIR (INSTALL_BUILDDIR, default a temporary folder:
# set it to keep the release build between runs), ldconfig left alone for
# a private prefix; check what was installed (files, links, versions,
# NEEDED libraries, exported symbols); build an out-of-tree
# C host and the C plugin with pkg-config's flags alone, and the Swift plugin
# self-contained; run save, then restore in a new process through both
# plugins, and the installed restorectl, inside a mount namespace where the
# Swift toolchain folder is hidden; check the host's signal dispositions and
# crashes are its own; compile and run the README's C example; build a Swift
# package outside the repo that depends on this one by path and restore the
# C host's archive with it, and again by version from a tagged bare clone;
# stage with DESTDIR; uninstall.
#
# Prints "ok"/"FAIL" per check (a failure shows its log), then appends
# "install: N passed, M failed" to SUMMARY. Exit status 0 when none failed.
set -u
cd "$(dirname "$0")/../.."
REPO=$PWD
SUMMARY=${1:-/dev/null}
T=$(mktemp -d /tmp/rst-install.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
PREFIX=$T/prefix
BUILD=${INSTALL_BUILDDIR:-$T/build}
export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig
SWIFT=$(command -v swift)
TOOLCHAIN=$(dirname "$(dirname "$(dirname "$(readlink -f "$SWIFT")")")")   # the folder holding usr/bin/swift
VERSION=$(sed -n 's/^#define RST_VERSION_STRING "\(.*\)"/\1/p' Include/restoration.h)
MAJOR=${VERSION%%.*}
pass=0 fail=0

# check NAME FUNCTION: runs FUNCTION with its output in a log, shown on failure.
check() {
    local name=$1; shift
    if ( set -e; "$@" ) > "$T/check.log" 2>&1; then
        pass=$((pass + 1)); echo "ok   install: $name"
    else
        fail=$((fail + 1)); echo "FAIL install: $name"; sed 's/^/     | /' "$T/check.log" | tail -40
    fi
}
# expect WHAT CONDITION...: a failing condition names itself.
expect() { local what=$1; shift; if ! "$@"; then echo "expected: $what"; return 1; fi; }
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
# Libraries a program on a machine with only the C runtime, libffi and
# libsodium (sealed values) has.
system_only() {
    local bad
    bad=$(needed "$1" | grep -vE '^(libc\.so\.6|libm\.so\.6|libstdc\+\+\.so\.6|libgcc_s\.so\.1|libffi\.so\.[0-9]+|libsodium\.so\.23|ld-linux-x86-64\.so\.2|ld-linux-aarch64\.so\.1|libdl\.so\.2|libpthread\.so\.0|librt\.so\.1)$' || true)
    [ -z "$bad" ] || { echo "$1 needs: $bad"; return 1; }
    if readelf -d "$1" | grep -E '(RUNPATH|RPATH)' | grep -q "$TOOLCHAIN"; then
        echo "$1 has a RUNPATH into the toolchain: $(readelf -d "$1" | grep -E 'RUNPATH|RPATH')"; return 1
    fi
}
# contains OUTPUT LINE...: every LINE occurs in OUTPUT (a missing one is named).
contains() {
    local out=$1 line; shift
    for line in "$@"; do grep -qF -- "$line" <<< "$out" || { echo "missing: $line"; return 1; }; done
}
# cc_pc SOURCE OUTPUT [FLAGS...]: a C program built with pkg-config's flags
# alone (the rpath from pkg-config's libdir, as a host outside the standard
# folders needs).
cc_pc() {
    local src=$1 out=$2; shift 2
    cc -std=c11 -Wall -Wextra -Werror "$@" $(pkg-config --cflags restoration) "$src" \
       $(pkg-config --libs restoration) -Wl,-rpath,"$(pkg-config --variable=libdir restoration)" -o "$out"
}
# Runs a command with the Swift toolchain folder hidden under an empty tmpfs.
without_toolchain() {
    local unshare=(unshare -m)
    [ "$(id -u)" = 0 ] || unshare=(unshare -r -m)
    "${unshare[@]}" bash -c 'mount -t tmpfs tmpfs "$1" && [ ! -e "$1/usr/bin/swift" ] && shift && exec "$@"' \
        without-toolchain "$TOOLCHAIN" "$@"
}

# ---------------------------------------------------------------------------
echo "== make install PREFIX=$PREFIX BUILDDIR=$BUILD from a read-only checkout (the release build takes a few minutes the first time)"
# A fake ldconfig that records its calls: a private prefix must not run it.
printf '#!/bin/sh\necho "$@" >> "%s"\n' "$T/ldconfig.calls" > "$T/ldconfig"
chmod 755 "$T/ldconfig"
t_install() {
    local before after unshare=(unshare -m)
    [ "$(id -u)" = 0 ] || unshare=(unshare -r -m)
    before=$(git status --porcelain --ignored 2>/dev/null | sort)
    "${unshare[@]}" bash -c 'mount --bind -o ro "$1" "$1" && ! touch "$1/.rst-write-probe" 2>/dev/null && shift && exec "$@"' \
        read-only "$REPO" make --no-print-directory -C "$REPO" install PREFIX="$PREFIX" BUILDDIR="$BUILD" LDCONFIG="$T/ldconfig"
    after=$(git status --porcelain --ignored 2>/dev/null | sort)
    expect "nothing written to the checkout" test "$before" = "$after"
    expect "the build products are in BUILDDIR" test -f "$BUILD/release/librestoration.so" -a -f "$BUILD/release/restorectl" -a -f "$BUILD/restoration.pc"
    expect "ldconfig not run for a private prefix" test ! -e "$T/ldconfig.calls"
}
check "make install PREFIX=... BUILDDIR=... from a read-only checkout" t_install
if [ ! -f "$PREFIX/lib/librestoration.so.$VERSION" ]; then
    echo "install: $pass passed, $((fail + 1)) failed" | tee -a "$SUMMARY"; exit 1
fi

t_files() {
    local f
    for f in lib/librestoration.so.$VERSION include/restoration.h include/restoration_plugin.h include/restoration_store.h \
             lib/pkgconfig/restoration.pc bin/restorectl share/man/man1/restorectl.1 share/man/man3/restoration.3; do
        expect "$PREFIX/$f is a file" test -f "$PREFIX/$f"
    done
    expect "librestoration.so.$MAJOR -> librestoration.so.$VERSION" test "$(readlink "$PREFIX/lib/librestoration.so.$MAJOR")" = "librestoration.so.$VERSION"
    expect "librestoration.so -> librestoration.so.$MAJOR" test "$(readlink "$PREFIX/lib/librestoration.so")" = "librestoration.so.$MAJOR"
    expect "headers are 0644" test "$(stat -c %a "$PREFIX/include/restoration.h")" = 644
    expect "restorectl is executable" test -x "$PREFIX/bin/restorectl"
    # The manual pages render, and restoration(3) carries this version.
    if command -v man >/dev/null; then
        man -l "$PREFIX/share/man/man1/restorectl.1" 2>/dev/null | grep -q "restorectl" || { echo "restorectl.1 does not render"; return 1; }
        man -l "$PREFIX/share/man/man3/restoration.3" 2>/dev/null | grep -q "rst_engine_create" || { echo "restoration.3 does not render"; return 1; }
    fi
    grep -q '^\.Dt RESTORECTL 1' "$PREFIX/share/man/man1/restorectl.1" || { echo "restorectl.1 is not a section 1 page"; return 1; }
    grep -q "Restoration $VERSION" "$PREFIX/share/man/man3/restoration.3" || { echo "restoration.3 lacks the version"; return 1; }
}
check "installed files, links and manual pages" t_files

t_versions() {
    cc_pc Tests/install/version.c "$T/version"
    local printed soname
    printed=$("$T/version")
    soname=$(readelf -d "$PREFIX/lib/librestoration.so.$VERSION" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    echo "header $VERSION, rst_version/header: $printed, pkg-config $(pkg-config --modversion restoration), SONAME $soname"
    expect "rst_version() == RST_VERSION_STRING == $VERSION" test "$printed" = "$VERSION $VERSION"
    expect "pkg-config --modversion == $VERSION" test "$(pkg-config --modversion restoration)" = "$VERSION"
    expect "SONAME librestoration.so.$MAJOR" test "$soname" = "librestoration.so.$MAJOR"
    local ctl; ctl=$("$PREFIX/bin/restorectl" --version)
    expect "restorectl --version starts with $VERSION (printed: $ctl)" test "${ctl%% *}" = "$VERSION"
}
check "rst_version(), the header, restoration.pc, the SONAME and the file name agree" t_versions

# The library carries libstdc++, libgcc, libffi and libsodium inside it (its
# start cost in a C program: docs/PERFORMANCE-LEVERS.md, `pfoot`): it needs
# the C runtime alone.
c_runtime_only() {
    local bad
    bad=$(needed "$1" | grep -vE '^(libc\.so\.6|libm\.so\.6|ld-linux-x86-64\.so\.2|ld-linux-aarch64\.so\.1|libdl\.so\.2|libpthread\.so\.0|librt\.so\.1)$' || true)
    [ -z "$bad" ] || { echo "$1 needs: $bad"; return 1; }
}
t_needed() {
    system_only "$PREFIX/lib/librestoration.so.$VERSION"
    c_runtime_only "$PREFIX/lib/librestoration.so.$VERSION"
    system_only "$PREFIX/bin/restorectl"
    needed "$PREFIX/lib/librestoration.so.$VERSION" | tr '\n' ' '; echo
}
check "librestoration needs only libc and libm; restorectl only libc, libm, libstdc++, libgcc_s, libffi, libsodium" t_needed

t_exports() {
    local lib=$PREFIX/lib/librestoration.so.$VERSION others declared missing
    others=$(nm -D --defined-only "$lib" | awk '{ print $3 }' | grep -v '^rst_' || true)
    [ -z "$others" ] || { echo "exported besides rst_*: $(echo "$others" | head -20)"; return 1; }
    declared=$(grep -hoE 'RST_API [^;]*[ *](rst_[a-z0-9_]+)[[:space:]]*\(' Include/restoration.h Include/restoration_store.h | grep -oE 'rst_[a-z0-9_]+[[:space:]]*\($' | tr -d ' (' | sort -u)
    missing=$(comm -23 <(echo "$declared") <(nm -D --defined-only "$lib" | awk '{ print $3 }' | sort -u))
    [ -z "$missing" ] || { echo "declared in the headers but not exported: $missing"; return 1; }
    echo "$(echo "$declared" | wc -l) functions declared, all exported, nothing else"
}
check "the dynamic symbol table holds the rst_* functions and nothing else" t_exports

# One `String.contains(someString)` in the engine links the _StringProcessing
# module (regex parser and all, 1.2 MB of code) into the library: the engine
# uses String.containsBytes(of:) instead (docs/PERFORMANCE-LEVERS.md).
t_no_string_processing() {
    local lib=$PREFIX/lib/librestoration.so.$VERSION n
    n=$(nm "$lib" 2>/dev/null | grep -c '17_StringProcessing' || true)
    [ "$n" = 0 ] || { echo "$n symbols of _StringProcessing in $lib, e.g. $(nm "$lib" | grep '17_StringProcessing' | head -3 | awk '{ print $3 }' | tr '\n' ' ')"; return 1; }
    echo "text $(size "$lib" | awk 'NR == 2 { print $1 }') bytes, no _StringProcessing"
}
check "the library does not carry the _StringProcessing module" t_no_string_processing

# ---------------------------------------------------------------------------
# Out of tree: a C host and the C plugin with pkg-config's flags only.
APP=$T/app
mkdir -p "$APP/plugins" "$APP/src"
chmod 755 "$APP" "$APP/plugins"
cp Examples/countries-c/countries.c Plugins/countries-detail/countries_detail.c \
   Plugins/countries-detail/countries_detail.h "$APP/src/"
t_build_c() {
    local cflags libs
    cflags=$(pkg-config --cflags restoration); libs=$(pkg-config --libs restoration)
    case "$cflags $libs" in *"$REPO"*|*.build*) echo "pkg-config points into the tree: $cflags $libs"; return 1;; esac
    (cd "$APP/src" && cc -std=c11 -Wall -Wextra -Werror $cflags countries.c $libs \
        -Wl,-rpath,"$(pkg-config --variable=libdir restoration)" -o "$APP/countries")
    (cd "$APP/src" && cc -std=c11 -Wall -Wextra -Werror -fPIC -shared $cflags countries_detail.c \
        -o "$APP/plugins/libcountries_detail.so")
    chmod 644 "$APP/plugins/libcountries_detail.so"
    local bad
    bad=$(needed "$APP/plugins/libcountries_detail.so" | grep -v '^libc\.so\.6$' || true)
    [ -z "$bad" ] || { echo "the C plugin needs more than libc: $bad"; return 1; }
}
check "C host and C plugin built with pkg-config flags only (the plugin needs only libc)" t_build_c

# The Swift plugin, self-contained: the runtime linked in, only its C symbols exported.
t_build_swift_plugin() {
    swift build -c release --scratch-path .build-plugin --product CountriesPanesPlugin \
        -Xswiftc -static-stdlib -Xswiftc -use-ld=lld \
        -Xlinker --version-script="$REPO/Plugins/countries-panes/exports.map"
    install -m 644 .build-plugin/release/libCountriesPanesPlugin.so "$APP/plugins/"
    system_only "$APP/plugins/libCountriesPanesPlugin.so"
    local others
    others=$(nm -D --defined-only "$APP/plugins/libCountriesPanesPlugin.so" | awk '{ print $3 }' | grep -vE '^(rst_plugin_manifest_v1|countries_panes_make_map)$' || true)
    [ -z "$others" ] || { echo "the Swift plugin exports more than its C symbols: $(echo "$others" | head)"; return 1; }
}
check "Swift plugin built self-contained (static runtime, C symbols only)" t_build_swift_plugin

t_run_hidden() {
    local out
    out=$(without_toolchain bash -c '
        set -e
        "$0/countries" "$0" first
        "$0/countries" "$0" relaunch
        "$1/bin/restorectl" verify "$0/countries.rst"
        "$1/bin/restorectl" inspect "$0/countries.rst"' "$APP" "$PREFIX" 2>&1) || { echo "$out"; return 1; }
    echo "$out"
    contains "$out" "[countries-detail] restored CountryDetail at Tabs/Countries/Detail: country=NO visits=3 source=Tabs/Countries/List" \
        "[countries-panes] restored MapPane at Tabs/Countries/Detail/Map: zoom=7.5" \
        "report: 6 archived, 6 restored, 0 skipped, 2 plugins loaded, 0 rejected" \
        "saved again through the plugin objects" \
        "Tabs/Countries/Detail/Map  class MapPane"
}
check "toolchain hidden: save, relaunch and restore through both plugins; restorectl verify and inspect" t_run_hidden

# ---------------------------------------------------------------------------
t_signals() {
    cc_pc Tests/install/signals.c "$T/signals" -D_GNU_SOURCE
    "$T/signals" "$T/signals.rst" check
    local rc=0
    "$T/signals" "$T/signals-abort.rst" abort > "$T/abort.out" 2>&1 || rc=$?
    expect "an abort() in the host ends it by SIGABRT (status 134), got $rc" test "$rc" = 134
    expect "an abort() in the host prints nothing from the library, got: $(head -c 600 "$T/abort.out")" test ! -s "$T/abort.out"
}
check "the host's signal dispositions stay; its abort() prints nothing from the library" t_signals

# The README's C example, as printed, is a real program.
t_readme() {
    awk '/^```c$/ { inblock = 1; text = ""; next }
         /^```$/ && inblock { inblock = 0; if (text ~ /int main/) { printf "%s", text; exit } next }
         inblock { text = text $0 "\n" }' README.md > "$T/readme.c"
    grep -q "int main" "$T/readme.c" || { echo "no C example with main() in README.md"; return 1; }
    cc_pc "$T/readme.c" "$T/readme"
    local archive=$T/readme-state/nested/state.rst out rc
    out=$("$T/readme" "$archive") || { echo "first run failed: $out"; return 1; }
    expect "the first run saves, creating the missing folder" test -f "$archive"
    out=$("$T/readme" "$archive")
    expect "the second run restores (printed: $out)" grep -q "restored: scroll 412.5" <<< "$out"
    touch "$T/plain-file"
    rc=0; out=$("$T/readme" "$T/plain-file/state.rst" 2>&1) || rc=$?
    expect "a save that fails exits non-zero (got $rc)" test "$rc" -ne 0
    expect "and says why (printed: $out)" grep -qi "save: RST_ERR_IO: .*plain-file.*not a directory" <<< "$out"
}
check "the README's C example compiles with -Wall -Werror and behaves as it says" t_readme

# A Swift package outside the repo, depending on this one by path, restores
# the archive the C host wrote (through the same two plugin files: a Swift
# host, with its own Swift runtime, loading the C plugin and the
# self-contained Swift plugin).
t_swift_package() {
    local pkg=$T/swift-host
    mkdir -p "$pkg/Sources/swift-host"
    cat > "$pkg/Package.swift" <<EOF
// swift-tools-version: 6.1
import PackageDescription
let package = Package(
    name: "swift-host",
    dependencies: [.package(path: "$REPO")],
    targets: [.executableTarget(name: "swift-host", dependencies: [.product(name: "Restoration", package: "$(basename "$REPO" | tr A-Z a-z)")])],
    swiftLanguageModes: [.v5]
)
EOF
    cp Examples/countries-swift/main.swift "$pkg/Sources/swift-host/main.swift"
    (cd "$pkg" && swift build --scratch-path "$pkg/.build")
    local out
    out=$("$pkg/.build/debug/swift-host" "$APP" relaunch 2>&1) || { echo "$out"; return 1; }
    echo "$out"
    contains "$out" "[countries-detail] restored CountryDetail at Tabs/Countries/Detail" \
        "[countries-panes] restored MapPane at Tabs/Countries/Detail/Map" \
        "detail screen restored (class CountryDetail), map pane restored (class MapPane)"
}
check "a Swift package outside the repo (by path) restores the C host's archive through both plugins" t_swift_package

# The same package depending on this one by version, as a Swift user outside
# gets it: a bare clone of the repository (its committed HEAD), tagged with
# the header's version, used with .package(url: "file://…", from: VERSION).
# SwiftPM refuses a versioned dependency whose product's targets use
# unsafeFlags, so this fails if any target in the Restoration product's
# closure gains one (librestoration's linker flags are fine: it is not in it).
t_swift_package_by_version() {
    local bare=$T/restoration.git pkg=$T/swift-host-version
    git clone --quiet --bare "$REPO" "$bare"
    git -C "$bare" tag -f "$VERSION" "$(git -C "$REPO" rev-parse HEAD)" > /dev/null
    mkdir -p "$pkg/Sources/swift-host"
    cat > "$pkg/Package.swift" <<EOF
// swift-tools-version: 6.1
import PackageDescription
let package = Package(
    name: "swift-host",
    dependencies: [.package(url: "file://$bare", from: "$VERSION")],
    targets: [.executableTarget(name: "swift-host", dependencies: [.product(name: "Restoration", package: "restoration")])],
    swiftLanguageModes: [.v5]
)
EOF
    cp Examples/countries-swift/main.swift "$pkg/Sources/swift-host/main.swift"
    (cd "$pkg" && swift build --scratch-path "$pkg/.build")
    local resolved
    resolved=$(cd "$pkg" && swift package --scratch-path "$pkg/.build" show-dependencies | grep -i 'restoration' || true)
    echo "resolved: $resolved"
    expect "resolved restoration at $VERSION" grep -qF "@$VERSION" <<< "$resolved"
    local out
    out=$("$pkg/.build/debug/swift-host" "$APP" relaunch 2>&1) || { echo "$out"; return 1; }
    grep -qF -- "map pane restored (class MapPane)" <<< "$out" || { echo "$out"; echo "missing: map pane restored"; return 1; }
}
check "a Swift package outside the repo builds against a tagged clone with .package(url:, from: \"$VERSION\")" t_swift_package_by_version

# ---------------------------------------------------------------------------
# restoration-gtk, installed by make install when GTK 4's headers are there:
# its files and links, SONAME and version, NEEDED, exports, and a program
# built with `pkg-config restoration-gtk` alone.
t_gtk() {
    local v so lib exports
    v=$(sed -n 's/^#define RST_GTK_VERSION_STRING "\(.*\)"/\1/p' Toolkits/gtk/restoration-gtk.h)
    so=librestoration-gtk.so.${v%%.*}
    lib=$PREFIX/lib/librestoration-gtk.so.$v
    expect "$lib is a file" test -f "$lib"
    expect "$so -> librestoration-gtk.so.$v" test "$(readlink "$PREFIX/lib/$so")" = "librestoration-gtk.so.$v"
    expect "librestoration-gtk.so -> $so" test "$(readlink "$PREFIX/lib/librestoration-gtk.so")" = "$so"
    expect "restoration-gtk.h is a file" test -f "$PREFIX/include/restoration-gtk.h"
    expect "SONAME $so" test "$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')" = "$so"
    expect "pkg-config --modversion restoration-gtk == $v" test "$(pkg-config --modversion restoration-gtk)" = "$v"
    expect "it needs librestoration.so.$MAJOR" grep -qx "librestoration.so.$MAJOR" <<< "$(needed "$lib")"
    exports=$(nm -D --defined-only "$lib" | awk '$2 == "T" { print $3 }' | sort | tr '\n' ' ')
    expect "it exports rst_gtk_* only (got: $exports)" test "$exports" = "rst_gtk_object rst_gtk_set_identity rst_gtk_set_transparent rst_gtk_skip rst_gtk_track "
    expect "restoration-gtk.3 is installed" test -f "$PREFIX/share/man/man3/restoration-gtk.3"
    cat > "$T/gtk-host.c" <<'EOF'
#include <restoration-gtk.h>
#include <stdio.h>
int main(void) {
    rst_object *(*volatile f)(GtkWidget *) = rst_gtk_object;
    printf("restoration-gtk %s on librestoration %s\n", RST_GTK_VERSION_STRING, rst_version());
    return f == NULL;
}
EOF
    cc -std=c11 -Wall -Wextra -Werror $(pkg-config --cflags restoration-gtk) "$T/gtk-host.c" \
       $(pkg-config --libs restoration-gtk) -Wl,-rpath,"$PREFIX/lib" -o "$T/gtk-host"
    "$T/gtk-host"
}
if pkg-config --exists gtk4; then
    check "restoration-gtk: files, links, SONAME, version, exports, a program built with pkg-config alone" t_gtk
else
    echo "skip install: restoration-gtk (no GTK 4 headers: make deps-gtk)"
fi

# ---------------------------------------------------------------------------
# Which installs refresh the loader's cache: only a real one into /usr or
# /usr/local (shown with make -n: nothing is installed there).
t_ldconfig_rule() {
    local out
    out=$(make --no-print-directory -n install PREFIX=/usr/local BUILDDIR="$BUILD" LDCONFIG=/fake/ldconfig)
    grep -q '/fake/ldconfig' <<< "$out" || { echo "PREFIX=/usr/local: no ldconfig"; return 1; }
    out=$(make --no-print-directory -n install PREFIX=/usr BUILDDIR="$BUILD" LDCONFIG=/fake/ldconfig)
    grep -q '/fake/ldconfig' <<< "$out" || { echo "PREFIX=/usr: no ldconfig"; return 1; }
    out=$(make --no-print-directory -n install PREFIX=/usr DESTDIR="$T/stage" BUILDDIR="$BUILD" LDCONFIG=/fake/ldconfig)
    ! grep -q '/fake/ldconfig' <<< "$out" || { echo "DESTDIR: ldconfig"; return 1; }
    out=$(make --no-print-directory -n install PREFIX="$T/p" BUILDDIR="$BUILD" LDCONFIG=/fake/ldconfig)
    ! grep -q '/fake/ldconfig' <<< "$out" || { echo "a private prefix: ldconfig"; return 1; }
}
check "ldconfig only for a real install into /usr or /usr/local" t_ldconfig_rule

t_destdir() {
    local stage=$T/stage
    make --no-print-directory install DESTDIR="$stage" PREFIX=/usr BUILDDIR="$BUILD" LDCONFIG="$T/ldconfig"
    expect "ldconfig not run for a DESTDIR stage" test ! -e "$T/ldconfig.calls"
    expect "staged restoration_store.h" test -f "$stage/usr/include/restoration_store.h"
    expect "staged library" test -f "$stage/usr/lib/librestoration.so.$VERSION"
    expect "restoration.pc names the final prefix" grep -qx "prefix=/usr" "$stage/usr/lib/pkgconfig/restoration.pc"
    expect "nothing written outside DESTDIR" test ! -e "/usr/lib/librestoration.so.$VERSION"
    make --no-print-directory uninstall DESTDIR="$stage" PREFIX=/usr LDCONFIG="$T/ldconfig"
    local left; left=$(find "$stage" -type f -o -type l)
    [ -z "$left" ] || { echo "left after uninstall: $left"; return 1; }
}
check "DESTDIR staging, then uninstall from it" t_destdir

t_uninstall() {
    make --no-print-directory uninstall PREFIX="$PREFIX" LDCONFIG="$T/ldconfig"
    expect "ldconfig not run for a private prefix" test ! -e "$T/ldconfig.calls"
    local left; left=$(find "$PREFIX" -type f -o -type l)
    [ -z "$left" ] || { echo "left after uninstall: $left"; return 1; }
}
check "make uninstall removes every installed file" t_uninstall

echo "install: $pass passed, $fail failed" | tee -a "$SUMMARY"
[ "$fail" = 0 ]
