#!/bin/bash
# gc_java.sh - GC pause windows from HotSpot's own probes: Debian's
# openjdk-17 libjvm.so has USDT hotspot:gc__begin / gc__end (no
# semaphore), fired around a collection's VM operation on the VM thread.
# A Java program (run from source) keeps a heap alive and calls
# System.gc() K times (with the serial collector: one full collection
# each, gc__begin's argument 1), timing each call itself with
# System.nanoTime (CLOCK_MONOTONIC, the recorder's clock). Then:
#   - exactly K gc__begin hits with arg0 = 1 (full collections);
#   - every gc__begin/gc__end hit pairs (no gc.* unmatched in quality),
#     every pause is on the thread named "VM Thread", runtime jvm;
#   - at least K pauses start inside the program's window, and the full
#     ones total at most the program's own System.gc() time (each pause is
#     inside a call; the call also waits for the safepoint and for the VM
#     thread to hand back) and at least half of it.
# With GC_MODE=auto (e2e-gc-java-auto) -e gc finds the probes in the
# JDK's libjvm.so from the java launcher's path (META probe.N.origin
# gc:jvm) and every check above holds the same.
# With GC_MODE=proxy (e2e-gc-java-proxy) nothing but cpu,sched is recorded
# (no GC probe): the analyzer infers the pauses from the scheduler
# (analyze/import/gc_proxy.c, gc_pauses.source proxy). Checks: pauses
# inferred in the program's window, totalling between half and 1.5x the
# program's own System.gc() time (an upper estimate: it includes reaching
# the safepoint), all rows 'proxy', and the diagnosis says "inferred".
# Skips loudly (exit 77) without that JDK or its probes.
set -u
. "$(dirname "$0")/lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}" "${CAPCHECK:?}"
require_bpf
make_tmpdir

JDK=/usr/lib/jvm/java-17-openjdk-amd64
LIBJVM=$JDK/lib/server/libjvm.so
K=${GC_COLLECTIONS:-20}
[ -x "$JDK/bin/java" ] && [ -r "$LIBJVM" ] ||
	{ echo "SKIP: $JDK is not installed (apt-get install openjdk-17-jdk-headless)" >&2; exit 77; }
for p in gc__begin gc__end; do
	if ! readelf -n "$LIBJVM" 2>/dev/null | grep -q "Name: $p\$"; then
		echo "SKIP: $LIBJVM has no USDT probe hotspot:$p (built without dtrace)" >&2
		exit 77
	fi
done

cat > "$TMP/Gc.java" <<'EOF'
public class Gc {
    public static void main(String[] a) {
        int k = Integer.parseInt(a[0]);
        Object[] keep = new Object[400000];
        for (int i = 0; i < keep.length; i++) keep[i] = new int[4];
        long gcNs = 0, t0 = System.nanoTime();
        for (int i = 0; i < k; i++) {
            for (int j = 0; j < 100000; j++) { Object[] x = new Object[2]; x[0] = x; }
            long s = System.nanoTime();
            System.gc();
            gcNs += System.nanoTime() - s;
        }
        long t1 = System.nanoTime();
        System.out.println("collections=" + k + " gc_ns=" + gcNs + " t0=" + t0 + " t1=" + t1);
    }
}
EOF

EVENTS="cpu,sched,usdt:$LIBJVM:hotspot:gc__begin,usdt:$LIBJVM:hotspot:gc__end"
[ "${GC_MODE:-usdt}" = auto ] && EVENTS=cpu,sched,gc
[ "${GC_MODE:-usdt}" = proxy ] && EVENTS=cpu,sched
echo "recording with -e $EVENTS"
timeout 180 "$PERFCAP_RECORD" --strict -o "$TMP/gc.perfcap" -e "$EVENTS" -- \
	"$JDK/bin/java" -XX:+UseSerialGC "$TMP/Gc.java" "$K" > "$TMP/java.out" 2> "$TMP/record.err" ||
	{ cat "$TMP/java.out" "$TMP/record.err"; fail "perfcap-record failed"; }
cat "$TMP/java.out" "$TMP/record.err"
val() { sed -n "s/.*\\b$1=\\([0-9]*\\).*/\\1/p" "$TMP/java.out"; }
gc_ns=$(val gc_ns) t0=$(val t0) t1=$(val t1)
[ "$(val collections)" = "$K" ] && [ -n "$gc_ns" ] || fail "no output from the Java program"

if [ "${GC_MODE:-usdt}" = auto ]; then
	origin=$("$CAPCHECK" meta "$TMP/gc.perfcap" probe.0.origin)
	path=$("$CAPCHECK" meta "$TMP/gc.perfcap" probe.0.path)
	echo "-e gc placed probe 0 in $path ($origin)"
	[ "$origin" = gc:jvm ] || fail "probe.0.origin '$origin', want gc:jvm"
fi
"$PERFCAP_ANALYZE" import -f "$TMP/gc.perfcap" -o "$TMP/gc.db" > /dev/null || fail "import failed"
q() { "$PERFCAP_ANALYZE" query "$TMP/gc.db" "$1" | tail -n +2; }
if [ "${GC_MODE:-usdt}" = proxy ]; then
	read -r inside total <<< "$(q "SELECT count(*), coalesce(sum(duration), 0) FROM gc_pauses
		WHERE start_ts >= $t0 AND start_ts < $t1" | tr '\t' ' ')"
	others=$(q "SELECT count(*) FROM gc_pauses WHERE source <> 'proxy' OR runtime <> 'jvm'")
	echo "inferred: $inside windows in the program's window totalling $total ns," \
	     "$(pct "$total" "$gc_ns")% of its $gc_ns ns in System.gc()"
	[ "$others" = 0 ] || fail "$others gc_pauses rows not from the proxy"
	[ "$inside" -ge 1 ] || fail "no pause inferred"
	within "$total" $((gc_ns / 2)) $((gc_ns * 3 / 2)) ||
		fail "inferred pauses total $total ns: not within 0.5-1.5x of $gc_ns ns"
	"$PERFCAP_ANALYZE" report "$TMP/gc.db" > "$TMP/report.txt"
	grep -q "GC pauses (inferred, no GC probes)" "$TMP/report.txt" ||
		{ sed -n '/^Summary/,/Confidence/p' "$TMP/report.txt"; fail "the diagnosis does not name the inferred pauses"; }
	sed -n '/^Summary/,/Confidence/p' "$TMP/report.txt"
	echo "PASS: gc_java (proxy)"
	exit 0
fi
full=$(q "SELECT count(*) FROM probe_hits h JOIN probes p USING (probe_id)
	WHERE p.name = 'hotspot:gc__begin' AND h.arg0 = 1")
hits=$(q "SELECT hits FROM probes WHERE name = 'hotspot:gc__begin'")
echo "gc__begin: $hits hits, $full of them full collections (want $K)"
[ "$full" -eq "$K" ] || fail "$full full collections, want $K"
pauses=$(q "SELECT count(*) FROM gc_pauses WHERE runtime = 'jvm'")
[ "$pauses" -eq "$hits" ] || fail "gc_pauses: $pauses rows for $hits gc__begin hits"
unpaired=$(q "SELECT sum(value) FROM quality WHERE source = 'probe' AND key IN
	('gc.begin_unmatched', 'gc.end_unmatched', 'gc.unrecorded')")
[ "$unpaired" = 0 ] || fail "quality: $unpaired GC probe hits made no pause"
threads=$(q "SELECT group_concat(DISTINCT (SELECT comm FROM threads t WHERE t.tid = g.tid
	ORDER BY t.ts DESC LIMIT 1)) FROM gc_pauses g")
[ "$threads" = "VM Thread" ] || fail "pauses on threads '$threads', want the VM Thread"
read -r inside full_ns <<< "$(q "SELECT count(*), sum(g.duration) FROM gc_pauses g
	WHERE g.start_ts >= $t0 AND g.start_ts < $t1" | tr '\t' ' ')"
echo "gc_pauses: $pauses on the VM Thread; $inside in the program's window totalling" \
     "$full_ns ns, $(pct "$full_ns" "$gc_ns")% of its $gc_ns ns in System.gc()"
[ "$inside" -ge "$K" ] || fail "$inside pauses in the program's window, want at least $K"
within "$full_ns" $((gc_ns / 2)) "$gc_ns" ||
	fail "pauses in the window total $full_ns ns: not between half and all of $gc_ns ns"
"$PERFCAP_ANALYZE" report "$TMP/gc.db" | sed -n '/^Summary/,/Confidence/p'
echo "PASS: gc_java"
