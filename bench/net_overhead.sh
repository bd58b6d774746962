#!/bin/bash
# net_overhead.sh - what the net source costs a request/response loop.
#
# The load is tcp_echo: REQUESTS request/response pairs (100 and 300
# bytes) on one loopback keep-alive connection, plus 20 short connections.
# Each round runs it in the same order:
#   none     no recording
#   net      perfcap-record -e net -- tcp_echo   (SOCKET, TCP_STATE and the
#            syscall program's net set: two SYSCALL records per pair and side)
# and RUNS rounds give mean +- sd of pairs/s (keep-alive phase) per mode and
# the overhead against `none`. With BPF statistics on, it also prints the
# average run time of the syscall program's sys_exit (which runs the net
# source's part, bpf/net_calls.bpf.h) per call during a getppid storm (the
# pairing path, no net work) and during tcp_echo (the fd lookup path).
#
# Usage: bench/net_overhead.sh [BUILD_DIR] [REQUESTS] [RUNS]   (build 50000 3)
# Needs root, a build without sanitizers and bpftool. Not a test.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
build=${1:-build}
requests=${2:-50000}
runs=${3:-3}
rec=$build/record/perfcap-record
work=$build/tests/workloads/tcp_echo
storm=$build/tests/workloads/syscall_storm
tmp=$(mktemp -d /tmp/perfcap-bench.XXXXXX)
trap 'rm -rf "$tmp"; sysctl -qw kernel.bpf_stats_enabled=0' EXIT
modes="none net"

rate() {
	local out
	if [ "$1" = none ]; then
		out=$("$work" 0 "$requests")
	else
		out=$("$rec" -e net -f -o "$tmp/net.perfcap" -- "$work" 0 "$requests" 2> "$tmp/net.err")
	fi
	echo "$out" | awk '$1 == "requests" { sub("/s", "", $6); print $6 }'
}

for ((round = 1; round <= runs; round++)); do
	for mode in $modes; do
		r=$(rate "$mode")
		echo "$mode $r" >> "$tmp/rates"
		echo "round $round: $mode: $r pairs/s" >&2
	done
done

echo "tcp_echo pairs/s, $runs rounds of $requests pairs per mode (mean +- sd), $(nproc) CPUs"
summarize_rates "$tmp/rates" "$modes"
grep -E "wrote|lost" "$tmp/net.err" | sed 's/^/  last net run: /'

# ns per call of the syscall program's sys_exit (bpftool: run_time_ns / run_cnt)
per_call() { # LABEL COMMAND...
	local label=$1 pid id before after
	shift
	"$rec" -e net -a -f -o "$tmp/stats.perfcap" 2> "$tmp/stats.err" &
	pid=$!
	until grep -q recording "$tmp/stats.err"; do sleep 0.1; done
	id=$(bpftool prog show | awk '/ name on_sys_exit / { id = $1 } END { sub(":", "", id); print id }')
	before=$(bpftool prog show id "$id" | grep -o 'run_time_ns [0-9]* run_cnt [0-9]*')
	"$@" > /dev/null
	after=$(bpftool prog show id "$id" | grep -o 'run_time_ns [0-9]* run_cnt [0-9]*')
	kill -INT $pid && wait $pid
	echo "$before $after" | awk -v l="$label" '{ printf "  %-28s %6.1f ns/call over %d calls\n",
		l, ($6 - $2) / ($8 - $4), $8 - $4 }'
}
sysctl -qw kernel.bpf_stats_enabled=1
echo "sys_exit program with the net part, recording -a (all TCP, no filter):"
per_call "getppid storm (no net call)" "$storm" 1 2
per_call "tcp_echo (fd lookup path)" "$work" 0 "$requests"
