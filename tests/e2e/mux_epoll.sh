#!/bin/sh
# mux_epoll.sh - the mux source: a thread calling epoll_wait with a 20 ms
# timeout 10 times (tests/workloads/epoll_waits) shows 10 epoll_wait
# records on that thread, each at least 20 ms and within what the workload
# measured around the call, and nothing outside
# the mux set. With -e syscall,mux the shared program is loaded once: the
# same 10 records, not 20.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/syscall_lib.sh"
require_bpf
make_tmpdir

EPOLL_WAIT=232
COUNT=10
TIMEOUT_MS=20

# run_mux OUT EVENTS
run_mux() {
	rm -f "$1"
	"$PERFCAP_RECORD" -e "$2" -o "$1" -- "$EPOLL_WAITS" $COUNT $TIMEOUT_MS \
		> "$TMP/wl.out" 2> "$TMP/rec.err" || { cat "$TMP/rec.err" >&2; fail "perfcap-record failed"; }
	dump "$1"
}

# check_waits DUMP: exactly COUNT waits of the thread, each at least the
# timeout and inside the interval the workload measured around the call
# (the timeout is a minimum: on a busy machine the wakeup comes later).
check_waits() {
	waits=$(awk -v t="$(field tid)" -v fd="$(field epfd)" -v nr=$EPOLL_WAIT \
		'$1 == "syscall" && $2 == t && $3 == nr && $4 == fd' "$1" | wc -l)
	awk -v t="$(field tid)" -v nr=$EPOLL_WAIT '$1 == "syscall" && $2 == t && $3 == nr \
		{ print $8 }' "$1" > "$TMP/traced"
	awk '/^call / { print $3 }' "$TMP/wl.out" > "$TMP/measured"
	bad=$(paste "$TMP/traced" "$TMP/measured" | awk -v lo=$((TIMEOUT_MS * 950000)) \
		'$1 < lo || $2 == "" || $1 > $2 + 50000' | wc -l)
	echo "$waits epoll_wait records, $bad outside [timeout, measured]:" \
		"$(paste "$TMP/traced" "$TMP/measured" | awk '{ printf "%.1f/%.1f ", $1 / 1e6, $2 / 1e6 }')ms"
	[ "$waits" -eq $COUNT ] || fail "expected $COUNT epoll_wait records, got $waits"
	[ "$bad" -eq 0 ] || fail "$bad waits shorter than the timeout or longer than measured"
}

# record_waits OUT EVENTS: run_mux + check_waits
record_waits() {
	run_mux "$1" "$2"
	check_waits "$1.dump"
}

C="$TMP/mux.perfcap"
record_waits "$C" mux
D="$C.dump"
others=$(awk '$1 == "syscall" && $3 != 232 && $3 != 281 && $3 != 441 && $3 != 7 && $3 != 271 &&
	$3 != 23 && $3 != 270' "$D" | wc -l)
[ "$others" -eq 0 ] || fail "$others records outside the mux set"
kv "$C" meta sources | grep -q mux || fail "META sources: $(kv "$C" meta sources)"
[ "$(kv "$C" meta syscall.set.mux)" = "poll,select,epoll_wait,pselect6,ppoll,epoll_pwait,epoll_pwait2" ] ||
	fail "META syscall.set.mux: $(kv "$C" meta syscall.set.mux)"
[ "$(kv "$C" meta syscall.set)" = missing ] || fail "syscall.set without the syscall source"
[ "$(kv "$C" stat syscall.calls.epoll_wait)" -ge $COUNT ] || fail "syscall.calls.epoll_wait"

C="$TMP/both.perfcap"
record_waits "$C" syscall,mux
D="$C.dump"
kv "$C" meta sources | grep -q 'syscall,mux' || fail "META sources: $(kv "$C" meta sources)"
[ "$(kv "$C" meta syscall.set)" != missing ] || fail "META syscall.set missing"
[ "$("$CAPCHECK" stat "$C" syscall.emitted)" -ge $COUNT ] || fail "syscall.emitted"
echo "PASS"
