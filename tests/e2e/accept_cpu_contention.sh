#!/bin/bash
# accept_cpu_contention.sh - acceptance scenario 4, CPU contention: three
# hog processes (cpu_contend hog, not recorded) and the recorded victim are
# pinned with sched_setaffinity to the same CPU. The victim never blocks, so
# its wall time minus its CPU time is run-queue wait, which it measures.
# The report's first cause must be cpu_contention with runnable_total
# within 20% of that.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/accept_lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}" "${CPU_CONTEND:?}"
require_bpf
make_tmpdir

cpu=$(( $(nproc) - 1 ))
hogs=()
stop_hogs() { [ ${#hogs[@]} -gt 0 ] && kill "${hogs[@]}" 2> /dev/null; wait; rm -rf "$TMP"; }
trap stop_hogs EXIT
for i in 1 2 3; do
	"$CPU_CONTEND" hog "$cpu" 20 &
	hogs+=($!)
done
sleep 0.3
record "$TMP/cpu.perfcap" "$TMP/cpu.out" -- "$CPU_CONTEND" victim "$cpu" 2
cat "$TMP/cpu.out"
check_report "$TMP/cpu.perfcap" cpu_contention runnable_total ns \
	"$(truth "$TMP/cpu.out" measured_runnable_ns)"
echo "PASS: accept_cpu_contention"
