#!/usr/bin/env bash
# Tests/perf/callgrind.sh [BIN] [N]: instructions per object of one
# rst_save_to_buffer, one rst_restore_from_buffer, one rst_restore of a
# file, and one rst_restore_from_buffer with every record migrated (the
# last line, "migrated"; callgrind counts
# instructions, so the numbers repeat on a loaded machine). Then the same
# for the users' shape (Tests/perf/callgrind-users.c: full-range and
# negative integers, 20 classes, a six-level tree, 24-character
# identifiers): its save and restore, their ratio to the first driver's
# (targets: at most 1.4), and the same driver with small integers (SMALL=1)
# beside it: the script fails when integers of any magnitude do not cost
# within 15% of each other. BIN is the folder
# holding a release librestoration.so (default: swift build -c release).
# MASSIF=1: then the engine's own heap during rst_restore of a file of
# MASSIF_N objects (default 100000; the driver's FILE_ONLY=1), by valgrind
# massif: the peak heap of the run minus the peak of the same run stopped
# just before rst_restore (NO_RESTORE=1), over the archive's size. The
# driver's host objects exist before the restore, so they are excluded.
# A read-only mapping of the file is not heap: massif does not count it.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:-$(swift build -c release --show-bin-path)}
N=${2:-20000}
. Tests/perf/library.sh
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
measured_library "$BIN" "$T/lib"
cc -O2 -std=c11 -IInclude Tests/perf/callgrind-driver.c -L"$T/lib" -lrestoration -Wl,-rpath,"$T/lib" -o "$T/driver"
"$T/driver" "$N" "$T/state.rst"
for fn in rst_save_to_buffer rst_restore_from_buffer rst_restore; do
    valgrind --tool=callgrind --callgrind-out-file="$T/cg.$fn" --toggle-collect="$fn" "$T/driver" "$N" "$T/state.rst" > /dev/null 2> "$T/vg.log" \
        || { cat "$T/vg.log" >&2; exit 1; }
    total=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$T/vg.log")
    echo "$fn: $total instructions, $((total / N)) per object"
    eval "first_$fn=\$total"
done
count() { # count FN PROGRAM ARGS...: the instructions of FN's calls
    local fn=$1; shift
    valgrind --tool=callgrind --callgrind-out-file="$T/cg.$fn.$(basename "$1")${SMALL:+.small}" --toggle-collect="$fn" "$@" > /dev/null 2> "$T/vg.log" \
        || { cat "$T/vg.log" >&2; exit 1; }
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$T/vg.log"
}
MIGRATE=1 valgrind --tool=callgrind --callgrind-out-file="$T/cg.migrate" --toggle-collect=rst_restore_from_buffer "$T/driver" "$N" > /dev/null 2> "$T/vg.log" \
    || { cat "$T/vg.log" >&2; exit 1; }
total=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$T/vg.log")
echo "rst_restore_from_buffer, every record migrated: $total instructions, $((total / N)) per object"
# The users' shape, beside the first driver's figures.
cc -O2 -std=c11 -IInclude Tests/perf/callgrind-users.c -L"$T/lib" -lrestoration -Wl,-rpath,"$T/lib" -o "$T/users"
"$T/users" "$N"
verdicts=()
for fn in rst_save_to_buffer rst_restore_from_buffer; do
    large=$(count "$fn" "$T/users" "$N")
    small=$(SMALL=1 count "$fn" "$T/users" "$N")
    first_var=first_$fn; first=${!first_var}
    awk -v fn="$fn" -v l="$large" -v s="$small" -v f="$first" -v n="$N" 'BEGIN {
        printf "users %s: %d instructions, %d per object, %.2fx the first driver (target 1.40); small integers %d per object, large/small %.2f (target within 15%%)\n",
            fn, l, l / n, l / f, s / n, l / s }'
    awk -v l="$large" -v s="$small" -v f="$first" 'BEGIN { exit !(l <= 1.4 * f) }' || verdicts+=("$fn: users above 1.4x the first driver")
    awk -v l="$large" -v s="$small" 'BEGIN { r = l / s; exit !(r <= 1.15 && r >= 1 / 1.15) }' || verdicts+=("$fn: large and small integers more than 15% apart")
done
if [ -n "${MASSIF:-}" ]; then
    M=${MASSIF_N:-100000}
    rm -f "$T/big.rst"
    FILE_ONLY=1 "$T/driver" "$M" "$T/big.rst" > /dev/null   # writes the archive
    size=$(stat -c %s "$T/big.rst")
    peak() { # the largest mem_heap_B of a massif run of the driver
        env "$@" valgrind --tool=massif --massif-out-file="$T/ms.out" "$T/driver" "$M" "$T/big.rst" > /dev/null 2> "$T/vg.log" \
            || { cat "$T/vg.log" >&2; exit 1; }
        sed -n 's/^mem_heap_B=//p' "$T/ms.out" | sort -n | tail -1
    }
    before=$(peak FILE_ONLY=1 NO_RESTORE=1)
    [ -z "${KEEP:-}" ] || { mkdir -p "$KEEP"; cp "$T/ms.out" "$KEEP/ms.before"; }
    whole=$(peak FILE_ONLY=1)
    [ -z "${KEEP:-}" ] || { mkdir -p "$KEEP"; cp "$T/ms.out" "$KEEP/ms.restore"; }
    awk -v b="$before" -v w="$whole" -v s="$size" -v m="$M" 'BEGIN {
        printf "rst_restore of a %d-object file (%d bytes): engine heap peak %.1f MiB above the %.1f MiB before it, %.2fx the archive\n", m, s, (w - b) / 1048576, b / 1048576, (w - b) / s }'
fi
[ -z "${KEEP:-}" ] || { mkdir -p "$KEEP"; cp "$T"/cg.* "$KEEP"/; echo "callgrind files in $KEEP"; }
if [ ${#verdicts[@]} -gt 0 ]; then
    printf 'callgrind.sh: %s\n' "${verdicts[@]}" >&2
    [ -n "${NO_TARGETS:-}" ] || exit 1
fi
