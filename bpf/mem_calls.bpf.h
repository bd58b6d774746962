/* mem_calls.bpf.h - the mem source's look at system call exits: when a
 * traced process makes memory executable (mmap, mprotect or pkey_mprotect
 * with PROT_EXEC succeeded), an EXEC_MAP record, sent at once, so user
 * space re-reads the process's maps while the new code (a dlopen'd
 * library, JIT code) is mapped. Only the exit is watched: the arguments
 * are still in the registers the call entered with.
 *
 * Included by mem.bpf.c (its page fault program counts in `mem_counters`)
 * and by syscall.bpf.c, whose sys_exit program calls mem_sys_exit() for a
 * traced task when the mem source is selected: every system call on the
 * host already passes that program, which an untraced task leaves at its
 * first test, where a program of its own at sys_exit looked at the number
 * of every call of every process (about 80 ns each on the test VM). User
 * space makes the mem object use the syscall object's `mem_counters`
 * (record/sources/source_mem.c).
 */
#ifndef PERFCAP_MEM_CALLS_BPF_H
#define PERFCAP_MEM_CALLS_BPF_H

#include "perfcap_common.bpf.h"
#include "linux_abi.bpf.h"

PC_COUNTERS(mem_counters, PERFCAP_MEM_C_NR); /* enum perfcap_mem_counter */

static __always_inline void mem_count(__u32 which)
{
	pc_counter_add(&mem_counters, which, 1);
}

static __always_inline void emit_exec_map(struct task_struct *task, __u32 nr, __u64 start,
					  __u64 len, __u32 prot)
{
	void *ring = pc_ring(PERFCAP_SRC_MEM);
	struct perfcap_exec_map *e;

	if (!ring)
		return;
	e = pc_reserve(ring, PERFCAP_SRC_MEM, sizeof(*e));
	if (!e)
		return;
	pc_header(&e->h, PERFCAP_EV_EXEC_MAP, bpf_ktime_get_ns());
	e->start = start;
	e->len = len;
	e->pid = task->tgid;
	e->tid = task->pid;
	e->nr = nr;
	e->prot = prot;
	pc_copy_comm(e->comm, task->comm);
	/* rare and urgent: the mapping may be gone soon (dlclose) */
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

/* The exit of a system call of task, a traced task (the caller filters),
 * that returned ret. mmap(addr, len, prot, ...) returns the address;
 * mprotect(addr, len, prot) and pkey_mprotect(addr, len, prot, pkey) do
 * not. */
static __always_inline void mem_sys_exit(struct task_struct *task, struct pt_regs *regs, long ret)
{
	__u64 nr = regs->orig_ax; /* BTF pointer: direct loads */
	__u32 prot;

	if (nr != NR_mmap && nr != NR_mprotect && nr != NR_pkey_mprotect)
		return;
	prot = (__u32)regs->dx;
	if (ret < 0 || !(prot & PROT_EXEC))
		return;
	mem_count(PERFCAP_MEM_C_EXEC_MAPS);
	emit_exec_map(task, (__u32)nr, nr == NR_mmap ? (__u64)ret : regs->di, regs->si, prot);
}

#endif /* PERFCAP_MEM_CALLS_BPF_H */
