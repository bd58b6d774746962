#!/bin/bash
# accept_cpu_hot.sh - acceptance scenario 1, a CPU hot function: hot_function
# spends ~75% of its CPU time in hot_spin(), measured with per-thread CPU
# clocks. The report's first cause must be cpu_bound naming hot_spin, with
# self_share within 20% of the measured share. It runs at nice -15: the
# machine the suite runs on is small and shared, and other load would add
# real run-queue wait (CPU contention, a different cause) to a thread that
# should only be compute-bound.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/accept_lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}" "${HOT_FUNCTION:?}"
require_bpf
make_tmpdir

record "$TMP/hot.perfcap" "$TMP/hot.out" -F 499 -- nice -n -15 "$HOT_FUNCTION" 2
cat "$TMP/hot.out"
check_report "$TMP/hot.perfcap" cpu_bound self_share percent \
	"$(truth "$TMP/hot.out" measured_self_share_pct)" \
	'check(c["subject"].get("function") == "hot_spin", "subject.function is hot_spin (got %s)" % c["subject"].get("function"))'
echo "PASS: accept_cpu_hot"
