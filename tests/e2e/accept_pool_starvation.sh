#!/bin/bash
# accept_pool_starvation.sh - acceptance scenario 5, thread-pool starvation:
# pool_starve server (recorded) has 2 workers; each request waits 20 ms on a
# loopback downstream (pool_starve downstream, not recorded); 8 concurrent
# clients (not recorded) send 80 requests, so requests queue between
# accept() and a worker's pickup; the server measures that queueing. The
# report's first cause must be pool_underprovisioned: recorded with default
# sources (the req source: requests inferred in the kernel) or with system
# calls, its queue_mean within 20% of the measured mean; recorded without
# any request source (-e cpu,sched,block,waits), its utilisation within 20%
# of the workers' own. With requests, the report of the whole capture reads
# the import's per-process sums (request_totals): the same report as the
# scan of every request it replaces, and a changed sum changes the report.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/accept_lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}" "${POOL_STARVE:?}"
require_bpf
make_tmpdir

pids=()
stop_all() { [ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2> /dev/null; wait; rm -rf "$TMP"; }
trap stop_all EXIT
# wait_file FILE: until a port file appears (10 s at most)
wait_file() {
	for _ in $(seq 200); do [ -s "$1" ] && return 0; sleep 0.05; done
	fail "no port in $1"
}
"$POOL_STARVE" downstream "$TMP/down.port" 20 &
pids+=($!)
wait_file "$TMP/down.port"

# run_pool NAME RECORD_ARGS...: the server recorded, the clients not
run_pool() {
	local name=$1 rec
	shift
	rm -f "$TMP/server.port"
	record "$TMP/$name.perfcap" "$TMP/$name.out" "$@" -- \
		"$POOL_STARVE" server "$TMP/server.port" "$(cat "$TMP/down.port")" 2 80 &
	rec=$!
	pids+=($rec)
	wait_file "$TMP/server.port"
	timeout 60 "$POOL_STARVE" client "$(cat "$TMP/server.port")" 8 80 ||
		fail "the clients failed"
	wait $rec || fail "recording the server failed"
	cat "$TMP/$name.out"
}

# same_without_totals NAME: report --json of the capture's database with
# request_totals, and of copies without it (the pool rule scans requests)
# and with its queue sums doubled: the first two are identical but for the
# command line, the third differs.
same_without_totals() {
	local db="$TMP/$1.db"
	"$PERFCAP_ANALYZE" import -f "$TMP/$1.perfcap" -o "$db" > /dev/null || fail "$1: import failed"
	cp "$db" "$TMP/$1.scan.db"
	cp "$db" "$TMP/$1.doubled.db"
	python3 - "$TMP/$1.scan.db" "$TMP/$1.doubled.db" <<-'PY' || fail "$1: editing the copies failed"
		import sqlite3, sys
		s = sqlite3.connect(sys.argv[1]); s.execute("DROP TABLE request_totals"); s.commit()
		d = sqlite3.connect(sys.argv[2])
		assert d.execute("SELECT count(*) FROM request_totals").fetchone()[0] > 0, "no totals"
		d.execute("UPDATE request_totals SET queue_ns = 2 * queue_ns"); d.commit()
	PY
	for v in "" .scan .doubled; do
		"$PERFCAP_ANALYZE" report --json "$TMP/$1$v.db" | grep -v '"analyze_command"' \
			> "$TMP/$1$v.json" || fail "$1: report of $1$v.db failed"
	done
	cmp -s "$TMP/$1.json" "$TMP/$1.scan.json" ||
		{ diff "$TMP/$1.json" "$TMP/$1.scan.json" | head; fail "$1: request_totals changed the report"; }
	! cmp -s "$TMP/$1.json" "$TMP/$1.doubled.json" ||
		fail "$1: doubling request_totals' queue sums did not change the report"
	echo "$1: the report from request_totals is the report from every request"
}

# Default recording: requests from the req source, readiness from their
# data's arrival: the queueing itself.
run_pool pool
check_report "$TMP/pool.perfcap" pool_underprovisioned queue_mean ns \
	"$(truth "$TMP/pool.out" measured_queue_mean_ns)" \
	'check(c["subject"].get("workers") == 2, "subject.workers is 2 (got %s)" % c["subject"].get("workers"))'
same_without_totals pool

# No request source: the pool is seen by its threads (a dispatcher woken by
# clients, two workers never waiting for work); the key number is the
# workers' utilisation.
run_pool pool_threads -e cpu,sched,block,waits
check_report "$TMP/pool_threads.perfcap" pool_underprovisioned utilisation percent \
	"$(truth "$TMP/pool_threads.out" measured_utilisation_pct)" \
	'check(c["subject"].get("workers") == 2, "subject.workers is 2 (got %s)" % c["subject"].get("workers"))'

# With system calls the requests are known: the queueing itself.
run_pool pool_calls -e cpu,sched,syscall,net
check_report "$TMP/pool_calls.perfcap" pool_underprovisioned queue_mean ns \
	"$(truth "$TMP/pool_calls.out" measured_queue_mean_ns)" \
	'check(c["subject"].get("workers") == 2, "subject.workers is 2 (got %s)" % c["subject"].get("workers"))'
same_without_totals pool_calls
echo "PASS: accept_pool_starvation"
