#!/usr/bin/env bash
# Tests/perf/shared-runtime.sh [STATIC_BIN] [ROUNDS] [RUNS]: what
# librestoration.so.1 would cost a C program if it were linked against the
# toolchain's SHARED Swift runtime (libswiftCore.so and the rest) instead
# of carrying it statically as it ships. Figures for a packaging decision
# (docs/PERFORMANCE-LEVERS.md, `pshared`); a perf script like
# footprint.sh: not part of `swift test`, the Makefile's tests or CI, and
# it changes nothing in the product's build.
#
# The shared variant is built from a copy of the package, never from the
# checked-in Package.swift: the work tree's files (tracked and untracked,
# not ignored) are copied into SCRATCH/package (default SCRATCH:
# .build-shared; a file is copied again only when it differs, with its
# mtime, so the next build is incremental; one gone from the work tree goes
# from the copy), and the copy's Package.swift loses the
# `librestoration` target's "-static-stdlib" and nothing else: the Swift
# driver then links the shared runtime and puts the toolchain's runtime
# folder (swiftc's ../lib/swift/linux) in the library's RUNPATH itself,
# which is checked. `swift build -c release --product restoration
# --package-path SCRATCH/package --scratch-path SCRATCH` builds it; its
# library is SCRATCH/release/librestoration.so. SHARED_BIN=DIR skips the
# build and measures DIR/librestoration.so instead.
#
# STATIC_BIN holds the shipped, static library (default: this package's
# `swift build -c release --show-bin-path`, as footprint.sh). Then
# footprint.sh runs ROUNDS times (default 5) for each build, interleaved
# (static, shared, static, ...), each with RUNS start-ups (default 200,
# hyperfine when installed): the cost of each is the program with the
# library minus the same program without it in the same run, and the
# table gives the median of the rounds and their range (on a loaded
# machine the wall clock jumps; the CPU time and the instructions do not).
# The resident memory is also split into clean file pages and dirty ones
# (`cat /proc/self/smaps_rollup` with the library preloaded). It also lists
# what the program maps for the shared build that it does not map for the
# static one (the Swift runtime's libraries, libstdc++, libgcc_s: ldd of
# each library), with their `size` text and file size. CALLGRIND=1 adds
# Tests/perf/callgrind.sh (instructions per object of the save and the
# three restores) for both builds.
set -euo pipefail
cd "$(dirname "$0")/../.."
STATIC_BIN=$(cd "${1:-$(swift build -c release --show-bin-path)}" && pwd)
ROUNDS=${2:-5}
RUNS=${3:-200}
[ -f "$STATIC_BIN/librestoration.so" ] || { echo "no $STATIC_BIN/librestoration.so: swift build -c release --product restoration" >&2; exit 3; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT

# The shared variant.
if [ -n "${SHARED_BIN:-}" ]; then
    SHARED_BIN=$(cd "$SHARED_BIN" && pwd)
else
    SCRATCH=${SCRATCH:-.build-shared}
    mkdir -p "$SCRATCH"; SCRATCH=$(cd "$SCRATCH" && pwd)
    src=$SCRATCH/package
    mkdir -p "$src"
    git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
        [ -e "$f" ] || continue   # deleted from the work tree, not yet from the index
        cmp -s "$f" "$src/$f" 2>/dev/null || { mkdir -p "$src/$(dirname "$f")"; cp -pP "$f" "$src/$f"; }
    done
    # A file gone from the work tree goes from the copy too (the copy's own
    # Package.resolved and .swiftpm stay); the work tree's Package.resolved,
    # when it has one, pins the same dependencies.
    (cd "$src" && find . -type f ! -name Package.resolved ! -path './.swiftpm/*' -printf '%P\0') \
        | while IFS= read -r -d '' f; do [ -e "$f" ] || rm -f "$src/$f"; done
    if [ -f Package.resolved ]; then cmp -s Package.resolved "$src/Package.resolved" || cp -p Package.resolved "$src/"; fi
    [ "$(grep -c '"-static-stdlib", ' Package.swift)" = 1 ] \
        || { echo "Package.swift: not one \"-static-stdlib\" to take out; update $0" >&2; exit 1; }
    sed 's/"-static-stdlib", //' Package.swift > "$T/Package.swift"
    cmp -s "$T/Package.swift" "$src/Package.swift" || cp "$T/Package.swift" "$src/Package.swift"
    echo "building the shared-runtime variant in $SCRATCH (the package copied to $src, without -static-stdlib)" >&2
    swift build -c release --product restoration --package-path "$src" --scratch-path "$SCRATCH" >&2
    SHARED_BIN=$SCRATCH/release
fi
[ -f "$SHARED_BIN/librestoration.so" ] || { echo "no $SHARED_BIN/librestoration.so" >&2; exit 3; }
runtime=$(readlink -f "$(dirname "$(readlink -f "$(command -v swiftc)")")/../lib/swift/linux")
readelf -d "$SHARED_BIN/librestoration.so" | grep -q "NEEDED.*\[libswiftCore.so\]" \
    || { echo "$SHARED_BIN/librestoration.so does not need libswiftCore.so: not the shared-runtime variant" >&2; exit 1; }
readelf -d "$SHARED_BIN/librestoration.so" | grep "RUNPATH" | grep -qF "$runtime" \
    || { echo "$SHARED_BIN/librestoration.so: $runtime is not in its RUNPATH" >&2; exit 1; }

# Start, resident memory, instructions: footprint.sh, interleaved rounds.
for ((r = 1; r <= ROUNDS; r++)); do
    for b in static shared; do
        if [ $b = static ]; then bin=$STATIC_BIN; else bin=$SHARED_BIN; fi
        Tests/perf/footprint.sh "$bin" "$RUNS" > "$T/fp.$b.$r"
        echo "round $r, $b: $(sed -n 's/^librestoration.so.1 costs: //p' "$T/fp.$b.$r")" >&2
    done
done
# field B WHAT: the rounds' values of one figure of build B, one a line.
field() {
    local b=$1 what=$2 f
    for f in "$T"/fp.$b.*; do
        case $what in
            wall) sed -n 's/^librestoration.so.1 costs: start +\([0-9.-]*\) ms.*/\1/p' "$f" ;;
            cpu) sed -n 's/^start in CPU time (user + system): +\([0-9.-]*\) ms/\1/p' "$f" ;;
            ins) sed -n 's/^librestoration.so.1 costs: .*(+\([0-9-]*\) instructions).*/\1/p' "$f" ;;
            rss) sed -n 's/^librestoration.so.1 costs: .*resident +\([0-9.-]*\) MiB/\1/p' "$f" ;;
            abs_wall) sed -n 's/^with: start \([0-9.]*\) ms.*/\1/p' "$f" ;;
            abs_cpu) sed -n 's/^with: .*(\([0-9.]*\) ms of CPU).*/\1/p' "$f" ;;
            abs_rss) sed -n 's/^with: .*VmRSS at main \([0-9]*\) KiB/\1/p' "$f" ;;
            relocs) sed -n 's/^symbol relocations at start: .*, \([0-9]*\) with it/\1/p' "$f" ;;
        esac
    done
}
# summary B WHAT: "median (min to max)" of the rounds (of an even number,
# the lower of the two middle ones: a value measured, in its own format).
summary() {
    field "$1" "$2" | sort -g | awk '{ v[NR] = $1 } END {
        if (NR == 0) { print "n/a"; exit }
        m = v[int((NR + 1) / 2)]
        if (v[1] == v[NR]) print m; else printf "%s (%s to %s)\n", m, v[1], v[NR] }'
}

# Resident memory by kind: `cat /proc/self/smaps_rollup` with the library
# preloaded (its constructors run, as in any program) minus without it,
# the median of 11 runs: clean pages (file pages, shared with every other
# process that maps the same file, and dropped under memory pressure)
# and dirty ones (the process's own: relocated data, heap, stacks).
. Tests/perf/library.sh
measured_library "$STATIC_BIN" "$T/static"
measured_library "$SHARED_BIN" "$T/shared"
rollup() { # rollup [LIBRARY]: "clean dirty" KiB of a `cat`
    if [ -n "${1:-}" ]; then LD_PRELOAD=$1 cat /proc/self/smaps_rollup; else cat /proc/self/smaps_rollup; fi \
        | awk '/^(Shared|Private)_Clean:/ { c += $2 } /^(Shared|Private)_Dirty:/ { d += $2 } END { print c, d }'
}
for ((i = 0; i < 11; i++)); do
    read -r c0 d0 < <(rollup)
    for b in static shared; do
        read -r c d < <(rollup "$T/$b/librestoration.so")
        echo $((c - c0)) >> "$T/clean.$b"; echo $((d - d0)) >> "$T/dirty.$b"
    done
done
median() { sort -g "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# What each library makes the program map: ldd of the library (the tiny
# program itself adds only libc). text_of FILE: `size`'s text.
text_of() { size "$1" | awk 'NR == 2 { print $1 }'; }
maps() { ldd "$1" | sed -n 's/.*=> \(\/[^ ]*\) (.*/\1/p' | xargs -r readlink -f | sort -u; }
maps "$STATIC_BIN/librestoration.so" > "$T/maps.static"
maps "$SHARED_BIN/librestoration.so" > "$T/maps.shared"
comm -13 "$T/maps.static" "$T/maps.shared" > "$T/extra"
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ' | sed 's/ $//'; }
ts=$(text_of "$STATIC_BIN/librestoration.so"); th=$(text_of "$SHARED_BIN/librestoration.so")
extra_text=0; extra_file=0
echo
echo "What the shared build makes the program map that the static build does not:"
echo
echo "| library | text (\`size\`) | file |"
echo "|---|---:|---:|"
while read -r lib; do
    t=$(text_of "$lib"); s=$(stat -c %s "$lib")
    extra_text=$((extra_text + t)); extra_file=$((extra_file + s))
    echo "| $(basename "$lib") | $t | $s |"
done < "$T/extra"
echo "| **all of them** | **$extra_text** | **$extra_file** |"
echo
echo "| | static runtime (as shipped) | shared runtime |"
echo "|---|---:|---:|"
echo "| start, wall clock (median of the hyperfine medians) | +$(summary static wall) ms | +$(summary shared wall) ms |"
echo "| start, CPU time (user + system) | +$(summary static cpu) ms | +$(summary shared cpu) ms |"
echo "| start, instructions (callgrind, loader included) | +$(summary static ins) | +$(summary shared ins) |"
echo "| VmRSS at \`main\` | +$(summary static rss) MiB | +$(summary shared rss) MiB |"
echo "| of which clean (file pages, shareable) / dirty (the process's own), KiB | +$(median "$T/clean.static") / +$(median "$T/dirty.static") | +$(median "$T/clean.shared") / +$(median "$T/dirty.shared") |"
echo "| the program with the library: start, CPU, VmRSS | $(summary static abs_wall) ms, $(summary static abs_cpu) ms, $(summary static abs_rss) KiB | $(summary shared abs_wall) ms, $(summary shared abs_cpu) ms, $(summary shared abs_rss) KiB |"
echo "| symbol relocations at start (the program alone: $(sed -n 's/^symbol relocations at start: \([0-9]*\) without.*/\1/p' "$T/fp.static.1")) | $(summary static relocs) | $(summary shared relocs) |"
echo "| text of librestoration.so (\`size\`) | $ts | $th |"
echo "| text of what else it maps and the static build does not | 0 | $extra_text |"
echo "| text, all told | $ts | $((th + extra_text)) |"
echo "| librestoration.so file (with debug info, as built) | $(stat -c %s "$STATIC_BIN/librestoration.so") | $(stat -c %s "$SHARED_BIN/librestoration.so") |"
echo "| librestoration.so file without debug info (\`strip --strip-debug\`) | $(stat -c %s "$T/static/librestoration.so") | $(stat -c %s "$T/shared/librestoration.so") |"
echo "| NEEDED | $(needed "$STATIC_BIN/librestoration.so") | $(needed "$SHARED_BIN/librestoration.so") |"
echo "| libraries the program loads for it (ldd) | $(wc -l < "$T/maps.static") | $(wc -l < "$T/maps.shared") |"
echo
echo "($ROUNDS rounds of Tests/perf/footprint.sh each, interleaved, $RUNS runs a round; median (min to max) of the rounds; load average $(cut -d' ' -f1-3 /proc/loadavg))"

if [ -n "${CALLGRIND:-}" ]; then
    echo
    echo "Tests/perf/callgrind.sh, instructions per object:"
    echo
    echo "| | static runtime | shared runtime |"
    echo "|---|---:|---:|"
    Tests/perf/callgrind.sh "$STATIC_BIN" > "$T/cg.static"
    Tests/perf/callgrind.sh "$SHARED_BIN" > "$T/cg.shared"
    per() { grep ' per object$' "$1" | sed -n "$2p" | sed 's/.* \([0-9]*\) per object$/\1/'; }
    n=0
    for what in "save (rst_save_to_buffer)" "restore from a buffer" "restore from a file" "migrated restore"; do
        n=$((n + 1))
        echo "| $what | $(per "$T/cg.static" $n) | $(per "$T/cg.shared" $n) |"
    done
fi
