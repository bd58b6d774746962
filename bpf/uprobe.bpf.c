// SPDX-License-Identifier: GPL-2.0-only
/* uprobe.bpf.c - kernel side of the probe source: user probes named on the
 * command line (-e uprobe:PATH:SYMBOL, -e usdt:PATH:PROVIDER:NAME),
 * attached by record/sources/source_probe.c with the probe's index as BPF
 * cookie.
 *
 * uprobes: probe_entry leaves the entry time (and the arguments asked
 * for) under (tid, index) in `probe_calls`, a stack of PERFCAP_PROBE_DEPTH
 * levels so recursive calls pair correctly; probe_return pops it and the
 * call's duration goes into the exact per-probe sums (`probe_counts`:
 * calls, total, log2 histogram) before any record is thinned out
 * (--probe-min, --sample, --rate-cap). The user stack is taken at the
 * return: there the frame-pointer chain starts at the caller, while at the
 * entry the direct caller is not yet in it.
 *
 * USDT: probe_usdt counts the hit and sends it with its first arguments
 * as the SDT note's argument specs describe them (libbpf's usdt.bpf.h:
 * registers, constants or memory, semaphores set by the kernel).
 *
 * Entry probes (Go code, and the gc source's Go runtime functions):
 * probe_hit counts the entry and sends it as a hit (duration 0) with the
 * Go argument registers asked for (the gc source's: Go's own end time of
 * a collection's pause). No return probe ever:
 * a uretprobe rewrites the return address on the stack, which Go's
 * goroutine stacks, copied when they grow, do not survive.
 */
#include "perfcap_common.bpf.h"
#include <bpf/usdt.bpf.h>

char LICENSE[] SEC("license") = "GPL";

/* Set by user space: before load, and for a probe -e gc adds when a
 * traced process execs a runtime, before that probe is attached. */
volatile struct perfcap_probe_conf probe_conf[PERFCAP_PROBES_MAX];
const volatile __u64 probe_min_ns = 0;
const volatile bool probe_stacks = true;   /* a user stack per record */

struct probe_key {
	__u32 tid;
	__u32 probe;
};

struct probe_frame {
	__u64 start[PERFCAP_PROBE_DEPTH];
	__u64 args[PERFCAP_PROBE_DEPTH][PERFCAP_PROBE_ARGS];
	__u32 depth;
	__u32 reserved;
};

/* An LRU: a (thread, probe) entry stays when its last call returns, so a
 * thread calling the function again costs one lookup per entry and return
 * (no insert, no delete); entries of exited threads age out. An entry
 * evicted while a call is in progress (more than PERFCAP_PROBE_CALLS_MAX
 * threads inside probed functions) makes that return unmatched (counted). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, PERFCAP_PROBE_CALLS_MAX);
	__type(key, struct probe_key);
	__type(value, struct probe_frame);
} probe_calls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PERFCAP_PROBES_MAX);
	__type(key, __u32);     /* probe index */
	__type(value, struct perfcap_probe_count);
} probe_counts SEC(".maps");

/* A scratch frame to insert from (too big for the BPF stack with the rest). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct probe_frame);
} probe_scratch SEC(".maps");

static __always_inline struct perfcap_probe_count *counts_of(__u32 probe)
{
	return bpf_map_lookup_elem(&probe_counts, &probe);
}

/* Bucket of a duration, as agg's: 0 below 1024 ns, b for [2^(b+9), 2^(b+10)). */
static __always_inline __u32 hist_bucket(__u64 ns)
{
	__u32 b = 0;

	ns >>= PERFCAP_AGG_HIST_SHIFT + 1;
	for (int i = 0; i < PERFCAP_AGG_HIST - 1 && ns; i++) {
		ns >>= 1;
		b++;
	}
	return b;
}

/* The six integer argument registers at a function's entry: read at fixed
 * offsets of ctx (the verifier refuses a variable offset into it). */
static __always_inline void entry_args(struct pt_regs *ctx, __u64 regs[6])
{
	regs[0] = PT_REGS_PARM1(ctx);
	regs[1] = PT_REGS_PARM2(ctx);
	regs[2] = PT_REGS_PARM3(ctx);
	regs[3] = PT_REGS_PARM4(ctx);
	regs[4] = PT_REGS_PARM5(ctx);
	regs[5] = ctx->r9; /* libbpf 1.1 has no PT_REGS_PARM6 */
}

/* Set by user space when the recording stops, before the probes are
 * detached one by one (a uprobe's removal can take 100 ms): every probe
 * stops at once, so a begin never outlives its end's probe. */
volatile bool probes_off = false;

/* The probe of a cookie, if it is live: configured (a late probe's
 * configuration is written once all of its group is attached) and the
 * recording not stopping. */
static __always_inline bool probe_index(__u64 cookie, __u32 *probe)
{
	if (cookie >= PERFCAP_PROBES_MAX || probes_off)
		return false;
	*probe = (__u32)cookie;
	return probe_conf[*probe].kind != 0;
}

static __always_inline struct probe_frame *frame_of(struct probe_key *key)
{
	struct probe_frame *f = bpf_map_lookup_elem(&probe_calls, key);
	__u32 zero = 0;

	if (f)
		return f;
	f = bpf_map_lookup_elem(&probe_scratch, &zero);
	if (!f)
		return NULL;
	f->depth = 0;
	if (bpf_map_update_elem(&probe_calls, key, f, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&probe_calls, key)) {
		pc_count(PERFCAP_SRC_PROBE, PERFCAP_LOSS_MAP_FULL);
		return NULL;
	}
	return bpf_map_lookup_elem(&probe_calls, key);
}

SEC("uprobe")
int probe_entry(struct pt_regs *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct perfcap_probe_count *cnt;
	struct probe_key key;
	struct probe_frame *f;
	__u64 regs[8] = {};
	__u32 probe, d;

	if (!probe_index(bpf_get_attach_cookie(ctx), &probe) || !pc_task_traced(task))
		return 0;
	cnt = counts_of(probe);
	if (cnt)
		__sync_fetch_and_add(&cnt->hits, 1);
	key.tid = task->pid;
	key.probe = probe;
	f = frame_of(&key);
	if (!f)
		return 0;
	d = f->depth;
	if (d >= PERFCAP_PROBE_DEPTH) {
		if (cnt)
			__sync_fetch_and_add(&cnt->too_deep, 1);
		f->depth = d + 1; /* still popped by its return, untimed */
		return 0;
	}
	entry_args(ctx, regs);
	for (int i = 0; i < PERFCAP_PROBE_ARGS; i++) {
		__u8 n = i < probe_conf[probe].nargs ? probe_conf[probe].arg[i] : 0;

		f->args[d][i] = n >= 1 && n <= 6 ? regs[(n - 1) & 7] : 0;
	}
	f->start[d] = bpf_ktime_get_ns();
	f->depth = d + 1;
	return 0;
}

static __always_inline void emit(struct pt_regs *ctx, struct task_struct *task, __u32 probe,
				 __u64 ts, __u64 duration, __u16 flags, const __u64 *args,
				 __u32 nargs)
{
	void *ring = pc_ring(PERFCAP_SRC_PROBE);
	struct perfcap_probe *e;

	if (!ring)
		return;
	e = pc_reserve(ring, PERFCAP_SRC_PROBE, sizeof(*e));
	if (!e)
		return;
	pc_header(&e->h, PERFCAP_EV_PROBE, ts);
	e->h.flags = flags;
	e->duration = duration;
	e->pid = task->tgid;
	e->tid = task->pid;
	e->probe = probe;
	e->ustack = probe_stacks && !probe_conf[probe & (PERFCAP_PROBES_MAX - 1)].no_stack
			    ? pc_stack_id(ctx, PERFCAP_SRC_PROBE, BPF_F_USER_STACK) : -1;
	e->nargs = nargs;
	e->reserved = 0;
	for (int i = 0; i < PERFCAP_PROBE_ARGS; i++)
		e->args[i] = args[i];
	pc_copy_comm(e->comm, task->comm);
	pc_submit(ring, e);
}

SEC("uretprobe")
int probe_return(struct pt_regs *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct perfcap_probe_count *cnt;
	__u64 now, start, duration, args[PERFCAP_PROBE_ARGS];
	struct probe_key key;
	struct probe_frame *f;
	__u32 probe, d, nargs;

	if (!probe_index(bpf_get_attach_cookie(ctx), &probe))
		return 0;
	key.tid = task->pid;
	key.probe = probe;
	f = bpf_map_lookup_elem(&probe_calls, &key);
	cnt = counts_of(probe);
	if (!f || f->depth == 0) {
		if (cnt && pc_task_traced(task))
			__sync_fetch_and_add(&cnt->unmatched, 1);
		return 0;
	}
	now = bpf_ktime_get_ns();
	d = --f->depth;
	if (d >= PERFCAP_PROBE_DEPTH)
		return 0; /* a call nested too deep: counted at its entry */
	start = f->start[d];
	for (int i = 0; i < PERFCAP_PROBE_ARGS; i++)
		args[i] = f->args[d][i];
	duration = now - start;
	nargs = probe_conf[probe].nargs;
	for (int i = 0; i < PERFCAP_PROBE_ARGS; i++) {
		if (i < nargs && probe_conf[probe].arg[i] == PERFCAP_PROBE_ARG_RET)
			args[i] = PT_REGS_RC(ctx);
	}
	if (cnt) {
		__u32 b = hist_bucket(duration);

		__sync_fetch_and_add(&cnt->calls, 1);
		__sync_fetch_and_add(&cnt->total_ns, duration);
		if (b < PERFCAP_AGG_HIST)
			__sync_fetch_and_add(&cnt->hist[b], 1);
	}
	if (duration < probe_min_ns) {
		if (cnt)
			__sync_fetch_and_add(&cnt->below_min, 1);
		return 0;
	}
	if (pc_admit(PERFCAP_SRC_PROBE, now))
		emit(ctx, task, probe, start, duration, PERFCAP_PROBE_F_TIMED, args, nargs);
	return 0;
}

SEC("usdt")
int probe_usdt(struct pt_regs *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 now, args[PERFCAP_PROBE_ARGS] = {};
	struct perfcap_probe_count *cnt;
	__u32 probe, nargs;
	int have;

	if (!probe_index(bpf_usdt_cookie(ctx), &probe) || !pc_task_traced(task))
		return 0;
	now = bpf_ktime_get_ns();
	cnt = counts_of(probe);
	if (cnt)
		__sync_fetch_and_add(&cnt->hits, 1);
	if (!pc_admit(PERFCAP_SRC_PROBE, now))
		return 0;
	have = bpf_usdt_arg_cnt(ctx);
	nargs = probe_conf[probe].nargs;
	if (have >= 0 && nargs > (__u32)have)
		nargs = (__u32)have;
	for (int i = 0; i < PERFCAP_PROBE_ARGS; i++) {
		long v = 0;

		if ((__u32)i < nargs && bpf_usdt_arg(ctx, i, &v) == 0)
			args[i] = (__u64)v;
	}
	emit(ctx, task, probe, now, 0, 0, args, nargs);
	return 0;
}

/* Go's integer argument registers (ABIInternal), read at fixed offsets. */
static __always_inline void go_args(struct pt_regs *ctx, __u64 regs[9])
{
	regs[0] = ctx->ax;
	regs[1] = ctx->bx;
	regs[2] = ctx->cx;
	regs[3] = ctx->di;
	regs[4] = ctx->si;
	regs[5] = ctx->r8;
	regs[6] = ctx->r9;
	regs[7] = ctx->r10;
	regs[8] = ctx->r11;
}

SEC("uprobe")
int probe_hit(struct pt_regs *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct perfcap_probe_count *cnt;
	__u64 now, regs[16] = {}, args[PERFCAP_PROBE_ARGS] = {};
	__u32 probe, nargs;

	if (!probe_index(bpf_get_attach_cookie(ctx), &probe) || !pc_task_traced(task))
		return 0;
	now = bpf_ktime_get_ns();
	cnt = counts_of(probe);
	if (cnt)
		__sync_fetch_and_add(&cnt->hits, 1);
	if (!pc_admit(PERFCAP_SRC_PROBE, now))
		return 0;
	go_args(ctx, regs);
	nargs = probe_conf[probe].nargs;
	for (int i = 0; i < PERFCAP_PROBE_ARGS; i++) {
		__u8 n = (__u32)i < nargs ? probe_conf[probe].arg[i] : 0;

		args[i] = n >= 1 && n <= 9 ? regs[(n - 1) & 15] : 0;
	}
	emit(ctx, task, probe, now, 0, 0, args, nargs);
	return 0;
}
