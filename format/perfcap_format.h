/* perfcap_format.h - the public contract of the capture file format library.
 *
 * A capture is a file header followed by independent chunks. Each chunk has
 * a fixed little-endian header and a zstd-compressed payload. Binary chunk
 * payloads are a stream of records, each starting with struct pc_rec.
 * format/SPEC.md is the normative description; this header mirrors it.
 *
 * Both perfcap-record and perfcap-analyze link this library; neither reads
 * or writes capture bytes any other way.
 */
#ifndef PERFCAP_FORMAT_H
#define PERFCAP_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* ---- file header ------------------------------------------------------ */

#define PC_FILE_MAGIC      "PERFCAP\0" /* 8 bytes */
#define PC_FORMAT_MAJOR    1           /* incompatible layout changes */
#define PC_FORMAT_MINOR    17          /* compatible additions */

struct pc_file_header {
	char     magic[8];        /* PC_FILE_MAGIC */
	uint16_t major;           /* PC_FORMAT_MAJOR of the writer */
	uint16_t minor;           /* PC_FORMAT_MINOR of the writer */
	uint32_t header_size;     /* sizeof this header as written (>= 32) */
	uint64_t created_ns;      /* CLOCK_REALTIME at creation */
	uint64_t reserved;
};

/* ---- chunks ----------------------------------------------------------- */

#define PC_CHUNK_MAGIC 0x48434350u /* "PCCH" little-endian */

enum pc_chunk_type {
	PC_CHUNK_META    = 1, /* run metadata: key/value strings */
	PC_CHUNK_EVENTS  = 2, /* records: samples and other events */
	PC_CHUNK_PROCS   = 3, /* records: processes, threads, memory maps */
	PC_CHUNK_SYMBOLS = 4, /* records: symbol data per module */
	PC_CHUNK_STATS   = 5, /* loss and statistics counters: key/value */
	PC_CHUNK_STACKS  = 6, /* records: deduplicated stacks */
	PC_CHUNK_END     = 7, /* end marker: key/value totals */
};

#define PC_CHUNK_F_ZSTD 0x1u /* payload is one zstd frame */

struct pc_chunk_header {
	uint32_t magic;           /* PC_CHUNK_MAGIC */
	uint16_t type;            /* enum pc_chunk_type */
	uint16_t version;         /* schema version of this chunk type's payload */
	uint32_t header_size;     /* bytes of header as written (>= 72) */
	uint32_t flags;           /* PC_CHUNK_F_* */
	uint64_t seq;             /* 0, 1, 2 ... in file order */
	uint64_t payload_size;    /* bytes of payload on disk */
	uint64_t raw_size;        /* bytes of payload after decompression */
	uint64_t count;           /* records (or key/value pairs) inside */
	uint64_t t_start;         /* earliest timestamp inside, ns CLOCK_MONOTONIC; 0 if none */
	uint64_t t_end;           /* latest timestamp inside */
	uint32_t crc32c;          /* CRC-32C of header (this field zero) + payload */
	uint32_t reserved;
};

#define PC_CHUNK_HEADER_SIZE 72u
#define PC_FILE_HEADER_SIZE  32u

/* The zstd level chunks are written at: -1, the first of zstd's fast
 * levels. The recorder's CPU is what recording costs the host and
 * compressing is half of it under a busy server. Measured on the payloads
 * of real captures in 4 MiB blocks (zstd -b): redis's default recording
 * (mostly REQUEST records) 721 vs 586 MB/s at level 1 for a file 1.2%
 * smaller; postgres's (sched records, stack copies) 968 vs 865 MB/s for
 * 1.4% larger. Level 1 had replaced zstd's default 3 for the same reason
 * (1.5x faster, -1.3% to +2.5% in size). Any level reads back the same. */
#define PC_ZSTD_LEVEL (-1)

/* Hard limits a reader enforces on untrusted files. */
#define PC_MAX_CHUNK_RAW     (256u << 20) /* 256 MiB decompressed */
#define PC_MAX_CHUNK_PAYLOAD (256u << 20)

/* ---- records (payload of EVENTS, PROCS, SYMBOLS, STACKS) -------------- */

/* Every record starts with this. size includes the header and is a multiple
 * of 8. A reader that knows a shorter layout ignores the extra bytes; one
 * that knows a longer layout zero-fills what is missing (pc_rec_copy). */
struct pc_rec {
	uint16_t type;
	uint16_t flags;
	uint32_t size;
};

enum pc_rec_type {
	PC_REC_SAMPLE = 1, /* EVENTS: one CPU sample */
	PC_REC_STACK  = 2, /* STACKS: one deduplicated stack */
	PC_REC_PROC   = 3, /* PROCS: a process: ids, comm, exe, cmdline */
	PC_REC_THREAD = 4, /* PROCS: a thread and its name */
	PC_REC_MAP    = 5, /* PROCS: one executable memory mapping */
	PC_REC_MODULE = 6, /* SYMBOLS: symbols + load segments of one module */
	PC_REC_EXEC   = 7, /* EVENTS: a process called exec */
	PC_REC_EXIT   = 8, /* EVENTS: a process exited */
	/* event sources (perfcap-record -e); layouts below */
	PC_REC_SWITCH     = 9,  /* sched: context switch */
	PC_REC_WAKEUP     = 10, /* sched: a task was woken */
	PC_REC_OFFCPU     = 11, /* sched: an off-CPU interval with its stack */
	PC_REC_FORK       = 12, /* sched: a process or thread was created */
	PC_REC_SYSCALL    = 13, /* syscall/mux/net/lock/mem: one completed call */
	PC_REC_BLOCK      = 14, /* block: one completed block I/O request */
	PC_REC_SOCKET     = 15, /* net: a socket fd and its connection tuple */
	PC_REC_TCP_STATE  = 16, /* net: a TCP state change */
	PC_REC_TCP_RETRANS = 17, /* net: a TCP retransmit */
	PC_REC_LOCK       = 18, /* lock: kernel lock contention interval */
	PC_REC_MUTEX      = 19, /* lock: user mutex wait (uprobes) */
	PC_REC_FAULT      = 20, /* mem: a sampled user page fault */
	PC_REC_USTACK     = 21, /* EVENTS (1.2): user registers + user stack copy */
	PC_REC_UNWIND     = 22, /* SYMBOLS (1.2): unwind tables of one module */
	PC_REC_THREAD_METRIC = 23, /* EVENTS (1.3): a thread's calls of one class in one window */
	PC_REC_PROBE      = 24, /* EVENTS (1.5): a call of a uprobed function, or a USDT hit */
	PC_REC_REQUEST    = 25, /* EVENTS (1.7): a request on a TCP connection, inferred in the kernel */
	PC_REC_REQUEST_BATCH = 26, /* EVENTS (1.8): consecutive requests of one connection */
	PC_REC_REQUEST_WINDOW = 27, /* EVENTS (1.10): a second whose requests were followed in a window */
	PC_REC_SCHED_GAP  = 28, /* EVENTS (1.12): the sched source was not attached from ts to end_ts */
	PC_REC_SCHED_TASK = 29, /* EVENTS (1.12): a traced thread as a sched window opened */
	PC_REC_SCHED_TASK_CLOSE = 30, /* EVENTS (1.13): ... as a sched window closed */
	PC_REC_SCHED_TASK_EXIT = 31, /* EVENTS (1.13): ... exiting between two windows */
	PC_REC_SYSCALL_WINDOW = 32, /* EVENTS (1.14): a second whose calls were paired in a window */
	PC_REC_REQUEST_MARK = 33, /* EVENTS (1.15): a connection's byte stream as a req window opened */
};

/* "no stack captured" in a sample. Stack ids are assigned by the recorder
 * from 0 upward; PC_STACK_NONE never names a stack. */
#define PC_STACK_NONE 0xffffffffu

struct pc_rec_sample {
	struct pc_rec h;
	uint64_t ts;              /* ns CLOCK_MONOTONIC */
	uint32_t pid;             /* tgid */
	uint32_t tid;
	uint32_t cpu;
	uint32_t ustack;          /* stack id of the user stack, or PC_STACK_NONE */
	uint32_t kstack;          /* stack id of the kernel stack, or PC_STACK_NONE */
	uint32_t reserved;
};

enum pc_stack_kind { PC_STACK_USER = 0, PC_STACK_KERNEL = 1 };
#define PC_STACK_F_TRUNCATED 0x1u /* hit the depth limit: outer frames missing */
#define PC_STACK_F_ERROR     0x2u /* unwinding failed; ips may be empty */

struct pc_rec_stack {
	struct pc_rec h;          /* h.flags: PC_STACK_F_* */
	uint32_t id;
	uint32_t pid;             /* address space for user stacks; 0 for kernel */
	uint16_t kind;            /* enum pc_stack_kind */
	uint16_t reserved;
	uint32_t nr;              /* number of ips that follow, innermost first */
	uint64_t ips[];
};

struct pc_rec_proc {
	struct pc_rec h;
	uint64_t ts;              /* when observed */
	uint32_t pid;
	uint32_t ppid;
	uint64_t start_ns;        /* process start, ns since boot */
	char     comm[16];
	uint32_t exe_len;         /* bytes of exe path that follow (no NUL) */
	uint32_t cmdline_len;     /* bytes of argv that follow the exe, NUL-separated */
	/* char exe[exe_len]; char cmdline[cmdline_len]; padding to 8 */
};

struct pc_rec_thread {
	struct pc_rec h;
	uint64_t ts;
	uint32_t pid;
	uint32_t tid;
	char     comm[16];
};

#define PC_BUILD_ID_MAX 20

struct pc_rec_map {
	struct pc_rec h;
	uint64_t ts;              /* when this mapping was read */
	uint32_t pid;
	uint32_t prot;            /* PROT_READ|PROT_WRITE|PROT_EXEC */
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;           /* file offset of start */
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint8_t  build_id_len;    /* 0 if the file has none or was unreadable */
	uint8_t  reserved[3];
	uint32_t path_len;        /* bytes of path that follow (no NUL) */
	uint8_t  build_id[PC_BUILD_ID_MAX];
	uint32_t reserved2;
	/* char path[path_len]; padding to 8 */
};

/* PERFMAP (format 1.1): symbols of JIT code from a process's
 * /tmp/perf-PID.map, at runtime addresses of that process (pc_rec_module.pid). */
enum pc_module_kind { PC_MODULE_ELF = 0, PC_MODULE_KERNEL = 1, PC_MODULE_PERFMAP = 2 };

/* A load segment: maps a file offset to the ELF virtual address. */
struct pc_segment {
	uint64_t offset;          /* p_offset */
	uint64_t vaddr;           /* p_vaddr */
	uint64_t filesz;          /* p_filesz */
	uint64_t memsz;           /* p_memsz */
};

/* A symbol. For ELF modules addr is an ELF virtual address (st_value); for
 * the kernel it is a runtime kernel address. */
struct pc_symbol {
	uint64_t addr;
	uint32_t size;            /* 0 if unknown: extends to the next symbol */
	uint32_t name_off;        /* offset into the module's string table */
};

struct pc_rec_module {
	struct pc_rec h;
	uint16_t kind;            /* enum pc_module_kind */
	uint8_t  build_id_len;
	uint8_t  reserved;
	uint32_t nsegs;
	uint32_t nsyms;
	uint32_t path_len;
	uint32_t strtab_len;
	uint32_t pid;             /* PERFMAP: the process; 0 otherwise */
	uint8_t  build_id[PC_BUILD_ID_MAX];
	uint32_t reserved3;
	/* struct pc_segment segs[nsegs];
	 * struct pc_symbol  syms[nsyms];  sorted by addr
	 * char path[path_len];
	 * char strtab[strtab_len];        NUL-terminated names
	 * padding to 8 */
};

struct pc_rec_exec {
	struct pc_rec h;
	uint64_t ts;
	uint32_t pid;
	uint32_t tid;
	char     comm[16];        /* comm after exec */
};

struct pc_rec_exit {
	struct pc_rec h;
	uint64_t ts;
	uint32_t pid;
	uint32_t tid;
};

/* ---- event source records -------------------------------------------
 * Times are CLOCK_MONOTONIC ns. Stack ids as in SAMPLE (PC_STACK_NONE when
 * not captured). Every record type below is written only when its source
 * attached (META "sources"). */

/* prev_state values: the kernel's task state bits at switch-out (0 =
 * TASK_RUNNING: preempted, still runnable). */
#define PC_TASK_RUNNING         0x0000u
#define PC_TASK_INTERRUPTIBLE   0x0001u
#define PC_TASK_UNINTERRUPTIBLE 0x0002u
#define PC_TASK_DEAD            0x0080u /* the task's last switch-out */
#define PC_TASK_NOLOAD          0x0400u /* with UNINTERRUPTIBLE: an idle wait ("I"), not I/O */
#define PC_TASK_STATE_MASK      0x04ffu /* the bits prev_state may hold (SPEC 2.3) */

/* SWITCH h.flags: which side passed the recorder's filters. With a filter,
 * the switch stream is complete only for traced tasks; the other side of a
 * switch is named but its own switches are not recorded. 0 = not recorded
 * (captures before perfcap 0.1.1): treat both sides as traced. */
#define PC_SWITCH_F_PREV_TRACED 0x1u
#define PC_SWITCH_F_NEXT_TRACED 0x2u

struct pc_rec_switch {
	struct pc_rec h;          /* h.flags: PC_SWITCH_F_* */
	uint64_t ts;
	uint32_t cpu;
	uint32_t prev_state;      /* PC_TASK_* bits of the task switched out */
	uint32_t prev_pid, prev_tid;
	uint32_t next_pid, next_tid;
	int32_t  prev_prio, next_prio;
};

#define PC_WAKEUP_F_NEW 0x1u      /* h.flags: sched_wakeup_new (a new task) */
/* (1.4) The context a wakeup ran in, in WAKEUP and OFFCPU h.flags: a hard
 * interrupt, a soft interrupt (vector in bits 8-11: PC_WAKE_VEC), else the
 * waker task (none of the bits: 1.3 and older writers set none). */
#define PC_WAKE_F_HARDIRQ 0x2u
#define PC_WAKE_F_SOFTIRQ 0x4u
#define PC_WAKE_VEC(flags) (((flags) >> 8) & 0xfu)
#define PC_WAKE_VEC_UNNAMED 15u /* (1.11) a soft interrupt the recorder did not name */
#define PC_WAKE_F_MASK    0x0f06u

struct pc_rec_wakeup {
	struct pc_rec h;          /* h.flags: PC_WAKEUP_F_* */
	uint64_t ts;
	uint32_t pid, tid;        /* the task woken */
	uint32_t waker_pid, waker_tid; /* current task when woken (0 in irq/idle) */
	uint32_t target_cpu;
	uint32_t irq_pid;         /* (1.4) in interrupt context: the task it */
	uint32_t irq_tid;         /* interrupted (a loopback send's softirq: the sender) */
	uint32_t reserved;
};

/* An off-CPU interval of at least the recorder's threshold (META
 * sched.offcpu_min_ns): switched out at ts - duration, back on at ts. */
#define PC_OFFCPU_F_COPY_FOLLOWS 0x1u /* (1.7) its USTACK copy comes after it */
#define PC_OFFCPU_F_COPY_SAME    0x8u  /* (1.9) the copy at copy_ts stands for it */
#define PC_OFFCPU_F_GAP          0x10u /* (1.12) it spans a SCHED_GAP, off CPU throughout */
#define PC_OFFCPU_F_WAKE_UNSEEN  0x20u /* (1.12) ... and was woken in it: the waker is unknown;
				       * (1.17) with IN_UNSEEN: its wakeup was not seen */
#define PC_OFFCPU_F_IN_UNSEEN    0x40u /* (1.17) its switch-in was not delivered: it ends
				       * where the thread's run time at its next
				       * switch-out says; no kernel stack */

struct pc_rec_offcpu {
	struct pc_rec h;          /* h.flags: PC_WAKE_F_*, PC_OFFCPU_F_* */
	uint64_t ts;              /* switch-in */
	uint64_t duration;        /* ns off CPU */
	uint32_t pid, tid;
	uint32_t state;           /* prev_state at switch-out */
	uint32_t ustack, kstack;  /* stacks at switch-out */
	uint32_t waker_tid;       /* last waker before switch-in, 0 if none */
	uint32_t waker_pid;       /* (1.4) h.flags PC_WAKE_F_*: its context; */
	uint32_t irq_pid, irq_tid; /* in interrupt context, the interrupted task */
	uint32_t reserved;
	uint64_t copy_ts;         /* (1.9) COPY_SAME: the switch-out of the thread's
				   * copy that stands for this interval; COPY_FOLLOWS:
				   * of the copy with the same fingerprint the coming
				   * one refreshes (0: none) */
};

#define PC_FORK_F_THREAD 0x1u     /* h.flags: a new thread, not a process */

struct pc_rec_fork {
	struct pc_rec h;          /* h.flags: PC_FORK_F_* */
	uint64_t ts;
	uint32_t parent_pid, parent_tid;
	uint32_t child_pid, child_tid;
};

/* One completed system call, paired in the kernel (sys_enter -> sys_exit).
 * args are the raw first three arguments; perfcap-analyze interprets them
 * per syscall number (fd, buffer size, futex address...). */
struct pc_rec_syscall {
	struct pc_rec h;
	uint64_t ts;              /* entry */
	uint64_t duration;
	uint32_t pid, tid;
	uint32_t nr;              /* x86_64 syscall number */
	uint32_t ustack;          /* PC_STACK_NONE unless stacks were asked for */
	int64_t  ret;
	uint64_t args[3];
	uint64_t io_calls;        /* (1.15) the thread's read- and write-type
				     calls so far at the exit (syscr + syscw);
				     0: not known */
};

/* pc_rec_syscall flags */
#define PC_SYSCALL_F_SUMMED 0x1u /* (1.3) written by the agg source: the call
				   is also summed in a THREAD_METRIC record */

/* THREAD_METRIC classes (format/SPEC.md 2.3). */
enum pc_metric_class {
	PC_METRIC_FUTEX_WAIT = 1, /* key: futex address */
	PC_METRIC_FUTEX_WAKE = 2, /* key: futex address; bytes: threads woken */
	PC_METRIC_POLL       = 3, /* key: epoll fd, or PC_METRIC_NO_KEY (poll, select) */
	PC_METRIC_NET_RECV   = 4, /* key: socket fd; bytes received */
	PC_METRIC_NET_SEND   = 5, /* key: socket fd; bytes sent */
	PC_METRIC_VFS_READ   = 6, /* key: inode number; bytes read */
	PC_METRIC_VFS_WRITE  = 7, /* key: inode number; bytes written */
	PC_METRIC_OTHER      = 8, /* every other system call; no key */
	PC_METRIC_CLASSES    = 9,
};

#define PC_METRIC_NO_KEY 0xffffffffffffffffull

/* pc_rec_thread_metric flags */
#define PC_METRIC_F_WAIT 0x1u /* (waits source) sums of blocked intervals inside calls
				 of the class, not of calls; futex_wake: wakeups done */
#define PC_METRIC_HIST   32 /* bucket 0: < 1024 ns; b: [2^(b+9), 2^(b+10)); 31: >= 2^40 */

/* (1.3) The completed system calls of one thread in one class (and key)
 * whose exit fell in [window_start, window_start + window_ns). */
struct pc_rec_thread_metric {
	struct pc_rec h;
	uint64_t window_start;    /* ns CLOCK_MONOTONIC (record.start_ns + k * window_ns) */
	uint64_t window_ns;
	uint32_t pid, tid;
	uint16_t klass;           /* enum pc_metric_class */
	uint16_t reserved;
	uint32_t reserved2;
	uint64_t key;             /* per class, PC_METRIC_NO_KEY: none */
	uint64_t count;           /* calls */
	uint64_t errors;          /* ... that returned a negative errno */
	uint64_t total_ns;        /* sum of their durations */
	uint64_t bytes;           /* sum of positive returns (per class) */
	uint32_t hist[PC_METRIC_HIST]; /* calls per log2 duration bucket */
};

/* pc_rec_probe flags */
#define PC_PROBE_F_TIMED 0x1u /* a uprobe call: duration from its entry to its return */
#define PC_PROBE_ARGS    3

/* (1.5) One call of a function probed with -e uprobe:PATH:SYMBOL (flag
 * TIMED: ts its entry, duration to its return) or one hit of a USDT probe
 * (ts the hit, duration 0). probe indexes the META probe.N.* keys. */
struct pc_rec_probe {
	struct pc_rec h;          /* h.flags: PC_PROBE_F_* */
	uint64_t ts;
	uint64_t duration;
	uint32_t pid, tid;
	uint32_t probe;           /* index of the probe (META probe.N.*) */
	uint32_t ustack;          /* at the return (callers) or the hit; PC_STACK_NONE: none */
	uint32_t nargs;           /* args[] captured (META probe.N.args names them) */
	uint32_t reserved;
	uint64_t args[PC_PROBE_ARGS];
};

/* pc_rec_request flags (1.7) */
#define PC_REQUEST_F_READY     0x1u  /* ready_ns: its data's arrival before start_ts is known */
#define PC_REQUEST_F_LOWER     0x2u  /* lower_ns: its lower bound before start_ts is known */
#define PC_REQUEST_F_MORE_TIDS 0x4u  /* more than two threads read or wrote it */
#define PC_REQUEST_F_AT_EOF    0x8u  /* the last one before the peer's FIN */
#define PC_REQUEST_F_AT_CLOSE  0x10u /* the last one before the socket's close */
#define PC_REQUEST_F_AT_END    0x20u /* still open when the recording ended */

/* pc_rec_request origin */
enum pc_request_origin { PC_REQUEST_SEEN = 0, PC_REQUEST_CONNECTED = 1, PC_REQUEST_ACCEPTED = 2 };

/* (1.7) One request on a TCP connection of a traced process, inferred in
 * the kernel by the req source (a read returning data after a write starts
 * a request, its writes answer it). Times are CLOCK_MONOTONIC ns; the ones
 * inside a request are offsets from start_ts (small numbers: a capture of
 * a busy server holds one of these per request). */
struct pc_rec_request {
	struct pc_rec h;          /* h.flags: PC_REQUEST_F_* */
	uint64_t start_ts;        /* its first read returned */
	uint64_t end_ts;          /* its last write returned */
	uint64_t conn_ts;         /* the connection first seen */
	uint64_t cookie;          /* the struct sock address, as SOCKET's cookie */
	uint64_t first_write_ns;  /* its first write returned, after start_ts */
	uint64_t ready_ns;        /* flag READY: its data arrived this long before start_ts */
	uint64_t lower_ns;        /* flag LOWER: the previous request ended (or, for the
				   * first, the connection began) this long before start_ts */
	uint64_t bytes_in, bytes_out;
	uint32_t pid;
	uint32_t pickup_tid;      /* the thread of its first read */
	uint32_t other_tid;       /* another thread that read or wrote it, 0: none */
	int32_t  fd;              /* -1: not known */
	uint32_t number;          /* 1: the connection's first request seen */
	uint32_t reads, writes;
	uint16_t family, lport;   /* AF_INET/AF_INET6 (Linux numbers), local port */
	uint8_t  origin;          /* enum pc_request_origin */
	uint8_t  reserved[7];
};

/* (1.8) Up to PC_REQUEST_BATCH_MAX consecutive requests of one connection
 * (numbers number, number + 1, ...), what they share said once: n struct
 * pc_request_entry follow. Each entry is the request a REQUEST record
 * would hold, its times as offsets (start_ts = base_ts + start_off). The
 * req source writes most requests this way (a third of the bytes of
 * REQUEST records), and a REQUEST for a request that does not fit. */
#define PC_REQUEST_BATCH_MAX 8

struct pc_rec_request_batch {
	struct pc_rec h;          /* h.flags: 0 */
	uint64_t base_ts;         /* the first request's start_ts */
	uint64_t conn_ts;         /* the connection first seen */
	uint64_t cookie;
	uint32_t pid;
	int32_t  fd;              /* -1: not known */
	uint32_t number;          /* the first request's number */
	uint16_t family, lport;
	uint8_t  origin;          /* enum pc_request_origin */
	uint8_t  n;               /* entries that follow, 1..PC_REQUEST_BATCH_MAX */
	uint8_t  reserved[6];
};

struct pc_request_entry {
	uint32_t start_off;       /* start_ts - base_ts */
	uint32_t first_write_ns;  /* after start_ts */
	uint32_t end_ns;          /* end_ts - start_ts */
	uint32_t ready_ns;        /* flag READY: as pc_rec_request's */
	uint32_t lower_ns;        /* flag LOWER: as pc_rec_request's */
	uint32_t bytes_in, bytes_out;
	uint32_t pickup_tid, other_tid;
	uint16_t reads, writes;
	uint16_t flags;           /* PC_REQUEST_F_* */
	uint16_t reserved;
};

/* (1.10) A period (a second) in which the req source followed requests
 * only in a time window at its start (requests above its rate budget, META
 * req.windows.budget): the requests whose first read fell in [ts, ts +
 * open_ns) were followed to their end; none that started in [ts + open_ns,
 * ts + period_ns) was. Each followed request of the period stands for
 * period_ns / open_ns of its requests. Periods followed whole have no
 * record. open_ns 0: none was followed (the programs could not be
 * attached again), the period's requests are not known. */
struct pc_rec_request_window {
	struct pc_rec h;          /* h.flags: 0 */
	uint64_t ts;              /* the period's start, where its window opens */
	uint64_t open_ns;         /* the window's length, <= period_ns */
	uint64_t period_ns;       /* to the next period, or the recording's end */
	uint64_t started;         /* requests the kernel started in the window */
	uint64_t gap_conns;       /* (1.16) connections opened and closed in the period, */
	uint64_t gap_bytes;       /* never in a window, and the bytes they read */
	uint64_t snap_start;      /* (1.16) the snapshots of the streams (REQUEST_MARK */
	uint64_t snap_end;        /* kind SNAP) at the period's start and end, 0: none */
};

/* (1.14) A period (a second) in which the syscall program (sources
 * syscall, mux, net, lock, mem) paired calls only in a window at its
 * start (above --syscall-rate, META syscall.windows.budget): a call has a
 * SYSCALL record (and is in STATS syscall.calls.*) only when it entered
 * at or after ts and exited before ts + open_ns; calls across either edge
 * are counted in STATS syscall.windows.cut. A call of duration d stands
 * for period_ns / (open_ns - d) calls: the chance that one of its length
 * fit. Written as the window opens, before any of its calls; periods
 * followed whole have no record. A later record with the same ts (at the
 * recording's end) shortens the last period. */
/* (1.15) Where a connection's byte stream is, in req windows: the bytes
 * its reader had taken from it. 1.15: at its first call in a window,
 * copied only (TCP copied_seq, wrapping at 2^32). 1.16: read (since the
 * connection's open) and kind: its first call in a period's window
 * (PC_MARK_PERIOD, not in the period its state was made at its open), its
 * close after it was followed in a window (PC_MARK_CLOSE), the recording's
 * end (PC_MARK_END). */
enum pc_mark_kind {
	PC_MARK_PERIOD = 1,
	PC_MARK_CLOSE  = 2,
	PC_MARK_END    = 3,
	PC_MARK_SNAP   = 4,   /* a period's start: ts that start (moved since the last) */
};

struct pc_rec_request_mark {
	struct pc_rec h;          /* h.flags: 0 */
	uint64_t ts;              /* the call */
	uint64_t cookie;          /* as its REQUEST / REQUEST_BATCH records' */
	uint64_t conn_ts;         /* as theirs: with cookie, the connection */
	uint32_t pid;
	uint32_t copied;
	uint64_t read;            /* (1.16) bytes read since the open, before the call */
	uint32_t kind;            /* (1.16) enum pc_mark_kind; 0: a 1.15 mark */
	uint32_t reserved;
};

struct pc_rec_syscall_window {
	struct pc_rec h;          /* h.flags: 0 */
	uint64_t ts;              /* the window's start */
	uint64_t open_ns;         /* the window's length, <= period_ns */
	uint64_t period_ns;       /* the period it stands for, from ts */
	uint64_t rate;            /* calls a second paired in the last window, which sized this one */
};

/* (1.12) Above --sched-rate the sched source is attached only in a window
 * at the start of each second (META sched.windows.budget): from ts (its
 * programs detached) to end_ts (a SCHED_TASK per traced thread written,
 * the programs about to be attached again, or the recording's end) it saw
 * no switch, wakeup or wait. Written at end_ts. */
struct pc_rec_sched_gap {
	struct pc_rec h;          /* h.flags: 0 */
	uint64_t ts;              /* the gap's start */
	uint64_t end_ts;          /* its end */
};

#define PC_SCHED_TASK_ON_CPU 1u   /* where: running */
#define PC_SCHED_TASK_QUEUED 2u   /* where: runnable, waiting for a CPU */

/* (1.12) A traced thread at the end of a SCHED_GAP (ts = its end_ts):
 * running, runnable, or blocked in state; and the kernel's own counters of
 * its time on a CPU and runnable (monotonic over its life).
 * (1.13) SCHED_TASK_CLOSE, the same fields, at a gap's start (ts = its
 * ts, the programs just detached): the counters' differences to the
 * thread's SCHED_TASK at the gap's end are its run time and run-queue
 * time inside the gap, exact. SCHED_TASK_EXIT, the same fields, for a
 * traced thread exiting inside a gap (ts: its exit; where 0, state
 * TASK_DEAD): its counters' last values. */
struct pc_rec_sched_task {
	struct pc_rec h;          /* h.flags: 0 */
	uint64_t ts;
	uint64_t runtime_ns;      /* se.sum_exec_runtime */
	uint64_t run_delay_ns;    /* sched_info.run_delay */
	uint32_t pid, tid;
	uint32_t state;           /* PC_TASK_STATE_MASK bits when blocked, else 0 */
	uint16_t where;           /* PC_SCHED_TASK_*, 0: blocked */
	uint16_t cpu;
	uint64_t nvcsw;           /* (1.16) voluntary context switches so far */
};

struct pc_rec_block {
	struct pc_rec h;
	uint64_t ts;              /* completion */
	uint64_t queue_ns;        /* insert -> issue (0 if not seen) */
	uint64_t service_ns;      /* issue -> complete */
	uint32_t pid, tid;        /* the submitting thread (0 if unknown) */
	uint32_t dev;             /* major << 20 | minor (kernel dev_t) */
	uint32_t op;              /* REQ_OP_* and flags (cmd_flags) */
	uint64_t sector;
	uint32_t bytes;
	int32_t  error;
};

#define PC_SOCK_F_ACCEPTED   0x1u /* fd from accept/accept4 */
#define PC_SOCK_F_CONNECTED  0x2u /* fd from connect */
#define PC_SOCK_F_DISCOVERED 0x4u /* an fd already open, first seen in use */
/* format 1.4: read from /proc at the start and end of the recording
 * (socket_snapshot.c), whatever -e says; `reserved` then holds the TCP
 * state (TCP_LISTEN 10, TCP_ESTABLISHED 1 ...) and `cookie` the socket
 * inode. PEER: a socket of an untraced process, the other end of a traced
 * process's local connection (or that process's listening socket). */
#define PC_SOCK_F_SNAPSHOT   0x8u
#define PC_SOCK_F_PEER       0x10u

struct pc_rec_socket {
	struct pc_rec h;          /* h.flags: PC_SOCK_F_* */
	uint64_t ts;
	uint32_t pid, tid;
	int32_t  fd;
	uint16_t family;          /* AF_INET / AF_INET6 / AF_UNIX ... */
	uint16_t protocol;        /* IPPROTO_TCP ... */
	uint64_t cookie;          /* kernel socket identity (sock address) */
	uint8_t  saddr[16], daddr[16]; /* IPv4 in the first 4 bytes */
	uint16_t sport, dport;    /* host byte order */
	uint32_t state;           /* (1.4) SNAPSHOT: the kernel's socket state (TCP 1
				   * ESTABLISHED, 10 LISTEN ...); else 0 */
};

struct pc_rec_tcp_state {
	struct pc_rec h;
	uint64_t ts;
	uint32_t pid, tid;        /* current task (may be unrelated: softirq) */
	uint64_t cookie;
	uint16_t family;
	uint16_t oldstate, newstate; /* TCP_ESTABLISHED ... */
	uint16_t reserved;
	uint8_t  saddr[16], daddr[16];
	uint16_t sport, dport;
	uint32_t reserved2;
};

struct pc_rec_tcp_retrans {
	struct pc_rec h;
	uint64_t ts;
	uint32_t pid, tid;
	uint64_t cookie;
	uint16_t family;
	uint16_t state;
	uint32_t reserved;
	uint8_t  saddr[16], daddr[16];
	uint16_t sport, dport;
	uint32_t reserved2;
};

struct pc_rec_lock {
	struct pc_rec h;
	uint64_t ts;              /* contention end */
	uint64_t duration;
	uint32_t pid, tid;
	uint64_t lock;            /* kernel lock address */
	uint32_t flags;           /* LCB_F_* of contention_begin */
	int32_t  ret;
	uint32_t kstack;
	uint32_t reserved;
};

struct pc_rec_mutex {
	struct pc_rec h;
	uint64_t ts;              /* lock acquired */
	uint64_t duration;        /* call -> return of the lock function */
	uint32_t pid, tid;
	uint64_t addr;            /* the mutex's user address */
	uint32_t ustack;
	uint32_t reserved;
};

struct pc_rec_fault {
	struct pc_rec h;
	uint64_t ts;
	uint32_t pid, tid;
	uint64_t addr;            /* faulting address */
	uint64_t ip;
	uint32_t error_code;
	uint32_t weight;          /* faults this one stands for (1-in-N sampling) */
};

/* ---- user stack copies and unwind tables (format 1.2) ----------------- */

/* x86-64 user registers in pc_rec_ustack.regs, in this order. */
enum pc_ureg {
	PC_UREG_IP = 0, PC_UREG_SP, PC_UREG_BP, PC_UREG_BX,
	PC_UREG_R12, PC_UREG_R13, PC_UREG_R14, PC_UREG_R15,
	PC_UREG_NR,
};

#define PC_USTACK_F_FULL   0x1u /* the copy filled the window: may be cut */
#define PC_USTACK_F_FAULT  0x2u /* a page inside the window was unreadable */
#define PC_USTACK_F_OFFCPU 0x4u /* taken at a switch-out: belongs to the OFFCPU
				 * record of tid whose ts - duration == ts */
#define PC_USTACK_F_START  0x8u /* format 1.8: the copy stopped 16 bytes above
				 * the process's initial stack pointer (argv,
				 * envp above it; no frame): not cut */

/* The user registers and the user stack from regs[SP] upward. Without
 * F_OFFCPU it belongs to the SAMPLE of the same tid and ts, which follows
 * it in the same chunk or the next EVENTS chunk. */
struct pc_rec_ustack {
	struct pc_rec h;          /* h.flags: PC_USTACK_F_* */
	uint64_t ts;
	uint32_t pid, tid;
	uint32_t size;            /* bytes of stack that follow */
	uint32_t window;          /* bytes the recorder asked for (--stack-copy) */
	uint64_t regs[PC_UREG_NR];
	/* uint8_t stack[size]: memory at regs[SP] .. regs[SP] + size; padding to 8 */
};

enum pc_unwind_kind { PC_UNWIND_EH_FRAME = 0, PC_UNWIND_DEBUG_FRAME = 1 };

/* UNWIND h.flags (format 1.6): the FDEs covering no candidate return
 * address are blanked into fillers and out of the header's table. */
#define PC_UNWIND_F_PRUNED 0x1
/* UNWIND h.flags (format 1.6): a .debug_frame the recorder wrote from a Go
 * pclntab's SP deltas (a stripped Go binary has no table of its own). */
#define PC_UNWIND_F_SYNTHESIZED 0x2

/* The unwind tables of one ELF module (a file mapped executable by a
 * process with stack copies), keyed by build-id like PC_REC_MODULE. Each
 * section keeps its sh_addr: .eh_frame's pc-relative pointers need it. */
struct pc_rec_unwind {
	struct pc_rec h;
	uint16_t kind;            /* enum pc_unwind_kind of table */
	uint8_t  build_id_len;
	uint8_t  reserved;
	uint32_t nsegs;           /* load segments, as in PC_REC_MODULE */
	uint64_t table_addr;      /* sh_addr of .eh_frame (or .debug_frame: 0) */
	uint64_t hdr_addr;        /* sh_addr of .eh_frame_hdr; 0 if none */
	uint32_t table_len;
	uint32_t hdr_len;
	uint32_t path_len;
	uint32_t reserved2;
	uint8_t  build_id[PC_BUILD_ID_MAX];
	uint32_t reserved3;
	/* struct pc_segment segs[nsegs];
	 * uint8_t table[table_len]; uint8_t hdr[hdr_len]; char path[path_len];
	 * padding to 8 */
};

/* ---- growable byte buffer (building payloads) ------------------------- */

struct pc_buf {
	uint8_t *data;
	size_t   len;
	size_t   cap;
};

void  pc_buf_free(struct pc_buf *b);
void  pc_buf_reset(struct pc_buf *b);                 /* len = 0, keeps memory */
int   pc_buf_append(struct pc_buf *b, const void *p, size_t n); /* 0 or -ENOMEM */

/* Append one record: a fixed part (starting with struct pc_rec, whose type
 * is set by the caller) followed by up to two variable byte runs, padded to 8.
 * Fills h.size. Returns 0 or -ENOMEM. */
int pc_buf_add_rec(struct pc_buf *b, void *fixed, size_t fixed_len,
		   const void *var1, size_t len1, const void *var2, size_t len2);

/* Append one key/value pair as "key\0value\0" (META, STATS, END payloads). */
int pc_buf_add_kv(struct pc_buf *b, const char *key, const char *value);
int pc_buf_add_kv_u64(struct pc_buf *b, const char *key, uint64_t value);

/* ---- writer ----------------------------------------------------------- */

struct pc_writer;

#define PC_WRITE_FORCE 0x1 /* overwrite an existing file */

/* Creates path with mode 0600 (O_EXCL unless PC_WRITE_FORCE) and writes the
 * file header. Returns 0 or -errno; on error *out is NULL. */
int pc_writer_open(struct pc_writer **out, const char *path, int flags);

/* Compresses raw[0..raw_size) and appends one chunk with one write(). count
 * is the number of records or pairs inside; t_start/t_end its time range.
 * Returns 0 or -errno (-ENOSPC when the disk is full: what was written
 * before stays valid). Not thread-safe: one writer thread per file. */
int pc_writer_add_chunk(struct pc_writer *w, uint16_t type, uint16_t version,
			const void *raw, size_t raw_size, uint64_t count,
			uint64_t t_start, uint64_t t_end);

uint64_t pc_writer_bytes(const struct pc_writer *w);  /* bytes written so far */
uint64_t pc_writer_chunks(const struct pc_writer *w);

/* Appends the END chunk (totals supplied by the caller as key/values, may be
 * NULL), fsyncs and closes. Frees w. Returns 0 or -errno. */
int pc_writer_finish(struct pc_writer *w, const struct pc_buf *end_kv);

/* Closes without an END chunk (error paths). Frees w. */
void pc_writer_abort(struct pc_writer *w);

/* ---- reader ----------------------------------------------------------- */

struct pc_reader;

struct pc_chunk {
	struct pc_chunk_header hdr;  /* as read; header_size bytes may exceed 72 */
	uint64_t    offset;          /* file offset of the chunk header */
	const void *data;            /* decompressed payload, hdr.raw_size bytes */
	size_t      size;            /* == hdr.raw_size */
};

/* What the reader found wrong, filled in as it goes. */
struct pc_reader_status {
	uint64_t file_size;
	uint64_t chunks_ok;
	uint64_t chunks_bad_crc;     /* checksum mismatch: skipped */
	uint64_t chunks_bad_zstd;    /* decompression failed: skipped */
	uint64_t chunks_unknown;     /* chunk types this reader does not know */
	int      end_seen;           /* END chunk present */
	int      truncated;          /* file ends inside a chunk */
	int      garbage;            /* a chunk header was invalid: reading stopped */
	uint64_t stop_offset;        /* where reading stopped if truncated/garbage */
	uint16_t major, minor;       /* from the file header */
};

/* Opens and validates the file header. Returns 0, or -errno with a message
 * available from pc_reader_error(NULL) / the errbuf. Errors:
 *   -EINVAL not a perfcap capture (bad magic / short file)
 *   -EPROTONOSUPPORT written by a newer, incompatible major version */
int pc_reader_open(struct pc_reader **out, const char *path,
		   char *errbuf, size_t errlen);

/* Reads the next intact chunk of any type (unknown types included: callers
 * skip what they do not know). Returns 1 with *c filled (data valid until
 * the next call), 0 at the end of the readable data. Damaged chunks are
 * skipped and counted in the status; reading never fails hard after open. */
int pc_reader_next(struct pc_reader *r, struct pc_chunk *c);

/* pc_reader_next for the chunk types in the mask types (bit 1 << type;
 * types 0-31): the chunks of other types are stepped over by their
 * headers, without reading, checking or decompressing their payloads (to
 * the offset pc_reader_next would go to), so they are neither returned nor
 * counted. For a pass that needs a few small chunks of a big file. */
int pc_reader_next_of(struct pc_reader *r, struct pc_chunk *c, uint32_t types);

/* Rewind to the first chunk (the importer's first pass over a capture with
 * user stack copies reads the unwind tables at its end, then starts over). */
int pc_reader_rewind(struct pc_reader *r);

const struct pc_reader_status *pc_reader_status(const struct pc_reader *r);

void pc_reader_close(struct pc_reader *r);

/* One-line description of a damaged/incomplete file, or NULL if intact. */
const char *pc_reader_damage(const struct pc_reader *r, char *buf, size_t len);

/* ---- record and key/value iteration ---------------------------------- */

struct pc_rec_iter {
	const uint8_t *p;
	const uint8_t *end;
	uint64_t       bad;           /* malformed record runs seen (iteration stops) */
};

void pc_rec_iter_init(struct pc_rec_iter *it, const void *data, size_t size);

/* Returns 1 and the next record (size validated: >= 8, multiple of 8, within
 * the payload), 0 at the end, -1 if the rest of the payload is malformed. */
int pc_rec_next(struct pc_rec_iter *it, const struct pc_rec **rec);

/* Copies a record into a fixed struct of out_size bytes: truncates a longer
 * record (appended fields), zero-fills a shorter one (older writer).
 * Returns a pointer to the record's bytes past out_size (the variable part
 * for records with one) and its length in *tail_len. */
const uint8_t *pc_rec_copy(const struct pc_rec *rec, void *out, size_t out_size,
			   size_t *tail_len);

struct pc_kv_iter {
	const char *p;
	const char *end;
};

void pc_kv_iter_init(struct pc_kv_iter *it, const void *data, size_t size);

/* Returns 1 with key/value (NUL-terminated inside the payload), 0 at end,
 * -1 if malformed (unterminated). */
int pc_kv_next(struct pc_kv_iter *it, const char **key, const char **value);

/* ---- misc ------------------------------------------------------------- */

/* CRC-32C of data, continuing crc (0 to start): with the CPU's crc32
 * instruction where there is one. pc_crc32c_portable is the table
 * implementation every CPU runs otherwise (the tests compare the two). */
uint32_t pc_crc32c(uint32_t crc, const void *data, size_t len);
uint32_t pc_crc32c_portable(uint32_t crc, const void *data, size_t len);
const char *pc_chunk_type_name(uint16_t type); /* "meta", ... or "unknown" */

/* Schema versions of each chunk type's payload written by this library. */
#define PC_META_VERSION    1
#define PC_EVENTS_VERSION  1
#define PC_PROCS_VERSION   1
#define PC_SYMBOLS_VERSION 1
#define PC_STATS_VERSION   1
#define PC_STACKS_VERSION  1
#define PC_END_VERSION     1

#endif /* PERFCAP_FORMAT_H */
