/* correlate_state.h - the state shared by the parts of the correlator
 * (correlate.c dispatches events, sched_states.c runs the switch/wakeup
 * state machine, waits.c attributes waits to system calls, time_shares.c
 * sums per window). Not used outside them. */
#ifndef ANALYZE_CORRELATE_STATE_H
#define ANALYZE_CORRELATE_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sqlite3.h>

#include "db/batch_insert.h"
#include "correlate.h"
#include "util/hashmap.h"
#include "util/time_gaps.h"
#include "threads.h"
#include "time_shares.h"
#include "timeline.h"


/* thread_state_rows.state_code (the view thread_states decodes it) */
enum state_kind {
	ST_RUNNING = 0,
	ST_RUNNABLE,
	ST_IO,        /* blocked, uninterruptible */
	ST_SLEEP,     /* blocked, interruptible (or idle) */
	ST_BLOCKED,   /* blocked otherwise (stopped, traced, parked) or unknown */
	ST_DEAD,      /* exited: no interval follows */
};

/* thread_state_rows.reason_code of runnable intervals (decoded likewise) */
enum runnable_reason { RR_NONE = 0, RR_WAKEUP, RR_PREEMPTED, RR_NEW };

/* One thread_states row. */
struct state_interval {
	uint32_t tid, pid;
	uint8_t  state;           /* enum state_kind */
	uint8_t  reason;          /* enum runnable_reason */
	uint8_t  partial;
	uint8_t  has_waker;
	uint64_t start, end;
	int64_t  cpu;             /* -1: unknown */
	uint32_t waker_tid, waker_pid;
};

/* A blocked thread_state_rows row written without a system call and the
 * kernel stack of the OFFCPU record of the same switch-out: what
 * wait_stacks.c classifies it by, found without a join over every row. */
struct wait_link {
	int64_t  rowid;           /* of the thread_state_rows row */
	uint64_t start;           /* its start_ts and tid, checked at the update */
	uint32_t tid;
	uint32_t kstack;          /* the OFFCPU record's kernel stack id */
};

/* A thread's time on a CPU inside one gap between sched windows, exact:
 * the difference of its run time counters at the gap's edges. */
struct gap_run {
	uint64_t start, end;           /* from the gap's start to its end or the exit */
	uint64_t gap_end;              /* after an exit: the gap's end */
	uint64_t running;
	uint64_t queued;               /* its run queue wait (run_delay) in it */
	uint32_t pid, tid;
};

#define CORRELATE_MAX_CPUS 4096   /* CPUs whose running thread is tracked */

struct correlator {
	sqlite3 *db;
	unsigned format_minor;         /* of the capture */
	struct timeline timeline;
	struct thread_table threads;
	struct time_shares shares;
	struct hmap socket_fds;        /* (pid, fd) -> 1 while known to be a socket */
	struct batch_insert state_rows;
	struct batch_insert offcpu_rows;
	struct correlate_counts counts;
	uint32_t cpu_running[CORRELATE_MAX_CPUS]; /* traced tid on each CPU, 0: none */
	uint64_t start_ns;             /* capture start: META, else first event */
	uint64_t end_ns;               /* capture end: STATS/END, else last event */
	int has_start, has_end;
	uint64_t first_key, last_key;  /* of events released */
	uint64_t origin;               /* start, else the first event added */
	uint64_t max_span;             /* CORRELATE_MAX_SPAN_NS or more */
	int has_origin;
	int released_any;
	int wait_for_syscalls;         /* syscall records may attribute waits */
	int summed_syscalls;           /* agg or waits sums fill the shares (metric_shares.c) */
	double weight_carry;           /* io_shares.c: weighted counts' fractions */
	int summed_calls;              /* ... and agg's calls win over waits' */
	struct wait_link *links;       /* waits.c, for wait_stacks.c */
	size_t nlinks, links_cap;
	int links_lost;                /* out of memory: wait_stacks.c joins instead */
	struct time_gap *gaps;         /* sched_windows.c: SCHED_GAPs, in time order */
	size_t ngaps, gaps_cap;
	uint64_t resumed_at;           /* the end of the last gap (0: none) */
	bool run_delay_seen;           /* a SCHED_TASK* with run_delay > 0: the
					* kernel keeps the counter (sched_info) */
	struct gap_run *gap_runs;      /* sched_windows.c: threads' run time in gaps */
	size_t nruns, runs_cap;
	int failed;
};

/* The capture start for intervals cut by it. */
uint64_t correlator_start(const struct correlator *c);

/* sched_states.c: the switch/wakeup state machine. */
int sched_on_switch(struct correlator *c, const struct tl_event *ev);
int sched_on_wakeup(struct correlator *c, const struct tl_event *ev);
/* Closes every thread's open interval at the capture end (partial). */
int sched_close_all(struct correlator *c);
/* Every known thread's open interval ends at t (partial): what each did
 * after is unknown until seen again, or until sched_enter_known. */
int sched_close_at(struct correlator *c, uint64_t t);
/* Thread tid was in state (enum state_kind) at ts, since unknown. */
int sched_enter_known(struct correlator *c, uint32_t pid, uint32_t tid, int state,
		      uint64_t ts, int64_t cpu);

/* sched_windows.c: the sched source's gaps and the threads at their ends;
 * the time shares of the windowed columns scaled to their windows. */
int windows_on_gap(struct correlator *c, const struct tl_event *ev);
int windows_on_task(struct correlator *c, const struct tl_event *ev);
int windows_on_task_close(struct correlator *c, const struct tl_event *ev);
int windows_on_task_exit(struct correlator *c, const struct tl_event *ev);
int windows_scale_shares(struct correlator *c);

/* waits.c: intervals off CPU waiting to learn which syscall they were in. */
int waits_add_state(struct correlator *c, struct thread *t,
		    const struct state_interval *iv);
int waits_add_offcpu(struct correlator *c, const struct tl_event *ev);
int waits_on_syscall(struct correlator *c, const struct tl_event *ev);
int waits_flush_thread(struct correlator *c, struct thread *t);

/* state_rows.c: writes one finished thread_states row and sums it into
 * the time shares. wait_class: enum wait_class, < 0 for none;
 * syscall_nr/syscall_id < 0: none. */
int state_row_write(struct correlator *c, const struct state_interval *iv,
		    int wait_class, int64_t syscall_nr, int64_t syscall_id);

/* io_shares.c: time shares of system calls and block requests. */
int shares_on_syscall(struct correlator *c, const struct tl_event *ev);
int shares_on_block(struct correlator *c, const struct tl_event *ev);

/* correlate.c: whether fd of pid is known to be a socket now. */
int socket_fd_known(const struct correlator *c, uint32_t pid, int64_t fd);

/* The fd argument of a syscall event (a C int in a 64-bit register). */
static inline int64_t syscall_fd(const struct tl_event *ev)
{
	return (int32_t)(uint32_t)ev->arg;
}

#endif /* ANALYZE_CORRELATE_STATE_H */
