#!/usr/bin/env bash
# Tests/perf/callgrind.sh [BIN] [N]: instructions per object of one
# rst_save_to_buffer, one rst_restore_from_buffer, one rst_restore of a
# file, and one rst_restore_from_buffer with every record migrated (the
# last line, "migrated"; callgrind counts
# instructions, so the numbers repeat on a loaded machine). BIN is the folder
# holding a release librestoration.so (default: swift build -c release).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:-$(swift build -c release --show-bin-path)}
N=${2:-20000}
[ -f "$BIN/librestoration.so" ] || { echo "no $BIN/librestoration.so: swift build -c release --product restoration" >&2; exit 3; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
# valgrind 3.19 gives up on the DWARF 5 debug info lld writes ("ensure_valid
# failed"): measure a copy without it (symbols stay, so do the counts).
mkdir "$T/lib"
strip --strip-debug -o "$T/lib/librestoration.so" "$BIN/librestoration.so"
ln -s librestoration.so "$T/lib/librestoration.so.1"
cc -O2 -std=c11 -IInclude Tests/perf/callgrind-driver.c -L"$T/lib" -lrestoration -Wl,-rpath,"$T/lib" -o "$T/driver"
"$T/driver" "$N" "$T/state.rst"
for fn in rst_save_to_buffer rst_restore_from_buffer rst_restore; do
    valgrind --tool=callgrind --callgrind-out-file="$T/cg.$fn" --toggle-collect="$fn" "$T/driver" "$N" "$T/state.rst" > /dev/null 2> "$T/vg.log" \
        || { cat "$T/vg.log" >&2; exit 1; }
    total=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$T/vg.log")
    echo "$fn: $total instructions, $((total / N)) per object"
done
MIGRATE=1 valgrind --tool=callgrind --callgrind-out-file="$T/cg.migrate" --toggle-collect=rst_restore_from_buffer "$T/driver" "$N" > /dev/null 2> "$T/vg.log" \
    || { cat "$T/vg.log" >&2; exit 1; }
total=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$T/vg.log")
echo "rst_restore_from_buffer, every record migrated: $total instructions, $((total / N)) per object"
[ -z "${KEEP:-}" ] || { mkdir -p "$KEEP"; cp "$T"/cg.* "$KEEP"/; echo "callgrind files in $KEEP"; }
