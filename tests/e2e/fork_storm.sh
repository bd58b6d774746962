#!/bin/bash
# fork_storm.sh - issue 16, defect 9: the recorder's memory does not grow
# with the number of processes it has seen. The fork_storm workload forks
# N children at a fixed rate, each inheriting 1,024 executable mappings
# (so each address space the recorder keeps costs ~32 KiB); it runs once
# with N children over S seconds and once with 2N over 2S (same rate, so
# the same number alive at a time). A recorder that keeps every exited
# process grows by ~N * 32 KiB between the two (measured before the fix:
# 70 MB -> 130 MB); one that evicts them stays within a slack that does
# not depend on N. The recorder's own peak (STATS record.peak_rss_kb,
# getrusage) is compared, the evictions must be counted, and the capture
# must still name the children's function (their stacks were resolved
# before their mappings were freed).
set -u
. "$(dirname "$0")/lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}" "${FORK_STORM:?}"
require_bpf
make_tmpdir

# Under AddressSanitizer (./test.sh) freed memory waits in a 256 MiB
# quarantine, so RSS grows with everything ever freed, i.e. with N: a
# 16 MiB quarantine bounds that, and still catches recent use-after-free.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16"

# 125 forks a second: at 400 a second the ASan recorder, sharing two
# CPUs with other tests, sometimes fell seconds behind the storm and held
# almost every child at once (3,888 of 4,000), which is lag, not a leak;
# at 250 a second it still did on a host half as fast (at most 3,499
# held; 260 at 125 a second, in both runs). The memory a leak would add
# depends on N, not on the rate.
N=${STORM_N:-2000}
SECS=${STORM_SECONDS:-16}
MAPS=1024

stat_of() { "$PERFCAP_ANALYZE" info "$1" | awk -v k="$2" '$1 == k { print $2 }'; }

# storm COUNT SECONDS: records the storm into $TMP/COUNT.perfcap. Without
# user stack copies: the ASan recorder, CPU-bound through the storm,
# could not keep up with 2,000 samples' copies a second and lost ring
# records, and what it buffered meanwhile blurred the memory comparison;
# the copies' own memory is bounded apart (16 MiB of early copies).
storm() {
	"$PERFCAP_RECORD" -F 999 --stack-copy 0 -o "$TMP/$1.perfcap" -- \
		"$FORK_STORM" "$1" "$2" "$MAPS" \
		> "$TMP/$1.out" 2> "$TMP/$1.err" || { cat "$TMP/$1.err"; fail "recording $1 children"; }
	grep -E "forgot|wrote" "$TMP/$1.err"
	local seen evicted forks lost
	seen=$(stat_of "$TMP/$1.perfcap" procs.seen)
	evicted=$(stat_of "$TMP/$1.perfcap" procs.evicted)
	forks=$("$PERFCAP_ANALYZE" info "$TMP/$1.perfcap" | awk '$1 == "fork" { gsub(",", ""); print $2 }')
	lost=$("$PERFCAP_ANALYZE" info "$TMP/$1.perfcap" |
		awk '$1 == "lost" && $2 == "kernel" { gsub(",", ""); print $3 + $5 }')
	# the storm must have been recorded for the memory check to mean
	# anything: every child has its FORK record, or is counted lost.
	# procs.seen counts the children the recorder described (PROC, at a
	# child's first sample or off-CPU record), printed for the record: a
	# child can exit before any of its records is consumed.
	[ $((${forks:-0} + ${lost:-0})) -ge "$1" ] ||
		fail "$1 children: ${forks:-0} FORK records and ${lost:-0} events counted lost"
	echo "$1 children: ${forks:-0} FORK records, ${seen:-0} described, ${lost:-0} lost"
	# a child whose records were all lost was never held, so never evicted:
	# half of those the recorder described (all of them when none is lost)
	[ "${evicted:-0}" -ge $((${seen:-0} / 2)) ] ||
		fail "$1 children: only ${evicted:-0} of ${seen:-0} described evicted"
	"$PERFCAP_ANALYZE" report --folded "$TMP/$1.perfcap" | grep -q "storm_child_work" \
		|| fail "$1 children: the capture does not name storm_child_work"
}

storm "$N" "$SECS"
storm $((2 * N)) $((2 * SECS))
rss1=$(stat_of "$TMP/$N.perfcap" record.peak_rss_kb)
rss2=$(stat_of "$TMP/$((2 * N)).perfcap" record.peak_rss_kb)
[ "${rss1:-0}" -gt 0 ] && [ "${rss2:-0}" -gt 0 ] || fail "no record.peak_rss_kb in STATS"
echo "peak RSS: $N children ${rss1} KiB, $((2 * N)) children ${rss2} KiB"
# N more processes kept would add N * 32 KiB (64 MB for N = 2000; +66%
# measured): allow a third of the first run's peak for timing noise (how
# far the recorder lags the storm sets how many exited processes wait for
# eviction; +12% seen on a loaded host), which does not grow with N.
limit=$((rss1 + rss1 / 3))
held1=$(stat_of "$TMP/$N.perfcap" procs.table_peak)
held2=$(stat_of "$TMP/$((2 * N)).perfcap" procs.table_peak)
[ "$rss2" -le "$limit" ] || fail "peak RSS grew with the processes seen: $rss1 -> $rss2 KiB" \
	"(limit $limit); at most ${held1:-?} and ${held2:-?} processes held at once (more in the" \
	"second run: the recorder lagged the storm)"
echo "ok: peak RSS does not grow with the number of processes ($rss1 -> $rss2 KiB)"
echo PASS
