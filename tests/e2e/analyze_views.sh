#!/bin/bash
# analyze_views.sh - the analyzer's correlations against real recordings of
# workloads with known answers (real eBPF, then perfcap-analyze query):
#
#  1. sleeper: a thread sleeps 20 x 50 ms. offcpu_intervals: ~1 s of
#     wait class 'sleep' for it (+-15%); thread_time_shares.sleep_ns agrees.
#  2. epoll_waits: 10 epoll_wait calls of 20 ms. syscall_intervals: 10 calls,
#     each at least the timeout and inside the interval the workload measured
#     around it; thread_time_shares.poll_wait_ns between 90% of the timeouts
#     and the traced calls' total.
#  3. cpu_hogs: two threads pinned on one CPU for 2 s. runq_latency /
#     thread_time_shares: each thread runnable 30-70% of its time.
#  4. lock_convoy: 4 threads, one mutex held 5 ms per round. futex_contention:
#     the top address's wait_ns within 25% of what the workload measured.
#  5. fsync_writes: 40 fsync'd 4 KiB writes. syscall_intervals: exactly 40
#     fsync calls; block_io_by_thread: >= 40 write requests by the writer;
#     thread_states: >= 40 'io' waits of class block_io, their time inside
#     the fsync time (how long the disk takes varies too much on a VM).
#  6. tcp_echo: 100 requests on one keep-alive connection, then 20 short
#     connections (which reuse its fd). request_spans: 21 connections; exactly
#     100 requests on the keep-alive one, each 1 read and 1 write, service
#     time below 100 ms.
set -u
. "$(dirname "$0")/lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}" "${SLEEPER:?}" "${EPOLL_WAITS:?}"
: "${CPU_HOGS:?}" "${LOCK_CONVOY:?}" "${FSYNC_WRITES:?}" "${TCP_ECHO:?}"
require_bpf
make_tmpdir

record() {   # record NAME SOURCES CMD...
	local name=$1 sources=$2; shift 2
	"$PERFCAP_RECORD" -e "$sources" -o "$TMP/$name.perfcap" -- "$@" \
		> "$TMP/$name.out" 2> "$TMP/$name.err" ||
		{ cat "$TMP/$name.err" >&2; fail "$name: perfcap-record failed"; }
	"$PERFCAP_ANALYZE" import -f "$TMP/$name.perfcap" -o "$TMP/$name.db" > /dev/null ||
		fail "$name: import failed"
}
q() {        # q NAME SQL -> the first column of the first row
	"$PERFCAP_ANALYZE" query --format csv "$TMP/$1.db" "$2" | sed -n 2p | tr -d '\r"'
}
# near VALUE WANT PERCENT: VALUE within PERCENT% of WANT
near() {
	awk -v v="${1:-0}" -v w="$2" -v p="$3" 'BEGIN { d = v - w; if (d < 0) d = -d;
		exit !(w > 0 && d <= w * p / 100) }'
}
ms() { awk -v v="${1:-0}" 'BEGIN { printf "%.1f ms", v / 1e6 }'; }

# 1. sleep
record sleep cpu,sched,syscall "$SLEEPER" 20
tid=$(q sleep "SELECT tid FROM threads WHERE comm = 'napper' LIMIT 1")
[ -n "$tid" ] || fail "sleep: no napper thread"
slept=$(q sleep "SELECT sum(duration) FROM offcpu_intervals WHERE tid = $tid AND wait_class = 'sleep'")
share=$(q sleep "SELECT sum(sleep_ns) FROM thread_time_shares WHERE tid = $tid")
echo "1. napper: offcpu 'sleep' $(ms "$slept"), thread_time_shares sleep $(ms "$share") (want 1000 ms)"
near "$slept" 1000000000 15 || { "$PERFCAP_ANALYZE" query "$TMP/sleep.db" "SELECT * FROM offcpu_intervals WHERE tid = $tid" >&2
	fail "sleep: offcpu_intervals says $(ms "$slept")"; }
near "$share" 1000000000 15 || fail "sleep: thread_time_shares says $(ms "$share")"

# 2. poll: the timeout is a minimum (a busy host wakes the thread later),
# so each call is checked against the duration the workload measured
# around it: at least the timeout, and inside the measured interval.
record poll cpu,sched,mux "$EPOLL_WAITS" 10 20
tid=$(sed -n 's/^tid=\([0-9]*\).*/\1/p' "$TMP/poll.out")
calls=$(q poll "SELECT count(*) FROM syscall_intervals WHERE tid = $tid AND name = 'epoll_wait'")
"$PERFCAP_ANALYZE" query --format csv "$TMP/poll.db" "SELECT duration FROM syscall_intervals
	WHERE tid = $tid AND name = 'epoll_wait' ORDER BY start_ts" | sed 1d | tr -d '\r"' > "$TMP/traced"
awk '/^call / { print $3 }' "$TMP/poll.out" > "$TMP/measured"
bad=$(paste "$TMP/traced" "$TMP/measured" | awk '$1 < 19000000 || $1 > $2 + 50000' | wc -l)
measured=$(awk '{ s += $1 } END { print s + 0 }' "$TMP/measured")
traced=$(awk '{ s += $1 } END { print s + 0 }' "$TMP/traced")
polled=$(q poll "SELECT sum(poll_wait_ns) FROM thread_time_shares WHERE tid = $tid")
echo "2. epoll_wait: $calls calls, $bad not within [20 ms timeout, measured]; traced $(ms "$traced"), measured $(ms "$measured"), poll wait $(ms "$polled")"
[ "$calls" = 10 ] || fail "poll: $calls epoll_wait intervals, want 10"
[ "$(wc -l < "$TMP/measured")" = 10 ] || fail "poll: the workload measured $(wc -l < "$TMP/measured") calls"
[ "$bad" = 0 ] || { paste "$TMP/traced" "$TMP/measured" >&2; fail "poll: $bad calls shorter than the timeout or longer than measured"; }
# the thread sleeps at least the timeout in each call, and only inside them
within "${polled:-0}" 180000000 "$traced" ||
	fail "poll: thread_time_shares poll_wait_ns $(ms "$polled"), want 180 ms to $(ms "$traced")"

# 3. run queue
record runq cpu,sched "$CPU_HOGS" 2 0
for name in hog1 hog2; do
	tid=$(q runq "SELECT tid FROM threads WHERE comm = '$name' LIMIT 1")
	[ -n "$tid" ] || fail "runq: no thread $name"
	pct=$(q runq "SELECT CAST(100 * sum(runnable_ns) / (sum(runnable_ns) + sum(running_ns)) AS INTEGER)
		FROM thread_time_shares WHERE tid = $tid")
	waits=$(q runq "SELECT count(*) FROM runq_latency WHERE tid = $tid")
	echo "3. $name: runnable ${pct}% of its time, $waits run-queue waits"
	within "${pct:-0}" 30 70 || fail "runq: $name runnable ${pct}%, want 30-70%"
	[ "${waits:-0}" -ge 10 ] || fail "runq: $name has $waits run-queue waits"
done

# 4. futex contention
record lock cpu,sched,lock "$LOCK_CONVOY" 20
want=$(sed -n 's/^total_wait_ns=//p' "$TMP/lock.out")
waited=$(q lock "SELECT wait_ns FROM futex_contention ORDER BY wait_ns DESC LIMIT 1")
waiters=$(q lock "SELECT waiters FROM futex_contention ORDER BY wait_ns DESC LIMIT 1")
echo "4. lock: futex_contention top address $(ms "$waited") by $waiters waiters (workload measured $(ms "$want"))"
[ -n "$want" ] || fail "lock: workload printed no total_wait_ns"
near "$waited" "$want" 25 || fail "lock: futex wait $(ms "$waited") vs measured $(ms "$want")"
[ "${waiters:-0}" -ge 3 ] || fail "lock: $waiters waiters, want >= 3"

# 5. block I/O
record block cpu,sched,syscall,block "$FSYNC_WRITES" "$TMP/fsync.data" 40
read -r _ wpid wtid < <(grep '^writer ' "$TMP/block.out")
fsyncs=$(q block "SELECT count(*) FROM syscall_intervals WHERE tid = $wtid AND name = 'fsync'")
fsync_ns=$(q block "SELECT sum(duration) FROM syscall_intervals WHERE tid = $wtid AND name = 'fsync'")
writes=$(q block "SELECT sum(writes) FROM block_io_by_thread WHERE tid = $wtid")
io=$(q block "SELECT count(*) || ' ' || sum(duration) AS r FROM thread_states
	WHERE tid = $wtid AND state = 'io' AND wait_class = 'block_io'")
read -r io_waits io_ns <<< "$io"
echo "5. fsync: $fsyncs fsync calls ($(ms "$fsync_ns")), $writes write requests, $io_waits block_io waits ($(ms "$io_ns"))"
[ "$fsyncs" = 40 ] || fail "block: $fsyncs fsync intervals, want 40"
[ "${writes:-0}" -ge 40 ] || fail "block: $writes write requests by the writer, want >= 40"
# each fsync waits for its write at least once, and the thread waits on
# the disk only inside its fsync calls
[ "${io_waits:-0}" -ge 40 ] || fail "block: $io_waits block_io waits, want >= 40"
[ "${io_ns:-0}" -gt 0 ] && [ "$io_ns" -le "$fsync_ns" ] ||
	fail "block: block_io wait $(ms "$io_ns") not within the fsync time $(ms "$fsync_ns")"

# 6. requests
record echo cpu,sched,syscall,net "$TCP_ECHO" 0 100
server=$(sed -n 's/^server //p' "$TMP/echo.out")
top=$(q echo "SELECT fd || ' ' || count(*) || ' ' || sum(reads = 1 AND writes = 1) || ' ' ||
	max(service_ns) AS r FROM request_spans WHERE pid = $server GROUP BY fd, conn_ts ORDER BY count(*) DESC LIMIT 1")
conns=$(q echo "SELECT count(DISTINCT conn_ts) FROM request_spans WHERE pid = $server")
read -r fd n simple worst <<< "$top"
echo "6. requests: $conns connections; the busiest (fd $fd): $n requests, $simple of 1 read + 1 write, slowest $(ms "$worst")"
[ "$n" = 100 ] || fail "requests: $n on the keep-alive connection, want 100"
# the 20 short connections reuse the fd: one request each, 21 in all
[ "$conns" = 21 ] || fail "requests: $conns connections, want 21 (fd reuse)"
[ "$simple" = 100 ] || fail "requests: $simple of 100 are 1 read + 1 write"
[ "${worst:-0}" -lt 100000000 ] || fail "requests: slowest service $(ms "$worst")"
echo "PASS"
