// SPDX-License-Identifier: GPL-2.0-only
/* proc.bpf.c - kernel side of the proc source: the process lifecycle, the
 * one owner of sched_process_fork, _exec and _exit. Always loaded.
 *
 * Fork: when filtering by pid, a new process forked by a followed one is
 * followed too (added to `targets`); with the sched source selected
 * (emit_forks) every fork of a traced task, threads included, becomes a
 * FORK record, counted as a sched record.
 * Exec and whole-process exit of traced processes become EXEC / EXIT
 * records, so user space re-reads /proc/PID/maps after an exec.
 */
#include "perfcap_common.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by user space: the sched source is selected. */
const volatile bool emit_forks = false;

static __always_inline void follow_child(__u32 parent_tgid, __u32 child_tgid)
{
	if (!pc_config.filter_pids || parent_tgid == child_tgid) /* a new thread */
		return;
	if (!pc_tgid_followed(parent_tgid))
		return;
	if (pc_follow_tgid(child_tgid))
		pc_count(PERFCAP_SRC_PROC, PERFCAP_LOSS_MAP_FULL);
}

static __always_inline void emit_fork(struct task_struct *parent, struct task_struct *child)
{
	void *ring = pc_ring(PERFCAP_SRC_SCHED);
	struct perfcap_fork *e;

	if (!ring)
		return;
	e = pc_reserve(ring, PERFCAP_SRC_SCHED, sizeof(*e));
	if (!e)
		return;
	pc_header(&e->h, PERFCAP_EV_FORK, bpf_ktime_get_ns());
	e->parent_pid = parent->tgid;
	e->parent_tid = parent->pid;
	e->child_pid = child->tgid;
	e->child_tid = child->pid;
	if (e->child_pid == e->parent_pid)
		e->h.flags |= PERFCAP_FORK_F_THREAD;
	pc_copy_comm(e->comm, child->comm);
	pc_submit(ring, e);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	follow_child(parent->tgid, child->tgid);
	if (emit_forks && pc_task_traced(child))
		emit_fork(parent, child);
	return 0;
}

static __always_inline void emit_proc_event(__u16 type, struct task_struct *task)
{
	void *ring = pc_ring(PERFCAP_SRC_PROC);
	struct perfcap_proc_event *e;

	if (!ring)
		return;
	e = pc_reserve(ring, PERFCAP_SRC_PROC, sizeof(*e));
	if (!e)
		return;
	pc_header(&e->h, type, bpf_ktime_get_ns());
	e->pid = task->tgid;
	e->tid = task->pid;
	pc_copy_comm(e->comm, task->comm);
	/* rare and urgent: user space reads /proc while the process lives */
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	if (pc_task_traced(p))
		emit_proc_event(PERFCAP_EV_EXEC, p);
	return 0;
}

/* Fires for every exiting thread; only the last one (signal->live dropped
 * to 0 before this tracepoint) ends the process. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	if (p->signal->live.counter != 0)
		return 0;
	if (pc_task_traced(p))
		emit_proc_event(PERFCAP_EV_EXIT, p);
	return 0;
}
