#!/bin/bash
# lock_mutex.sh - the lock source's user mutex waits end to end: 4 threads
# of lock_convoy fight over one pthread mutex, each holding it 5 ms, and
# time their own pthread_mutex_lock calls. With --mutex-uprobes the capture
# must name that mutex's address with the 4 waiting threads, and the sum of
# its MUTEX waits must be within 20% of what the workload measured; both
# for a command (probes placed before its exec) and for a running process
# (-p: probes placed through its own /proc/PID/maps). META says where the
# probes went and what they cost; --mutex-uprobes is refused with -a.
# The waits are read with perfcap-analyze query (table user_mutexes) when
# the analyzer has it, and always with lock_check (format library): both
# must agree.
set -u
. "$(dirname "$0")/lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}" "${LOCK_CONVOY:?}" "${LOCK_CHECK:?}"
: "${CAPCHECK:?}"
require_bpf
make_tmpdir

# mutex_rows CAPTURE: "0xADDR tid waits wait_ns" per mutex and thread, sorted
mutex_rows() {
	"$LOCK_CHECK" mutexes "$1" | sort > "$TMP/rows.check" || fail "lock_check failed"
	if "$PERFCAP_ANALYZE" query "$1" "SELECT addr FROM user_mutexes LIMIT 0" \
		> /dev/null 2>&1; then
		"$PERFCAP_ANALYZE" query "$1" "SELECT printf('0x%x', addr), tid, count(*),
			sum(duration) FROM user_mutexes GROUP BY addr, tid" |
			tail -n +2 | tr '\t' ' ' | sort > "$TMP/rows.sql" ||
			fail "perfcap-analyze query failed"
		cmp -s "$TMP/rows.sql" "$TMP/rows.check" ||
			{ diff "$TMP/rows.sql" "$TMP/rows.check"; fail "analyzer and lock_check differ"; }
		echo "(user_mutexes in perfcap-analyze query agrees with lock_check)" >&2
	fi
	cat "$TMP/rows.check"
}

# check_convoy CAPTURE WORKLOAD_OUTPUT
check_convoy() {
	local out=$1 work=$2 probes addr want_ns tids got_ns ratio
	cat "$work"
	probes=$("$CAPCHECK" meta "$out" lock.mutex_uprobes) || fail "no META lock.mutex_uprobes"
	echo "uprobes: $probes; probe cost $("$CAPCHECK" meta "$out" lock.mutex_probe_cost_ns) ns"
	case "$probes" in *"(pthread_mutex_lock)"*|*"(__pthread_mutex_lock)"*) ;;
		*) fail "META lock.mutex_uprobes names no probed object: $probes" ;; esac
	addr=$(sed -n 's/^mutex=//p' "$work")
	want_ns=$(sed -n 's/^total_wait_ns=//p' "$work")
	[ -n "$addr" ] && [ -n "$want_ns" ] || fail "workload printed no mutex or total"
	mutex_rows "$out" > "$TMP/mutexes"
	cat "$TMP/mutexes"
	tids=$(awk -v a="$addr" '$1 == a' "$TMP/mutexes" | wc -l)
	got_ns=$(awk -v a="$addr" '$1 == a { s += $4 } END { print s + 0 }' "$TMP/mutexes")
	echo "mutex $addr: $tids waiting threads, $got_ns ns recorded, $want_ns ns measured"
	[ "$tids" -eq 4 ] || fail "want 4 waiting threads on $addr, got $tids"
	for tid in $(sed -n 's/^waiter tid=\([0-9]*\).*/\1/p' "$work"); do
		awk -v a="$addr" -v t="$tid" '$1 == a && $2 == t { f = 1 } END { exit !f }' \
			"$TMP/mutexes" || fail "thread $tid has no MUTEX record on $addr"
	done
	ratio=$(( 100 * got_ns / want_ns ))
	echo "recorded/measured = $ratio%"
	within "$ratio" 80 120 || fail "recorded wait $got_ns ns is not within 20% of $want_ns ns"
}

echo "--- a command"
timeout 120 "$PERFCAP_RECORD" -e lock --mutex-uprobes --strict -o "$TMP/cmd.perfcap" -- \
	"$LOCK_CONVOY" 20 > "$TMP/cmd.out" 2> "$TMP/record.err" ||
	{ cat "$TMP/record.err"; fail "perfcap-record failed"; }
check_convoy "$TMP/cmd.perfcap" "$TMP/cmd.out"

echo "--- a running process (-p)"
"$LOCK_CONVOY" 20 1500 > "$TMP/pid.out" &
pid=$!
timeout 120 "$PERFCAP_RECORD" -e lock --mutex-uprobes --strict -o "$TMP/pid.perfcap" -p $pid \
	2> "$TMP/record.err" || { cat "$TMP/record.err"; fail "perfcap-record -p failed"; }
wait $pid || fail "lock_convoy failed"
check_convoy "$TMP/pid.perfcap" "$TMP/pid.out"

# uprobes go on a target's own libraries: never system-wide
if "$PERFCAP_RECORD" -e lock --mutex-uprobes -a -d 1 -o "$TMP/all.perfcap" 2> "$TMP/err"; then
	fail "--mutex-uprobes with -a was accepted"
fi
grep -q "needs -p PID or a command" "$TMP/err" || { cat "$TMP/err"; fail "unclear -a error"; }
echo "PASS: lock_mutex"
