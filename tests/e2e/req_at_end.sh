#!/bin/sh
# req_at_end.sh - the requests the kernel still holds when a recording ends
# reach the capture (record/sources/source_req.c, dump_open in
# bpf/req.bpf.c): each connection's batch not yet sent (up to 8 requests,
# sent when full or a second old) and its request still open.
#
# tcp_echo 0 1000 200000: one keep-alive connection whose server reads each
# request 200 ms after it arrived, so about 5 requests a second and a batch
# that holds the last second's. `perfcap-record -p SERVER -d 3` (the
# default sources) ends while the connection is busy. Checks:
#  - the recorder says nothing about requests it could not read, and STATS
#    have req.open_at_end >= 1 (the request answered and not yet followed by
#    the next one) and no req.open_at_end.failed;
#  - the connection's requests are numbered without a gap, at least 8 of
#    them (3 s at 5 a second, less the start's), and the last one started
#    within 0.6 s of the recording's end (without the batch held by the
#    kernel, the last second's would be missing).
. "$(dirname "$0")/lib.sh"

require_bpf
make_tmpdir
[ -x "$TCP_ECHO" ] || fail "TCP_ECHO not set"

"$TCP_ECHO" 0 1000 200000 > "$TMP/echo.out" 2>&1 &
echo_pid=$!
trap 'kill "$echo_pid" 2> /dev/null; wait "$echo_pid" 2> /dev/null; rm -rf "$TMP"' EXIT
wait_for "$TMP/echo.out" '^keepalive ' 5 || fail "tcp_echo did not start: $(cat "$TMP/echo.out")"
server=$(awk '/^server/ { print $2 }' "$TMP/echo.out")

"$PERFCAP_RECORD" -p "$server" -d 3 -o "$TMP/r.perfcap" 2> "$TMP/r.err" ||
	{ cat "$TMP/r.err" >&2; fail "perfcap-record failed"; }
cat "$TMP/r.err"
grep -q "could not be read" "$TMP/r.err" && fail "the recorder could not read what the kernel held"

q() { "$PERFCAP_ANALYZE" query --format csv "$TMP/r.perfcap" "$1" | tail -n +2 | tr -d '\r"'; }
open_at_end=$(q "SELECT value FROM stats WHERE key = 'req.open_at_end'")
failed=$(q "SELECT count(*) FROM stats WHERE key = 'req.open_at_end.failed'")
echo "STATS req.open_at_end $open_at_end, req.open_at_end.failed rows $failed"
[ "$failed" = 0 ] || fail "STATS req.open_at_end.failed: $(q "SELECT value FROM stats WHERE key = 'req.open_at_end.failed'")"
[ "${open_at_end:-0}" -ge 1 ] || fail "no open request read at the end (req.open_at_end ${open_at_end:-none})"

row=$(q "SELECT count(*), min(request), max(request),
	(SELECT CAST(value AS INTEGER) FROM stats WHERE key = 'record.end_ns') - max(start_ts)
	FROM requests WHERE pid = $server")
echo "server's requests: count, first, last, last start before the end (ns): $row"
IFS=, read -r n first last gap <<EOF
$row
EOF
[ "$n" -ge 8 ] || fail "$n requests, expected at least 8"
[ $((last - first + 1)) -eq "$n" ] || fail "requests $first..$last numbered with gaps ($n rows)"
[ -n "$gap" ] && [ "$gap" -le 600000000 ] ||
	fail "the last request started ${gap:-?} ns before the recording's end (more than 0.6 s)"
echo "PASS"
