#!/bin/bash
# sched_overhead.sh - what recording costs a context-switch-heavy program.
#
# The load is the pingpong workload: two threads bouncing a byte through
# two pipes, pinned to one CPU (taskset), so every round trip is two
# blocking reads, two wakeups and two context switches from one thread to
# the other (unpinned, the threads' placement on CPUs changes the rate
# more than recording does). Each round runs it, for SECONDS each, in the
# same order:
#   none        no recording
#   cpu         perfcap-record -e cpu -- pingpong
#   cpu,sched   perfcap-record -e cpu,sched -- pingpong   (the default set)
#   perf        perf record -e sched:sched_switch,sched:sched_wakeup (a peer
#               that records the same switches and wakeups, without
#               off-CPU stacks; skipped when perf is not installed)
# and RUNS rounds give mean +- sd of round trips/s per mode, the overhead
# of each mode against `none`, and, from the last cpu,sched capture, the
# records and bytes per SWITCH record on disk (EVENTS chunks' compressed
# size shared out by raw bytes: capcheck sizes), against perf.data's bytes
# per record.
#
# Usage: bench/sched_overhead.sh [BUILD_DIR] [SECONDS] [RUNS]   (build 5 3)
# Needs root. Use a build without sanitizers (meson setup -Db_sanitize=none).
# Not a test: numbers are reported, not judged.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
build=${1:-build}
secs=${2:-5}
runs=${3:-3}
rec=$build/record/perfcap-record
work=$build/tests/workloads/pingpong
capcheck=$build/tests/e2e/capcheck
tmp=$(mktemp -d /tmp/perfcap-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
modes="none cpu cpu,sched"
command -v perf > /dev/null && modes="$modes perf"
pin=$(awk -F'[-,]' '{ print $NF }' /sys/devices/system/cpu/online) # the last CPU

# rate MODE: round trips/s of one pingpong run under MODE
rate() {
	local out
	if [ "$1" = none ]; then
		out=$(taskset -c "$pin" "$work" "$secs")
	elif [ "$1" = perf ]; then
		out=$(perf record -e sched:sched_switch,sched:sched_wakeup -o "$tmp/perf.data" \
			-- taskset -c "$pin" "$work" "$secs" 2> "$tmp/perf.err")
	else
		out=$("$rec" -e "$1" -f -o "$tmp/$1.perfcap" -- taskset -c "$pin" "$work" "$secs" \
			2> "$tmp/$1.err")
	fi
	echo "$out" | awk '{ print $(NF - 2) }'
}

for ((round = 1; round <= runs; round++)); do
	for mode in $modes; do
		r=$(rate "$mode")
		echo "$mode $r" >> "$tmp/rates"
		echo "round $round: $mode: $r round trips/s" >&2
	done
done

echo "pingpong round trips/s on CPU $pin, $runs rounds of ${secs}s per mode (mean +- sd), $(nproc) CPUs"
summarize_rates "$tmp/rates" "$modes"

if [ -f "$tmp/perf.data" ]; then
	perf_records=$(grep -o '([0-9]* samples)' "$tmp/perf.err" | tr -dc 0-9)
	echo "last perf.data: $(stat -c %s "$tmp/perf.data") bytes, ${perf_records:-?} records," \
		"$(awk -v b="$(stat -c %s "$tmp/perf.data")" -v n="${perf_records:-0}" \
			'BEGIN { if (n > 0) printf "%.1f", b / n; else printf "?" }') bytes each"
fi
echo "last cpu,sched capture: $(stat -c %s "$tmp/cpu,sched.perfcap") bytes"
grep -E "wrote|lost" "$tmp/cpu,sched.err" | sed 's/^/  /'
"$capcheck" sizes "$tmp/cpu,sched.perfcap" | awk '
	$2 == "9:"  { sub(/^/, "  SWITCH  ") } $2 == "10:" { sub(/^/, "  WAKEUP  ") }
	$2 == "11:" { sub(/^/, "  OFFCPU  ") } $2 == "1:"  { sub(/^/, "  SAMPLE  ") }
	{ print }'
