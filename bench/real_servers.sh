#!/bin/bash
# real_servers.sh - what recording costs Debian's real servers: throughput
# untraced, under the default recording (no -e), the default without its
# request source (nreq: -e cpu,sched,block,waits, what the default was
# before req), every source at once and `perf record -g`, modes
# interleaved ABBA (round 1 in order, round 2 reversed, ...), with the
# recorder's CPU time, peak RSS, bytes on disk per second and lost events,
# and the host's steal during each run (time a hypervisor gave to other
# guests: on a virtual machine a run that lost more of it is slower for a
# reason no mode explains; /proc/stat, as STATS host.cpu.steal_ns).
#
#   redis    redis-server, driven by redis-benchmark (SET+GET, 50 clients)
#   nginx    nginx (1 worker, a 4 KiB static file), driven by wrk
#   postgres postgres (synchronous_commit off), driven by pgbench (TPC-B,
#            8 clients, scale 8: pgbench(1) asks for a scale at least the
#            clients' count, else a run "mostly measures update contention")
#            no autovacuum or timed checkpoint, every table vacuumed before
#            each run (pgbench -v): each run starts from the same tables,
#            and no background job lands in one mode's run and not another's.
#            PGBENCH_ARGS (env): more pgbench options, e.g. "-S" for its
#            select-only load (no row locks, no WAL writes; not steadier
#            here: untraced sd 14% of the mean, TPC-B's 11-12%, 2026-11-29)
#
# Every server listens on 127.0.0.1 only, in a private directory, and is
# started and stopped by this script by its pid. The load is bounded: a
# fixed number of requests (redis) or seconds (nginx, postgres).
#
# Usage: bench/real_servers.sh [BUILD_DIR] [ROUNDS] [SECONDS] [SERVER...]
#   defaults: build, 4 rounds, 5 s per run, all three servers.
# PERF_ARGS (env, default "-g"): the perf mode's options before -p, e.g.
# "-F 499" for perf's bare sampling cost at a rate (with -a: the whole
# host, per-CPU events, and no -p).
# PIN=1 (env) pins the server and the recorder (or perf) to CPU 1 and the
# load generator to CPU 0 (taskset), so that where the scheduler places
# the threads of server and load cannot move the rate; the recorder shares
# the server's CPU, so all its cost is charged to the server (an upper
# bound). On the 2-CPU VM of 2026-11-28 it did not make the rates steadier
# (untraced sd 6-7% of the mean either way: the spread is the host's).
# Default 0: nothing pinned, the host as it is.
# Each run's load is measured in steady state, the way a recorder attached
# to a busy server sees it: the recorder is attached (2 s), then the same
# load runs WARM seconds (env, default 2; 0: none) unmeasured, in every
# mode, untraced too, then the measured load. Without it a 5 s run
# follows its load's first second whole (the req source follows a load
# that starts or grows past --req-rate whole to the end of that second:
# docs/perfcap-record.md), a fifth of the run at that source's full cost,
# which a recording of a server already busy pays once, not every 5 s.
# Beside the rate, each run's host CPU per request: the whole host's busy
# time (every task, interrupts; steal and idle left out) over the requests
# served, and its paired ratio, untraced over the mode ("capacity"). On a
# host the load saturates that is the throughput ratio without the
# hypervisor's steal and without a pause in the load; it still moves with
# what steal does not count (a neighbour on the same physical core slows
# every instruction): on 2026-11-29, with steal under 3%, its sd was that
# of the paired rates (0.07-0.09), where on nights with 10-30% steal the
# rates' was 0.4-1.2.
# Needs root, perf, redis-server + redis-tools, nginx-light + wrk,
# postgresql. Not a test: prints a table (also to $OUT, default
# /tmp/real_servers.txt). State the load average with the numbers.
# Env: MODES, a subset of the modes in that order (e.g. "none default"),
#      and `base`: the default recording by another build's recorder
#      REC_BASE (e.g. MODES="none base default" REC_BASE=/tmp/old/perfcap-
#      record compares two builds in the same interleaved rounds; with
#      BASE_ARGS, that recorder's options instead, e.g. BASE_ARGS="-e
#      cpu,sched,syscall,mux,block,net,lock,mem" and MODES="none base
#      every"), and
#      `e=LIST`: -e LIST (e.g. MODES="none default e=cpu e=sched,waits"
#      splits the default's cost by source), and `a=ARGS`: any options, +
#      for a space (e.g. a=-e+cpu+-F+999; a=--req-rate+0 is the default
#      following every request, not in time windows above 10,000 a second).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
build=$(realpath "${1:-build}")
rounds=${2:-4}
secs=${3:-5}
shift $(($# > 3 ? 3 : $#))
servers=${*:-redis nginx postgres}
rec=$build/record/perfcap-record
out=${OUT:-/tmp/real_servers.txt}
every=cpu,sched,syscall,mux,block,net,lock,mem,waits,req
nreq=cpu,sched,block,waits
tmp=$(mktemp -d /tmp/perfcap-servers.XXXXXX)
chmod 755 "$tmp"
server_pid=
cleanup() {
	if [ -n "$server_pid" ]; then kill "$server_pid" 2> /dev/null || true; fi
	wait 2> /dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

# ---- servers: start_NAME sets server_pid and pids (what -p records) -------

start_redis() {
	"${on_server[@]}" redis-server --port 16379 --bind 127.0.0.1 --save '' --appendonly no \
		--daemonize no > "$tmp/redis.log" 2>&1 &
	server_pid=$!
	for _ in $(seq 50); do redis-cli -p 16379 ping > /dev/null 2>&1 && break; sleep 0.1; done
	pids=$server_pid
}
# requests/s of one bounded run (about $secs s at 80k requests/s)
load_redis() {
	"${on_load[@]}" redis-benchmark -p 16379 -n $((secs * 80000)) -c 50 -t set,get -q 2> /dev/null |
		awk '{ for (i = 1; i <= NF; i++) if ($i == "requests") { s += $(i - 1); n++ } }
		     END { printf "%.0f\n", s / n }'
}

start_nginx() {
	mkdir -p "$tmp/nginx/www"
	head -c 4096 /dev/zero | tr '\0' x > "$tmp/nginx/www/index.html"
	cat > "$tmp/nginx/nginx.conf" <<EOF
worker_processes 1;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path $tmp/nginx;
	proxy_temp_path $tmp/nginx;
	fastcgi_temp_path $tmp/nginx;
	uwsgi_temp_path $tmp/nginx;
	scgi_temp_path $tmp/nginx;
	server { listen 127.0.0.1:18080; root $tmp/nginx/www; }
}
EOF
	"${on_server[@]}" nginx -c "$tmp/nginx/nginx.conf" -g 'daemon off;' &
	server_pid=$!
	for _ in $(seq 50); do curl -sf http://127.0.0.1:18080/ > /dev/null 2>&1 && break; sleep 0.1; done
	pids=$(echo $server_pid $(cat /proc/$server_pid/task/*/children) | tr ' ' ,)
}
load_nginx() {
	"${on_load[@]}" wrk -t 1 -c 50 -d "${secs}s" http://127.0.0.1:18080/ 2> /dev/null |
		awk '/^Requests\/sec/ { printf "%.0f\n", $2 }'
}

# the postmaster and its background processes (no client backend)
pg_pids() {
	local p
	{
		echo "$server_pid"
		for p in $(cat /proc/$server_pid/task/*/children); do
			# (an if: under pipefail a backend that just exited must not
			# fail the list)
			if tr '\0' ' ' 2> /dev/null < /proc/$p/cmdline | grep -qv '127\.0\.0\.1('; then
				echo "$p"
			fi
		done
	} | paste -sd,
}
start_postgres() {
	local bin
	bin=$(ls -d /usr/lib/postgresql/*/bin | tail -1)
	mkdir -p "$tmp/pg"
	chown postgres "$tmp/pg"
	runuser -u postgres -- "$bin/initdb" -D "$tmp/pg/data" -A trust > "$tmp/pg/initdb.log" 2>&1
	"${on_server[@]}" runuser -u postgres -- "$bin/postgres" -D "$tmp/pg/data" -k "$tmp/pg" -p 15432 \
		-c listen_addresses=127.0.0.1 -c synchronous_commit=off \
		-c autovacuum=off -c checkpoint_timeout=1h -c max_wal_size=8GB \
		> "$tmp/pg/server.log" 2>&1 &
	server_pid=$!
	for _ in $(seq 100); do
		pg_isready -h 127.0.0.1 -p 15432 > /dev/null 2>&1 && break
		sleep 0.1
	done
	# runuser's child is the postmaster
	server_pid=$(cat /proc/$server_pid/task/*/children | awk '{ print $1 }')
	pgbench -h 127.0.0.1 -p 15432 -U postgres -i -s 8 postgres > "$tmp/pg/init.log" 2>&1
	pids=$(pg_pids)
}
load_postgres() {
	# shellcheck disable=SC2086 # PGBENCH_ARGS: words
	"${on_load[@]}" pgbench -h 127.0.0.1 -p 15432 -U postgres -v -c 8 -j 2 ${PGBENCH_ARGS:-} \
		-T "$secs" postgres 2> /dev/null |
		awk '/^tps/ { printf "%.0f\n", $3 }'
}

# ---- one run -------------------------------------------------------------

warm_secs=${WARM:-2}
on_server=()
on_load=()
if [ "${PIN:-0}" = 1 ]; then
	[ "$(nproc)" -ge 2 ] || { echo "real_servers.sh: PIN=1 needs 2 CPUs" >&2; exit 2; }
	on_server=(taskset -c 1)
	on_load=(taskset -c 0)
fi
# warm SERVER: the unmeasured load before the measured one (see WARM)
warm() {
	local secs=$warm_secs
	if [ "$secs" != 0 ]; then load_$1 > /dev/null; fi
}

# host_ticks: "busy steal" clock ticks of the whole host (/proc/stat)
host_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $9 }' /proc/stat; }

# steal_pct "BUSY0 STEAL0" "BUSY1 STEAL1": steal over busy + steal, percent
steal_pct() {
	echo "$1 $2" | awk '{ b = $3 - $1; s = $4 - $2; printf "%.1f", (b + s > 0 ? 100 * s / (b + s) : 0) }'
}

# recorder_argv MODE: sets argv to the recorder and its options for MODE
# (every mode but none and perf)
recorder_argv() {
	local words
	case $1 in
	default) argv=("$rec") ;;
	base) read -ra words <<< "${BASE_ARGS:-}"
	      argv=("${REC_BASE:?base needs REC_BASE}" "${words[@]}") ;;
	nreq) argv=("$rec" -e "$nreq") ;;
	every) argv=("$rec" -e "$every") ;;
	e=*) argv=("$rec" -e "${1#e=}") ;;
	a=*) read -ra words <<< "$(echo "${1#a=}" | tr + ' ')" # + for a space
	     argv=("$rec" "${words[@]}") ;;
	esac
}

# run SERVER MODE: prints "rate bytes_per_s lost recorder_ms_per_s rss_kib
# server_us_per_request steal_pct recorder_setup_s host_us_per_request". The recorder's CPU is
# split at the start of the load: loading and verifying the BPF programs
# (setup, 0.3-0.4 s for the default set) happens before the load and costs
# the server nothing; the load's share is what competes with it.
run() {
	local server=$1 mode=$2 pid= t0 t1 rate size lost cpu rss r0 r1
	# postgres: its backends come and go; new ones are followed as children.
	# The postmaster and its helpers, not the last run's client backends,
	# which may still be exiting (-p refuses a pid that is gone)
	[ "$server" = postgres ] && pids=$(pg_pids)
	case $mode in
	none)
		warm "$server"
		c0=$(server_ticks)
		h0=$(host_ticks)
		t0=$(date +%s.%N)
		rate=$(load_$server)
		t1=$(date +%s.%N)
		h1=$(host_ticks)
		c1=$(server_ticks)
		echo "$rate 0 0 0 0 $(cpu_per_request "$c0" "$c1" "$rate" "$t0" "$t1") $(steal_pct "$h0" "$h1") 0 $(host_per_request "$h0" "$h1" "$rate" "$t0" "$t1")"
		return ;;
	esac
	tr0=$(date +%s.%N)
	case $mode in
	perf) read -ra words <<< "${PERF_ARGS:--g}"
	      target=(-p "$pids")
	      [[ " ${words[*]} " == *" -a "* ]] && target=()   # the whole host instead
	      "${on_server[@]}" perf record "${words[@]}" "${target[@]}" -o "$tmp/perf.data" \
		      > /dev/null 2>&1 & pid=$! ;;
	*) recorder_argv "$mode"
	   "${on_server[@]}" "${argv[@]}" -p "$pids" -f -o "$tmp/run.perfcap" 2> "$tmp/run.err" & pid=$! ;;
	esac
	sleep 2 # attached
	if ! kill -0 $pid 2> /dev/null; then # refused its options, or failed to start
		[ "$mode" != perf ] && sed "s/^/real_servers.sh: $mode: /" "$tmp/run.err" >&2
		echo "real_servers.sh: $mode: the recorder exited before the load" >&2
		exit 1
	fi
	warm "$server"
	r0=$(proc_cpu $pid)
	c0=$(server_ticks)
	h0=$(host_ticks)
	t0=$(date +%s.%N)
	rate=$(load_$server)
	t1=$(date +%s.%N)
	h1=$(host_ticks)
	c1=$(server_ticks)
	r1=$(proc_cpu $pid)
	cpu=$(awk -v a="$r0" -v b="$r1" -v t0="$t0" -v t1="$t1" -v hz="$(getconf CLK_TCK)" \
		'BEGIN { printf "%.1f", (b - a) / hz * 1000 / (t1 - t0) }')
	rss=$(awk '/^VmHWM/ { print $2 }' /proc/$pid/status)
	kill -INT $pid
	wait $pid || true
	if [ "$mode" = perf ]; then
		size=$(stat -c %s "$tmp/perf.data")
		lost=$(perf_lost "$tmp/perf.data")
	else
		size=$(stat -c %s "$tmp/run.perfcap")
		lost=$(recorder_lost "$tmp/run.err")
		refused_source "$tmp/run.err" "real_servers.sh: $mode" && exit 1
	fi
	# bytes per second of recording (the attach wait and the warm load too)
	echo "$rate $(awk -v s="$size" -v a="$tr0" -v b="$t1" 'BEGIN { printf "%.0f", s / (b - a) }') ${lost:-?} $cpu $rss $(cpu_per_request "$c0" "$c1" "$rate" "$t0" "$t1") $(steal_pct "$h0" "$h1") $(awk -v a="$r0" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", a / hz }') $(host_per_request "$h0" "$h1" "$rate" "$t0" "$t1")"
}

# server_ticks: user+sys clock ticks of the server's processes and of their
# children that exited (postgres backends end with each pgbench run and are
# reaped by the postmaster): the BPF programs run in, and are charged to,
# the traced tasks
server_ticks() {
	local p t=0
	for p in ${pids//,/ }; do
		[ -r /proc/$p/stat ] && t=$((t + $(awk '{ print $14 + $15 + $16 + $17 }' /proc/$p/stat)))
	done
	echo $t
}

# cpu_per_request TICKS0 TICKS1 RATE T0 T1: server CPU us per request
cpu_per_request() {
	awk -v a="$1" -v b="$2" -v r="$3" -v t0="$4" -v t1="$5" -v hz="$(getconf CLK_TCK)" \
		'BEGIN { n = r * (t1 - t0); printf "%.2f", (n > 0 ? (b - a) / hz * 1e6 / n : 0) }'
}

# host_per_request "BUSY0 STEAL0" "BUSY1 STEAL1" RATE T0 T1: the whole
# host's busy CPU (every task and interrupt, steal and idle left out) us
# per request. On a host the load saturates, requests a second are the
# CPUs' time over this, so its ratio to the untraced run's is what the mode
# costs in throughput, without the hypervisor's steal (a run that lost
# more CPU to other guests is not slower by it here) nor a pause in the
# load; the recorder, its BPF programs wherever they run, and the load
# generator are all in it.
host_per_request() {
	echo "$1 $2" | awk -v r="$3" -v t0="$4" -v t1="$5" -v hz="$(getconf CLK_TCK)" \
		'{ n = r * (t1 - t0); printf "%.2f", (n > 0 ? ($3 - $1) / hz * 1e6 / n : 0) }'
}

# summarize SERVER FILE: per mode, the mean rate and its ratio to the
# untraced mean, and the paired ratio: each round's rate over the untraced
# rate of the same round (its runs are next to each other in time, so a
# host that slows down for a while slows both), mean +- sd over the
# rounds. The paired ratio is the one to quote on a noisy host.
summarize() {
	local server=$1 file=$2
	awk -v modes="$modes" -v server="$server" '
		{ n[$1]++; s[$1] += $2; ss[$1] += $2 * $2; b[$1] += $3; l[$1] += $4;
		  c[$1] += $5; if ($6 > r[$1]) r[$1] = $6; u[$1] += $7; uu[$1] += $7 * $7;
		  st[$1] += $8; su[$1] += $9; h[$1, $11] = $10; rate[$1, $11] = $2; if ($11 > rounds) rounds = $11 }
		END {
			split(modes, m, " ")
			base = s["none"] / n["none"]
			ubase = u["none"] / n["none"]
			printf "%-8s %-16s %12s %9s %6s %13s %10s %8s %8s %6s %8s %14s %6s %6s %9s %13s\n", "server",
				"mode", "rate mean", "sd", "ratio", "paired", "bytes/s", "lost", "rec ms/s",
				"setup", "rec RSS", "srv us/req", "ratio", "steal", "host us/r", "capacity"
			for (i = 1; i in m; i++) {
				k = m[i]; if (!n[k]) continue
				mean = s[k] / n[k]
				var = n[k] > 1 ? (ss[k] - n[k] * mean * mean) / (n[k] - 1) : 0
				um = u[k] / n[k]
				uv = n[k] > 1 ? (uu[k] - n[k] * um * um) / (n[k] - 1) : 0
				pn = 0; ps = 0; pss = 0
				for (j = 1; j <= rounds; j++)
					if (((k, j) in rate) && rate["none", j] > 0) {
						x = rate[k, j] / rate["none", j]
						pn++; ps += x; pss += x * x
					}
				pm = pn ? ps / pn : 0
				pv = pn > 1 ? (pss - pn * pm * pm) / (pn - 1) : 0
				# host CPU per request, paired: untraced over this mode
				hn = 0; hs = 0; hss = 0; hu = 0
				for (j = 1; j <= rounds; j++)
					if (((k, j) in h) && h[k, j] > 0 && h["none", j] > 0) {
						x = h["none", j] / h[k, j]
						hn++; hs += x; hss += x * x; hu += h[k, j]
					}
				hm = hn ? hs / hn : 0
				hv = hn > 1 ? (hss - hn * hm * hm) / (hn - 1) : 0
				printf "%-8s %-16s %12.0f %9.0f %6.3f %6.3f+-%5.3f %10.0f %8d %8.1f %5.2fs %7.0fM %7.2f+-%5.2f %6.3f %5.1f%% %9.2f %6.3f+-%5.3f\n",
					server, k, mean, sqrt(var > 0 ? var : 0), mean / base, pm,
					sqrt(pv > 0 ? pv : 0), b[k] / n[k], l[k], c[k] / n[k], su[k] / n[k], r[k] / 1024,
					um, sqrt(uv > 0 ? uv : 0), (ubase > 0 ? um / ubase : 0), st[k] / n[k],
					(hn ? hu / hn : 0), hm, sqrt(hv > 0 ? hv : 0)
			}
		}' "$file"
}

modes=${MODES:-none default nreq every perf}
command -v perf > /dev/null || modes=${modes/ perf/}
for m in $modes; do
	case $m in
	none | base | default | nreq | every | perf | e=?* | a=?*) ;;
	*) echo "real_servers.sh: unknown mode '$m' in MODES (none base default nreq every perf e=LIST a=ARGS)" >&2
	   exit 2 ;;
	esac
done
[ -n "$modes" ] || { echo "real_servers.sh: MODES names no mode" >&2; exit 2; }
{
	echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "# $rounds rounds x $secs s after a ${warm_secs} s warm load, modes ABBA, PIN=${PIN:-0}; rate = requests/s"
	echo "# (redis, nginx), tps (postgres);"
	echo "# rec ms/s = recorder user+sys CPU during the load, ms per s (mean); setup = its CPU"
	echo "# before the load (loading the programs: not on the server's path); rec RSS = peak;"
	echo "# nreq = -e $nreq;"
	echo "# every = -e $every; srv us/req = server CPU (user+sys, BPF included) per request:"
	echo "# less sensitive than the rate to other load on the machine (reaped children included);"
	echo "# steal = the host's CPU time given to other guests, % of busy + steal (mean);"
	echo "# host us/r = the whole host's busy CPU per request (steal and idle left out);"
	echo "# capacity = paired untraced host us/r over the mode's: the throughput ratio on a"
	echo "# host the load saturates, without the steal's and the load's pauses' noise"
} | tee "$out"
for server in $servers; do
	start_$server
	load_$server > /dev/null # warm up
	: > "$tmp/$server.rates"
	for ((r = 1; r <= rounds; r++)); do
		order=$modes
		((r % 2 == 0)) && order=$(echo $modes | tr ' ' '\n' | tac | tr '\n' ' ')
		for mode in $order; do
			v=$(run "$server" "$mode")
			echo "$mode $v $r" >> "$tmp/$server.rates"
			echo "$server round $r: $mode: $v" >&2
		done
	done
	summarize "$server" "$tmp/$server.rates" | tee -a "$out"
	kill "$server_pid"
	wait "$server_pid" 2> /dev/null || true
	server_pid=
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out"
