#!/bin/sh
# net_retrans.sh - the net source's TCP_RETRANS records: tcp_echo's
# keep-alive connection loses its first request for 0.7 s (an nftables
# rule drops what arrives at the server's port on input, so the sends
# themselves succeed and the kernel retransmits on its timer, in softirq
# context). The retransmits must be recorded for that connection (the
# client's socket, discovered at its first write) and for no other.
# Needs nft (Debian: nftables); skipped without it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/net_lib.sh"

require_bpf
command -v nft > /dev/null || { echo "SKIP: nft not installed" >&2; exit 77; }
make_tmpdir
[ -x "$TCP_ECHO" ] && [ -x "$NET_CHECK" ] || fail "TCP_ECHO/NET_CHECK not set"
TABLE=perfcap_e2e_$$
trap 'nft delete table inet $TABLE 2>/dev/null; rm -rf "$TMP"' EXIT

attach_to_echo cap

nft add table inet $TABLE || fail "nft add table"
nft add chain inet $TABLE in '{ type filter hook input priority 0; }' || fail "nft add chain"
nft add rule inet $TABLE in tcp dport "$PORT" drop || fail "nft add rule"
kill -USR1 "$CLIENT"
sleep 0.7
nft delete table inet $TABLE
wait $wl || fail "tcp_echo failed"
wait $rec || { cat "$TMP/cap.err"; fail "record"; }
"$NET_CHECK" "$TMP/cap.perfcap" > "$TMP/dump" || fail "net_check"

# retrans lines: ts pid tid cookie state saddr sport daddr dport
mine=$(awk -v s="$KPORT" -v d="$PORT" '$1 == "retrans" && $8 == s && $10 == d && $6 == 1' \
	"$TMP/dump" | wc -l)
others=$(awk -v s="$KPORT" '$1 == "retrans" && $8 != s' "$TMP/dump" | wc -l)
echo "retransmits of the keep-alive connection: $mine, of others: $others"
[ "$mine" -ge 1 ] || fail "no TCP_RETRANS record of the keep-alive connection"
[ "$others" -eq 0 ] || fail "TCP_RETRANS records of other connections"
echo "OK"
