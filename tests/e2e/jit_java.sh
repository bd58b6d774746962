#!/bin/bash
# jit_java.sh - end to end with real eBPF and Debian's openjdk-17: Java
# frames are named through the perf map HotSpot writes at exit
# (-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit), read by the
# recorder at the end of the recording from the file the exited process
# left; -XX:+PreserveFramePointer lets the unwinder walk through compiled
# code (it has no .eh_frame). Two recordings with default options: of the
# command (`-- java ...`), and of a running JVM (`-p PID` until it exits);
# then a JVM that outlives a `-p PID -d 4` recording, whose map is written
# during it by `jcmd PID Compiler.perfmap`; then a JVM without any perf map
# flag (of another user) asked by `--jvm-perfmap` at the end of a `-p`
# recording, and one that refuses attach (named, counted, capture written).
# In each, >= 80% of the JVM's user samples in JIT code have all their JIT
# frames named, JitHot.spin is on >= 60% of its user samples and is the
# report's top function; and the stacks go through the JIT code to
# JavaMain (libjli), not cut at the compiled frame.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/jit_lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}"
require_bpf
{ command -v java && command -v javac; } > /dev/null ||
	{ echo "SKIP: no java/javac (apt-get install openjdk-17-jdk-headless; .ci/install-deps)" >&2; exit 77; }
make_tmpdir
javac -d "$TMP" "$(dirname "$(readlink -f "$0")")/../workloads/JitHot.java" || fail "javac failed"
java -version 2>&1 | head -1
jvm=(java -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -XX:+PreserveFramePointer
     -cp "$TMP" JitHot)

# through_to_main DB PID: share of the samples with spin on the stack whose
# stack also reaches JavaMain
through_to_main() {
	local n
	n=$("$PERFCAP_ANALYZE" query --format csv "$1" "SELECT count(*) FROM samples c WHERE c.pid = $2
		AND EXISTS (SELECT 1 FROM stack_frames sf JOIN frames f USING (frame_id)
			WHERE sf.stack_id = c.ustack_id AND f.function = 'JavaMain')
		AND EXISTS (SELECT 1 FROM stack_frames sf JOIN frames f USING (frame_id)
			WHERE sf.stack_id = c.ustack_id AND f.function LIKE '%JitHot.spin%')" |
		tail -n +2 | tr -d '\r"')
	echo "  stacks with JitHot.spin reaching JavaMain: $n of $hot"
	within "$(pct "${n:-0}" "$hot")" 80 100 || fail "stacks are cut at the JIT frames: $n of $hot reach JavaMain"
}

# 1. the command, recorded from its start to its exit
timeout 60 "$PERFCAP_RECORD" -o "$TMP/cmd.perfcap" -- "${jvm[@]}" 3 \
	> "$TMP/cmd.out" 2> "$TMP/cmd.err" || { cat "$TMP/cmd.err" >&2; fail "perfcap-record -- java failed"; }
pid=$(sed -n 's/^pid=\([0-9]*\) .*/\1/p' "$TMP/cmd.out")
[ -n "$pid" ] || fail "java printed no pid"
"$PERFCAP_ANALYZE" import "$TMP/cmd.perfcap" -o "$TMP/cmd.db" > /dev/null 2>&1 || fail "import failed"
rm -f "/tmp/perf-$pid.map"   # the capture carries the names
echo "-- java (pid $pid):"
jit_measure "$TMP/cmd.db" "$pid" JitHot.spin
jit_check "-- java" "JitHot.spin"
through_to_main "$TMP/cmd.db" "$pid"

# 2. a running JVM, -p PID until it exits (its map is written at the exit)
"${jvm[@]}" 4 > "$TMP/p.out" &
jpid=$!
trap 'kill $jpid 2> /dev/null; wait $jpid 2> /dev/null; rm -f "/tmp/perf-$jpid.map"; rm -rf "$TMP"' EXIT
sleep 1
timeout 60 "$PERFCAP_RECORD" -p "$jpid" -o "$TMP/p.perfcap" > /dev/null 2> "$TMP/p.err" ||
	{ cat "$TMP/p.err" >&2; fail "perfcap-record -p failed"; }
wait "$jpid"
"$PERFCAP_ANALYZE" import "$TMP/p.perfcap" -o "$TMP/p.db" > /dev/null 2>&1 || fail "import failed"
echo "-p $jpid:"
jit_measure "$TMP/p.db" "$jpid" JitHot.spin
jit_check "-p PID" "JitHot.spin"
through_to_main "$TMP/p.db" "$jpid"
rm -f "/tmp/perf-$jpid.map"

# 3. a JVM that outlives the recording: no map at its exit in time, so
# `jcmd PID Compiler.perfmap` writes one while the recording runs
"${jvm[@]}" 10 > "$TMP/j.out" &
jpid=$!
sleep 1
timeout 60 "$PERFCAP_RECORD" -d 4 -p "$jpid" -o "$TMP/j.perfcap" > /dev/null 2> "$TMP/j.err" &
rpid=$!
wait_for "$TMP/j.err" "recording pid" 30 || { cat "$TMP/j.err"; fail "the recorder did not start"; }
sleep 1
timeout 30 jcmd "$jpid" Compiler.perfmap > /dev/null || fail "jcmd $jpid Compiler.perfmap failed"
wait "$rpid" || { cat "$TMP/j.err" >&2; fail "perfcap-record -p -d 4 failed"; }
kill -0 "$jpid" 2> /dev/null || fail "the JVM exited before the recording ended"
"$PERFCAP_ANALYZE" import "$TMP/j.perfcap" -o "$TMP/j.db" > /dev/null 2>&1 || fail "import failed"
echo "-p $jpid -d 4, jcmd Compiler.perfmap:"
jit_measure "$TMP/j.db" "$jpid" JitHot.spin
jit_check "jcmd" "JitHot.spin"
through_to_main "$TMP/j.db" "$jpid"
kill "$jpid" 2> /dev/null; wait "$jpid" 2> /dev/null
rm -f "/tmp/perf-$jpid.map"

# 4. a JVM started without any perf map flag, of another user when there
# is one (HotSpot talks to peers of its own uid only), still running when
# the recording ends: --jvm-perfmap asks it over its attach socket
as_user=()
id nobody > /dev/null 2>&1 && as_user=(setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups --)
chmod 755 "$TMP"
"${as_user[@]}" java -XX:+PreserveFramePointer -cp "$TMP" JitHot 10 > "$TMP/a.out" 2>&1 &
jpid=$!
sleep 1
timeout 60 "$PERFCAP_RECORD" --jvm-perfmap -d 4 -p "$jpid" -o "$TMP/a.perfcap" > /dev/null \
	2> "$TMP/a.err" || { cat "$TMP/a.err" >&2; fail "perfcap-record --jvm-perfmap failed"; }
kill -0 "$jpid" 2> /dev/null || fail "the JVM exited before the recording ended"
written=$("$PERFCAP_ANALYZE" query --format csv "$TMP/a.perfcap" \
	"SELECT value FROM stats WHERE key = 'jit.jvm_perfmap.written'" | tail -n +2 | tr -d '\r"')
[ "$written" = 1 ] || { cat "$TMP/a.err" >&2; fail "jit.jvm_perfmap.written = '$written', want 1"; }
"$PERFCAP_ANALYZE" import "$TMP/a.perfcap" -o "$TMP/a.db" > /dev/null 2>&1 || fail "import failed"
echo "-p $jpid -d 4 --jvm-perfmap (JVM of ${as_user[*]:-root}, no perf map flags):"
jit_measure "$TMP/a.db" "$jpid" JitHot.spin
jit_check "--jvm-perfmap" "JitHot.spin"
kill "$jpid" 2> /dev/null; wait "$jpid" 2> /dev/null
rm -f "/tmp/perf-$jpid.map"

# 5. a JVM that refuses attach: the failure is named and counted, the
# capture is still written
java -XX:+DisableAttachMechanism -cp "$TMP" JitHot 20 > "$TMP/d.out" 2>&1 &
jpid=$!
sleep 1
timeout 60 "$PERFCAP_RECORD" --jvm-perfmap -d 2 -p "$jpid" -o "$TMP/d.perfcap" > /dev/null \
	2> "$TMP/d.err" || { cat "$TMP/d.err" >&2; fail "perfcap-record failed on a JVM refusing attach"; }
kill "$jpid" 2> /dev/null; wait "$jpid" 2> /dev/null
grep -q "JVM $jpid did not write its perf map" "$TMP/d.err" ||
	{ cat "$TMP/d.err" >&2; fail "no warning naming the JVM that refused"; }
failed=$("$PERFCAP_ANALYZE" query --format csv "$TMP/d.perfcap" \
	"SELECT value FROM stats WHERE key = 'jit.jvm_perfmap.failed'" | tail -n +2 | tr -d '\r"')
[ "$failed" = 1 ] || fail "jit.jvm_perfmap.failed = '$failed', want 1"
echo "refusing JVM: $(grep -o 'did not write its perf map: .*' "$TMP/d.err")"
echo "PASS"
