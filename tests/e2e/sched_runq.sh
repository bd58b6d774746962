#!/bin/bash
# sched_runq.sh - end to end with real eBPF: two CPU hogs pinned to one CPU
# for 2 s. From the SWITCH and WAKEUP records alone, each hog must have
# spent a large share (>= 30%) of its time runnable but not running (it
# can run only about half the time, less when the CPU is busy with other
# work), and its running plus runnable time must cover its whole life
# (it never sleeps). Recorded with the default source set (cpu,sched,block,waits,req).
set -u
. "$(dirname "$0")/lib.sh"
: "${PERFCAP_RECORD:?}" "${CPU_HOGS:?}" "${CAPCHECK:?}"
require_bpf
make_tmpdir

cpu=$(awk -F'[-,]' '{ print $NF }' /sys/devices/system/cpu/online) # the last online CPU
"$PERFCAP_RECORD" -o "$TMP/run.perfcap" -- "$CPU_HOGS" 2 "$cpu" \
	> "$TMP/record.out" 2> "$TMP/record.err" \
	|| { cat "$TMP/record.err" >&2; fail "perfcap-record failed"; }
cat "$TMP/record.err" "$TMP/record.out"
[ "$("$CAPCHECK" meta "$TMP/run.perfcap" sources)" = "proc,cpu,sched,block,waits,req" ] \
	|| fail "default sources are not proc,cpu,sched,block,waits,req"

"$CAPCHECK" threads "$TMP/run.perfcap" > "$TMP/threads" || fail "capcheck threads failed"
for hog in hog1 hog2; do
	line=$(awk -v n="$hog" '$3 == n' "$TMP/threads")
	[ -n "$line" ] || { cat "$TMP/threads"; fail "no thread named $hog"; }
	# runq and run shares of the thread's recorded window
	runq=$(echo "$line" | awk '{ printf "%d", ($8 > 0) ? 100 * $6 / $8 : 0 }')
	run=$(echo "$line" | awk '{ printf "%d", ($8 > 0) ? 100 * $7 / $8 : 0 }')
	echo "$hog: runnable-not-running ${runq}%, running ${run}% of its $(echo "$line" | awk '{ print $8 }') ms"
	within "$runq" 30 100 || fail "$hog run-queue share ${runq}%, want >= 30%"
	within "$run" 5 70 || fail "$hog running share ${run}%, want 5-70%"
	within $((runq + run)) 95 101 || fail "$hog running + runnable ${runq}+${run}%, want ~100%"
done
echo PASS
