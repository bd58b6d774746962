#!/bin/bash
# sched_offcpu.sh - end to end with real eBPF: the sleeper workload's
# "sleeper" thread naps 50 ms 20 times. With -e sched --strict the capture
# must hold ~1 s (+-20%) of OFFCPU time for that thread, about 20 intervals,
# and a user stack at switch-out that names nap_50ms (through the symbols
# inside the capture, after the binary is deleted). Also checks the META
# of the sched source and its loss counters.
set -u
. "$(dirname "$0")/lib.sh"
: "${PERFCAP_RECORD:?}" "${SLEEPER:?}" "${CAPCHECK:?}"
require_bpf
make_tmpdir

cp "$SLEEPER" "$TMP/sleeper"
"$PERFCAP_RECORD" -e sched --strict -o "$TMP/run.perfcap" -- "$TMP/sleeper" 20 \
	> "$TMP/record.out" 2> "$TMP/record.err" \
	|| { cat "$TMP/record.err" >&2; fail "perfcap-record failed"; }
cat "$TMP/record.err"
rm -f "$TMP/sleeper" # symbols must come from the capture

"$CAPCHECK" threads "$TMP/run.perfcap" > "$TMP/threads" || fail "capcheck threads failed"
line=$(awk '$3 == "napper"' "$TMP/threads")
[ -n "$line" ] || { cat "$TMP/threads"; fail "no thread named napper in the capture"; }
tid=$(echo "$line" | awk '{ print $1 }')
offcpu_ms=$(echo "$line" | awk '{ printf "%d", $4 }')
intervals=$(echo "$line" | awk '{ print $5 }')
echo "napper (tid $tid): ${offcpu_ms} ms off CPU in $intervals OFFCPU records"
within "$offcpu_ms" 800 1200 || fail "off-CPU time ${offcpu_ms} ms, want 1000 +-20%"
within "$intervals" 20 24 || fail "$intervals OFFCPU records, want about 20"

"$CAPCHECK" offcpu-stack "$TMP/run.perfcap" "$tid" nap_50ms > "$TMP/stack" \
	|| { cat "$TMP/stack"; fail "no OFFCPU user stack of the napper names nap_50ms"; }
tail -1 "$TMP/stack"

[ "$("$CAPCHECK" meta "$TMP/run.perfcap" sources)" = "proc,sched" ] \
	|| fail "META sources is not 'proc,sched'"
[ "$("$CAPCHECK" meta "$TMP/run.perfcap" sched.offcpu_min_ns)" = 1000000 ] \
	|| fail "META sched.offcpu_min_ns is not the 1 ms default"
for key in sched.events sched.lost.kernel sched.lost.user sched.sampled_out \
	sched.rate_capped sched.stack_errors sched.switches sched.offcpu; do
	"$CAPCHECK" stat "$TMP/run.perfcap" "$key" > /dev/null || fail "STATS lacks $key"
done
[ "$("$CAPCHECK" stat "$TMP/run.perfcap" sched.lost.kernel)" = 0 ] || fail "sched records lost"
grep -q "lost 0 of .* (sched 0/" "$TMP/record.err" || fail "no per-source loss summary"
echo PASS
