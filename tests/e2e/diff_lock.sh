#!/bin/bash
# diff_lock.sh - the shared mutex held 5 ms longer (--lock-hold-extra-ms 5):
# diff ranks the lock its waiters queue on first, up, its median wait per
# call +5 ms within 25%; swapped, down by as much; --fail-on lock:+10%
# exits 1.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/diff_lib.sh"
diff_start
record lock 3 --lock-hold-extra-ms 5
extra=$(( $(truth lock lock_hold_ns) - $(truth base lock_hold_ns) ))

diff_json fwd base lock
expect_top fwd lock futex: up
ratio_ok "$(field 5 "$TOP")" $extra || fail "median wait grew $(field 5 "$TOP") ns, not $extra within 25%"

diff_json back lock base
expect_top back lock futex: down
ratio_ok "$(field 5 "$TOP")" -$extra || fail "swapped: $(field 5 "$TOP") ns, not -$extra within 25%"

expect_exit 1 --fail-on 'lock:+10%' "$TMP/base.perfcap" "$TMP/lock.perfcap"
grep -q "FAIL --fail-on lock:+10%" "$TMP/exit.out" || fail "failed rule not named"
echo "PASS: diff_lock"
