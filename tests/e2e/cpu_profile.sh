#!/bin/bash
# cpu_profile.sh - end to end with real eBPF: record the cpu_split workload
# (burn_a:burn_b work = 3:1), analyze it, and check the report attributes
# ~75% / ~25% (+-10 points) to the two functions by name. Then delete the
# workload binary and check the same capture still names both functions
# (symbols travel inside the capture). The capture's STATS host.cpu.*
# (the host's busy, idle and stolen CPU time, from /proc/stat) add up to
# the CPUs times the recording's length, and busy covers the single
# thread that burned all along. The command's threads are sampled per
# thread (META sampling.cpu.scope threads): 4 s of its CPU time at -F 499
# give its samples within 10%, and STATS has no cpu.ticks.* (unknown per
# thread). The sampling ticks (STATS cpu.ticks.*) of a per-CPU recording
# (-a) of the same workload: those due on busy CPUs are the busy time's
# worth at -F 499, due = run + missed, and the workload's samples are
# among the ticks run.
set -u
. "$(dirname "$0")/lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}" "${CPU_SPLIT:?}"
require_bpf
make_tmpdir

cp "$CPU_SPLIT" "$TMP/cpu_split"
"$PERFCAP_RECORD" -F 499 -o "$TMP/run.perfcap" -- "$TMP/cpu_split" 4 \
	> "$TMP/record.out" 2> "$TMP/record.err" \
	|| { cat "$TMP/record.err" >&2; fail "perfcap-record failed"; }
cat "$TMP/record.err"

# self share of a function among the workload's samples, from folded stacks:
# a sample's self function is the innermost (last) frame.
self_pct() {
	awk -v fn="$2" '
		$1 ~ /^cpu_split;/ {
			n = $NF; total += n
			line = $0; sub(/ [0-9]+$/, "", line)
			k = split(line, f, ";")
			if (f[k] == fn) hit += n
		}
		END { if (total == 0) print -1; else printf "%d\n", 100 * hit / total }' "$1"
}

check_split() {   # $1 = label, remaining = extra analyze args
	local label=$1; shift
	"$PERFCAP_ANALYZE" report "$@" --folded "$TMP/run.perfcap" > "$TMP/folded" \
		|| fail "$label: report --folded failed"
	"$PERFCAP_ANALYZE" report "$@" "$TMP/run.perfcap" > "$TMP/report" \
		|| fail "$label: report failed"
	local a b
	a=$(self_pct "$TMP/folded" burn_a)
	b=$(self_pct "$TMP/folded" burn_b)
	echo "$label: burn_a ${a}% burn_b ${b}% of cpu_split samples (folded)"
	within "$a" 65 85 || { cat "$TMP/report"; fail "$label: burn_a ${a}%, want 75+-10"; }
	within "$b" 15 35 || { cat "$TMP/report"; fail "$label: burn_b ${b}%, want 25+-10"; }
	# the text report names both with their self share
	local ra rb
	ra=$(awk '/burn_a/ { for (i = 1; i <= NF; i++) if ($i ~ /%$/) { sub(/%/, "", $i); print int($i); exit } }' "$TMP/report")
	rb=$(awk '/burn_b/ { for (i = 1; i <= NF; i++) if ($i ~ /%$/) { sub(/%/, "", $i); print int($i); exit } }' "$TMP/report")
	echo "$label: report self burn_a ${ra:-?}% burn_b ${rb:-?}% (of all samples)"
	[ -n "$ra" ] && [ -n "$rb" ] || { cat "$TMP/report"; fail "$label: report lacks burn_a/burn_b"; }
	# of all samples (other processes may add a little): ratio must be 3:1 +-
	within "$(pct "$ra" $((ra + rb)))" 65 85 || fail "$label: report ratio off ($ra vs $rb)"
}

check_split "with binary"
rm -f "$TMP/cpu_split"
check_split "binary deleted" --no-local-files
check_split "binary deleted, local lookup allowed"

capture_stat() {
	"$PERFCAP_ANALYZE" query --format csv "${CAP:-$TMP/run.perfcap}" \
		"SELECT value FROM stats WHERE chunk = 'stats' AND key = '$1'" | sed -n 2p | tr -d '\r"'
}
scope=$("$PERFCAP_ANALYZE" query --format csv "$TMP/run.perfcap" \
	"SELECT value FROM meta WHERE key = 'sampling.cpu.scope'" | sed -n 2p | tr -d '\r"')
[ "$scope" = threads ] || fail "the command was sampled with scope '$scope', not per thread"
samples=$(capture_stat cpu.samples)
echo "per thread: $samples samples of 4 s of CPU time at 499 Hz"
within "${samples:-0}" 1796 2196 || fail "$samples samples, want 1996 within 10%"
[ -z "$(capture_stat cpu.ticks.due)" ] || fail "STATS cpu.ticks.due written per thread"
busy=$(capture_stat host.cpu.busy_ns) idle=$(capture_stat host.cpu.idle_ns) steal=$(capture_stat host.cpu.steal_ns)
dur=$(capture_stat record.duration_ns)
echo "host CPU: busy $busy, idle $idle, steal $steal ns over $dur ns on $(nproc) CPUs"
[ -n "$busy" ] && [ -n "$idle" ] && [ -n "$steal" ] || fail "STATS host.cpu.* missing"
# /proc/stat counts hundredths of a second per CPU: within 5% and 2 ticks a
# CPU. On a virtual machine a CPU woken from idle and not yet run by the
# hypervisor counts that time as idle (its clock runs) and as steal (it
# was runnable): the sum may exceed the wall time by up to the steal
# (20% steal here once gave busy + idle + steal 6% over)
python3 - "$busy" "$idle" "$steal" "$dur" "$(nproc)" <<'PY' || fail "host CPU time does not add up"
import sys
busy, idle, steal, dur, ncpu = (int(x) for x in sys.argv[1:])
total, want = busy + idle + steal, ncpu * dur
tol = 0.05 * want + ncpu * 2e7
assert want - tol <= total <= want + steal + tol, (total, want, steal)
assert busy >= 0.8 * dur, ("busy below the one thread that burned", busy, dur)
PY
# the ticks: per CPU (-a), the same workload
"$CPU_SPLIT" 4 > /dev/null &
work=$!
"$PERFCAP_RECORD" -a -F 499 -d 3 -o "$TMP/all.perfcap" > /dev/null 2> "$TMP/all.err" ||
	{ cat "$TMP/all.err" >&2; kill $work; fail "perfcap-record -a failed"; }
wait $work
CAP=$TMP/all.perfcap
busy=$(capture_stat host.cpu.busy_ns) steal=$(capture_stat host.cpu.steal_ns)
due=$(capture_stat cpu.ticks.due) run=$(capture_stat cpu.ticks.run)
missed=$(capture_stat cpu.ticks.missed)
# with -a the idle task is sampled too (run leaves it out): the workload's
samples=$("$PERFCAP_ANALYZE" query --format csv "$CAP" \
	"SELECT count(*) FROM samples WHERE pid = $work" | sed -n 2p | tr -d '\r"')
echo "sampling ticks: due $due, run $run, missed $missed; samples $samples"
[ -n "$due" ] && [ -n "$run" ] && [ -n "$missed" ] || fail "STATS cpu.ticks.* missing"
# due counts busy and stolen time (the event's clock runs while the host
# does not run the CPU), in whole periods: within the tolerance above
python3 - "$busy" "$steal" "$due" "$run" "$missed" "$samples" "$(nproc)" <<'PY' \
	|| fail "sampling ticks do not add up"
import sys
busy, steal, due, run, missed, samples, ncpu = (int(x) for x in sys.argv[1:])
want = (busy + steal) * 499 / 1e9
tol = 0.05 * want + ncpu * 2e7 * 499 / 1e9 + ncpu
assert want - tol <= due <= want + tol, ("ticks due", due, want)
assert missed == max(0, due - run), (due, run, missed)
assert samples <= run, ("more samples than ticks run", samples, run)
PY
echo "PASS"
