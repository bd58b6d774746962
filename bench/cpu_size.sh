#!/bin/bash
# cpu_size.sh - capture size of CPU sampling, perfcap vs perf, same run.
#
# Starts the cpu_split workload once and attaches `perfcap-record -p` and
# `perf record -F 99 -g -p` to it at the same time, so both see the same
# process for the same seconds. Prints samples, bytes per sample and the
# size ratio. Usage: bench/cpu_size.sh [BUILD_DIR] [SECONDS] [HZ]
# Needs root, perf (linux-perf). Not a test: numbers are reported, not judged.
set -euo pipefail
build=${1:-build}
secs=${2:-20}
hz=${3:-99}
rec=$build/record/perfcap-record
ana=$build/analyze/perfcap-analyze
work=$build/tests/workloads/cpu_split
tmp=$(mktemp -d /tmp/perfcap-bench.XXXXXX)
trap 'kill $wpid 2>/dev/null; rm -rf "$tmp"' EXIT

"$work" $((secs + 5)) > /dev/null &
wpid=$!
sleep 0.5
# cpu_seconds FILE CMD...: runs CMD, writes its user+system CPU seconds to FILE
cpu_seconds() {
	local out=$1; shift
	local TIMEFORMAT='%U %S'
	{ time "$@" 2>> "$out.err" > /dev/null; } 2> "$out.time"
	awk '{ print $1 + $2 }' "$out.time" > "$out"
}
cpu_seconds "$tmp/rec.cpu" "$rec" -F "$hz" -p $wpid -d "$secs" -o "$tmp/run.perfcap" &
rpid=$!
cpu_seconds "$tmp/perf.cpu" perf record -F "$hz" -g -p $wpid -o "$tmp/perf.data" -- sleep "$secs"
wait $rpid
kill $wpid 2>/dev/null || true

pc_bytes=$(stat -c %s "$tmp/run.perfcap")
perf_bytes=$(stat -c %s "$tmp/perf.data")
pc_samples=$("$ana" info "$tmp/run.perfcap" | awk '$1 == "cpu.samples" { print $2; exit }')
pc_sample_bytes=$("$ana" info "$tmp/run.perfcap" |
	awk '($1 == "events" || $1 == "stacks") && $2 ~ /^[0-9]/ { gsub(/,/, "", $3); s += $3 } END { print s + 0 }')
perf_samples=$(perf report -i "$tmp/perf.data" --stats 2>/dev/null |
	awk '/SAMPLE events:/ { print $3; exit }')
[ -n "$pc_samples" ] && [ "$pc_samples" -gt 0 ] || { cat "$tmp/rec.cpu.err"; echo "no perfcap samples" >&2; exit 1; }
[ -n "$perf_samples" ] && [ "$perf_samples" -gt 0 ] || { cat "$tmp/perf.cpu.err"; echo "no perf samples" >&2; exit 1; }

div() { awk "BEGIN { printf \"%.4f\", ($1) / ($2) }"; }

echo "CPU sampling at $hz Hz for ${secs}s of one cpu_split process (same run)"
printf '%-28s %10s %12s %14s\n' "" samples "file bytes" "bytes/sample"
printf '%-28s %10d %12d %14.1f\n' "perf record -g" "$perf_samples" "$perf_bytes" \
	"$(div $perf_bytes $perf_samples)"
printf '%-28s %10d %12d %14.1f\n' "perfcap-record (file)" "$pc_samples" "$pc_bytes" \
	"$(div $pc_bytes $pc_samples)"
printf '%-28s %10d %12d %14.1f\n' "perfcap (events+stacks)" "$pc_samples" "$pc_sample_bytes" \
	"$(div $pc_sample_bytes $pc_samples)"
printf 'size ratio perfcap/perf (whole files): %.3f\n' "$(div $pc_bytes $perf_bytes)"
pc_cpu=$(cat "$tmp/rec.cpu"); perf_cpu=$(cat "$tmp/perf.cpu")
printf 'recorder CPU: perfcap-record %.3f s (%.2f%% of a core), perf record %.3f s (%.2f%%)\n' \
	"$pc_cpu" "$(div "$pc_cpu * 100" "$secs")" "$perf_cpu" "$(div "$perf_cpu * 100" "$secs")"
