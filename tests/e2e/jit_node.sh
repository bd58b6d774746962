#!/bin/bash
# jit_node.sh - end to end with real eBPF and Debian's (or NodeSource's)
# node: JavaScript frames are named through the perf map that
# `node --perf-basic-prof` writes while it runs (/tmp/perf-PID.map). Two
# recordings with default options: of the command (`-- node ...`), and of a
# running node (`-p PID -d 2`, the process outlives the recording). In each,
# >= 80% of the node process's user samples in JIT code have all their JIT
# frames named, the hot function hotLoop is on >= 60% of its user samples
# and is the report's top function by self samples.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/jit_lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}"
require_bpf
command -v node > /dev/null || { echo "SKIP: no node (apt-get install nodejs; .ci/install-deps)" >&2; exit 77; }
make_tmpdir
script=$(dirname "$(readlink -f "$0")")/../workloads/jit_hot.js
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
echo "PASS"
