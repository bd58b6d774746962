#!/bin/sh
# req_windows.sh - requests followed in time windows (--req-rate; record/sources/source_req.c, bpf/req.bpf.c): above the
# budget, a request is followed when its first read falls in a window at
# the start of each second, to its end; a socket's state from an earlier
# window is trusted only if its TCP positions did not move meanwhile.
#
# tcp_echo 0 240000: one keep-alive connection, requests of 100 bytes
# answered by 300, as fast as loopback goes (tens of thousands a second):
# enough to outlast the recording's first (whole) second however late the
# recorder starts (120,000 could end within it on a loaded machine, and
# then no window opens).
# `perfcap-record --req-rate 1000 -p SERVER -d 3`, imported:
#  - META req.windows.budget 1000; STATS: at least one window, the time
#    covered less than the recording, requests started = closed + cut;
#  - every request followed is whole: one read of 100 bytes, one write of
#    300 (a state carried over a gap wrongly would start one mid-way or
#    merge two);
#  - the followed requests per covered second are the load's rate (the
#    client's own count, within 35%: the windows sample time, not calls);
#  - the report's Data quality says the requests were followed in windows.
. "$(dirname "$0")/lib.sh"

require_bpf
make_tmpdir
[ -x "$TCP_ECHO" ] || fail "TCP_ECHO not set"

"$TCP_ECHO" 0 240000 > "$TMP/echo.out" 2>&1 &
echo_pid=$!
trap 'kill "$echo_pid" 2> /dev/null; wait "$echo_pid" 2> /dev/null; rm -rf "$TMP"' EXIT
wait_for "$TMP/echo.out" '^keepalive ' 5 || fail "tcp_echo did not start: $(cat "$TMP/echo.out")"
server=$(awk '/^server/ { print $2 }' "$TMP/echo.out")

"$PERFCAP_RECORD" --req-rate 1000 -p "$server" -d 3 -o "$TMP/r.perfcap" 2> "$TMP/r.err" ||
	{ cat "$TMP/r.err" >&2; fail "perfcap-record failed"; }
cat "$TMP/r.err"
grep -q "not recording 'req'" "$TMP/r.err" && fail "the req source did not load"
wait "$echo_pid" || fail "tcp_echo failed"
trap 'rm -rf "$TMP"' EXIT
rate=$(awk '/^requests / { printf "%.0f", $6 + 0 }' "$TMP/echo.out")
echo "tcp_echo: $(grep '^requests ' "$TMP/echo.out")"

q() { "$PERFCAP_ANALYZE" query --format csv "$TMP/r.perfcap" "$1" | tail -n +2 | tr -d '\r"'; }
stat() { q "SELECT CAST(value AS INTEGER) FROM stats WHERE chunk = 'stats' AND key = '$1'"; }
budget=$(q "SELECT value FROM meta WHERE key = 'req.windows.budget'")
windows=$(stat req.windows.count) covered=$(stat req.windows.covered_ns) span=$(stat req.windows.span_ns)
started=$(stat req.started) closed=$(stat req.closed) cut=$(stat req.cut)
echo "budget $budget, windows $windows, covered $covered of $span ns, started $started closed $closed cut $cut"
[ "$budget" = 1000 ] || fail "META req.windows.budget '$budget', expected 1000"
[ "${windows:-0}" -ge 1 ] || fail "no window (the load did not pass the budget?)"
[ "$covered" -lt "$span" ] || fail "windows covered $covered ns of $span: the whole recording"
[ "$started" -eq $((closed)) ] || [ "$started" -le $((closed + 1)) ] ||
	fail "requests started $started, closed $closed: some never closed"

row=$(q "SELECT count(*), sum(reads = 1 AND writes = 1 AND bytes_in = 100 AND bytes_out = 300)
	FROM requests WHERE pid = $server AND origin <> 'connected'")
echo "server's requests: followed, whole: $row"
IFS=, read -r n whole <<EOF
$row
EOF
[ "$n" -gt 0 ] || fail "no request followed"
if [ "$whole" -ne "$n" ]; then   # which, and where they fell
	q "SELECT window_ts, start_ts, end_ts, reads, writes, bytes_in, bytes_out, tids
		FROM requests WHERE pid = $server AND origin <> 'connected'
		AND NOT (reads = 1 AND writes = 1 AND bytes_in = 100 AND bytes_out = 300)" | head -5
	q "SELECT start_ts, open_ns, period_ns, snap_start, snap_end FROM request_windows"
	fail "$((n - whole)) of $n requests not one read of 100 bytes and one write of 300"
fi

per_s=$(( n * 1000000000 / covered ))
echo "followed per covered second: $per_s, the load's rate: $rate"
within "$per_s" $((rate * 65 / 100)) $((rate * 135 / 100)) ||
	fail "followed $per_s a covered second, the load ran at $rate"

"$PERFCAP_ANALYZE" report "$TMP/r.perfcap" > "$TMP/report.txt" 2> /dev/null ||
	fail "report failed"
grep "Requests followed:" "$TMP/report.txt" || fail "the report does not say the requests were followed in windows"
echo "PASS"
