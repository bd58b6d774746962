// SPDX-License-Identifier: GPL-2.0-only
/* cpu_sample.bpf.c - kernel side of CPU profiling.
 *
 * on_cpu_sample runs on every tick of a per-CPU cpu-clock perf event and
 * sends the interrupted task's ids and raw kernel + user stacks to the ring
 * buffer. Everything else (deduplication, /proc, symbols) is user space's job.
 *
 * When filter_pids is set, only processes in `targets` are sampled; forks of
 * a target become targets (on_fork). Exec and whole-process exit of followed
 * processes are reported so user space re-reads /proc/PID/maps after an exec.
 * Only perf_event and tp_btf programs: no tracefs, kprobes or trampolines.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "perfcap_bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by user space before load. */
const volatile bool filter_pids = false;
/* Wake the consumer when at least this many bytes wait in the ring; below
 * that it finds the data on its next timed poll (fewer wakeups). */
const volatile __u64 wakeup_bytes = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PERFCAP_TARGETS_MAX);
	__type(key, __u32);  /* tgid */
	__type(value, __u8); /* unused */
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, PERFCAP_RINGBUF_DEFAULT);
} events SEC(".maps");

/* A sample is built here, then copied to the ring at its real size. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct perfcap_sample);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PERFCAP_LOSS_NR);
	__type(key, __u32);
	__type(value, __u64);
} losses SEC(".maps");

static __always_inline void count_loss(__u32 reason)
{
	__u64 *n = bpf_map_lookup_elem(&losses, &reason);

	if (n)
		*n += 1; /* per-CPU slot: no atomics needed */
}

static __always_inline bool is_target(__u32 tgid)
{
	if (!filter_pids)
		return true;
	return bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

static __always_inline __u64 sample_wakeup_flag(void)
{
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

SEC("perf_event")
int on_cpu_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	__u32 zero = 0;
	struct perfcap_sample *s;
	long kret, uret;
	__u64 knr = 0, unr = 0, size;

	if (!is_target(tgid))
		return 0;

	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s) {
		count_loss(PERFCAP_LOSS_SCRATCH);
		return 0;
	}
	s->type = PERFCAP_EV_SAMPLE;
	s->flags = 0;
	s->cpu = bpf_get_smp_processor_id();
	s->ts = bpf_ktime_get_ns();
	s->pid = tgid;
	s->tid = (__u32)id;
	s->kstack_err = 0;
	s->ustack_err = 0;
	bpf_get_current_comm(s->comm, sizeof(s->comm));

	kret = bpf_get_stack(ctx, s->ips, PERFCAP_STACK_MAX_DEPTH * sizeof(__u64), 0);
	if (kret < 0) {
		s->flags |= PERFCAP_SAMPLE_F_KSTACK_ERR;
		s->kstack_err = kret;
	} else {
		knr = kret / sizeof(__u64);
	}
	if (knr > PERFCAP_STACK_MAX_DEPTH) /* bound for the verifier */
		knr = PERFCAP_STACK_MAX_DEPTH;

	uret = bpf_get_stack(ctx, &s->ips[knr], PERFCAP_STACK_MAX_DEPTH * sizeof(__u64),
			     BPF_F_USER_STACK);
	if (uret < 0) {
		s->flags |= PERFCAP_SAMPLE_F_USTACK_ERR;
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

	if (bpf_ringbuf_output(&events, s, size, sample_wakeup_flag()))
		count_loss(PERFCAP_LOSS_SAMPLE_RINGBUF);
	return 0;
}

static __always_inline void emit_proc_event(__u16 type, __u32 tgid, __u32 tid)
{
	struct perfcap_proc_event *e;

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_loss(PERFCAP_LOSS_PROC_RINGBUF);
		return;
	}
	e->type = type;
	e->flags = 0;
	e->cpu = bpf_get_smp_processor_id();
	e->ts = bpf_ktime_get_ns();
	e->pid = tgid;
	e->tid = tid;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	/* rare and urgent: user space reads /proc while the process lives */
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 parent_tgid = parent->tgid;
	__u32 child_tgid = child->tgid;
	__u8 one = 1;

	if (!filter_pids || parent_tgid == child_tgid) /* new thread */
		return 0;
	if (!bpf_map_lookup_elem(&targets, &parent_tgid))
		return 0;
	if (bpf_map_update_elem(&targets, &child_tgid, &one, BPF_ANY))
		count_loss(PERFCAP_LOSS_TARGETS_FULL);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = p->tgid;

	if (is_target(tgid))
		emit_proc_event(PERFCAP_EV_EXEC, tgid, p->pid);
	return 0;
}

/* Fires for every exiting thread; only the last one (signal->live dropped
 * to 0 before this tracepoint) ends the process. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	__u32 tgid = p->tgid;

	if (p->signal->live.counter != 0)
		return 0;
	if (is_target(tgid))
		emit_proc_event(PERFCAP_EV_EXIT, tgid, p->pid);
	return 0;
}
