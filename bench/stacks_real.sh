#!/bin/bash
# stacks_real.sh - issue 11: full user stacks on Debian's redis-server (built
# without frame pointers), perfcap --stack-copy against perf --call-graph
# dwarf, in interleaved rounds of the same run:
#   untraced | perfcap-record -e cpu -F 99 -p PID | perf record -F 99 --call-graph dwarf -p PID
# For each round: redis-benchmark throughput (get,set); for the recorders
# the capture's size per CPU sample, and for perfcap the share of samples
# whose user stack unwound to the outermost frame, and the import's rate.
# Usage: bench/stacks_real.sh [ROUNDS] [REQUESTS]   (as root; defaults 3 300000)
# Env: PERFCAP_RECORD, PERFCAP_ANALYZE (default build-s/...)
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
rounds=${1:-3}
requests=${2:-300000}
rec=${PERFCAP_RECORD:-$here/../build-s/record/perfcap-record}
ana=${PERFCAP_ANALYZE:-$here/../build-s/analyze/perfcap-analyze}
tmp=$(mktemp -d /tmp/stacks_real.XXXXXX)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no > "$tmp/redis.log" 2>&1 &
rpid=$!
trap 'kill $rpid 2>/dev/null; wait $rpid 2>/dev/null; rm -rf "$tmp"' EXIT
sleep 0.5

# throughput of one load: mean requests/s of the GET and SET lines
load() {
	redis-benchmark -p "$port" -n "$requests" -t get,set -q 2>/dev/null | tr '\r' '\n' |
		awk '/requests per second/ { for (i = 1; i <= NF; i++) if ($i == "requests") { s += $(i-1); n++ } }
		     END { printf "%.0f\n", n ? s / n : 0 }'
}

round() {   # $1 = mode
	local out="$tmp/$1.data" r
	case $1 in
	untraced) r=$(load) ;;
	perfcap)
		"$rec" -e cpu -F 99 -p "$rpid" -o "$tmp/run.perfcap" -f > /dev/null 2> "$tmp/rec.err" &
		local p=$!; sleep 1; r=$(load); kill -INT $p; wait $p
		local n; n=$("$ana" import -f "$tmp/run.perfcap" -o "$tmp/run.db" > /dev/null &&
			sqlite3 "$tmp/run.db" "SELECT COUNT(*) || ' ' || SUM(u.stop = 'end') FROM samples s
				LEFT JOIN user_stack_unwinds u ON u.stack_id = s.ustack_id WHERE s.pid = $rpid")
		echo "perfcap $(stat -c %s "$tmp/run.perfcap") $n" >> "$tmp/sizes" ;;
	perf_dwarf)
		perf record -q -F 99 --call-graph dwarf -p "$rpid" -o "$out" > /dev/null 2>&1 &
		local p=$!; sleep 1; r=$(load); kill -INT $p; wait $p
		local n; n=$(perf report -i "$out" --stats 2>/dev/null | awk '/SAMPLE events:/ { print $3 }')
		echo "perf_dwarf $(stat -c %s "$out") ${n:-0}" >> "$tmp/sizes" ;;
	esac
	echo "$1 $r" >> "$tmp/rates"
}

for i in $(seq "$rounds"); do
	for m in untraced perfcap perf_dwarf; do round "$m"; done
done
echo "redis-server throughput (requests/s, $rounds interleaved rounds, -n $requests get,set):"
summarize_rates "$tmp/rates" "untraced perfcap perf_dwarf"
echo "bytes per CPU sample on disk, complete user stacks:"
awk '{ b[$1] += $2; n[$1] += $3; if (NF > 3) c[$1] += $4 }
     END { for (k in b) printf "  %-12s %8.0f bytes/sample  (%d samples)%s\n", k, b[k] / (n[k] ? n[k] : 1), n[k],
	     (k == "perfcap" ? sprintf("  complete %.1f%%", 100 * c[k] / (n[k] ? n[k] : 1)) : "") }' "$tmp/sizes"
# unwinding rate: import of the last perfcap capture
s=$(date +%s.%N); "$ana" import -f "$tmp/run.perfcap" -o "$tmp/run.db" > /dev/null; e=$(date +%s.%N)
echo "import (with unwinding) of the last capture: $(awk -v s="$s" -v e="$e" 'BEGIN { printf "%.3f", e - s }') s"
