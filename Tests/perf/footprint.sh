#!/usr/bin/env bash
# Tests/perf/footprint.sh [BIN] [RUNS]: what linking librestoration.so.1
# costs a C program that never calls it at start. A tiny program (prints
# VmRSS of /proc/self/status at main, calls rst_last_error so the library is
# really needed) is built twice: against BIN/librestoration.so and without
# it. Prints the start time of each (hyperfine when installed, else RUNS
# runs, default 200, in alternating batches of 20), the resident memory at main, the
# libraries it needs, the symbol relocations at start, and the library's
# size: the file, and text/data/bss as `size` counts them (text is every
# read-only allocated section: code, read-only data, unwind tables). Ends
# with the verdicts of the two targets (start <= +0.4 ms, resident <= +2 MB;
# `make bench` runs this) and exits 1 when one is missed (NO_TARGETS=1: 0).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:-$(swift build -c release --show-bin-path)}
RUNS=${2:-200}
. Tests/perf/library.sh
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
measured_library "$BIN" "$T/lib"
cat > "$T/tiny.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#ifdef WITH_LIB
#include <restoration.h>
#endif
int main(int argc, char **argv) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256]; long rss = 0;
    while (f && fgets(line, sizeof line, f)) if (strncmp(line, "VmRSS:", 6) == 0) rss = atol(line + 6);
    if (f) fclose(f);
#ifdef WITH_LIB
    if (argc > 5) puts(rst_last_error());
#endif
    if (argc > 1) printf("%ld\n", rss);
    return 0;
}
C
cc -O2 -IInclude -DWITH_LIB "$T/tiny.c" -L"$T/lib" -Wl,--no-as-needed -lrestoration -Wl,-rpath,"$T/lib" -o "$T/with"
cc -O2 "$T/tiny.c" -o "$T/without"
deps=$(ldd "$T/with")
grep -q "librestoration.so.1 => $T/lib" <<< "$deps" || { echo "the program does not load $T/lib/librestoration.so.1" >&2; exit 1; }
# ORDER=FILE: (re)writes FILE, the library's start-up functions for lld's
# --symbol-ordering-file (Sources/librestoration/startup.order): those of
# librestoration.so that run in the tiny program, found by callgrind. Its
# leading comment is kept.
if [ -n "${ORDER:-}" ]; then
    valgrind --tool=callgrind --demangle=no --callgrind-out-file="$T/cg.order" "$T/with" > /dev/null 2>&1
    { if [ -f "$ORDER" ]; then sed -n '/^#/!q; p' "$ORDER"; fi
      callgrind_annotate --threshold=100 "$T/cg.order" | sed -n "s|.*???:\(.*\) \[$T/lib/librestoration.so\]\$|\1|p" \
        | sed "s/'[0-9]*\$//" | grep -v '^0x' | sort -u
    } > "$T/order"
    mv "$T/order" "$ORDER"
    echo "$ORDER: $(grep -vc '^#' "$ORDER") functions"
fi
# Without hyperfine: both programs in alternating batches of 20 runs, so
# that a change of the machine's load falls on both alike; wall clock and
# CPU time (user + system of the children, from bash's `times`, read in
# this shell: $(times) would be a subshell's) summed per program.
if ! command -v hyperfine >/dev/null; then
    "$T/without" >/dev/null; "$T/with" >/dev/null   # warm the page cache
    secs() { awk 'function sec(t,  m) { m = t; sub(/m.*/, "", m); sub(/^[0-9]*m/, "", t); sub(/s$/, "", t); return m * 60 + t }
                  { print sec($1) + sec($2) }' "$1" | tail -1; }
    wall_without=0 wall_with=0 cpu_sum_without=0 cpu_sum_with=0
    for ((b = 0; b < (RUNS + 19) / 20; b++)); do
        for p in without with; do
            times > "$T/times0"; s=$(date +%s%N)
            for ((i = 0; i < 20; i++)); do "$T/$p"; done
            e=$(date +%s%N); times > "$T/times1"
            eval "wall_$p=\$(( wall_$p + e - s ))"
            eval "cpu_sum_$p=\$(awk -v a=\"\$(secs "$T/times0")\" -v b=\"\$(secs "$T/times1")\" -v t=\"\$cpu_sum_$p\" 'BEGIN { print t + b - a }')"
        done
    done
    runs=$(( (RUNS + 19) / 20 * 20 ))
fi
for p in without with; do
    "$T/$p" >/dev/null   # warm the page cache
    cpu=
    if command -v hyperfine >/dev/null; then
        ms=$(hyperfine -N -w 20 -r "$RUNS" --export-json "$T/$p.json" "$T/$p" >/dev/null 2>&1 && sed -n 's/.*"median": *\([0-9.e-]*\).*/\1/p' "$T/$p.json" | head -1 | awk '{ printf "%.3f", $1 * 1000 }')
        # CPU time (user + system, means): steadier than the wall clock on a loaded machine.
        cpu=$(sed -n 's/.*"\(user\|system\)": *\([0-9.e-]*\).*/\2/p' "$T/$p.json" | head -2 | awk '{ t += $1 } END { printf "%.3f", t * 1000 }')
    else
        eval "w=\$wall_$p; c=\$cpu_sum_$p"
        ms=$(awk -v w="$w" -v n="$runs" 'BEGIN { printf "%.3f", w / n / 1e6 }')
        cpu=$(awk -v c="$c" -v n="$runs" 'BEGIN { printf "%.3f", c / n * 1000 }')
    fi
    rss=$("$T/$p" rss)
    # Instructions of the whole run, the dynamic loader included (repeat on a loaded machine).
    ins=0
    if command -v valgrind >/dev/null; then
        valgrind --tool=callgrind --callgrind-out-file="$T/cg.$p" "$T/$p" > /dev/null 2> "$T/vg.$p"
        ins=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$T/vg.$p")
    fi
    echo "$p: start $ms ms${cpu:+ ($cpu ms of CPU)} ($ins instructions), VmRSS at main $rss KiB"
    eval "ms_$p=$ms; cpu_$p=$cpu; rss_$p=$rss; ins_$p=$ins"
done
awk -v a="$ms_with" -v b="$ms_without" -v r="$rss_with" -v q="$rss_without" -v i="$ins_with" -v j="$ins_without" \
    -v c="$cpu_with" -v d="$cpu_without" 'BEGIN {
    printf "librestoration.so.1 costs: start +%.3f ms (+%d instructions), resident +%.2f MiB\n", a - b, i - j, (r - q) / 1024
    if (c != "") printf "start in CPU time (user + system): +%.3f ms\n", c - d }'
# What the loader does for it: the libraries it needs, and the symbol
# relocations of the whole start (glibc's LD_DEBUG=statistics).
relocs() { LD_DEBUG=statistics "$T/$1" 2>&1 >/dev/null | sed -n 's/.*[^l] number of relocations: *\([0-9]*\).*/\1/p' | head -1; }
echo "librestoration.so needs: $(readelf -d "$T/lib/librestoration.so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
echo "symbol relocations at start: $(relocs without) without it, $(relocs with) with it"
read -r text data bss _ < <(size "$T/lib/librestoration.so" | tail -1)
echo "librestoration.so: file $(stat -c %s "$BIN/librestoration.so") bytes; text $text, data $data, bss $bss (size)"
# The targets of what a C program pays (make bench): start <= +0.4 ms (the
# CPU time when measured, steadier on a loaded machine than the wall
# clock, which is printed above), resident <= +2 MB. The text size is not a
# target: the static Swift runtime alone is 3.1 MB and cannot be dropped.
awk -v a="$ms_with" -v b="$ms_without" -v c="$cpu_with" -v d="$cpu_without" -v r="$rss_with" -v q="$rss_without" 'BEGIN {
    start = (c != "" && d != "") ? c - d : a - b
    how = (c != "" && d != "") ? "CPU time" : "wall clock"
    mem = (r - q) * 1024
    ok1 = start <= 0.4; ok2 = mem <= 2000000
    printf "footprint targets: start +%.3f ms (%s) <= 0.4 ms: %s; resident +%.2f MB <= 2 MB: %s\n", start, how, ok1 ? "met" : "MISSED", mem / 1e6, ok2 ? "met" : "MISSED"
    exit !(ok1 && ok2) }' || [ -n "${NO_TARGETS:-}" ]
