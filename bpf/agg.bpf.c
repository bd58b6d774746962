// SPDX-License-Identifier: GPL-2.0-only
/* agg.bpf.c - kernel side of the agg source: every system call of a traced
 * task is timed (sys_enter -> sys_exit) and SUMMED in the kernel, per
 * (thread, 1 s window, class, key), into `agg_metrics`: calls, errors,
 * total ns, bytes and a log2 latency histogram. User space drains a window
 * once it is over (record/sources/source_agg.c). Only calls of at least
 * agg_slow_ns also become a record of their own (PERFCAP_EV_AGG_CALL), so
 * the cost per call is a task-storage write on entry and a task-storage
 * read plus one hash update on exit: no ring buffer, no stack walk.
 *
 * Classes (perfcap_bpf.h): futex wait / wake per futex address, poll
 * family per epoll fd, socket receive / send per fd, file read / write per
 * inode, everything else. read/write-like calls are split by the kind of
 * their fd (a socket or not), looked up at exit in the task's fd table.
 *
 * The entry is kept in task local storage: no map of threads to bound, no
 * cleanup at thread exit. Only tp_btf programs.
 */
#include "metrics.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by user space before load. */
const volatile __u64 agg_slow_ns = 1000000;

struct agg_pending {
	__u64 ts;               /* entry; 0: no call in progress */
	__u64 arg0, arg1;
	__u32 nr;
	__u32 reserved;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct agg_pending);
} agg_pending SEC(".maps");

/* ---- entry ---------------------------------------------------------------- */

SEC("tp_btf/sys_enter")
int BPF_PROG(agg_enter, struct pt_regs *regs, long id)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct agg_pending *p;

	if (!pc_task_traced(task))
		return 0;
	p = bpf_task_storage_get(&agg_pending, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!p) {
		count_n(PERFCAP_AGG_C_NO_STORAGE, 1);
		return 0;
	}
	p->arg0 = regs->di;
	p->arg1 = regs->si;
	p->nr = (__u32)id;
	p->ts = bpf_ktime_get_ns();
	return 0;
}

/* A call of at least agg_slow_ns: one record, as the syscall source's. */
static __always_inline void emit_slow(const struct agg_pending *p, __u32 pid, __u32 tid,
				      long ret, __u64 now)
{
	struct perfcap_syscall *e;
	void *ring;

	count_n(PERFCAP_AGG_C_SLOW, 1);
	if (!pc_admit(PERFCAP_SRC_AGG, now))
		return;
	ring = pc_ring(PERFCAP_SRC_AGG);
	if (!ring)
		return;
	e = pc_reserve(ring, PERFCAP_SRC_AGG, sizeof(*e));
	if (!e)
		return;
	pc_header(&e->h, PERFCAP_EV_AGG_CALL, p->ts);
	e->duration = now - p->ts;
	e->pid = pid;
	e->tid = tid;
	e->nr = p->nr;
	e->ustack = -1;
	e->ret = ret;
	e->args[0] = p->arg0;
	e->args[1] = p->arg1;
	e->args[2] = 0;
	e->io_calls = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	pc_submit(ring, e);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(agg_exit, struct pt_regs *regs, long ret)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct perfcap_agg_key k = {};
	struct agg_pending *p;
	__u64 now, ns, origin = agg_origin_ns;

	if (!pc_task_maybe_traced(task)) /* no entry: leave before the storage lookup */
		return 0;
	p = bpf_task_storage_get(&agg_pending, task, 0, 0);
	if (!p || !p->ts) {
		if (pc_task_traced(task))
			count_n(PERFCAP_AGG_C_UNMATCHED, 1);
		return 0;
	}
	now = bpf_ktime_get_ns();
	ns = now - p->ts;
	k.tid = task->pid;
	k.pid = task->tgid;
	k.window = now > origin ? (now - origin) / PERFCAP_AGG_WINDOW_NS : 0;
	k.klass = classify(task, p->nr, p->arg0, p->arg1, &k.key);
	sum(PERFCAP_SRC_AGG, &k, ns, ret);
	if (ns >= agg_slow_ns)
		emit_slow(p, k.pid, k.tid, ret, now);
	p->ts = 0;
	return 0;
}
