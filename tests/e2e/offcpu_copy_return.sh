#!/bin/bash
# offcpu_copy_return.sh - end to end with real eBPF: off-CPU user stack
# copies taken when the blocked thread returns to user space (kernels with
# the bpf_task_work_schedule_resume_impl kfunc, 6.18+), not at every
# switch-out. The copy must be the stack of the switch-out:
#   - the signal_naps workload's main thread naps in nanosleep under
#     main -> level_a -> level_b -> nap, and most naps are ended by a
#     SIGUSR1 whose handler on_signal runs on the way back: >= 90% of its
#     blocked intervals must unwind completely through level_a;level_b;nap
#     and none may show on_signal (a copy taken after the signal frame
#     was built would start in the handler);
#   - a child killed by SIGKILL while it naps in child_nap still runs the
#     task_work (in get_signal, before it exits): its interval must have
#     its copy, an unwound stack (ids from 2^31; its frames stay unnamed:
#     the child is gone before the recorder can read its maps). A thread
#     that exits without passing there is counted (STATS
#     sched.ustack.exited; shown, not provoked here).
#   - the main thread's copies stop 16 bytes above its first stack pointer
#     (mm->start_stack, STATS ustack.at_start) and still unwind to the end;
#   - a thread's copy stands for its later waits at the same place (format
#     1.9, --offcpu-stack-reuse, default 1s): most naps take an earlier copy
#     (STATS sched.ustack.same), every one of them finds it at import, the
#     chain above holds for them, and refresh copies agree with the copy
#     they refresh; with --offcpu-stack-reuse 0 every interval is copied;
#   - the two_sites workload waits at one place from two callers of the
#     same depth in turn (same ip, sp and system call): with reuse, the
#     waits must still alternate between the two callers' stacks;
#   - kernel stacks are kept for a thread's later waits at the same place
#     too (STATS sched.kstack.*): the two_fds workload reads at one place
#     from a pipe and a unix socket in turn, and each wait must keep its
#     own kernel stack (pipe_read or anon_pipe_read, or the socket's receive);
# The same recording with --offcpu-copy switch-out (the fallback) must
# show the same chain. On a kernel without the kfunc, the recorder must
# say it copied at the switch-out, and why.
set -u
. "$(dirname "$0")/lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}" "${SIGNAL_NAPS:?}" "${TWO_SITES:?}" "${TWO_FDS:?}"
require_bpf
make_tmpdir

has_kfunc=0
bpftool btf dump file /sys/kernel/btf/vmlinux 2> /dev/null |
	grep -q "FUNC 'bpf_task_work_schedule_resume_impl'" && has_kfunc=1

q() { "$PERFCAP_ANALYZE" query "$TMP/run.db" "$1" | tail -n +2; }

# blocked intervals of the main thread (the one that made a thread):
# total, complete through the chain, showing the handler
main_thread_stacks() {
	q "WITH m AS (SELECT DISTINCT parent_pid AS pid FROM forks WHERE is_thread = 1),
	   chain AS (
	     SELECT o.ustack_id AS id, (SELECT group_concat(name, ';') FROM (
	         SELECT f.name FROM stack_frames sf JOIN frames f USING (frame_id)
	         WHERE sf.stack_id = o.ustack_id ORDER BY sf.position DESC)) AS c
	     FROM offcpu o, m WHERE o.state != 0 AND o.tid = m.pid)
	   SELECT COUNT(*),
	     SUM(c LIKE '%main;level_a;level_b;nap;%nanosleep%'
	         AND id IN (SELECT stack_id FROM user_stack_unwinds WHERE stop = 'end')),
	     SUM(c LIKE '%on_signal%') FROM chain" | tr '|' ' '
}

# the killed child's (the forked process's) blocked intervals with an
# unwound copy
killed_child_stacks() {
	q "SELECT COUNT(*) FROM offcpu o WHERE o.state != 0 AND o.ustack_id >= 2147483648
	     AND o.pid IN (SELECT child_pid FROM forks WHERE is_thread = 0)"
}

stat() { q "SELECT value FROM stats WHERE key = '$1'"; }
uc() { q "SELECT value FROM unwind_counts WHERE key = '$1'"; }
meta() { q "SELECT value FROM meta WHERE key = '$1'"; }

record() {   # $1 = label, remaining = extra perfcap-record options
	local label=$1; shift
	rm -f "$TMP/run.perfcap" "$TMP/run.db"
	timeout 60 "$PERFCAP_RECORD" -e sched "$@" -o "$TMP/run.perfcap" -- "$SIGNAL_NAPS" 100 \
		> "$TMP/out" 2> "$TMP/err" || { cat "$TMP/err" >&2; fail "$label: perfcap-record failed"; }
	"$PERFCAP_ANALYZE" import "$TMP/run.perfcap" -o "$TMP/run.db" > /dev/null ||
		fail "$label: import failed"
	read -r total hit handler < <(main_thread_stacks)
	echo "$label: $(cat "$TMP/out"); ${hit:-0} of ${total:-0} blocked intervals show" \
		"main;level_a;level_b;nap;..nanosleep, ${handler:-0} show on_signal"
	[ "${total:-0}" -ge 50 ] || fail "$label: only ${total:-0} blocked intervals"
	[ $((100 * ${hit:-0} / total)) -ge 90 ] || fail "$label: chain in < 90%"
	[ "${handler:-0}" = 0 ] || fail "$label: ${handler} stacks start in the signal handler"
	[ "$(killed_child_stacks)" -ge 1 ] || fail "$label: the killed child's nap has no copy"
	# the main thread's copies stop above its first stack pointer (argv,
	# environment), and the chains above still unwind to their end
	start=$(stat ustack.at_start)
	echo "$label: ${start:-0} copies stopped at the process's first stack pointer"
	# (with copies reused, the main thread's 100 naps take a few copies)
	[ "${start:-0}" -ge "${MIN_AT_START:-50}" ] ||
		fail "$label: only ${start:-0} copies stopped at mm->start_stack"
}

# two_sites with one copy per place for the whole run: the main thread's
# blocked intervals in time order, each named by the caller in its stack
# (s: site_short, l: site_long, -: neither). A long nap lasts at least
# 12 ms, a short one 2 ms (longer only when the host is slow to run it):
# an interval under 11.9 ms showing site_long, or more than a few over it
# showing site_short, got the other caller's stack
# (with BURST, $1: 50 rounds, each wait after BURST brief ones: the
# recorded waits go without a fingerprint, each copied at its return)
two_sites() {
	local burst=${1:-0} rounds=100 label=two_sites
	[ "$burst" = 0 ] || { rounds=50; label="two_sites, $burst brief waits before each"; }
	rm -f "$TMP/run.perfcap" "$TMP/run.db"
	timeout 60 "$PERFCAP_RECORD" -e sched --offcpu-stack-reuse 10s -o "$TMP/run.perfcap" -- \
		"$TWO_SITES" $rounds "$burst" > "$TMP/out" 2> "$TMP/err" ||
		{ cat "$TMP/err" >&2; fail "$label: record failed"; }
	"$PERFCAP_ANALYZE" import "$TMP/run.perfcap" -o "$TMP/run.db" > /dev/null || fail "two_sites: import failed"
	seq=$(q "SELECT group_concat(site, '') FROM (
	    SELECT CASE WHEN o.duration < 11900000 THEN '' ELSE 'L' END || CASE
	      WHEN EXISTS (SELECT 1 FROM stack_frames sf JOIN frames f USING (frame_id)
	                   WHERE sf.stack_id = o.ustack_id AND f.name = 'site_short') THEN 's'
	      WHEN EXISTS (SELECT 1 FROM stack_frames sf JOIN frames f USING (frame_id)
	                   WHERE sf.stack_id = o.ustack_id AND f.name = 'site_long') THEN 'l'
	      ELSE '-' END AS site
	    FROM offcpu o WHERE o.state != 0 AND o.tid = o.pid ORDER BY o.ts)")
	same=$(stat sched.ustack.same); no_head=$(stat sched.ustack.no_head)
	# s/l: under 11.9 ms, Ls/Ll: longer
	n=$(printf '%s' "$seq" | tr -cd 'sl' | wc -c)
	named=$(printf '%s' "$seq" | tr -d 'L-' | wc -c)
	short_long=$(printf '%s' "$seq" | sed 's/L[sl-]//g' | tr -cd 'l' | wc -c)
	long_short=$(printf '%s' "$seq" | grep -o 'Ls' | wc -l)
	echo "$label: $(cat "$TMP/out"); $n blocked intervals, $named named by their caller," \
		"${same:-0} took an earlier copy, ${no_head:-?} had no fingerprint; short waits" \
		"showing site_long $short_long, long waits showing site_short $long_short;" \
		"in order (L: long): ${seq:0:60}..."
	[ "$n" -ge $((rounds * 19 / 10)) ] || fail "$label: only $n blocked intervals of $((2 * rounds)) naps"
	[ "$named" -ge $((n * 95 / 100)) ] || fail "$label: only $named of $n show their caller"
	[ "$short_long" = 0 ] || fail "$label: $short_long short waits show site_long ($seq)"
	[ "$long_short" -le 4 ] || fail "$label: $long_short long waits show site_short ($seq)"
	if [ "$burst" = 0 ]; then
		[ "${same:-0}" -ge 150 ] || fail "$label: only ${same:-0} waits took an earlier copy"
	else   # (a brief nap slowed past 1 ms by a busy host is recorded: some heads read)
		[ "${no_head:-0}" -ge $((n / 2)) ] ||
			fail "$label: only ${no_head:-0} of $n waits went without a fingerprint"
	fi
}

MIN_AT_START=1 # two_fds: the main thread's blocked intervals by the kernel stack they
# slept in (pipe or unix socket), and how many took a kept one
two_fds() {
	rm -f "$TMP/run.perfcap" "$TMP/run.db"
	timeout 60 "$PERFCAP_RECORD" -e sched --offcpu-stack-reuse 10s -o "$TMP/run.perfcap" -- \
		"$TWO_FDS" 100 > "$TMP/out" 2> "$TMP/err" || { cat "$TMP/err" >&2; fail "two_fds: record failed"; }
	"$PERFCAP_ANALYZE" import "$TMP/run.perfcap" -o "$TMP/run.db" > /dev/null || fail "two_fds: import failed"
	read -r pipe unix both < <(q "WITH k AS (SELECT
	      EXISTS (SELECT 1 FROM stack_frames sf JOIN frames f USING (frame_id)
	              WHERE sf.stack_id = o.kstack_id AND f.name LIKE '%pipe_read%') AS p,
	      EXISTS (SELECT 1 FROM stack_frames sf JOIN frames f USING (frame_id)
	              WHERE sf.stack_id = o.kstack_id AND f.name LIKE 'unix_stream%') AS u
	    FROM offcpu o WHERE o.state != 0 AND o.tid = o.pid)
	  SELECT SUM(p AND NOT u), SUM(u AND NOT p), SUM(p AND u) FROM k" | tr '|' ' ')
	reused=$(stat sched.kstack.reused); differed=$(stat sched.kstack.differed)
	echo "two_fds: $(cat "$TMP/out"); waits in pipe_read ${pipe:-0}, in the unix socket" \
		"${unix:-0}, both ${both:-0}; ${reused:-0} took a kept kernel stack, ${differed:-?} refreshes differed"
	[ "${pipe:-0}" -ge 80 ] && [ "${unix:-0}" -ge 80 ] ||
		fail "two_fds: ${pipe:-0} pipe and ${unix:-0} socket waits of 100 each: a kept kernel stack crossed"
	[ "${both:-0}" = 0 ] || fail "two_fds: $both stacks show both"
	[ "${reused:-0}" -ge 150 ] || fail "two_fds: only ${reused:-0} waits took a kept kernel stack"
	[ "${differed:-1}" = 0 ] || fail "two_fds: $differed refreshed kernel stacks differed"
	"$PERFCAP_ANALYZE" report "$TMP/run.db" | grep -q "$reused blocked intervals took their thread's kept kernel stack" ||
		fail "two_fds: the report's data quality does not say $reused kernel stacks were kept"
}

record "return"
at=$(meta sched.stack_copy_at)
if [ "$has_kfunc" = 1 ]; then
	[ "$at" = return ] || fail "META sched.stack_copy_at '$at', want return ($(meta sched.stack_copy_at_why))"
	exited=$(stat sched.ustack.exited)
	missing=$(q "SELECT value FROM unwind_counts WHERE key = 'copies.offcpu_missing'")
	after=$(q "SELECT value FROM unwind_counts WHERE key = 'copies.offcpu_after'")
	echo "copies after their OFFCPU: ${after:-0}; exited ${exited:-?}, missing at import ${missing:-?}"
	found=$(uc copies.offcpu_same_paired)
	[ $((${after:-0} + ${found:-0})) -ge 100 ] ||
		fail "only ${after:-0} copies paired after their OFFCPU record, ${found:-0} reused"
	[ -n "$exited" ] && [ -n "$missing" ] || fail "sched.ustack.exited or copies.offcpu_missing absent"
	# one record per interval: each copy taken, plus the intervals joined to
	# it, sent (when none exited); each sent one paired at import (no ring
	# losses here)
	taken=$(stat sched.ustack.taken); joined=$(stat sched.ustack.joined)
	sent=$(stat sched.ustack.sent)
	[ "$exited" != 0 ] || [ "$sent" = $((taken + joined)) ] ||
		fail "sent $sent != taken $taken + joined $joined"
	[ "$after" = "$sent" ] || fail "$sent copies sent, $after paired at import"
	same=$(stat sched.ustack.same)
	agreed=$(uc copies.refresh_agreed); differed=$(uc copies.refresh_differed)
	echo "reused: ${same:-?} intervals took an earlier copy, ${found:-?} found at import;" \
		"refreshes agreed ${agreed:-?}, differed ${differed:-?}"
	[ "${same:-0}" -ge 50 ] || fail "only ${same:-0} naps took their thread's earlier copy"
	[ "$found" = "$same" ] || fail "$same intervals took an earlier copy, $found found it"
	[ "${differed:-1}" = 0 ] || fail "$differed refresh copies differed from the copy they refreshed"
	record "return, no reuse" --offcpu-stack-reuse 0
	[ "$(stat sched.ustack.same)" = 0 ] || fail "--offcpu-stack-reuse 0 still reused copies"
	[ "$(meta sched.stack_reuse_ns)" = 0 ] || fail "META sched.stack_reuse_ns not 0"
	two_sites
	two_sites 100
	two_fds
else
	[ "$at" = switch-out ] && [ -n "$(meta sched.stack_copy_at_why)" ] ||
		fail "no kfunc: META sched.stack_copy_at '$at' without a reason"
	echo "kernel without the kfunc: copies at the switch-out ($(meta sched.stack_copy_at_why))"
fi
record "switch-out" --offcpu-copy switch-out
[ "$(meta sched.stack_copy_at)" = switch-out ] || fail "--offcpu-copy switch-out not in META"
echo "PASS"
