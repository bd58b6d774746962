#!/bin/sh
# mux_epoll.sh - the mux source: a thread calling epoll_wait with a 20 ms
# timeout 10 times (tests/workloads/epoll_waits) shows 10 epoll_wait
# records of about 20 ms (within 25%) on that thread and nothing outside
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

# check_waits DUMP: exactly COUNT waits of the thread, each 15-25 ms.
# Returns 1 (after saying so) when only the durations are off.
check_waits() {
	lo=$((TIMEOUT_MS * 750000)) hi=$((TIMEOUT_MS * 1250000))
	waits=$(awk -v t="$(field tid)" -v fd="$(field epfd)" -v nr=$EPOLL_WAIT \
		'$1 == "syscall" && $2 == t && $3 == nr && $4 == fd' "$1" | wc -l)
	good=$(awk -v t="$(field tid)" -v nr=$EPOLL_WAIT -v lo=$lo -v hi=$hi \
		'$1 == "syscall" && $2 == t && $3 == nr && $8 >= lo && $8 <= hi' "$1" | wc -l)
	echo "$waits epoll_wait records, $good of $TIMEOUT_MS ms +-25%:" \
		"$(awk -v nr=$EPOLL_WAIT '$3 == nr { printf "%.1f ", $8 / 1e6 }' "$1")ms"
	[ "$waits" -eq $COUNT ] || fail "expected $COUNT epoll_wait records, got $waits"
	[ "$good" -eq $COUNT ] && return 0
	echo "only $good of $COUNT waits lasted $TIMEOUT_MS ms +-25%"
	return 1
}

# record_waits OUT EVENTS: run_mux + check_waits; a wait stretched by a busy
# machine (the wake-up after the timeout waits for a CPU) gets two more
# tries, the record count none.
record_waits() {
	for try in 1 2 3; do
		run_mux "$1" "$2"
		check_waits "$1.dump" && return 0
		echo "timing off on try $try (load: $(cut -d' ' -f1-3 /proc/loadavg))"
	done
	fail "the waits did not last $TIMEOUT_MS ms +-25% in 3 tries"
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
