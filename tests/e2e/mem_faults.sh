#!/bin/bash
# mem_faults.sh - the mem source's sampled page faults: page_touch's
# "toucher" thread writes one byte to each of N fresh anonymous pages; with
# 1 in 10 faults recorded, each weighing 10, the weights of that thread
# must sum to N within 20%. META says the sampling rate; STATS counts every
# fault (sampled or not).
set -u
. "$(dirname "$0")/lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}" "${PAGE_TOUCH:?}" "${LOCK_CHECK:?}"
: "${CAPCHECK:?}"
require_bpf
make_tmpdir

pages=20000
out="$TMP/faults.perfcap"
timeout 120 "$PERFCAP_RECORD" -e mem --strict --fault-sample 10 -o "$out" -- \
	"$PAGE_TOUCH" $pages > "$TMP/workload" 2> "$TMP/record.err" ||
	{ cat "$TMP/record.err"; fail "perfcap-record -e mem failed"; }
cat "$TMP/workload"
tid=$(sed -n 's/^toucher tid=\([0-9]*\).*/\1/p' "$TMP/workload")
[ -n "$tid" ] || fail "workload printed no tid"
[ "$("$CAPCHECK" meta "$out" mem.fault_one_in)" = 10 ] || fail "META mem.fault_one_in is not 10"
"$LOCK_CHECK" faults "$out" > "$TMP/faults" || fail "lock_check failed"
cat "$TMP/faults"
weight=$(awk -v t="$tid" '$1 == t { print $3 }' "$TMP/faults")
weight=${weight:-0}
if "$PERFCAP_ANALYZE" query "$out" "SELECT weight FROM page_faults LIMIT 0" > /dev/null 2>&1; then
	sql=$("$PERFCAP_ANALYZE" query "$out" \
		"SELECT coalesce(sum(weight), 0) FROM page_faults WHERE tid = $tid" | tail -n 1)
	[ "$sql" = "$weight" ] || fail "page_faults in the analyzer: $sql, lock_check: $weight"
	echo "(page_faults in perfcap-analyze query agrees: $sql)"
fi
all=$("$CAPCHECK" stat "$out" mem.faults)
echo "toucher $tid: weights sum to $weight for $pages pages; STATS mem.faults=$all (all threads)"
ratio=$(( 100 * weight / pages ))
within "$ratio" 80 120 || fail "estimated $weight faults, want $pages within 20%"
[ "$all" -ge "$pages" ] || fail "STATS mem.faults $all < $pages"

# --fault-sample is validated: one clear error line
for bad in 0 x 2000000; do
	"$PERFCAP_RECORD" -e mem --fault-sample $bad -a -d 1 -o "$TMP/bad.perfcap" 2> "$TMP/err" &&
		fail "--fault-sample $bad was accepted"
	grep -q "invalid --fault-sample '$bad'" "$TMP/err" || { cat "$TMP/err"; fail "unclear error"; }
done
echo "PASS: mem_faults ($ratio%)"
