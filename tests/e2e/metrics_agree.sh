#!/bin/sh
# metrics_agree.sh - the kernel's sums agree with the raw records of the
# same calls. One recording with both the syscall source (a SYSCALL record
# per call) and agg (THREAD_METRIC sums) of lock_convoy (futex),
# epoll_waits (poll) and rw_count (file reads and writes); per thread and
# class the sums must match the records:
#   calls: equal within 2 (a call that ends between the two programs'
#          attach or detach is seen by one of them only);
#   ns:    within 2% + 20 us per call (each program takes its own clock
#          readings, a few hundred ns apart).
# Also the waits sums of the same futex waits (blocked time) stay below the
# calls' time, and the time shares of a capture with agg come from agg.
# Requests: one recording of tcp_echo with the socket calls (syscall,net)
# and the req source, imported twice (--requests-from calls / kernel): the
# same requests (pid, fd, connection, number) on the same sockets, with
# equal bytes, reads and writes, and each kernel span inside its calls span (the socket
# layer's read returns after the read's entry, its last write before the
# write's exit), and the pool sweep with the same workers and requests.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/metrics_lib.sh"
require_bpf
make_tmpdir

SETS=futex,epoll_wait,read,write
EVENTS=sched,syscall,waits,agg

# record NAME COMMAND...
record() {
	name=$1
	shift
	"$PERFCAP_RECORD" -e $EVENTS --syscalls $SETS -o "$TMP/$name.perfcap" -- "$@" \
		> "$TMP/$name.out" 2> "$TMP/$name.err" ||
		{ cat "$TMP/$name.err" >&2; fail "perfcap-record of $name failed"; }
	import_capture "$TMP/$name.perfcap"
}

# agree DB TID LABEL RAW_WHERE CLASSES: compares SYSCALL records (syscalls
# table, WHERE RAW_WHERE) with the agg sums of CLASSES for thread TID.
agree() {
	db=$1 tid=$2 label=$3 raw=$4 classes=$5
	rn=$(num "$(q "$db" "SELECT count(*) FROM syscalls WHERE tid = $tid AND $raw")")
	rns=$(num "$(q "$db" "SELECT sum(duration) FROM syscalls WHERE tid = $tid AND $raw")")
	an=$(num "$(q "$db" "SELECT sum(calls) FROM thread_metrics WHERE tid = $tid AND kind = 'calls' AND class IN ($classes)")")
	ans=$(num "$(q "$db" "SELECT sum(total_ns) FROM thread_metrics WHERE tid = $tid AND kind = 'calls' AND class IN ($classes)")")
	echo "$label tid $tid: records $rn calls $rns ns; sums $an calls $ans ns"
	[ "$rn" -gt 0 ] || fail "$label: no records"
	d=$((rn - an))
	[ ${d#-} -le 2 ] || fail "$label: $rn records vs $an summed calls"
	d=$((rns - ans))
	tol=$((rns / 50 + 20000 * rn))
	[ ${d#-} -le $tol ] || fail "$label: $rns ns in records vs $ans summed (tolerance $tol)"
}

# ---- futex: each waiter's futex calls --------------------------------------
record futex "$LOCK_CONVOY" 20
DB="$TMP/futex.perfcap.db"
for tid in $(awk '/^waiter/ { sub("tid=", "", $2); print $2 }' "$TMP/futex.out"); do
	agree "$DB" $tid futex "nr = 202" "'futex_wait','futex_wake'"
	agree "$DB" $tid futex_wait "nr = 202 AND (arg1 & 127) IN (0, 9)" "'futex_wait'"
	calls=$(num "$(q "$DB" "SELECT sum(total_ns) FROM thread_metrics WHERE tid = $tid AND kind = 'calls' AND class = 'futex_wait'")")
	blocked=$(num "$(q "$DB" "SELECT sum(total_ns) FROM thread_metrics WHERE tid = $tid AND kind = 'waits' AND class = 'futex_wait'")")
	echo "  blocked in futex waits $blocked ns of $calls ns in the calls"
	[ "$blocked" -gt 0 ] && [ "$blocked" -le "$calls" ] || fail "waits $blocked vs calls $calls"
	shares=$(num "$(q "$DB" "SELECT sum(futex_wait_ns) FROM thread_time_shares WHERE tid = $tid")")
	[ "$shares" -eq "$calls" ] || fail "thread_time_shares futex_wait_ns $shares != agg sum $calls"
done

# ---- poll ---------------------------------------------------------------------
record poll "$EPOLL_WAITS" 10 20
DB="$TMP/poll.perfcap.db"
tid=$(sed -n 's/^tid=\([0-9]*\) .*/\1/p' "$TMP/poll.out")
agree "$DB" $tid epoll_wait "nr = 232" "'poll'"

# ---- file reads and writes -------------------------------------------------------
touch "$TMP/go"
record rw "$RW_COUNT" 2000 512 "$TMP/go"
DB="$TMP/rw.perfcap.db"
tid=$(sed -n 's/^tid=\([0-9]*\) .*/\1/p' "$TMP/rw.out")
agree "$DB" $tid read "nr = 0" "'vfs_read','net_recv'"
agree "$DB" $tid write "nr = 1" "'vfs_write','net_send'"
bytes=$(num "$(q "$DB" "SELECT sum(bytes) FROM thread_metrics WHERE tid = $tid AND kind = 'calls' AND class = 'vfs_read'")")
echo "read bytes summed: $bytes (at least 2000 x 512 = 1024000)"
[ "$bytes" -ge 1024000 ] || fail "vfs_read bytes $bytes < 1024000"

# ---- requests: socket calls vs the req source ---------------------------------
"$PERFCAP_RECORD" -e syscall,net,req -o "$TMP/req.perfcap" -- "$TCP_ECHO" 0 200 \
	> "$TMP/req.out" 2> "$TMP/req.err" || { cat "$TMP/req.err" >&2; fail "record of tcp_echo"; }
for from in calls kernel; do
	"$PERFCAP_ANALYZE" import --requests-from $from -o "$TMP/req.$from.db" "$TMP/req.perfcap" \
		> /dev/null || fail "import --requests-from $from"
done
cmp_sql="ATTACH '$TMP/req.kernel.db' AS k;
	SELECT count(*), sum(c.bytes_in = r.bytes_in AND c.bytes_out = r.bytes_out AND
	  c.reads = r.reads AND c.writes = r.writes AND c.cookie = r.cookie),
	  sum(c.start_ts <= r.start_ts AND r.end_ts <= c.end_ts)
	FROM main.requests c JOIN k.requests r USING (pid, fd, conn, request)"
calls=$(sqlite3 "$TMP/req.calls.db" "SELECT count(*) FROM requests")
kernel=$(sqlite3 "$TMP/req.kernel.db" "SELECT count(*) FROM requests")
same=$(sqlite3 "$TMP/req.calls.db" "$cmp_sql")
echo "requests: $calls from calls, $kernel from the kernel; matched, equal counts, kernel span inside: $same"
[ "$calls" -ge 419 ] && [ "$calls" = "$kernel" ] || fail "request counts differ: $calls vs $kernel"
[ "$same" = "$calls|$calls|$calls" ] || fail "requests differ: $same of $calls"
# the pool sweep: the same workers and requests (busy time differs: the
# calls' spans include a blocking read's wait for the client)
pool="SELECT pid, max(workers), sum(requests) FROM pool_utilisation GROUP BY pid ORDER BY pid"
pc=$(sqlite3 "$TMP/req.calls.db" "$pool" | tr '\n' ' ')
pk=$(sqlite3 "$TMP/req.kernel.db" "$pool" | tr '\n' ' ')
echo "pool_utilisation (pid|workers|requests): calls $pc; kernel $pk"
[ -n "$pc" ] && [ "$pc" = "$pk" ] || fail "pool_utilisation differs: calls '$pc', kernel '$pk'"
echo "PASS"
