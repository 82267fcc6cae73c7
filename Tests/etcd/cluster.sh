#!/usr/bin/env bash
# cluster.sh DIR COMMAND ...: etcd members on 127.0.0.1 for the store's
# tests, each with free ports and a data folder under DIR, remembered by the
# pid the script started (DIR/<name>.pid). Every wait is bounded.
#   create NAME... [-- EXTRA ETCD FLAGS]   one cluster of these members (not started)
#   start NAME            starts a created member (again) and waits for /health
#   wait-healthy NAME...  waits (15 s) until each answers /health with "true"
#   stop NAME             SIGTERM, SIGKILL after 3 s (a member whose peers are gone may ignore SIGTERM)
#   kill NAME [SIGNAL]    sends SIGNAL (default KILL) and, for KILL, waits for the end
#   endpoint NAME         prints http://127.0.0.1:PORT
#   leader NAME...        prints the name of the current leader among them
#   follower NAME...      prints a member that is not the leader
#   stop-all              stops every member started here
set -uo pipefail
DIR=$1; shift
cmd=$1; shift
ETCD=${ETCD:-etcd}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

case $cmd in
create)
  names=(); extra=()
  while [ $# -gt 0 ]; do
    if [ "$1" = -- ]; then shift; extra=("$@"); break; fi
    names+=("$1"); shift
  done
  initial=""
  for n in "${names[@]}"; do
    echo "$(free_port)" > "$DIR/$n.client"; echo "$(free_port)" > "$DIR/$n.peer"
    initial+="${initial:+,}$n=http://127.0.0.1:$(cat "$DIR/$n.peer")"
  done
  token="rst-test-$$-$RANDOM"
  scheme=${CLIENT_SCHEME:-http}
  for n in "${names[@]}"; do
    c=$(cat "$DIR/$n.client"); p=$(cat "$DIR/$n.peer")
    echo "$scheme" > "$DIR/$n.scheme"; [ -n "${CLIENT_CA:-}" ] && echo "$CLIENT_CA" > "$DIR/$n.ca"
    args=(--name "$n" --data-dir "$DIR/$n.data" --listen-client-urls "$scheme://127.0.0.1:$c" --advertise-client-urls "$scheme://127.0.0.1:$c"
          --listen-peer-urls "http://127.0.0.1:$p" --initial-advertise-peer-urls "http://127.0.0.1:$p"
          --initial-cluster "$initial" --initial-cluster-state new --initial-cluster-token "$token"
          --heartbeat-interval 50 --election-timeout 500 --unsafe-no-fsync --logger zap --log-outputs "$DIR/$n.log" "${extra[@]}")
    printf '%s\0' "${args[@]}" > "$DIR/$n.args"
  done ;;
start)
  n=$1
  mapfile -d '' args < "$DIR/$n.args"
  "$ETCD" "${args[@]}" >> "$DIR/$n.out" 2>&1 &
  echo $! > "$DIR/$n.pid"
  exec "$0" "$DIR" wait-healthy "$n" ;;
wait-healthy)
  for n in "$@"; do
    url=$("$0" "$DIR" endpoint "$n")/health
    ca=(); [ -f "$DIR/$n.ca" ] && ca=(--cacert "$(cat "$DIR/$n.ca")")
    ok=0
    for _ in $(seq 150); do
      if curl -s -m 1 "${ca[@]}" "$url" 2>/dev/null | grep -q '"health":"true"'; then ok=1; break; fi
      sleep 0.1
    done
    [ $ok = 1 ] || { echo "cluster.sh: member $n is not healthy after 15 s (log: $DIR/$n.log)" >&2; exit 1; }
  done ;;
stop)
  n=$1; [ -f "$DIR/$n.pid" ] || exit 0
  pid=$(cat "$DIR/$n.pid"); rm -f "$DIR/$n.pid"
  kill -TERM "$pid" 2>/dev/null
  for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 0.1; done ;;
kill)
  n=$1; sig=${2:-KILL}
  pid=$(cat "$DIR/$n.pid")
  kill -"$sig" "$pid" 2>/dev/null
  if [ "$sig" = KILL ]; then
    rm -f "$DIR/$n.pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 0.1; done
  fi ;;
endpoint) echo "$(cat "$DIR/$1.scheme" 2>/dev/null || echo http)://127.0.0.1:$(cat "$DIR/$1.client")" ;;
leader|follower)
  want=$cmd
  for _ in $(seq 50); do
    eps=""; for n in "$@"; do eps+="${eps:+,}http://127.0.0.1:$(cat "$DIR/$n.client")"; done
    out=$(ETCDCTL_API=3 etcdctl --endpoints="$eps" --command-timeout=1s endpoint status -w json 2>/dev/null) || true
    lead=$(jq -r '[.[] | .Status.leader] | map(select(. != 0)) | .[0] // empty' <<<"$out" 2>/dev/null)
    if [ -n "$lead" ]; then
      for n in "$@"; do
        ep="http://127.0.0.1:$(cat "$DIR/$n.client")"
        id=$(jq -r --arg ep "$ep" '.[] | select(.Endpoint == $ep) | .Status.header.member_id' <<<"$out")
        if [ "$want" = leader ] && [ "$id" = "$lead" ]; then echo "$n"; exit 0; fi
        if [ "$want" = follower ] && [ -n "$id" ] && [ "$id" != "$lead" ]; then echo "$n"; exit 0; fi
      done
    fi
    sleep 0.1
  done
  echo "cluster.sh: no $want among $* after 5 s" >&2; exit 1 ;;
stop-all)
  for f in "$DIR"/*.pid; do [ -e "$f" ] || continue; "$0" "$DIR" stop "$(basename "$f" .pid)"; done ;;
*) echo "cluster.sh: unknown command $cmd" >&2; exit 2 ;;
esac
