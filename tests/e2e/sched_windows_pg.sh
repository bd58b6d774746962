#!/bin/bash
# sched_windows_pg.sh - the sched source in time windows on a real server,
# recorded with default options: Debian's postgresql under pgbench's
# select-only load (8 clients; tens of thousands of context switches a
# second here, above the default --sched-rate of 10,000; TPC-B's row locks
# held a slow CI host to 635 transactions a second, under the budget),
# perfcap-record -p POSTMASTER -d 5 started before pgbench connects, so its
# backends are followed (accept_lib.sh pg_cluster_start: our own throwaway
# cluster). A host too slow to pass the default budget even so is recorded
# again below the rate it made, and the test says so.
#
# Ground truth, from the kernel's own accounting read independently of the
# recorder: /proc/PID/schedstat (time on a CPU) of every backend, read
# every 50 ms from about 1.0 s to 4.0 s into the recording
# (CLOCK_MONOTONIC), and interpolated at the edges of each second of the
# time shares between the first and the last reading.
#
# Checked:
#  - the recording was windowed (sched_gaps, META sched.windows.budget),
#    and the gaps have their threads' run time (sched_gap_runs);
#  - each busy backend's running time (and, when it waited 50 ms or more,
#    its time waiting for a CPU: run_delay against runnable_ns) in the
#    time shares, over the whole
#    seconds that lie between the first and the last reading, against its
#    schedstat difference over those seconds: within 15% (the windows saw
#    about a quarter of each second; the rest comes from the run-time
#    counters at the gaps' edges). Seen here: within 5%, either way; the
#    same with every switch followed (--sched-rate 0). A steady load: this
#    does not tell the counters from scaling, sched_windows.sh's burst
#    thread does.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/accept_lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}"
require_bpf
skip() { echo "SKIP: $* (.ci/install-deps installs it)" >&2; exit 77; }
make_tmpdir

started='' bench=''
stop_all() {
	[ -n "$bench" ] && kill "$bench" 2> /dev/null
	pg_cluster_stop
	wait
	rm -rf "$TMP"
}
trap stop_all EXIT
pg_cluster_start
pgbench -h 127.0.0.1 -p "$port" -U postgres -i -s 2 -q postgres > "$TMP/init.log" 2>&1 ||
	{ cat "$TMP/init.log"; fail "pgbench -i failed"; }

# record_load [RECORDER OPTION...]: pgbench's load recorded, with the
# postmaster's children's schedstat every 50 ms of the recording's seconds 1
# to 4 beside it: "ts pid ns delay" lines in $TMP/truth (a pgbench load is
# not steady enough to extrapolate two readings to the shares' seconds)
record_load() {
	rm -f "$TMP/w.perfcap" "$TMP/w.perfcap.err" "$TMP/truth"
	python3 - "$TMP/w.perfcap.err" "$pm" > "$TMP/truth" << 'PY' &
import os, sys, time
errfile, pm = sys.argv[1], sys.argv[2]
deadline = time.monotonic() + 60
while "recording" not in (open(errfile).read() if os.path.exists(errfile) else ""):
    if time.monotonic() > deadline:
        sys.exit("the recorder never announced itself")
    time.sleep(0.002)
start = time.monotonic()
time.sleep(max(0, start + 1.0 - time.monotonic()))
while time.monotonic() < start + 4.0:
    kids = open("/proc/%s/task/%s/children" % (pm, pm)).read().split()
    for pid in kids:
        try:
            ns, delay = map(int, open("/proc/%s/schedstat" % pid).read().split()[:2])
        except (OSError, IndexError, ValueError):
            continue
        print("%d %s %d %d" % (time.monotonic_ns(), pid, ns, delay))
    time.sleep(0.05)
PY
	local truth=$! rec
	"$PERFCAP_RECORD" -p "$pm" -d 5 "$@" -o "$TMP/w.perfcap" > /dev/null 2> "$TMP/w.perfcap.err" &
	rec=$!
	wait_for "$TMP/w.perfcap.err" recording 30 || fail "the recorder did not start"
	timeout 30 pgbench -h 127.0.0.1 -p "$port" -U postgres -n -S -c 8 -j 2 -T 6 postgres \
		> "$TMP/pgbench.out" 2>&1 &
	bench=$!
	wait $rec || { cat "$TMP/w.perfcap.err"; fail "perfcap-record failed"; }
	wait $truth || fail "no schedstat readings"
	wait $bench
	bench=
	grep -E 'number of transactions|tps' "$TMP/pgbench.out"
}

q() { "$PERFCAP_ANALYZE" query --format csv "$TMP/w.perfcap" "$1" | tail -n +2 | tr -d '\r"'; }

record_load
if ! grep "sched: followed" "$TMP/w.perfcap.err"; then
	# A host slow enough (CI's, under steal) keeps the backends below the
	# default budget: the windows are then tested below the rate this
	# recording saw, and the test says so.
	rate=$(q "SELECT count(*) * 1000000000 / (max(ts) - min(ts) + 1) FROM switches")
	[ "${rate:-0}" -ge 2000 ] ||
		fail "the recording was not windowed, and its $rate switches a second are too few to window"
	echo "NOTE: not windowed at the default --sched-rate (the load made $rate switches a" \
		"second on this host); recording again with --sched-rate $((rate / 2))" >&2
	record_load --sched-rate $((rate / 2))
	grep "sched: followed" "$TMP/w.perfcap.err" ||
		fail "the recording was not windowed at --sched-rate $((rate / 2))"
fi

gaps=$(q "SELECT count(*) FROM sched_gaps")
runs=$(q "SELECT count(*) FROM sched_gap_runs")
echo "gaps $gaps, thread runs in them $runs"
[ "$gaps" -ge 2 ] && [ "$runs" -ge 8 ] || fail "$gaps gaps, $runs runs in them"

t0=$(awk 'NR == 1 { print $1 }' "$TMP/truth") t1=$(awk 'END { print $1 }' "$TMP/truth")
[ -n "$t0" ] || fail "no schedstat readings"
shares=$(q "SELECT tid, window_start, window_end, running_ns, runnable_ns FROM thread_time_shares
	WHERE window_start >= $t0 AND window_end <= $t1 ORDER BY tid, window_start")
[ -n "$shares" ] || fail "no whole second of the shares between the readings"
# each backend's schedstat at each second's edges, interpolated between the
# readings around it; summed over the seconds: "tid truth shares", running
# then runnable
echo "$shares" | python3 -c '
import sys
reads = {}
for line in open(sys.argv[1]):
    ts, pid, ns, delay = map(int, line.split())
    reads.setdefault(pid, []).append((ts, ns, delay))
def at(v, t, k):
    for a, b in zip(v, v[1:]):
        if a[0] <= t <= b[0]:
            return a[k] + (b[k] - a[k]) * (t - a[0]) / (b[0] - a[0]) if b[0] > a[0] else a[k]
    return None
sums = {}
for line in sys.stdin:
    tid, ws, we, ran, queued = map(int, line.split(","))
    v = reads.get(tid)
    if not v or None in (at(v, ws, 1), at(v, we, 1)):
        continue
    s = sums.get(tid, [0, 0, 0, 0])
    s[0] += at(v, we, 1) - at(v, ws, 1)
    s[1] += ran
    s[2] += at(v, we, 2) - at(v, ws, 2)
    s[3] += queued
    sums[tid] = s
for tid, s in sorted(sums.items()):
    print(tid, *map(int, s))' "$TMP/truth" > "$TMP/compare"
echo "backend, running by schedstat over the shares' seconds, by the shares; runnable (run_delay):"
checked=0
while read -r tid exp ran qexp queued; do
	[ "$exp" -ge 100000000 ] || continue   # busy backends only
	echo "$tid $exp $ran; $qexp $queued"
	within "$ran" $((exp * 85 / 100)) $((exp * 115 / 100)) ||
		fail "backend $tid: running $ran ns in the shares, $exp by schedstat"
	# waiting for a CPU: the gaps' from the counter, the windows' seen
	[ "$qexp" -lt 50000000 ] ||
		within "$queued" $((qexp * 85 / 100)) $((qexp * 115 / 100)) ||
		fail "backend $tid: runnable $queued ns in the shares, $qexp by schedstat"
	checked=$((checked + 1))
done < "$TMP/compare"
[ "$checked" -ge 4 ] || fail "only $checked busy backends to check"
echo "PASS: $checked backends"
