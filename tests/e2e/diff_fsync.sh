#!/bin/bash
# diff_fsync.sh - an fsync added per request (--fsync-per-request): diff
# ranks the server's fsync first, appeared, adding per request within 25%
# of what the workload measured around its fsync calls; swapped, gone,
# removing as much; --fail-on p99:syscall:fsync:+10% exits 1.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/diff_lib.sh"
diff_start
record fsync 3 --fsync-per-request
want=$(truth fsync fsync_ns_per_request)

diff_json fwd base fsync
expect_top fwd syscall server:fsync up
[ "$(field 7 "$TOP")" = True ] || fail "fsync did not appear: $TOP"
ratio_ok "$(field 6 "$TOP")" "$want" || fail "fsync adds $(field 6 "$TOP") ns per request, not $want within 25%"

diff_json back fsync base
expect_top back syscall server:fsync down
[ "$(field 8 "$TOP")" = True ] || fail "fsync did not disappear: $TOP"
ratio_ok "$(field 6 "$TOP")" "-$want" || fail "swapped: $(field 6 "$TOP") ns per request, not -$want"

expect_exit 1 --fail-on 'p99:syscall:fsync:+10%' "$TMP/base.perfcap" "$TMP/fsync.perfcap"
echo "PASS: diff_fsync"
