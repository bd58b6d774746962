#!/bin/bash
# sched_windows_pg.sh - the sched source in time windows on a real server,
# recorded with default options: Debian's postgresql under pgbench's
# TPC-B-like load (8 clients; tens of thousands of context switches a
# second, above the default --sched-rate of 10,000), perfcap-record -p
# POSTMASTER -d 5 started before pgbench connects, so its backends are
# followed (accept_lib.sh pg_cluster_start: our own throwaway cluster).
#
# Ground truth, from the kernel's own accounting read independently of the
# recorder: /proc/PID/task/TID/schedstat (time on a CPU) of every backend,
# read at about 1.2 s and 3.8 s into the recording (CLOCK_MONOTONIC).
#
# Checked:
#  - the recording was windowed (sched_gaps, META sched.windows.budget),
#    and the gaps have their threads' run time (sched_gap_runs);
#  - each busy backend's running time in the time shares, over the whole
#    seconds that lie between the two readings, against its schedstat
#    difference extrapolated to those seconds: within 15% (the windows saw
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

# schedstat of the postmaster's children at two moments of the recording
python3 - "$TMP/w.perfcap.err" "$pm" > "$TMP/truth" << 'PY' &
import os, sys, time
errfile, pm = sys.argv[1], sys.argv[2]
deadline = time.monotonic() + 60
while "recording" not in (open(errfile).read() if os.path.exists(errfile) else ""):
    if time.monotonic() > deadline:
        sys.exit("the recorder never announced itself")
    time.sleep(0.002)
start = time.monotonic()
def snap():
    out = {}
    kids = open("/proc/%s/task/%s/children" % (pm, pm)).read().split()
    for pid in kids:
        try:
            out[pid] = int(open("/proc/%s/schedstat" % pid).read().split()[0])
        except (OSError, IndexError, ValueError):
            pass
    return time.monotonic_ns(), out
time.sleep(max(0, start + 1.2 - time.monotonic()))
t0, a = snap()
time.sleep(max(0, start + 3.8 - time.monotonic()))
t1, b = snap()
print("t0=%d t1=%d" % (t0, t1))
for pid in a:
    if pid in b:
        print("%s %d" % (pid, b[pid] - a[pid]))
PY
truth=$!
"$PERFCAP_RECORD" -p "$pm" -d 5 -o "$TMP/w.perfcap" > /dev/null 2> "$TMP/w.perfcap.err" &
rec=$!
wait_for "$TMP/w.perfcap.err" recording 30 || fail "the recorder did not start"
timeout 30 pgbench -h 127.0.0.1 -p "$port" -U postgres -n -c 8 -j 2 -T 6 postgres \
	> "$TMP/pgbench.out" 2>&1 &
bench=$!
wait $rec || { cat "$TMP/w.perfcap.err"; fail "perfcap-record failed"; }
wait $truth || fail "no schedstat readings"
wait $bench
bench=
grep -E 'number of transactions|tps' "$TMP/pgbench.out"
grep "sched: followed" "$TMP/w.perfcap.err" || fail "the recording was not windowed (the load did not pass the budget?)"

q() { "$PERFCAP_ANALYZE" query --format csv "$TMP/w.perfcap" "$1" | tail -n +2 | tr -d '\r"'; }
gaps=$(q "SELECT count(*) FROM sched_gaps")
runs=$(q "SELECT count(*) FROM sched_gap_runs")
echo "gaps $gaps, thread runs in them $runs"
[ "$gaps" -ge 2 ] && [ "$runs" -ge 8 ] || fail "$gaps gaps, $runs runs in them"

read -r t0 t1 < <(sed -n 's/^t0=\([0-9]*\) t1=\([0-9]*\)$/\1 \2/p' "$TMP/truth")
[ -n "$t0" ] || fail "no reading times"
shares=$(q "SELECT tid, sum(running_ns), sum(window_end - window_start) FROM thread_time_shares
	WHERE window_start >= $t0 AND window_end <= $t1 GROUP BY tid")
[ -n "$shares" ] || fail "no whole second of the shares between the readings"
echo "backend, running by schedstat (extrapolated to the shares' seconds), by the shares:"
checked=0
while IFS=, read -r tid ran len; do
	d=$(awk -v t="$tid" '$1 == t { print $2 }' "$TMP/truth")
	[ -n "$d" ] || continue
	exp=$(( d * len / (t1 - t0) ))
	[ "$exp" -ge 100000000 ] || continue   # busy backends only
	echo "$tid $exp $ran"
	within "$ran" $((exp * 85 / 100)) $((exp * 115 / 100)) ||
		fail "backend $tid: running $ran ns in the shares, $exp by schedstat"
	checked=$((checked + 1))
done <<< "$shares"
[ "$checked" -ge 4 ] || fail "only $checked busy backends to check"
echo "PASS: $checked backends"
