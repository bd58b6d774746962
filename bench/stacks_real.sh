#!/bin/bash
# stacks_real.sh - issue 11: full user stacks on Debian's servers (built
# without frame pointers), perfcap --stack-copy side by side with
# `perf record -F 99 --call-graph dwarf`, in interleaved rounds of the same
# run. Servers (each skipped when not installed), on 127.0.0.1, started and
# stopped by this script by pid:
#   redis     redis-server under redis-benchmark (get,set)
#   nginx     nginx-light (2 workers, a small static file) under wrk
#   postgres  postgres (a throwaway cluster in /tmp, fsync off) under pgbench
#             (TPC-B-like, 8 clients: row locks, so blocked backends)
# Modes, in ABBA order per round (odd rounds as listed, even reversed):
#   untraced      the load alone
#   perfcap       perfcap-record -e cpu -F 99 -p SERVER
#   perfcap_sched perfcap-record -F 99 -p SERVER (default sources cpu,sched:
#                 also the off-CPU stacks of blocked threads)
#   perf_dwarf    perf record -F 99 --call-graph dwarf -p SERVER
# Reported per server: throughput mean +- sd and the ratio to untraced;
# per recorder: bytes per CPU sample on disk and the share of CPU samples
# whose user stack is complete (reaches _start, __libc_start_main, clone,
# start_thread: perfcap from its report, perf from `perf script`), and for
# perfcap_sched the complete share of blocked off-CPU intervals.
# Then the unwinding rate: the import (which unwinds every copy) of one
# capture of nofp_chain with UNWIND_SAMPLES CPU samples.
#
# Usage: bench/stacks_real.sh [ROUNDS] [SECONDS] [SERVERS]
#        (as root; defaults 4 5 "redis nginx postgres")
# Env: PERFCAP_RECORD, PERFCAP_ANALYZE (default build/...), NOFP_CHAIN and
#      NOFP_LIB (default build/tests/workloads/...), UNWIND_SAMPLES (default
#      100000; 0 skips the rate), UNWIND_HZ (default 1999), KEEP (a directory:
#      perfcap's captures are copied there as SERVER.MODE.ROUND.perfcap).
# Also perfcap's own CPU while the load ran: its BPF programs' run time
# (kernel.bpf_stats_enabled, set for the run) and the recorder process's
# user + system time, in ms per s: a cost the host's noise does not blur.
# Not a test: numbers are reported, not judged.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
rounds=${1:-4}
secs=${2:-5}
servers=${3:-redis nginx postgres}
build=$here/../build
rec=${PERFCAP_RECORD:-$build/record/perfcap-record}
ana=${PERFCAP_ANALYZE:-$build/analyze/perfcap-analyze}
nofp=${NOFP_CHAIN:-$build/tests/workloads/nofp_chain}
nofp_lib=${NOFP_LIB:-$build/tests/workloads/libnofp_lib.so}
unwind_samples=${UNWIND_SAMPLES:-100000}
unwind_hz=${UNWIND_HZ:-1999}
modes="untraced perfcap perfcap_sched perf_dwarf"
tmp=$(mktemp -d /tmp/stacks_real.XXXXXX)

. "$here/servers.sh"
trap 'stop_server; rm -rf "$tmp"' EXIT

# ---- recorders ---------------------------------------------------------

# perfcap's numbers: bytes, CPU samples, complete ones, blocked intervals,
# complete ones (report --json "user_stacks", docs/report-json.md)
perfcap_numbers() {
	"$ana" report --json "$1" 2> /dev/null | jq -r '.user_stacks // {} |
		"\((.cpu.stacks // 0) + (.cpu.none // 0)) \(.cpu.complete // 0)" +
		" \((.offcpu.stacks // 0) + (.offcpu.none // 0)) \(.offcpu.complete // 0)"'
}

# perf's numbers: samples and those whose outermost user frame is an entry
perf_numbers() {
	perf script -i "$1" -F comm,tid,ip,sym 2> /dev/null | awk '
		function done() { if (inside) { n++; if (last ~ root) c++ } inside = 0 }
		BEGIN { root = "^(_start|__libc_start_main.*|__libc_start_call_main|clone3?|__clone.*|start_thread)$" }
		/^[^ \t]/ { done(); inside = 1; last = ""; next }
		/^[ \t]+[0-9a-f]+ / { if ($1 !~ /^ffff/) last = $2; next }
		/^$/ { done() }
		END { done(); printf "%d %d 0 0\n", n, c }'
}

# own_cpu_ns PID: the recorder's CPU time so far (all its threads) and its
# BPF programs' run time (kernel.bpf_stats_enabled), "user_sys_ns bpf_ns"
own_cpu_ns() {
	local hz ticks bpf ids
	hz=$(getconf CLK_TCK)
	ticks=$(awk '{ print $14 + $15 }' "/proc/$1/stat" 2> /dev/null || echo 0)
	# its programs: the prog_id of every BPF fd it holds
	ids=$(grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2> /dev/null | awk '{ print $2 }' | sort -u |
		paste -sd, -)
	bpf=$(bpftool prog show -j 2> /dev/null | jq --argjson ids "[${ids}]" \
		'[.[] | select(.id as $i | $ids | index($i)) | .run_time_ns // 0] | add // 0')
	echo "$((ticks * 1000000000 / hz)) ${bpf:-0}"
}

round() {   # $1 = server, $2 = mode: appends "server mode rate" and sizes
	local s=$1 m=$2 out="$tmp/$1.$2" p r numbers
	case $m in
	untraced) r=$(load_"$s") ;;
	perfcap | perfcap_sched)
		local ev=(-e cpu); [ "$m" = perfcap_sched ] && ev=()
		"$rec" "${ev[@]}" -F 99 -p "$targets" -o "$out.perfcap" -f > /dev/null 2> "$out.err" &
		p=$!; sleep 1
		local c0 c1 t0 t1
		c0=$(own_cpu_ns "$p"); t0=$(date +%s%N)
		r=$(load_"$s")
		c1=$(own_cpu_ns "$p"); t1=$(date +%s%N)
		kill -INT "$p"; wait "$p"
		echo "$s $m $c0 $c1 $t0 $t1" >> "$tmp/cpu"
		numbers=$(perfcap_numbers "$out.perfcap")
		[ -n "${KEEP:-}" ] && cp "$out.perfcap" "$KEEP/$s.$m.$(wc -l < "$tmp/rates" 2> /dev/null || echo 0).perfcap"
		echo "$s $m $(stat -c %s "$out.perfcap") $numbers" >> "$tmp/sizes" ;;
	perf_dwarf)
		perf record -q -F 99 --call-graph dwarf -p "$targets" -o "$out.data" \
			> /dev/null 2>&1 &
		p=$!; sleep 1; r=$(load_"$s"); kill -INT "$p"; wait "$p"
		numbers=$(perf_numbers "$out.data")
		echo "$s $m $(stat -c %s "$out.data") $numbers" >> "$tmp/sizes" ;;
	esac
	echo "$s $m ${r:-0}" >> "$tmp/rates"
	echo "  $s round: $m ${r:-0}/s" >&2
}

bench_server() {   # $1 = server
	local s=$1 order i
	start_warm "$s" || return
	for i in $(seq "$rounds"); do
		order=$modes
		[ $((i % 2)) = 0 ] && order=$(echo "$modes" | tr ' ' '\n' | tac | paste -sd' ')
		for m in $order; do round "$s" "$m"; done
	done
	stop_server
	echo "== $s: throughput per second, $rounds interleaved rounds of ${secs}s (mean +- sd):"
	grep "^$s " "$tmp/rates" | cut -d' ' -f2- > "$tmp/rates.$s"
	summarize_rates "$tmp/rates.$s" "$modes"
	echo "   per recording (mean +- sd over rounds): bytes per CPU sample; complete user stacks"
	awk -v s="$s" '$1 == s && $4 > 0 {
		k = $2; n[k]++; b = $3 / $4; c = 100 * $5 / $4
		sb[k] += b; sbb[k] += b * b; sc[k] += c; scc[k] += c * c; samples[k] += $4
		if ($6 > 0) { o = 100 * $7 / $6; so[k] += o; soo[k] += o * o; no[k]++; blocked[k] += $6 } }
	function sd(s, ss, n) { v = n > 1 ? (ss - s * s / n) / (n - 1) : 0; return sqrt(v > 0 ? v : 0) }
	END { for (k in n) {
		printf "   %-13s %8.0f +- %6.0f B/sample   complete %5.1f%% +- %4.1f  (%d samples)", k,
			sb[k] / n[k], sd(sb[k], sbb[k], n[k]), sc[k] / n[k], sd(sc[k], scc[k], n[k]), samples[k]
		if (no[k]) printf "   off-CPU complete %5.1f%% +- %4.1f (%d blocked intervals)",
			so[k] / no[k], sd(so[k], soo[k], no[k]), blocked[k]
		printf "\n" } }' "$tmp/sizes" | sort
	# "s m user0 bpf0 user1 bpf1 t0 t1": the recorder's own cost while the
	# load ran, in CPU milliseconds per second (robust where throughput is not)
	echo "   perfcap's own CPU during the load (mean +- sd): BPF programs + recorder process, ms per s"
	awk -v s="$s" '$1 == s { k = $2; n[k]++; d = ($8 - $7) / 1e9
		b = ($6 - $4) / 1e6 / d; u = ($5 - $3) / 1e6 / d
		sb[k] += b; sbb[k] += b * b; su[k] += u; suu[k] += u * u }
	function sd(s, ss, n) { v = n > 1 ? (ss - s * s / n) / (n - 1) : 0; return sqrt(v > 0 ? v : 0) }
	END { for (k in n) printf "   %-13s BPF %6.1f +- %5.1f ms/s   recorder %6.1f +- %5.1f ms/s\n", k,
		sb[k] / n[k], sd(sb[k], sbb[k], n[k]), su[k] / n[k], sd(su[k], suu[k], n[k]) }' \
		"$tmp/cpu" | sort
}

# The unwinding rate: nofp_chain spinning at its deepest level, recorded
# -e cpu at UNWIND_HZ until UNWIND_SAMPLES samples, then imported.
unwind_rate() {
	local dur n t0 t1
	[ "$unwind_samples" -gt 0 ] && [ -x "$nofp" ] || return 0
	dur=$(awk -v n="$unwind_samples" -v f="$unwind_hz" 'BEGIN { printf "%.0f", n / f * 1.05 + 1 }')
	cp "$nofp" "$nofp_lib" "$tmp/"
	LD_LIBRARY_PATH="$tmp" "$rec" -e cpu -F "$unwind_hz" -o "$tmp/rate.perfcap" -f -- \
		"$tmp/nofp_chain" "$dur" 1000 0 > /dev/null 2> "$tmp/rate.err"
	t0=$(date +%s.%N)
	"$ana" import -f "$tmp/rate.perfcap" -o "$tmp/rate.db" > /dev/null 2>&1
	t1=$(date +%s.%N)
	n=$("$ana" query "$tmp/rate.db" "SELECT value FROM unwind_counts WHERE key = 'copies'" |
		tail -1)
	echo "== unwinding: import of $n copied stacks (nofp_chain, -F $unwind_hz) in" \
		"$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s:" \
		"$(awk -v a="$t0" -v b="$t1" -v n="${n:-0}" 'BEGIN { printf "%.0f", n / (b - a) }')" \
		"samples/s (whole import: read, unwind, symbolize, write)"
}

bpf_stats=$(sysctl -n kernel.bpf_stats_enabled 2> /dev/null || echo 0)
sysctl -q kernel.bpf_stats_enabled=1 2> /dev/null
trap 'stop_server; rm -rf "$tmp"; sysctl -q kernel.bpf_stats_enabled="$bpf_stats" 2> /dev/null' EXIT
echo "stacks_real.sh: $(nproc) CPUs, $(uname -r), rounds $rounds x ${secs}s, $(date -u +%FT%TZ)"
for s in $servers; do bench_server "$s"; done
unwind_rate
