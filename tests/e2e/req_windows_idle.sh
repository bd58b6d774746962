#!/bin/sh
# req_windows_idle.sh - the req source's windows on a server whose clients
# keep connections open and idle, as real clients do (--req-rate): a
# followed request stays open until its connection's next one starts, so
# a drain that waited for every followed request to close would never end
# and the windows would save nothing. After 100 ms a drain ends once every
# followed request got an answer (STATS req.windows.idle_ends); such a
# request is completed at its connection's next call when nothing moved on
# the socket meanwhile (req.bpf.c settle_earlier), and cut (counted) when
# its answer went on unseen.
#
# idle_keepalive.py 4 5: one busy keep-alive connection (requests of 100
# bytes answered by 300, back to back) and 5 connections that each ask
# once (40 bytes, answered by 120) at the start, sit idle for 3 s and ask
# again. Recorded with `--req-rate 200 -p SERVER` from before the clients
# start (they wait for a signal) to the server's exit:
#  - the windows end: at least one drain ended with answered requests
#    open (req.windows.idle_ends), and the windows covered less than half
#    of the recording;
#  - the 5 idle connections' first requests (followed whole: the first
#    second is) are in the capture, complete (40 bytes in, 120 out), not
#    cut: 5 or more such requests;
#  - every request followed is whole (100/300 or 40/120): none merged;
#  - the busy connection's requests, each weighted by its window, are the
#    client's count within 15%.
. "$(dirname "$0")/lib.sh"

require_bpf
make_tmpdir
[ -n "${IDLE_KEEPALIVE:-}" ] || fail "IDLE_KEEPALIVE not set"

IDLE_KEEPALIVE_WAIT=1 python3 "$IDLE_KEEPALIVE" 4 5 > "$TMP/load.out" 2>&1 &
load=$!
trap 'kill "$load" 2> /dev/null; wait "$load" 2> /dev/null; rm -rf "$TMP"' EXIT
wait_for "$TMP/load.out" '^client ' 5 || fail "idle_keepalive.py did not start: $(cat "$TMP/load.out")"
server=$(awk '/^server/ { print $2 }' "$TMP/load.out")
client=$(awk '/^client/ { print $2 }' "$TMP/load.out")

# recorded until the server exits, after its clients; they start once the
# recorder records
"$PERFCAP_RECORD" --req-rate 200 -p "$server" -o "$TMP/r.perfcap" 2> "$TMP/r.err" &
rec=$!
wait_for "$TMP/r.err" "recording" 20 || { cat "$TMP/r.err"; fail "perfcap-record did not start"; }
kill -USR1 "$client"
wait "$rec" || { cat "$TMP/r.err" >&2; fail "perfcap-record failed"; }
cat "$TMP/r.err"
wait "$load" || fail "idle_keepalive.py failed: $(cat "$TMP/load.out")"
trap 'rm -rf "$TMP"' EXIT
grep -q "not recording 'req'" "$TMP/r.err" && fail "the req source did not load"
read -r _ busy _ idle <<EOF
$(grep '^busy ' "$TMP/load.out")
EOF
echo "client: busy $busy requests answered, idle $idle"

q() { "$PERFCAP_ANALYZE" query --format csv "$TMP/r.perfcap" "$1" | tail -n +2 | tr -d '\r"'; }
stat() { q "SELECT CAST(value AS INTEGER) FROM stats WHERE chunk = 'stats' AND key = '$1'"; }
idle_ends=$(stat req.windows.idle_ends) covered=$(stat req.windows.covered_ns)
span=$(stat req.windows.span_ns) cut=$(stat req.cut)
echo "idle ends $idle_ends, covered $covered of $span ns, cut $cut"
[ "${idle_ends:-0}" -ge 1 ] || fail "no drain ended while idle connections' requests were open"
[ $((covered * 2)) -lt "$span" ] || fail "the windows covered $covered of $span ns: they did not end"

first=$(q "SELECT count(*) FROM requests WHERE pid = $server AND bytes_in = 40 AND bytes_out = 120")
echo "idle connections' requests in the capture, complete: $first"
[ "$first" -ge 5 ] || fail "$first idle connections' requests complete, expected 5 or more"
bad=$(q "SELECT count(*) FROM requests WHERE pid = $server AND origin <> 'connected' AND NOT
	((bytes_in = 100 AND bytes_out = 300) OR (bytes_in = 40 AND bytes_out = 120))")
[ "$bad" = 0 ] || fail "$bad requests not whole (merged or cut mid-way)"

est=$(q "SELECT CAST(round(total(ifnull(w.weight, 1))) AS INTEGER) FROM requests r
	LEFT JOIN request_windows w ON w.start_ts = r.window_ts
	WHERE r.pid = $server AND r.bytes_in = 100")
echo "busy connection: $est requests estimated, the client counted $busy"
within "$est" $((busy * 85 / 100)) $((busy * 115 / 100)) ||
	fail "the busy connection's weighted count $est is not the client's $busy within 15%"
echo "PASS"
