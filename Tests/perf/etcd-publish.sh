#!/usr/bin/env bash
# What publishing through etcd costs the caller: Tests/perf/etcd-publish.c
# against a local 3-member cluster (started and stopped here, as the tests
# do) and the file store, for the same archives. ROUNDS=20 by default.
#   Tests/perf/etcd-publish.sh [ROUNDS]
set -uo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-20}
make --no-print-directory -s etcd >/dev/null || { echo "make etcd failed" >&2; exit 1; }
BIN=$(swift build --show-bin-path)
OUT=$(mktemp -d /tmp/rst-etcd-bench.XXXXXX)
CL="$PWD/Tests/etcd/cluster.sh"
trap '"$CL" "$OUT" stop-all; rm -rf "$OUT"' EXIT
cc -std=c11 -O2 -Wall -Wextra -Werror -IInclude -IStores/etcd Tests/perf/etcd-publish.c -L.build/etcd -l:librestoration-etcd.so.1 \
   -L"$BIN" -lrestoration -Wl,-rpath,"$PWD/.build/etcd:$BIN" -o "$OUT/etcd-publish" || exit 1
"$CL" "$OUT" create m1 m2 m3
for m in m1 m2 m3; do "$CL" "$OUT" start $m & done; wait
eps="$("$CL" "$OUT" endpoint m1),$("$CL" "$OUT" endpoint m2),$("$CL" "$OUT" endpoint m3)"
echo "3-member etcd $(etcd --version | head -1 | sed 's/etcd Version: //') on 127.0.0.1 (--unsafe-no-fsync), $ROUNDS writes per size, $(nproc) cores"
"$OUT/etcd-publish" "$eps" "$OUT" "$ROUNDS"
