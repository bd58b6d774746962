#!/bin/bash
# wakeup_graph.sh - who wakes whom, end to end (issue 10): lock_storm's 8
# workers queue on one pthread mutex, each holding it 2 ms in a nanosleep,
# recorded with the default sources (real eBPF). The wakeup_graph view must
# show thread -> thread futex edges inside the lock_storm process whose
# total is the futex off-CPU total of its workers (the same waits) and
# within 20% of the wait the workers measured themselves, and one timer
# edge per worker for its nanosleeps (a wait per round). The report's
# "wakeup_graph" must follow the futex edges' chains to the holder's sleep
# under the lock: root timer, wait class sleep, for most of their time.
set -u
. "$(dirname "$0")/lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}" "${LOCK_STORM:?}"
require_bpf
make_tmpdir

rounds=40
workers=8
timeout 60 "$PERFCAP_RECORD" --strict -o "$TMP/storm.perfcap" -- "$LOCK_STORM" $rounds $workers 2000 \
	> "$TMP/storm.out" 2> "$TMP/record.err" || { cat "$TMP/record.err"; fail "perfcap-record failed"; }
cat "$TMP/storm.out"
measured=$(sed -n 's/^measured_wait_ns=//p' "$TMP/storm.out")
[ -n "$measured" ] || fail "lock_storm printed no measured_wait_ns"
"$PERFCAP_ANALYZE" import "$TMP/storm.perfcap" -o "$TMP/storm.db" > /dev/null 2>&1 ||
	fail "import failed"
q() { "$PERFCAP_ANALYZE" query "$TMP/storm.db" "$1" | tail -n +2; }
pid=$(q "SELECT pid FROM processes WHERE comm = 'lock_storm' LIMIT 1")
[ -n "$pid" ] || fail "no lock_storm process in the capture"
q "SELECT * FROM wakeup_graph WHERE pid = $pid" | head -30

# futex edges between threads of lock_storm: the waits of the workers
# (the main thread's pthread_join waits on a futex too: left out)
edges=$(q "SELECT count(*) FROM wakeup_graph WHERE pid = $pid AND tid <> pid
	AND wait_class = 'futex' AND waker_kind = 'thread' AND waker_pid = $pid")
graph_ns=$(q "SELECT sum(total_ns) FROM wakeup_graph WHERE pid = $pid AND tid <> pid
	AND wait_class = 'futex' AND waker_kind = 'thread'")
offcpu_ns=$(q "SELECT sum(duration) FROM offcpu WHERE pid = $pid AND tid <> pid AND state <> 0
	AND wait_class = 'futex'")
echo "futex thread edges: $edges; $graph_ns ns of $offcpu_ns ns futex off-CPU; measured $measured ns"
[ "${edges:-0}" -ge $workers ] || fail "want at least $workers thread->thread futex edges, got $edges"
[ -n "$graph_ns" ] && [ -n "$offcpu_ns" ] && [ "$offcpu_ns" -gt 0 ] || fail "no futex waits"
ratio=$(( 100 * graph_ns / offcpu_ns ))
within "$ratio" 95 100 || fail "thread edges hold $ratio% of the futex off-CPU time (want >= 95%)"
ratio=$(( 100 * graph_ns / measured ))
within "$ratio" 80 120 || fail "futex edges $graph_ns ns not within 20% of the measured $measured ns"

# one timer edge per worker: its nanosleeps under the lock, one per round
timers=$(q "SELECT count(*) FROM wakeup_graph WHERE pid = $pid AND wait_class = 'sleep'
	AND waker_kind = 'timer' AND waker_tid = 0 AND waits >= $rounds * 8 / 10")
echo "timer edges with >= 80% of the rounds: $timers"
[ "$timers" -eq $workers ] || fail "want $workers timer edges for the nanosleeps, got $timers"

# per window: the windows' edges add up to the whole graph's
sum_windows=$(q "SELECT sum(total_ns) FROM wakeup_graph_windows WHERE pid = $pid")
sum_graph=$(q "SELECT sum(total_ns) FROM wakeup_graph WHERE pid = $pid")
[ "$sum_windows" = "$sum_graph" ] || fail "windows sum to $sum_windows ns, the graph to $sum_graph"

# the report's chains: a waiter waited for the holder, who slept (a timer)
"$PERFCAP_ANALYZE" report --json "$TMP/storm.db" > "$TMP/report.json" || fail "report --json failed"
"$PERFCAP_ANALYZE" report "$TMP/storm.db" | sed -n '/^Wakeup graph/,/^$/p'
python3 - "$TMP/report.json" "$pid" <<'PY' || fail "report wakeup_graph checks"
import json, sys
r = json.load(open(sys.argv[1]))
pid = int(sys.argv[2])
g = r["wakeup_graph"]
futex = [e for e in g["edges"] if e["pid"] == pid and e["tid"] != pid
         and e["wait_class"] == "futex" and e["waker_kind"] == "thread"]
assert len(futex) >= 4, "want the workers' futex edges among the top edges: %s" % g["edges"]
total = sum(e["total_ns"] for e in futex)
timer = sum(x["ns"] for e in futex for x in e["roots"]
            if x["kind"] == "timer" and x["wait_class"] == "sleep" and x["pid"] == pid)
print("futex edges: %d ns, chains ending at a holder's sleep: %d ns" % (total, timer))
assert timer >= 0.8 * total, "want >= 80% of the futex edges' time rooted at the holder's sleep"
assert all(e["hops"] >= e["waits"] * 0.8 for e in futex), "each futex wait is one hop from its root"
PY
echo "PASS: wakeup_graph"
