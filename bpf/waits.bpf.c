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
 * default set), its programs on sched_switch and sched_waking run it into
 * the sched object's sums map, which this object reuses to be drained,
 * and this object's two programs are not loaded: one program per
 * tracepoint (record/sources/source_sched.h).
 */
#include "waits.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define TASK_RUNNING 0

/* Each thread's wait state (with the sched source, sched.bpf.c keeps it
 * in its own task storage instead). */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct wait_start);
} wait_starts SEC(".maps");

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
 * programs do the same work on their own task storage. */
SEC("tp_btf/sched_switch")
int BPF_PROG(waits_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 now = 0;

	if (switched_out_blocked(preempt, prev, ctx) && !(prev->flags & PF_KTHREAD) &&
	    pc_task_traced(prev)) {
		now = bpf_ktime_get_ns();
		wait_begins(prev, bpf_task_storage_get(&wait_starts, prev, 0,
						       BPF_LOCAL_STORAGE_GET_F_CREATE), now);
	}
	if (pc_task_traced(next))
		wait_ends(next, bpf_task_storage_get(&wait_starts, next, 0, 0),
			  now ? now : bpf_ktime_get_ns());
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(waits_waking, struct task_struct *p)
{
	struct wait_start *w;

	if (!pc_task_traced(p))
		return 0;
	w = bpf_task_storage_get(&wait_starts, p, 0, 0);
	if (w && w->ts && !w->woken) /* else no clock read */
		wait_woken(w, bpf_ktime_get_ns());
	return 0;
}
