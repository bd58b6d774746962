// SPDX-License-Identifier: GPL-2.0-only
/* mem.bpf.c - kernel side of the mem source: sampled user page faults and
 * the moments a traced process makes memory executable.
 *
 * page_fault_user (x86 exceptions tracepoint): every fault of a traced
 * task is counted; 1 in fault_one_in (seeded, per CPU, like --sample)
 * becomes a FAULT record whose weight is fault_one_in, so summed weights
 * estimate the true count.
 * The exit of mmap / mprotect / pkey_mprotect that succeeded with
 * PROT_EXEC (an EXEC_MAP record, so user space re-reads the process's
 * maps) is mem_calls.bpf.h's, run by the syscall object's sys_exit
 * program, which the mem source always loads (its set: mmap, munmap,
 * mprotect, brk). This object keeps the page fault program; the counters
 * map is the syscall object's (user space makes them one).
 */
#include "mem_calls.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by user space before load. */
const volatile __u32 fault_one_in = 100;

/* Per CPU: the sequence number of the 1-in-N choice. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} fault_seq SEC(".maps");

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
	mem_count(PERFCAP_MEM_C_FAULTS);
	if (!fault_chosen())
		return 0;
	mem_count(PERFCAP_MEM_C_SAMPLED);
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
