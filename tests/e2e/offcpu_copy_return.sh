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
#     1.9, --offcpu-copy-reuse, default 1s): most naps take an earlier copy
#     (STATS sched.ustack.same), every one of them finds it at import, the
#     chain above holds for them, and refresh copies agree with the copy
#     they refresh; with --offcpu-copy-reuse 0 every interval is copied;
#   - the two_sites workload waits at one place from two callers of the
#     same depth in turn (same ip, sp and system call): with reuse, the
#     waits must still alternate between the two callers' stacks;
# The same recording with --offcpu-copy switch-out (the fallback) must
# show the same chain. On a kernel without the kfunc, the recorder must
# say it copied at the switch-out, and why.
set -u
. "$(dirname "$0")/lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}" "${SIGNAL_NAPS:?}" "${TWO_SITES:?}"
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
# (s: site_short, l: site_long, -: neither), must alternate
two_sites() {
	rm -f "$TMP/run.perfcap" "$TMP/run.db"
	timeout 60 "$PERFCAP_RECORD" -e sched --offcpu-copy-reuse 10s -o "$TMP/run.perfcap" -- \
		"$TWO_SITES" 100 > "$TMP/out" 2> "$TMP/err" || { cat "$TMP/err" >&2; fail "two_sites: record failed"; }
	"$PERFCAP_ANALYZE" import "$TMP/run.perfcap" -o "$TMP/run.db" > /dev/null || fail "two_sites: import failed"
	seq=$(q "SELECT group_concat(site, '') FROM (
	    SELECT CASE
	      WHEN EXISTS (SELECT 1 FROM stack_frames sf JOIN frames f USING (frame_id)
	                   WHERE sf.stack_id = o.ustack_id AND f.name = 'site_short') THEN 's'
	      WHEN EXISTS (SELECT 1 FROM stack_frames sf JOIN frames f USING (frame_id)
	                   WHERE sf.stack_id = o.ustack_id AND f.name = 'site_long') THEN 'l'
	      ELSE '-' END AS site
	    FROM offcpu o WHERE o.state != 0 AND o.tid = o.pid ORDER BY o.ts)")
	same=$(stat sched.ustack.same)
	named=$(printf '%s' "$seq" | tr -cd 'sl' | wc -c)
	repeats=$(printf '%s' "$seq" | grep -o 'ss\|ll' | wc -l)
	echo "two_sites: $(cat "$TMP/out"); ${#seq} blocked intervals, $named named by their caller," \
		"${same:-0} took an earlier copy; callers in order: ${seq:0:40}..."
	[ "${#seq}" -ge 190 ] || fail "two_sites: only ${#seq} blocked intervals of 200 naps"
	[ "$named" -ge $((${#seq} * 95 / 100)) ] || fail "two_sites: only $named of ${#seq} show their caller"
	[ "${same:-0}" -ge 150 ] || fail "two_sites: only ${same:-0} waits took an earlier copy"
	[ "$repeats" = 0 ] || fail "two_sites: $repeats waits show the other caller's stack ($seq)"
}

MIN_AT_START=1 record "return"
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
	record "return, no reuse" --offcpu-copy-reuse 0
	[ "$(stat sched.ustack.same)" = 0 ] || fail "--offcpu-copy-reuse 0 still reused copies"
	[ "$(meta sched.copy_reuse_ns)" = 0 ] || fail "META sched.copy_reuse_ns not 0"
	two_sites
else
	[ "$at" = switch-out ] && [ -n "$(meta sched.stack_copy_at_why)" ] ||
		fail "no kfunc: META sched.stack_copy_at '$at' without a reason"
	echo "kernel without the kfunc: copies at the switch-out ($(meta sched.stack_copy_at_why))"
fi
record "switch-out" --offcpu-copy switch-out
[ "$(meta sched.stack_copy_at)" = switch-out ] || fail "--offcpu-copy switch-out not in META"
echo "PASS"
