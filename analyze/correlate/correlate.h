/* correlate.h - correlations computed while a capture is imported: thread
 * states reconstructed from context switches and wakeups (thread_states),
 * off-CPU intervals classified by the system call they waited in (offcpu),
 * and per-thread time shares per window (thread_time_shares). The loader
 * feeds it events as it reads them; they are put in time order by a
 * timeline (timeline.h) and run through the state machines. docs/schema.md
 * says exactly what each table holds. */
#ifndef ANALYZE_CORRELATE_H
#define ANALYZE_CORRELATE_H

#include <stdint.h>
#include <sqlite3.h>

#include "timeline.h"

#define CORRELATE_DEFAULT_WINDOW_NS 1000000000ull

/* Events more than this before or after the capture start (META
 * record.start_ns, else the first event) are left out of the correlations
 * and counted: a damaged or hostile file must not make the time shares
 * span years of windows. A capture whose META record.duration_limit_ns is
 * longer gets that plus an hour. */
#define CORRELATE_MAX_SPAN_NS (24ull * 3600 * 1000000000ull)

/* What the correlations could not match, for the quality table. */
struct correlate_counts {
	uint64_t switch_in_unmatched;   /* switch-in of a thread believed on a CPU */
	uint64_t switch_out_unmatched;  /* switch-out of a thread believed off CPU */
	uint64_t switch_out_missing;    /* running thread whose CPU went to another task
					 * without its switch-out (it stopped being traced) */
	uint64_t wakeup_unmatched;      /* blocked thread switched in without a wakeup */
	uint64_t waits_expired;         /* waits given up on before their syscall ended */
	uint64_t intervals;             /* thread_states rows */
	uint64_t intervals_partial;     /* ... cut by the capture's start or end */
	uint64_t late_sched;            /* events past the reorder window, per source */
	uint64_t late_syscall;
	uint64_t late_block;
	uint64_t late_net;
	uint64_t offcpu_by_syscall;     /* off-CPU intervals classified by their syscall */
	uint64_t offcpu_by_state;       /* ... by the task state alone */
	uint64_t timeline_peak;         /* most events held for reordering */
	uint64_t shares_dropped;        /* time share sums past SHARES_MAX_ROWS */
	uint64_t out_of_range;          /* events too far from the capture start */
};

struct correlator;

/* NULL on out-of-memory. window_ns: thread_time_shares window. */
struct correlator *correlator_new(sqlite3 *db, uint64_t window_ns);

/* After import, once stacks have names: waits classified by task state
 * alone get the class their kernel stack tells (wait_stacks.c). c: the
 * correlator that wrote the rows (its pairs of rows and records), or
 * NULL to find them by a join. */
int wait_stacks_classify(sqlite3 *db, const struct correlator *c);

/* The capture's format minor version (what its records can carry). */
void correlator_set_format_minor(struct correlator *c, unsigned minor);
void correlator_free(struct correlator *c);

/* Capture facts, when known: recording start (META record.start_ns),
 * end (STATS or END record.end_ns), sources (META sources), the duration
 * limit the recorder was given (META record.duration_limit_ns). */
void correlator_set_start(struct correlator *c, uint64_t ns);
void correlator_set_duration_limit(struct correlator *c, uint64_t ns);
void correlator_set_end(struct correlator *c, uint64_t ns);
void correlator_set_sources(struct correlator *c, const char *sources);

/* Writes thread_states and offcpu rows through the INSERT thread w. */
struct sql_writer;
void correlator_use_writer(struct correlator *c, struct sql_writer *w);

/* Feeds one event (in capture order). 0 or -1. */
int correlator_add(struct correlator *c, const struct tl_event *ev);

/* The calls of one thread in one class and window, summed by the
 * recorder's agg source (a THREAD_METRIC record, metric_shares.c). */
struct metric_sum {
	uint64_t window_start, window_ns;
	uint32_t pid, tid;
	uint16_t klass;                 /* PC_METRIC_* */
	int wait;                       /* PC_METRIC_F_WAIT: blocked time, not calls */
	uint64_t count, total_ns;
};

/* Adds it to its thread's time shares. Once a capture has such sums
 * (META sources names agg or waits), they alone fill the syscall, futex,
 * poll, net and vfs columns of thread_time_shares, and SYSCALL records no
 * longer do; with both, agg's (calls) win over waits' (blocked time). 0 or
 * -1. */
int correlator_add_metric(struct correlator *c, const struct metric_sum *m);

/* Counts a CPU sample in its thread's window. 0 or -1. */
int correlator_add_sample(struct correlator *c, uint32_t pid, uint32_t tid, uint64_t ts);

/* After each chunk of events: releases what can no longer be reordered. */
int correlator_chunk_done(struct correlator *c);

/* After the last chunk: releases everything and closes the intervals
 * still open at the capture's end (rows go through the batches, and so
 * through the INSERT thread if there is one). 0 or -1. */
int correlator_release_all(struct correlator *c);

/* Then, with the database to itself: writes the last rows and
 * thread_time_shares. 0 or -1. */
int correlator_finish(struct correlator *c);

const struct correlate_counts *correlator_counts(const struct correlator *c);

/* The thread_states state_code of a SCHED_TASK's thread (where:
 * PC_SCHED_TASK_*, state: its task state bits when blocked). */
int sched_task_state_code(uint16_t where, uint32_t state);

/* Fills state_kinds, runnable_reasons and wait_classes, which decode the
 * codes of thread_state_rows (state_codes.c). 0 or -1 (reported). */
int state_codes_store(sqlite3 *db);

#endif /* ANALYZE_CORRELATE_H */
