#!/bin/bash
# lock_kernel.sh - the lock source's kernel lock contention: with --strict
# the lock:contention_begin/end tracepoints must attach, and threads that
# map and unmap memory in one address space (mmap_contend: mmap_lock
# contention) must produce LOCK records with kernel stacks, counted in
# STATS. The amount depends on the machine: only its presence is checked.
set -u
. "$(dirname "$0")/lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}" "${MMAP_CONTEND:?}" "${LOCK_CHECK:?}"
: "${CAPCHECK:?}"
require_bpf
make_tmpdir

out="$TMP/klock.perfcap"
timeout 120 "$PERFCAP_RECORD" -e lock --strict --lock-min 0 -o "$out" -- \
	"$MMAP_CONTEND" 4 1000 2> "$TMP/record.err" ||
	{ cat "$TMP/record.err"; fail "perfcap-record -e lock --strict failed"; }
sources=$("$CAPCHECK" meta "$out" sources)
echo "sources: $sources"
case ",$sources," in *,lock,*) ;; *) fail "lock not in META sources" ;; esac
"$CAPCHECK" meta "$out" lock.kernel_contention | grep -q contention_begin ||
	fail "META lock.kernel_contention does not name the tracepoints"
"$CAPCHECK" meta "$out" lock.min_ns | grep -qx 0 || fail "META lock.min_ns is not 0"
summary=$("$LOCK_CHECK" locks "$out") || fail "lock_check failed"
echo "$summary"
set -- $summary
records=$2 total_ns=$4 with_kstack=$8
contentions=$("$CAPCHECK" stat "$out" lock.contentions)
echo "STATS lock.contentions=$contentions"
[ "$records" -gt 0 ] || fail "no LOCK records under mmap_lock contention"
[ "$total_ns" -gt 0 ] || fail "LOCK records without duration"
[ "$with_kstack" -gt 0 ] || fail "no LOCK record has a kernel stack"
[ "$contentions" -ge "$records" ] || fail "STATS count $contentions < records $records"
if "$PERFCAP_ANALYZE" query "$out" "SELECT lock_addr FROM kernel_locks LIMIT 0" \
	> /dev/null 2>&1; then
	sql=$("$PERFCAP_ANALYZE" query "$out" "SELECT count(*) FROM kernel_locks" | tail -n 1)
	[ "$sql" = "$records" ] || fail "kernel_locks in the analyzer: $sql, lock_check: $records"
	echo "(kernel_locks in perfcap-analyze query agrees: $sql)"
fi

# --lock-min is validated: one clear error line
for bad in 5 2h -1us; do
	"$PERFCAP_RECORD" -e lock --lock-min "$bad" -a -d 1 -o "$TMP/bad.perfcap" 2> "$TMP/err" &&
		fail "--lock-min $bad was accepted"
	grep -q "invalid --lock-min" "$TMP/err" || { cat "$TMP/err"; fail "unclear error"; }
done
echo "PASS: lock_kernel ($records contentions recorded)"
