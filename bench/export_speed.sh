#!/bin/bash
# export_speed.sh - how fast perfcap-analyze export writes each format, and
# how much memory it needs, from a database of a synthetic 10M-event capture
# (bench/gen_capture --events: switches, wakeups, syscalls, samples). The
# capture is imported once; each format is then exported from the database
# (import time is analyze_speed.sh's subject). Peak RSS must not grow with
# the capture: every writer streams rows from SQL.
#
# Usage: bench/export_speed.sh [BUILD_DIR] [EVENTS]   (release build for real numbers)
# Numbers are reported, not judged.
set -euo pipefail
build=${1:-build}
events=${2:-10000000}
ana=$build/analyze/perfcap-analyze
gen=$build/tests/analyze/gen_capture
tmp=$(mktemp -d /tmp/perfcap-export-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# wall_rss OUT CMD...: runs CMD; OUT gets "seconds cpu_seconds max_rss_kib"
# (CPU = user + system: on a shared machine the wall time also counts the
# time spent waiting for a core)
wall_rss() {
	local out=$1; shift
	/usr/bin/time -f '%e %U %S %M' -o "$out" "$@" > /dev/null 2> "$out.err" ||
		{ cat "$out.err" >&2; exit 1; }
	awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }' "$out" > "$out.sum" && mv "$out.sum" "$out"
}

"$gen" --events "$tmp/mix.perfcap" "$events" > /dev/null
wall_rss "$tmp/imp" "$ana" import -f "$tmp/mix.perfcap" -o "$tmp/mix.db"
read -r secs cpu rss < "$tmp/imp"
echo "capture: $events events, $(stat -c %s "$tmp/mix.perfcap") bytes;" \
	"import ${secs}s (CPU ${cpu}s), peak RSS $((rss / 1024)) MiB (build: $build)"
printf '%-12s %10s %10s %14s %14s\n' format seconds "CPU s" "peak RSS MiB" "output bytes"
for f in pprof perfetto speedscope csv ndjson openmetrics prometheus; do
	out=$tmp/out.$f
	rm -rf "$out"
	wall_rss "$tmp/t" "$ana" export --format "$f" -o "$out" "$tmp/mix.db"
	read -r secs cpu rss < "$tmp/t"
	printf '%-12s %10s %10s %14s %14s\n' "$f" "$secs" "$cpu" "$((rss / 1024))" \
		"$(du -sb "$out" | cut -f1)"
done
