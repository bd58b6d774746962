#!/bin/bash
# accept_disk_stall.sh - acceptance scenario 3, a disk stall: two storm
# processes (disk_stall storm: 8 MiB O_DIRECT writes + fsync, not recorded)
# flood the disk while the recorded victim makes 80 small fsync'd writes
# and measures the time it was blocked in them: off CPU, less the
# run-queue wait the kernel counted for it (schedstat). The victim runs
# SCHED_FIFO (chrt) to keep that wait small on this shared 2-CPU machine;
# on a slower host it was still 89 of 342 ms, which failed the comparison
# when the truth included it. The report's first cause must be disk_io
# with io_wait_total within 20% of the measured time, widened by the wakeup
# span the measurement cannot place (below).
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/accept_lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}" "${DISK_STALL:?}"
require_bpf
make_tmpdir
command -v chrt > /dev/null || fail "chrt (util-linux) is needed"

storms=()
stop_storms() { [ ${#storms[@]} -gt 0 ] && kill "${storms[@]}" 2> /dev/null; wait; rm -rf "$TMP"; }
trap stop_storms EXIT
for i in 1 2; do
	"$DISK_STALL" storm "$TMP/storm$i.dat" 25 > /dev/null &
	storms+=($!)
done
sleep 0.5
record "$TMP/disk.perfcap" "$TMP/disk.out" -- \
	chrt -f 10 "$DISK_STALL" victim "$TMP/victim.dat" 80
cat "$TMP/disk.out"
# The victim's truth also counts, as I/O wait, the time from its wakeup
# (the I/O done) until the kernel queued it on its CPU: a remote wakeup
# goes by IPI, and on a virtual machine the idle target vCPU may wait for
# the hypervisor. The kernel's run-queue delay (schedstat) starts at that
# enqueue; perfcap counts the span as runnable, from sched_waking. So the
# truth is uncertain by perfcap's runnable time beyond the kernel's, and
# the tolerance widens by that much (it was 72 ms of 481 in a failed run:
# io 384 + runnable 83 ms against a measured 481 and schedstat's 11).
runnable=$("$PERFCAP_ANALYZE" query --format csv "$TMP/disk.perfcap" \
	"SELECT coalesce(sum(runnable_ns), 0) FROM thread_time_shares WHERE pid IN
	 (SELECT pid FROM processes WHERE comm = 'disk_stall')" | sed -n 2p | tr -d '\r"')
ACCEPT_TOL=$(python3 -c "import sys; t, q, r = (float(x) for x in sys.argv[1:]); \
print(round(20 + 100 * max(0.0, r - max(q, 0.0)) / t, 1))" \
	"$(truth "$TMP/disk.out" measured_io_wait_ns)" "$(truth "$TMP/disk.out" runq_wait_ns)" \
	"${runnable:-0}")
echo "runnable per perfcap $runnable ns: tolerance $ACCEPT_TOL%"
ACCEPT_TOL=$ACCEPT_TOL check_report "$TMP/disk.perfcap" disk_io io_wait_total ns \
	"$(truth "$TMP/disk.out" measured_io_wait_ns)" \
	'check(bool(c["subject"].get("device")), "subject names the device (%s)" % c["subject"].get("device"))'
echo "PASS: accept_disk_stall"
