#!/bin/bash
# toggle_cost.sh - what recording costs a real server's throughput, measured
# inside one long load: the recorder is started and stopped while the load
# runs on, and each recorded phase is compared with the untraced phases
# just before and just after it.
#
# Why not bench/real_servers.sh alone: there each mode is a separate load
# of a few seconds, 10-40 s from its untraced pair, and on a shared VM the
# rate of the very same untraced load moves by 10-15% from one run to the
# next (and the CPU time per request with it: a neighbour on the same
# physical core is no steal, 2026-11-29), so a pair's ratio has an sd of
# 0.10-0.15 and a 5% question needs dozens of pairs. Here the load never
# stops, so its connections, caches and (postgres) tables carry on, and a
# recorded phase sits between two untraced ones a few seconds away: its
# ratio is taken to their mean, which also takes out a drift that is
# linear over the three.
#
# One cycle, per recorder mode M in MODES (order reversed every other
# cycle): an untraced phase of PHASE seconds; M started on the server's
# processes, WARM seconds after it says it is recording (the req and sched
# sources follow a load whole to the end of the second they first see
# it; perf: 1 s to start), then a recorded phase of PHASE seconds; M
# stopped (SIGTERM, waited for). A last untraced phase closes the run. The
# throughput of a phase is read from the server's own count, not the load
# generator's summary:
#   redis     total_commands_processed (INFO stats), sampled every 100 ms,
#             under redis-benchmark SET+GET, 50 clients
#   nginx     stub_status' requests, every 100 ms, under wrk (2 threads, 32
#             connections; WRK_ARGS); 2 workers (bench/servers.sh;
#             NGINX_WORKERS)
#   postgres  pgbench's own progress (-P 1, with timestamps: transactions
#             a second), TPC-B, 8 clients, scale 4 (bench/servers.sh)
# interpolated at the phase's edges. Ratio of a recorded phase = its rate /
# mean of the untraced phases around it. Reported per server and mode: n,
# mean +- sd of the ratios, standard error, median; the untraced rate; the
# recorder's CPU (ms per s of its recorded phase), peak RSS, capture bytes
# per second of recording, and lost events (ours: the summary's "lost";
# perf: LOST records).
#
# Modes: default (perfcap-record -p PIDS), every (-e every source), perf
# (perf record -g -p PIDS), e=LIST (-e LIST: one source's share), a=ARGS
# (any options, + for a space), null (nothing recorded: a phase like the
# others with only a sleep started, so that its ratio, 1 but for the host's
# noise, measures the method's own bias and spread in the same run).
#
# Where the time goes: at each phase's edges the host's busy CPU time
# (/proc/stat), the server's processes' and the load generator's (their
# threads' schedstat run time) are read; per request, a recorded phase's
# CPU is compared with the untraced phases' around it, split into what it
# added in the server's threads (where the BPF programs of its events
# run, and whatever they slow down there), in the load generator's, the
# recorder's own, and elsewhere (interrupts, kernel threads); and the
# server's threads' context switches per request (voluntary: they
# blocked; involuntary: they were preempted), untraced and added. On a
# saturated host the CPU added is the throughput lost, seen from where
# the time went.
#
# Each pair also goes to $OUT.pairs ("SERVER MODE RATIO REC_MS RSS_KIB
# BYTES_S LOST UNTRACED_RATE HOST_US +SERVER_US +LOAD_US REC_US
# +ELSEWHERE_US VCSW +VCSW IVCSW +IVCSW", the last four the server's
# context switches per request); `toggle_cost.sh --pool FILE...` pools the
# pairs of several runs into one table. On this host the untraced rate's
# changes stay correlated over about 5 s (postgres TPC-B: autocorrelation
# 0.66 at 1 s, 0.19 at 5 s, 0.07 at 10 s; 2026-11-29), so a pair's ratio
# has an sd of about 0.08-0.15 whatever the phase length (2-10 s), and a
# mean known to +-0.015 takes 40-100 pairs: pool several runs.
#
# Usage: bench/toggle_cost.sh [BUILD_DIR] [CYCLES] [PHASE] [SERVER...]
#   defaults: build, 6 cycles, 5 s phases, redis nginx postgres.
#        bench/toggle_cost.sh --pool PAIRS_FILE...
# Env: MODES (default "null default every perf"), WARM (default 2),
#      NGINX_WORKERS (default 2), WRK_ARGS (nginx's load, default "-t 2
#      -c 32"; NGINX_WORKERS=1 WRK_ARGS="-t 1 -c 50" is the load of
#      bench/real_servers.sh, whose nginx has one worker).
# Needs root, redis-server + redis-tools, nginx-light + wrk, postgresql,
# perf for the perf mode. Servers on 127.0.0.1 only, started and stopped by
# pid; each load is bounded (wrk -d, pgbench -T: the cycles' length plus a
# margin; redis-benchmark -n at most 400,000 requests a second of it) and
# stopped by pid when the cycles are done. Not a test: prints a table
# (also to $OUT, default /tmp/toggle_cost.txt). State the load average.
set -u

# table: the table's rows from pairs lines on standard input, per server
# and mode in the order first seen
table() {
	python3 -c '
import statistics as st, sys
by = {}
for l in sys.stdin:
    f = l.split()
    if len(f) >= 8:
        by.setdefault((f[0], f[1]), []).append(list(map(float, f[2:])))
def mse(x):
    sd = st.stdev(x) if len(x) > 1 else 0.0
    return st.mean(x), sd / len(x) ** 0.5
for (server, m), v in by.items():
    x = [a[0] for a in v]
    mean, se = mse(x)
    print("%-8s %-10s %3d %7.3f +- %5.3f %6.3f %7.3f %10.0f %9.1f %7.0fM %9.0f %6.0f" % (
        server, m, len(x), mean, se * len(x) ** 0.5, se, st.median(x),
        st.mean(a[5] for a in v), st.mean(a[1] for a in v), max(a[2] for a in v) / 1024,
        st.mean(a[3] for a in v), sum(a[4] for a in v)))
split = {k: [a[6:11] for a in v if len(a) >= 11] for k, v in by.items()}
if any(split.values()):
    print("# CPU per request, us: the untraced phases around (host busy), and what the")
    print("# recorded phase added (mean, standard error): in the server, in the load")
    print("# generator, the recorder itself, elsewhere (kernel threads, interrupts ...)")
    print("%-8s %-10s %3s %8s %15s %15s %8s %15s %15s" % ("server", "mode", "n", "host",
          "+server", "+load", "recorder", "+elsewhere", "+all"))
    for (server, m), v in split.items():
        if not v:
            continue
        host = st.mean(a[0] for a in v)
        cols = [mse([a[k] for a in v]) for k in (1, 2, 3, 4)]
        tot = mse([a[1] + a[2] + a[3] + a[4] for a in v])
        print("%-8s %-10s %3d %8.1f %8.2f (%4.2f) %8.2f (%4.2f) %8.2f %8.2f (%4.2f) %8.2f (%4.2f)" % (
            server, m, len(v), host, *cols[0], *cols[1], cols[2][0], *cols[3], *tot))
csw = {k: [a[11:15] for a in v if len(a) >= 15] for k, v in by.items()}
if any(csw.values()):
    print("# the server threads\x27 context switches per request: untraced, and what the")
    print("# recorded phase added (mean, standard error), voluntary and involuntary")
    print("%-8s %-10s %3s %8s %15s %8s %15s" % ("server", "mode", "n", "vcsw", "+vcsw",
          "ivcsw", "+ivcsw"))
    for (server, m), v in csw.items():
        if v:
            print("%-8s %-10s %3d %8.3f %8.3f (%4.3f) %8.3f %8.3f (%4.3f)" % (
                server, m, len(v), st.mean(a[0] for a in v), *mse([a[1] for a in v]),
                st.mean(a[2] for a in v), *mse([a[3] for a in v])))'
}

header() {
	printf "%-8s %-10s %3s %15s %6s %7s %10s %9s %8s %9s %6s\n" "server" "mode" "n" "ratio" \
		"se" "median" "untraced/s" "rec ms/s" "rec RSS" "bytes/s" "lost"
}

# --pool FILE...: the pairs of several runs' $OUT.pairs, pooled per server
# and mode (only runs of the same build and options)
if [ "${1:-}" = --pool ]; then
	shift
	[ $# -ge 1 ] || { echo "usage: $0 --pool PAIRS_FILE..." >&2; exit 2; }
	header
	cat "$@" | table
	exit
fi

here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../build}" && pwd)
cycles=${2:-6}
phase=${3:-5}
shift $(($# < 3 ? $# : 3))
servers=${*:-redis nginx postgres}
modes=${MODES:-null default every perf}
warm=${WARM:-2}
out=${OUT:-/tmp/toggle_cost.txt}
rec=$build/record/perfcap-record
hz=$(getconf CLK_TCK)
every=cpu,sched,syscall,mux,block,net,lock,mem,waits,req
[ "$(id -u)" = 0 ] || { echo "toggle_cost.sh: needs root" >&2; exit 2; }
[ -x "$rec" ] || { echo "toggle_cost.sh: no $rec (build first)" >&2; exit 2; }
for m in $modes; do
	case $m in
	null | default | every | perf | e=?* | a=?*) ;;
	*) echo "toggle_cost.sh: unknown mode '$m' (null default every perf e=LIST a=ARGS)" >&2; exit 2 ;;
	esac
done
tmp=$(mktemp -d /tmp/toggle_cost.XXXXXX)
secs=1   # servers.sh's loads are not used here; its start_S are
. "$here/lib.sh"
. "$here/servers.sh"

load_pid='' sampler_pid='' rec_pid=''
cleanup() {
	[ -n "$rec_pid" ] && kill "$rec_pid" 2> /dev/null && wait "$rec_pid" 2> /dev/null
	[ -n "$load_pid" ] && kill "$load_pid" 2> /dev/null && wait "$load_pid" 2> /dev/null
	[ -n "$sampler_pid" ] && kill "$sampler_pid" 2> /dev/null && wait "$sampler_pid" 2> /dev/null
	stop_server
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now() { date +%s.%N; }

# ---- the long loads and the server's counts ------------------------------

# start_long_load SERVER SECONDS: the load, in the background (load_pid);
# the count log $tmp/count ("epoch_s count" lines) grows meanwhile
start_long_load() {
	local s=$1 t=$2
	case $s in
	redis)
		redis-benchmark -p "$port" -c 50 -n $((t * 400000)) -t set,get -q > /dev/null 2>&1 &
		load_pid=$!
		sample_counts redis ;;
	nginx)
		# shellcheck disable=SC2086 # WRK_ARGS: words
		wrk ${WRK_ARGS:--t 2 -c 32} -d "${t}s" "http://127.0.0.1:$port/" > /dev/null 2>&1 &
		load_pid=$!
		sample_counts nginx ;;
	postgres)
		# progress lines go to stderr: "progress: EPOCH s, TPS tps, ..."
		pgbench -h 127.0.0.1 -p "$port" -U postgres -c 8 -j 2 -T "$t" -P 1 \
			--progress-timestamp postgres > /dev/null 2> "$tmp/progress" &
		load_pid=$! ;;
	esac
}

# sample_counts redis|nginx: the server's count of requests every 100 ms,
# in the background (sampler_pid)
sample_counts() {
	python3 - "$1" "$port" > "$tmp/count" << 'PY' &
import socket, sys, time
kind, port = sys.argv[1], int(sys.argv[2])

def redis():
    s = socket.create_connection(("127.0.0.1", port))
    f = s.makefile("rb")
    while True:
        s.sendall(b"INFO stats\r\n")
        n = int(f.readline()[1:])
        body = f.read(n + 2).decode()
        for line in body.split("\r\n"):
            if line.startswith("total_commands_processed:"):
                yield int(line.split(":")[1])

def nginx():
    while True:
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"GET /perfcap_status HTTP/1.0\r\n\r\n")
        data = b""
        while True:
            b = s.recv(4096)
            if not b:
                break
            data += b
        s.close()
        lines = data.decode().split("\n")
        i = [k for k, l in enumerate(lines) if l.startswith("server accepts")][0]
        yield int(lines[i + 1].split()[2])

for n in (redis() if kind == "redis" else nginx()):
    print("%.6f %d" % (time.time(), n), flush=True)
    time.sleep(0.1)
PY
	sampler_pid=$!
}

# counts_of SERVER: "epoch_s count" lines of the run, cumulative
counts_of() {
	if [ "$1" = postgres ]; then   # each progress line: the second before it
		awk '/^progress: / { t = $2; tps = $4; if (!n++) print t - 1, 0
			c += tps * (t - (prev ? prev : t - 1)); prev = t; printf "%.3f %.1f\n", t, c }' \
			"$tmp/progress"
	else
		cat "$tmp/count"
	fi
}

# cpu_split SERVER: "HOST SERVER LOAD VCSW IVCSW", the CPU time so far in
# ms: the host's busy time (/proc/stat: user, nice, system, irq, softirq;
# not idle, iowait or steal), the server's processes' and the load
# generator's (the sum of their threads' run time, schedstat; a BPF
# program is charged to the thread it runs in); and the server's threads'
# voluntary and involuntary context switches so far. The server's
# processes are listed anew at each call: one that starts or ends inside
# a phase skews that phase (postgres: pgbench keeps its connections, so
# its backends live through the run)
cpu_split() {
	local pids p
	pids=$(targets_of "$1" | tr , ' ')
	{
		awk '/^cpu / { printf "%.0f ", ($2 + $3 + $4 + $7 + $8) * 1000 / '"$hz"' }' /proc/stat
		for p in $pids; do cat /proc/"$p"/task/*/schedstat 2> /dev/null; done |
			awk '{ s += $1 } END { printf "%.1f ", s / 1e6 }'
		cat /proc/"$load_pid"/task/*/schedstat 2> /dev/null | awk '{ s += $1 } END { printf "%.1f ", s / 1e6 }'
		for p in $pids; do cat /proc/"$p"/task/*/status 2> /dev/null; done |
			awk '/^voluntary_ctxt/ { v += $2 } /^nonvoluntary_ctxt/ { i += $2 } END { print v + 0, i + 0 }'
	}
}

# ---- recorders -------------------------------------------------------------

# targets_of SERVER: the pids to record (postgres: the postmaster and its
# children, the load's backends among them, which exist before the
# recorder does)
targets_of() {
	if [ "$1" = postgres ]; then echo "$spid,$(children "$spid")"; else echo "$targets"; fi
}

# start_mode MODE PIDS: the recorder in the background (rec_pid), returns
# once it records (ours: its "recording" line; perf: 1 s)
start_mode() {
	local words=()
	rm -f "$tmp/rec.err" "$tmp/out"
	case $1 in
	null) sleep 1   # about a recorder's start; then nothing runs but a sleep
	      : > "$tmp/rec.err"
	      sleep 100000 &
	      rec_pid=$! ;;
	perf) perf record -g -p "$2" -o "$tmp/out" > /dev/null 2> "$tmp/rec.err" &
	      rec_pid=$!
	      sleep 1 ;;
	*) case $1 in
	   default) ;;
	   every) words=(-e "$every") ;;
	   e=*) words=(-e "${1#e=}") ;;
	   a=*) read -ra words <<< "$(echo "${1#a=}" | tr + ' ')" ;;
	   esac
	   "$rec" "${words[@]}" -p "$2" -f -o "$tmp/out" > /dev/null 2> "$tmp/rec.err" &
	   rec_pid=$!
	   for _ in $(seq 300); do
		   grep -q recording "$tmp/rec.err" 2> /dev/null && break
		   kill -0 "$rec_pid" 2> /dev/null || break
		   sleep 0.1
	   done ;;
	esac
	if ! kill -0 "$rec_pid" 2> /dev/null; then
		sed "s/^/toggle_cost.sh: $1: /" "$tmp/rec.err" >&2
		echo "toggle_cost.sh: $1: the recorder exited before the load" >&2
		exit 1
	fi
	refused_source "$tmp/rec.err" "toggle_cost.sh: $1" && exit 1
}

# stop_mode MODE T_START CPU: stops it; writes "CPU rss_kib bytes_per_s
# lost" to $tmp/stopped (CPU: its ms per s over its recorded phase; bytes
# over its whole recording)
stop_mode() {
	local mode=$1 t0=$2 cpu=$3 rss size lost t1
	rss=$(awk '/^VmHWM/ { print $2 }' "/proc/$rec_pid/status")
	# TERM: ours and perf finish their files as on Ctrl-C, and the null
	# mode's sleep, a background job, ignores SIGINT
	kill "$rec_pid"
	wait "$rec_pid" 2> /dev/null
	rec_pid=
	t1=$(now)
	size=$(stat -c %s "$tmp/out" 2> /dev/null || echo 0)
	if [ "$mode" = perf ]; then lost=$(perf_lost "$tmp/out"); else lost=$(recorder_lost "$tmp/rec.err"); fi
	echo "$cpu ${rss:-0} $(awk -v s="$size" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", s / (b - a) }') ${lost:-0}" \
		> "$tmp/stopped"
}

# ---- one server ----------------------------------------------------------------

# phases SERVER: the cycles; appends "mode t0 t1 extra..." per phase to
# $tmp/phases (mode "none" untraced)
phases() {
	local s=$1 c m order t0 t1 tr c0 c1 pids
	for ((c = 1; c <= cycles; c++)); do
		order=$modes
		((c % 2 == 0)) && order=$(echo $modes | tr ' ' '\n' | tac | tr '\n' ' ')
		for m in $order; do
			untraced_phase "$s"
			pids=$(targets_of "$s")
			tr=$(now)
			start_mode "$m" "$pids"
			sleep "$warm"
			c0=$(proc_cpu "$rec_pid")
			s0=$(cpu_split "$s")
			t0=$(now); sleep "$phase"; t1=$(now)
			s1=$(cpu_split "$s")
			c1=$(proc_cpu "$rec_pid")
			stop_mode "$m" "$tr" "$(awk -v a="$c0" -v b="$c1" -v t0="$t0" -v t1="$t1" \
				-v hz="$hz" 'BEGIN { printf "%.1f", (b - a) / hz * 1000 / (t1 - t0) }')"
			echo "$m $t0 $t1 $(cat "$tmp/stopped") $s0 $s1" >> "$tmp/phases"
			echo "  $s cycle $c: $m $(tail -1 "$tmp/phases" | cut -d' ' -f4-7)" >&2
			sleep 1   # the detach's last work, off the next untraced phase
		done
	done
	untraced_phase "$s"
}

# untraced_phase SERVER: one phase with nothing recorded, appended to
# $tmp/phases as "none t0 t1 - - - - CPU_SPLIT_AT_T0 CPU_SPLIT_AT_T1"
untraced_phase() {
	local s0 s1 t0 t1
	s0=$(cpu_split "$1")
	t0=$(now); sleep "$phase"; t1=$(now)
	s1=$(cpu_split "$1")
	echo "none $t0 $t1 - - - - $s0 $s1" >> "$tmp/phases"
}

# pairs SERVER: one line per recorded phase that has an untraced phase on
# either side (the fields of $OUT.pairs, see the top); the recorded phases
# left out (no count at an edge, or no untraced phase on a side) are said
# on stderr
pairs() {
	counts_of "$1" > "$tmp/counts"
	python3 - "$1" "$tmp/counts" "$tmp/phases" << 'PY'
import bisect, statistics as st, sys
server, counts, phases = sys.argv[1:4]
pts = [tuple(map(float, l.split())) for l in open(counts) if l.strip()]
ts = [p[0] for p in pts]
def count_at(t):
    i = bisect.bisect_left(ts, t)
    if i == 0 or i >= len(ts):
        return None
    (a, ca), (b, cb) = pts[i - 1], pts[i]
    return ca + (cb - ca) * (t - a) / (b - a)
def rate(t0, t1):
    a, b = count_at(t0), count_at(t1)
    return None if a is None or b is None else (b - a) / (t1 - t0)
rows = [l.split() for l in open(phases)]
rates = [rate(float(r[1]), float(r[2])) for r in rows]
def per_request(i):
    """us of CPU per request in phase i: host busy, server, load, the rest"""
    r, n = rows[i], rates[i] * (float(rows[i][2]) - float(rows[i][1]))
    h0, s0, l0, v0, i0, h1, s1, l1, v1, i1 = map(float, r[7:17])
    host, srv, load = [(b - a) * 1000 / n for a, b in ((h0, h1), (s0, s1), (l0, l1))]
    return host, srv, load, host - srv - load, (v1 - v0) / n, (i1 - i0) / n
left_out = []
for i, r in enumerate(rows):
    if r[0] == "none":
        continue
    near = [j for j in (i - 1, i + 1)
            if 0 <= j < len(rows) and rows[j][0] == "none" and rates[j]]
    if not rates[i] or len(near) != 2:
        left_out.append(r[0])
        continue
    base = st.mean(rates[j] for j in near)
    was = [st.mean(c) for c in zip(*(per_request(j) for j in near))]
    now = per_request(i)
    rec_us = float(r[3]) * 1000 / rates[i]
    print(server, r[0], "%.5f" % (rates[i] / base), *r[3:7], "%.0f" % base,
          "%.2f" % was[0], "%.2f" % (now[1] - was[1]), "%.2f" % (now[2] - was[2]),
          "%.2f" % rec_us, "%.2f" % (now[3] - rec_us - was[3]),
          "%.3f" % was[4], "%.3f" % (now[4] - was[4]), "%.3f" % was[5], "%.3f" % (now[5] - was[5]))
if left_out:
    print("toggle_cost.sh: %s: %d recorded phase(s) left out, no count or no untraced "
          "phase around them: %s" % (server, len(left_out), " ".join(left_out)), file=sys.stderr)
PY
}

bench_server() {
	local s=$1 total
	if ! start_"$s"; then
		echo "toggle_cost.sh: $s: not installed or did not start, skipped" >&2
		stop_server
		return
	fi
	: > "$tmp/phases"
	: > "$tmp/count"
	# every mode: two phases, the start (up to 30 s) and the warm, plus a margin
	total=$((cycles * $(echo $modes | wc -w) * (2 * phase + warm + 8) + phase + 60))
	start_long_load "$s" "$total"
	sleep 3   # connected and steady
	phases "$s"
	sleep 1.5   # a count after the last phase's end (pgbench's: once a second)
	kill "$load_pid" 2> /dev/null; wait "$load_pid" 2> /dev/null; load_pid=
	[ -n "$sampler_pid" ] && { kill "$sampler_pid"; wait "$sampler_pid" 2> /dev/null; sampler_pid=; }
	pairs "$s" | tee -a "$out.pairs" | table | tee -a "$out"
	stop_server
}

{
	echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "# toggle_cost.sh: $cycles cycles, ${phase} s phases, warm ${warm} s; ratio = a recorded"
	echo "# phase's rate over the mean of the untraced phases around it (mean +- sd, standard"
	echo "# error, median); rec ms/s = recorder CPU in its phase; bytes/s of its whole recording"
	header
} | tee "$out"
: > "$out.pairs"
for s in $servers; do
	case $s in
	redis | nginx | postgres) bench_server "$s" ;;
	*) echo "toggle_cost.sh: unknown server '$s' (redis nginx postgres)" >&2; exit 2 ;;
	esac
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out"
