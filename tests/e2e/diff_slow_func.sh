#!/bin/bash
# diff_slow_func.sh - hot_func made 2x slower (--slow-func doubles its
# work): diff ranks function hot_func first, up, its CPU time per request
# x2 within 25% (effect + 1 in 1.5 .. 2.5); swapped, the same function
# down, x0.5 within 25%; --fail-on
# func:hot_func:+5% exits 1 and names the rule, a rule on another function
# exits 0.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/diff_lib.sh"
diff_start
record slow 3 --slow-func
[ "$(truth slow hot_func_iterations)" = $(( 2 * $(truth base hot_func_iterations) )) ] ||
	fail "workload did not double hot_func's work"

diff_json fwd base slow
expect_top fwd function hot_func up
ratio_ok "$(python3 -c "print(1 + $(field 4 "$TOP"))")" 2 ||
	fail "hot_func x$(python3 -c "print(1 + $(field 4 "$TOP"))") is not x2 within 25%"

diff_json back slow base
expect_top back function hot_func down
ratio_ok "$(python3 -c "print(1 + $(field 4 "$TOP"))")" 0.5 ||
	fail "swapped: hot_func x$(python3 -c "print(1 + $(field 4 "$TOP"))") is not x0.5 within 25%"

expect_exit 1 --fail-on 'func:hot_func:+5%' "$TMP/base.perfcap" "$TMP/slow.perfcap"
grep -q "FAIL --fail-on func:hot_func:+5%" "$TMP/exit.out" || fail "failed rule not named"
expect_exit 0 --fail-on 'func:parse_request:+5%' "$TMP/base.perfcap" "$TMP/slow.perfcap"
echo "PASS: diff_slow_func"
