# net_lib.sh - helpers of the net tests (sourced after lib.sh): the lines
# tcp_echo prints, and its idle keep-alive pair with the recorder attached
# to both ends.

# field FILE KEY: the value on FILE's line "KEY VALUE"
field() { awk -v k="$2" '$1 == k { print $2; exit }' "$1"; }

# echo_fields FILE: SERVER CLIENT PORT KPORT from tcp_echo's lines in FILE
echo_fields() {
	SERVER=$(field "$1" server) CLIENT=$(field "$1" client)
	PORT=$(field "$1" port) KPORT=$(field "$1" keepalive)
}

# attach_to_echo NAME: starts "tcp_echo wait" ($TMP/NAME.out, pid in wl),
# sets echo_fields, and attaches "perfcap-record -e net -p SERVER,CLIENT
# -o $TMP/NAME.perfcap" (stderr $TMP/NAME.err, pid in rec); returns once
# it records. tcp_echo then waits for SIGUSR1 to CLIENT.
attach_to_echo() {
	"$TCP_ECHO" wait > "$TMP/$1.out" &
	wl=$!
	wait_for "$TMP/$1.out" '^keepalive' 10 || fail "tcp_echo did not start"
	echo_fields "$TMP/$1.out"
	"$PERFCAP_RECORD" -e net -p "$SERVER,$CLIENT" -o "$TMP/$1.perfcap" 2> "$TMP/$1.err" &
	rec=$!
	wait_for "$TMP/$1.err" 'recording' 10 || { kill $wl $rec; fail "recorder did not start"; }
}
