#!/bin/bash
# pool_rounds.sh - pools the rounds of several bench/real_servers.sh runs of
# the same builds: per server and mode, the paired ratio (each round's rate
# over the untraced rate of the same round) over every round of every run,
# as n, mean +- sd, the standard error of the mean and the median.
#
# Why: on a shared VM one 6-10 round run has a paired sd of 0.10-0.25 (the
# host's steal and its neighbours move whole rounds), so its mean is known
# to +-0.04-0.08 only, and two runs of the same build an hour apart differ
# by as much. The standard error says how far a mean can be trusted; the
# median, how much a few disturbed rounds moved it. Pool only runs of the
# same builds and options.
#
# The capacity columns pool real_servers.sh's host CPU per request the same
# way (each round's untraced over the mode's; logs without it: "-").
#
# Usage: bench/pool_rounds.sh LOG...
#   LOG: the standard output of bench/real_servers.sh (its "SERVER round N:
#   MODE: RATE ... STEAL SETUP" lines; the summary file $OUT does not have
#   them).
# Env: MAX_STEAL (percent, default none): leave out a pair when either of
#   its runs lost more than this share of its busy + steal time to other
#   guests (the line's steal); the table says how many were left out. A
#   rule stated before looking, for hosts where whole minutes are given
#   away: a pair with 30% steal in one run measures the hypervisor.
# Not a test: prints a table.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 REAL_SERVERS_STDOUT..." >&2; exit 2; }
for f in "$@"; do
	[ -r "$f" ] || { echo "pool_rounds.sh: cannot read $f" >&2; exit 1; }
done
# Each file's rounds are its own: the key is file, server and round.
awk -v max_steal="${MAX_STEAL:-}" '
	$2 == "round" && $4 ~ /:$/ && $5 ~ /^[0-9.]+$/ {
		key = FILENAME SUBSEP $1 SUBSEP $3
		mode = $4; sub(/:$/, "", mode)
		rate[key, mode] = $5
		steal[key, mode] = $11
		host[key, mode] = NF >= 13 ? $13 : 0
		if (mode != "none") { keys[key, mode] = 1; seen[$1, mode] = 1 }
	}
	function sort(a, n,    i, j, t) {   # insertion sort, a[1..n]
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	}
	# "mean+-sd se median" of a[1..n]
	function stats(a, n,    i, s, ss, m, v, sd, med) {
		if (!n)
			return sprintf("%14s %6s %7s", "-", "-", "-")
		for (i = 1; i <= n; i++) { s += a[i]; ss += a[i] * a[i] }
		m = s / n
		v = n > 1 ? (ss - n * m * m) / (n - 1) : 0
		sd = sqrt(v > 0 ? v : 0)
		sort(a, n)
		med = n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		return sprintf("%6.3f+-%5.3f %6.3f %7.3f", m, sd, sd / sqrt(n), med)
	}
	END {
		printf "%-8s %-16s %4s %14s %6s %7s %5s %14s %6s %7s\n", "server", "mode", "n", "paired",
			"se", "median", "out", "capacity", "se", "median"
		for (sm in seen) {
			split(sm, p, SUBSEP)
			n = 0; nc = 0; out = 0; delete x; delete y
			for (km in keys) {
				split(km, q, SUBSEP)   # file, server, round, mode
				if (q[2] != p[1] || q[4] != p[2] || rate[q[1], q[2], q[3], "none"] <= 0)
					continue
				if (max_steal != "" && (steal[q[1], q[2], q[3], q[4]] > max_steal + 0 ||
							steal[q[1], q[2], q[3], "none"] > max_steal + 0)) {
					out++
					continue
				}
				x[++n] = rate[q[1], q[2], q[3], q[4]] / rate[q[1], q[2], q[3], "none"]
				if (host[q[1], q[2], q[3], q[4]] > 0 && host[q[1], q[2], q[3], "none"] > 0)
					y[++nc] = host[q[1], q[2], q[3], "none"] / host[q[1], q[2], q[3], q[4]]
			}
			printf "%-8s %-16s %4d %s %5d %s\n", p[1], p[2], n, stats(x, n), out, stats(y, nc)
		}
	}' "$@" | { read -r header; echo "$header"; sort -k1,1 -k2,2; }
