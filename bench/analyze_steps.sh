#!/bin/bash
# analyze_steps.sh - import, report, report --json, diff (the database
# against itself) and report --html of one capture with two or more builds
# of perfcap-analyze, interleaved round by round (ABBA), each step's wall
# time and CPU time (user + system) as mean +- sd and the wall median, peak
# RSS, and each step's ratio to the same build's import by wall time and by
# CPU time (issue 14's targets: report <= 2x, diff self <= 4x, --html <=
# 2.5x the import). On a machine shared with other jobs the CPU time is the
# steadier measure. docs/perfcap-analyze.md, PERFORMANCE, quotes its tables.
#
# Usage: bench/analyze_steps.sh CAPTURE ROUNDS BUILD_DIR...
#   e.g. bench/analyze_steps.sh redis-12.perfcap 5 build-base build
# Environment: RAW=FILE keeps the raw lines (build step wall user sys KiB).
# Not a test: numbers are reported, not judged.
set -uo pipefail
cap=$(realpath "$1"); rounds=$2; shift 2
builds=("$@")
out=$(mktemp); tmp=$(mktemp -d)
trap 'rm -rf "$out" "$tmp"' EXIT

# step BUILD NAME CMD...: runs CMD, appends "BUILD NAME wall user sys KiB".
step() {
	local b=$1 n=$2; shift 2
	/usr/bin/time -f "%e %U %S %M" -o "$tmp/t" "$@" > /dev/null 2>&1 ||
		echo "failed: $b $n" >&2
	echo "$b $n $(tail -1 "$tmp/t")" >> "$out"
}

# round BUILD: the five steps of one build.
round() {
	local b=$1 a db
	a=$(realpath "$b/analyze/perfcap-analyze"); db=$tmp/run.db
	rm -f "$db"
	step "$b" import "$a" import -f "$cap" -o "$db"
	step "$b" report "$a" report "$db"
	step "$b" json "$a" report --json "$db"
	step "$b" diff "$a" diff "$db" "$db"
	step "$b" html "$a" report --html "$tmp/page.html" "$db"
}

echo "analyze_steps: $cap, $rounds rounds; load $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 0; r < rounds; r++)); do
	if ((r % 2)); then
		for ((i = ${#builds[@]} - 1; i >= 0; i--)); do round "${builds[i]}"; done
	else
		for b in "${builds[@]}"; do round "$b"; done
	fi
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
[ -n "${RAW:-}" ] && cp "$out" "$RAW"
sort -k1,1 -k2,2 -s "$out" | awk '
	{ k = $1 " " $2; if (!(k in n)) order[++m] = k; n[k]++
	  w[k] += $3; ww[k] += $3 * $3; c = $4 + $5; cc[k] += c; ccc[k] += c * c
	  if ($6 > rss[k]) rss[k] = $6; vals[k] = vals[k] " " $3 }
	function sd(s, ss, n, mean) { return n > 1 ? sqrt((ss - n * mean * mean) / (n - 1)) : 0 }
	function median(list,   v, nv, a, b, x) {
		nv = split(substr(list, 2), v, " ")
		for (a = 2; a <= nv; a++) { x = v[a]; for (b = a - 1; b > 0 && v[b] > x; b--) v[b + 1] = v[b]; v[b + 1] = x }
		return nv % 2 ? v[(nv + 1) / 2] : (v[nv / 2] + v[nv / 2 + 1]) / 2
	}
	END {
		printf "%-24s %15s %7s %15s %8s %10s %10s\n", "build step", "wall mean+-sd", "median",
			"cpu mean+-sd", "peak MiB", "x imp wall", "x imp cpu"
		for (i = 1; i <= m; i++) {
			k = order[i]; split(k, bs, " "); mw = w[k] / n[k]; mc = cc[k] / n[k]
			imp = bs[1] " import"; iw = w[imp] / n[imp]; ic = cc[imp] / n[imp]
			printf "%-24s %6.2f +- %5.2f %7.2f %6.2f +- %5.2f %8d %10.2f %10.2f\n", k, mw,
				sd(w[k], ww[k], n[k], mw), median(vals[k]), mc, sd(cc[k], ccc[k], n[k], mc),
				rss[k] / 1024, mw / iw, mc / ic
		}
	}'
