#!/bin/sh
# syscall_rw.sh - the syscall source on a known load: exactly N reads of K
# bytes from /dev/zero and N writes to /dev/null (tests/workloads/rw_count)
# must show N read and N write records on the right thread with fd, byte
# count and ret = K, and STATS calls per syscall equal to N. With
# --syscall-min 1ms nearly nothing is emitted, yet syscall.calls.read is
# still exactly N.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/syscall_lib.sh"
require_bpf
make_tmpdir

N=2000
K=4096

# matching DUMP NR FD: records of the workload's thread with that fd,
# count K and ret K.
matching() {
	awk -v t="$(field tid)" -v nr="$2" -v fd="$3" -v k=$K \
		'$1 == "syscall" && $2 == t && $3 == nr && $4 == fd && $6 == k && $7 == k' "$1" | wc -l
}

# --- every call emitted --------------------------------------------------
C="$TMP/all.perfcap"
record_rw_count "$C" $N $K -e syscall
D="$C.dump"
reads=$(matching "$D" 0 "$(field zero_fd)")
writes=$(matching "$D" 1 "$(field null_fd)")
echo "reads $reads writes $writes (expected $N each)"
[ "$reads" -eq $N ] || fail "expected $N read records, got $reads"
[ "$writes" -eq $N ] || fail "expected $N write records, got $writes"
[ "$(kv "$C" stat syscall.calls.read)" = $N ] ||
	fail "syscall.calls.read = $(kv "$C" stat syscall.calls.read), expected $N"
[ "$(kv "$C" stat syscall.calls.write)" = $N ] ||
	fail "syscall.calls.write = $(kv "$C" stat syscall.calls.write), expected $N"
records=$(grep -c '^syscall ' "$D")
[ "$(kv "$C" stat syscall.emitted)" = "$records" ] ||
	fail "syscall.emitted = $(kv "$C" stat syscall.emitted) but $records records"
kv "$C" meta syscall.set | grep -q '^read,write,' || fail "META syscall.set: $(kv "$C" meta syscall.set)"
kv "$C" meta sources | grep -q syscall || fail "META sources: $(kv "$C" meta sources)"

# --- only calls of 1 ms or more emitted: totals stay true -----------------
C="$TMP/min.perfcap"
record_rw_count "$C" $N $K -e syscall --syscall-min 1ms
D="$C.dump"
reads=$(matching "$D" 0 "$(field zero_fd)")
filtered=$(kv "$C" stat syscall.filtered.min_duration)
echo "with --syscall-min 1ms: $reads read records, $filtered filtered"
[ "$reads" -le $((N / 100)) ] || fail "--syscall-min 1ms still emitted $reads reads"
[ "$(kv "$C" stat syscall.calls.read)" = $N ] ||
	fail "syscall.calls.read = $(kv "$C" stat syscall.calls.read) with --syscall-min, expected $N"
[ "$filtered" -ge $((2 * N - N / 50)) ] || fail "syscall.filtered.min_duration = $filtered"
[ "$(kv "$C" meta syscall.min_ns)" = 1000000 ] || fail "META syscall.min_ns: $(kv "$C" meta syscall.min_ns)"
echo "PASS"
