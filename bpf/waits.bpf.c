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
 */
#include "metrics.bpf.h"

char LICENSE[] SEC("license") = "GPL";

struct wait_start {
	__u64 ts;               /* switch-out; 0: none in progress */
	__u64 woken;            /* its wakeup, 0: not seen yet */
	__u64 key;
	__u16 klass;
	__u16 reserved[3];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct wait_start);
} wait_starts SEC(".maps");

#define TASK_RUNNING 0
#define PF_KTHREAD   0x00200000

/* The system call task is in: its number (-1: none) and first arguments. */
static __always_inline long in_syscall(struct task_struct *task, __u64 *arg0, __u64 *arg1)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);

	/* direct loads from the trusted pointer: no helper call each */
	*arg0 = regs->di;
	*arg1 = regs->si;
	return (long)regs->orig_ax;
}

/* Sums w's wait, from its switch-out to end, for task. */
static __always_inline void sum_wait(struct task_struct *task, struct wait_start *w, __u64 end)
{
	struct perfcap_agg_key k = {};
	__u64 origin = agg_origin_ns;

	k.tid = task->pid;
	k.pid = task->tgid;
	k.window = end > origin ? (end - origin) / PERFCAP_AGG_WINDOW_NS : 0;
	k.klass = w->klass;
	k.flags = PERFCAP_AGG_F_WAIT;
	k.key = w->key;
	sum(PERFCAP_SRC_WAITS, &k, end - w->ts, 0);
	w->ts = 0;
}

/* Whether w's wakeup was seen (it ends the wait: run-queue time is not). */
static __always_inline bool woken_seen(const struct wait_start *w)
{
	return w->woken && w->woken >= w->ts;
}

static __always_inline void wait_ends(struct task_struct *next, __u64 now)
{
	struct wait_start *w = bpf_task_storage_get(&wait_starts, next, 0, 0);

	if (!w || !w->ts)
		return;
	sum_wait(next, w, woken_seen(w) ? w->woken : now);
}

/* A wait still open at the next switch-out: its switch-in was not seen.
 * (It happens: on this project's test VMs the kernel fires no sched_switch
 * for the switches out of some tasks.) Its end is its wakeup when that was
 * seen, exact; otherwise it is counted, not guessed. */
static __always_inline void wait_unclosed(struct task_struct *task, struct wait_start *w)
{
	if (woken_seen(w))
		sum_wait(task, w, w->woken);
	else
		count_n(PERFCAP_AGG_C_UNCLOSED, 1);
}

static __always_inline void wait_begins(struct task_struct *prev, __u64 now)
{
	struct wait_start *w;
	__u64 arg0, arg1, key = PERFCAP_AGG_NO_KEY;
	long nr;

	if (prev->flags & PF_KTHREAD)
		return;
	w = bpf_task_storage_get(&wait_starts, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!w) {
		count_n(PERFCAP_AGG_C_NO_STORAGE, 1);
		return;
	}
	if (w->ts)
		wait_unclosed(prev, w);
	nr = in_syscall(prev, &arg0, &arg1);
	if (nr < 0) {
		count_n(PERFCAP_AGG_C_NOT_SYSCALL, 1);
		w->klass = PERFCAP_AGG_OTHER;
	} else {
		w->klass = classify(prev, (__u64)nr, arg0, arg1, &key);
	}
	w->key = key;
	w->woken = 0;
	w->ts = now;
}

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

SEC("tp_btf/sched_switch")
int BPF_PROG(waits_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 now = 0;

	if (switched_out_blocked(preempt, prev, ctx) && pc_task_traced(prev)) {
		now = bpf_ktime_get_ns();
		wait_begins(prev, now);
	}
	if (pc_task_traced(next))
		wait_ends(next, now ? now : bpf_ktime_get_ns());
	return 0;
}

/* One wake by the current task, if it is a traced task inside futex(2). */
static __always_inline void futex_wake(__u64 now)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct perfcap_agg_key k = {};
	__u64 arg0, arg1, origin = agg_origin_ns;

	if (cur->flags & PF_KTHREAD || !pc_task_traced(cur))
		return;
	if (classify(cur, (__u64)in_syscall(cur, &arg0, &arg1), arg0, arg1, &k.key) !=
	    PERFCAP_AGG_FUTEX_WAKE)
		return;
	k.tid = cur->pid;
	k.pid = cur->tgid;
	k.window = now > origin ? (now - origin) / PERFCAP_AGG_WINDOW_NS : 0;
	k.klass = PERFCAP_AGG_FUTEX_WAKE;
	k.flags = PERFCAP_AGG_F_WAIT;
	sum(PERFCAP_SRC_WAITS, &k, 0, 0);
}

SEC("tp_btf/sched_waking")
int BPF_PROG(waits_waking, struct task_struct *p)
{
	struct wait_start *w;
	__u64 now;

	if (!pc_task_traced(p))
		return 0;
	w = bpf_task_storage_get(&wait_starts, p, 0, 0);
	if (!w || !w->ts || w->woken)
		return 0;
	now = bpf_ktime_get_ns();
	w->woken = now;
	if (w->klass == PERFCAP_AGG_FUTEX_WAIT)
		futex_wake(now);
	return 0;
}
