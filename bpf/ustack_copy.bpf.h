/* ustack_copy.bpf.h - copies the current task's user registers and a window
 * of its user stack (from sp upward) into a PERFCAP_EV_USTACK record, so
 * perfcap-analyze can unwind binaries built without frame pointers from
 * their .eh_frame (docs: format/SPEC.md "USTACK").
 *
 * Included by the BPF objects that take user stacks (cpu_sample, sched);
 * each gets its own scratch map, sized to the number of possible CPUs by
 * user space (PERCPU_ARRAY values are limited to 32 KiB, the window may
 * be 64 KiB). The programs using it run with preemption off and do not
 * nest on a CPU, so one slot per CPU is enough.
 *
 * The window is read page by page: a page that cannot be read (not
 * present, or the top of the stack mapping) ends the copy, and what was
 * read before it is still sent.
 */
#ifndef PERFCAP_USTACK_COPY_BPF_H
#define PERFCAP_USTACK_COPY_BPF_H

#define USTACK_PAGE 4096
#define USTACK_PF_KTHREAD 0x00200000
/* bytes kept above mm->start_stack: argc, where _start found it */
#define USTACK_START_SLACK 16
/* pages a window of PERFCAP_USTACK_MAX bytes can touch when sp is not aligned */
#define USTACK_MAX_CHUNKS (PERFCAP_USTACK_MAX / USTACK_PAGE + 1)

/* Bytes of user stack to copy per record; 0: none (set before load). */
const volatile __u32 ustack_window = 0;

/* A record plus slack, so that the masked offsets below stay inside. */
struct ustack_slot {
	struct perfcap_ustack u;
	__u8 slack[2 * USTACK_PAGE];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* user space sets the number of possible CPUs */
	__type(key, __u32);
	__type(value, struct ustack_slot);
} ustack_scratch SEC(".maps");

/* x86-64 user registers from the frame at the top of the task's kernel
 * stack: the user state at the interrupt or system call that entered the
 * kernel, whatever the kernel did since. */
static __always_inline void ustack_regs(struct task_struct *task, struct perfcap_ustack *u)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);

	u->regs[PERFCAP_UREG_IP] = BPF_CORE_READ(regs, ip);
	u->regs[PERFCAP_UREG_SP] = BPF_CORE_READ(regs, sp);
	u->regs[PERFCAP_UREG_BP] = BPF_CORE_READ(regs, bp);
	u->regs[PERFCAP_UREG_BX] = BPF_CORE_READ(regs, bx);
	u->regs[PERFCAP_UREG_R12] = BPF_CORE_READ(regs, r12);
	u->regs[PERFCAP_UREG_R13] = BPF_CORE_READ(regs, r13);
	u->regs[PERFCAP_UREG_R14] = BPF_CORE_READ(regs, r14);
	u->regs[PERFCAP_UREG_R15] = BPF_CORE_READ(regs, r15);
}

/* Copies up to want bytes from sp into u->data, a page at a time; stops at
 * the first page that cannot be read. Returns the bytes copied. */
static __always_inline __u32 ustack_copy_window(struct perfcap_ustack *u, __u64 sp, __u32 want)
{
	__u32 off = 0;

	for (int i = 0; i < USTACK_MAX_CHUNKS; i++) {
		__u32 len = USTACK_PAGE - ((sp + off) & (USTACK_PAGE - 1));

		if (off >= want)
			break;
		if (len > want - off)
			len = want - off;
		/* masks for the verifier (no-ops: off < MAX, len <= PAGE), which the
		 * compiler must not drop; the slot's slack keeps data + off + len
		 * inside the map value */
		asm volatile("" : "+r"(len), "+r"(off));
		if (bpf_probe_read_user(&u->data[off & (PERFCAP_USTACK_MAX - 1)],
					len & (2 * USTACK_PAGE - 1), (const void *)(sp + off))) {
			u->h.flags |= PERFCAP_USTACK_F_FAULT;
			break;
		}
		off += len;
	}
	return off;
}

/* The window of a main thread stops a little above mm->start_stack, the
 * stack pointer its process started with: above it lie argc, argv, envp,
 * the auxiliary vector and their strings (often several KiB), never a
 * frame (unwinding ends at _start, below it). A thread's own stack, or a
 * stack switched away from the one the process started on, is not near it
 * and keeps the whole window. Returns the bytes to copy. */
static __always_inline __u32 ustack_trim(struct task_struct *task, __u64 sp, __u32 want,
					 __u16 *flags)
{
	__u64 start = BPF_CORE_READ(task, mm, start_stack);

	if (start > sp && start - sp + USTACK_START_SLACK < want) {
		*flags |= PERFCAP_USTACK_F_START;
		return start - sp + USTACK_START_SLACK;
	}
	return want;
}

/* Fills u's window, registers, size and flags (FULL, FAULT, START) from
 * task's user state: up to want bytes (the window the recorder asked for,
 * capped at PERFCAP_USTACK_MAX) from its user sp upward. The header, pid
 * and tid are the caller's. */
static __always_inline void ustack_fill(struct perfcap_ustack *u, struct task_struct *task,
					__u32 want)
{
	if (want > PERFCAP_USTACK_MAX)
		want = PERFCAP_USTACK_MAX;
	u->window = want;
	ustack_regs(task, u);
	want = ustack_trim(task, u->regs[PERFCAP_UREG_SP], want, &u->h.flags);
	u->size = ustack_copy_window(u, u->regs[PERFCAP_UREG_SP], want);
	if (u->size >= want && !(u->h.flags & PERFCAP_USTACK_F_START))
		u->h.flags |= PERFCAP_USTACK_F_FULL;
}

/* Sends a USTACK record for the current task (a user task) to ring, with
 * timestamp ts. Errors are counted under source. */
static __always_inline void ustack_emit(void *ring, struct task_struct *task, __u32 source,
					__u64 ts, __u16 flags)
{
	__u32 cpu = bpf_get_smp_processor_id(), want = ustack_window;
	__u64 id = bpf_get_current_pid_tgid(), size;
	struct perfcap_ustack *u;

	if (!want || !ring || (task->flags & USTACK_PF_KTHREAD))
		return;
	u = (struct perfcap_ustack *)bpf_map_lookup_elem(&ustack_scratch, &cpu);
	if (!u) {
		pc_count(source, PERFCAP_LOSS_SCRATCH);
		return;
	}
	pc_header(&u->h, PERFCAP_EV_USTACK, ts);
	u->h.flags = flags;
	u->pid = id >> 32;
	u->tid = (__u32)id;
	ustack_fill(u, task, want);
	size = PERFCAP_USTACK_HEADER_SIZE + (__u64)u->size;
	if (size > sizeof(*u)) /* cannot happen; keeps the verifier sure */
		size = sizeof(*u);
	if (bpf_ringbuf_output(ring, u, size, pc_wakeup_flag(ring)))
		pc_count(source, PERFCAP_LOSS_RINGBUF);
}

#endif /* PERFCAP_USTACK_COPY_BPF_H */
