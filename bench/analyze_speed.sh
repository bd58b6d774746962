#!/bin/bash
# analyze_speed.sh - how fast perfcap-analyze imports and reports, and how
# much memory it needs, side by side with `perf report` on the same samples.
#
# 1. Import of synthetic event-mix captures (bench/gen_capture --events:
#    switches, wakeups, syscalls, samples) of 1M, 10M and 30M events:
#    events/s and peak RSS. The RSS must not grow with the capture: import
#    streams chunk by chunk, SQLite's page cache is capped, sorts spill to
#    temporary files.
# 2. Peer: one cpu_split process sampled at HZ by `perf record -g` and
#    `perfcap-record` at the same time; then `perf report --stdio` on
#    perf.data vs `perfcap-analyze report` on the capture (import included),
#    wall time, and the ratio.
#
# Usage: bench/analyze_speed.sh [BUILD_DIR] [SECONDS] [HZ]   (release build)
# Needs root and perf (linux-perf) for part 2. Numbers are reported, not judged.
set -euo pipefail
build=${1:-build}
secs=${2:-20}
hz=${3:-2999}
ana=$build/analyze/perfcap-analyze
gen=$build/tests/analyze/gen_capture
rec=$build/record/perfcap-record
work=$build/tests/workloads/cpu_split
tmp=$(mktemp -d /tmp/perfcap-bench.XXXXXX)
wpid=
trap '[ -n "$wpid" ] && kill $wpid 2>/dev/null; rm -rf "$tmp"' EXIT

# wall_rss OUT CMD...: runs CMD; OUT gets "seconds max_rss_kib"
wall_rss() {
	local out=$1; shift
	/usr/bin/time -f '%e %M' -o "$out" "$@" > /dev/null 2> "$out.err" ||
		{ cat "$out.err" >&2; exit 1; }
}

echo "1. import of the synthetic event mix (release build: $build)"
printf '%12s %12s %10s %14s %14s\n' events "file bytes" seconds events/s "peak RSS MiB"
for n in 1000000 10000000 30000000; do
	"$gen" --events "$tmp/mix.perfcap" "$n" > /dev/null
	wall_rss "$tmp/imp" "$ana" import -f "$tmp/mix.perfcap" -o "$tmp/mix.db"
	read -r s kib < "$tmp/imp"
	printf '%12d %12d %10.2f %14.0f %14.0f\n' "$n" "$(stat -c %s "$tmp/mix.perfcap")" \
		"$s" "$(awk "BEGIN { print $n / $s }")" "$(awk "BEGIN { print $kib / 1024 }")"
	rm -f "$tmp/mix.db" "$tmp/mix.perfcap"
done

echo
echo "2. report on the same samples: perf report vs perfcap-analyze report"
command -v perf > /dev/null || { echo "perf not installed: part 2 skipped"; exit 0; }
"$work" $((secs + 5)) > /dev/null &
wpid=$!
sleep 0.5
"$rec" -F "$hz" -p $wpid -d "$secs" -o "$tmp/run.perfcap" 2> "$tmp/rec.err" &
rpid=$!
perf record -F "$hz" -g -p $wpid -o "$tmp/perf.data" -- sleep "$secs" 2> "$tmp/perf.err" > /dev/null
wait $rpid
kill $wpid 2>/dev/null || true
wpid=
samples=$("$ana" info "$tmp/run.perfcap" | awk '$1 == "cpu.samples" { print $2; exit }')
wall_rss "$tmp/perf.t" perf report -i "$tmp/perf.data" --stdio
wall_rss "$tmp/pc.t" "$ana" report "$tmp/run.perfcap"
read -r ps pk < "$tmp/perf.t"
read -r cs ck < "$tmp/pc.t"
printf '%-34s %10s %14s\n' "" seconds "peak RSS MiB"
printf '%-34s %10.2f %14.0f\n' "perf report --stdio" "$ps" "$(awk "BEGIN { print $pk / 1024 }")"
printf '%-34s %10.2f %14.0f\n' "perfcap-analyze report (+import)" "$cs" \
	"$(awk "BEGIN { print $ck / 1024 }")"
echo "samples: $samples (perfcap); time ratio perfcap/perf: $(awk "BEGIN { printf \"%.3f\", $cs / ($ps > 0 ? $ps : 0.01) }")"
