#!/bin/sh
# conn_snapshot.sh - the socket snapshots of a default recording tell the
# clients of a service from its upstream (record/consume/socket_snapshot.c,
# analyze/import/connections.c, analyze/query/connections.c).
#
# conn_topology.py runs an upstream (listening on UPORT), a server
# (listening on SPORT, one connection open to the upstream) and a client
# (3 connections to the server), three processes on loopback.
# `perfcap-record -p SERVER -d 2` with the default sources, imported:
#  - connections holds, in each of the 2 snapshots, the server's listening
#    socket (role listen), its 3 inbound connections from the client's
#    ports and its outbound connection to 127.0.0.1:UPORT;
#  - the peers are found: the client's 3 sockets (peer 1, outbound, to
#    SPORT) and the upstream's listening socket and its end of the
#    server's connection (peer 1), each peer described by a PROC record;
#  - connections_relation says client for the client, upstream at
#    127.0.0.1:UPORT for the upstream; connections_outbound lists UPORT
#    with the upstream's pid;
#  - STATS: 2 snapshots, at least the 4 peers of the connections resolved
#    per snapshot (the host's other listeners are looked for too), no
#    budget hit; no SOCKET record lands in sockets, and the net source
#    does not appear in the quality rows.
# Then `-d 5 -- conn_topology.py`: the processes forked after the start get
# a snapshot of their own (below).
. "$(dirname "$0")/lib.sh"

require_bpf
make_tmpdir
[ -x "$CONN_RELATION" ] && [ -r "$CONN_TOPOLOGY" ] || fail "CONN_RELATION/CONN_TOPOLOGY not set"

python3 "$CONN_TOPOLOGY" > "$TMP/topo.out" 2>&1 &
topo=$!
trap 'kill $topo 2>/dev/null; wait $topo 2>/dev/null; rm -rf "$TMP"' EXIT
wait_for "$TMP/topo.out" '^ready' 20 || fail "conn_topology.py did not start: $(cat "$TMP/topo.out")"
UPID=$(awk '$1 == "upstream" { print $2 }' "$TMP/topo.out")
UPORT=$(awk '$1 == "upstream" { print $3 }' "$TMP/topo.out")
SPID=$(awk '$1 == "server" { print $2 }' "$TMP/topo.out")
SPORT=$(awk '$1 == "server" { print $3 }' "$TMP/topo.out")
CPID=$(awk '$1 == "client" { print $2 }' "$TMP/topo.out")
echo "upstream $UPID:$UPORT, server $SPID:$SPORT, client $CPID"

"$PERFCAP_RECORD" -p "$SPID" -d 2 -o "$TMP/t.perfcap" 2> "$TMP/rec.err" ||
	fail "perfcap-record failed: $(cat "$TMP/rec.err")"
"$PERFCAP_ANALYZE" import "$TMP/t.perfcap" -o "$TMP/t.db" > /dev/null 2>&1 ||
	fail "import failed"

q() { "$PERFCAP_ANALYZE" query "$TMP/t.db" "$1" | tail -n +2; }
expect() { # WHAT GOT WANTED
	[ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"
	echo "  ok: $1: $2"
}

expect "snapshots" "$(q "SELECT count(DISTINCT ts) FROM connections")" 2
expect "server listens" "$(q "SELECT count(*) FROM connections WHERE pid = $SPID AND role = 'listen'
	AND lport = $SPORT AND state = 10 AND peer = 0")" 2
expect "server inbound" "$(q "SELECT count(*) FROM connections WHERE pid = $SPID AND role = 'inbound'
	AND lport = $SPORT AND state = 1 AND peer = 0 AND raddr = '127.0.0.1'")" 6
expect "server outbound" "$(q "SELECT raddr || ':' || rport || ' ' || count(*) FROM connections
	WHERE pid = $SPID AND role = 'outbound' AND peer = 0 GROUP BY raddr, rport")" "127.0.0.1:$UPORT 2"
expect "client peer rows" "$(q "SELECT count(*) FROM connections WHERE pid = $CPID AND peer = 1
	AND role = 'outbound' AND rport = $SPORT")" 6
expect "client ports = server's remote ports" "$(q "SELECT count(*) FROM connections c
	JOIN connections s ON s.pid = $SPID AND s.ts = c.ts AND s.rport = c.lport AND s.lport = c.rport
	WHERE c.pid = $CPID")" 6
expect "upstream peer rows" "$(q "SELECT group_concat(role, ' ') FROM (SELECT role FROM connections
	WHERE pid = $UPID AND peer = 1 AND lport = $UPORT AND ts = (SELECT min(ts) FROM connections)
	ORDER BY role)")" "inbound listen"
expect "peers described" "$(q "SELECT count(DISTINCT pid) FROM processes WHERE pid IN ($UPID, $CPID)
	AND cmdline LIKE '%conn_topology.py%'")" 2
expect "no sockets rows" "$(q "SELECT count(*) FROM sockets")" 0
expect "net not in quality" "$(q "SELECT count(*) FROM quality WHERE source = 'net'")" 0
expect "proc records match" "$(q "SELECT recorded = imported FROM data_quality WHERE source = 'proc'")" 1
st() { q "SELECT value FROM stats WHERE key = '$1'"; }
expect "stats snapshots" "$(st sockets.snapshots)" 2
resolved=$(st sockets.peers.resolved)
[ "${resolved:-0}" -ge 8 ] || fail "stats resolved: got '$resolved', expected at least 8"
echo "  ok: stats resolved: $resolved (the connections' 8 and the host's other listeners)"
expect "stats budget" "$(st sockets.budget_hits)" 0
expect "stats snapshotted" "$(st sockets.snapshotted)" 10

expect "relation client" "$("$CONN_RELATION" "$TMP/t.db" "$SPID" "$CPID")" "client - 3 0"
expect "relation upstream" "$("$CONN_RELATION" "$TMP/t.db" "$SPID" "$UPID")" \
	"upstream 127.0.0.1:$UPORT 0 1"
expect "outbound" "$("$CONN_RELATION" "$TMP/t.db" "$SPID")" "127.0.0.1:$UPORT 1 $UPID"
echo "snapshot cost: $(st sockets.snapshot_ns.max) ns at most, $(st sockets.fds_scanned) fds scanned"

# --- processes followed later: their own snapshot --------------------------
# `-d 5 -- conn_topology.py`: the three processes are forked after the
# start (whose snapshot sees only the launcher); each gets a snapshot once
# followed for a second, so there are more than 2. All of them are
# followed: no PEER record of a connection (the peer records there are the
# host's other listeners, looked for since upstreams are told by who
# listens), and every local end is found (an end held by a followed
# process outside the new snapshot counts as found, unwritten).
"$PERFCAP_RECORD" -d 5 -o "$TMP/cmd.perfcap" -- python3 "$CONN_TOPOLOGY" \
	> "$TMP/cmd.out" 2> "$TMP/cmd.err" || fail "perfcap-record -- failed: $(cat "$TMP/cmd.err")"
"$PERFCAP_ANALYZE" import "$TMP/cmd.perfcap" -o "$TMP/cmd.db" > /dev/null 2>&1 || fail "import failed"
SPID=$(awk '$1 == "server" { print $2 }' "$TMP/cmd.out")
SPORT=$(awk '$1 == "server" { print $3 }' "$TMP/cmd.out")
[ -n "$SPID" ] || fail "conn_topology.py did not get ready under the recorder: $(cat "$TMP/cmd.out")"
qc() { "$PERFCAP_ANALYZE" query "$TMP/cmd.db" "$1" | tail -n +2; }
n=$(qc "SELECT value FROM stats WHERE key = 'sockets.snapshots'")
[ "$n" -ge 3 ] || fail "command: $n snapshots, want a third for the processes forked after the start"
echo "  ok: command: $n snapshots"
expect "command: server listens at the end" "$(qc "SELECT count(*) FROM connections WHERE pid = $SPID
	AND role = 'listen' AND lport = $SPORT AND ts = (SELECT max(ts) FROM connections)")" 1
expect "command: no peer records but listeners" "$(qc "SELECT count(*) FROM connections WHERE peer = 1
	AND role <> 'listen'")" 0
echo "  command: server rows in $(qc "SELECT count(DISTINCT ts) FROM connections WHERE pid = $SPID") snapshots"
