#!/bin/bash
# req_cost.sh - where the default recording's cost goes on a busy server,
# the req source's share apart: Debian's redis-server pinned to the last
# CPU, redis-benchmark (SET+GET, 20 clients, a fixed count) pinned to CPU
# 0, so the server's and the load's CPU time can be told apart. Modes,
# interleaved ABBA per round:
#   none     untraced
#   nreq     perfcap-record -e cpu,sched,block,waits -p REDIS (the default
#            before the req source)
#   default  perfcap-record -p REDIS
# Per mode, mean +- sd over the rounds: throughput, and CPU microseconds
# per request of the server (its user+sys time: the BPF programs that run
# in its context are charged to it), of the load generator (the programs
# run for its untraced sockets too, and sk_data_ready of the server's
# socket runs in its context on loopback) and of the recorder from the
# moment it records (its start-up is not per request). Ratios to
# untraced. Not a test: prints a table (also to $OUT, default
# /tmp/req_cost.txt).
#
# Usage: bench/req_cost.sh [BUILD_DIR] [ROUNDS] [REQUESTS]
#   defaults: build, 6 rounds, 200000 requests per run (SET and GET each).
set -euo pipefail
build=$(realpath "${1:-build}")
rounds=${2:-6}
requests=${3:-200000}
rec=$build/record/perfcap-record
out=${OUT:-/tmp/req_cost.txt}
last=$(($(nproc) - 1))
tmp=$(mktemp -d /tmp/perfcap-reqcost.XXXXXX)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
spid=
cleanup() {
	[ -n "$spid" ] && kill "$spid" 2> /dev/null
	wait 2> /dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

taskset -c "$last" redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
	> "$tmp/redis.log" 2>&1 &
spid=$!
for _ in $(seq 50); do redis-cli -p "$port" ping > /dev/null 2>&1 && break; sleep 0.1; done

ticks() { awk '{ print $14 + $15 + $16 + $17 }' "/proc/$1/stat"; }

# run MODE: "rate server_us client_us recorder_us" per request
run() {
	local mode=$1 rp= bp c0 c1 b1 r0=0 r1=0 rate
	case $mode in
	nreq) "$rec" -e cpu,sched,block,waits -p "$spid" -f -o "$tmp/run.perfcap" \
		> /dev/null 2> "$tmp/rec.err" & rp=$! ;;
	default) "$rec" -p "$spid" -f -o "$tmp/run.perfcap" > /dev/null 2> "$tmp/rec.err" & rp=$! ;;
	esac
	if [ -n "$rp" ]; then
		for _ in $(seq 100); do grep -q recording "$tmp/rec.err" 2> /dev/null && break; sleep 0.05; done
		r0=$(ticks "$rp")   # its start-up (BTF, /proc) is not per request
	fi
	c0=$(ticks "$spid")
	taskset -c 0 redis-benchmark -p "$port" -n "$requests" -c 20 -t set,get -q \
		> "$tmp/bench.out" 2>&1 &
	bp=$!
	# the benchmark's own CPU time, read just before it exits
	while kill -0 "$bp" 2> /dev/null; do
		b1=$(ticks "$bp" 2> /dev/null || echo "${b1:-0}")
		[ -n "$rp" ] && r1=$(ticks "$rp")
		sleep 0.05
	done
	wait "$bp"
	c1=$(ticks "$spid")
	if [ -n "$rp" ]; then
		r1=$(ticks "$rp")
		kill -INT "$rp"
		wait "$rp"
	fi
	rate=$(tr '\r' '\n' < "$tmp/bench.out" | awk '/requests per second/ {
		for (i = 1; i <= NF; i++) if ($i == "requests") { s += $(i - 1); n++ } }
		END { printf "%.0f", s / n }')
	awk -v r="$rate" -v s=$((c1 - c0)) -v b="${b1:-0}" -v p=$((r1 - r0)) -v n=$((2 * requests)) \
		-v hz="$(getconf CLK_TCK)" 'BEGIN { f = 1e6 / hz / n;
		printf "%s %.3f %.3f %.3f\n", r, s * f, b * f, p * f }'
}

modes="none nreq default"
: > "$tmp/runs"
for ((r = 1; r <= rounds; r++)); do
	order=$modes
	((r % 2 == 0)) && order=$(echo $modes | tr ' ' '\n' | tac | tr '\n' ' ')
	for m in $order; do
		v=$(run "$m")
		echo "$m $v" >> "$tmp/runs"
		echo "round $r: $m: $v" >&2
	done
done
{
	echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "# redis on CPU $last, redis-benchmark on CPU 0, $rounds rounds x $((2 * requests)) requests, ABBA"
	awk -v modes="$modes" '
		{ n[$1]++; for (k = 2; k <= 5; k++) { s[$1, k] += $k; ss[$1, k] += $k * $k } }
		END {
			split(modes, m, " ")
			printf "%-8s %18s %6s %16s %6s %16s %6s %12s\n", "mode", "rate (req/s)",
				"ratio", "server us/req", "ratio", "client us/req", "ratio", "recorder us/req"
			for (i = 1; i in m; i++) {
				k = m[i]
				for (f = 2; f <= 5; f++) {
					mu[f] = s[k, f] / n[k]
					v = n[k] > 1 ? (ss[k, f] - n[k] * mu[f] * mu[f]) / (n[k] - 1) : 0
					sd[f] = sqrt(v > 0 ? v : 0)
					if (k == "none") base[f] = mu[f]
				}
				printf "%-8s %9.0f +- %6.0f %6.3f %7.2f +- %5.2f %6.3f %7.2f +- %5.2f %6.3f %7.2f +- %4.2f\n",
					k, mu[2], sd[2], mu[2] / base[2], mu[3], sd[3], mu[3] / base[3],
					mu[4], sd[4], mu[4] / base[4], mu[5], sd[5]
			}
		}' "$tmp/runs"
	echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out"
