#!/bin/bash
# report_memory.sh - the memory of report and diff does not grow with the
# capture: synthetic server captures (bench/gen_capture --requests: about
# one request and three system calls per 6 events) of growing size, each
# reported with the default memory for requests and system calls (256 MiB
# each: PERFCAP_REPORT_REQUEST_BYTES, PERFCAP_REPORT_CALL_BYTES) and with
# LIMIT bytes for each, then diffed against itself with the default
# memory for latency values (256 MiB: PERFCAP_DIFF_LATENCY_BYTES) and with
# LIMIT. Wall time and peak RSS, and whether the two reports, and the two
# diffs, are the same (they must be: past the limit the tables are read
# again or the values spilled, nothing is estimated).
#
# Usage: bench/report_memory.sh [BUILD_DIR] [LIMIT_BYTES] [EVENTS...]
#   defaults: build, 33554432 (32 MiB), 5000000 20000000 40000000
# The databases go to TMPDIR (else /tmp): 40M events take about 4 GB.
# Numbers are reported, not judged.
set -euo pipefail
build=${1:-build}
limit=${2:-33554432}
shift 2 2> /dev/null || shift $#
sizes=${*:-5000000 20000000 40000000}
ana=$build/analyze/perfcap-analyze
gen=$build/tests/analyze/gen_capture
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perfcap-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# wall_rss OUT CMD...: runs CMD (stdout to OUT.txt); OUT gets "seconds max_rss_kib"
wall_rss() {
	local out=$1; shift
	/usr/bin/time -f '%e %M' -o "$out" "$@" > "$out.txt" 2> "$out.err" ||
		{ cat "$out.err" >&2; exit 1; }
}

# diff_pair DB: "seconds rss_mib seconds rss_mib spilled same" of DB
# diffed against itself with the default memory and with $limit
diff_pair() {
	local as ar bs br spilled=no same=no
	wall_rss "$tmp/da" "$ana" diff --all --json "$1" "$1"
	wall_rss "$tmp/db" env PERFCAP_DIFF_LATENCY_BYTES="$limit" \
		"$ana" diff --all --json "$1" "$1"
	read -r as ar < "$tmp/da"
	read -r bs br < "$tmp/db"
	grep -q "kept in a temporary database" "$tmp/db.err" && spilled=yes
	cmp -s "$tmp/da.txt" "$tmp/db.txt" && same=yes
	echo "$as $((ar / 1024)) $bs $((br / 1024)) $spilled $same"
}

diffs=()
echo "report memory (build: $build; limited: $limit bytes for requests and for calls)"
printf '%10s %10s %10s | %9s %10s | %9s %10s %6s | %s\n' events requests calls \
	"report s" "RSS MiB" "limited s" "RSS MiB" merged same
for n in $sizes; do
	"$gen" --requests "$tmp/c.perfcap" "$n" > /dev/null
	rm -f "$tmp/c.db"
	"$ana" import -f "$tmp/c.perfcap" -o "$tmp/c.db" > /dev/null
	rm -f "$tmp/c.perfcap"
	reqs=$(sqlite3 "$tmp/c.db" "SELECT count(*) FROM requests")
	calls=$(sqlite3 "$tmp/c.db" "SELECT count(*) FROM syscalls")
	wall_rss "$tmp/a" "$ana" report --json "$tmp/c.db"
	wall_rss "$tmp/b" env PERFCAP_REPORT_REQUEST_BYTES="$limit" \
		PERFCAP_REPORT_CALL_BYTES="$limit" "$ana" report --json "$tmp/c.db"
	read -r as ar < "$tmp/a"
	read -r bs br < "$tmp/b"
	merged=no
	grep -q "read again sorted by thread" "$tmp/b.err" && merged=yes
	same=no
	cmp -s "$tmp/a.txt" "$tmp/b.txt" && same=yes
	printf '%10s %10s %10s | %9s %10d | %9s %10d %6s | %s\n' "$n" "$reqs" "$calls" \
		"$as" $((ar / 1024)) "$bs" $((br / 1024)) "$merged" "$same"
	diffs+=("$n $(diff_pair "$tmp/c.db")")
done
echo
echo "diff of each capture against itself (limited: $limit bytes for latency values)"
printf '%10s | %9s %10s | %9s %10s %7s | %s\n' events "diff s" "RSS MiB" "limited s" \
	"RSS MiB" spilled same
for row in "${diffs[@]}"; do
	# shellcheck disable=SC2086
	printf '%10s | %9s %10d | %9s %10d %7s | %s\n' $row
done
