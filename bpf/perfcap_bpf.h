/* perfcap_bpf.h - the contract between the BPF programs and user space:
 * source ids, kernel record types and layouts, loss reasons, map capacities
 * and the configuration every BPF object shares. Included by each
 * bpf/NAME.bpf.c (with vmlinux.h types) and by record/ (with
 * <linux/types.h>), so both sides agree on one layout. Kernel records never
 * reach the capture file as they are: each source's handler
 * (record/source_NAME.c) turns them into the file format's records.
 *
 * Adding a source: give it a PERFCAP_SRC_* id, its kernel record types a
 * PERFCAP_EV_* number, and define their layouts below; each layout starts
 * with struct perfcap_event_header.
 */
#ifndef PERFCAP_BPF_H
#define PERFCAP_BPF_H

#ifndef __VMLINUX_H__
#include <linux/types.h> /* user space: __u64 and friends */
#endif

/* ---- capacities (every map is bounded; hitting a bound is counted) ---- */

/* Deepest stack captured, per kind (kernel, user). A stack that fills all
 * of them is marked truncated in the capture. */
#define PERFCAP_STACK_MAX_DEPTH 127

/* `targets`: processes followed when filtering by pid. A fork of a
 * followed process that finds it full is counted (proc.map_full). */
#define PERFCAP_TARGETS_MAX 16384

/* `target_bits`: the same set as a bitmap, one bit per tgid below the
 * kernel's pid_max as read at start (at most PERFCAP_TARGET_BITS_MAX), so
 * that the filter of every program is an array lookup the verifier
 * inlines, not a hash lookup (about 45 ns each here; a context switch
 * filters two tasks, a wakeup one, a socket call of an untraced process
 * one). `targets` stays what user space lists, and the filter for a tgid
 * beyond the bitmap. Both are written together: the hash first, then the
 * bit (atomically: the BPF side and user space, through mmap, share the
 * words). */
#define PERFCAP_TARGET_BITS_MAX (1u << 22) /* PID_MAX_LIMIT on 64-bit */

/* `stacks`: the BPF_MAP_TYPE_STACK_TRACE the event sources share. Each
 * entry holds PERFCAP_STACK_MAX_DEPTH ips (about 1 KiB), so this is about
 * 16 MiB of kernel memory. It is a hash table without chaining: a new stack
 * whose bucket holds another stack is not stored (-EEXIST, counted as a
 * stack error of the source); entries are never deleted, so a stack id
 * keeps naming the same stack for the whole recording. */
#define PERFCAP_STACKMAP_ENTRIES 16384

/* Ring buffers: one per CPU up to this many; CPU c writes to ring
 * c % nr_rings (so on larger machines a ring serves a group of CPUs). */
#define PERFCAP_RINGS_MAX 32


/* req: local ports traced processes answered requests on (their passive
 * opens get a state at once, so a first request's arrival is seen). */
#define PERFCAP_REQ_PORTS 1024

/* The req source's phases (req.bpf.c req_phase, set by user space):
 * requests are followed when their first read falls in an OPEN phase,
 * to their end through DRAIN; OFF: the programs return at once. */
#define PERFCAP_REQ_OFF   0
#define PERFCAP_REQ_OPEN  1
#define PERFCAP_REQ_DRAIN 2

/* ---- sources, record types, loss reasons ------------------------------ */

enum perfcap_source_id {
	PERFCAP_SRC_PROC  = 0,  /* process lifecycle (always on) */
	PERFCAP_SRC_CPU   = 1,  /* CPU stack samples */
	PERFCAP_SRC_SCHED = 2,  /* context switches, wakeups, off-CPU, forks */
	PERFCAP_SRC_SYSCALL = 3, /* completed system calls (syscall.bpf.c) */
	PERFCAP_SRC_BLOCK = 4,  /* block I/O requests (block.bpf.c) */
	PERFCAP_SRC_NET   = 5,  /* socket tuples, TCP states, retransmits (net.bpf.c) */
	PERFCAP_SRC_LOCK  = 6,  /* kernel lock contention, user mutex waits (lock.bpf.c) */
	PERFCAP_SRC_MUX   = 7,  /* epoll/poll/select waits (syscall.bpf.c's set) */
	PERFCAP_SRC_MEM   = 8,  /* sampled user page faults, exec mappings (mem.bpf.c) */
	PERFCAP_SRC_AGG   = 9,  /* per-thread syscall metrics summed in the kernel (agg.bpf.c) */
	PERFCAP_SRC_WAITS = 10, /* per-thread blocked time by call class, summed (waits.bpf.c) */
	PERFCAP_SRC_PROBE = 11, /* user probes: uprobe:PATH:SYMBOL, usdt:PATH:PROVIDER:NAME (uprobe.bpf.c) */
	PERFCAP_SRC_REQ   = 12, /* requests on TCP connections, inferred in the kernel (req.bpf.c) */
	PERFCAP_SRC_MAX   = 16, /* bound of the per-source arrays: room for 3 more */
};

enum perfcap_event_type {
	PERFCAP_EV_SAMPLE = 1, /* cpu:   struct perfcap_sample */
	PERFCAP_EV_EXEC   = 2, /* proc:  struct perfcap_proc_event */
	PERFCAP_EV_EXIT   = 3, /* proc:  struct perfcap_proc_event */
	PERFCAP_EV_FORK   = 4, /* sched: struct perfcap_fork */
	PERFCAP_EV_SWITCH = 5, /* sched: struct perfcap_switch */
	PERFCAP_EV_WAKEUP = 6, /* sched: struct perfcap_wakeup */
	PERFCAP_EV_OFFCPU = 7, /* sched: struct perfcap_offcpu */
	PERFCAP_EV_SYSCALL = 8, /* syscall (and mux/net/lock/mem sets): struct perfcap_syscall */
	PERFCAP_EV_BLOCK       = 20, /* block: struct perfcap_block */
	PERFCAP_EV_SOCKET      = 21, /* net: struct perfcap_socket */
	PERFCAP_EV_TCP_STATE   = 22, /* net: struct perfcap_tcp_event */
	PERFCAP_EV_TCP_RETRANS = 23, /* net: struct perfcap_tcp_event */
	PERFCAP_EV_LOCK        = 30, /* lock: struct perfcap_lock */
	PERFCAP_EV_MUTEX       = 31, /* lock: struct perfcap_mutex */
	PERFCAP_EV_FAULT       = 36, /* mem: struct perfcap_fault */
	PERFCAP_EV_EXEC_MAP    = 37, /* mem: struct perfcap_exec_map */
	PERFCAP_EV_USTACK      = 40, /* cpu, sched: struct perfcap_ustack */
	PERFCAP_EV_AGG_CALL    = 41, /* agg: a slow call, struct perfcap_syscall */
	PERFCAP_EV_PROBE       = 42, /* probe: struct perfcap_probe */
	PERFCAP_EV_REQUEST     = 43, /* req: struct perfcap_request */
	PERFCAP_EV_REQUEST_BATCH = 44, /* req: struct perfcap_request_batch */
	PERFCAP_EV_SCHED_BATCH = 45, /* sched: struct perfcap_sched_batch */
	PERFCAP_EV_SCHED_EXIT  = 46, /* sched: struct perfcap_sched_exit */
	PERFCAP_EV_REQUEST_MARK = 47, /* req: struct perfcap_request_mark */
	PERFCAP_EV_MAX    = 64,
};

/* Why the kernel side did not deliver something. The shared per-CPU
 * `losses` array is indexed by PERFCAP_LOSS_INDEX(source, reason). */
enum perfcap_loss_reason {
	PERFCAP_LOSS_RINGBUF     = 0, /* ring buffer full: record dropped */
	PERFCAP_LOSS_NO_RING     = 1, /* no ring for this CPU: record dropped */
	PERFCAP_LOSS_SCRATCH     = 2, /* per-CPU scratch missing: record dropped */
	PERFCAP_LOSS_SAMPLED_OUT = 3, /* not chosen by --sample 1-in-N */
	PERFCAP_LOSS_RATE_CAPPED = 4, /* over --rate-cap on this CPU */
	PERFCAP_LOSS_STACK_EXIST = 5, /* stack map bucket taken (-EEXIST) */
	PERFCAP_LOSS_STACK_ERROR = 6, /* bpf_get_stackid failed otherwise */
	PERFCAP_LOSS_MAP_FULL    = 7, /* the source's state map was full */
	PERFCAP_LOSS_NR          = 8,
};

#define PERFCAP_LOSS_INDEX(source, reason) ((source) * PERFCAP_LOSS_NR + (reason))
#define PERFCAP_LOSS_SLOTS (PERFCAP_SRC_MAX * PERFCAP_LOSS_NR)

/* ---- configuration shared by every BPF object ------------------------- */

#define PERFCAP_COMM_LEN 16

/* Set by user space in each object's read-only data before load (the
 * `pc_config` variable of perfcap_common.bpf.h). */
struct perfcap_config {
	__u32 nr_rings;        /* rings in `rings`; CPU c uses c % nr_rings */
	__u32 sample_one_in;   /* event sources keep 1 record in N (1: all) */
	__u64 sample_seed;     /* seeds the 1-in-N choice */
	__u64 rate_cap;        /* records per second per CPU per source; 0: none */
	__u64 wakeup_bytes;    /* wake the consumer once a ring holds this much */
	__u64 cgroup_id;       /* cgroup v2 id when filter_cgroup */
	__u32 cgroup_level;    /* its depth below the root cgroup */
	__u8  filter_pids;     /* only processes in `targets` */
	__u8  filter_cgroup;   /* only tasks in cgroup_id or below */
	__u8  filter_comm;     /* only processes named comm */
	__u8  reserved;
	char  comm[PERFCAP_COMM_LEN];
};

/* ---- kernel records ----------------------------------------------------- */

/* Every kernel record starts with this. */
struct perfcap_event_header {
	__u16 type;             /* enum perfcap_event_type */
	__u16 flags;            /* per type */
	__u32 cpu;
	__u64 ts;               /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
};

/* perfcap_sample flags */
#define PERFCAP_SAMPLE_F_KSTACK_ERR 0x1 /* bpf_get_stack(kernel) < 0 */
#define PERFCAP_SAMPLE_F_USTACK_ERR 0x2 /* bpf_get_stack(user) < 0 */

/* One CPU sample: the kernel stack (kstack_nr ips) followed by the user
 * stack (ustack_nr ips), innermost frame first. Only the used part of ips[]
 * is sent, so the record length is offsetof(ips) + 8 * (kstack_nr +
 * ustack_nr). CPU samples carry raw stacks (no stack map): a sample is
 * never lost to a stack map collision. */
struct perfcap_sample {
	struct perfcap_event_header h; /* PERFCAP_EV_SAMPLE, PERFCAP_SAMPLE_F_* */
	__u32 pid;              /* tgid */
	__u32 tid;
	__u16 kstack_nr;
	__u16 ustack_nr;
	__s16 kstack_err;       /* negative errno when KSTACK_ERR, else 0 */
	__s16 ustack_err;       /* negative errno when USTACK_ERR, else 0 */
	char  comm[PERFCAP_COMM_LEN]; /* thread name at the time of the sample */
	__u64 ips[2 * PERFCAP_STACK_MAX_DEPTH];
};

#define PERFCAP_SAMPLE_HEADER_SIZE 48 /* offsetof(struct perfcap_sample, ips) */

/* A followed process called exec, or its last thread exited. */
struct perfcap_proc_event {
	struct perfcap_event_header h; /* PERFCAP_EV_EXEC or PERFCAP_EV_EXIT */
	__u32 pid;              /* tgid */
	__u32 tid;              /* the thread that called exec / exited last */
	char  comm[PERFCAP_COMM_LEN]; /* after exec; at exit, the last thread's */
};

/* Task state bits kept from the kernel's (see PC_TASK_* in the format):
 * the report bits S D T t X Z P, TASK_DEAD and TASK_NOLOAD. */
#define PERFCAP_TASK_STATE_MASK 0x04ffu /* = PC_TASK_STATE_MASK */
#define PERFCAP_TASK_DEAD       0x0080u

struct perfcap_switch {
	struct perfcap_event_header h;
	__u32 prev_pid, prev_tid;
	__u32 next_pid, next_tid;
	__u32 prev_state;       /* PERFCAP_TASK_STATE_MASK bits; 0: preempted */
	__s32 prev_prio, next_prio;
	__u32 reserved;
	char  prev_comm[PERFCAP_COMM_LEN];
	char  next_comm[PERFCAP_COMM_LEN];
};

#define PERFCAP_WAKEUP_F_NEW 0x1 /* sched_wakeup_new */

/* The context a wakeup ran in (WAKEUP h.flags, OFFCPU waker_flags; the
 * same bits as PC_WAKE_* in the format): a hard interrupt (timers, device
 * completions), a soft interrupt (its vector in bits 8-11: NET_RX 3,
 * BLOCK 4, TIMER 1, HRTIMER 8 ...), else the waker task. */
#define PERFCAP_WAKE_HARDIRQ   0x2
#define PERFCAP_WAKE_SOFTIRQ   0x4
#define PERFCAP_WAKE_VEC_SHIFT 8

/* The kernel's preempt count, as sched.bpf.c's probe_preempt_count
 * returns it to user space (PERFCAP_PREEMPT_UNREAD: it could not be read):
 * serving a soft interrupt, in a hard one (Linux's SOFTIRQ_OFFSET and
 * HARDIRQ_MASK). */
#define PERFCAP_PREEMPT_SOFTIRQ_OFFSET 0x100u
#define PERFCAP_PREEMPT_HARDIRQ_MASK   0xf0000u
#define PERFCAP_PREEMPT_UNREAD         0xffffffffu

/* Which soft interrupt runs, told without a program at each one's entry:
 * per-CPU fields that are set only while it runs, in per-CPU variables
 * given as distances from the CPU's runqueues (like the preempt count:
 * all in the per-CPU section, from the kernel's BTF;
 * record/sources/softirq_marks.c). The programs read them through
 * bpf_rdonly_cast (direct loads), so only on kernels with that kfunc.
 *   timer_bases     timer_bases[i].running_timer, i < nr_timer (TIMER: a
 *                   timer_list callback runs; the deferrable base is left
 *                   out)
 *   hrtimer_bases   hrtimer_bases.clock_base[4..7].running (HRTIMER: a
 *                   soft hrtimer's callback runs)
 *   softnet         softnet_data.in_net_rx_action (NET_RX; it stays set
 *                   after a net_rx_action that ran out of budget, which
 *                   then raised NET_RX again: so only with NET_RX not
 *                   pending, read at `pending`, __softirq_pending)
 * Any other soft interrupt (BLOCK, TASKLET, RCU ...) is written with
 * vector PERFCAP_SOFTIRQ_UNNAMED. */
#define PERFCAP_TIMER_BASES_MAX    4
#define PERFCAP_HRTIMER_FIRST_SOFT 4 /* HRTIMER_BASE_MONOTONIC_SOFT */
#define PERFCAP_HRTIMER_BASES      8
#define PERFCAP_SOFTIRQ_UNNAMED    15

struct perfcap_softirq_marks {
	__s64 timer_bases;
	__s64 hrtimer_bases;
	__s64 softnet;
	__s64 pending;
	__u32 nr_timer;
	__u32 reserved;
};

struct perfcap_wakeup {
	struct perfcap_event_header h;
	__u32 pid, tid;         /* woken */
	__u32 waker_pid, waker_tid; /* current task; 0 in interrupt or idle */
	__u32 target_cpu;
	__u32 irq_pid, irq_tid; /* in interrupt context: the task it interrupted
				 * (for a softirq run at local_bh_enable, as a
				 * loopback send does, the sender) */
	__u32 reserved;
	char  comm[PERFCAP_COMM_LEN];
	char  waker_comm[PERFCAP_COMM_LEN]; /* in interrupt context: irq_tid's */
};

/* A CPU's SWITCH and WAKEUP records, in the order they happened, sent as
 * one ring record (one reservation and one wakeup check instead of one per
 * record). Each entry is the record as it would have been sent alone.
 * sched.bpf.c keeps one batch per CPU and sends it when full, when its
 * first entry is PERFCAP_SCHED_BATCH_AGE_NS old at the next one, when the
 * CPU goes idle, and when user space asks (flush_batch, run on each CPU
 * by the recorder every PERFCAP_SCHED_BATCH_AGE_NS; after the programs are
 * detached, user space reads what is left from the map). */
#define PERFCAP_SCHED_BATCH_MAX 16
#define PERFCAP_SCHED_BATCH_AGE_NS (100ull * 1000 * 1000)

union perfcap_sched_entry {
	struct perfcap_event_header h; /* PERFCAP_EV_SWITCH or PERFCAP_EV_WAKEUP */
	struct perfcap_switch sw;
	struct perfcap_wakeup wk;
};

struct perfcap_sched_batch {
	struct perfcap_event_header h; /* PERFCAP_EV_SCHED_BATCH; ts: the first entry's */
	__u32 n;                /* entries that follow, 1..PERFCAP_SCHED_BATCH_MAX */
	__u32 reserved;
	union perfcap_sched_entry e[PERFCAP_SCHED_BATCH_MAX];
};

#define PERFCAP_SCHED_BATCH_HEADER_SIZE 24 /* offsetof(struct perfcap_sched_batch, e) */

/* perfcap_offcpu flags */
#define PERFCAP_OFFCPU_F_KSTACK_ERR   0x1 /* bpf_get_task_stack() < 0 */
#define PERFCAP_OFFCPU_F_COPY_FOLLOWS 0x2 /* a USTACK copy of this interval is
					   * sent after it, when the thread
					   * returns to user space */
#define PERFCAP_OFFCPU_F_COPY_SAME    0x4 /* the thread's copy of the interval
					   * switched out at copy_ts stands
					   * for this one (same fingerprint) */
#define PERFCAP_OFFCPU_F_GAP          0x8 /* switched out before a gap between
					   * sched windows, off CPU throughout
					   * it (its run time did not move) */
#define PERFCAP_OFFCPU_F_WAKE_UNSEEN  0x10 /* its wakeup was not seen (in the gap,
					    * or not delivered): no waker */
#define PERFCAP_OFFCPU_F_IN_UNSEEN    0x20 /* its switch-in was not delivered:
					    * ended by the thread's run time
					    * at its next switch-out */

/* A traced thread as the sched windows' iterator (sched.bpf.c sched_edge)
 * found it at a window's end or start, written to its seq_file one after
 * another. where: PERFCAP_TASK_ON_CPU (running), PERFCAP_TASK_QUEUED
 * (runnable), 0 (blocked in state). */
#define PERFCAP_TASK_ON_CPU 1
#define PERFCAP_TASK_QUEUED 2
struct perfcap_sched_task {
	__u64 runtime_ns;       /* se.sum_exec_runtime */
	__u64 run_delay_ns;     /* sched_info.run_delay: time runnable, not running */
	__u32 pid, tid;
	__u32 state;            /* __state when blocked, else 0 */
	__u16 where;
	__u16 cpu;
	__u64 nvcsw;            /* voluntary context switches: its blocking waits */
};

/* A traced thread exiting between two sched windows (sched.bpf.c
 * on_task_exit): its run-time counters at the end, where 0, state
 * PERFCAP_TASK_DEAD. */
struct perfcap_sched_exit {
	struct perfcap_event_header h; /* PERFCAP_EV_SCHED_EXIT */
	struct perfcap_sched_task t;
};

/* An off-CPU interval: h.ts is the switch-in. The user stack is an id in
 * the `stacks` map taken at switch-out (negative: none: not blocked, a
 * kernel thread, the errno of the try, or COPY_FOLLOWS: the USTACK copy
 * taken at the return to user space stands for it). The kernel stack is raw, kips[0
 * .. kstack_nr), read at switch-in from the still sleeping task, so only
 * intervals that are recorded pay for it. Sent at its used length:
 * PERFCAP_OFFCPU_HEADER_SIZE + 8 * kstack_nr. */
struct perfcap_offcpu {
	struct perfcap_event_header h; /* PERFCAP_OFFCPU_F_* */
	__u64 duration;
	__u32 pid, tid;
	__u32 state;            /* prev_state at switch-out */
	__u32 waker_tid;        /* last waker, 0 if none seen */
	__s32 ustack;
	__u16 kstack_nr;
	__s16 kstack_err;       /* negative errno when KSTACK_ERR, else 0 */
	__u32 waker_pid;        /* the last wakeup (see struct perfcap_wakeup) */
	__u32 waker_flags;      /* PERFCAP_WAKE_* */
	__u32 irq_pid, irq_tid;
	__u64 copy_ts;          /* COPY_SAME: the copy standing for this interval;
				 * COPY_FOLLOWS: the copy with the same fingerprint
				 * the coming one refreshes (0: none) */
	char  comm[PERFCAP_COMM_LEN];
	__u64 kips[PERFCAP_STACK_MAX_DEPTH];
};

#define PERFCAP_OFFCPU_HEADER_SIZE 88 /* offsetof(struct perfcap_offcpu, kips) */

/* ---- user stack copies (bpf/ustack_copy.bpf.h) -------------------------- */

/* Largest --stack-copy window, in bytes (a multiple of the page size). */
#define PERFCAP_USTACK_MAX (64 * 1024)

/* The user registers an x86-64 CFI unwinder needs, in this order. */
enum perfcap_ureg {
	PERFCAP_UREG_IP = 0, PERFCAP_UREG_SP, PERFCAP_UREG_BP, PERFCAP_UREG_BX,
	PERFCAP_UREG_R12, PERFCAP_UREG_R13, PERFCAP_UREG_R14, PERFCAP_UREG_R15,
	PERFCAP_UREG_NR,
};

/* perfcap_ustack flags */
#define PERFCAP_USTACK_F_FULL    0x1 /* the copy filled the whole window */
#define PERFCAP_USTACK_F_FAULT   0x2 /* a page below the window's end was unreadable */
#define PERFCAP_USTACK_F_OFFCPU  0x4 /* taken at a switch-out (sched), not a CPU sample */
#define PERFCAP_USTACK_F_START   0x8 /* the window stopped above the process's first sp */

/* The user registers and the user stack from sp upward, page by page,
 * until the window is full or a page cannot be read. Sent just before the
 * PERFCAP_EV_SAMPLE with the same ts and tid (cpu), or at a switch-out with
 * ts = the switch-out time (sched, F_OFFCPU). Sent at its used length:
 * PERFCAP_USTACK_HEADER_SIZE + size. */
struct perfcap_ustack {
	struct perfcap_event_header h; /* PERFCAP_EV_USTACK, PERFCAP_USTACK_F_* */
	__u32 pid, tid;
	__u32 size;             /* bytes of data[] copied from regs[SP] upward */
	__u32 window;           /* bytes asked for (--stack-copy) */
	__u64 regs[PERFCAP_UREG_NR];
	__u8  data[PERFCAP_USTACK_MAX];
};

#define PERFCAP_USTACK_HEADER_SIZE 96 /* offsetof(struct perfcap_ustack, data) */

#define PERFCAP_FORK_F_THREAD 0x1 /* a new thread, not a new process */

struct perfcap_fork {
	struct perfcap_event_header h;
	__u32 parent_pid, parent_tid;
	__u32 child_pid, child_tid;
	char  comm[PERFCAP_COMM_LEN]; /* the child's (inherited) name */
};

/* ---- syscall (bpf/syscall.bpf.c, shared by syscall/mux/net/lock/mem) ---- */

/* Syscall numbers traced: 0 .. PERFCAP_SYSCALL_NR_MAX-1 (x86_64 has about
 * 460). Calls with other numbers (-1, x32) are counted (syscall.bad_nr). */
#define PERFCAP_SYSCALL_NR_MAX 512

/* syscall_set[nr]: which source emits calls of nr (0: none, the call is
 * only counted) and how. */
#define PERFCAP_SYSCALL_F_STACK 0x1 /* capture the user stack */

struct perfcap_syscall_sel {
	__u8 source;            /* enum perfcap_source_id, 0: not emitted */
	__u8 flags;             /* PERFCAP_SYSCALL_F_* */
};

/* `syscall_totals[nr]` (per CPU): every completed call of a traced task. */
struct perfcap_syscall_total {
	__u64 calls;
	__u64 ns;
};

/* `syscall_counters` (per CPU). */
enum perfcap_syscall_counter {
	PERFCAP_SC_EMITTED         = 0, /* records submitted */
	PERFCAP_SC_FILTERED_MIN    = 1, /* in the set, shorter than syscall_min_ns */
	PERFCAP_SC_UNMATCHED_ENTER = 2, /* an entry whose call never exited */
	PERFCAP_SC_UNMATCHED_EXIT  = 3, /* an exit without its entry */
	PERFCAP_SC_MAP_FULL        = 4, /* no memory for a thread's entry: not paired */
	PERFCAP_SC_BAD_NR          = 5, /* number >= PERFCAP_SYSCALL_NR_MAX */
	PERFCAP_SC_PAIRED          = 6, /* calls paired (counted in syscall_totals) */
	PERFCAP_SC_CUT             = 7, /* calls across a window's edge: not paired */
	PERFCAP_SC_NR              = 8,
};

/* One completed call; h.ts is the entry, h.cpu the CPU of the exit. */
struct perfcap_syscall {
	struct perfcap_event_header h; /* PERFCAP_EV_SYSCALL */
	__u64 duration;
	__u32 pid, tid;
	__u32 nr;
	__s32 ustack;           /* id in `stacks`; negative: none */
	__s64 ret;
	__u64 args[3];
	char  comm[PERFCAP_COMM_LEN];
	__u64 io_calls;         /* the thread's read- and write-type calls so far
				   (task I/O accounting: syscr + syscw) at
				   the exit; 0: not known (agg) */
};

/* ---- block (block.bpf.c) ------------------------------------------------ */

/* Block requests between their start (bio turned into a request) and
 * completion, keyed by request: an LRU of about 130 bytes per entry with
 * the map's own overhead (2 MiB). A live request evicted (more than this
 * many in flight) completes as block.unmatched. */
#define PERFCAP_BLOCK_INFLIGHT_MAX 16384

/* perfcap_block flags */
#define PERFCAP_BLOCK_F_NO_ISSUE  0x1 /* completed without an issue seen
					 (flush machinery): service_ns runs
					 from insert, or from the start */
#define PERFCAP_BLOCK_F_INSERTED  0x2 /* went through the I/O scheduler */

/* Slots of block.bpf.c's `block_counts` per-CPU array. */
enum perfcap_block_count {
	PERFCAP_BLOCK_CNT_STARTED,   /* requests followed from their start */
	PERFCAP_BLOCK_CNT_UNTRACED,  /* completed; the submitter was filtered out */
	PERFCAP_BLOCK_CNT_UNMATCHED, /* completed; start not seen (in flight before) */
	PERFCAP_BLOCK_CNT_FLUSH,     /* the flush machinery's own requests */
	PERFCAP_BLOCK_CNT_MERGED,    /* merged into another request, freed */
	PERFCAP_BLOCK_CNT_PARTIAL,   /* partial completions (the request goes on) */
	PERFCAP_BLOCK_CNT_REQUEUED,
	PERFCAP_BLOCK_CNT_NR,
};

/* One completed request, attributed to the task that started it. */
struct perfcap_block {
	struct perfcap_event_header h; /* PERFCAP_EV_BLOCK; h.ts: completion */
	__u64 queue_ns;         /* insert -> issue; 0 if not inserted */
	__u64 service_ns;       /* issue -> completion */
	__u64 sector;
	__u32 pid, tid;         /* the submitting task */
	__u32 dev;              /* major << 20 | minor */
	__u32 op;               /* cmd_flags: REQ_OP_* | REQ_* */
	__u32 bytes;
	__u32 status;           /* blk_status_t (0: ok); user space maps it to -errno */
	char  comm[PERFCAP_COMM_LEN]; /* the submitter's thread name */
};

/* ---- net (net.bpf.c) ------------------------------------------------------ */

/* TCP sockets owned by traced tasks (sock address -> owner; about 64 bytes
 * each with the map's overhead, 4 MiB) and listening ports of traced tasks:
 * LRUs, so the oldest are forgotten when full (an insert failure counts as
 * net.map_full). */
#define PERFCAP_NET_SOCKS_MAX 65536
#define PERFCAP_NET_PORTS_MAX 4096
/* (tgid, fd) pairs already classified (socket described, or not a socket):
 * an LRU (4 MiB); an evicted pair is classified again at its next use. */
#define PERFCAP_NET_FDS_MAX   65536

/* perfcap_socket flags: the same bits as the format's PC_SOCK_F_* */
#define PERFCAP_SOCK_F_ACCEPTED   0x1 /* fd from accept/accept4 */
#define PERFCAP_SOCK_F_CONNECTED  0x2 /* fd from connect */
#define PERFCAP_SOCK_F_DISCOVERED 0x4 /* open before, first seen in use */

/* Slots of net.bpf.c's `net_counts` per-CPU array. */
enum perfcap_net_count {
	PERFCAP_NET_CNT_NOT_SOCKET,      /* fds classified as not a socket */
	PERFCAP_NET_CNT_NO_FILE,         /* fd not open when looked at (e.g. EBADF) */
	PERFCAP_NET_CNT_STATE_SKIPPED,   /* TCP state changes of sockets not followed */
	PERFCAP_NET_CNT_RETRANS_SKIPPED, /* retransmits of sockets not followed */
	PERFCAP_NET_CNT_NR,
};

/* The tuple of a socket fd; h.flags: PERFCAP_SOCK_F_*. */
struct perfcap_socket {
	struct perfcap_event_header h; /* PERFCAP_EV_SOCKET */
	__u32 pid, tid;
	__s32 fd;
	__u16 family, protocol;
	__u64 cookie;           /* struct sock address */
	__u8  saddr[16], daddr[16]; /* network order; IPv4 in the first 4 */
	__u16 sport, dport;     /* host order */
	__u32 reserved;
	char  comm[PERFCAP_COMM_LEN];
};

/* A TCP state change (PERFCAP_EV_TCP_STATE) or retransmit
 * (PERFCAP_EV_TCP_RETRANS: newstate is the state, oldstate 0). */
struct perfcap_tcp_event {
	struct perfcap_event_header h;
	__u32 pid, tid;         /* current task: may be unrelated (softirq) */
	__u64 cookie;
	__u16 family, oldstate, newstate, reserved;
	__u16 sport, dport;     /* host order */
	__u8  saddr[16], daddr[16];
	__u32 reserved2;
};

/* ---- lock (lock.bpf.c) ---------------------------------------------------- */

/* `mutex_calls`: threads inside the uprobed lock function (entry seen,
 * return not yet). */
#define PERFCAP_MUTEX_CALLS_MAX 16384

/* `lock_counters` (per CPU): every contention and lock call of a traced
 * task, also those below the minimum duration, so totals stay true. */
enum perfcap_lock_counter {
	PERFCAP_LOCK_C_CONTENDED    = 0, /* kernel contentions ended */
	PERFCAP_LOCK_C_CONTENDED_NS = 1, /* their total duration */
	PERFCAP_LOCK_C_SHORT        = 2, /* ... shorter than lock_min_ns: no record */
	PERFCAP_LOCK_C_UNMATCHED    = 3, /* contention_end without its begin */
	PERFCAP_LOCK_C_TOO_DEEP     = 4, /* a third nested contention: not timed */
	PERFCAP_LOCK_C_MUTEX_CALLS  = 5, /* returns from the lock function */
	PERFCAP_LOCK_C_MUTEX_NS     = 6, /* their total duration */
	PERFCAP_LOCK_C_MUTEX_SHORT  = 7, /* ... shorter than mutex_min_ns: no record */
	PERFCAP_LOCK_C_NR           = 8,
};

/* A kernel lock contention interval; h.ts is its end. */
struct perfcap_lock {
	struct perfcap_event_header h; /* PERFCAP_EV_LOCK */
	__u64 duration;
	__u64 lock;             /* kernel address of the lock */
	__u32 pid, tid;
	__u32 flags;            /* LCB_F_* of contention_begin */
	__s32 ret;              /* contention_end's ret (0, or -EINTR ...) */
	__s32 kstack;           /* id in `stacks`; negative: none */
	__u32 reserved;
	char  comm[PERFCAP_COMM_LEN];
};

/* A wait in the user lock function (pthread_mutex_lock), from its call to
 * its return; h.ts is the return. */
struct perfcap_mutex {
	struct perfcap_event_header h; /* PERFCAP_EV_MUTEX */
	__u64 duration;
	__u64 addr;             /* the mutex (first argument) */
	__u32 pid, tid;
	__s32 ustack;           /* id in `stacks`; negative: none */
	__s32 ret;              /* the function's return value */
	char  comm[PERFCAP_COMM_LEN];
};

/* ---- mem (mem.bpf.c) ------------------------------------------------------- */

/* `mem_counters` (per CPU). */
enum perfcap_mem_counter {
	PERFCAP_MEM_C_FAULTS    = 0, /* page faults of traced tasks, all */
	PERFCAP_MEM_C_SAMPLED   = 1, /* ... chosen by the 1-in-N (records tried) */
	PERFCAP_MEM_C_EXEC_MAPS = 2, /* mmap/mprotect with PROT_EXEC that succeeded */
	PERFCAP_MEM_C_NR        = 3,
};

/* A sampled user page fault: 1 in fault_one_in is sent; weight says how
 * many faults it stands for. */
struct perfcap_fault {
	struct perfcap_event_header h; /* PERFCAP_EV_FAULT */
	__u64 addr;             /* faulting address */
	__u64 ip;               /* user instruction pointer */
	__u32 pid, tid;
	__u32 error_code;       /* x86 page fault error code (X86_PF_*) */
	__u32 weight;
	char  comm[PERFCAP_COMM_LEN];
};

/* A traced process made memory executable (mmap or mprotect with
 * PROT_EXEC succeeded): user space re-reads its maps. Never sampled. */
struct perfcap_exec_map {
	struct perfcap_event_header h; /* PERFCAP_EV_EXEC_MAP */
	__u64 start, len;
	__u32 pid, tid;
	__u32 nr;               /* the system call */
	__u32 prot;
	char  comm[PERFCAP_COMM_LEN];
};

/* ---- agg (agg.bpf.c): per-thread metrics summed in the kernel ----------- */

/* `agg_metrics`: one entry per (thread, window, class, key) with calls in
 * that window, drained by user space once the window is over (about 250
 * bytes each with the hash overhead: 8 MiB preallocated). A call that finds
 * the map full is counted in the agg_counters (calls and ns), never lost
 * without trace. */
#define PERFCAP_AGG_ENTRIES   32768
#define PERFCAP_AGG_WINDOW_NS 1000000000ull  /* windows of 1 s from record.start_ns */
/* Latency histogram: bucket 0 holds calls < 1024 ns, bucket b (1..30)
 * [2^(b+9), 2^(b+10)) ns, bucket 31 everything from 2^40 ns on. */
#define PERFCAP_AGG_HIST      32
#define PERFCAP_AGG_HIST_SHIFT 9
#define PERFCAP_AGG_NO_KEY    0xffffffffffffffffull

/* What a completed call is summed as (the same numbers as the format's
 * PC_METRIC_*). */
enum perfcap_agg_class {
	PERFCAP_AGG_NONE       = 0, /* in the class table: not a class of its own */
	PERFCAP_AGG_FUTEX_WAIT = 1, /* futex waits; key: the futex address */
	PERFCAP_AGG_FUTEX_WAKE = 2, /* futex wakes; key: address; bytes: threads woken */
	PERFCAP_AGG_POLL       = 3, /* epoll_wait (key: epoll fd), poll/select (no key) */
	PERFCAP_AGG_NET_RECV   = 4, /* socket receives; key: fd; bytes: returned */
	PERFCAP_AGG_NET_SEND   = 5, /* socket sends; key: fd; bytes: returned */
	PERFCAP_AGG_VFS_READ   = 6, /* reads of other files; key: inode number */
	PERFCAP_AGG_VFS_WRITE  = 7, /* writes of other files; key: inode number */
	PERFCAP_AGG_OTHER      = 8, /* every other system call; no key */
	PERFCAP_AGG_CLASSES    = 9,
	/* only in the class table: resolved at exit by the kind of fd arg0 */
	PERFCAP_AGG_RW_READ    = 16, /* read/readv/pread64...: NET_RECV or VFS_READ */
	PERFCAP_AGG_RW_WRITE   = 17, /* write/writev/pwrite64/sendfile...: NET_SEND or VFS_WRITE */
	PERFCAP_AGG_FUTEX      = 18, /* futex(2): FUTEX_WAIT or FUTEX_WAKE by its op */
	PERFCAP_AGG_POLL_NOKEY = 19, /* poll/ppoll/select/pselect6: POLL without a key */
};

/* perfcap_agg_key flags (= the format's PC_METRIC_F_*) */
#define PERFCAP_AGG_F_WAIT 0x1 /* waits source: blocked intervals inside calls of the
				  class (futex wakes: wakeups done), not calls */

struct perfcap_agg_key {
	__u32 tid;
	__u32 window;           /* (exit time - origin) / PERFCAP_AGG_WINDOW_NS */
	__u16 klass;            /* enum perfcap_agg_class */
	__u16 flags;            /* PERFCAP_AGG_F_* */
	__u32 pid;              /* tgid: in the key so the value needs no init */
	__u64 key;              /* per class; PERFCAP_AGG_NO_KEY: none */
};

struct perfcap_agg_value {
	__u64 count;            /* completed calls */
	__u64 errors;           /* ... that returned a negative errno */
	__u64 total_ns;         /* sum of their durations */
	__u64 bytes;            /* sum of positive returns (see the class) */
	__u32 hist[PERFCAP_AGG_HIST];
};

/* `agg_counters` (per CPU), of agg (calls) or of waits (intervals, wakes). */
enum perfcap_agg_counter {
	PERFCAP_AGG_C_CALLS        = 0, /* calls / waits and wakes summed into agg_metrics */
	PERFCAP_AGG_C_FULL_CALLS   = 1, /* calls that found agg_metrics full */
	PERFCAP_AGG_C_FULL_NS      = 2, /* ... and their total ns */
	PERFCAP_AGG_C_SLOW         = 3, /* calls >= agg_slow_ns (records tried) */
	PERFCAP_AGG_C_UNMATCHED    = 4, /* exits without their entry */
	PERFCAP_AGG_C_NO_STORAGE   = 5, /* entries whose task storage failed */
	PERFCAP_AGG_C_NOT_SYSCALL  = 6, /* waits: blocked outside a system call */
	PERFCAP_AGG_C_UNCLOSED     = 7, /* waits: neither switch-in nor wakeup seen */
	PERFCAP_AGG_C_NR           = 8,
};

/* ---- probe (uprobe.bpf.c): user probes given with -e -------------------- */

/* Probes per recording (-e uprobe:...,usdt:...); a probe's index is its
 * BPF cookie and the `probe` field of its records. */
#define PERFCAP_PROBES_MAX    32
/* Integer arguments captured per hit. */
#define PERFCAP_PROBE_ARGS    3
/* `probe_calls`: an LRU of (thread, probe) pairs that called a probed
 * function, with up to PERFCAP_PROBE_DEPTH nested (recursive) calls in
 * progress each (about 200 bytes with the hash overhead: 3 MiB). A pair
 * evicted while inside a call (more threads than this inside probed
 * functions at once) makes its return unmatched (counted). */
#define PERFCAP_PROBE_CALLS_MAX 16384
#define PERFCAP_PROBE_DEPTH   4

enum perfcap_probe_kind {
	PERFCAP_PROBE_UPROBE = 1, /* function entry + return, paired in the kernel */
	PERFCAP_PROBE_USDT   = 2, /* an SDT note's sites (libbpf's USDT support) */
	PERFCAP_PROBE_ENTRY  = 3, /* a function's entry only: hits, no return probe (Go code,
				   * whose moving stacks a uretprobe would corrupt) */
};

/* perfcap_probe_conf.arg[]: which value each captured argument is. */
#define PERFCAP_PROBE_ARG_RET 0  /* the return value (uprobes) */
/* 1..6: the function's integer argument N (x86-64 rdi, rsi, rdx, rcx, r8, r9);
 * for PERFCAP_PROBE_ENTRY (Go code) 1..9: Go's integer argument registers
 * (ABIInternal, Go 1.17+: rax, rbx, rcx, rdi, rsi, r8, r9, r10, r11) */

/* Set by user space before load, per probe index (uprobe.bpf.c's probe_conf). */
struct perfcap_probe_conf {
	__u8 kind;              /* enum perfcap_probe_kind; 0: unused index */
	__u8 nargs;             /* arguments captured (uprobes: arg[]; USDT: its first ones) */
	__u8 arg[PERFCAP_PROBE_ARGS];
	__u8 no_stack;          /* 1: records without the user stack (the gc probes) */
	__u8 reserved[2];
};

/* `probe_counts[index]` (per CPU): every hit of a traced task, recorded or
 * not (--probe-min, --sample, --rate-cap, a full ring), so counts are exact. */
struct perfcap_probe_count {
	__u64 hits;             /* entries (uprobes, entry probes) or hits (USDT) */
	__u64 calls;            /* returns paired with their entry (uprobes) */
	__u64 total_ns;         /* their summed durations */
	__u64 below_min;        /* calls shorter than --probe-min: no record */
	__u64 unmatched;        /* returns without their entry (entry before the recording) */
	__u64 too_deep;         /* entries nested deeper than PERFCAP_PROBE_DEPTH: not timed */
	__u32 hist[PERFCAP_AGG_HIST]; /* calls per log2 duration bucket, as agg's */
};

/* perfcap_probe flags */
#define PERFCAP_PROBE_F_TIMED 0x1 /* duration is a call's (uprobe); else a hit (USDT) */

/* One call of a uprobed function (h.ts: its entry, duration to its return)
 * or one hit of a USDT probe or an entry probe (duration 0). */
struct perfcap_probe {
	struct perfcap_event_header h; /* PERFCAP_EV_PROBE, PERFCAP_PROBE_F_* */
	__u64 duration;
	__u32 pid, tid;
	__u32 probe;            /* index in -e's probes */
	__s32 ustack;           /* id in `stacks`: at the return (the callers) or the hit */
	__u32 nargs;
	__u32 reserved;
	__u64 args[PERFCAP_PROBE_ARGS];
	char  comm[PERFCAP_COMM_LEN];
};

/* perfcap_request flags */
#define PERFCAP_REQ_F_READY     0x1 /* ready_ts: data arrived after the previous request's last read */
#define PERFCAP_REQ_F_LOWER     0x2 /* lower_ts is known */
#define PERFCAP_REQ_F_MORE_TIDS 0x4 /* more than two threads read or wrote it */
#define PERFCAP_REQ_F_AT_EOF    0x8 /* ended by the peer's FIN (a read of 0 bytes) */
#define PERFCAP_REQ_F_AT_CLOSE  0x10 /* ended by the socket's close */
#define PERFCAP_REQ_F_AT_END    0x20 /* still open when the recording ended (from user space) */

/* perfcap_request origin: how the connection was first seen */
#define PERFCAP_REQ_SEEN      0 /* at a read or write of a traced task (opened before, or on a new port) */
#define PERFCAP_REQ_CONNECTED 1 /* a traced task connected it (a client connection) */
#define PERFCAP_REQ_ACCEPTED  2 /* a passive open on a port traced processes serve */

/* One request on a TCP connection of a traced process, inferred in the
 * kernel from the socket layer's sock_recv_length/sock_send_length (a read
 * that returns data after a write, or the connection's first, starts a
 * request; its writes answer it) and timed from when its data arrived
 * (sk_data_ready). Sent when the next request starts, at EOF, at close or,
 * by user space, at the recording's end. h.ts: when it was sent. */
struct perfcap_request {
	struct perfcap_event_header h; /* PERFCAP_EV_REQUEST, PERFCAP_REQ_F_* */
	__u64 cookie;           /* the socket's cookie (unique while the host is up) */
	__u64 conn_ts;          /* the connection first seen */
	__u64 start_ts;         /* its first read returned */
	__u64 first_write_ts;   /* its first write returned */
	__u64 end_ts;           /* its last write returned */
	__u64 ready_ts;         /* F_READY: the first data arrival after the previous request's last read */
	__u64 lower_ts;         /* F_LOWER: the previous request's end, or conn_ts for the first */
	__u64 bytes_in, bytes_out;
	__u32 pid;              /* the traced process that first used the socket */
	__u32 pickup_tid;       /* the thread of its first read */
	__u32 other_tid;        /* another thread that read or wrote it, 0: none */
	__s32 fd;               /* the descriptor of the first call seen, -1: not known */
	__u32 number;           /* 1: the first request seen on the connection */
	__u32 reads, writes;
	__u16 family;           /* AF_INET or AF_INET6 */
	__u16 lport;            /* local port */
	__u8  origin;           /* PERFCAP_REQ_SEEN, _CONNECTED or _ACCEPTED */
	__u8  reserved[7];
};

/* Where a connection's byte stream is, in req windows: `read`, the bytes
 * its reader had taken from it since it was established (tcp_sock
 * bytes_received less what is queued unread), before the call that
 * writes the mark; `copied`, the same as TCP copied_seq (wrapping, format
 * 1.15). The kernel moves both whether or not anything follows the
 * socket, so between two marks they say how much the connection carried
 * while the programs were detached (import/request_pace.c). Written at a
 * connection's first call in each period (not in the period its state was
 * made at its open: it read nothing before), at the close of one followed
 * in a window (both only in a period with a window or after one), and for
 * every connection at the recording's end. */
enum perfcap_request_mark_kind {
	PERFCAP_MARK_PERIOD = 1,  /* its first call in the period, in the window */
	PERFCAP_MARK_CLOSE  = 2,  /* its close (it was followed in a window) */
	PERFCAP_MARK_END    = 3,  /* the recording's end (the iterator) */
	PERFCAP_MARK_SNAP   = 4,  /* a period's start, when it moved since the last
				   * (the snapshot iterator; h.ts that start) */
};

struct perfcap_request_mark {
	struct perfcap_event_header h; /* PERFCAP_EV_REQUEST_MARK; h.ts the call */
	__u64 cookie;           /* as the connection's requests' */
	__u64 conn_ts;          /* as its requests': with cookie, the connection
				 * (a socket's address is reused) */
	__u32 pid;
	__u32 copied;           /* copied_seq before the call */
	__u64 read;             /* bytes read since the open, before the call */
	__u32 kind;             /* enum perfcap_request_mark_kind */
	__u32 reserved;
};

/* Up to PERFCAP_REQ_BATCH_MAX consecutive requests of one connection
 * (numbers number, number + 1, ...), sent as one record: what the requests
 * share is said once, and times inside each are 32-bit offsets. A request
 * any of whose values does not fit an entry is sent alone as a
 * perfcap_request. Sent when full, when its first request is a second old
 * at the next one, at the connection's end, or read by user space at the
 * recording's end. h.ts: when it was sent (0: read at the end). The
 * capture's REQUEST_BATCH has the same entries. */
#define PERFCAP_REQ_BATCH_MAX    8
#define PERFCAP_REQ_BATCH_AGE_NS 1000000000ull

struct perfcap_req_entry {
	__u32 start_off;        /* its start_ts - the batch's base_ts */
	__u32 first_write_ns;   /* its first write, after its start */
	__u32 end_ns;           /* its last write, after its start */
	__u32 ready_ns;         /* flag READY: its data arrived this long before its start */
	__u32 lower_ns;         /* flag LOWER: its lower bound, this long before its start */
	__u32 bytes_in, bytes_out;
	__u32 pickup_tid, other_tid;
	__u16 reads, writes;
	__u16 flags;            /* PERFCAP_REQ_F_* */
	__u16 reserved;
};

struct perfcap_request_batch {
	struct perfcap_event_header h; /* PERFCAP_EV_REQUEST_BATCH */
	__u64 cookie;
	__u64 conn_ts;
	__u64 base_ts;          /* the first request's start_ts */
	__u32 pid;
	__s32 fd;
	__u32 number;           /* the first request's number */
	__u16 family, lport;
	__u8  origin;
	__u8  n;                /* entries that follow, 1..PERFCAP_REQ_BATCH_MAX */
	__u8  reserved[6];
	struct perfcap_req_entry e[PERFCAP_REQ_BATCH_MAX];
};

#define PERFCAP_REQ_BATCH_HEADER_SIZE 64 /* offsetof(struct perfcap_request_batch, e) */

/* req.bpf.c's `req_counts` (STATS req.*) */
enum perfcap_req_count {
	PERFCAP_REQ_CNT_SENT,       /* requests sent to the ring (or lost there, counted) */
	PERFCAP_REQ_CNT_UNANSWERED, /* reads of a "request" that got no write: not requests */
	PERFCAP_REQ_CNT_FD_UNKNOWN, /* sockets first used outside read/recv/write/send calls */
	PERFCAP_REQ_CNT_STARTED,    /* requests opened (windows: open = STARTED - CLOSED) */
	PERFCAP_REQ_CNT_CLOSED,     /* requests closed, answered or not, cut or not */
	PERFCAP_REQ_CNT_CUT,        /* requests open when their window's epoch ended */
	PERFCAP_REQ_CNT_DONE,       /* answered (a first write) or closed unanswered:
				     * STARTED - DONE await an answer */
	PERFCAP_REQ_CNT_GAP_CONNS,  /* windows: connections closed never followed in one */
	PERFCAP_REQ_CNT_GAP_BYTES,  /* and the bytes they read (their requests' share) */
	PERFCAP_REQ_CNT_NR,
};

#endif /* PERFCAP_BPF_H */
