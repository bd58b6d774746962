#!/bin/bash
# jit_perfmap.sh - end to end with real eBPF: JIT frames are named through
# the process's /tmp/perf-PID.map. jit_spin runs a spin loop copied into
# anonymous executable memory and describes it in its perf map (plus one
# malformed line). The recorder embeds the covering entry in the capture;
# after the map file is deleted, the analyzer still names the frame
# jit_spin_loop (frames.source 'perfmap') for most of the workload's samples.
set -u
. "$(dirname "$0")/lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}" "${JIT_SPIN:?}"
require_bpf
make_tmpdir
[ "$(uname -m)" = x86_64 ] || { echo "SKIP: the JIT workload is x86-64 code" >&2; exit 77; }

"$PERFCAP_RECORD" -F 499 -o "$TMP/run.perfcap" -- "$JIT_SPIN" 2 \
	> "$TMP/record.out" 2> "$TMP/record.err" \
	|| { cat "$TMP/record.err" >&2; fail "perfcap-record failed"; }
cat "$TMP/record.out"
pid=$(sed -n 's/^pid=\([0-9]*\) .*/\1/p' "$TMP/record.out")
[ -n "$pid" ] || fail "workload did not print its pid"
[ -f "/tmp/perf-$pid.map" ] || fail "workload wrote no /tmp/perf-$pid.map"
rm -f "/tmp/perf-$pid.map"   # the analyzer must not need it

q() { "$PERFCAP_ANALYZE" query --format csv "$TMP/run.perfcap" "$1" | tail -n +2 | tr -d "\r\""; }

read_maps=$(q "SELECT value FROM stats WHERE key = 'jit.perfmaps.read'")
malformed=$(q "SELECT value FROM stats WHERE key = 'jit.perfmaps.malformed_lines'")
named=$(q "SELECT value FROM stats WHERE key = 'jit.ips.named'")
echo "stats: perfmaps read $read_maps, malformed lines $malformed, jit ips named $named"
[ "$read_maps" = 1 ] || fail "jit.perfmaps.read = $read_maps, want 1"
[ "$malformed" = 1 ] || fail "jit.perfmaps.malformed_lines = $malformed, want 1"
[ "${named:-0}" -ge 1 ] || fail "jit.ips.named = $named, want >= 1"

source=$(q "SELECT DISTINCT source || ' ' || module FROM frames WHERE function = 'jit_spin_loop'")
echo "jit_spin_loop frames: $source"
[ "$source" = "perfmap /tmp/perf-$pid.map" ] || fail "jit_spin_loop frame source '$source'"

total=$(q "SELECT sum(count) FROM sample_counts WHERE pid = $pid")
jit=$(q "SELECT sum(c.count) FROM sample_counts c JOIN stacks s ON s.stack_id = c.ustack_id
	JOIN stack_frames sf ON sf.stack_id = s.stack_id AND sf.position = 0
	JOIN frames f ON f.frame_id = sf.frame_id
	WHERE c.pid = $pid AND f.function = 'jit_spin_loop'")
share=$(pct "${jit:-0}" "${total:-0}")
echo "jit_spin_loop innermost in $jit of $total samples ($share%)"
within "$share" 80 100 || fail "jit_spin_loop self share $share%, want >= 80%"

"$PERFCAP_ANALYZE" report "$TMP/run.perfcap" > "$TMP/report" || fail "report failed"
grep -q "jit_spin_loop" "$TMP/report" || { cat "$TMP/report"; fail "report does not name jit_spin_loop"; }
# the caller of the JIT code is on the stacks too (the JIT code keeps rbp)
grep -q "run_jit" "$TMP/report" || { cat "$TMP/report"; fail "report lacks the caller run_jit"; }
echo "PASS"
