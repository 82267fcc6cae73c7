#!/usr/bin/env bash
# restoration-etcd against real etcd clusters started here, on 127.0.0.1
# with free ports and temporary data folders, stopped by the pids started
# here (SIGTERM, then SIGKILL after a grace period) whatever happens:
#   main  three members: round trips through another member, a follower then
#         the leader killed during a save loop, two of three killed (offline,
#         then online), an owner killed, a stale owner fenced, a handoff,
#         failover past a dead endpoint, max_archive_bytes, chunks collected,
#         an owner of this machine whose process is gone, a writer that never pauses, writers killed in the middle of a publish,
#         a start while unreachable (then a conflict copy after a lost lease),
#         an endpoint of another cluster
#   auth  one member with authentication (tokens of 2 s): a role per person
#         on a prefix, a wrong password, re-authentication
#   quota one member with --quota-backend-bytes: "database space exceeded"
#   tls   one member serving https with a test CA, at most 256 KiB a request
# then the parser's fuzz corpus replayed. Each scenario is a run of
# Tests/etcd/etcd_test; every wait is bounded (a scenario gets 150 s).
# Appends "etcd: N passed, M failed" to the summary file given as $1.
set -uo pipefail
cd "$(dirname "$0")/../.."
SUMMARY=${1:-/dev/null}
CONFIG=${CONFIG:-debug}
pass=0; fail=0
finish() { echo "etcd: $pass passed, $fail failed" | tee -a "$SUMMARY"; [ "$fail" = 0 ]; exit $?; }
ok() { pass=$((pass + 1)); echo "ok: $1"; }
bad() { fail=$((fail + 1)); echo "FAILED: $1"; }

for tool in etcd etcdctl curl jq openssl python3; do
  command -v $tool >/dev/null || { bad "$tool is not installed (.ci/run installs etcd-server, etcd-client)"; finish; }
done
make --no-print-directory -s etcd CONFIG="$CONFIG" >/dev/null || { bad "make etcd"; finish; }
BIN=$(swift build -c "$CONFIG" --show-bin-path)
OUT=$(mktemp -d /tmp/rst-etcd.XXXXXX)
CL="$PWD/Tests/etcd/cluster.sh"
cleanup() { "$CL" "$OUT" stop-all; rm -rf "$OUT"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

if cc -std=c11 -Wall -Wextra -Werror -g -IInclude -IStores/etcd Tests/etcd/etcd_test.c \
     -L.build/etcd -l:librestoration-etcd.so.1 -L"$BIN" -lrestoration \
     -Wl,-rpath,"$PWD/.build/etcd:$BIN" -o "$OUT/etcd_test"; then
  ok "compile the store's test program"
else
  bad "compile the store's test program"; finish
fi

# Certificates for the TLS member: a CA that signs 127.0.0.1, and another CA.
(cd "$OUT" && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 1 -subj /CN=rst-test-ca &&
  openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr -subj /CN=127.0.0.1 &&
  printf 'subjectAltName=IP:127.0.0.1\n' > ext &&
  openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem -days 1 -extfile ext &&
  openssl req -x509 -newkey rsa:2048 -nodes -keyout other.key -out other.pem -days 1 -subj /CN=rst-other-ca) >/dev/null 2>&1 \
  || { bad "make test certificates with openssl"; finish; }

"$CL" "$OUT" create m1 m2 m3
"$CL" "$OUT" create a1 -- --auth-token-ttl=2
"$CL" "$OUT" create q1 -- --quota-backend-bytes=25165824
CLIENT_SCHEME=https CLIENT_CA="$OUT/ca.pem" "$CL" "$OUT" create t1 -- --cert-file "$OUT/srv.pem" --key-file "$OUT/srv.key" --max-request-bytes=262144
pids=()
for m in m1 m2 m3 a1 q1 t1; do "$CL" "$OUT" start $m & pids+=($!); done
started=1
for p in "${pids[@]}"; do wait "$p" || started=0; done
[ $started = 1 ] && ok "start 6 etcd members (3 + auth + quota + tls), each healthy" || { bad "start the etcd members (logs in $OUT)"; finish; }

# The auth member: root, and a role per person with a permission on that person's prefix.
A=$("$CL" "$OUT" endpoint a1)
ectl() { ETCDCTL_API=3 etcdctl --endpoints="$A" --command-timeout=5s "$@"; }
setup_auth() {
  ectl user add root --new-user-password=root-pw >/dev/null || return 1
  ectl role add root >/dev/null 2>&1   # etcd may have made it already
  ectl user grant-role root root >/dev/null || return 1
  for u in alice bob; do
    ectl user add $u --new-user-password=$u-pw >/dev/null &&
    ectl role add $u >/dev/null &&
    ectl role grant-permission $u --prefix=true readwrite /restoration/v1/u/$u/ >/dev/null &&
    ectl user grant-role $u $u >/dev/null || return 1
  done
  ectl auth enable >/dev/null
}
if setup_auth; then
  ok "auth member: users alice and bob, a role each on their prefix, auth enabled"
else
  bad "set up authentication on the auth member"
fi

export ETCD_CLUSTER_SH="$CL" ETCD_CLUSTER_DIR="$OUT" ETCD_TEST_CA="$OUT/ca.pem" ETCD_TEST_OTHER_CA="$OUT/other.pem"
export ETCD_TEST_TLS_ENDPOINT=$("$CL" "$OUT" endpoint t1)
for s in roundtrip failover limit chunk-gc busy-writer killed-mid-publish handoff owner-killed same-machine stale-owner kill-members offline offline-start cluster-change auth reauth quota tls too-large; do
  echo "== $s"
  t0=$(date +%s)
  if timeout -k 5 150 "$OUT/etcd_test" "$s"; then ok "$s ($(( $(date +%s) - t0 )) s)"; else bad "$s"; fi
  # a scenario that kills members leaves them restarted; make sure before the next
  for m in m1 m2 m3; do [ -f "$OUT/$m.pid" ] || "$CL" "$OUT" start $m >/dev/null; done
done

# The parser's fuzz corpus, replayed.
if cc -std=c11 -Wall -Wextra -Werror -g -DETCD_FUZZ_REPLAY Stores/etcd/fuzz/etcd_fuzz.c Stores/etcd/etcd_parse.c \
     $(pkg-config --cflags --libs json-c) -o "$OUT/etcd-fuzz-replay" && "$OUT/etcd-fuzz-replay" Stores/etcd/fuzz/corpus; then
  ok "fuzz corpus replay"
else
  bad "fuzz corpus replay"
fi
finish
