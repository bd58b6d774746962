#!/bin/bash
# stacks_redis.sh - issue 11 on a real server built without frame pointers:
# Debian's redis-server on 127.0.0.1 (a free port), recorded with
# perfcap-record -p PID -d 3 while redis-benchmark runs a bounded get/set
# load. At least 90% of the server's CPU samples must have a complete user
# stack (unwound to _start / clone), and the report must name redis's own
# event loop (aeMain) above main. Skips when redis is not installed.
set -u
. "$(dirname "$0")/lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}"
require_bpf
skip() { echo "SKIP: $* (apt-get install redis-server redis-tools sqlite3)" >&2; exit 77; }
command -v redis-server > /dev/null && command -v redis-benchmark > /dev/null \
	|| skip "redis-server / redis-benchmark not installed"
command -v sqlite3 > /dev/null || skip "sqlite3 not installed"
make_tmpdir

start_redis   # lib.sh: port, rpid; stopped by pid at exit

redis-benchmark -p "$port" -n 2000000 -t get,set -q > "$TMP/bench.out" 2>&1 &
bpid=$!
"$PERFCAP_RECORD" -e cpu -p "$rpid" -d 3 -o "$TMP/run.perfcap" \
	> "$TMP/record.out" 2> "$TMP/record.err" \
	|| { cat "$TMP/record.err" >&2; fail "perfcap-record failed"; }
cat "$TMP/record.err"
kill "$bpid" 2> /dev/null
bpid=

"$PERFCAP_ANALYZE" import "$TMP/run.perfcap" -o "$TMP/run.db" > /dev/null \
	|| fail "import failed"
read -r total complete < <(sqlite3 -separator ' ' "$TMP/run.db" "
	SELECT COUNT(*), SUM(u.stop = 'end')
	FROM samples s LEFT JOIN user_stack_unwinds u ON u.stack_id = s.ustack_id
	WHERE s.pid = $rpid")
echo "redis-server: ${complete:-0} of ${total:-0} CPU samples with a complete user stack"
[ "${total:-0}" -ge 30 ] || fail "only ${total:-0} samples of redis-server"
[ $((100 * ${complete:-0} / total)) -ge 90 ] || fail "complete stacks below 90%"
"$PERFCAP_ANALYZE" report --folded "$TMP/run.perfcap" > "$TMP/folded" || fail "report --folded failed"
grep -q ';main;aeMain;' "$TMP/folded" || { head -5 "$TMP/folded"; fail "no main;aeMain chain"; }
# named as started: Debian's redis-server is a symlink to redis-check-rdb
"$PERFCAP_ANALYZE" report "$TMP/run.perfcap" > "$TMP/report.txt" || fail "report failed"
# aeMain's frames belong to redis-server's binary (the report's label;
# asked of the database: the report shows the top stacks' 24 innermost
# frames, and deep kernel stacks of the network path can hide aeMain)
modules=$(sqlite3 "$TMP/run.db" "SELECT group_concat(DISTINCT module) FROM frames WHERE name = 'aeMain'")
case "$modules" in
*/redis-server | redis-server) ;;
*) fail "aeMain not in [redis-server]: in '$modules'" ;;
esac
grep -q '\[redis-check-rdb\]' "$TMP/report.txt" && fail "the report names [redis-check-rdb]"
echo "PASS"
