#!/bin/bash
# gc_python_fallback.sh - `-e gc` on a CPython built without dtrace (no
# USDT python:gc__start, as pyenv builds it): the recorder times the calls
# of gc_collect_main(), the function those probes bound, with a uprobe and
# its uretprobe, found in the interpreter's libpython when the dynamic
# linker has mapped it after the exec. The script (run through the python
# found, as a user would) sleeps first so the probe is in place, disables
# automatic collection, keeps a heap alive and calls gc.collect() K times,
# timing each collection itself through gc.callbacks. Checks: META names
# the probe (kind uprobe, gc_collect_main, origin gc:python), exactly K
# pauses start in the script's window, none unmatched, and they total
# within 20% of the script's own GC time.
# Skips loudly (exit 77) when no such python is installed.
set -u
. "$(dirname "$0")/lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}" "${CAPCHECK:?}"
require_bpf
make_tmpdir

K=${GC_COLLECTIONS:-20}

has_usdt() { readelf -n "$1" 2>/dev/null | grep -q 'Name: gc__start$'; }
has_collect() { nm "$1" 2>/dev/null | grep -q ' gc_collect_main$'; }

# a CPython 3 without the USDT probe, whose executable or libpython
# defines gc_collect_main: prints the interpreter to run
find_python() {
	local cand exe lib
	for cand in $(compgen -c python3 | sort -u) "$HOME"/.pyenv/versions/*/bin/python3; do
		exe=$("$cand" -c 'import sys; print(sys.executable)' 2> /dev/null) || continue
		[ -x "$exe" ] || continue
		lib=$(ldd "$exe" 2> /dev/null | awk '/libpython3/ { print $3 }')
		has_usdt "$exe" && continue
		[ -n "$lib" ] && has_usdt "$lib" && continue
		if has_collect "$exe" || { [ -n "$lib" ] && has_collect "$lib"; }; then
			echo "$cand"
			return 0
		fi
	done
	return 1
}
PY=$(find_python) || {
	echo "SKIP: no CPython 3 without USDT gc__start but with gc_collect_main (a pyenv build)" >&2
	exit 77
}
echo "python without USDT: $PY ($("$PY" -c 'import sys; print(sys.executable, sys.version.split()[0])'))"

SCRIPT="$(dirname "$(readlink -f "$0")")/../workloads/gc_heavy.py"

timeout 180 "$PERFCAP_RECORD" -o "$TMP/gc.perfcap" -e cpu,gc -- "$PY" "$SCRIPT" "$K" 200000 0.5 \
	> "$TMP/py.out" 2> "$TMP/record.err" || { cat "$TMP/record.err"; fail "perfcap-record failed"; }
cat "$TMP/py.out" "$TMP/record.err"
val() { sed -n "s/.*\\b$1=\\([0-9]*\\).*/\\1/p" "$TMP/py.out"; }
own=$(val collections) gc_ns=$(val gc_ns) t0=$(val t0) t1=$(val t1)
[ "$own" = "$K" ] && [ -n "$gc_ns" ] || fail "no script output"

"$PERFCAP_ANALYZE" import -f "$TMP/gc.perfcap" -o "$TMP/gc.db" > /dev/null || fail "import failed"
q() { "$PERFCAP_ANALYZE" query "$TMP/gc.db" "$1" | tail -n +2; }
q "SELECT probe_id, kind, name, hits, calls, total_ns, attached, path FROM probes"
probe=$(q "SELECT kind || ' ' || name FROM probes WHERE name = 'gc_collect_main' LIMIT 1")
[ "$probe" = "uprobe gc_collect_main" ] || fail "no gc_collect_main uprobe placed ('$probe')"
origin=$(q "SELECT value FROM stats WHERE key GLOB 'probe.*.origin' UNION
	SELECT value FROM meta WHERE key GLOB 'probe.*.origin'")
[ "$origin" = gc:python ] || fail "origin '$origin', want gc:python"
unpaired=$(q "SELECT sum(value) FROM quality WHERE source = 'probe' AND key IN
	('gc.begin_unmatched', 'gc.end_unmatched', 'gc.unrecorded')")
[ "$unpaired" = 0 ] || fail "quality: $unpaired probe hits made no pause"
read -r inside inside_ns <<< "$(q "SELECT count(*), coalesce(sum(duration), 0) FROM gc_pauses
	WHERE runtime = 'python' AND source = 'uprobe' AND start_ts >= $t0 AND start_ts < $t1" |
	tr '\t' ' ')"
echo "gc_pauses: $inside in the script's window totalling $inside_ns ns" \
     "($(pct "$inside_ns" "$gc_ns")% of the script's own $gc_ns ns)"
[ "$inside" -eq "$K" ] || fail "$inside pauses in the script's window, want $K"
within "$inside_ns" $((gc_ns * 80 / 100)) $((gc_ns * 120 / 100)) ||
	fail "pauses total $inside_ns ns, not within 20% of the script's $gc_ns ns"
echo "PASS: gc_python_fallback"
