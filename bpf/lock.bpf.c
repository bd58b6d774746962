// SPDX-License-Identifier: GPL-2.0-only
/* lock.bpf.c - kernel side of the lock source: kernel lock contention
 * (tp_btf lock:contention_begin/end) and waits in the user lock function
 * (a uprobe and a uretprobe on pthread_mutex_lock, attached by user space
 * to the object the target itself maps: record/sources/uprobe_target.c).
 *
 * Kernel locks: contention_begin leaves {start, lock, flags} in the
 * thread's `lock_waits` (task local storage: found from the task, freed
 * with it; a hash by tid took a lookup, an insert and a delete per
 * contention); contention_end with the same lock ends the interval. Two levels nest (a spinlock contended while waiting for a
 * mutex, or in an interrupt on top of the task); a begin of the lock
 * already being waited for (a mutex's optimistic spin, then its sleep)
 * keeps the first start. User mutexes: the uprobe leaves {start, mutex}
 * under the tid in `mutex_calls`, the uretprobe ends the wait.
 *
 * Every interval of a traced task is counted with its duration in
 * `lock_counters`; only those of at least lock_min_ns / mutex_min_ns
 * (which includes the probes' own cost, calibrated by user space) become
 * records (with the kernel or user stack at the end, which is the
 * waiting path). The futex system calls are recorded by syscall.bpf.c.
 */
#include "perfcap_common.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by user space before load. */
const volatile __u64 lock_min_ns = 10000;
/* Set by user space after calibration (before the target's probes are
 * attached): --lock-min plus what the probes themselves add to a call. */
__u64 mutex_min_ns = 10000;

/* Calibration: while user space calls the lock function in its own
 * process (calib_tgid), the probes time those calls into calib_ns[]
 * instead of emitting records: the probes' own cost, measured. */
#define CALIB_SAMPLES 256
__u32 calib_tgid = 0;
__u32 calib_n = 0;
__u64 calib_ns[CALIB_SAMPLES];

#define LOCK_DEPTH 2

struct lock_wait {
	__u64 start[LOCK_DEPTH];
	__u64 lock[LOCK_DEPTH];
	__u32 flags[LOCK_DEPTH];
	__u32 depth;
	__u32 reserved;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct lock_wait); /* depth 0: not waiting */
} lock_waits SEC(".maps");

struct mutex_call {
	__u64 start;
	__u64 addr;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PERFCAP_MUTEX_CALLS_MAX);
	__type(key, __u32);     /* tid */
	__type(value, struct mutex_call);
} mutex_calls SEC(".maps");

PC_COUNTERS(lock_counters, PERFCAP_LOCK_C_NR); /* enum perfcap_lock_counter */

static __always_inline void count_add(__u32 which, __u64 n)
{
	pc_counter_add(&lock_counters, which, n);
}

/* ---- kernel lock contention ------------------------------------------------ */

/* task's waits, made (zeroed) at its first contention; NULL, counted,
 * when the kernel had no memory for them (or they were busy on this CPU:
 * a contention inside the storage's own code). */
static __always_inline struct lock_wait *wait_slot(struct task_struct *task)
{
	struct lock_wait *w = bpf_task_storage_get(&lock_waits, task, NULL,
						   BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (!w)
		pc_count(PERFCAP_SRC_LOCK, PERFCAP_LOSS_MAP_FULL);
	return w;
}

SEC("tp_btf/contention_begin")
int BPF_PROG(on_contention_begin, void *lock, unsigned int flags)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct lock_wait *w;
	__u32 d;

	if (task->pid == 0 || !pc_task_traced(task)) /* idle tasks share tid 0 */
		return 0;
	w = wait_slot(task);
	if (!w)
		return 0;
	d = w->depth;
	if (d > 0 && d <= LOCK_DEPTH && w->lock[d - 1] == (__u64)lock) {
		w->flags[d - 1] |= flags; /* spinning turned into sleeping */
		return 0;
	}
	if (d >= LOCK_DEPTH) {
		count_add(PERFCAP_LOCK_C_TOO_DEEP, 1);
		return 0;
	}
	w->start[d] = bpf_ktime_get_ns();
	w->lock[d] = (__u64)lock;
	w->flags[d] = flags;
	w->depth = d + 1;
	return 0;
}

static __always_inline void emit_lock(void *ctx, struct task_struct *task, __u64 start,
				      __u64 lock, __u32 flags, int ret)
{
	__u64 now = bpf_ktime_get_ns(), duration = now - start;
	struct perfcap_lock *e;
	void *ring;

	count_add(PERFCAP_LOCK_C_CONTENDED, 1);
	count_add(PERFCAP_LOCK_C_CONTENDED_NS, duration);
	if (duration < lock_min_ns) {
		count_add(PERFCAP_LOCK_C_SHORT, 1);
		return;
	}
	if (!pc_admit(PERFCAP_SRC_LOCK, now))
		return;
	ring = pc_ring(PERFCAP_SRC_LOCK);
	if (!ring)
		return;
	e = pc_reserve(ring, PERFCAP_SRC_LOCK, sizeof(*e));
	if (!e)
		return;
	pc_header(&e->h, PERFCAP_EV_LOCK, now);
	e->duration = duration;
	e->lock = lock;
	e->pid = task->tgid;
	e->tid = task->pid;
	e->flags = flags;
	e->ret = ret;
	e->kstack = pc_stack_id(ctx, PERFCAP_SRC_LOCK, 0);
	e->reserved = 0;
	pc_copy_comm(e->comm, task->comm);
	pc_submit(ring, e);
}

/* Which level of w waits for lock: the innermost that does; -1 if none. */
static __always_inline int matching_level(const struct lock_wait *w, __u64 lock)
{
	if (w->depth >= 2 && w->lock[1] == lock)
		return 1;
	if (w->depth >= 1 && w->lock[0] == lock)
		return 0;
	return -1;
}

SEC("tp_btf/contention_end")
int BPF_PROG(on_contention_end, void *lock, int ret)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct lock_wait *w;
	int level;

	if (task->pid == 0)
		return 0;
	w = bpf_task_storage_get(&lock_waits, task, NULL, 0);
	if (!w || !w->depth) /* not traced, or waiting since before the recording */
		return 0;
	level = matching_level(w, (__u64)lock);
	if (level < 0) {
		count_add(PERFCAP_LOCK_C_UNMATCHED, 1);
		return 0;
	}
	if (level == 0 && w->depth > 1) /* the inner wait never ended */
		count_add(PERFCAP_LOCK_C_UNMATCHED, 1);
	level &= 1; /* for the verifier: 0 or 1 */
	emit_lock(ctx, task, w->start[level], w->lock[level], w->flags[level], ret);
	w->depth = level;
	return 0;
}

/* ---- user mutex waits (uprobes) ------------------------------------------------ */

SEC("uprobe")
int BPF_KPROBE(mutex_enter, void *mutex)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct mutex_call call = { .addr = (__u64)mutex };
	__u32 tid = task->pid;

	if (task->tgid != calib_tgid && !pc_task_traced(task))
		return 0;
	call.start = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&mutex_calls, &tid, &call, BPF_ANY))
		pc_count(PERFCAP_SRC_LOCK, PERFCAP_LOSS_MAP_FULL);
	return 0;
}

static __always_inline void emit_mutex(void *ctx, struct task_struct *task,
				       const struct mutex_call *call, int ret, __u64 now)
{
	void *ring = pc_ring(PERFCAP_SRC_LOCK);
	struct perfcap_mutex *e;

	if (!ring)
		return;
	e = pc_reserve(ring, PERFCAP_SRC_LOCK, sizeof(*e));
	if (!e)
		return;
	pc_header(&e->h, PERFCAP_EV_MUTEX, now);
	e->duration = now - call->start;
	e->addr = call->addr;
	e->pid = task->tgid;
	e->tid = task->pid;
	e->ustack = pc_stack_id(ctx, PERFCAP_SRC_LOCK, BPF_F_USER_STACK);
	e->ret = ret;
	pc_copy_comm(e->comm, task->comm);
	pc_submit(ring, e);
}

SEC("uretprobe")
int BPF_KRETPROBE(mutex_exit, int ret)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 tid = task->pid;
	struct mutex_call *call = bpf_map_lookup_elem(&mutex_calls, &tid);
	__u64 now, duration;

	if (!call)
		return 0;
	now = bpf_ktime_get_ns();
	duration = now - call->start;
	if (task->tgid == calib_tgid) {
		calib_ns[calib_n++ & (CALIB_SAMPLES - 1)] = duration;
		bpf_map_delete_elem(&mutex_calls, &tid);
		return 0;
	}
	count_add(PERFCAP_LOCK_C_MUTEX_CALLS, 1);
	count_add(PERFCAP_LOCK_C_MUTEX_NS, duration);
	if (duration < mutex_min_ns)
		count_add(PERFCAP_LOCK_C_MUTEX_SHORT, 1);
	else if (pc_admit(PERFCAP_SRC_LOCK, now))
		emit_mutex(ctx, task, call, ret, now);
	bpf_map_delete_elem(&mutex_calls, &tid);
	return 0;
}
