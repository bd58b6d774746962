#!/bin/bash
# diff_sleep.sh - a 2 ms sleep added in one code path (--sleep-ms 2, in
# slow_path): diff ranks the server's clock_nanosleep first, appeared,
# adding per request within 25% of the sleep the workload measured;
# swapped, gone; --fail-on any:significant exits 1 and names the rule.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/diff_lib.sh"
diff_start
record sleep 3 --sleep-ms 2
want=$(truth sleep sleep_ns_per_request)

diff_json fwd base sleep
expect_top fwd syscall server:clock_nanosleep up
[ "$(field 7 "$TOP")" = True ] || fail "the sleep did not appear: $TOP"
ratio_ok "$(field 6 "$TOP")" "$want" || fail "sleep adds $(field 6 "$TOP") ns per request, not $want within 25%"

diff_json back sleep base
expect_top back syscall server:clock_nanosleep down
ratio_ok "$(field 6 "$TOP")" "-$want" || fail "swapped: $(field 6 "$TOP") ns per request, not -$want"

expect_exit 1 --fail-on any:significant "$TMP/base.perfcap" "$TMP/sleep.perfcap"
grep -q "FAIL --fail-on any:significant" "$TMP/exit.out" || fail "failed rule not named"
echo "PASS: diff_sleep"
