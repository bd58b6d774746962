#!/bin/bash
# accept_idle.sh - acceptance on a real server (issue 10), a service that
# is simply not loaded: Debian's redis-server on 127.0.0.1 (a free port)
# gets one PING every 500 ms (redis-cli, not recorded) and nothing else.
# Recorded with default sources: perfcap-record -p REDIS -d 3.
#
# Ground truth, from the kernel's accounting and not from perfcap: the
# share of the server threads' time not spent on a CPU over the recording,
#   idle_share = 100 * (1 - cpu / (wall * threads))
# with cpu the delta of the 1st field of /proc/PID/task/*/schedstat (on-CPU
# ns) between the recorder's "recording" line and 3 s later, threads the
# tasks present at both reads (accept_lib.sh proc_window). Time runnable
# counts as idle in it; on an unloaded server it is microseconds.
#
# The report's first cause must be idle with idle_share (percent) within
# 20% of that, no other cause may score above it, and the diagnosis must
# state a confidence.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/accept_lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}"
require_bpf
skip() { echo "SKIP: $* (.ci/install-deps installs it)" >&2; exit 77; }
for b in redis-server redis-cli; do
	command -v $b > /dev/null || skip "$b not installed"
done
make_tmpdir
ACCEPT_TOL=20

start_redis   # lib.sh: port, rpid; stopped by pid at exit
redis-cli -p "$port" ping > /dev/null 2>&1 || fail "redis-server did not start: $(cat "$TMP/redis.log")"
# the trickle: 12 PINGs, one every 500 ms (6 s, past the recording)
(for _ in $(seq 12); do redis-cli -p "$port" ping > /dev/null 2>&1; sleep 0.5; done) &
bpid=$!   # cleanup_redis stops it

proc_window "$TMP/idle.perfcap.err" 3 "$TMP/truth" "$rpid" &
win=$!
record "$TMP/idle.perfcap" "$TMP/record.out" -p "$rpid" -d 3
wait $win || fail "proc_window failed"
kill "$bpid" 2> /dev/null
wait "$bpid" 2> /dev/null
bpid=
cat "$TMP/truth"

check_report "$TMP/idle.perfcap" idle idle_share percent \
	"$(truth "$TMP/truth" idle_pct)" \
	"check(all(x['score'] <= c['score'] for x in d['causes'][1:]),
      'no other cause scores above idle (%s)' % [(x['kind'], x['score']) for x in d['causes'][1:]])
check(d.get('confidence') in ('high', 'medium', 'low'), 'a confidence is stated (%s)' % d.get('confidence'))"
echo "PASS: accept_idle"
