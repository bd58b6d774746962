#!/bin/bash
# wake_context.sh - who woke a thread from interrupt context, end to end
# with real eBPF and the default sources: a loopback TCP server (tcp_echo,
# 1,000 requests on one connection: the server blocks in read and a
# request's packet wakes it from the NET_RX soft interrupt the client's
# send runs) and a thread napping 50 ms 20 times (sleeper: woken by the
# timer's hard interrupt), recorded together.
#
# The recorder tells a soft interrupt from a hard one by the CPU's preempt
# count, found from the kernel's BTF (META sched.irq_context
# preempt_count), or else by a softirq_exit program (softirq_exit). With
# both per-CPU variables in the kernel's BTF, the first must be chosen and
# must never fail to read (STATS sched.irq_unread 0). The second is
# recorded too, forced by PERFCAP_IRQ_CONTEXT=softirq_exit. Either way the
# server's wakeups must be NET_RX soft interrupts and the napper's hard
# interrupts.
set -u
. "$(dirname "$0")/lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}" "${SLEEPER:?}" "${TCP_ECHO:?}" "${CAPCHECK:?}"
require_bpf
make_tmpdir

q() { "$PERFCAP_ANALYZE" query "$TMP/run.db" "$1" | tail -n +2; }

# check_labels: the server's wakeups are NET_RX soft interrupts, the
# napper's hard ones
check_labels() {
	local server total net_rx napper hard soft

	server=$(sed -n 's/^server //p' "$TMP/record.out")
	[ -n "$server" ] || { cat "$TMP/record.out"; fail "tcp_echo printed no server pid"; }
	# the server's wakeups: context 2 (soft interrupt), vector 3 (NET_RX);
	# one per request at most: a request that arrived before the server
	# read again wakes no one, which varies from run to run with the CPUs
	total=$(q "SELECT count(*) FROM wakeups WHERE pid = $server")
	net_rx=$(q "SELECT count(*) FROM wakeups WHERE pid = $server AND context = 2 AND softirq = 3")
	echo "tcp_echo server (pid $server): $net_rx of $total wakeups from the NET_RX soft interrupt"
	[ "${total:-0}" -ge 100 ] || fail "the server was woken $total times, want at least 100 of 1,000"
	[ "$(pct "$net_rx" "$total")" -ge 90 ] ||
		fail "only $net_rx of $total server wakeups are NET_RX soft interrupts"

	# the napper's: context 1 (hard interrupt: the timer)
	napper=$(q "SELECT tid FROM threads WHERE comm = 'napper' LIMIT 1")
	[ -n "$napper" ] || fail "no thread named napper"
	hard=$(q "SELECT count(*) FROM wakeups WHERE tid = $napper AND context = 1")
	soft=$(q "SELECT count(*) FROM wakeups WHERE tid = $napper AND context = 2")
	echo "napper (tid $napper): $hard wakeups from hard interrupts, $soft from soft ones"
	within "${hard:-0}" 18 30 || fail "napper: $hard wakeups from hard interrupts, want about 20"
	[ "${soft:-0}" -le 2 ] || fail "napper: $soft wakeups taken for soft interrupts"
}

# check MODE: records (MODE auto, or softirq_exit forced through
# PERFCAP_IRQ_CONTEXT), checks the mechanism META names and the labels
check() {
	local mode=$1 want=softirq_exit how unread

	rm -f "$TMP/run.perfcap" "$TMP/run.db"
	if [ "$mode" = auto ]; then unset PERFCAP_IRQ_CONTEXT; else export PERFCAP_IRQ_CONTEXT=$mode; fi
	timeout 60 "$PERFCAP_RECORD" -o "$TMP/run.perfcap" -- \
		sh -c "\"$SLEEPER\" 20 & \"$TCP_ECHO\" 0 1000; wait" \
		> "$TMP/record.out" 2> "$TMP/record.err" \
		|| { cat "$TMP/record.err" >&2; fail "perfcap-record failed"; }
	unset PERFCAP_IRQ_CONTEXT
	tail -3 "$TMP/record.err"
	"$PERFCAP_ANALYZE" import "$TMP/run.perfcap" -o "$TMP/run.db" > /dev/null 2>&1 ||
		fail "import failed"

	how=$("$CAPCHECK" meta "$TMP/run.perfcap" sched.irq_context)
	unread=$("$CAPCHECK" stat "$TMP/run.perfcap" sched.irq_unread)
	echo "$mode: sched.irq_context $how, sched.irq_unread $unread"
	if [ "$mode" = auto ] && grep -qa __preempt_count /sys/kernel/btf/vmlinux &&
		grep -qa runqueues /sys/kernel/btf/vmlinux; then
		want=preempt_count
	fi
	[ "$how" = "$want" ] || fail "$mode: sched.irq_context is '$how', want $want"
	[ "$unread" = 0 ] || fail "$unread interrupt-context wakeups whose preempt count could not be read"
	check_labels
}

check auto
check softirq_exit
echo PASS
