#!/bin/bash
# probe_uprobe.sh - the probe source's uprobes end to end, against the
# truth the workload measures itself (probe_calls: probed_work() called
# exactly N times, each sleeping a known time, timed by the workload):
#   - a command: -e uprobe:PROBE_CALLS:probed_work(arg1,ret): the kernel's
#     count (STATS probe.0.calls/hits), the PROBE records and the analyzer's
#     probe_hits all exactly N; the kernel's total within 10% of the
#     workload's own; ret = 2 * arg1 on every row; the caller named
#     probe_caller in the report; META offset, build-id, attached pid;
#   - a uretprobe on a shared library of the target (libc's nanosleep,
#     called once per call), bound to the target: exactly N, although
#     every other process on the machine sleeps too;
#   - a running process (-p), probed through /proc/PID/root;
#   - children: a shell running the workload twice (an executable's probe
#     follows the traced processes' children), while an untraced copy of
#     the workload running at the same time is not counted;
#   - thresholded records (--probe-min 1s): no records, counts still N;
#   - diff: the same function twelve times as slow fails --fail-on
#     p99:probe:probed_work:+20%;
#   - bad probes: no such file, no such symbol, a non-ELF file, a
#     malformed spec: one clear line and exit status 1.
set -u
. "$(dirname "$0")/lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}" "${PROBE_CALLS:?}" "${CAPCHECK:?}"
require_bpf
make_tmpdir

N=200
SLEEP_US=2000

stat_of() { "$CAPCHECK" stat "$1" "$2" || fail "no STATS $2 in $1"; }
meta_of() { "$CAPCHECK" meta "$1" "$2" || fail "no META $2 in $1"; }
sql() { "$PERFCAP_ANALYZE" query "$1" "$2" | tail -n +2; }

# expect_exact CAPTURE PROBE_INDEX WANT: kernel hits and calls, records
expect_exact() {
	local out=$1 i=$2 want=$3 hits calls rows
	hits=$(stat_of "$out" "probe.$i.hits")
	calls=$(stat_of "$out" "probe.$i.calls")
	rows=$(sql "$out" "SELECT count(*) FROM probe_hits WHERE probe_id = $i")
	echo "probe $i: kernel hits $hits, calls $calls; probe_hits rows $rows; truth $want"
	[ "$hits" -eq "$want" ] || fail "probe $i: $hits kernel hits, want exactly $want"
	[ "$calls" -eq "$want" ] || fail "probe $i: $calls kernel calls, want exactly $want"
	[ "$rows" -eq "$want" ] || fail "probe $i: $rows probe_hits rows, want exactly $want"
}

# expect_total CAPTURE PROBE_INDEX WORKLOAD_OUTPUT: within 10% of the truth
expect_total() {
	local out=$1 i=$2 work=$3 want got sum ratio
	want=$(sed -n 's/.*total_ns=\([0-9]*\).*/\1/p' "$work")
	got=$(stat_of "$out" "probe.$i.total_ns")
	sum=$(sql "$out" "SELECT sum(duration) FROM probe_hits WHERE probe_id = $i")
	[ -n "$want" ] || fail "the workload printed no total_ns"
	[ "$got" -eq "$sum" ] || fail "kernel total $got ns != sum of the records $sum ns"
	ratio=$(( 100 * got / want ))
	echo "probe $i: kernel total $got ns, workload measured $want ns: $ratio%"
	within "$ratio" 90 110 || fail "probe $i total $got ns not within 10% of $want ns"
}

echo "--- a command: probed_work(arg1,ret) and libc's nanosleep"
libc=$(ldd "$PROBE_CALLS" | sed -n 's/.*libc\.so\.6 => \([^ ]*\).*/\1/p')
[ -n "$libc" ] || fail "cannot find the libc of $PROBE_CALLS"
timeout 120 "$PERFCAP_RECORD" --strict -o "$TMP/cmd.perfcap" \
	-e "uprobe:$PROBE_CALLS:probed_work(arg1,ret),uprobe:$libc:nanosleep" -- \
	"$PROBE_CALLS" $N $SLEEP_US > "$TMP/cmd.out" 2> "$TMP/record.err" ||
	{ cat "$TMP/record.err"; fail "perfcap-record failed"; }
cat "$TMP/cmd.out" "$TMP/record.err"
expect_exact "$TMP/cmd.perfcap" 0 $N
expect_exact "$TMP/cmd.perfcap" 1 $N
expect_total "$TMP/cmd.perfcap" 0 "$TMP/cmd.out"
bad=$(sql "$TMP/cmd.perfcap" "SELECT count(*) FROM probe_hits WHERE probe_id = 0 AND
	(arg1 IS NOT 2 * arg0 OR arg2 IS NOT NULL)")
[ "$bad" -eq 0 ] || fail "$bad rows where ret != 2 * arg1 (or a third argument)"
args=$(sql "$TMP/cmd.perfcap" "SELECT min(arg0), max(arg0), count(DISTINCT arg0)
	FROM probe_hits WHERE probe_id = 0" | tr '\t' ' ')
[ "$args" = "0 $((N - 1)) $N" ] || fail "arg1 should run 0..$((N - 1)) once each: $args"
for key in offset build_id attached path; do
	echo "META probe.0.$key = $(meta_of "$TMP/cmd.perfcap" probe.0.$key)"
done
[ "$(meta_of "$TMP/cmd.perfcap" probe.0.args)" = "arg1,ret" ] || fail "META probe.0.args"
[ -n "$(meta_of "$TMP/cmd.perfcap" probe.0.build_id)" ] || fail "no build-id in META"
"$PERFCAP_ANALYZE" report "$TMP/cmd.perfcap" > "$TMP/report.txt" 2>&1 ||
	{ cat "$TMP/report.txt"; fail "report failed"; }
sed -n '/^User probes/,/^$/p' "$TMP/report.txt"
grep -q "probed_work (probe_calls) *$N " "$TMP/report.txt" || fail "report: no probed_work row"
grep -q "callers: probe_caller" "$TMP/report.txt" || fail "report: probe_caller not the caller"
"$PERFCAP_ANALYZE" report --json "$TMP/cmd.perfcap" > "$TMP/report.json" 2>/dev/null
python3 - "$TMP/report.json" $N <<'EOF' || fail "report --json probes"
import json, sys
p = json.load(open(sys.argv[1]))["probes"]
n = int(sys.argv[2])
assert p[0]["calls"] == n and p[0]["records"] == n, p[0]
assert p[0]["p50_ns"] <= p[0]["p90_ns"] <= p[0]["p99_ns"] <= p[0]["max_ns"], p[0]
assert p[0]["callers"][0]["function"] == "probe_caller", p[0]["callers"]
print("report --json: probes[0] calls %d, p50 %d ns" % (p[0]["calls"], p[0]["p50_ns"]))
EOF

echo "--- a running process (-p)"
"$PROBE_CALLS" 50 $SLEEP_US "$TMP/go" > "$TMP/pid.out" &
pid=$!
timeout 60 "$PERFCAP_RECORD" --strict -o "$TMP/pid.perfcap" -p $pid \
	-e "uprobe:$PROBE_CALLS:probed_work" 2> "$TMP/record.err" &
rec=$!
wait_for "$TMP/record.err" "recording pid" 30 || { cat "$TMP/record.err"; fail "no attach"; }
touch "$TMP/go"
wait $pid || fail "probe_calls failed"
wait $rec || { cat "$TMP/record.err"; fail "perfcap-record -p failed"; }
expect_exact "$TMP/pid.perfcap" 0 50
expect_total "$TMP/pid.perfcap" 0 "$TMP/pid.out"
case "$(meta_of "$TMP/cmd.perfcap" probe.1.placement)" in "bound to each target"*) ;;
	*) fail "the libc probe is not bound to the target" ;; esac
case "$(meta_of "$TMP/cmd.perfcap" probe.1.attached)" in *[!0-9]*) fail "libc probe attached to '$(meta_of "$TMP/cmd.perfcap" probe.1.attached)', want the pid" ;; esac
case "$(meta_of "$TMP/pid.perfcap" probe.0.placement)" in executable*) ;;
	*) fail "META probe.0.placement: an executable's probe should be filtered in the kernel" ;; esac

echo "--- children of the command; an untraced copy is not counted"
"$PROBE_CALLS" 1000 1000 > /dev/null &
other=$!
timeout 60 "$PERFCAP_RECORD" --strict -o "$TMP/sh.perfcap" -e "uprobe:$PROBE_CALLS:probed_work" \
	-- sh -c "'$PROBE_CALLS' 30 0; '$PROBE_CALLS' 20 0" > /dev/null 2> "$TMP/record.err" ||
	{ cat "$TMP/record.err"; fail "perfcap-record -- sh -c failed"; }
kill $other 2> /dev/null
wait $other 2> /dev/null
expect_exact "$TMP/sh.perfcap" 0 50

echo "--- thresholded records: counts stay exact"
timeout 60 "$PERFCAP_RECORD" --strict --probe-min 1s -o "$TMP/min.perfcap" \
	-e "uprobe:$PROBE_CALLS:probed_work" -- "$PROBE_CALLS" 100 0 > /dev/null 2>&1 ||
	fail "perfcap-record --probe-min failed"
[ "$(stat_of "$TMP/min.perfcap" probe.0.calls)" -eq 100 ] || fail "calls under --probe-min"
[ "$(stat_of "$TMP/min.perfcap" probe.0.below_min)" -eq 100 ] || fail "probe.0.below_min"
[ "$(stat_of "$TMP/min.perfcap" probe.records)" -eq 0 ] || fail "records under --probe-min 1s"
"$PERFCAP_ANALYZE" report "$TMP/min.perfcap" 2>&1 | grep -q "kernel histogram" ||
	fail "report: percentiles of thinned records should come from the kernel histogram"
echo "100 calls counted, 0 recorded"

echo "--- diff: a slower probed function fails p99:probe"
# The rule needs the p99 ratio's interval above 1, and the base's p99
# interval reaches up to its slowest calls: with 200 calls one nap that a
# busy host stretched past 10 ms (seen once in CI, under ASan) made it
# [0.65, 7.62]. 1,000 base calls keep the interval inside the top 1%
# minus a few, so a handful of stretched naps do not decide it; and the
# slow calls nap 12 times as long (24 ms): under CI's 40-50% steal more
# than 1% of the 2 ms naps were stretched past 10 ms, and the base's p99
# interval reached the 5x slow calls' (the rule rightly inconclusive).
timeout 60 "$PERFCAP_RECORD" -o "$TMP/base.perfcap" -e "uprobe:$PROBE_CALLS:probed_work" -- \
	"$PROBE_CALLS" 1000 $SLEEP_US > /dev/null 2>&1 || fail "perfcap-record (base) failed"
timeout 60 "$PERFCAP_RECORD" -o "$TMP/slow.perfcap" -e "uprobe:$PROBE_CALLS:probed_work" -- \
	"$PROBE_CALLS" 100 $((12 * SLEEP_US)) > /dev/null 2>&1 || fail "perfcap-record (slow) failed"
"$PERFCAP_ANALYZE" diff --fail-on 'p99:probe:probed_work:+20%' "$TMP/base.perfcap" \
	"$TMP/slow.perfcap" > "$TMP/diff.txt" 2>&1
rc=$?
grep -E "FAIL|probe " "$TMP/diff.txt" | head -3
[ $rc -eq 1 ] || { cat "$TMP/diff.txt"; fail "diff exit $rc, want 1 (probed_work twelve times as slow)"; }

echo "--- bad probes: one clear line, exit 1"
echo "not elf" > "$TMP/notelf"
bad_probe() {
	local spec=$1 want=$2
	if timeout 30 "$PERFCAP_RECORD" -o "$TMP/bad.perfcap" -f -e "$spec" -- true \
		> /dev/null 2> "$TMP/err"; then
		fail "'$spec' was accepted"
	fi
	grep -q -- "$want" "$TMP/err" || { cat "$TMP/err"; fail "'$spec': no '$want' in the error"; }
	echo "$spec -> $(grep -m1 -- "$want" "$TMP/err")"
}
bad_probe "uprobe:/nonexistent/bin:main" "No such file or directory"
bad_probe "uprobe:$PROBE_CALLS:no_such_function" "defines no function no_such_function"
bad_probe "uprobe:$TMP/notelf:main" "not an ELF file"
bad_probe "uprobe:$PROBE_CALLS" "invalid probe"
bad_probe "uprobe:$PROBE_CALLS:probed_work(arg9)" "arguments are arg1 to arg6 and ret"
bad_probe "usdt:$PROBE_CALLS:nosuch:probe" "has no USDT probe nosuch:probe"
# a failing probe next to a working one: recorded without it, fatal with --strict
timeout 60 "$PERFCAP_RECORD" -o "$TMP/part.perfcap" -e \
	"uprobe:$PROBE_CALLS:probed_work,uprobe:$PROBE_CALLS:nope" -- "$PROBE_CALLS" 5 0 \
	> /dev/null 2> "$TMP/err" || { cat "$TMP/err"; fail "one good probe should record"; }
grep -q "not recording probe 1" "$TMP/err" || { cat "$TMP/err"; fail "probe 1 not named"; }
meta_of "$TMP/part.perfcap" probe.1.failed > /dev/null
if timeout 60 "$PERFCAP_RECORD" --strict -o "$TMP/part.perfcap" -f -e \
	"uprobe:$PROBE_CALLS:probed_work,uprobe:$PROBE_CALLS:nope" -- "$PROBE_CALLS" 5 0 \
	> /dev/null 2>&1; then
	fail "--strict accepted a probe that cannot attach"
fi
echo "PASS: probe_uprobe"
