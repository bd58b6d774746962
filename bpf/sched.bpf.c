// SPDX-License-Identifier: GPL-2.0-only
/* sched.bpf.c - kernel side of the sched source: context switches, wakeups
 * and off-CPU intervals. (FORK records come from proc.bpf.c, the one owner
 * of sched_process_fork.)
 *
 * sched_switch: a SWITCH record when prev or next is traced. A traced prev
 * leaves {time, state, user stack id} in its task storage (`offcpu_starts`);
 * when that task is switched in again and was off CPU for at least
 * offcpu_min_ns, an OFFCPU record carries the interval, the user stack
 * from the switch-out, the kernel stack where it slept and the last waker.
 * The user stack can only be walked while the task is current (at
 * switch-out); the kernel stack of a sleeping task is still intact at its
 * switch-in, so it is read then, and only for intervals that are recorded
 * (a kernel stack walk costs about a microsecond; most sleeps are short).
 * Stacks are taken only when prev blocks (state != 0): a preempted task is
 * still runnable, its interval is run-queue time and its stack is the CPU
 * samples' business.
 * sched_wakeup / sched_wakeup_new: a WAKEUP record for a traced task, with
 * the waker (the current task; 0 in interrupt context or when idle).
 *
 * With --stack-copy, the user registers and user stack window of a blocked
 * user thread are sent as a USTACK record (F_OFFCPU, ts = switch-out) for
 * each recorded interval, taken one of two ways (user space picks one of
 * the two sched_switch programs before load):
 *   on_switch_ret (kernels with bpf_task_work_schedule_resume_impl, 6.18):
 *     at the switch-in of a recorded interval, a task_work is scheduled
 *     that copies the stack when the thread returns to user space, where
 *     its user registers and stack are still those of the switch-out. Only
 *     recorded intervals pay for a copy (most blocking switch-outs are
 *     shorter than offcpu_min_ns), and no frame-pointer walk is taken at
 *     the switch-out. The copy follows its OFFCPU record, which says so
 *     (PERFCAP_OFFCPU_F_COPY_FOLLOWS). A thread's copy also stands for its
 *     later intervals blocked at the same place (a fingerprint of where
 *     it blocked, from the head of its stack kept at each blocking
 *     switch-out) for stack_reuse_ns: those schedule nothing
 *     (PERFCAP_OFFCPU_F_COPY_SAME). See "copies at the return".
 *   on_switch (older kernels, or --offcpu-copy switch-out): copied at
 *     every blocking switch-out into a stash slot of its own
 *     (offcpu_ustash, see "off-CPU stack copies" below), sent just before
 *     the OFFCPU record when the interval is recorded.
 *
 * With the waits source recorded too (with_waits, the default set), these
 * programs also run its logic (waits.bpf.h), each thread's wait state in
 * its offcpu_starts entry and the sums in this object's agg_metrics, which
 * the waits source's object reuses to drain; that object's own programs
 * on the same two tracepoints are not loaded: one program per tracepoint,
 * one filter lookup and one task storage lookup per task, one clock read.
 *
 * Above --sched-rate, user space attaches sched_switch, sched_waking and
 * sched_wakeup_new only in a window at the start of each second
 * (record/sources/source_sched.c, "windows"). sched_epoch moves at each
 * window after a gap: an interval switched out before it is kept only if
 * its thread stayed off CPU throughout (gap_flags); sched_edge, a task
 * iterator run at the gap's edges, writes every traced thread with its
 * run-time counters at both, closes the waits in progress at its start,
 * and begins the blocked threads' at its end; on_task_exit writes a
 * thread that exits in between (see "windows' edges").
 *
 * The kernel side stays dumb: apart from the waits' sums, no aggregation,
 * only pairing switch-out with switch-in. Only tp_btf programs (and the
 * iterator): no tracefs, kprobes or trampolines.
 */
#include "perfcap_common.bpf.h"
#include "ustack_copy.bpf.h"
#include "waits.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define PF_KTHREAD        0x00200000
#define PAGE_BYTES        4096
#define THREAD_BYTES      (4 * PAGE_BYTES) /* x86-64 task stack without KASAN */
#define NO_STACK          (-1)

/* Set by user space before load. */
const volatile __u64 offcpu_min_ns = 1000000;
/* sched_switch has the prev_state argument (Linux 5.18+), read from the
 * kernel's BTF by user space: it is the state __schedule() acted on, while
 * prev->__state may already have been changed by a concurrent wakeup. */
const volatile bool switch_has_prev_state = false;
/* For tests only (PERFCAP_SCHED_DROP_SWITCH_IN, perfcap-record(1)):
 * every n-th switch-in of a traced thread is ignored, as if the kernel had
 * not delivered it (see close_unseen). 0: none (the check is then not in
 * the loaded program). */
const volatile __u32 drop_switch_in_every = 0;
__u64 traced_switch_ins = 0;
/* The waits source is recorded too: its sums are made here (waits.bpf.h). */
const volatile bool with_waits = false;
/* &__preempt_count - &runqueues of the same CPU: their offsets in the
 * kernel's per-CPU section, read from its BTF by user space (0: unknown). */
const volatile __s64 preempt_count_from_rq = 0;
/* Set by user space after the check (probe_preempt_count) passed: an
 * interrupt is then told hard or soft by the preempt count, and the
 * softirq_exit program is not attached (see who_wakes). */
bool irq_by_preempt_count = false;
/* The per-CPU fields that name the running soft interrupt (perfcap_bpf.h),
 * set by user space before load; softirq_by_marks is set with
 * irq_by_preempt_count when they are all there: softirq_entry is then not
 * attached either (see softirq_named). */
const volatile struct perfcap_softirq_marks softirq_marks = {};
const volatile bool marks_usable = false; /* softirq_marks found, bpf_rdonly_cast there */
bool softirq_by_marks = false;
/* Windows (record/sources/source_sched.c, "windows"): above --sched-rate
 * the programs are attached only in a window at the start of each second.
 * sched_epoch changes at each window that follows a gap; sched_edge runs
 * at each edge of a gap (edge_close: its start), at edge_ns. */
__u32 sched_epoch = 0;
__u64 edge_ns = 0;
bool edge_close = false;
bool sched_in_gap = false;   /* the programs are detached (on_task_exit) */

#define COPY_FPS 4 /* copies a thread keeps for reuse (see "copies at the return") */
#define FP_HEAD 256      /* bytes of user stack a fingerprint covers (ditto) */
#define KSTACKS 4        /* kernel stacks a thread keeps for reuse (see "kernel stacks") */
#define KSTACK_KEEP 32   /* frames of such a stack (deeper ones are walked each time) */

/* A kernel stack walked at a recorded switch-in, kept for the thread's
 * later waits at the same place. */
struct kstack_kept {
	__u64 fp;               /* its fingerprint, 0: none */
	__u64 ts;               /* when it was walked */
	__u64 nr;               /* frames in ips */
	__u64 ips[KSTACK_KEEP];
};

/* Who woke a task and in which context (see struct perfcap_wakeup). */
struct waker {
	__u32 pid, tid;         /* the waker task; 0 in interrupt context */
	__u32 flags;            /* PERFCAP_WAKE_* */
	__u32 irq_pid, irq_tid; /* in interrupt context: the interrupted task */
};

struct offcpu_start {
	__u64 ts;               /* switch-out */
	__u32 state;
	__s32 ustack;
	__u32 copied;           /* offcpu_ustash slot + 1 holding this interval's copy, 0: none */
	struct waker waker;     /* last waker seen since */
	__u64 out_fp;           /* fingerprint of the blocked user state at switch-out, 0: none;
				 * made at the switch-in of a recorded interval */
	__u16 head_read;        /* head holds the user stack at this switch-out */
	__u16 since_recorded;   /* blocking switch-outs since the last recorded interval */
	__u64 head[FP_HEAD / 8]; /* ... its first FP_HEAD bytes, for out_fp */
	__u64 copy_fp[COPY_FPS]; /* the last copies sent for distinct fingerprints, */
	__u64 copy_ts[COPY_FPS]; /* and their switch-outs (0: none) */
	struct kstack_kept kept[KSTACKS];
	struct wait_start wait;  /* with_waits: the waits source's state (waits.bpf.h) */
	__u64 out_runtime;       /* se.sum_exec_runtime at the switch-out */
	__u32 epoch;             /* sched_epoch at the switch-out */
	__u32 waker_seen;        /* a wakeup was seen since */
};

/* Task storage, not a map keyed by tid: found from the task itself at
 * every switch and wakeup (no hashing; a hash map cost two lookups and an
 * update per switch), freed with the task, no thread limit. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct offcpu_start);
} offcpu_starts SEC(".maps");

/* An OFFCPU record is built here, then copied to the ring at its size. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct perfcap_offcpu);
} offcpu_scratch SEC(".maps");

/* Where the tracepoint's arguments live: written as a pointer, read back
 * as a number (see in_interrupt_context). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} frame_address SEC(".maps");

/* The soft interrupt running on this CPU: its vector + 1, 0 when none.
 * Set by softirq_entry (and cleared by softirq_exit when it is attached),
 * read by a wakeup in interrupt context to tell a packet's or a block
 * completion's softirq from a hard interrupt (who_wakes). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} softirq_running SEC(".maps");

/* ---- task facts, CO-RE safe ----------------------------------------------- */

struct task_struct___pre518 {
	long state;
} __attribute__((preserve_access_index));

struct task_struct___cpu {
	unsigned int cpu;
} __attribute__((preserve_access_index));

static __always_inline __u32 task_state(struct task_struct *t)
{
	struct task_struct___pre518 *old = (void *)t;

	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return (__u32)BPF_CORE_READ(old, state);
}

static __always_inline __u32 task_cpu(struct task_struct *t)
{
	struct task_struct___cpu *other = (void *)t;

	if (bpf_core_field_exists(t->thread_info.cpu))
		return BPF_CORE_READ(t, thread_info.cpu);
	return BPF_CORE_READ(other, cpu);
}

/* The state prev was switched out in, as the kernel has it: 0 when
 * preempted (still runnable), else its state bits. */
static __always_inline __u32 switch_out_state(bool preempt, struct task_struct *prev,
					      unsigned long long *ctx)
{
	if (preempt)
		return 0;
	if (switch_has_prev_state)
		return (__u32)ctx[3];
	return task_state(prev);
}

/* Whether the task entered the kernel through an interrupt taken in user
 * mode: x86-64 runs such an interrupt's handler on the task's own stack
 * (the interrupt stack is used only for interrupts taken in the kernel),
 * and the register frame at the top of that stack then holds a user code
 * segment and a negative orig_ax (a vector, or -1). A system call's frame
 * holds the call's number there, an exception's its error code: both
 * >= 0. */
static __always_inline bool entered_by_user_interrupt(struct task_struct *task)
{
	/* that frame is task_pt_regs(): loaded directly (a trusted pointer),
	 * no helper call */
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);

	return (regs->cs & 3) == 3 && (long)regs->orig_ax < 0;
}

/* Hard and soft interrupts taken in the kernel run on the per-CPU
 * interrupt stack (x86-64). A tp_btf program's ctx is the argument array
 * the tracepoint built on the stack it runs on, so a ctx outside the
 * current task's stack means interrupt context, where "current" is merely
 * the interrupted task; an interrupt taken in user mode runs on the task's
 * stack and is recognized by its register frame (above). (The preempt
 * count could say so too, but it is read only where user space checked it
 * reads true, see this_cpu_preempt_count; the program's own frame may be on
 * a private BPF stack.) The address is laundered through a map: privileged
 * programs may store pointers there. */
static __always_inline bool in_interrupt_context(void *ctx, struct task_struct *task)
{
	__u32 zero = 0;
	__u64 *slot = bpf_map_lookup_elem(&frame_address, &zero);
	__u64 here, low, size = THREAD_BYTES;
	struct vm_struct *area;

	if (!slot)
		return false;
	*(void *volatile *)slot = ctx;
	here = *(volatile __u64 *)slot;
	low = (__u64)task->stack;
	area = task->stack_vm_area;
	if (area) /* vmap'ed stack: its size less the guard page */
		size = area->size - PAGE_BYTES;
	if (here < low || here >= low + size)
		return true;
	return !(task->flags & PF_KTHREAD) && entered_by_user_interrupt(task);
}

/* Direct loads from a task the program was given (cheaper than a
 * bpf_probe_read_kernel call). */
static __always_inline void copy_task_comm(char *dst, struct task_struct *task)
{
	__builtin_memcpy(dst, task->comm, PERFCAP_COMM_LEN);
}

/* ---- off-CPU stack copies ---------------------------------------------------- */

/* Slots of offcpu_ustash, less one (a power of two less one; user space
 * sizes the map). A thread takes the first of USTASH_PROBES slots from
 * tid & mask that is its own (its last copy, maybe reusable) or free: a
 * slot stays held (USTASH_PENDING) from its owner's switch-out to its
 * switch-in, so threads blocked at the same time do not overwrite each
 * other's copies; when every probed slot is held the thread goes without
 * (counted: sched.ustack.no_slot). A slot names its owner (tid) and the
 * switch-out it was taken at (h.ts), so a slot taken over after
 * USTASH_STALE_NS (its owner's switch-in was never seen) is recognized at
 * the switch-in and counted, never sent under the wrong interval. */
const volatile __u32 ustash_mask = 0;

#define USTASH_PROBES   4
#define USTASH_STALE_NS (60ull * 1000000000ull)
#define USTASH_PENDING  0x8000 /* in h.flags while held; cleared before it is sent */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* user space: ustash_mask + 1 */
	__type(key, __u32);
	__type(value, struct ustack_slot);
} offcpu_ustash SEC(".maps");

/* Bytes at sp compared before a copy is reused. */
#define USTASH_HEAD 64

/* Counters read by user space (STATS sched.ustack.*; the last seven for
 * copies at the return to user space only). */
enum {
	USTASH_TAKEN, USTASH_REUSED, USTASH_SENT, USTASH_OVERWRITTEN, USTASH_NO_SLOT,
	USTASH_SCHEDULED,  /* task_works scheduled */
	USTASH_JOINED,     /* intervals added to a copy still waiting (blocked again) */
	USTASH_EXITED,     /* intervals whose thread exited before returning */
	USTASH_FAILED,     /* intervals whose task_work could not be scheduled */
	USTASH_TOO_MANY,   /* intervals beyond COPY_INTERVALS before a return */
	USTASH_ABANDONED,  /* intervals whose slot was taken over (task_work never ran, or a race) */
	USTASH_COPY_NS,    /* ns spent in the task_works (bpf_stats does not see them) */
	USTASH_SAME,       /* intervals given the thread's last copy (same fingerprint) */
	USTASH_REFRESHED,  /* copies taken although the last one had the same fingerprint */
	KSTACK_REUSED,     /* recorded intervals given a kept kernel stack */
	KSTACK_AGREED,     /* walks again at a kept place that found the kept stack */
	KSTACK_DIFFERED,   /* ... that found another one */
	IRQ_UNREAD,        /* interrupt-context wakeups whose preempt count could not be read */
	USTASH_NO_HEAD,    /* recorded blocked intervals without a fingerprint (head not read) */
	GAP_KEPT,          /* switch-ins after a gap of threads off CPU throughout it */
	GAP_RAN,           /* ... of threads that ran in it: their interval not recorded */
	IN_UNSEEN,         /* switch-ins never delivered: see close_unseen */
	USTASH_NR
};
__u64 ustash_counts[USTASH_NR] = {};

/* Whether the slot already holds a copy of this thread blocked at the same
 * place: same ip, sp and bp, and the same first USTASH_HEAD bytes at sp
 * (the innermost frames' return addresses). A thread that waits again and
 * again at one call site (a server's epoll_wait, a backend's socket read)
 * then costs a 64-byte read per switch-out instead of a window. */
static __always_inline bool ustash_same(const struct perfcap_ustack *u, __u32 tid,
					const __u64 *regs, const __u64 *head)
{
	if (u->tid != tid || u->size < USTASH_HEAD || u->regs[PERFCAP_UREG_IP] != regs[0] ||
	    u->regs[PERFCAP_UREG_SP] != regs[1] || u->regs[PERFCAP_UREG_BP] != regs[2])
		return false;
	for (int i = 0; i < USTASH_HEAD / 8; i++)
		if (((const __u64 *)u->data)[i] != head[i])
			return false;
	return true;
}

/* The slot for tid's copy: its own among the probed ones, else the first
 * one not held; *idx gets its index. NULL when all are held. */
static __always_inline struct perfcap_ustack *ustash_slot(__u32 tid, __u64 now, __u32 *idx)
{
	struct perfcap_ustack *avail = NULL;

	for (__u32 i = 0; i < USTASH_PROBES; i++) {
		__u32 at = (tid + i) & ustash_mask;
		struct perfcap_ustack *u = bpf_map_lookup_elem(&offcpu_ustash, &at);

		if (!u)
			continue;
		if (u->tid == tid) {
			*idx = at;
			return u;
		}
		if (!avail && (!(u->h.flags & USTASH_PENDING) || now - u->h.ts > USTASH_STALE_NS)) {
			avail = u;
			*idx = at;
		}
	}
	return avail;
}

/* At a blocking switch-out of user thread prev (current): makes a slot
 * hold the user registers and stack window as of now, and holds it.
 * Returns the slot's index + 1, or 0 when there is no copy. */
static __always_inline __u32 ustash_take(struct task_struct *prev, __u64 now)
{
	__u32 tid = prev->pid, idx = 0, want = ustack_window;
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(prev);
	__u64 r[3], head[USTASH_HEAD / 8] = {};
	struct perfcap_ustack *u;

	if (!want)
		return 0;
	u = ustash_slot(tid, now, &idx);
	if (!u) {
		__sync_fetch_and_add(&ustash_counts[USTASH_NO_SLOT], 1);
		return 0;
	}
	r[0] = BPF_CORE_READ(regs, ip);
	r[1] = BPF_CORE_READ(regs, sp);
	r[2] = BPF_CORE_READ(regs, bp);
	if (!bpf_probe_read_user(head, sizeof(head), (const void *)r[1]) &&
	    ustash_same(u, tid, r, head)) {
		u->h.ts = now;
		u->h.flags |= USTASH_PENDING;
		__sync_fetch_and_add(&ustash_counts[USTASH_REUSED], 1);
		return idx + 1;
	}
	pc_header(&u->h, PERFCAP_EV_USTACK, now);
	u->h.flags = PERFCAP_USTACK_F_OFFCPU | USTASH_PENDING;
	u->pid = prev->tgid;
	u->tid = tid;
	ustack_fill(u, prev, want);
	__sync_fetch_and_add(&ustash_counts[USTASH_TAKEN], 1);
	return idx + 1;
}

/* At the switch-in of tid (blocked since out_ts, its copy in slot
 * copied - 1): frees the slot and, with a ring, sends the copy first -
 * unless another thread took the slot over since (counted). */
static __always_inline void ustash_release(void *ring, __u32 tid, __u64 out_ts, __u32 copied)
{
	__u32 idx = copied - 1;
	struct perfcap_ustack *u = bpf_map_lookup_elem(&offcpu_ustash, &idx);
	__u64 size;

	if (!u)
		return;
	if (u->tid != tid || u->h.ts != out_ts) {
		if (ring)
			__sync_fetch_and_add(&ustash_counts[USTASH_OVERWRITTEN], 1);
		return;
	}
	u->h.flags &= ~USTASH_PENDING;
	if (!ring)
		return;
	size = PERFCAP_USTACK_HEADER_SIZE + (__u64)u->size;
	if (size > sizeof(*u)) /* cannot happen; keeps the verifier sure */
		size = sizeof(*u);
	if (bpf_ringbuf_output(ring, u, size, pc_wakeup_flag(ring)))
		pc_count(PERFCAP_SRC_SCHED, PERFCAP_LOSS_RINGBUF);
	else
		__sync_fetch_and_add(&ustash_counts[USTASH_SENT], 1);
}

/* ---- copies at the return to user space ------------------------------------ */

/* One copy stands for later intervals of the same thread blocked at the
 * same place. Scheduling a task_work costs this VM about 25 us (the kfunc
 * queues an irq_work: a self-IPI, a VM exit), and a server's threads block
 * at a few places again and again (a backend waiting for its client or a
 * row lock, an event loop in epoll_wait). So each recorded interval of a
 * user thread gets a fingerprint of where it blocked (made at its
 * switch-in from the registers, which have not changed, and the stack's
 * head, copied into the thread's entry at every blocking switch-out, the
 * one time it can be read): its user ip and sp,
 * the system call, and every word of the first FP_HEAD bytes of its stack
 * that points into the executable's text, with its offset (return
 * addresses into the program: which callers, at which depth). Callee-saved
 * registers and other stack words are left out: they hold the callers'
 * locals (a loop counter), which change from one wait to the next without
 * changing the stack. Each thread keeps the fingerprints of its last
 * COPY_FPS copies sent; a recorded interval whose fingerprint is one of
 * them, copied less than stack_reuse_ns before, names that copy (OFFCPU
 * flag COPY_SAME, copy_ts) instead of scheduling one. After stack_reuse_ns
 * a new copy is taken, naming the one it refreshes, so the analyzer checks
 * that equal fingerprints did unwind to equal stacks and counts when they
 * did not (copies.refresh_differed): two call paths with the same
 * fingerprint differ only in library callers or deeper than FP_HEAD. */
const volatile __u64 stack_reuse_ns = 1000000000ull; /* 0: copy every interval */

static __always_inline __u64 fp_mix(__u64 h, __u64 x)
{
	h ^= x;
	h *= 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 31);
}

/* The fingerprint of task's user registers and of head, the FP_HEAD bytes
 * at its sp. Never 0. */
static __always_inline __u64 fp_of(struct task_struct *task, const __u64 *head)
{
	struct pt_regs *r = (struct pt_regs *)bpf_task_pt_regs(task);
	struct mm_struct *mm = task->mm;
	__u64 lo = mm->start_code, hi = mm->end_code; /* direct loads: no helper calls */
	__u64 h = 0x243f6a8885a308d3ull;

	h = fp_mix(h, lo);  /* the program: an exec'd thread keeps its storage */
	h = fp_mix(h, r->ip);
	h = fp_mix(h, r->sp);
	h = fp_mix(h, r->orig_ax);
	for (int i = 0; i < FP_HEAD / 8; i++)
		if (head[i] >= lo && head[i] < hi)
			h = fp_mix(h, head[i] ^ (__u64)i << 56);
	return h | 1;
}

/* At a blocking switch-out of user thread prev (current): the head of
 * its user stack into start, whether it was read. Only the copy is taken
 * here: the fingerprint is made from it at the switch-in, and only for a
 * recorded interval, since the stack cannot be read then: the current task
 * is another.
 *
 * And only by a thread that had a recorded interval among its last
 * HEAD_AFTER_RECORDED blocking switch-outs. The read is most of what a
 * short wait costs (about 90 ns of a pinned pingpong's 250 ns switch),
 * and a server under load blocks mostly briefly: on postgres one blocking
 * switch-out in 600 is recorded. A recorded interval without a head has
 * no fingerprint: it gets a copy of its own at its return and its kernel
 * stack walked (STATS sched.ustack.no_head), a few microseconds against
 * the reads saved; its copy's fingerprint is kept, so a thread that then
 * waits long again at that place, reading heads again, reuses it. A
 * thread whose recorded intervals come more often than that (a pool of
 * sleepers, an idle event loop) reads every head, as before. */
#define HEAD_AFTER_RECORDED 64

static __always_inline __u16 head_switch_out(struct task_struct *prev, struct offcpu_start *start)
{
	struct pt_regs *r = (struct pt_regs *)bpf_task_pt_regs(prev);

	if (!stack_reuse_ns)
		return 0;
	if (start->since_recorded >= HEAD_AFTER_RECORDED)
		return 0;
	start->since_recorded++;
	return !bpf_probe_read_user(start->head, FP_HEAD, (const void *)r->sp);
}

/* A blocked thread's user registers and user stack do not change until it
 * returns to user space: the kernel does not touch them, and a signal
 * frame is built only after get_signal() has run the pending task_works.
 * So the copy of a recorded interval is taken then, by a task_work
 * scheduled at its switch-in, in the thread's own context. The kfunc
 * queues an irq_work that adds the task_work; it runs as soon as the
 * switch-in re-enables interrupts, before the thread can leave the kernel.
 * A thread that blocks again before returning (the same system call)
 * adds its next recorded interval to the waiting copy, up to
 * COPY_INTERVALS; the copy is sent once per interval. A thread killed
 * while blocked runs it in get_signal() before it exits, so it still gets
 * its copy; one that reaches do_exit() otherwise runs it without its
 * memory: counted, no copy. copy_work[i] holds thread tid's copy in offcpu_ustash[i]; it
 * is taken like a stash slot (own or free among USTASH_PROBES, free: nr
 * 0), held until the callback ran, taken over after USTASH_STALE_NS. */
extern int bpf_task_work_schedule_resume_impl(struct task_struct *task,
					      struct bpf_task_work *tw, void *map__map,
					      bpf_task_work_callback_t callback,
					      void *aux__prog) __ksym __weak;

#define COPY_INTERVALS 16 /* a power of two */
#define PF_EXITING     0x00000004
#define PF_IO_WORKER   0x00000010 /* io_uring worker: never returns to user space */

struct copy_work {
	struct bpf_task_work tw;
	__u32 tid;              /* the thread the copy is for */
	__u32 nr;               /* recorded intervals waiting: out_ts[0 .. nr); 0: free */
	__u64 since;            /* when the task_work was scheduled */
	__u64 out_ts[COPY_INTERVALS]; /* their switch-outs (the copies' ts) */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* user space: as offcpu_ustash */
	__type(key, __u32);
	__type(value, struct copy_work);
} copy_work SEC(".maps");

static __always_inline void ustash_count(__u32 what, __u64 n)
{
	__sync_fetch_and_add(&ustash_counts[what], n);
}

/* Sends the copy in u once per waiting interval of w. Whether the first
 * was sent. */
static __always_inline bool copy_send(struct copy_work *w, struct perfcap_ustack *u, __u32 nr)
{
	void *ring = pc_ring(PERFCAP_SRC_SCHED);
	__u64 size = PERFCAP_USTACK_HEADER_SIZE + (__u64)u->size;
	bool first = false;

	if (size > sizeof(*u)) /* cannot happen; keeps the verifier sure */
		size = sizeof(*u);
	for (__u32 i = 0; i < COPY_INTERVALS && i < nr; i++) {
		u->h.ts = w->out_ts[i];
		if (!ring || bpf_ringbuf_output(ring, u, size, pc_wakeup_flag(ring))) {
			pc_count(PERFCAP_SRC_SCHED, PERFCAP_LOSS_RINGBUF);
		} else {
			ustash_count(USTASH_SENT, 1);
			first |= i == 0;
		}
	}
	return first;
}

/* After task's copy u (of the interval switched out at out_ts) was sent:
 * it may stand for the task's later intervals with its fingerprint. */
static __always_inline void copy_remember(struct task_struct *task, struct perfcap_ustack *u,
					  __u64 out_ts)
{
	struct offcpu_start *s;
	__u32 k = 0, found = 0;
	__u64 fp;

	if (!stack_reuse_ns || u->size < FP_HEAD)
		return;
	s = bpf_task_storage_get(&offcpu_starts, task, 0, 0);
	if (!s)
		return;
	fp = fp_of(task, (const __u64 *)u->data);
	for (__u32 i = 0; i < COPY_FPS; i++) /* its own entry, else the oldest */
		if (s->copy_fp[i] == fp) {
			k = i;
			found = 1;
		}
	for (__u32 i = 1; i < COPY_FPS && !found; i++)
		if (s->copy_ts[i] < s->copy_ts[k])
			k = i;
	k &= COPY_FPS - 1;
	s->copy_fp[k] = fp;
	s->copy_ts[k] = out_ts;
}

/* Copies the current task's user registers and stack window into u. */
static __always_inline void copy_take(struct perfcap_ustack *u, struct task_struct *task,
				      __u64 ts)
{
	pc_header(&u->h, PERFCAP_EV_USTACK, ts);
	u->h.flags = PERFCAP_USTACK_F_OFFCPU;
	u->pid = task->tgid;
	u->tid = task->pid;
	ustack_fill(u, task, ustack_window);
	ustash_count(USTASH_TAKEN, 1);
}

/* The task_work: runs in the thread's own context on its way back to user
 * space (or in do_exit()). Copies into the slot's stash and sends; its own
 * run time is counted, since bpf_stats does not see a task_work. */
static int copy_at_return(struct bpf_map *map, void *key, void *value)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct copy_work *w = value;
	__u64 t0 = bpf_ktime_get_ns();
	__u32 nr = w->nr;
	struct perfcap_ustack *u;

	(void)map;
	if (!nr || w->tid != task->pid) { /* taken over since (two threads claiming it at once) */
		ustash_count(USTASH_ABANDONED, 1);
		return 0;
	}
	u = bpf_map_lookup_elem(&offcpu_ustash, key);
	if (!u || (task->flags & PF_EXITING)) {
		ustash_count(USTASH_EXITED, nr);
	} else {
		copy_take(u, task, w->out_ts[0]);
		if (copy_send(w, u, nr))
			copy_remember(task, u, w->out_ts[0]);
	}
	w->nr = 0;
	ustash_count(USTASH_COPY_NS, bpf_ktime_get_ns() - t0);
	return 0;
}

/* The copy_work slot for tid: its own among the probed ones, else the
 * first free (or stale) one; *idx gets its index. NULL when all are held. */
static __always_inline struct copy_work *copy_slot(__u32 tid, __u64 now, __u32 *idx)
{
	struct copy_work *avail = NULL;

	for (__u32 i = 0; i < USTASH_PROBES; i++) {
		__u32 at = (tid + i) & ustash_mask;
		struct copy_work *w = bpf_map_lookup_elem(&copy_work, &at);

		if (!w)
			continue;
		if (w->tid == tid && w->nr) {
			*idx = at;
			return w;
		}
		if (!avail && (!w->nr || now - w->since > USTASH_STALE_NS)) {
			avail = w;
			*idx = at;
		}
	}
	return avail;
}

/* Adds the interval that started at out_ts to the copy waiting for thread
 * next, or schedules one. Whether a copy will follow the OFFCPU record. */
static __always_inline bool copy_later(struct task_struct *next, __u64 out_ts, __u64 now)
{
	__u32 tid = next->pid, idx = 0;
	struct copy_work *w = copy_slot(tid, now, &idx);

	if (!w) {
		ustash_count(USTASH_NO_SLOT, 1);
		return false;
	}
	if (w->nr && w->tid == tid) { /* blocked again before returning */
		if (w->nr >= COPY_INTERVALS) {
			ustash_count(USTASH_TOO_MANY, 1);
			return false;
		}
		w->out_ts[w->nr & (COPY_INTERVALS - 1)] = out_ts;
		w->nr++;
		ustash_count(USTASH_JOINED, 1);
		return true;
	}
	if (w->nr) /* stale: its thread never ran the task_work */
		ustash_count(USTASH_ABANDONED, w->nr);
	w->tid = tid;
	w->out_ts[0] = out_ts;
	w->since = now;
	w->nr = 1;
	if (bpf_task_work_schedule_resume_impl(next, &w->tw, &copy_work, copy_at_return, NULL)) {
		w->nr = 0;
		ustash_count(USTASH_FAILED, 1);
		return false;
	}
	ustash_count(USTASH_SCHEDULED, 1);
	return true;
}

/* ---- off-CPU intervals ------------------------------------------------------ */

/* A thread's entry lives from its first switch-out to its last (TASK_DEAD)
 * and is updated in place: ts 0 means "on CPU now". at_return: the copy
 * is taken at the return to user space, and replaces the frame-pointer
 * walk (the analyzer unwinds the copy, by frame pointers too). */
static __always_inline void close_unseen(struct task_struct *task, struct offcpu_start *start,
					 __u64 now);

static __always_inline struct offcpu_start *note_switch_out(void *ctx, struct task_struct *prev,
							    __u32 state, __u64 now, bool at_return)
{
	__s32 ustack = NO_STACK;
	__u32 copied = 0;
	bool head = false;
	struct offcpu_start *start;

	if (prev->pid == 0) /* idle */
		return NULL;
	if (state & PERFCAP_TASK_DEAD) { /* gone for good: its storage goes with it */
		start = bpf_task_storage_get(&offcpu_starts, prev, 0, 0);
		if (start && start->ts)
			close_unseen(prev, start, now);
		return NULL;
	}
	start = bpf_task_storage_get(&offcpu_starts, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!start) { /* no memory, or the storage busy on this CPU */
		pc_count(PERFCAP_SRC_SCHED, PERFCAP_LOSS_MAP_FULL);
		return NULL;
	}
	if (start->ts) /* before this switch-out takes the stash slot */
		close_unseen(prev, start, now);
	if (state && !(prev->flags & PF_KTHREAD)) {
		if (!(at_return && ustack_window)) {
			ustack = pc_stack_id(ctx, PERFCAP_SRC_SCHED, BPF_F_USER_STACK);
			copied = ustash_take(prev, now);
		} else {
			head = true;
		}
	}
	start->ts = now;  /* field by field: the last copy's fields stay */
	start->epoch = sched_epoch;
	start->out_runtime = prev->se.sum_exec_runtime;
	start->waker_seen = 0;
	start->state = state;
	start->ustack = ustack;
	start->copied = copied;
	start->out_fp = 0;
	start->head_read = head && head_switch_out(prev, start);
	__builtin_memset(&start->waker, 0, sizeof(start->waker));
	return start;
}

/* ---- kernel stacks ------------------------------------------------------------ */

/* The kernel stack a recorded interval slept in is walked at its
 * switch-in (bpf_get_task_stack: an ORC walk, about 4 us a stack on this
 * VM: a thread pool whose threads each wake every few milliseconds pays
 * it for every wait). A thread blocked at the same place sleeps in the
 * same stack, so the walk is kept in its task storage (KSTACKS of them,
 * KSTACK_KEEP frames) under a fingerprint of the wait: where it blocked
 * in user space (the switch-out's fingerprint, see "copies at the
 * return"), the system call and its first argument (the fd or futex: the
 * file's kind can change the kernel's path). (The kernel stack itself
 * gives no key: its depth changes with every system call on kernels that
 * randomize the stack offset at entry, and slots of live frames not yet
 * written hold stale return addresses that change from one wait to the
 * next.) A recorded interval with a kept fingerprint walked less than
 * stack_reuse_ns before takes the kept frames; the first one after that
 * walks again and compares (STATS sched.kstack.agreed / .differed).
 * Without a switch-out fingerprint (copies off, or taken at the
 * switch-out) every stack is walked. */

/* The fingerprint of the wait sleeping task t is blocked in (0: none):
 * out_fp (which has the system call already) and the call's first
 * argument. */
static __always_inline __u64 kstack_fp(struct task_struct *t, __u64 out_fp)
{
	struct pt_regs *r = (struct pt_regs *)bpf_task_pt_regs(t);

	return out_fp ? fp_mix(out_fp, r->di) | 1 : 0;
}

/* The kept stack of start for fp, or NULL. */
static __always_inline struct kstack_kept *kstack_find(struct offcpu_start *start, __u64 fp)
{
	struct kstack_kept *found = NULL;

	for (int i = 0; i < KSTACKS && fp; i++)
		if (start->kept[i].fp == fp)
			found = &start->kept[i];
	return found;
}

/* Keeps e's freshly walked stack (nr frames) under fp: in k (the entry
 * it was found in, compared first), else in the oldest entry. */
static __always_inline void kstack_keep(struct offcpu_start *start, struct kstack_kept *k,
					__u64 fp, const struct perfcap_offcpu *e, __u64 nr,
					__u64 now)
{
	if (k) {
		bool same = k->nr == nr;

		for (int i = 0; i < KSTACK_KEEP && same; i++)
			if (i < nr && k->ips[i] != e->kips[i])
				same = false;
		ustash_count(same ? KSTACK_AGREED : KSTACK_DIFFERED, 1);
	} else {
		k = &start->kept[0];
		for (int i = 1; i < KSTACKS; i++)
			if (start->kept[i].ts < k->ts)
				k = &start->kept[i];
	}
	if (nr > KSTACK_KEEP) { /* too deep to keep: walked each time */
		k->fp = 0;
		return;
	}
	k->fp = fp;
	k->ts = now;
	k->nr = nr;
	bpf_probe_read_kernel(k->ips, (nr * 8) & (2 * KSTACK_KEEP * 8 - 1), e->kips);
}

/* The kernel stack next slept in, into e->kips; its length in frames. */
static __always_inline __u64 sleeping_kernel_stack(struct task_struct *next,
						   struct perfcap_offcpu *e)
{
	long ret = bpf_get_task_stack(next, e->kips, sizeof(e->kips), 0);
	__u64 nr;

	e->kstack_err = 0;
	if (ret < 0) {
		e->h.flags |= PERFCAP_OFFCPU_F_KSTACK_ERR;
		e->kstack_err = ret;
		pc_count(PERFCAP_SRC_SCHED, PERFCAP_LOSS_STACK_ERROR);
		return 0;
	}
	nr = ret / sizeof(__u64);
	return nr > PERFCAP_STACK_MAX_DEPTH ? PERFCAP_STACK_MAX_DEPTH : nr;
}

/* The kernel stack of blocked next into e->kips, kept or walked (see
 * "kernel stacks"); its length in frames. */
static __always_inline __u64 kernel_stack_of(struct task_struct *next, struct offcpu_start *start,
					     struct perfcap_offcpu *e, __u64 now)
{
	__u64 fp = stack_reuse_ns ? kstack_fp(next, start->out_fp) : 0, nr;
	struct kstack_kept *k = kstack_find(start, fp);

	if (k && now - k->ts < stack_reuse_ns) {
		nr = k->nr;
		if (nr > KSTACK_KEEP)
			nr = KSTACK_KEEP;
		bpf_probe_read_kernel(e->kips, (nr * 8) & (2 * KSTACK_KEEP * 8 - 1), k->ips);
		ustash_count(KSTACK_REUSED, 1);
		return nr;
	}
	nr = sleeping_kernel_stack(next, e);
	if (fp && !e->kstack_err)
		kstack_keep(start, k, fp, e, nr, now);
	return nr;
}

static __always_inline void emit_offcpu(struct task_struct *next,
					struct offcpu_start *start, __u64 now, __u16 flags,
					__u64 copy_ts, bool kstack)
{
	void *ring = pc_ring(PERFCAP_SRC_SCHED);
	struct perfcap_offcpu *e;
	__u32 zero = 0;
	__u64 nr = 0, size;

	if (!ring)
		return;
	e = bpf_map_lookup_elem(&offcpu_scratch, &zero);
	if (!e) {
		pc_count(PERFCAP_SRC_SCHED, PERFCAP_LOSS_SCRATCH);
		return;
	}
	pc_header(&e->h, PERFCAP_EV_OFFCPU, now);
	e->h.flags = flags;
	e->duration = now - start->ts;
	e->pid = next->tgid;
	e->tid = next->pid;
	e->state = start->state;
	e->waker_tid = start->waker.tid;
	e->waker_pid = start->waker.pid;
	e->waker_flags = start->waker.flags;
	e->irq_pid = start->waker.irq_pid;
	e->irq_tid = start->waker.irq_tid;
	e->copy_ts = copy_ts;
	e->ustack = start->ustack;
	copy_task_comm(e->comm, next);
	if (start->copied) /* the copy goes first: the analyzer meets it first */
		ustash_release(ring, e->tid, start->ts, start->copied);
	e->kstack_err = 0;
	if (start->state && kstack) /* blocked: where in the kernel */
		nr = kernel_stack_of(next, start, e, now);
	e->kstack_nr = nr;
	size = PERFCAP_OFFCPU_HEADER_SIZE + nr * sizeof(__u64);
	if (size > sizeof(*e)) /* cannot happen; keeps the verifier sure */
		size = sizeof(*e);
	if (bpf_ringbuf_output(ring, e, size, pc_wakeup_flag(ring)))
		pc_count(PERFCAP_SRC_SCHED, PERFCAP_LOSS_RINGBUF);
}

/* Where a blocked interval of next gets its user stack: the thread's last
 * copy, when its fingerprint is the same and it is recent enough
 * (COPY_SAME, *copy_ts: that copy's switch-out), else a copy at its
 * return to user space (COPY_FOLLOWS, scheduled here; *copy_ts: the copy
 * with the same fingerprint it refreshes, 0: none). */
static __always_inline __u16 copy_follows(struct task_struct *next,
					  const struct offcpu_start *start, __u64 now,
					  __u64 *copy_ts)
{
	__u64 last = 0;

	*copy_ts = 0;
	if (!start->state || !ustack_window || (next->flags & (PF_KTHREAD | PF_IO_WORKER)))
		return 0;
	if (!start->out_fp && stack_reuse_ns) /* no head read: copied afresh */
		ustash_count(USTASH_NO_HEAD, 1);
	for (__u32 i = 0; i < COPY_FPS && start->out_fp; i++)
		if (start->copy_fp[i] == start->out_fp)
			last = start->copy_ts[i];
	if (last && now - last < stack_reuse_ns) {
		ustash_count(USTASH_SAME, 1);
		*copy_ts = last;
		return PERFCAP_OFFCPU_F_COPY_SAME;
	}
	if (!copy_later(next, start->ts, now))
		return 0;
	if (last) {
		ustash_count(USTASH_REFRESHED, 1);
		*copy_ts = last;
	}
	return PERFCAP_OFFCPU_F_COPY_FOLLOWS;
}

/* The interval in start is over (sent or not): its copy's stash slot is
 * freed (emit_offcpu did, if it sent it) and the thread is on a CPU. */
static __always_inline void interval_done(struct offcpu_start *start, __u32 tid)
{
	if (start->copied)
		ustash_release(NULL, tid, start->ts, start->copied);
	start->ts = 0;
}

/* task, whose entry still holds the interval begun at an earlier
 * switch-out, switches out again at now (or exits): the switch-in that
 * ended that interval was not seen. Inside one window that is the kernel's
 * doing (or the thread did not pass the filters at that switch-in: renamed
 * through /proc/TID/comm by another task while off CPU): on this project's
 * test VMs it delivers no sched_switch, to any
 * BPF program (bpftrace misses the same ones), for about one switch-in in
 * a thousand, sometimes with the wakeup before it, while the task's own
 * schedstat counts them; no counter of the kernel's says so. The task has
 * run without a break since (another switch-out would have come here
 * first), so it came back on at now minus its run time since the
 * switch-out: exact. The interval is sent ending there, flagged IN_UNSEEN
 * (and WAKE_UNSEEN without a wakeup), without the kernel stack it slept in
 * (gone) or a copy at its return (never scheduled); each one is counted
 * (STATS sched.switch_in_unseen). Across a gap between windows the
 * switch-in fell in the gap and the task ran there: not recorded, counted
 * as gap_flags does. */
static __always_inline void close_unseen(struct task_struct *task, struct offcpu_start *start,
					 __u64 now)
{
	__u64 ran = task->se.sum_exec_runtime - start->out_runtime;
	__u16 flags;

	if (start->epoch != sched_epoch) {
		ustash_count(GAP_RAN, 1);
	} else {
		ustash_count(IN_UNSEEN, 1);
		/* back on at now - ran, at least offcpu_min_ns after it left */
		if (ran + offcpu_min_ns <= now - start->ts &&
		    pc_admit_unsampled(PERFCAP_SRC_SCHED, now)) {
			if (start->state)
				start->since_recorded = 0;
			flags = PERFCAP_OFFCPU_F_IN_UNSEEN |
				(start->waker_seen ? 0 : PERFCAP_OFFCPU_F_WAKE_UNSEEN);
			emit_offcpu(task, start, now - ran, flags, 0, false);
		}
	}
	interval_done(start, task->pid);
}

/* next, switched out before a gap between windows (its entry is of an
 * earlier epoch), is switched in: its interval is exact when it stayed
 * off CPU throughout the gap, which its run time tells (its wakeup may
 * have been in the gap: WAKE_UNSEEN); else it ran in the gap, what it did
 * there is unknown, and the interval is not recorded. Its flags, or -1. */
static __always_inline int gap_flags(struct task_struct *next, const struct offcpu_start *start)
{
	if (next->se.sum_exec_runtime != start->out_runtime) {
		ustash_count(GAP_RAN, 1);
		return -1;
	}
	ustash_count(GAP_KEPT, 1);
	return PERFCAP_OFFCPU_F_GAP | (start->waker_seen ? 0 : PERFCAP_OFFCPU_F_WAKE_UNSEEN);
}

/* next, whose entry is start (NULL: none), is switched in at now. */
static __always_inline void note_switch_in(struct task_struct *next, struct offcpu_start *start,
					   __u64 now, bool at_return)
{
	__u32 tid = next->pid;
	int gap = 0;

	if (!start || !start->ts) /* off CPU since before the recording */
		return;
	if (start->epoch != sched_epoch)
		gap = gap_flags(next, start);
	if (gap >= 0 && now - start->ts >= offcpu_min_ns &&
	    pc_admit_unsampled(PERFCAP_SRC_SCHED, now)) {
		__u64 copy_ts = 0;
		__u16 flags;

		if (start->head_read) /* read only at blocking switch-outs */
			start->out_fp = fp_of(next, start->head);
		if (start->state)
			start->since_recorded = 0;
		flags = (at_return ? copy_follows(next, start, now, &copy_ts) : 0) | (__u16)gap;

		emit_offcpu(next, start, now, flags, copy_ts, true);
	}
	interval_done(start, tid);
}

/* ---- records ------------------------------------------------------------------ */

/* Each CPU's SWITCH and WAKEUP records wait in its batch (perfcap_bpf.h,
 * perfcap_sched_batch) and go to the ring together: one reservation and
 * one wakeup check per PERFCAP_SCHED_BATCH_MAX records instead of one
 * each, about a hundred nanoseconds less per record here. Its writers
 * (sched_switch; sched_waking of another task than the current one, under
 * the woken task's pi_lock; flush_batch, run by an IPI) all run with
 * interrupts off, so none interrupts another on its CPU; a task waking
 * itself (interrupts maybe on) and sched_wakeup_new send alone. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct perfcap_sched_batch);
} sched_batch SEC(".maps");

static __always_inline void batch_send(struct perfcap_sched_batch *b)
{
	__u32 n = b->n;
	__u64 size;
	void *ring;

	if (!n || n > PERFCAP_SCHED_BATCH_MAX) {
		b->n = 0;
		return;
	}
	ring = pc_ring(PERFCAP_SRC_SCHED); /* counts one record lost when none */
	size = PERFCAP_SCHED_BATCH_HEADER_SIZE + (__u64)n * sizeof(b->e[0]);
	if (size > sizeof(*b)) /* cannot happen; keeps the verifier sure */
		size = sizeof(*b);
	if (!ring)
		pc_count_n(PERFCAP_SRC_SCHED, PERFCAP_LOSS_NO_RING, n - 1);
	else if (bpf_ringbuf_output(ring, b, size, pc_wakeup_flag(ring)))
		pc_count_n(PERFCAP_SRC_SCHED, PERFCAP_LOSS_RINGBUF, n);
	b->n = 0;
}

static __always_inline struct perfcap_sched_batch *this_cpu_batch(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&sched_batch, &zero);
}

/* The place of this CPU's next record (at now) in its batch, which is
 * sent first if its first record is PERFCAP_SCHED_BATCH_AGE_NS old. */
static __always_inline union perfcap_sched_entry *batch_slot(__u64 now,
							     struct perfcap_sched_batch **out)
{
	struct perfcap_sched_batch *b = this_cpu_batch();

	if (!b)
		return NULL;
	if (b->n && (b->n >= PERFCAP_SCHED_BATCH_MAX || now - b->h.ts >= PERFCAP_SCHED_BATCH_AGE_NS))
		batch_send(b);
	if (!b->n) {
		pc_header(&b->h, PERFCAP_EV_SCHED_BATCH, now);
		b->reserved = 0;
	}
	*out = b;
	return &b->e[b->n & (PERFCAP_SCHED_BATCH_MAX - 1)];
}

static __always_inline void batch_commit(struct perfcap_sched_batch *b)
{
	if (++b->n >= PERFCAP_SCHED_BATCH_MAX)
		batch_send(b);
}

/* Sends this CPU's batch now: when it goes idle, or when user space asks
 * (BPF_PROG_TEST_RUN on each CPU, record/sources/source_sched.c). */
static __always_inline void batch_flush(void)
{
	struct perfcap_sched_batch *b = this_cpu_batch();

	if (b && b->n)
		batch_send(b);
}

/* Run by BPF_PROG_TEST_RUN with the recorder's tgid in ctx[0] (all ones
 * once the writing programs are detached): on another CPU through an IPI,
 * interrupts off; but on the recorder's own CPU directly, interrupts on,
 * where a timer interrupt's wakeup could write the batch while it is being
 * sent and be lost with its switch (one nap in ten of a sleeper's went
 * missing so). There it does nothing: the CPU runs the recorder, so it
 * switches soon and sends the batch itself (by age, or going idle); what
 * is left at the end is read from the map. */
SEC("raw_tp")
int flush_batch(unsigned long long *ctx)
{
	if ((bpf_get_current_pid_tgid() >> 32) == ctx[0])
		return 0;
	batch_flush();
	return 0;
}

static __always_inline void emit_switch(struct task_struct *prev, struct task_struct *next,
					__u32 state, __u16 traced, __u64 now)
{
	struct perfcap_sched_batch *b;
	union perfcap_sched_entry *slot = batch_slot(now, &b);
	struct perfcap_switch *e;

	if (!slot)
		return;
	e = &slot->sw;
	pc_header(&e->h, PERFCAP_EV_SWITCH, now);
	e->h.flags = traced; /* PC_SWITCH_F_PREV_TRACED | PC_SWITCH_F_NEXT_TRACED */
	e->prev_pid = prev->tgid;
	e->prev_tid = prev->pid;
	e->next_pid = next->tgid;
	e->next_tid = next->pid;
	e->prev_state = state;
	e->prev_prio = prev->prio;
	e->next_prio = next->prio;
	e->reserved = 0;
	copy_task_comm(e->prev_comm, prev);
	copy_task_comm(e->next_comm, next);
	batch_commit(b);
}

static __always_inline void handle_switch(unsigned long long *ctx, bool preempt,
					  struct task_struct *prev, struct task_struct *next,
					  bool at_return)
{
	bool prev_traced = pc_task_traced(prev);
	bool next_traced = pc_task_traced(next);
	struct offcpu_start *start;
	__u32 raw, state;
	__u64 now;

	if (!next->pid) /* this CPU goes idle: what it holds goes now */
		batch_flush();
	if (!prev_traced && !next_traced)
		return;
	/* the test knob: next's switch-in is not seen, next is untraced in
	 * this switch (a traced prev's switch-out still is: ignoring it too
	 * would lose a whole interval, which the knob is not about) */
	if (drop_switch_in_every && next_traced &&
	    __sync_fetch_and_add(&traced_switch_ins, 1) % drop_switch_in_every == drop_switch_in_every - 1) {
		next_traced = false;
		if (!prev_traced)
			return;
	}
	now = bpf_ktime_get_ns();
	raw = switch_out_state(preempt, prev, ctx);
	state = raw & PERFCAP_TASK_STATE_MASK;
	if (prev_traced) {
		start = note_switch_out(ctx, prev, state, now, at_return);
		/* waits: a user thread blocked (any state bit, the mask's or
		 * not); an exiting one has no entry and no wait to sum */
		if (with_waits && raw && !(prev->flags & PF_KTHREAD) && !(state & PERFCAP_TASK_DEAD))
			wait_begins(prev, start ? &start->wait : NULL, now);
	}
	if (next_traced) {
		start = bpf_task_storage_get(&offcpu_starts, next, 0, 0);
		if (with_waits && start)
			wait_ends(next, &start->wait, now);
		note_switch_in(next, start, now, at_return);
	}
	if (pc_admit(PERFCAP_SRC_SCHED, now))
		emit_switch(prev, next, state,
			    (prev_traced ? 0x1 : 0) | (next_traced ? 0x2 : 0), now);
}

/* One of the two is loaded (record/sources/source_sched.c): on_switch_ret
 * needs bpf_task_work_schedule_resume_impl, on_switch does without. */
SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	handle_switch(ctx, preempt, prev, next, false);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch_ret, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	handle_switch(ctx, preempt, prev, next, true);
	return 0;
}

static __always_inline void fill_wakeup(struct perfcap_wakeup *e, struct task_struct *p,
					struct task_struct *current, const struct waker *w,
					__u16 flags, __u64 now)
{
	pc_header(&e->h, PERFCAP_EV_WAKEUP, now);
	e->h.flags = flags | w->flags;
	e->pid = p->tgid;
	e->tid = p->pid;
	e->waker_pid = w->pid;
	e->waker_tid = w->tid;
	e->target_cpu = task_cpu(p);
	e->irq_pid = w->irq_pid;
	e->irq_tid = w->irq_tid;
	e->reserved = 0;
	copy_task_comm(e->comm, p);
	if (w->tid || w->irq_tid)
		copy_task_comm(e->waker_comm, current);
	else
		__builtin_memset(e->waker_comm, 0, sizeof(e->waker_comm));
}

/* A WAKEUP record: into this CPU's batch, or alone (a task waking itself,
 * with interrupts maybe on; sched_wakeup_new). */
static __always_inline void emit_wakeup(struct task_struct *p, struct task_struct *current,
					const struct waker *w, __u16 flags, __u64 now)
{
	struct perfcap_sched_batch *b;
	union perfcap_sched_entry *slot;
	struct perfcap_wakeup *e;
	void *ring;

	if (p != current && !(flags & PERFCAP_WAKEUP_F_NEW)) {
		slot = batch_slot(now, &b);
		if (!slot)
			return;
		fill_wakeup(&slot->wk, p, current, w, flags, now);
		batch_commit(b);
		return;
	}
	ring = pc_ring(PERFCAP_SRC_SCHED);
	if (!ring)
		return;
	e = pc_reserve(ring, PERFCAP_SRC_SCHED, sizeof(*e));
	if (!e)
		return;
	fill_wakeup(e, p, current, w, flags, now);
	pc_submit(ring, e);
}

/* This CPU's preempt count: its runqueue (the current task's, whatever
 * it is: the idle task's too) plus the distance to __preempt_count. No
 * kallsyms needed: both are per-CPU variables of the same section, and
 * rq->cpu confirms the runqueue is this CPU's. */
static __always_inline struct rq *this_cpu_rq(struct task_struct *current)
{
	struct rq *rq;

	if (!preempt_count_from_rq || !bpf_core_field_exists(current->se.cfs_rq))
		return NULL;
	rq = current->se.cfs_rq->rq;
	if (!rq || rq->cpu != (int)bpf_get_smp_processor_id())
		return NULL;
	return rq;
}

static __always_inline bool this_cpu_preempt_count(struct task_struct *current, __u32 *pc,
						   struct rq **out)
{
	struct rq *rq = this_cpu_rq(current);

	*out = rq;
	return rq && !bpf_probe_read_kernel(pc, sizeof(*pc), (void *)rq + preempt_count_from_rq);
}

extern void *bpf_rdonly_cast(const void *obj__ign, __u32 btf_id) __ksym __weak;

/* Whether a timer_list callback runs on rq's CPU. */
static __always_inline bool timer_runs(struct rq *rq)
{
	for (__u32 i = 0; i < PERFCAP_TIMER_BASES_MAX; i++) {
		struct timer_base *b;

		if (i >= softirq_marks.nr_timer)
			break;
		b = bpf_rdonly_cast((void *)rq + softirq_marks.timer_bases +
					    i * bpf_core_type_size(struct timer_base),
				    bpf_core_type_id_kernel(struct timer_base));
		if (b->running_timer)
			return true;
	}
	return false;
}

/* Whether a soft hrtimer's callback runs on rq's CPU. */
static __always_inline bool soft_hrtimer_runs(struct rq *rq)
{
	struct hrtimer_cpu_base *b =
		bpf_rdonly_cast((void *)rq + softirq_marks.hrtimer_bases,
				bpf_core_type_id_kernel(struct hrtimer_cpu_base));

	for (__u32 j = PERFCAP_HRTIMER_FIRST_SOFT; j < PERFCAP_HRTIMER_BASES; j++)
		if (b->clock_base[j].running)
			return true;
	return false;
}

/* Whether net_rx_action runs on rq's CPU: its flag set, NET_RX not
 * pending again (a net_rx_action out of budget leaves the flag set and
 * raises NET_RX; the soft interrupts after it in that pass then see it
 * pending, those before it in the next pass, TIMER among them, not). */
static __always_inline bool net_rx_runs(struct rq *rq)
{
	struct softnet_data *sd;
	__u16 pending = 0;

	if (!bpf_core_field_exists(struct softnet_data, in_net_rx_action))
		return false;
	sd = bpf_rdonly_cast((void *)rq + softirq_marks.softnet,
			     bpf_core_type_id_kernel(struct softnet_data));
	return sd->in_net_rx_action &&
	       !bpf_probe_read_kernel(&pending, sizeof(pending), (void *)rq + softirq_marks.pending) &&
	       !(pending & (1u << 3));
}

/* The soft interrupt running on rq's CPU (vector + 1), from the fields set
 * while it runs: a timer_list callback (TIMER), a soft hrtimer's (HRTIMER),
 * net_rx_action (NET_RX). The timers before NET_RX (see net_rx_runs).
 * Else PERFCAP_SOFTIRQ_UNNAMED + 1: a soft interrupt with no such field
 * (BLOCK, TASKLET, RCU, NET_TX ...), or a timer of another, idle CPU
 * expired here (the timer migration of Linux 6.9+). */
static __always_inline __u32 softirq_named(struct rq *rq)
{
	if (timer_runs(rq))
		return 1 + 1;   /* TIMER_SOFTIRQ */
	if (net_rx_runs(rq))
		return 3 + 1;   /* NET_RX_SOFTIRQ */
	if (soft_hrtimer_runs(rq))
		return 8 + 1;   /* HRTIMER_SOFTIRQ */
	return PERFCAP_SOFTIRQ_UNNAMED + 1;
}

/* Run by user space (BPF_PROG_TEST_RUN) on the recorder's CPU, where it
 * must show no interrupt, and on the other CPUs through an interrupt,
 * until one shows a hard one; only then is irq_by_preempt_count set. The
 * preempt count, or PERFCAP_PREEMPT_UNREAD. */
SEC("raw_tp")
int probe_preempt_count(void *ctx)
{
	struct rq *rq;
	__u32 pc;

	return this_cpu_preempt_count(bpf_get_current_task_btf(), &pc, &rq) ? pc
										: PERFCAP_PREEMPT_UNREAD;
}

/* In interrupt context: the soft interrupt running on this CPU (vector +
 * 1), or 0 for a hard one. Inside a softirq or not is the preempt count's
 * to say when it can be read (irq_by_preempt_count); else softirq_exit
 * clears the vector softirq_entry noted, and a hard interrupt inside a
 * softirq is taken for the softirq. The vector is named by the per-CPU
 * fields set while it runs (softirq_by_marks), else it is the one
 * softirq_entry noted on this CPU (softirqs do not nest on a CPU). */
static __always_inline __u32 running_softirq(struct task_struct *current)
{
	__u32 zero = 0, pc, *vec;
	struct rq *rq;

	if (!irq_by_preempt_count) {
		vec = bpf_map_lookup_elem(&softirq_running, &zero);
		return vec ? *vec : 0;
	}
	if (!this_cpu_preempt_count(current, &pc, &rq)) {
		ustash_count(IRQ_UNREAD, 1);
		return 0;               /* taken for a hard interrupt */
	}
	if ((pc & PERFCAP_PREEMPT_HARDIRQ_MASK) || !(pc & PERFCAP_PREEMPT_SOFTIRQ_OFFSET))
		return 0;
	if (marks_usable && softirq_by_marks && rq)
		return softirq_named(rq);
	vec = bpf_map_lookup_elem(&softirq_running, &zero);
	return vec && *vec ? *vec : PERFCAP_SOFTIRQ_UNNAMED + 1;
}

/* The waker: the current task, or in interrupt context the kind of
 * interrupt and the task it interrupted. */
static __always_inline void who_wakes(void *ctx, struct task_struct *current, struct waker *w)
{
	__u32 vec;

	if (!in_interrupt_context(ctx, current)) {
		w->pid = current->pid ? current->tgid : 0; /* 0 when idle */
		w->tid = current->pid;
		return;
	}
	vec = running_softirq(current);
	if (vec)
		w->flags = PERFCAP_WAKE_SOFTIRQ | ((vec - 1) & 0xf) << PERFCAP_WAKE_VEC_SHIFT;
	else
		w->flags = PERFCAP_WAKE_HARDIRQ;
	w->irq_pid = current->pid ? current->tgid : 0;
	w->irq_tid = current->pid;
}

static __always_inline void handle_wakeup(void *ctx, struct task_struct *p, __u16 flags)
{
	struct task_struct *current = bpf_get_current_task_btf();
	struct offcpu_start *start;
	struct waker w = {};
	__u64 now;

	if (!pc_task_traced(p))
		return;
	now = bpf_ktime_get_ns();
	who_wakes(ctx, current, &w);
	start = bpf_task_storage_get(&offcpu_starts, p, 0, 0);
	if (start && start->ts) {
		start->waker = w;
		start->waker_seen = 1;
	}
	if (with_waits && start && !(flags & PERFCAP_WAKEUP_F_NEW)) /* waits: sched_waking only */
		wait_woken(&start->wait, now);
	if (pc_admit(PERFCAP_SRC_SCHED, now))
		emit_wakeup(p, current, &w, flags, now);
}

/* Soft interrupts: which one runs (softirq_running). A softirq does not
 * nest on its CPU. softirq_exit is attached only where the preempt count
 * cannot be read, softirq_entry only where the per-CPU fields cannot name
 * the running one (see running_softirq). */
SEC("tp_btf/softirq_entry")
int BPF_PROG(on_softirq_entry, unsigned int vec_nr)
{
	__u32 zero = 0, *vec = bpf_map_lookup_elem(&softirq_running, &zero);

	if (vec)
		*vec = vec_nr + 1;
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(on_softirq_exit, unsigned int vec_nr)
{
	__u32 zero = 0, *vec = bpf_map_lookup_elem(&softirq_running, &zero);

	if (vec)
		*vec = 0;
	return 0;
}

/* sched_waking, not sched_wakeup: it fires in the waker's own context.
 * sched_wakeup of a task on another CPU often fires there, from the IPI
 * that delivers a queued wakeup, where the waker is no longer known. */
SEC("tp_btf/sched_waking")
int BPF_PROG(on_wakeup, struct task_struct *p)
{
	handle_wakeup(ctx, p, 0);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(on_wakeup_new, struct task_struct *p)
{
	handle_wakeup(ctx, p, PERFCAP_WAKEUP_F_NEW);
	return 0;
}

/* ---- windows' edges ------------------------------------------------------------ */

/* Its ids and the kernel's own counters of its time on a CPU and
 * runnable (monotonic over its life). */
static __always_inline void task_counters(struct task_struct *task, struct perfcap_sched_task *t)
{
	t->pid = task->tgid;
	t->tid = task->pid;
	t->runtime_ns = task->se.sum_exec_runtime;
	t->run_delay_ns = task->sched_info.run_delay;
	t->nvcsw = task->nvcsw;
	t->cpu = (__u16)task_cpu(task);
}

/* Run by user space through a task iterator at each edge of a gap between
 * windows (record/sources/source_sched.c), while the programs are
 * detached. Each traced thread is written out at both edges (struct
 * perfcap_sched_task: what it is doing, its run-time counters; their
 * differences across the gap are its run time in it). At its start
 * (edge_close), its wait in progress is summed up to there (the rest is
 * in the gap, unseen); at its end, before the programs are attached
 * again, the waits of the blocked ones begin there. */
SEC("iter/task")
int sched_edge(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct perfcap_sched_task t = {};
	struct offcpu_start *start;

	if (!task || !pc_task_traced(task))
		return 0;
	task_counters(task, &t);
	if (task->on_cpu)
		t.where = PERFCAP_TASK_ON_CPU;
	else if (task->on_rq)
		t.where = PERFCAP_TASK_QUEUED;
	else
		t.state = task_state(task) & PERFCAP_TASK_STATE_MASK;
	/* a task whose record filled the reader's buffer is shown again at
	 * the next read: the record is written again, its wait handled once */
	bpf_seq_write(ctx->meta->seq, &t, sizeof(t));
	if (!with_waits)
		return 0;
	if (edge_close) {
		start = bpf_task_storage_get(&offcpu_starts, task, 0, 0);
		if (start && start->wait.ts)
			sum_wait(task, &start->wait,
				 woken_seen(&start->wait) ? start->wait.woken : edge_ns);
		return 0;
	}
	if (!t.where && t.state && !(t.state & PERFCAP_TASK_DEAD) &&
	    !(task->flags & PF_KTHREAD)) {
		start = bpf_task_storage_get(&offcpu_starts, task, 0,
					     BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!start || start->wait.ts != edge_ns)
			wait_begins(task, start ? &start->wait : NULL, edge_ns);
	}
	return 0;
}

/* A traced thread exiting inside a gap (sched_in_gap, set by user space
 * while the programs are detached) has no SCHED_TASK at the gap's end:
 * its counters' last values are written here instead, so its run time in
 * the gap is still known. Exits are rare: attached throughout. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_task_exit, struct task_struct *p)
{
	struct perfcap_sched_exit *e;
	void *ring;

	if (!sched_in_gap || !pc_task_traced(p))
		return 0;
	ring = pc_ring(PERFCAP_SRC_SCHED);
	if (!ring)
		return 0;
	e = pc_reserve(ring, PERFCAP_SRC_SCHED, sizeof(*e));
	if (!e)
		return 0;
	pc_header(&e->h, PERFCAP_EV_SCHED_EXIT, bpf_ktime_get_ns());
	__builtin_memset(&e->t, 0, sizeof(e->t));
	task_counters(p, &e->t);
	e->t.state = PERFCAP_TASK_DEAD;
	pc_submit(ring, e);
	return 0;
}
