#!/bin/bash
# sched_overhead.sh - what recording costs a context-switch-heavy program.
#
# The load is the pingpong workload: two threads bouncing a byte through
# two pipes, pinned to one CPU (taskset), so every round trip is two
# blocking reads, two wakeups and two context switches from one thread to
# the other (unpinned, the threads' placement on CPUs changes the rate
# more than recording does). Modes:
#   none        no recording
#   cpu         perfcap-record -e cpu -- pingpong
#   cpu,sched   perfcap-record -e cpu,sched -- pingpong
#   default     perfcap-record -- pingpong (no -e: cpu, sched, block, waits,
#               req; the waits' sums are made by the sched programs)
#   base        the default recording by another build's recorder, REC_BASE
#               (when set): two builds in the same rounds
#   perf        perf record -e sched:sched_switch,sched:sched_wakeup (a peer
#               that records the same switches and wakeups, without
#               off-CPU stacks; skipped when perf is not installed)
# interleaved ABBA (odd rounds in that order, even rounds reversed), RUNS
# rounds, SECONDS each. Reported per mode: round trips/s mean +- sd, the
# overhead against `none`, and the paired ratio (each round's rate over
# that round's untraced one, mean +- sd: the number to quote on a noisy
# host); then, from the last cpu,sched capture, the bytes per SWITCH record
# on disk (EVENTS chunks' compressed size shared out by raw bytes: capcheck
# sizes), against perf.data's bytes per record.
#
# Usage: bench/sched_overhead.sh [BUILD_DIR] [SECONDS] [RUNS]   (build 5 3)
# Env: REC_BASE (a perfcap-record binary: adds mode base), MODES (a subset).
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
modes="none cpu cpu,sched default"
[ -n "${REC_BASE:-}" ] && modes="$modes base"
command -v perf > /dev/null && modes="$modes perf"
modes=${MODES:-$modes}
pin=$(awk -F'[-,]' '{ print $NF }' /sys/devices/system/cpu/online) # the last CPU

# rate MODE: round trips/s of one pingpong run under MODE
rate() {
	local out
	case $1 in
	none) out=$(taskset -c "$pin" "$work" "$secs") ;;
	perf) out=$(perf record -e sched:sched_switch,sched:sched_wakeup -o "$tmp/perf.data" \
			-- taskset -c "$pin" "$work" "$secs" 2> "$tmp/perf.err") ;;
	default) out=$("$rec" -f -o "$tmp/$1.perfcap" -- taskset -c "$pin" "$work" "$secs" \
			2> "$tmp/$1.err") ;;
	base) out=$("$REC_BASE" -f -o "$tmp/$1.perfcap" -- taskset -c "$pin" "$work" "$secs" \
			2> "$tmp/$1.err") ;;
	*) out=$("$rec" -e "$1" -f -o "$tmp/$1.perfcap" -- taskset -c "$pin" "$work" "$secs" \
			2> "$tmp/$1.err") ;;
	esac
	echo "$out" | awk '{ print $(NF - 2) }'
}

reversed=$(echo "$modes" | tr ' ' '\n' | tac | tr '\n' ' ')
for ((round = 1; round <= runs; round++)); do
	order=$modes
	[ $((round % 2)) = 0 ] && order=$reversed
	for mode in $order; do
		r=$(rate "$mode")
		echo "$mode $r" >> "$tmp/rates"
		echo "$round $mode $r" >> "$tmp/rounds"
		echo "round $round: $mode: $r round trips/s" >&2
	done
done

echo "pingpong round trips/s on CPU $pin, $runs ABBA rounds of ${secs}s per mode (mean +- sd), $(nproc) CPUs"
summarize_rates "$tmp/rates" "$modes"
echo "paired ratio to none (each round's rate over its untraced one, mean +- sd):"
awk -v modes="$modes" '
	{ r[$1, $2] = $3; if ($1 > n) n = $1 }
	END {
		split(modes, m, " ")
		for (i = 2; i in m; i++) {
			k = m[i]; s = ss = c = 0
			for (j = 1; j <= n; j++)
				if (r[j, "none"] > 0 && (j, k) in r) {
					x = r[j, k] / r[j, "none"]; s += x; ss += x * x; c++
				}
			if (!c) continue
			mean = s / c; var = c > 1 ? (ss - c * mean * mean) / (c - 1) : 0
			printf "  %-12s %.3f +- %.3f\n", k, mean, sqrt(var > 0 ? var : 0)
		}
	}' "$tmp/rounds"

if [ -f "$tmp/perf.data" ]; then
	perf_records=$(grep -o '([0-9]* samples)' "$tmp/perf.err" | tr -dc 0-9)
	echo "last perf.data: $(stat -c %s "$tmp/perf.data") bytes, ${perf_records:-?} records," \
		"$(awk -v b="$(stat -c %s "$tmp/perf.data")" -v n="${perf_records:-0}" \
			'BEGIN { if (n > 0) printf "%.1f", b / n; else printf "?" }') bytes each"
fi
[ -f "$tmp/cpu,sched.perfcap" ] || exit 0
echo "last cpu,sched capture: $(stat -c %s "$tmp/cpu,sched.perfcap") bytes"
grep -E "wrote|lost" "$tmp/cpu,sched.err" | sed 's/^/  /'
"$capcheck" sizes "$tmp/cpu,sched.perfcap" | awk '
	$2 == "9:"  { sub(/^/, "  SWITCH  ") } $2 == "10:" { sub(/^/, "  WAKEUP  ") }
	$2 == "11:" { sub(/^/, "  OFFCPU  ") } $2 == "1:"  { sub(/^/, "  SAMPLE  ") }
	{ print }'
