// SPDX-License-Identifier: GPL-2.0-only
/* mem.bpf.c - kernel side of the mem source: sampled user page faults and
 * the moments a traced process makes memory executable.
 *
 * page_fault_user (x86 exceptions tracepoint): every fault of a traced
 * task is counted; 1 in fault_one_in (seeded, per CPU, like --sample)
 * becomes a FAULT record whose weight is fault_one_in, so summed weights
 * estimate the true count.
 * sys_exit of mmap / mprotect / pkey_mprotect that succeeded with
 * PROT_EXEC: an EXEC_MAP record, sent at once, so user space re-reads the
 * process's maps while the new code (a dlopen'd library, JIT code) is
 * mapped. This only watches the exit (the arguments are still in the
 * saved registers); the pairing and recording of the mem system calls
 * (mmap, munmap, mprotect, brk) is syscall.bpf.c's.
 */
#include "perfcap_common.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define NR_MMAP          9
#define NR_MPROTECT      10
#define NR_PKEY_MPROTECT 329
#define PROT_EXEC        0x4

/* Set by user space before load. */
const volatile __u32 fault_one_in = 100;

PC_COUNTERS(mem_counters, PERFCAP_MEM_C_NR); /* enum perfcap_mem_counter */

/* Per CPU: the sequence number of the 1-in-N choice. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} fault_seq SEC(".maps");

static __always_inline void count(__u32 which)
{
	pc_counter_add(&mem_counters, which, 1);
}

/* ---- page faults ---------------------------------------------------------- */

/* The n-th fault on a CPU is kept when mix(seed, cpu, n) % N == 0. */
static __always_inline bool fault_chosen(void)
{
	__u64 cpu = bpf_get_smp_processor_id();
	__u32 zero = 0;
	__u64 *seq;

	if (fault_one_in <= 1)
		return true;
	seq = bpf_map_lookup_elem(&fault_seq, &zero);
	if (!seq)
		return false;
	return pc_mix64(pc_config.sample_seed ^ cpu << 48 ^ (*seq)++) % fault_one_in == 0;
}

SEC("tp_btf/page_fault_user")
int BPF_PROG(on_page_fault_user, unsigned long address, struct pt_regs *regs,
	     unsigned long error_code)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct perfcap_fault *e;
	void *ring;
	__u64 now;

	if (!pc_task_traced(task))
		return 0;
	count(PERFCAP_MEM_C_FAULTS);
	if (!fault_chosen())
		return 0;
	count(PERFCAP_MEM_C_SAMPLED);
	now = bpf_ktime_get_ns();
	if (!pc_admit_unsampled(PERFCAP_SRC_MEM, now))
		return 0;
	ring = pc_ring(PERFCAP_SRC_MEM);
	if (!ring)
		return 0;
	e = pc_reserve(ring, PERFCAP_SRC_MEM, sizeof(*e));
	if (!e)
		return 0;
	pc_header(&e->h, PERFCAP_EV_FAULT, now);
	e->addr = address;
	e->ip = BPF_CORE_READ(regs, ip);
	e->pid = task->tgid;
	e->tid = task->pid;
	e->error_code = (__u32)error_code;
	e->weight = fault_one_in > 1 ? fault_one_in : 1;
	pc_copy_comm(e->comm, task->comm);
	pc_submit(ring, e);
	return 0;
}

/* ---- executable mappings ----------------------------------------------------- */

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

SEC("tp_btf/sys_exit")
int BPF_PROG(on_sys_exit, struct pt_regs *regs, long ret)
{
	struct task_struct *task;
	__u64 nr = BPF_CORE_READ(regs, orig_ax);
	__u32 prot;

	if (nr != NR_MMAP && nr != NR_MPROTECT && nr != NR_PKEY_MPROTECT)
		return 0;
	prot = (__u32)BPF_CORE_READ(regs, dx);
	if (ret < 0 || !(prot & PROT_EXEC))
		return 0;
	task = bpf_get_current_task_btf();
	if (!pc_task_traced(task))
		return 0;
	count(PERFCAP_MEM_C_EXEC_MAPS);
	if (nr == NR_MMAP) /* mmap(addr, len, prot, ...) returns the address */
		emit_exec_map(task, (__u32)nr, (__u64)ret, BPF_CORE_READ(regs, si), prot);
	else               /* mprotect(addr, len, prot) */
		emit_exec_map(task, (__u32)nr, BPF_CORE_READ(regs, di),
			      BPF_CORE_READ(regs, si), prot);
	return 0;
}
