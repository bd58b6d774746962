#!/bin/sh
# req_windows_scale.sh - what the requests followed in windows stand for
# (--req-rate): each followed request of a windowed
# second weighs the second's length over its window's (REQUEST_WINDOW
# records, format 1.10; table request_windows), so the weighted count is
# the load's whole count.
#
# `perfcap-record --req-rate 1000 -- tcp_echo 0 30000 100`: the
# command is recorded from its start to its end, so the server answers
# exactly 30,000 requests on its keep-alive connection and 20 on short ones
# while recorded. It sleeps 100 us before reading each request, so they
# come at a steady rate (about 5,000 a second) whichever CPUs the two
# processes run on (a ping-pong as fast as loopback goes changes speed
# several times over when the scheduler moves them): the first second is
# followed whole, then windows of about a fifth of each second.
#  - the hot programs are detached as soon as a window's requests are
#    done: attached no more than 20 ms a window beyond the windows
#    themselves (STATS req.windows.attached_ns, covered_ns; a request
#    here takes well under a millisecond, the drain looks every 2 ms);
#  - request_windows: at least two windows, each open less than its
#    period, and each row's `followed` is the number of requests that name
#    it (requests.window_ts);
#  - no window overlaps the next; every request naming one started in its
#    open part;
#  - the server's requests, each weighted by its window, sum to
#    30,020 within 10% (the windows sample time: a steady load's count is
#    found within a few percent; 10% leaves room for a busy host);
#  - the report's Data quality gives that estimate, and its latency row
#    weighs them too: both sides' 60,040 within 10%, the followed ones
#    named, percentiles weighted;
#  - a diff against the same load recorded whole counts 30,020 requests
#    served within 10% on both sides (it normalizes CPU per request);
#  - pool_utilisation averages over the time requests were followed in:
#    the server's mean queue depth is the whole recording's within 25%;
#  - OpenMetrics' request histograms count them by weight: 30,020 within
#    10%.
. "$(dirname "$0")/lib.sh"

require_bpf
make_tmpdir
[ -x "$TCP_ECHO" ] || fail "TCP_ECHO not set"

"$PERFCAP_RECORD" --req-rate 1000 -o "$TMP/r.perfcap" -- "$TCP_ECHO" 0 30000 100 \
	> "$TMP/echo.out" 2> "$TMP/r.err" || { cat "$TMP/r.err" >&2; fail "perfcap-record failed"; }
cat "$TMP/r.err"
grep -q "not recording 'req'" "$TMP/r.err" && fail "the req source did not load"
echo "tcp_echo: $(grep '^requests ' "$TMP/echo.out")"
server=$(awk '/^server/ { print $2 }' "$TMP/echo.out")

q() { "$PERFCAP_ANALYZE" query --format csv "$TMP/r.perfcap" "$1" | tail -n +2 | tr -d '\r"'; }
q "SELECT start_ts, open_ns, period_ns, started, followed, weight FROM request_windows"
windows=$(q "SELECT count(*) FROM request_windows WHERE open_ns > 0 AND open_ns < period_ns")
[ "${windows:-0}" -ge 2 ] || fail "$windows windows open less than their period, expected 2 or more"

bad=$(q "SELECT count(*) FROM request_windows w WHERE followed <>
	(SELECT count(*) FROM requests r WHERE r.window_ts = w.start_ts)")
[ "$bad" = 0 ] || fail "$bad windows whose followed count is not their requests'"
bad=$(q "SELECT count(*) FROM request_windows a JOIN request_windows b
	ON b.start_ts > a.start_ts AND b.start_ts < a.start_ts + a.period_ns")
[ "$bad" = 0 ] || fail "$bad windows overlap the next"
bad=$(q "SELECT count(*) FROM requests r JOIN request_windows w ON w.start_ts = r.window_ts
	WHERE r.start_ts < w.start_ts OR r.start_ts >= w.start_ts + w.open_ns")
[ "$bad" = 0 ] || fail "$bad requests name a window they did not start in the open part of"

stat() { q "SELECT value FROM stats WHERE key = '$1'"; }
attached=$(stat req.windows.attached_ns) covered=$(stat req.windows.covered_ns)
nwin=$(stat req.windows.count)
echo "hot programs attached ${attached:-?} ns, windows open ${covered:-?} ns, $nwin windows"
[ -n "$attached" ] && [ "$attached" -ge "$covered" ] ||
	fail "req.windows.attached_ns '$attached' missing or below covered_ns $covered"
[ $((attached - covered)) -le $((nwin * 20000000)) ] ||
	fail "programs attached $((attached - covered)) ns beyond $nwin windows: more than 20 ms each"

row=$(q "SELECT count(*), CAST(round(total(ifnull(w.weight, 1))) AS INTEGER) FROM requests r
	LEFT JOIN request_windows w ON w.start_ts = r.window_ts
	WHERE r.pid = $server AND r.origin <> 'connected'")
IFS=, read -r followed estimated <<EOF
$row
EOF
echo "server's requests: $followed followed, standing for $estimated (the load: 30020)"
[ "$followed" -lt 30020 ] || fail "every request followed: no window"
within "$estimated" 27018 33022 || fail "the weighted count $estimated is not 30,020 within 10%"

"$PERFCAP_ANALYZE" report "$TMP/r.perfcap" > "$TMP/report.txt" 2> /dev/null || fail "report failed"
grep "Requests followed:" "$TMP/report.txt" | grep "followed stand for about" ||
	fail "the report's Data quality does not give what the followed requests stand for"

# the latency row weighs them: both sides' requests (the client's 30,020
# too), the followed ones named, percentiles weighted
all=$(q "SELECT count(*) FROM requests")
"$PERFCAP_ANALYZE" report --json "$TMP/r.perfcap" > "$TMP/report.json" 2> /dev/null ||
	fail "report --json failed"
row=$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["latency"]["requests"]
print(r["count"], r.get("followed", -1), int(r.get("weighted_percentiles", False)), r["p50_ns"])' \
	"$TMP/report.json") || fail "no latency.requests in the JSON report"
read -r count jfollowed wpct p50 <<EOF
$row
EOF
echo "report: requests $count (followed $jfollowed, weighted percentiles $wpct, p50 $p50 ns)"
[ "$jfollowed" = "$all" ] || fail "latency.requests.followed $jfollowed, the table has $all"
within "$count" 54036 66044 || fail "latency.requests.count $count is not 60,040 within 10%"
[ "$wpct" = 1 ] || fail "the percentiles were not weighted"
grep -q "^  weighted: the " "$TMP/report.txt" || fail "the text report does not say the row is weighted"

# a diff against the same load followed whole compares per request: both
# sides' requests served are 30,020 within 10%
"$PERFCAP_RECORD" --req-rate 0 -o "$TMP/whole.perfcap" -- "$TCP_ECHO" 0 30000 100 > "$TMP/w.out" 2> "$TMP/w.err" ||
	{ cat "$TMP/w.err" >&2; fail "perfcap-record (whole) failed"; }
"$PERFCAP_ANALYZE" diff --json "$TMP/whole.perfcap" "$TMP/r.perfcap" > "$TMP/diff.json" 2> /dev/null
[ -s "$TMP/diff.json" ] || fail "diff --json wrote nothing"
sides=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(d["base"]["requests"], d["new"]["requests"])' "$TMP/diff.json") || fail "no base/new requests in the diff"
read -r whole windowed <<EOF
$sides
EOF
echo "diff: requests served, whole $whole, windows $windowed"
within "$whole" 27018 33022 || fail "the whole recording's diff side has $whole requests"
within "$windowed" 27018 33022 || fail "the windowed recording's diff side has $windowed requests"

# the pool's averages are over the time requests were followed in: the
# server's mean queue depth (about 0.9: each request waits 100 us before
# it is read) as in the whole recording, within 25%
wserver=$(awk '/^server/ { print $2 }' "$TMP/w.out")
depth() {
	"$PERFCAP_ANALYZE" query --format csv "$1" "SELECT CAST(round(avg(queue_depth_avg) * 1000)
		AS INTEGER) AS depth FROM pool_utilisation WHERE pid = $2" | tail -n +2 | tr -d '\r"'
}
dw=$(depth "$TMP/r.perfcap" "$server") dh=$(depth "$TMP/whole.perfcap" "$wserver")
echo "pool: mean queue depth (x1000) windows $dw, whole $dh"
[ "${dh:-0}" -gt 0 ] || fail "no pool_utilisation of the whole recording's server"
within "${dw:-0}" $((dh * 75 / 100)) $((dh * 125 / 100)) ||
	fail "the windowed recording's mean queue depth $dw is not the whole one's $dh within 25%"

# OpenMetrics counts them by weight too: the server's last (cumulative)
# request count is 30,020 within 10%
"$PERFCAP_ANALYZE" export -f openmetrics -o "$TMP/r.om" "$TMP/r.perfcap" 2> /dev/null ||
	fail "export -f openmetrics failed"
om=$(grep "^perfcap_request_service_seconds_count{pid=\"$server\"" "$TMP/r.om" | tail -1 |
	awk '{ print $2 }')
echo "openmetrics: the server's requests $om"
within "${om:-0}" 27018 33022 || fail "OpenMetrics counts $om requests of the server, not 30,020"
echo "PASS"
