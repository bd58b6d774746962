#!/bin/bash
# accept_lock_convoy.sh - acceptance scenario 2, a lock convoy: 8 workers of
# lock_storm take one pthread mutex, each holding it 2 ms, and time their own
# pthread_mutex_lock calls. The report's first cause must be lock_contention
# on that mutex, with wait_total within 20% of the measured total wait.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/accept_lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}" "${LOCK_STORM:?}"
require_bpf
make_tmpdir

record "$TMP/lock.perfcap" "$TMP/lock.out" -- "$LOCK_STORM" 40 8 2000
cat "$TMP/lock.out"
addr=$(sed -n 's/^mutex=//p' "$TMP/lock.out")
check_report "$TMP/lock.perfcap" lock_contention wait_total ns \
	"$(truth "$TMP/lock.out" measured_wait_ns)" \
	"check(int(str(c['subject'].get('address')), 16) == int('$addr', 16), 'subject.address is the mutex $addr (got %s)' % c['subject'].get('address'))
check(c['subject'].get('waiters') == 8, 'subject.waiters is 8 (got %s)' % c['subject'].get('waiters'))"
echo "PASS: accept_lock_convoy"
