#!/bin/bash
# default_cost.sh - issue 12: the CPU cost of the DEFAULT recording
# (perfcap-record -p SERVER: sources cpu,sched,block,waits) on real servers
# (bench/servers.sh: redis, nginx, postgres under their own load), for two
# recorders A and B side by side (two builds, or one build with other
# options), in ABBA rounds (odd rounds A then B, even rounds B then A).
# Measured while the load runs, per round:
#   - the recorder's BPF programs: run time and calls of each program
#     (kernel.bpf_stats_enabled, set for the run), so ns per call and ms
#     of CPU per second of load;
#   - the off-CPU stack copies' task_works (copies at the return to user
#     space), which bpf_stats does not see: STATS sched.ustack.copy_ns of
#     the whole recording (the second before the load and the stop too,
#     so an upper bound), ms per second of load;
#   - the recorder process's user + system time, ms per second;
#   - the capture's bytes per second and the server's throughput.
# Reported per server and recorder: mean +- sd over the rounds of BPF ms/s
# (programs + task_works), recorder ms/s, their sum as a share of the
# machine (all CPUs), and per program ns/call and ms/s.
#
# Usage: bench/default_cost.sh [ROUNDS] [SECONDS] [SERVERS]
#        (as root; defaults 4 5 "redis nginx postgres")
# Env: REC_A, REC_B (perfcap-record binaries, default build/record/...),
#      ARGS_A, ARGS_B (extra options of each, e.g. "--offcpu-copy switch-out"),
#      ANALYZE (perfcap-analyze, default build/analyze/..., to read STATS),
#      KEEP (a directory: the captures are copied there).
# Not a test: numbers are reported, not judged.
set -u
here=$(cd "$(dirname "$0")" && pwd)
rounds=${1:-4}
secs=${2:-5}
servers=${3:-redis nginx postgres}
rec_a=${REC_A:-$here/../build/record/perfcap-record}
rec_b=${REC_B:-$rec_a}
args_a=${ARGS_A:-}
args_b=${ARGS_B:-}
ana=${ANALYZE:-$here/../build/analyze/perfcap-analyze}
tmp=$(mktemp -d /tmp/default_cost.XXXXXX)
ncpu=$(nproc)

. "$here/lib.sh"
. "$here/servers.sh"

# prog_stats PID: "id name run_time_ns run_cnt" per BPF program the recorder
# holds (the prog_id of every BPF fd it has; by id: two objects may have
# programs of the same name)
prog_stats() {
	local ids
	ids=$(grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2> /dev/null | awk '{ print $2 }' |
		sort -u | paste -sd, -)
	bpftool prog show -j 2> /dev/null | jq -r --argjson ids "[${ids}]" \
		'.[] | select(.id as $i | $ids | index($i)) |
		 "\(.id) \(.name) \(.run_time_ns // 0) \(.run_cnt // 0)"'
}

# cpu_ns PID: the process's user + system time so far
cpu_ns() {
	awk -v hz="$(getconf CLK_TCK)" '{ printf "%.0f\n", ($14 + $15) * 1e9 / hz }' \
		"/proc/$1/stat" 2> /dev/null || echo 0
}

# capture_stat CAPTURE KEY: a STATS value of the capture (0 if absent)
capture_stat() {
	local v
	v=$("$ana" query --format csv "$1" "SELECT value FROM stats WHERE key = '$2'" 2> /dev/null |
		tail -n +2 | tr -d '\r"')
	echo "${v:-0}"
}

# round SERVER MODE(A|B) N: one recording of the load; appends to $tmp/runs
# "server mode n ns bpf_ns rec_ns bytes rate task_work_ns" and to
# $tmp/progs "server mode n name ns calls"
round() {
	local s=$1 m=$2 n=$3 rec args out="$tmp/$1.$2.$3.perfcap" p c0 c1 t0 t1 r
	if [ "$m" = A ]; then rec=$rec_a; args=$args_a; else rec=$rec_b; args=$args_b; fi
	# shellcheck disable=SC2086
	"$rec" $args -p "$targets" -o "$out" -f > /dev/null 2> "$tmp/err" &
	p=$!
	sleep 1
	if ! kill -0 "$p" 2> /dev/null; then   # refused its options, or failed to start
		sed "s/^/default_cost.sh: $m: /" "$tmp/err" >&2
		exit 1
	fi
	prog_stats "$p" > "$tmp/p0"; c0=$(cpu_ns "$p"); t0=$(date +%s%N)
	r=$(load_"$s")
	prog_stats "$p" > "$tmp/p1"; c1=$(cpu_ns "$p"); t1=$(date +%s%N)
	kill -INT "$p"; wait "$p"
	refused_source "$tmp/err" "default_cost.sh: $m" && exit 1
	awk -v k="$s $m $n" 'NR == FNR { t[$1] = $3; c[$1] = $4; next }
		{ print k, $2, $3 - t[$1], $4 - c[$1] }' "$tmp/p0" "$tmp/p1" >> "$tmp/progs"
	local d bpf tw
	d=$(( t1 - t0 ))
	bpf=$(awk -v k="$s $m $n" '$1 " " $2 " " $3 == k { b += $5 } END { printf "%.0f", b }' \
		"$tmp/progs")
	tw=$(capture_stat "$out" sched.ustack.copy_ns)
	echo "$s $m $n $d $((bpf + tw)) $((c1 - c0)) $(stat -c %s "$out") ${r:-0} $tw" >> "$tmp/runs"
	[ -n "${KEEP:-}" ] && cp "$out" "$KEEP/"
	rm -f "$out"
	echo "  $s round $n: $m $(awk -v d="$d" -v b="$bpf" -v c="$((c1 - c0))" \
		-v t="$tw" 'BEGIN { printf "BPF %.1f ms/s (task_works %.1f), recorder %.1f ms/s",
		(b + t) / d * 1e3, t / d * 1e3, c / d * 1e3 }'), ${r:-0}/s" >&2
}

report() {   # $1 = server
	echo "== $1: $rounds ABBA rounds of ${secs}s, $ncpu CPUs (mean +- sd)"
	echo "   A: $rec_a $args_a"
	echo "   B: $rec_b $args_b"
	awk -v s="$1" -v ncpu="$ncpu" '$1 == s { k = $2; n[k]++; d = $4
		v["bpf"] = $5 / d * 1e3; v["rec"] = $6 / d * 1e3
		v["share"] = 100 * ($5 + $6) / d / ncpu; v["kb"] = $7 / 1024 / (d / 1e9); v["rate"] = $8
		v["tw"] = $9 / d * 1e3
		for (x in v) { S[k, x] += v[x]; SS[k, x] += v[x] * v[x] } }
	function f(k, x,   m, var) { m = S[k, x] / n[k]
		var = n[k] > 1 ? (SS[k, x] - n[k] * m * m) / (n[k] - 1) : 0
		return sprintf("%7.1f +- %5.1f", m, sqrt(var > 0 ? var : 0)) }
	END { for (k in n) printf "   %s  BPF %s ms/s (task_works %s)  recorder %s ms/s  share %s %%  capture %s KB/s  rate %s/s\n",
		k, f(k, "bpf"), f(k, "tw"), f(k, "rec"), f(k, "share"), f(k, "kb"), f(k, "rate") }' "$tmp/runs" | sort
	echo "   per program (mean over rounds): ns per call, calls per s, ms per s"
	echo "   (programs of the same name in two objects are summed)"
	awk -v s="$1" 'NR == FNR { if ($1 == s) d[$2 " " $3] = $4; next }
		$1 == s { r = $2 " " $3; k = $2 " " $4; T[r, k] += $5; C[r, k] += $6; R[r, k] = r }
		END { for (rk in R) { r = R[rk]; split(rk, p, SUBSEP); k = p[2]
			      if (C[rk] <= 0) continue
			      n[k]++; ns[k] += T[rk] / C[rk]; cps[k] += C[rk] / d[r] * 1e9
			      ms[k] += T[rk] / d[r] * 1e3 }
		      for (k in n) printf "   %-22s %8.0f ns %10.0f /s %8.2f ms/s\n", k,
			      ns[k] / n[k], cps[k] / n[k], ms[k] / n[k] }' "$tmp/runs" "$tmp/progs" | sort
}

bench_server() {   # $1 = server
	local s=$1 i
	start_warm "$s" || return
	for i in $(seq "$rounds"); do
		if [ $((i % 2)) = 1 ]; then round "$s" A "$i"; round "$s" B "$i"
		else round "$s" B "$i"; round "$s" A "$i"; fi
	done
	stop_server
	report "$s"
}

# BPF run time statistics stay on while a BPF_ENABLE_STATS fd is held, even
# if another program on the host sets kernel.bpf_stats_enabled back to 0
# (on a shared host, another bench's exit does): a helper holds one.
python3 -c '
import ctypes, signal, sys
attr = ctypes.create_string_buffer(16)   # enable_stats.type = BPF_STATS_RUN_TIME (0)
fd = ctypes.CDLL(None, use_errno=True).syscall(321, 32, attr, 16)   # bpf(BPF_ENABLE_STATS)
print(fd, flush=True)
sys.exit(1) if fd < 0 else signal.pause()' > "$tmp/stats_fd" &
stats_pid=$!
trap 'stop_server; kill "$stats_pid" 2> /dev/null; rm -rf "$tmp"' EXIT
sleep 0.5
[ "$(cat "$tmp/stats_fd")" -ge 0 ] 2> /dev/null ||
	{ echo "cannot enable BPF run time statistics (BPF_ENABLE_STATS)" >&2; exit 1; }
echo "default_cost.sh: $ncpu CPUs, $(uname -r), rounds $rounds x ${secs}s, $(date -u +%FT%TZ)"
for s in $servers; do bench_server "$s"; done
