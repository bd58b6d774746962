#!/bin/bash
# analyze_real.sh - the analyzer at real-capture scale: import, report,
# diff (a capture against itself), report --html and report straight on the
# capture, wall time and peak RSS, side by side with `perf report` and
# `perf script` on a perf.data of the same run recording the same kinds of
# events (perf record -e raw_syscalls:*,sched:sched_switch,sched:sched_wakeup -g).
#
# 1. A synthetic server capture (bench/gen_capture --requests: scheduler,
#    syscalls, epoll returns and request traffic on sockets) of EVENTS events
#    (0: none).
# 2. Debian's servers on loopback, started and stopped here by pid, under
#    their load generators for SECONDS, recorded with every source (or
#    SOURCES) by perfcap-record and by perf at the same time:
#      redis-server + redis-benchmark, nginx + wrk, postgres + pgbench.
# Each measurement runs ROUNDS times, the tools interleaved round by round
# (perfcap's steps, then perf's, then perf's, then perfcap's ...): mean +- sd,
# the import's events/s, and the ratios the targets are stated in (report /
# import, diff / import, html / import; perfcap report / perf report).
#
# Usage: bench/analyze_real.sh [BUILD_DIR] [SECONDS] [ROUNDS] [EVENTS] [SERVERS]
#   defaults: build 10 3 30000000 "redis nginx postgres"
# Environment:
#   BASE=DIR        also measure DIR's perfcap-analyze (an earlier build) on
#                   the same captures, interleaved with BUILD_DIR's (ABBA);
#                   its steps are reported as base:STEP
#   KEEP=DIR        keep the recordings in DIR (NAME-SECONDS.perfcap and
#                   .perf.data) instead of deleting them
#   CAPTURES=DIR    measure the recordings kept there by KEEP instead of
#                   recording (SECONDS picks them)
#   PERF_ROUNDS=N   run perf report/script in the first N rounds only (perf
#                   on a 60 s recording takes minutes and GiBs)
#   SOURCES=LIST    what perfcap records: -e LIST (default every source,
#                   cpu,sched,syscall,mux,block,net,lock,mem), or "default"
#                   for the recording users get without -e (cpu, sched,
#                   block, waits, req: mostly REQUEST_BATCH records);
#                   kept recordings are then named NAME-SECONDS-default
# A 60 s recording of redis every source is about 50 MB (6M events), its
# perf.data about 2 GB: SECONDS=60 needs that much room in /tmp (or KEEP).
# Needs root, perf, redis-server, redis-tools, nginx-light, wrk, postgresql.
# Not a test: numbers are reported, not judged.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
build=${1:-build}
secs=${2:-10}
rounds=${3:-3}
events=${4:-30000000}
servers=${5:-redis nginx postgres}
base=${BASE:+$(realpath "$BASE/analyze/perfcap-analyze")}
perf_rounds=${PERF_ROUNDS:-$rounds}
sources=${SOURCES:-cpu,sched,syscall,mux,block,net,lock,mem}
if [ "$sources" = default ]; then
	source_args=(); keep_suffix=-default; what="default recording"
else
	source_args=(-e "$sources"); keep_suffix=
	what=$([ "$sources" = cpu,sched,syscall,mux,block,net,lock,mem ] && echo "every source" ||
	       echo "-e $sources")
fi
ana=$(realpath "$build/analyze/perfcap-analyze")
rec=$(realpath "$build/record/perfcap-record")
gen=$(realpath "$build/tests/analyze/gen_capture")
tmp=$(mktemp -d /tmp/perfcap-areal.XXXXXX)
chmod 755 "$tmp"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2> /dev/null; done
	wait 2> /dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# timed NAME CMD...: runs CMD (stdout discarded, but for an import's
# summary line), appends "NAME seconds rss_mib events" to $tmp/times
# (events: what an import says it imported).
timed() {
	local name=$1 out=/dev/null; shift
	case $name in *import) out=$tmp/t.out ;; esac   # its summary line
	/usr/bin/time -f '%e %M' -o "$tmp/t" "$@" > "$out" 2> "$tmp/t.err" ||
		{ echo "failed: $*" >&2; tail -3 "$tmp/t.err" >&2; return 1; }
	read -r s kib < <(tail -1 "$tmp/t")
	local ev=
	[ "$out" = /dev/null ] ||
		ev=$(sed -nE 's/.*imported ([0-9,]+) events.*/\1/p' "$out" | tr -d ,)
	echo "$name $s $((kib / 1024)) ${ev:-0}" >> "$tmp/times"
}

# summary TITLE: mean +- sd of every step in $tmp/times, the import's
# events/s, and the ratios to the import of the same analyzer.
summary() {
	echo "$1"
	awk '
		!($1 in n) { order[++k] = $1 }
		{ n[$1]++; s[$1] += $2; ss[$1] += $2 * $2; if ($3 > r[$1]) { r[$1] = $3 }
		  if ($4 > 0) { ev[$1] = $4 } }
		END {
			printf "  %-20s %9s %7s %9s %8s %9s\n", "step", "mean s", "sd", "peak MiB",
				"x import", "events/s"
			for (i = 1; i <= k; i++) {
				x = order[i]; m = s[x] / n[x]
				v = n[x] > 1 ? (ss[x] - n[x] * m * m) / (n[x] - 1) : 0
				p = x ~ /^base:/ ? "base:" : ""
				imp = (p "import") in n ? s[p "import"] / n[p "import"] : 0
				rate = x in ev && m > 0 ? sprintf("%.2fM", ev[x] / m / 1e6) : ""
				printf "  %-20s %9.2f %7.2f %9d %8.2f %9s\n", x, m, sqrt(v > 0 ? v : 0),
					r[x], (imp > 0 && x !~ /^perf-/ ? m / imp : 0), rate
			}
			if ("perf-report" in n && "report-cap" in n)
				printf "  perfcap report (capture, import included) / perf report: %.2f\n",
					(s["report-cap"] / n["report-cap"]) / (s["perf-report"] / n["perf-report"])
		}' "$tmp/times"
	rm -f "$tmp/times"
}

# analyze_steps ANALYZER PREFIX CAP: one round of perfcap-analyze's steps
# on CAP, named PREFIX + step.
analyze_steps() {
	local a=$1 p=$2 cap=$3 db=$tmp/run.db
	timed "${p}import" "$a" import -f "$cap" -o "$db" || return 1
	timed "${p}report" "$a" report "$db"
	timed "${p}report-json" "$a" report --json "$db"
	timed "${p}diff-self" "$a" diff "$db" "$db"
	timed "${p}html" "$a" report --html "$tmp/page.html" "$db"
	timed "${p}report-cap" "$a" report "$cap"
	rm -f "$db" "$tmp/page.html"
}

# both_steps CAP R: this build's steps, and BASE's when given, in the
# order of round R (ABBA).
both_steps() {
	if [ -z "$base" ]; then
		analyze_steps "$ana" "" "$1"
	elif [ $(($2 % 2)) = 1 ]; then
		analyze_steps "$ana" "" "$1"; analyze_steps "$base" "base:" "$1"
	else
		analyze_steps "$base" "base:" "$1"; analyze_steps "$ana" "" "$1"
	fi
}

perf_steps() {
	timed perf-report perf report -i "$1" --stdio
	timed perf-script perf script -i "$1"
}

# measure TITLE CAP [PERFDATA]: ROUNDS rounds, interleaved (ABBA).
measure() {
	local title=$1 cap=$2 pdata=${3:-}
	for ((r = 1; r <= rounds; r++)); do
		local with_perf=; [ -n "$pdata" ] && [ "$r" -le "$perf_rounds" ] && with_perf=1
		if [ -n "$with_perf" ] && [ $((r % 2)) = 0 ]; then
			perf_steps "$pdata"; both_steps "$cap" "$r"
		else
			both_steps "$cap" "$r"; [ -n "$with_perf" ] && perf_steps "$pdata"
		fi
	done
	summary "$title"
	echo "  capture $(stat -c %s "$cap") bytes"
	[ -n "$pdata" ] && echo "  perf.data $(stat -c %s "$pdata") bytes"
}

# keep_or_drop NAME: the recordings of NAME go to KEEP, or are deleted.
keep_or_drop() {
	if [ -n "${KEEP:-}" ]; then
		mkdir -p "$KEEP"
		mv "$tmp/$1.perfcap" "$KEEP/$1-$secs$keep_suffix.perfcap"
		mv "$tmp/$1.perf.data" "$KEEP/$1-$secs$keep_suffix.perf.data"
	else
		rm -f "$tmp/$1.perfcap" "$tmp/$1.perf.data"
	fi
}

# kept NAME TITLE: measures the recordings CAPTURES holds for NAME.
kept() {
	local cap=$CAPTURES/$1-$secs$keep_suffix.perfcap
	local pdata=$CAPTURES/$1-$secs$keep_suffix.perf.data
	[ -f "$cap" ] || { echo "$1: no $cap"; return; }
	[ -f "$pdata" ] || pdata=
	measure "$2 (kept recording)" "$cap" "$pdata"
}

# record_both PIDS CAP PERFDATA: SECONDS of perfcap's SOURCES and of
# perf's tracepoints on the same processes, at the same time.
record_both() {
	local pids_csv=$1 cap=$2 pdata=$3
	"$rec" "${source_args[@]}" -p "$pids_csv" -d "$secs" -f \
		-o "$cap" > "$tmp/rec.out" 2>&1 &
	local rp=$!
	perf record -e 'raw_syscalls:*,sched:sched_switch,sched:sched_wakeup' -g \
		-p "$pids_csv" -o "$pdata" -- sleep "$secs" > /dev/null 2>&1 &
	local pp=$!
	wait $rp; wait $pp
	grep -E 'wrote|lost' "$tmp/rec.out" | sed 's/^/  /'
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

run_redis() {
	local port; port=$(free_port)
	redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
		--daemonize no > "$tmp/redis.log" 2>&1 &
	local srv=$!; pids+=($srv)
	for _ in $(seq 50); do redis-cli -p "$port" ping > /dev/null 2>&1 && break; sleep 0.1; done
	timeout $((secs + 3)) redis-benchmark -p "$port" -n 100000000 -c 50 -t set,get -q \
		> /dev/null 2>&1 &
	local load=$!; pids+=($load)
	sleep 1
	record_both "$srv" "$tmp/redis.perfcap" "$tmp/redis.perf.data"
	kill $load $srv 2> /dev/null; wait $load $srv 2> /dev/null
	measure "redis-server + redis-benchmark, ${secs} s, $what" \
		"$tmp/redis.perfcap" "$tmp/redis.perf.data"
	keep_or_drop redis
}

run_nginx() {
	local port; port=$(free_port)
	mkdir -p "$tmp/nginx/html" "$tmp/nginx/logs"
	echo "hello from perfcap's bench" > "$tmp/nginx/html/index.html"
	cat > "$tmp/nginx/nginx.conf" <<-EOF
	worker_processes 2;
	pid $tmp/nginx/nginx.pid;
	error_log $tmp/nginx/logs/error.log;
	events { worker_connections 1024; }
	http {
		access_log off;
		server { listen 127.0.0.1:$port; root $tmp/nginx/html; }
	}
	EOF
	nginx -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" -g 'daemon off;' &
	local srv=$!; pids+=($srv)
	sleep 1
	local all; all=$(echo "$srv" $(pgrep -P "$srv") | tr ' ' ',')
	timeout $((secs + 3)) wrk -t 2 -c 50 -d $((secs + 2))s "http://127.0.0.1:$port/" \
		> /dev/null 2>&1 &
	local load=$!; pids+=($load)
	sleep 1
	record_both "$all" "$tmp/nginx.perfcap" "$tmp/nginx.perf.data"
	kill $load $srv 2> /dev/null; wait $load $srv 2> /dev/null
	measure "nginx + wrk, ${secs} s, $what" "$tmp/nginx.perfcap" "$tmp/nginx.perf.data"
	keep_or_drop nginx
}

run_postgres() {
	local port bin; port=$(free_port)
	bin=$(ls -d /usr/lib/postgresql/*/bin | tail -1)
	mkdir -p "$tmp/pg"; chown postgres "$tmp/pg"
	runuser -u postgres -- "$bin/initdb" -D "$tmp/pg/data" > /dev/null 2>&1 ||
		{ echo "postgres: initdb failed"; return; }
	runuser -u postgres -- "$bin/postgres" -D "$tmp/pg/data" -p "$port" \
		-c listen_addresses=127.0.0.1 -k "$tmp/pg" > "$tmp/pg.log" 2>&1 &
	local srv=$!; pids+=($srv)
	for _ in $(seq 100); do
		runuser -u postgres -- "$bin/pg_isready" -h 127.0.0.1 -p "$port" > /dev/null 2>&1 && break
		sleep 0.1
	done
	runuser -u postgres -- pgbench -h 127.0.0.1 -p "$port" -i -s 2 postgres > /dev/null 2>&1
	local pm; pm=$(head -1 "$tmp/pg/data/postmaster.pid")
	runuser -u postgres -- pgbench -h 127.0.0.1 -p "$port" -c 8 -j 2 -T $((secs + 2)) \
		postgres > /dev/null 2>&1 &
	local load=$!; pids+=($load)
	sleep 1
	# after pgbench connected: its backends exist now (children forked
	# later are followed anyway)
	local pg; pg=$(pgrep -P "$pm" | tr '\n' ',')
	record_both "${pg}$pm" "$tmp/pg.perfcap" "$tmp/pg.perf.data"
	wait $load 2> /dev/null
	kill -INT "$pm" 2> /dev/null; wait $srv 2> /dev/null   # runuser does not forward it
	measure "postgres + pgbench (8 clients), ${secs} s, $what" \
		"$tmp/pg.perfcap" "$tmp/pg.perf.data"
	keep_or_drop pg
}

echo "perfcap-analyze at scale ($build${base:+ vs base $BASE}; $(nproc) CPUs;" \
	"load $(cut -d' ' -f1-3 /proc/loadavg))"
if [ "$events" -gt 0 ]; then
	"$gen" --requests "$tmp/synth.perfcap" "$events" > /dev/null
	measure "1. synthetic server capture, $events events with requests" "$tmp/synth.perfcap"
	rm -f "$tmp/synth.perfcap"
fi
for s in $servers; do
	echo
	if [ -n "${CAPTURES:-}" ]; then
		case $s in
		redis) kept redis "redis-server + redis-benchmark, ${secs} s, $what" ;;
		nginx) kept nginx "nginx + wrk, ${secs} s, $what" ;;
		postgres) kept pg "postgres + pgbench (8 clients), ${secs} s, $what" ;;
		esac
		continue
	fi
	case $s in
	redis) run_redis ;;
	nginx) run_nginx ;;
	postgres) run_postgres ;;
	esac
done
