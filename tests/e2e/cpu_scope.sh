#!/bin/sh
# cpu_scope.sh - the cpu source's choice of events without the sched
# source (`-e cpu`; record/sources/source_cpu.c): a traced thread's
# cpu-clock event costs two timer operations at each of its context
# switches, so when the traced threads switch more than 50 times per tick
# of all CPUs the CPUs' events take over. With sched recorded its rate
# decides; without it, the threads' own switch-in counts (/proc/PID/task/
# TID/schedstat).
#  - pingpong pinned to one CPU (hundreds of thousands of switches a
#    second) under `-e cpu`: sampled per thread at first (META
#    sampling.cpu.scope threads), the CPUs' events within half a second
#    (STATS cpu.scope.cpus_from_ns), the rate that decided it above the
#    threshold (cpu.scope.switch_rate), and the pingpong's samples go on
#    after the switch at -F 99 on its one busy CPU (80-120%);
#  - cpu_split (one thread burning CPU, hardly a switch) under `-e cpu`:
#    per thread throughout, no cpu.scope.* in STATS.
. "$(dirname "$0")/lib.sh"

require_bpf
make_tmpdir
[ -x "$PINGPONG" ] || fail "PINGPONG not set"
cpu=$(awk -F'[-,]' '{ print $NF }' /sys/devices/system/cpu/online)
ncpus=$(nproc)

"$PERFCAP_RECORD" -e cpu -o "$TMP/pp.perfcap" -- taskset -c "$cpu" "$PINGPONG" 3 \
	> /dev/null 2> "$TMP/pp.err" || { cat "$TMP/pp.err" >&2; fail "perfcap-record failed"; }
cat "$TMP/pp.err"
q() { "$PERFCAP_ANALYZE" query --format csv "$1" "$2" | tail -n +2 | tr -d '\r"'; }
row=$(q "$TMP/pp.perfcap" "SELECT (SELECT value FROM meta WHERE key = 'sampling.cpu.scope') AS scope,
	(SELECT value FROM stats WHERE key = 'cpu.scope.cpus_from_ns') -
	(SELECT value FROM meta WHERE key = 'record.start_ns') AS from_ns,
	(SELECT value FROM stats WHERE key = 'cpu.scope.switch_rate') AS rate,
	(SELECT count(*) FROM samples WHERE ts > (SELECT value FROM stats
		WHERE key = 'cpu.scope.cpus_from_ns')) AS after,
	(SELECT max(ts) FROM samples) - (SELECT value FROM stats
		WHERE key = 'cpu.scope.cpus_from_ns') AS span")
echo "pingpong, -e cpu: scope, switch (ns from the start), rate, samples after, ns of them: $row"
IFS=, read -r scope from rate after span <<END
$row
END
[ "$scope" = threads ] || fail "pingpong was not sampled per thread at first ($scope)"
[ -n "$from" ] && [ "$from" -le 500000000 ] ||
	fail "the CPUs' events did not take over within 0.5 s without the sched source ($from)"
[ "${rate:-0}" -gt $((50 * ncpus * 99)) ] ||
	fail "switch rate $rate is not above 50 per tick of $ncpus CPUs at 99 Hz"
want=$((span * 99 / 1000000000))
within "${after:-0}" $((want * 8 / 10)) $((want * 12 / 10)) ||
	fail "$after samples after the switch over $span ns, want about $want"

"$PERFCAP_RECORD" -e cpu -o "$TMP/hog.perfcap" -- "$CPU_SPLIT" 2 \
	> /dev/null 2> "$TMP/hog.err" || { cat "$TMP/hog.err" >&2; fail "perfcap-record failed"; }
row=$(q "$TMP/hog.perfcap" "SELECT (SELECT value FROM meta WHERE key = 'sampling.cpu.scope') AS scope,
	(SELECT count(*) FROM stats WHERE key LIKE 'cpu.scope.%') AS keys,
	(SELECT count(*) FROM samples) AS samples")
echo "cpu_split, -e cpu: scope, cpu.scope.* keys, samples: $row"
IFS=, read -r scope keys samples <<END
$row
END
[ "$scope" = threads ] || fail "cpu_split was not sampled per thread ($scope)"
[ "$keys" = 0 ] || fail "cpu_split, one busy thread, handed over to the CPUs' events"
[ "$samples" -gt 100 ] || fail "cpu_split: $samples samples in 2 s at 99 Hz"
echo "PASS"
