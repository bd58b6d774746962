#!/bin/bash
# probes_cost.sh - what a user probe costs the probed program, perfcap vs
# bpftrace on the same uprobe: probe_calls calls a noinline function
# (probed_work) N times in a tight loop and reports its own wall time;
# cost per call = (wall under the probe - wall untraced) / N. Modes,
# interleaved ABBA over ROUNDS rounds:
#   none            untraced
#   perfcap         -e uprobe:W:probed_work: entry + return paired in the
#                   kernel, exact counts and histogram, a PROBE record with
#                   the user stack per call (the default)
#   perfcap_nostack the same with --probe-no-stack: records without stacks
#   perfcap_count   the same with --probe-min 1s: counts and histogram
#                   only, no record
#   bpftrace_count  bpftrace 'uprobe:W:probed_work { @ = count() }' (entry only)
#   bpftrace_lat    bpftrace entry + uretprobe, a latency histogram
#                   (what perfcap_count does)
# Both tools run the workload themselves (-- CMD / -c CMD), so every call
# is probed; a mode whose count is not N is reported. Not a test: on a
# shared machine state the load average.
# Usage: bench/probes_cost.sh [BUILD_DIR] [ROUNDS] [N]
set -euo pipefail
build=$(realpath "${1:-build}")
rounds=${2:-4}
n=${3:-200000}
rec=$build/record/perfcap-record
w=$build/tests/workloads/probe_calls
command -v bpftrace > /dev/null || { echo "bpftrace is not installed (apt-get install bpftrace)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/perfcap-probes-cost.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

wall() { sed -n 's/.*wall_ns=\([0-9]*\).*/\1/p'; }

# one MODE: the workload's wall time in ns under MODE
one() {
	case $1 in
	none) "$w" "$n" 0 | wall ;;
	perfcap) "$rec" -f -o "$tmp/c.perfcap" -e "uprobe:$w:probed_work" -- "$w" "$n" 0 \
		2> "$tmp/err" | wall ;;
	perfcap_nostack) "$rec" -f -o "$tmp/c.perfcap" --probe-no-stack \
		-e "uprobe:$w:probed_work" -- "$w" "$n" 0 2> "$tmp/err" | wall ;;
	perfcap_count) "$rec" -f -o "$tmp/c.perfcap" --probe-min 1s \
		-e "uprobe:$w:probed_work" -- "$w" "$n" 0 2> "$tmp/err" | wall ;;
	bpftrace_count) bpftrace -e "uprobe:$w:probed_work { @ = count(); }" -c "$w $n 0" \
		2> /dev/null > "$tmp/bt"; check_bt; wall < "$tmp/bt" ;;
	bpftrace_lat) bpftrace -e "uprobe:$w:probed_work { @s[tid] = nsecs; }
		uretprobe:$w:probed_work /@s[tid]/ { @h = hist(nsecs - @s[tid]); @ = count();
		delete(@s[tid]); }" -c "$w $n 0" 2> /dev/null > "$tmp/bt"; check_bt; wall < "$tmp/bt" ;;
	esac
}

check_bt() {
	grep -q "^@: $n\$" "$tmp/bt" || echo "warning: bpftrace counted $(grep '^@:' "$tmp/bt")" >&2
}

modes="none perfcap perfcap_nostack perfcap_count bpftrace_count bpftrace_lat"
echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $rounds rounds ABBA, $n calls of probed_work per run; $(bpftrace --version)"
: > "$tmp/runs"
for ((r = 1; r <= rounds; r++)); do
	order=$modes
	((r % 2 == 0)) && order=$(echo $modes | tr ' ' '\n' | tac | tr '\n' ' ')
	for m in $order; do
		echo "$m $(one $m)" >> "$tmp/runs"
	done
done
awk -v modes="$modes" -v n="$n" '
	{ c[$1]++; s[$1] += $2; ss[$1] += $2 * $2; v[$1, c[$1]] = $2 }
	END {
		split(modes, m, " ")
		base = s["none"] / c["none"]
		printf "%-15s %14s %22s\n", "mode", "wall ms", "cost ns per call"
		for (i = 1; i in m; i++) {
			k = m[i]; mean = s[k] / c[k]
			var = c[k] > 1 ? (ss[k] - c[k] * mean * mean) / (c[k] - 1) : 0
			# per-call cost of each run against the mean untraced wall
			cs = 0; css = 0
			for (j = 1; j <= c[k]; j++) { x = (v[k, j] - base) / n; cs += x; css += x * x }
			cm = cs / c[k]; cv = c[k] > 1 ? (css - c[k] * cm * cm) / (c[k] - 1) : 0
			printf "%-15s %8.1f +- %5.1f %12.0f +- %6.0f\n", k, mean / 1e6,
				sqrt(var > 0 ? var : 0) / 1e6, cm, sqrt(cv > 0 ? cv : 0)
		}
	}' "$tmp/runs"
