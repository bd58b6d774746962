#!/bin/bash
# sched_offcpu.sh - end to end with real eBPF: the sleeper workload's
# "sleeper" thread naps 50 ms 20 times. With -e sched --strict the capture
# must hold ~1 s (+-20%) of OFFCPU time for that thread, about 20 intervals,
# and a user stack at switch-out that names nap_50ms (through the symbols
# inside the capture, after the binary is deleted): the OFFCPU record's own
# frame-pointer stack, taken with --offcpu-copy switch-out (by default the
# copy taken at the return replaces it: offcpu_copy_return.sh). Also checks the META
# of the sched source, its loss counters, and the wakers (interrupt context
# is waker 0).
set -u
. "$(dirname "$0")/lib.sh"
: "${PERFCAP_RECORD:?}" "${SLEEPER:?}" "${CAPCHECK:?}"
require_bpf
make_tmpdir

cp "$SLEEPER" "$TMP/sleeper"
"$PERFCAP_RECORD" -e sched --strict --offcpu-copy switch-out -o "$TMP/run.perfcap" -- \
	"$TMP/sleeper" 20 \
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

# wakers: the napper's naps end in a timer interrupt (waker 0); the main
# thread, joining it, is woken by the napper itself as it exits
"$CAPCHECK" wakers "$TMP/run.perfcap" "$tid" > "$TMP/wakers"
from_irq=$(awk '$1 == 0 { print $2 }' "$TMP/wakers")
within "${from_irq:-0}" 18 100 || { cat "$TMP/wakers"; fail "napper: ${from_irq:-0} wakeups from interrupt context, want about 20"; }
pid=$(echo "$line" | awk '{ print $2 }')
"$CAPCHECK" wakers "$TMP/run.perfcap" "$pid" | awk -v t="$tid" '$1 == t { found = 1 } END { exit !found }' \
	|| fail "the main thread's wakeup by the exiting napper (tid $tid) is missing"
echo "wakers: napper woken $from_irq times from interrupt context; main thread woken by the napper"

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
