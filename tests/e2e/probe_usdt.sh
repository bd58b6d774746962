#!/bin/bash
# probe_usdt.sh - the probe source's USDT probes on a real runtime:
# Debian's /usr/bin/python3.11 (python3.11-minimal) has SDT notes
# python:gc__start and gc__done, guarded by semaphores that the kernel
# sets for the probed process only. A script calls gc.collect() K times,
# counts its own collections through gc.callbacks and prints the total of
# gc.get_stats() (startup collections included). The probe count must be
# at least K and at least that total (the interpreter's finalization
# collects a few more after the script's last line), the same for start
# and done, and every hit must have a PROBE record and a probe_hits row.
# Skips loudly (exit 77) when that python or its probes are missing.
set -u
. "$(dirname "$0")/lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}" "${CAPCHECK:?}"
require_bpf
make_tmpdir

PY=/usr/bin/python3.11
K=40
[ -x "$PY" ] || { echo "SKIP: $PY is not installed (apt-get install python3.11-minimal)" >&2; exit 77; }
if ! readelf -n "$PY" 2>/dev/null | grep -q "Name: gc__start"; then
	echo "SKIP: $PY has no USDT probe python:gc__start (built without --with-dtrace)" >&2
	exit 77
fi

cat > "$TMP/gc_collect.py" <<'PYEOF'
import gc, sys
k = int(sys.argv[1])
starts = 0
def count(phase, info):
    global starts
    if phase == "start":
        starts += 1
gc.callbacks.append(count)
for _ in range(k):
    gc.collect()
print("gc_starts=%d collections=%d" % (starts, sum(s["collections"] for s in gc.get_stats())))
PYEOF

timeout 120 "$PERFCAP_RECORD" --strict -o "$TMP/py.perfcap" \
	-e "usdt:$PY:python:gc__start,usdt:$PY:python:gc__done" -- \
	"$PY" "$TMP/gc_collect.py" $K > "$TMP/py.out" 2> "$TMP/record.err" ||
	{ cat "$TMP/record.err"; fail "perfcap-record failed"; }
cat "$TMP/py.out" "$TMP/record.err"
own=$(sed -n 's/.*gc_starts=\([0-9]*\).*/\1/p' "$TMP/py.out")
total=$(sed -n 's/.*collections=\([0-9]*\).*/\1/p' "$TMP/py.out")
[ "$own" = $K ] || fail "the script counted $own collections of its own, want $K"
starts=$("$CAPCHECK" stat "$TMP/py.perfcap" probe.0.hits) || fail "no probe.0.hits"
dones=$("$CAPCHECK" stat "$TMP/py.perfcap" probe.1.hits) || fail "no probe.1.hits"
echo "gc__start hits $starts, gc__done hits $dones; script: $K collect() calls, $total collections in gc.get_stats()"
[ "$starts" -ge "$K" ] && [ "$starts" -ge "$total" ] ||
	fail "gc__start: $starts hits, want at least $K and $total"
[ "$starts" -le $((total + 10)) ] || fail "gc__start: $starts hits, far more than $total collections"
[ "$starts" -eq "$dones" ] || fail "gc__start $starts hits != gc__done $dones hits"
rows=$("$PERFCAP_ANALYZE" query "$TMP/py.perfcap" "SELECT count(*) FROM probe_hits
	WHERE probe_id = 0" | tail -n +2)
[ "$rows" -eq "$starts" ] || fail "$rows probe_hits rows for $starts hits"
# gc__start's first argument is the generation collected (0, 1 or 2)
gens=$("$PERFCAP_ANALYZE" query "$TMP/py.perfcap" "SELECT count(*) FROM probe_hits
	WHERE probe_id = 0 AND arg0 BETWEEN 0 AND 2" | tail -n +2)
[ "$gens" -eq "$rows" ] || fail "gc__start arg0 (the generation) outside 0-2 in $((rows - gens)) rows"
"$PERFCAP_ANALYZE" query "$TMP/py.perfcap" "SELECT kind, name, path, build_id, hits, records
	FROM probes" || fail "no probes table"
"$PERFCAP_ANALYZE" report "$TMP/py.perfcap" 2>&1 | sed -n '/^User probes/,/^$/p' > "$TMP/report"
cat "$TMP/report"
grep -q "python:gc__start (python3.11) *$starts " "$TMP/report" || fail "report: no gc__start row"
echo "PASS: probe_usdt"
