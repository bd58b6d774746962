#!/bin/bash
# block_overhead.sh - what the block source costs an fsync-bound writer.
#
# The load is fsync_writes: WRITES writes of 4 KiB to a file in /var/tmp,
# each followed by fsync (one data write, a journal/fast-commit write and a
# cache flush per iteration). Each round runs it in the same order:
#   none     no recording
#   block    perfcap-record -e block -- fsync_writes   (follows its requests)
#   block-a  perfcap-record -e block -a while it runs (every request of the
#            host: the kernel side does the same work per request either way)
# and RUNS rounds give mean +- sd of writes/s per mode and the overhead
# against `none`, plus the bytes per BLOCK record of the last capture.
#
# Usage: bench/block_overhead.sh [BUILD_DIR] [WRITES] [RUNS]   (build 1000 3)
# Needs root. Use a build without sanitizers. Not a test: numbers are
# reported, not judged; on a shared machine compare modes, not absolutes.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
build=${1:-build}
writes=${2:-1000}
runs=${3:-3}
rec=$build/record/perfcap-record
work=$build/tests/workloads/fsync_writes
tmp=$(mktemp -d /tmp/perfcap-bench.XXXXXX)
file=/var/tmp/perfcap-bench-block.$$
trap 'rm -rf "$tmp" "$file"' EXIT
modes="none block block-a"

# rate MODE: writes/s of one fsync_writes run under MODE
rate() {
	local out pid
	case $1 in
	none)  out=$("$work" "$file" "$writes") ;;
	block) out=$("$rec" -e block -f -o "$tmp/block.perfcap" -- "$work" "$file" "$writes" \
			2> "$tmp/block.err") ;;
	block-a)
		"$rec" -e block -a -f -o "$tmp/block-a.perfcap" 2> "$tmp/block-a.err" &
		pid=$!
		until grep -q recording "$tmp/block-a.err"; do sleep 0.1; done
		out=$("$work" "$file" "$writes")
		kill -INT $pid && wait $pid ;;
	esac
	echo "$out" | awk '$1 == "writes" { sub("/s", "", $6); print $6 }'
}

for ((round = 1; round <= runs; round++)); do
	for mode in $modes; do
		r=$(rate "$mode")
		echo "$mode $r" >> "$tmp/rates"
		echo "round $round: $mode: $r writes/s" >&2
	done
done

echo "fsync_writes writes/s, $runs rounds of $writes writes per mode (mean +- sd), $(nproc) CPUs"
summarize_rates "$tmp/rates" "$modes"
grep -E "wrote|lost" "$tmp/block.err" | sed 's/^/  last block run: /'
