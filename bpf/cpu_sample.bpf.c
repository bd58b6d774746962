// SPDX-License-Identifier: GPL-2.0-only
/* cpu_sample.bpf.c - kernel side of the cpu source: CPU stack sampling.
 *
 * on_cpu_sample runs on every tick of a per-CPU cpu-clock perf event and
 * sends the interrupted task's ids and raw kernel + user stacks to this
 * CPU's ring. Raw stacks (not stack map ids): a sample is never lost to a
 * stack map collision, and user space deduplicates them anyway. CPU samples
 * pass the filters but are never sampled 1-in-N or rate capped: -F is
 * their rate control.
 *
 * With --stack-copy, each sample of a user task is preceded by a USTACK
 * record (same ts and tid): the user registers and a window of the user
 * stack, for offline unwinding of code built without frame pointers.
 */
#include "perfcap_common.bpf.h"
#include "ustack_copy.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Ticks this program ran at on a busy CPU (any task but the idle one,
 * before the filters): user space compares them with the busy ticks due
 * by the perf events' clocks (STATS cpu.ticks.*). A tick the kernel did
 * not run the program at (the timer late by more than a period: a virtual
 * CPU the host did not run; another program running on the CPU) takes no
 * sample. Idle CPUs are left out: they may take far fewer ticks (on the
 * test VM an idle CPU takes about 16 a second at -F 499), and no one's
 * CPU time is lost there. */
PC_COUNTERS(cpu_ticks, 1);

/* A sample is built here, then copied to the ring at its real size. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct perfcap_sample);
} scratch SEC(".maps");

SEC("perf_event")
int on_cpu_sample(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 id = bpf_get_current_pid_tgid();
	__u32 zero = 0;
	struct perfcap_sample *s;
	long kret, uret;
	__u64 knr = 0, unr = 0, size, now = bpf_ktime_get_ns();
	void *ring;

	if (task->pid)
		pc_counter_add(&cpu_ticks, 0, 1);
	if (!pc_task_traced(task))
		return 0;
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s) {
		pc_count(PERFCAP_SRC_CPU, PERFCAP_LOSS_SCRATCH);
		return 0;
	}
	pc_header(&s->h, PERFCAP_EV_SAMPLE, now);
	s->pid = id >> 32;
	s->tid = (__u32)id;
	s->kstack_err = 0;
	s->ustack_err = 0;
	bpf_get_current_comm(s->comm, sizeof(s->comm));

	kret = bpf_get_stack(ctx, s->ips, PERFCAP_STACK_MAX_DEPTH * sizeof(__u64), 0);
	if (kret < 0) {
		s->h.flags |= PERFCAP_SAMPLE_F_KSTACK_ERR;
		s->kstack_err = kret;
	} else {
		knr = kret / sizeof(__u64);
	}
	if (knr > PERFCAP_STACK_MAX_DEPTH) /* bound for the verifier */
		knr = PERFCAP_STACK_MAX_DEPTH;

	uret = bpf_get_stack(ctx, &s->ips[knr], PERFCAP_STACK_MAX_DEPTH * sizeof(__u64),
			     BPF_F_USER_STACK);
	if (uret < 0) {
		s->h.flags |= PERFCAP_SAMPLE_F_USTACK_ERR;
		s->ustack_err = uret;
	} else {
		unr = uret / sizeof(__u64);
	}
	if (unr > PERFCAP_STACK_MAX_DEPTH)
		unr = PERFCAP_STACK_MAX_DEPTH;

	s->kstack_nr = knr;
	s->ustack_nr = unr;
	size = PERFCAP_SAMPLE_HEADER_SIZE + (knr + unr) * sizeof(__u64);
	if (size > sizeof(*s)) /* cannot happen; keeps the verifier sure */
		size = sizeof(*s);

	ring = pc_ring(PERFCAP_SRC_CPU);
	ustack_emit(ring, task, PERFCAP_SRC_CPU, now, 0);
	if (ring && bpf_ringbuf_output(ring, s, size, pc_wakeup_flag(ring)))
		pc_count(PERFCAP_SRC_CPU, PERFCAP_LOSS_RINGBUF);
	return 0;
}
