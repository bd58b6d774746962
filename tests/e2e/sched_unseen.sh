#!/bin/bash
# sched_unseen.sh - end to end with real eBPF: switch-ins the kernel does
# not deliver. The kernel hands about one sched_switch in a thousand to no
# BPF program at all on this project's VMs (docs/perfcap-record.md, "Switch-ins
# the kernel does not deliver"); too rarely to test on purpose, so
# PERFCAP_SCHED_DROP_SWITCH_IN=3 makes the sched programs ignore one
# switch-in of a traced thread in three. The sleeper's napper (20 naps of
# 50 ms) must still have every nap, each one nap long (the interval ends
# where the thread's run time at its next switch-out says),
# with the ignored ones counted (STATS sched.switch_in_unseen, META
# sched.drop_switch_in) and said by the recorder and the report; with the
# stack copies taken at the return (the default) and at the switch-out.
set -u
. "$(dirname "$0")/lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}" "${SLEEPER:?}" "${CAPCHECK:?}"
require_bpf
make_tmpdir

naps_sql="SELECT count(*), sum(duration >= 49900000 AND duration <= 75000000)
	FROM offcpu WHERE tid IN (SELECT tid FROM threads WHERE comm = 'napper')"

check() { # MODE ARGS...
	local mode=$1 out="$TMP/$1.perfcap"
	shift
	PERFCAP_SCHED_DROP_SWITCH_IN=3 "$PERFCAP_RECORD" -e sched "$@" -o "$out" -- \
		"$SLEEPER" 20 > "$TMP/$mode.out" 2> "$TMP/$mode.err" \
		|| { cat "$TMP/$mode.err" >&2; fail "$mode: perfcap-record failed"; }
	cat "$TMP/$mode.err"
	[ "$("$CAPCHECK" meta "$out" sched.drop_switch_in)" = 3 ] \
		|| fail "$mode: META sched.drop_switch_in is not 3"
	unseen=$("$CAPCHECK" stat "$out" sched.switch_in_unseen) \
		|| fail "$mode: STATS lacks sched.switch_in_unseen"
	# about 23 switch-ins of traced threads (the napper's 21, the main
	# thread's), one in three ignored
	within "$unseen" 4 12 || fail "$mode: $unseen switch-ins unseen, want about 7"
	grep -q "sched: $unseen switch-ins of traced threads were not delivered" "$TMP/$mode.err" \
		|| fail "$mode: the recorder's summary does not say the $unseen unseen switch-ins"
	read -r n exact < <("$PERFCAP_ANALYZE" query --format csv "$out" "$naps_sql" | tail -1 | tr ',\r' '  ')
	echo "$mode: $unseen switch-ins unseen; napper: $n OFFCPU records, $exact of them 49.9-75 ms"
	[ "$n" = 20 ] || fail "$mode: $n napper intervals, want 20 (one per nap)"
	# one nap each: not merged with the next (100 ms), nor cut short; a nap
	# can end late (the VM's timer) or wait for a CPU after its wakeup
	[ "$exact" = 20 ] || fail "$mode: $exact of 20 napper intervals are one nap (49.9-75 ms), want all"
	line=$("$CAPCHECK" threads "$out" | awk '$3 == "napper"')
	ms=$(echo "$line" | awk '{ printf "%d", $4 }')
	within "$ms" 998 1200 || fail "$mode: napper off CPU $ms ms, want 1000 (20 x 50 ms)"
	"$PERFCAP_ANALYZE" report "$out" > "$TMP/$mode.report" || fail "$mode: report failed"
	grep -q "Unseen switch-ins: *$unseen " "$TMP/$mode.report" \
		|| fail "$mode: the report's data quality does not say the unseen switch-ins"
}

check return
check switch-out --offcpu-copy switch-out
echo PASS
