// SPDX-License-Identifier: GPL-2.0-only
/* waits.bpf.c - kernel side of the waits source: the time each traced
 * thread spends BLOCKED, by the system call it blocked in, summed in the
 * kernel per (thread, 1 s window, class, key) into `agg_metrics` (flag
 * PERFCAP_AGG_F_WAIT), at no cost per system call: only context switches
 * and wakeups run code.
 *
 *   sched_switch, prev traced and blocking (not preempted, state not
 *     running): the call it is in (its user registers: orig_ax, di, si)
 *     gives class and key as for agg (futex address, epoll fd, socket fd,
 *     file inode); kept with the switch-out time in task storage. Blocked
 *     outside a system call (page fault ...): class other, counted.
 *   sched_waking of such a task: the wait ends (run-queue time after it is
 *     not a wait); if the waker is a traced task inside futex(2), one wake
 *     is summed for the waker (class futex_wake, key: the address).
 *   sched_switch, next has a wait in progress: summed (ending at its
 *     wakeup, or now if none was seen).
 *   A blocking switch-out that finds a wait still in progress: its
 *     switch-in was not seen; summed if its wakeup was, else counted
 *     (waits.unclosed).
 *
 * The logic is in waits.bpf.h. When the sched source is recorded too (the
 * default set), its programs on sched_switch and sched_waking run it, on
 * this object's maps, and this object's two programs are not loaded: one
 * program per tracepoint (record/sources/source_waits.c).
 */
#include "waits.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define TASK_RUNNING 0

/* sched_switch has the prev_state argument (Linux 5.18+; set by user space
 * from the kernel's BTF): the state __schedule() acted on. prev->__state
 * may already be TASK_RUNNING again when a concurrent wakeup won the race,
 * which lost about one wait in a hundred here. */
const volatile bool switch_has_prev_state = false;

static __always_inline bool switched_out_blocked(bool preempt, struct task_struct *prev,
						 unsigned long long *ctx)
{
	if (preempt)
		return false;
	if (switch_has_prev_state)
		return (unsigned int)ctx[3] != TASK_RUNNING;
	return prev->__state != TASK_RUNNING;
}

/* These two run only when the sched source is not recorded; with it, its
 * programs do the same work (waits_switched, waits_woken). */
SEC("tp_btf/sched_switch")
int BPF_PROG(waits_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	bool blocked = switched_out_blocked(preempt, prev, ctx);
	bool prev_traced = blocked && pc_task_traced(prev), next_traced = pc_task_traced(next);

	if (prev_traced || next_traced)
		waits_switched(prev, prev_traced, blocked, next, next_traced, bpf_ktime_get_ns());
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(waits_waking, struct task_struct *p)
{
	if (pc_task_traced(p))
		waits_woken(p, bpf_ktime_get_ns());
	return 0;
}
