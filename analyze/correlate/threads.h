/* threads.h - what the correlator knows about each thread, by tid: where
 * the switch/wakeup state machine left it, and the waits that still wait
 * for the system call they happened in to end. Thread records are
 * allocated one by one, so a pointer stays valid while others are added. */
#ifndef ANALYZE_THREADS_H
#define ANALYZE_THREADS_H

#include <stdint.h>

#include "util/hashmap.h"

enum thread_state {
	TH_UNKNOWN = 0,   /* not seen by the scheduler events yet */
	TH_RUNNING,
	TH_RUNNABLE,
	TH_BLOCKED,
	TH_DEAD,          /* switched out for the last time */
	TH_LOST,          /* left its CPU unseen (no longer traced): unknown */
};

enum wait_what { WAIT_STATE = 1, WAIT_OFFCPU };

/* An off-CPU interval whose system call is not known yet. */
struct pending_wait {
	uint64_t start, end;
	uint64_t offcpu_id;       /* WAIT_OFFCPU: row id */
	uint64_t stacks;          /* WAIT_OFFCPU: ustack << 32 | kstack */
	int64_t  cpu;             /* WAIT_STATE: -1 unknown */
	uint32_t tid, pid;
	uint32_t task_state;      /* WAIT_OFFCPU: raw state bits */
	uint32_t waker_tid, waker_pid;
	uint32_t irq_tid, irq_pid; /* WAIT_OFFCPU: the waker's context (format 1.4) */
	uint16_t wake_flags;      /* WAIT_OFFCPU: PC_WAKE_F_* */
	uint8_t  what;            /* enum wait_what */
	uint8_t  kind;            /* WAIT_STATE: enum state_kind */
	uint8_t  partial;
	uint8_t  has_waker;
};

struct thread {
	uint32_t tid, pid;
	uint8_t  state;           /* enum thread_state */
	uint8_t  blocked_kind;    /* TH_BLOCKED: enum state_kind */
	uint8_t  reason;          /* TH_RUNNABLE: enum runnable_reason */
	uint8_t  has_waker;
	uint8_t  partial_start;   /* its state began before the capture did */
	/* sched_states.c: a wakeup seen while it was still running (the
	 * waker's, kept for its switch-out), and a runnable state entered at
	 * a blocking switch-out because of one */
	uint8_t  woken_running;
	uint8_t  early_runnable;
	uint32_t early_waker_tid, early_waker_pid;
	int64_t  cpu;             /* CPU it runs on, left, or was woken onto */
	uint64_t since;           /* when it entered its state */
	uint32_t waker_tid, waker_pid;
	uint64_t last_block_done; /* completion of its latest block request */
	int      has_block;
	struct pending_wait *waits;   /* oldest first */
	uint32_t nwaits, waits_cap;
	/* waits.c pairs a blocked interval written without a system call
	 * with the OFFCPU record of the same switch-out (wait_stacks.c):
	 * the first of the two waits here for the other */
	uint64_t unpaired_start;
	uint64_t unpaired_ref;    /* the row's rowid, or the record's kernel stack */
	uint8_t  unpaired;        /* enum wait_what of the one waiting, 0: none */
	/* sched_windows.c: as the last sched window closed (0: not seen) */
	uint64_t closed_ts, closed_runtime, closed_run_delay;
};

struct thread_table {
	struct thread **v;
	uint32_t len, cap;
	struct hmap by_tid;       /* tid -> index in v */
};

void threads_init(struct thread_table *tt);
void threads_free(struct thread_table *tt);

/* The thread tid, created (TH_UNKNOWN) if new. NULL on out-of-memory. */
struct thread *threads_get(struct thread_table *tt, uint32_t tid);

/* Appends a pending wait to t. 0 or -ENOMEM. */
int thread_push_wait(struct thread *t, const struct pending_wait *w);

/* Removes the first n pending waits of t. */
void thread_drop_waits(struct thread *t, uint32_t n);

#endif /* ANALYZE_THREADS_H */
