#!/bin/bash
# metrics_cost.sh - what each default-relevant source costs per event, for
# --list-events and docs/perfcap-record.md: one thread making getppid(2)
# as fast as it can (syscall_storm 1 thread) and two threads passing a
# byte through pipes (pingpong: 2 blocking reads, 2 wakeups, >= 2 context
# switches per round trip, both threads on CPU 0), untraced and under `-e SOURCE`, interleaved
# ABBA. Cost per event = 1/traced - 1/untraced rate (ns per call, per
# round trip). Not a test: numbers are reported, not judged; on a shared
# machine state the load average.
# Usage: bench/metrics_cost.sh [BUILD_DIR] [ROUNDS] [SECONDS]; WORKLOADS="storm pingpong"
set -euo pipefail
build=$(realpath "${1:-build}")
rounds=${2:-4}
secs=${3:-3}
rec=$build/record/perfcap-record
storm=$build/tests/workloads/syscall_storm
pingpong=$build/tests/workloads/pingpong
tmp=$(mktemp -d /tmp/perfcap-cost.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

rate_storm() { "$@" "$storm" 1 "$secs" 0 | awk '/calls\/s/ { print $(NF-1) }'; }
# pinned to one CPU: unpinned, the two threads' placement decides the rate
rate_pingpong() { "$@" taskset -c 0 "$pingpong" "$secs" | awk '/round trips\/s/ { print $(NF-2) }'; }

# one WORKLOAD MODE: the rate of WORKLOAD with no recording or -e MODE
one() {
	if [ "$2" = none ]; then
		rate_$1
	else
		rate_$1 "$rec" -e "$2" -f -o "$tmp/c.perfcap" -- 2> /dev/null
	fi
}

modes="none syscall agg waits sched"
echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $rounds rounds x $secs s, ABBA; syscall = -e syscall --syscalls getppid (raw records)"
for w in ${WORKLOADS:-storm pingpong}; do
	: > "$tmp/$w"
	for ((r = 1; r <= rounds; r++)); do
		order=$modes
		((r % 2 == 0)) && order=$(echo $modes | tr ' ' '\n' | tac | tr '\n' ' ')
		for m in $order; do
			if [ $m = syscall ] && [ $w = storm ]; then
				v=$(rate_storm "$rec" -e syscall --syscalls getppid -f -o "$tmp/c.perfcap" -- 2> /dev/null)
			else
				v=$(one $w $m)
			fi
			echo "$m $v" >> "$tmp/$w"
		done
	done
	awk -v w=$w -v modes="$modes" '
		{ n[$1]++; s[$1] += $2; ss[$1] += $2 * $2 }
		END {
			split(modes, m, " ")
			base = s["none"] / n["none"]
			for (i = 1; i in m; i++) {
				k = m[i]; mean = s[k] / n[k]
				var = n[k] > 1 ? (ss[k] - n[k] * mean * mean) / (n[k] - 1) : 0
				printf "%-9s %-8s %12.0f +- %9.0f /s  ratio %.3f  cost %7.0f ns per %s\n",
					w, k, mean, sqrt(var > 0 ? var : 0), mean / base,
					1e9 / mean - 1e9 / base, w == "storm" ? "call" : "round trip"
			}
		}' "$tmp/$w"
done
