/* waits.bpf.h - the waits source's kernel logic (see waits.bpf.c for what
 * it sums and why), as functions of a context switch and a wakeup, so that
 * two objects can run it: waits.bpf.c, on its own programs, and sched.bpf.c
 * in its programs on the same tracepoints when both sources are recorded
 * (`with_waits`): one program per tracepoint then, sharing the filters,
 * the clock read, the trampoline and the task storage lookups, instead of
 * two. Each thread's wait state (struct wait_start) is given to these
 * functions by their caller: waits.bpf.c keeps it in a task storage of its
 * own, sched.bpf.c in the one it has anyway. The sums go to the caller's
 * `agg_metrics` and `agg_counters`; with sched.bpf.c, the waits source's
 * object reuses those maps of the sched object to drain and count them
 * (record/sources/source_sched.h).
 */
#ifndef PERFCAP_WAITS_BPF_H
#define PERFCAP_WAITS_BPF_H

#include "metrics.bpf.h"

struct wait_start {
	__u64 ts;               /* switch-out; 0: none in progress */
	__u64 woken;            /* its wakeup, 0: not seen yet */
	__u64 key;
	__u16 klass;
	__u16 reserved[3];
};

#ifndef PF_KTHREAD
#define PF_KTHREAD   0x00200000
#endif

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

/* next, whose wait state is w (NULL: none), is switched in at now: a
 * wait in progress is summed, ending at its wakeup if that was seen. */
static __always_inline void wait_ends(struct task_struct *next, struct wait_start *w, __u64 now)
{
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

/* User thread prev, whose wait state is w (NULL: its task storage could
 * not be had, counted), switches out blocked at now: its wait begins, in
 * the system call it is in. */
static __always_inline void wait_begins(struct task_struct *prev, struct wait_start *w, __u64 now)
{
	__u64 arg0, arg1, key = PERFCAP_AGG_NO_KEY;
	long nr;

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

/* A traced task, whose wait state is w (NULL: none), is being woken
 * (sched_waking) at now: a wait in progress ends there; a futex waiter's
 * wake is summed for its waker. */
static __always_inline void wait_woken(struct wait_start *w, __u64 now)
{
	if (!w || !w->ts || w->woken)
		return;
	w->woken = now;
	if (w->klass == PERFCAP_AGG_FUTEX_WAIT)
		futex_wake(now);
}

#endif /* PERFCAP_WAITS_BPF_H */
