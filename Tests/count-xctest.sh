#!/usr/bin/env bash
# Tests/count-xctest.sh PART LOG: one line "PART: N passed, M failed" from a
# `swift test` log (XCTest's "All tests" total plus Swift Testing's; skipped
# tests, such as those that need a tool ASan cannot run, are neither). A log
# without a total (the build failed, the runner crashed) counts as 1 failed.
part=$1 log=$2
awk -v part="$part" '
  /Test Suite .All tests. (passed|failed)/ { all = 1; next }
  all && /Executed [0-9]+ tests?, with ([0-9]+ tests? skipped and )?[0-9]+ failures?/ {
      k = 0
      for (i = 1; i <= NF; i++) {
          if ($i == "Executed") n = $(i+1)
          if ($(i+1) == "skipped") k = $(i-1)
          if ($(i+1) ~ /^failures?$/) f = $i }
      xn = n - k; xf = f; xk = k; seen = 1; all = 0 }
  /Test run with [0-9]+ tests?/ && !/with 0 tests/ {
      for (i = 1; i <= NF; i++) if ($i == "with" && $(i+2) ~ /^tests?$/) sn += $(i+1)
      if (/failed/) { for (i = 1; i <= NF; i++) if ($(i+1) ~ /^issues?/) sf += $i } }
  END {
      if (!seen) { printf "%s: 0 passed, 1 failed (no test total in the log)\n", part; exit }
      printf "%s: %d passed, %d failed", part, xn - xf + sn - sf, xf + sf
      if (xk) printf ", %d skipped", xk
      printf "\n" }' "$log"
