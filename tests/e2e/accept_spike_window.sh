#!/bin/bash
# accept_spike_window.sh - acceptance scenario 6, a latency spike window
# (book 12.1): spike_window serves a request every 10 ms (1 ms of compute,
# a 4 KiB fsync'd write); for 1.5 s after the first 2 s two children
# "io_storm" flood the disk, so only the requests' I/O gets slower. Recorded with
# --comm spike_window (the storm stays out of scope) and SCHED_FIFO (its
# off-CPU time in the writes is blocked time). The report's first cause
# must be disk_io with io_wait_total within 20% of the measured time, and
# diagnosis.spike must say "io", with the spike window overlapping the
# storm's.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/accept_lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}" "${SPIKE_WINDOW:?}"
require_bpf
make_tmpdir
command -v chrt > /dev/null || fail "chrt (util-linux) is needed"

record "$TMP/spike.perfcap" "$TMP/spike.out" \
	--comm spike_window -- chrt -f 10 "$SPIKE_WINDOW" "$TMP/work.dat" "$TMP/storm.dat"
cat "$TMP/spike.out"
s0=$(truth "$TMP/spike.out" spike_start_ns)
s1=$(truth "$TMP/spike.out" spike_end_ns)
check_report "$TMP/spike.perfcap" disk_io io_wait_total ns \
	"$(truth "$TMP/spike.out" measured_io_wait_ns)" \
	"sp = d.get('spike') or {}
print('spike:', sp)
check(sp.get('verdict') == 'io', 'spike verdict is io (got %s)' % sp.get('verdict'))
check((sp.get('window_start_ns') or 0) < $s1 and (sp.get('window_end_ns') or 0) > $s0,
      'spike window overlaps the storm ($s0..$s1)')"
echo "PASS: accept_spike_window"
