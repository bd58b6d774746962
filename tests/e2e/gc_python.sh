#!/bin/bash
# gc_python.sh - GC pause windows from a real runtime's probes, end to
# end: Debian's /usr/bin/python3.11 (USDT python:gc__start/gc__done) runs
# a GC-heavy script, recorded with the default sources plus both probes.
#
# The script disables automatic collection (so every collection after
# its first line is one of its own), keeps a large heap of tracked
# containers alive, makes reference cycles and calls gc.collect() K times,
# counting and timing each collection itself through gc.callbacks (start
# and stop phases, CLOCK_MONOTONIC like the recorder). It reads how many
# collections the interpreter's start-up made (gc.get_stats(), counted by
# the same function that fires the probes) and leaves with os._exit, so
# the interpreter's finalization, which collects a few more times (3 here)
# outside any count, never runs. Then:
#   - the kernel's exact gc__start and gc__done hits = start-up + K;
#   - gc_pauses pairs every hit (no unmatched begin or end in quality),
#     and exactly K pauses start inside the script's counting window;
#   - those K pauses total within 20% of the script's own GC time;
#   - the report's first cause is gc_pauses (the script's time is mostly
#     GC), its pause count the probes' and its total within 20%.
# With GC_MODE=auto (e2e-gc-python-auto) the probes are not named: -e gc
# finds them in the interpreter (META probe.N.origin gc:python) and every
# check above holds the same.
# Skips loudly (exit 77) when that python or its probes are missing.
set -u
. "$(dirname "$0")/lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}" "${CAPCHECK:?}"
require_bpf
make_tmpdir

PY=/usr/bin/python3.11
K=${GC_COLLECTIONS:-40}
LIVE=${GC_LIVE:-200000}
[ -x "$PY" ] || { echo "SKIP: $PY is not installed (apt-get install python3.11-minimal)" >&2; exit 77; }
for p in gc__start gc__done; do
	if ! readelf -n "$PY" 2>/dev/null | grep -q "Name: $p\$"; then
		echo "SKIP: $PY has no USDT probe python:$p (built without --with-dtrace)" >&2
		exit 77
	fi
done

SCRIPT="$(dirname "$(readlink -f "$0")")/../workloads/gc_heavy.py"

EVENTS="cpu,sched,block,waits,usdt:$PY:python:gc__start,usdt:$PY:python:gc__done"
[ "${GC_MODE:-usdt}" = auto ] && EVENTS=cpu,sched,block,waits,gc
echo "recording with -e $EVENTS"
timeout 180 "$PERFCAP_RECORD" --strict -o "$TMP/gc.perfcap" -e "$EVENTS" -- \
	"$PY" "$SCRIPT" "$K" "$LIVE" > "$TMP/py.out" 2> "$TMP/record.err" ||
	{ cat "$TMP/record.err"; fail "perfcap-record failed"; }
cat "$TMP/py.out" "$TMP/record.err"
val() { sed -n "s/.*\\b$1=\\([0-9]*\\).*/\\1/p" "$TMP/py.out"; }
own=$(val collections) gc_ns=$(val gc_ns) startup=$(val startup) t0=$(val t0) t1=$(val t1)
wall=$(val wall_ns)
[ "$own" = "$K" ] || fail "the script counted $own collections of its own, want $K"
[ -n "$startup" ] && [ -n "$gc_ns" ] && [ -n "$t0" ] && [ -n "$t1" ] || fail "no script output"
echo "script: $K collections timed at $gc_ns ns of its $wall ns; $startup at start-up"
[ $((2 * gc_ns)) -ge "$wall" ] || fail "GC was not most of the script's time ($gc_ns of $wall ns)"

if [ "${GC_MODE:-usdt}" = auto ]; then
	for i in 0 1; do
		origin=$("$CAPCHECK" meta "$TMP/gc.perfcap" probe.$i.origin)
		name=$("$CAPCHECK" meta "$TMP/gc.perfcap" probe.$i.name)
		echo "-e gc placed probe $i: $name ($origin)"
		[ "$origin" = gc:python ] || fail "probe.$i.origin '$origin', want gc:python"
	done
fi
starts=$("$CAPCHECK" stat "$TMP/gc.perfcap" probe.0.hits) || fail "no probe.0.hits"
dones=$("$CAPCHECK" stat "$TMP/gc.perfcap" probe.1.hits) || fail "no probe.1.hits"
echo "kernel: gc__start $starts hits, gc__done $dones hits (want start-up $startup + $K)"
[ "$starts" -eq $((startup + K)) ] || fail "gc__start: $starts hits, want $((startup + K))"
[ "$dones" -eq $((startup + K)) ] || fail "gc__done: $dones hits, want $((startup + K))"

"$PERFCAP_ANALYZE" import -f "$TMP/gc.perfcap" -o "$TMP/gc.db" > /dev/null ||
	fail "import failed"
q() { "$PERFCAP_ANALYZE" query "$TMP/gc.db" "$1" | tail -n +2; }
q "SELECT key, value FROM quality WHERE source = 'probe' AND key LIKE 'gc.%'"
pauses=$(q "SELECT count(*) FROM gc_pauses WHERE runtime = 'python' AND source = 'usdt'")
[ "$pauses" -eq "$starts" ] || fail "gc_pauses: $pauses rows for $starts gc__start hits"
unpaired=$(q "SELECT sum(value) FROM quality WHERE source = 'probe' AND key IN
	('gc.begin_unmatched', 'gc.end_unmatched', 'gc.unrecorded')")
[ "$unpaired" = 0 ] || fail "quality: $unpaired GC probe hits made no pause"
read -r inside inside_ns <<< "$(q "SELECT count(*), sum(duration) FROM gc_pauses
	WHERE start_ts >= $t0 AND start_ts < $t1" | tr '\t' ' ')"
echo "gc_pauses: $pauses pauses, $inside of them in the script's window totalling $inside_ns ns" \
     "($(pct "$inside_ns" "$gc_ns")% of the script's own $gc_ns ns)"
[ "$inside" -eq "$K" ] || fail "$inside pauses in the script's window, want $K"
within "$inside_ns" $((gc_ns * 80 / 100)) $((gc_ns * 120 / 100)) ||
	fail "pauses in the window total $inside_ns ns, not within 20% of the script's $gc_ns ns"

"$PERFCAP_ANALYZE" report --json "$TMP/gc.db" > "$TMP/report.json" || fail "report --json failed"
python3 - "$TMP/report.json" "$((startup + K))" "$gc_ns" <<'PYEOF' || fail "diagnosis"
import json, sys
r = json.load(open(sys.argv[1]))
want, gc_ns = int(sys.argv[2]), int(sys.argv[3])
causes = r["diagnosis"]["causes"]
for c in causes:
    print("cause %d %s %.2f %s=%s" % (c["rank"], c["kind"], c["score"],
          c["key_number"]["name"], c["key_number"]["value"]))
c = causes[0] if causes else {}
if c.get("kind") != "gc_pauses":
    sys.exit("first cause is %s, not gc_pauses" % c.get("kind"))
s = c["subject"]
print(c["title"]); print(s)
if s["pauses"] != want or s["runtime"] != "python":
    sys.exit("subject: %d %s pauses, want %d python" % (s["pauses"], s["runtime"], want))
total = c["key_number"]["value"]
if not 0.8 * gc_ns <= total <= 1.2 * gc_ns:
    sys.exit("pause_total %d not within 20%% of the script's %d ns" % (total, gc_ns))
if s["slow_request_overlap_pct"] is not None:
    sys.exit("slow_request_overlap_pct should be null without requests")
if not c["title"].startswith("GC pauses: %d, total " % want):
    sys.exit("title: " + c["title"])
PYEOF
"$PERFCAP_ANALYZE" report "$TMP/gc.db" | grep -q "Main cause: GC pauses: $((startup + K))," ||
	fail "text report: the summary does not name the GC pauses first"
echo "PASS: gc_python"
