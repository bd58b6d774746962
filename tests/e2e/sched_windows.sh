#!/bin/sh
# sched_windows.sh - the sched source in time windows (--sched-rate;
# record/sources/source_sched.c "windows", analyze/correlate/sched_windows.c):
# above the budget the programs at every switch and wakeup are attached
# only in a window at the start of each second; each gap between windows
# is said (SCHED_GAP), each traced thread is written out as the next
# window opens (SCHED_TASK, with the kernel's own run-time counter), and
# the analyzer scales what the windows saw to their seconds.
#
# pingpong pinned to one CPU: two threads, hundreds of thousands of
# context switches a second, far above the default budget (10,000), each
# thread on the CPU half of the time, and a third ("burst") that spins
# 100 ms of CPU from 0.4 s into each second, inside the gaps, and sleeps
# otherwise. Recorded with default options for 5 seconds (windows open at
# 2, 3, 4 and 5 s; the last can come as the threads exit, which leaves at
# least 2 seconds of the burst thread between openings), imported:
#  - META sched.windows.budget 10000; STATS: windows, the time covered
#    less than the recording; sched_gaps rows, and a sched_tasks row for
#    both threads at the end of each gap;
#  - each thread's running time in the time shares (scaled from the
#    windows) against the kernel's sum_exec_runtime between the first and
#    the last window opening (sched_tasks, exact): within 20%;
#  - the burst thread's running time in each second between the first
#    and the last opening is its 100 ms (within 15%), though the windows
#    never saw it run: the run time counters at both edges of each gap
#    (SCHED_TASK_CLOSE, SCHED_TASK) give it exactly (sched_gap_runs);
#  - each thread's states add up to its seconds (running + runnable +
#    blocked within 10% of the window) in the windowed seconds;
#  - the waits' sums of the main thread in each windowed second, scaled
#    (thread_metrics.scale: the gaps' voluntary switches, format 1.16),
#    against its own count of its voluntary switches (pingpong's timeline,
#    getrusage): within 10% (by time alone: 0.53-0.98 of it in the
#    seconds of one run; the windows run pingpong slower);
#  - the report says the sched source was followed in windows (Method
#    and scope, Data quality);
#  - with --sched-rate 0 there is no gap: every switch followed.
. "$(dirname "$0")/lib.sh"

require_bpf
make_tmpdir
[ -x "$PINGPONG" ] || fail "PINGPONG not set"
cpu=$(awk -F'[-,]' '{ print $NF }' /sys/devices/system/cpu/online)

PINGPONG_TIMELINE=1 "$PERFCAP_RECORD" -o "$TMP/w.perfcap" -- taskset -c "$cpu" "$PINGPONG" 5 100 \
	> "$TMP/pp.out" 2> "$TMP/w.err" || { cat "$TMP/w.err" >&2; fail "perfcap-record failed"; }
grep -v '^trips ' "$TMP/pp.out"
cat "$TMP/w.err"
grep -q "sched: followed in" "$TMP/w.err" || fail "the summary does not say sched was followed in windows"

q() { "$PERFCAP_ANALYZE" query --format csv "$TMP/w.perfcap" "$1" | tail -n +2 | tr -d '\r"'; }
stat() { q "SELECT CAST(value AS INTEGER) FROM stats WHERE chunk = 'stats' AND key = '$1'"; }
budget=$(q "SELECT value FROM meta WHERE key = 'sched.windows.budget'")
windows=$(stat sched.windows.count) covered=$(stat sched.windows.covered_ns)
span=$(stat sched.windows.span_ns) gaps=$(q "SELECT count(*) FROM sched_gaps")
echo "budget $budget, windows $windows, covered $covered of $span ns, gaps $gaps"
[ "$budget" = 10000 ] || fail "META sched.windows.budget '$budget', expected 10000"
[ "${windows:-0}" -ge 2 ] || fail "$windows windows: the load did not pass the budget?"
[ "$covered" -lt $((span / 2)) ] || fail "windows covered $covered ns of $span"
[ "$gaps" -ge 2 ] || fail "$gaps sched_gaps rows"
# (the last opening may come as the threads exit: not all of them there)
opens=$(q "SELECT count(DISTINCT ts) FROM sched_tasks WHERE edge = 'open'")
full=$(q "SELECT count(*) FROM (SELECT ts FROM sched_tasks WHERE edge = 'open' GROUP BY ts
	HAVING count(*) >= 3)")
closes=$(q "SELECT count(DISTINCT ts) FROM sched_tasks WHERE edge = 'close'")
echo "sched_tasks: $opens openings, $full of them with the 3 threads; $closes closes"
[ "$opens" -ge 2 ] && [ "$full" -ge 2 ] || fail "sched_tasks: $opens openings, $full with 3 threads"
[ "$closes" -eq "$gaps" ] || fail "sched_tasks: $closes closes for $gaps gaps"

# running time: the shares' (scaled) against the kernel's counter, over
# the shares' windows that lie between the first and the last opening
# (within 20 ms: the openings come at the recorder's ticks), the counter's
# difference extrapolated to their length
rows=$(q "WITH o AS (SELECT tid, min(ts) t0, max(ts) t1,
		max(runtime_ns) - min(runtime_ns) exact FROM sched_tasks WHERE edge = 'open' GROUP BY tid),
	s AS (SELECT s.tid, sum(s.running_ns) shares, sum(s.window_end - s.window_start) len,
		min(s.window_start) w0, max(s.window_end) w1
		FROM thread_time_shares s JOIN o ON o.tid = s.tid
		WHERE s.window_start >= o.t0 - 20000000 AND s.window_end <= o.t1 + 20000000
		GROUP BY s.tid)
	SELECT o.tid, o.exact * (s.w1 - s.w0) / (o.t1 - o.t0), s.shares FROM o JOIN s ON s.tid = o.tid
	WHERE o.t1 > o.t0")
echo "tid, running from the counter (over the shares' windows), from the shares:"
echo "$rows"
[ -n "$rows" ] || fail "no thread with two openings and shares"
echo "$rows" | while IFS=, read -r tid exact shares; do
	within "$shares" $((exact * 80 / 100)) $((exact * 120 / 100)) ||
		fail "thread $tid: running $shares ns in the shares, $exact by its counter"
done || exit 1

# the burst thread, running only inside the gaps
burst_tid=$(sed -n 's/^burst: tid \([0-9]*\) cpu_ns \([0-9]*\)$/\1/p' "$TMP/pp.out")
burst_cpu=$(sed -n 's/^burst: tid \([0-9]*\) cpu_ns \([0-9]*\)$/\2/p' "$TMP/pp.out")
[ -n "$burst_tid" ] || fail "pingpong did not print its burst thread"
[ "$burst_cpu" -ge 450000000 ] ||
	fail "the burst thread got $burst_cpu ns of CPU, not 5 x 100 ms: the premise fails"
runs=$(q "SELECT count(*) FROM sched_gap_runs WHERE tid = $burst_tid AND running_ns > 50000000")
echo "gaps the burst thread ran in, by its counters: $runs"
[ "$runs" -ge 2 ] || fail "sched_gap_runs: the burst thread ran in $runs gaps"
rows=$(q "SELECT window_start, running_ns FROM thread_time_shares WHERE tid = $burst_tid
	AND window_start >= (SELECT min(ts) FROM sched_tasks WHERE edge = 'open') - 20000000
	AND window_end <= (SELECT max(ts) FROM sched_tasks WHERE edge = 'open') + 20000000")
echo "burst thread, window and running ns:"
echo "$rows"
[ "$(echo "$rows" | grep -c .)" -ge 2 ] || fail "fewer than 2 seconds of the burst thread to check"
echo "$rows" | while IFS=, read -r w ran; do
	within "$ran" 85000000 115000000 ||
		fail "burst thread: running $ran ns in the second from $w, expected 100 ms"
done || exit 1

# the states of a windowed second add up to it (a thread's last second,
# where it exited, to the part it lived)
windowed="FROM thread_time_shares s WHERE s.window_end <= (SELECT max(ts) FROM sched_tasks
		WHERE edge = 'open')
	AND EXISTS (SELECT 1 FROM sched_gaps g WHERE g.start_ts < s.window_end
		AND g.end_ts > s.window_start)
	AND NOT EXISTS (SELECT 1 FROM sched_tasks x WHERE x.tid = s.tid AND x.edge = 'exit'
		AND x.ts >= s.window_start AND x.ts < s.window_end)"
bad=$(q "SELECT group_concat(tid || '@' || window_start || ':' || (running_ns + runnable_ns
		+ io_wait_ns + sleep_ns + other_wait_ns), ' ') AS bad $windowed
	AND abs(running_ns + runnable_ns + io_wait_ns + sleep_ns + other_wait_ns
		- (window_end - window_start)) > (window_end - window_start) / 10")
checked=$(q "SELECT count(*) AS n $windowed")
echo "windowed thread-seconds: $checked, whose states do not add up: ${bad:-none}"
[ "$checked" -ge 2 ] || fail "no windowed second to check"
[ -z "$bad" ] || fail "windowed thread-seconds whose states do not add up to the second: $bad"

# the waits' sums of the main thread ("ping"), scaled, against its own
# count of its voluntary switches (getrusage, pingpong's timeline),
# interpolated at each windowed second's edges
ping=$(q "SELECT tid FROM threads WHERE tid = pid AND comm = 'ping' LIMIT 1")
[ -n "$ping" ] || fail "no ping thread in the capture"
q "SELECT window_start, window_end, sum(calls) FROM thread_metrics WHERE kind = 'waits'
	AND tid = $ping AND scale IS NOT NULL GROUP BY window_start, window_end" > "$TMP/waits"
grep '^trips ' "$TMP/pp.out" > "$TMP/timeline"
python3 - "$TMP/timeline" "$TMP/waits" > "$TMP/waits.cmp" << 'PY'
import sys
pts = [tuple(map(int, l.split()[1:])) for l in open(sys.argv[1])]
def at(t):
    for a, b in zip(pts, pts[1:]):
        if a[0] <= t <= b[0]:
            return a[2] + (b[2] - a[2]) * (t - a[0]) / (b[0] - a[0]) if b[0] > a[0] else a[2]
    return None
for line in open(sys.argv[2]):
    ws, we, calls = map(int, line.strip().split(","))
    a, b = at(ws), at(we)
    if a is not None and b is not None:
        print(ws, int(b - a), calls)
PY
echo "ping's windowed seconds: start, voluntary switches by getrusage, waits in the capture (scaled):"
cat "$TMP/waits.cmp"
[ "$(grep -c . "$TMP/waits.cmp")" -ge 2 ] || fail "fewer than 2 windowed seconds of ping to check"
while read -r ws truth calls; do
	within "$calls" $((truth * 90 / 100)) $((truth * 110 / 100)) ||
		fail "ping: $calls waits in the second from $ws, $truth voluntary switches"
done < "$TMP/waits.cmp"

"$PERFCAP_ANALYZE" report "$TMP/w.perfcap" > "$TMP/report.txt" 2> /dev/null || fail "report failed"
grep "^  sched .*in time windows" "$TMP/report.txt" ||
	fail "the report does not say sched was followed in windows"
grep "Sched followed:" "$TMP/report.txt" || fail "Data quality does not say sched was followed in windows"

# the cpu source: per thread of the command at first, then, the threads
# switching hundreds of thousands of times a second (more than 50 per tick
# of all CPUs), the CPUs' events within half a second: samples
# of both pingpong threads go on after the switch at -F 99 (the one CPU
# they share, busy: about 99 a second)
row=$(q "SELECT (SELECT value FROM meta WHERE key = 'sampling.cpu.scope') AS scope,
	(SELECT value FROM stats WHERE key = 'cpu.scope.cpus_from_ns') -
	(SELECT value FROM meta WHERE key = 'record.start_ns') AS from_ns,
	(SELECT count(*) FROM samples WHERE ts > (SELECT value FROM stats
		WHERE key = 'cpu.scope.cpus_from_ns') AND tid <> $burst_tid) AS after,
	(SELECT max(ts) FROM samples) - (SELECT value FROM stats
		WHERE key = 'cpu.scope.cpus_from_ns') AS span")
echo "cpu: scope, switch to the CPUs (ns from the start), samples after it, ns of them: $row"
IFS=, read -r scope from after span <<EOF
$row
EOF
[ "$scope" = threads ] || fail "the command was not sampled per thread at first ($scope)"
[ -n "$from" ] && [ "$from" -le 500000000 ] ||
	fail "the CPUs' events did not take over within 0.5 s ($from)"
want=$((span * 99 / 1000000000))
within "${after:-0}" $((want * 8 / 10)) $((want * 12 / 10)) ||
	fail "$after samples after the switch over $span ns, want about $want"

"$PERFCAP_RECORD" --sched-rate 0 -o "$TMP/all.perfcap" -- taskset -c "$cpu" "$PINGPONG" 2 \
	> /dev/null 2> "$TMP/all.err" || { cat "$TMP/all.err" >&2; fail "perfcap-record failed"; }
n=$("$PERFCAP_ANALYZE" query --format csv "$TMP/all.perfcap" "SELECT count(*) AS n FROM sched_gaps" |
	tail -n 1 | tr -d '\r"')
[ "$n" = 0 ] || fail "--sched-rate 0: $n sched gaps"
echo "PASS"
