#!/bin/bash
# mem_dlopen.sh - code mapped at run time gets MAP records: dlopen_late
# loads late_lib.so after 300 ms, runs its late_lib_spin() and closes it
# again before it exits. With -e mem alone (no CPU samples to notice the
# library) the capture must still have a MAP record for late_lib.so: the
# mem source saw the PROT_EXEC mapping and made the recorder re-read the
# maps. With -e cpu,mem, late_lib_spin must be named in the profile.
set -u
. "$(dirname "$0")/lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}" "${DLOPEN_LATE:?}" "${LATE_LIB:?}"
: "${LOCK_CHECK:?}" "${CAPCHECK:?}"
require_bpf
make_tmpdir

out="$TMP/mem.perfcap"
timeout 60 "$PERFCAP_RECORD" -e mem --strict -o "$out" -- "$DLOPEN_LATE" "$LATE_LIB" 200 300 \
	2> "$TMP/record.err" || { cat "$TMP/record.err"; fail "perfcap-record -e mem failed"; }
"$LOCK_CHECK" maps "$out" late_lib || fail "no MAP record for late_lib.so with -e mem"
rereads=$("$CAPCHECK" stat "$out" mem.maps_rereads)
echo "STATS mem.maps_rereads=$rereads"
[ "$rereads" -gt 0 ] || fail "no maps re-read on exec mappings"

out="$TMP/cpumem.perfcap"
timeout 60 "$PERFCAP_RECORD" -e cpu,mem -F 999 -o "$out" -- "$DLOPEN_LATE" "$LATE_LIB" 500 300 \
	2> "$TMP/record.err" || { cat "$TMP/record.err"; fail "perfcap-record -e cpu,mem failed"; }
"$LOCK_CHECK" maps "$out" late_lib > /dev/null || fail "no MAP record for late_lib.so"
"$PERFCAP_ANALYZE" report --folded "$out" > "$TMP/folded" 2> "$TMP/analyze.err" ||
	{ cat "$TMP/analyze.err"; fail "perfcap-analyze report --folded failed"; }
grep -q "late_lib_spin" "$TMP/folded" || { head "$TMP/folded"; fail "late_lib_spin not resolved"; }
echo "samples in late_lib_spin: $(grep late_lib_spin "$TMP/folded" | awk '{ s += $NF } END { print s }')"
echo "PASS: mem_dlopen"
