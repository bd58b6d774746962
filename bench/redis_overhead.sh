#!/bin/bash
# redis_overhead.sh - throughput cost of recording a real server.
#
# Starts a private redis-server on 127.0.0.1 (its own port, no persistence),
# drives it with redis-benchmark, and compares requests/s with no recording,
# with the default event set (-e cpu,sched), with a wider set, and with
# `perf record -g` (the peer), interleaving the modes round by round.
# Usage: bench/redis_overhead.sh [BUILD_DIR] [REQUESTS] [ROUNDS]
# Needs root, redis-server and redis-tools (Debian). Not a test.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
build=${1:-build}
requests=${2:-200000}
rounds=${3:-3}
rec=$build/record/perfcap-record
port=16379
tmp=$(mktemp -d /tmp/perfcap-redis.XXXXXX)
redis-server --port $port --bind 127.0.0.1 --save '' --appendonly no \
	--daemonize no > "$tmp/redis.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 50); do redis-cli -p $port ping > /dev/null 2>&1 && break; sleep 0.1; done

# rps: requests/s of one redis-benchmark run (SET and GET, 50 clients)
rps() {
	redis-benchmark -p $port -n "$requests" -c 50 -t set,get -q 2> /dev/null |
		awk '{ for (i = 1; i <= NF; i++) if ($i == "requests") { s += $(i - 1); n++ } }
		     END { printf "%.0f\n", s / n }'
}

# run_mode MODE: one benchmark run while MODE records the server
run_mode() {
	local mode=$1 pid=
	case $mode in
	none) rps; return ;;
	perf) perf record -g -p $server -o "$tmp/perf.data" > /dev/null 2>&1 & pid=$! ;;
	*) "$rec" -e "$mode" -p $server -f -o "$tmp/$mode.perfcap" 2> "$tmp/$mode.err" & pid=$! ;;
	esac
	sleep 1 # attached
	rps
	kill -INT $pid; wait $pid || true
}

modes="none cpu,sched cpu,sched,syscall,block,net perf"
command -v perf > /dev/null || modes="none cpu,sched cpu,sched,syscall,block,net"
for ((r = 1; r <= rounds; r++)); do
	for mode in $modes; do
		v=$(run_mode "$mode")
		echo "$mode $v" >> "$tmp/rates"
		echo "round $r: $mode: $v requests/s" >&2
	done
done
echo "redis-benchmark SET+GET, $requests requests x $rounds rounds, 50 clients, requests/s (mean +- sd)"
summarize_rates "$tmp/rates" "$modes"
for m in cpu,sched cpu,sched,syscall,block,net; do
	[ -f "$tmp/$m.err" ] && sed -n 's/^/  /; /lost/p' "$tmp/$m.err"
done
