#!/bin/bash
# jit_node.sh - end to end with real eBPF and Debian's (or NodeSource's)
# node: JavaScript frames are named through the perf map that
# `node --perf-basic-prof` writes while it runs (/tmp/perf-PID.map). Two
# recordings with default options: of the command (`-- node ...`), and of a
# running node (`-p PID -d 2`, the process outlives the recording). In each,
# >= 80% of the node process's user samples in JIT code have all their JIT
# frames named, the hot function hotLoop is on >= 60% of its user samples
# and is the report's top function by self samples. 3. A stale map: a node
# without --perf-basic-prof whose pid has an older /tmp/perf-PID.map (left
# by an earlier process with that pid) must not get that file's names.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/jit_lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}"
require_bpf
command -v node > /dev/null || { echo "SKIP: no node (apt-get install nodejs; .ci/install-deps)" >&2; exit 77; }
make_tmpdir
script=$(dirname "$(readlink -f "$0")")/../workloads/jit_hot.js
PERFCAP_RECORD=$(readlink -f "$PERFCAP_RECORD") PERFCAP_ANALYZE=$(readlink -f "$PERFCAP_ANALYZE")
cd "$TMP"   # node --perf-basic-prof also leaves isolate-*-v8.log files in its cwd
echo "node $(node --version)"

# 1. the command, recorded from its start to its exit
timeout 60 "$PERFCAP_RECORD" -o "$TMP/cmd.perfcap" -- node --perf-basic-prof "$script" 3 \
	> "$TMP/cmd.out" 2> "$TMP/cmd.err" || { cat "$TMP/cmd.err" >&2; fail "perfcap-record -- node failed"; }
pid=$(sed -n 's/^pid=\([0-9]*\) .*/\1/p' "$TMP/cmd.out")
[ -n "$pid" ] || fail "node printed no pid"
"$PERFCAP_ANALYZE" import "$TMP/cmd.perfcap" -o "$TMP/cmd.db" > /dev/null 2>&1 || fail "import failed"
rm -f "/tmp/perf-$pid.map"   # the capture carries the names
echo "-- node (pid $pid):"
jit_measure "$TMP/cmd.db" "$pid" hotLoop
jit_check "-- node" "hotLoop"

# 2. a running node, -p PID for 2 s
node --perf-basic-prof "$script" 6 > "$TMP/p.out" &
npid=$!
trap 'kill $npid 2> /dev/null; wait $npid 2> /dev/null; rm -f "/tmp/perf-$npid.map"; rm -rf "$TMP"' EXIT
sleep 1
timeout 60 "$PERFCAP_RECORD" -d 2 -p "$npid" -o "$TMP/p.perfcap" > /dev/null 2> "$TMP/p.err" ||
	{ cat "$TMP/p.err" >&2; fail "perfcap-record -p failed"; }
kill -0 "$npid" 2> /dev/null || echo "(note: node exited before the recording ended)"
"$PERFCAP_ANALYZE" import "$TMP/p.perfcap" -o "$TMP/p.db" > /dev/null 2>&1 || fail "import failed"
echo "-p $npid:"
jit_measure "$TMP/p.db" "$npid" hotLoop
jit_check "-p PID" "hotLoop"
kill $npid 2> /dev/null; wait $npid 2> /dev/null; rm -f "/tmp/perf-$npid.map"

# 3. a stale map: entries covering the anonymous executable memory of a
# node that writes no map, with an mtime before the process started (with
# a fresh mtime the same file names 12 frames stale_entry)
node "$script" 4 > "$TMP/s.out" &
npid=$!
sleep 1
while read -r range perms _ _ _ file; do
	[ -z "$file" ] && [ "${perms:2:1}" = x ] || continue
	printf '%s %x stale_entry\n' "${range%-*}" $((0x${range#*-} - 0x${range%-*}))
done < "/proc/$npid/maps" > "/tmp/perf-$npid.map"
[ -s "/tmp/perf-$npid.map" ] || fail "node has no anonymous executable memory"
touch -d '-1 hour' "/tmp/perf-$npid.map"
timeout 60 "$PERFCAP_RECORD" -e cpu -d 1 -p "$npid" -o "$TMP/s.perfcap" > /dev/null 2> "$TMP/s.err" ||
	{ cat "$TMP/s.err" >&2; fail "perfcap-record -p (stale map) failed"; }
grep "older than the process" "$TMP/s.err" || { cat "$TMP/s.err"; fail "no warning on the stale map"; }
"$PERFCAP_ANALYZE" import "$TMP/s.perfcap" -o "$TMP/s.db" > /dev/null 2>&1 || fail "import failed"
stale=$("$PERFCAP_ANALYZE" query --format csv "$TMP/s.db" "SELECT (SELECT value FROM stats
	WHERE key = 'jit.perfmaps.stale') || ' ' || (SELECT count(*) FROM frames
	WHERE function = 'stale_entry') AS r" | tail -n +2 | tr -d '\r"')
echo "stale map: jit.perfmaps.stale, frames named from it: $stale"
[ "$stale" = "1 0" ] || fail "stale map: '$stale', want '1 0'"
echo "PASS"
