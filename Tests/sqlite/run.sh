#!/usr/bin/env bash
# Examples/sqlite-store with a real engine, all through SQLite: a first
# launch, a clean relaunch, SIGKILL during repeated saves (RECOVER, the last
# save back), generations kept as slots, a corrupt archive set aside with a
# fallback to the generation before it, two processes saving into one
# database at once, and the store contract every shipped store passes.
# Appends "sqlite: N passed, M failed" to the summary file given as $1.
set -uo pipefail
cd "$(dirname "$0")/../.."
SUMMARY=${1:-/dev/null}
CONFIG=${CONFIG:-debug}
pass=0; fail=0
finish() { echo "sqlite: $pass passed, $fail failed" | tee -a "$SUMMARY"; [ "$fail" = 0 ]; exit $?; }
ok() { pass=$((pass + 1)); echo "ok: $1"; }
bad() { fail=$((fail + 1)); echo "FAILED: $1"; }

swift build -c "$CONFIG" --product restoration >/dev/null || { bad "build librestoration"; finish; }
BIN=$(swift build -c "$CONFIG" --show-bin-path)
ln -sf librestoration.so "$BIN/librestoration.so.1"
OUT=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$OUT"' EXIT
CFLAGS=(-std=c11 -Wall -Wextra -Werror -IInclude -IExamples/sqlite-store)
LIBS=(-L"$BIN" -lrestoration -Wl,-rpath,"$BIN" -lsqlite3)
if cc "${CFLAGS[@]}" Examples/sqlite-store/notes_db.c Examples/sqlite-store/sqlite_store.c "${LIBS[@]}" -o "$OUT/notes_db"; then
  ok "compile the SQLite store and its host"
else
  bad "compile the SQLite store and its host"; finish
fi
DB=$OUT/state.db
run() { timeout 20 "$OUT/notes_db" "$DB" "$@"; }
field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p"; }

# 1. A first launch: nothing in the database.
out=$(run show 2>&1)
[[ "$out" == *"reason=RST_REASON_FIRST_LAUNCH"* && "$out" == *"status=RST_ERR_NOT_FOUND"* ]] && ok "first launch: FIRST_LAUNCH, nothing found" || bad "first launch: $out"

# 2. Save, exit cleanly, relaunch: RELAUNCH with the text back.
run save hello >/dev/null 2>&1
out=$(run show 2>&1)
[[ "$out" == *"reason=RST_REASON_RELAUNCH"* && "$out" == *"text=hello"* && "$out" == *"count=1"* ]] && ok "clean relaunch: RELAUNCH, text back" || bad "clean relaunch: $out"

# 3. SIGKILL while saving every 20 ms: the relaunch recovers the last save.
"$OUT/notes_db" "$DB" loop > "$OUT/loop.log" 2>&1 &
pid=$!
for _ in $(seq 1 200); do grep -q "^saved 12$" "$OUT/loop.log" && break; sleep 0.05; done
kill -9 "$pid"; wait "$pid" 2>/dev/null
last=$(sed -n 's/^saved //p' "$OUT/loop.log" | tail -1)
out=$(run show 2>&1)
count=$(echo "$out" | field count)
if [[ "$out" == *"reason=RST_REASON_RECOVER"* && -n "$last" && "$count" -ge "$last" && "$count" -le $((last + 1)) ]]; then
  ok "SIGKILL during saves: RECOVER with the last save (saved $last, restored $count)"
else
  bad "SIGKILL during saves: last saved '$last': $out"
fi

# 4. Generations are slots of the database.
slots=$(run slots 2>&1)
[[ "$slots" == *"archive 0"* && "$slots" == *"generation 1"* && "$slots" == *"generation 2"* ]] && ok "two generations kept as slots" || bad "generations: $slots"

# 5. A corrupt archive: set aside (an invalid slot), fallback to generation 1.
before=$(run show 2>&1 | field count)
run corrupt >/dev/null 2>&1
out=$(run show 2>&1)
slots=$(run slots 2>&1)
if [[ "$out" == *"reason=RST_REASON_FALLBACK"* && "$slots" == *"invalid "* ]]; then
  ok "corrupt archive: FALLBACK (count $(echo "$out" | field count), was $before), the bad bytes set aside"
else
  bad "corrupt archive: $out / $slots"
fi

# 6. Two processes save into one database at once (the store's lock and
#    SQLite's transactions keep every archive whole).
"$OUT/notes_db" "$DB" loop > "$OUT/a.log" 2>&1 & a=$!
"$OUT/notes_db" "$DB" loop > "$OUT/b.log" 2>&1 & b=$!
sleep 1.5
kill -9 "$a" "$b"; wait "$a" "$b" 2>/dev/null
out=$(run show 2>&1)
if [[ "$out" == *"status=RST_OK"* && ( "$out" == *"RECOVER"* || "$out" == *"RELAUNCH"* ) ]] && ! grep -q "notes_db: save" "$OUT/a.log" "$OUT/b.log"; then
  ok "two processes saving at once: every save succeeded, the archive restores"
else
  bad "two processes: $out; $(grep -h 'notes_db:' "$OUT/a.log" "$OUT/b.log" | head -3)"
fi

# 7. The store contract (the same checks the file and memory stores pass).
if [ -f Tests/RestorationCTests/C/store_contract.h ]; then
  if cc "${CFLAGS[@]}" -DCONTRACT_SQLITE -ITests/RestorationCTests/C Tests/sqlite/contract_sqlite.c Examples/sqlite-store/sqlite_store.c \
        "${LIBS[@]}" -o "$OUT/contract" && timeout 120 "$OUT/contract" "$OUT/contract.db"; then
    ok "store contract"
  else
    bad "store contract"
  fi
fi
finish
