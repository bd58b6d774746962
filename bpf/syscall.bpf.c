// SPDX-License-Identifier: GPL-2.0-only
/* syscall.bpf.c - kernel side of the syscall source (and of the syscall
 * sets of mux, net, lock and mem): every system call of a traced task is
 * paired in the kernel, sys_enter -> sys_exit, and
 *   - counted per syscall number (calls and total ns) in `syscall_totals`,
 *     whatever the filters, so totals stay true;
 *   - emitted as ONE record per completed call when its number is in the
 *     syscall set and it lasted at least syscall_min_ns.
 *
 * Pairing: `syscall_pending`, task local storage, holds per thread the
 * entry time, number and first three arguments of the call in progress.
 * It is made at the thread's first traced call, written in place at every
 * sys_enter and marked done (ts = 0) at sys_exit, and goes with the thread
 * (exit and exit_group, which never return, leave it pending). So the hot
 * path is one storage lookup on entry and one on exit: the task's own
 * pointer and a cache slot, where a hash by thread id hashed the key and
 * walked a bucket (an untraced task has no storage and leaves at once). A
 * thread whose entry cannot be allocated is not paired (map_full).
 *
 * Windows (--syscall-rate): above a rate user space attaches the two
 * programs only in a window at the start of each second, and sets
 * sc_win_start and sc_win_end around it before each one. A call is
 * paired only when it enters at or after the window's start and exits
 * before its end, exactly the window the capture's SYSCALL_WINDOW says,
 * whenever the recorder gets to detach. Calls across an edge (entered in
 * an earlier window or a gap, or exiting after the end) are counted as
 * cut and are neither totalled nor emitted: the reader weighs the calls
 * it has by how likely a call of their length was to fit in the window.
 * Without windows sc_win_start and sc_win_end stay 0: every call.
 *
 * The set (which numbers are emitted, by which source, with a user stack
 * or not) is read-only data filled by user space before load
 * (record/sources/syscall_sets.c). Only tp_btf programs: no tracefs, kprobes or
 * trampolines.
 *
 * With the net source selected (with_net), the sys_exit program also runs
 * its part for traced tasks (net_calls.bpf.h: which connection an fd is),
 * and with mem (with_mem) mem's (mem_calls.bpf.h: code mapped at run
 * time), so a system call exit on the host runs one program, not three.
 * Their maps are then the net and mem objects' too; without net, net's are
 * made with one entry.
 */
#include "net_calls.bpf.h"
#include "mem_calls.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by user space before load. */
const volatile struct perfcap_syscall_sel syscall_set[PERFCAP_SYSCALL_NR_MAX];
const volatile __u64 syscall_min_ns = 0;
const volatile bool with_net = false;
const volatile bool with_mem = false;

/* The window calls are paired in, set by user space (0, 0: always). */
volatile __u64 sc_win_start;
volatile __u64 sc_win_end;

struct pending_call {
	__u64 ts;               /* entry; 0: no call in progress */
	__u64 args[3];
	__u64 win;              /* sc_win_start of the window it entered in */
	__u32 nr;
	__u32 reserved;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct pending_call);
} syscall_pending SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PERFCAP_SYSCALL_NR_MAX);
	__type(key, __u32);     /* syscall number */
	__type(value, struct perfcap_syscall_total);
} syscall_totals SEC(".maps");

PC_COUNTERS(syscall_counters, PERFCAP_SC_NR); /* enum perfcap_syscall_counter */

static __always_inline void count(__u32 counter)
{
	pc_counter_add(&syscall_counters, counter, 1);
}

static __always_inline void add_total(__u32 nr, __u64 ns)
{
	struct perfcap_syscall_total *t = bpf_map_lookup_elem(&syscall_totals, &nr);

	count(PERFCAP_SC_PAIRED);
	if (!t)
		return;
	__sync_fetch_and_add(&t->calls, 1);
	__sync_fetch_and_add(&t->ns, ns);
}

/* Whether a window ends before now (never without windows). */
static __always_inline bool past_window(__u64 now)
{
	__u64 end = sc_win_end;

	return end && now >= end;
}

/* ---- entry ------------------------------------------------------------- */

static __always_inline void fill_pending(struct pending_call *p, struct pt_regs *regs,
					 __u32 nr, __u64 now)
{
	p->args[0] = regs->di; /* BTF pointer: direct (probe-mem) loads, no helper */
	p->args[1] = regs->si;
	p->args[2] = regs->dx;
	p->nr = nr;
	p->win = sc_win_start;
	p->ts = now;            /* last: marks the entry as in progress */
}

SEC("tp_btf/sys_enter")
int BPF_PROG(on_sys_enter, struct pt_regs *regs, long id)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pending_call *p;
	__u64 now;

	if (!pc_task_traced(task))
		return 0;
	now = bpf_ktime_get_ns();
	if (past_window(now)) /* after the window: not followed */
		return 0;
	if ((unsigned long)id >= PERFCAP_SYSCALL_NR_MAX) /* -1, x32: paired, not counted */
		count(PERFCAP_SC_BAD_NR);
	/* made zeroed (ts 0) at the thread's first traced call */
	p = bpf_task_storage_get(&syscall_pending, task, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!p) {
		count(PERFCAP_SC_MAP_FULL);
		pc_count(PERFCAP_SRC_SYSCALL, PERFCAP_LOSS_MAP_FULL);
		return 0;
	}
	if (p->ts) /* the previous call never reached sys_exit (here, or by a gap) */
		count(p->win == sc_win_start ? PERFCAP_SC_UNMATCHED_ENTER : PERFCAP_SC_CUT);
	fill_pending(p, regs, (__u32)id, now);
	return 0;
}

/* ---- exit -------------------------------------------------------------- */

/* The thread's read- and write-type calls so far, as the kernel counts
 * them for every task whether traced or not (/proc/PID/io syscr, syscw;
 * CONFIG_TASK_XACCT). In windows they say how fast the thread went while
 * traced against the whole period (import/syscall_pace.c); 0: no such
 * accounting in this kernel. */
static __always_inline __u64 io_calls(struct task_struct *task)
{
	if (!bpf_core_field_exists(task->ioac))
		return 0;
	return task->ioac.syscr + task->ioac.syscw;
}

/* One SYSCALL record. The ids and the name are read from the task itself
 * (direct loads through its BTF pointer), not by two helper calls. */
static __always_inline void emit_call(void *ctx, struct task_struct *task,
				      const struct pending_call *p, __u32 source,
				      __u8 flags, long ret, __u64 now)
{
	void *ring = pc_ring(source);
	struct perfcap_syscall *e;

	if (!ring)
		return;
	e = pc_reserve(ring, source, sizeof(*e));
	if (!e)
		return;
	pc_header(&e->h, PERFCAP_EV_SYSCALL, p->ts);
	e->duration = now - p->ts;
	e->pid = task->tgid;
	e->tid = task->pid;
	e->nr = p->nr;
	e->ustack = -1;
	if (flags & PERFCAP_SYSCALL_F_STACK)
		e->ustack = pc_stack_id(ctx, source, BPF_F_USER_STACK);
	e->ret = ret;
	e->args[0] = p->args[0];
	e->args[1] = p->args[1];
	e->args[2] = p->args[2];
	__builtin_memcpy(e->comm, task->comm, sizeof(e->comm));
	e->io_calls = io_calls(task);
	pc_submit(ring, e);
	count(PERFCAP_SC_EMITTED);
}

/* Is a completed call of duration ns emitted? Counts why not. */
static __always_inline bool wanted(__u32 source, __u64 ns, __u64 now)
{
	if (!source)
		return false; /* not in the set: counted in the totals only */
	if (ns < syscall_min_ns) {
		count(PERFCAP_SC_FILTERED_MIN);
		return false;
	}
	return pc_admit(source, now);
}

/* The other sources' parts, for a traced task's call. */
static __always_inline void sources_sys_exit(struct task_struct *task, struct pt_regs *regs,
					     long ret)
{
	if (with_net)
		net_sys_exit(task, regs, ret);
	if (with_mem)
		mem_sys_exit(task, regs, ret);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(on_sys_exit, struct pt_regs *regs, long ret)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pending_call *p;
	__u64 now, ns;
	__u32 nr;

	/* every system call on the host passes here: an untraced process's
	 * (it has no entry) leaves before the storage lookup */
	if (!pc_task_maybe_traced(task))
		return 0;
	p = bpf_task_storage_get(&syscall_pending, task, NULL, 0);
	if (!p || !p->ts) {
		/* entered before the recording (or no memory for its entry),
		 * before the window opened (cut by its start), or after the
		 * window's end (not followed: nothing to count) */
		if (pc_task_traced(task)) {
			if (p && p->win != sc_win_start)
				count(PERFCAP_SC_CUT);
			else if (!past_window(bpf_ktime_get_ns()))
				count(PERFCAP_SC_UNMATCHED_EXIT);
			sources_sys_exit(task, regs, ret);
		}
		return 0;
	}
	now = bpf_ktime_get_ns();
	if (p->win != sc_win_start || past_window(now)) {
		count(PERFCAP_SC_CUT);   /* entered in an earlier window, or exits late */
		p->ts = 0;
		sources_sys_exit(task, regs, ret);
		return 0;
	}
	ns = now - p->ts;
	nr = p->nr;
	if (nr < PERFCAP_SYSCALL_NR_MAX) {
		add_total(nr, ns);
		if (wanted(syscall_set[nr].source, ns, now))
			emit_call(ctx, task, p, syscall_set[nr].source, syscall_set[nr].flags, ret,
				  now);
	}
	p->ts = 0;
	sources_sys_exit(task, regs, ret); /* an entry is made for traced tasks only */
	return 0;
}
