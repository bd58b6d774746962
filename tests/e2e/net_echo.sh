#!/bin/sh
# net_echo.sh - the net source on a loopback TCP echo (tcp_echo): one
# keep-alive connection with 100 request/response pairs, 20 short ones.
#
#  1. `-e net -- tcp_echo`: SOCKET records give the tuple of the server's
#     21 accepted fds and the client's 21 connected fds; the SYSCALL records
#     on the keep-alive fds (between the SOCKET record and the close) are
#     the 100 requests and 100 responses of the right connection; every
#     short connection shows CLOSE->SYN_SENT->ESTABLISHED ... ->CLOSE on the
#     client side and LISTEN->SYN_RECV->ESTABLISHED ... ->CLOSE on the
#     server side; no TCP_STATE record of any other connection of the host.
#  2. `-p SERVER,CLIENT` attached while the keep-alive connection is open
#     but idle (tcp_echo waits for SIGUSR1 before its first request): both
#     ends are described as discovered at their first use, the 100 pairs
#     are still found on them, and state changes that run in softirq
#     context (the server's ESTABLISHED->CLOSE_WAIT) are kept.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/net_lib.sh"

require_bpf
make_tmpdir
[ -x "$TCP_ECHO" ] && [ -x "$NET_CHECK" ] || fail "TCP_ECHO/NET_CHECK not set"

# TCP states (include/net/tcp_states.h) and x86_64 syscall numbers
ESTABLISHED=1 SYN_SENT=2 SYN_RECV=3 CLOSE=7 CLOSE_WAIT=8 LISTEN=10
NR_READ=0 NR_WRITE=1 NR_CLOSE=3

# socket_line DUMP FLAGS PID SIDE PORT: the SOCKET records of PID with
# FLAGS whose SIDE (sport: 11, dport: 13) is PORT (socket lines: ts flags pid
# tid fd family proto cookie saddr sport daddr dport)
socket_lines() {
	awk -v f="$2" -v pid="$3" -v col="$4" -v port="$5" '$1 == "socket" && $3 == f &&
		$4 == pid && $col == port && $10 == "127.0.0.1" && $12 == "127.0.0.1"' "$1"
}

# calls DUMP PID FD FROM_TS NR SIZE: calls NR of PID on FD after FROM_TS and
# before PID's next close(FD) returning SIZE bytes -> "count bytes" (records
# of different CPUs' rings interleave in the file: sorted by time first)
calls() {
	awk '$1 == "syscall"' "$1" | sort -k2,2n | \
	awk -v pid="$2" -v fd="$3" -v from="$4" -v nr="$5" -v size="$6" '
		$1 != "syscall" || $3 != pid || $6 != fd || $2 < from || done { next }
		$5 == 3 { done = 1; next }
		$5 == nr && $9 > 0 { bytes += $9; if ($9 == size) n++ }
		END { print n + 0, bytes + 0 }'
}

# The 100 request/response pairs on one connection (server fd SFD from
# STS, client fd CFD from CTS).
check_pairs() { # DUMP SERVER SFD STS CLIENT CFD CTS
	set -- "$@" $(calls "$1" "$2" "$3" "$4" $NR_WRITE 300) $(calls "$1" "$5" "$6" "$7" $NR_WRITE 100) \
		$(calls "$1" "$5" "$6" "$7" $NR_READ 300)
	echo "  keep-alive: server wrote $8 responses, client wrote ${10} requests, read ${13} bytes"
	[ "$8" -eq 100 ] || fail "server: expected 100 responses of 300 bytes on fd $3, got $8"
	[ "${10}" -eq 100 ] || fail "client: expected 100 requests of 100 bytes on fd $6, got ${10}"
	[ "${13}" -eq 30000 ] || fail "client: expected 30000 response bytes on fd $6, got ${13}"
}

# lifetimes DUMP PORT -> "client server": complete TCP lifetimes of
# connections to PORT, in time order per socket (cookies are sock addresses,
# reused once a socket is closed): client CLOSE->SYN_SENT, SYN_SENT->
# ESTABLISHED ... ->CLOSE; server LISTEN->SYN_RECV, SYN_RECV->ESTABLISHED
# ... ->CLOSE. (tcp_state lines: ts pid tid cookie old new saddr sport
# daddr dport)
lifetimes() {
	awk '$1 == "tcp_state"' "$1" | sort -k2,2n | awk -v port="$2" \
		-v est=$ESTABLISHED -v sent=$SYN_SENT -v recv=$SYN_RECV -v cl=$CLOSE \
		-v listen=$LISTEN '
		{ c = $5 }
		$6 == cl && $7 == sent && $11 == port { kind[c] = "client"; up[c] = 0 }
		$6 == listen && $7 == recv && $9 == port { kind[c] = "server"; up[c] = 0 }
		$6 == sent && $7 == est && kind[c] == "client" { up[c] = 1 }
		$6 == recv && $7 == est && kind[c] == "server" { up[c] = 1 }
		$7 == cl && (c in kind) { if (up[c]) n[kind[c]]++; delete kind[c] }
		END { print n["client"] + 0, n["server"] + 0 }'
}

# ---- 1. the command ------------------------------------------------------------
"$PERFCAP_RECORD" -e net -o "$TMP/cmd.perfcap" -- "$TCP_ECHO" > "$TMP/cmd.out" \
	2> "$TMP/cmd.err" || { cat "$TMP/cmd.err"; fail "record (command)"; }
echo_fields "$TMP/cmd.out"
"$NET_CHECK" "$TMP/cmd.perfcap" > "$TMP/cmd.dump" || fail "net_check"
grep -q '^meta sources .*net' "$TMP/cmd.dump" || fail "META sources lacks net"

accepted=$(socket_lines "$TMP/cmd.dump" 1 "$SERVER" 11 "$PORT" | wc -l)
connected=$(socket_lines "$TMP/cmd.dump" 2 "$CLIENT" 13 "$PORT" | wc -l)
echo "command: server $SERVER accepted $accepted, client $CLIENT connected $connected (port $PORT)"
[ "$accepted" -eq 21 ] || fail "expected 21 accepted SOCKET records, got $accepted"
[ "$connected" -eq 21 ] || fail "expected 21 connected SOCKET records, got $connected"

set -- $(socket_lines "$TMP/cmd.dump" 1 "$SERVER" 13 "$KPORT")
[ $# -eq 13 ] || fail "no single accepted SOCKET record for the keep-alive port $KPORT"
STS=$2 SFD=$6
set -- $(socket_lines "$TMP/cmd.dump" 2 "$CLIENT" 11 "$KPORT")
[ $# -eq 13 ] || fail "no single connected SOCKET record for the keep-alive port $KPORT"
CTS=$2 CFD=$6
check_pairs "$TMP/cmd.dump" "$SERVER" "$SFD" "$STS" "$CLIENT" "$CFD" "$CTS"

set -- $(lifetimes "$TMP/cmd.dump" "$PORT")
echo "  complete TCP lifetimes: client side $1, server side $2"
[ "$1" -eq 21 ] && [ "$2" -eq 21 ] || fail "expected 21 complete TCP lifetimes on each side"
foreign=$(awk -v p="$PORT" '$1 == "tcp_state" && $9 != p && $11 != p' "$TMP/cmd.dump" | wc -l)
[ "$foreign" -eq 0 ] || fail "$foreign TCP_STATE records of other connections"

# ---- 2. attached to a running pair: discovered sockets --------------------------
attach_to_echo pid
kill -USR1 "$CLIENT" # go on with the requests
wait $wl || fail "tcp_echo failed"
wait $rec || { cat "$TMP/pid.err"; fail "record (-p)"; }
"$NET_CHECK" "$TMP/pid.perfcap" > "$TMP/pid.dump" || fail "net_check"

set -- $(socket_lines "$TMP/pid.dump" 4 "$SERVER" 13 "$KPORT")
[ $# -eq 13 ] || fail "no single discovered SOCKET record of the server's keep-alive fd"
SFD=$6 SCOOKIE=$9
set -- $(socket_lines "$TMP/pid.dump" 4 "$CLIENT" 11 "$KPORT")
[ $# -eq 13 ] || fail "no single discovered SOCKET record of the client's keep-alive fd"
CFD=$6
echo "attached: keep-alive discovered (server fd $SFD, client fd $CFD)"
check_pairs "$TMP/pid.dump" "$SERVER" "$SFD" 0 "$CLIENT" "$CFD" 0
accepted=$(socket_lines "$TMP/pid.dump" 1 "$SERVER" 11 "$PORT" | wc -l)
[ "$accepted" -eq 20 ] || fail "expected 20 accepted short connections, got $accepted"
cw=$(awk -v c="$SCOOKIE" -v o=$ESTABLISHED -v n=$CLOSE_WAIT -v p="$PORT" -v k="$KPORT" \
	'$1 == "tcp_state" && $5 == c && $6 == o && $7 == n && $9 == p && $11 == k' \
	"$TMP/pid.dump" | wc -l)
[ "$cw" -eq 1 ] || fail "the server's keep-alive ESTABLISHED->CLOSE_WAIT was not recorded"
disc=$(awk '$1 == "stats" && $2 == "net.sockets.discovered" { print $3 }' "$TMP/pid.dump")
echo "  net.sockets.discovered $disc"
echo "OK"
