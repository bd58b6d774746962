/* diagnose.h - the rule-based verdict of a report: which causes explain
 * where the time of the scope's threads went, ranked, each with its key
 * number, subject and evidence (docs/report-json.md, "diagnosis").
 *
 * Each rule (diagnose_*.c) looks at one kind of cause, measures the time
 * it explains for the threads it affects, and adds a cause when that is
 * a meaningful share. Causes are ranked by score = share of the affected
 * threads' observed time explained (0..1), so kinds compare; the decision
 * rules of book chapter 12 adjust the order (request queueing first when
 * it dominates request latency, voluntary sleep last). Confidence and
 * caveats come from the data quality of the sources each cause used. */
#ifndef ANALYZE_DIAGNOSE_H
#define ANALYZE_DIAGNOSE_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

#include "query/calls.h"
#include "query/callchains.h"
#include "query/names.h"
#include "query/scope.h"
#include "query/selection.h"
#include "util/hashmap.h"

#define DIAG_MAX_CAUSES   12
#define DIAG_MAX_FIELDS   14
#define DIAG_MAX_ROWS     8
#define DIAG_MAX_ROW_COLS 5
#define DIAG_MAX_EVIDENCE 8
#define DIAG_MAX_CAVEATS  8
#define DIAG_TEXT         160
#define DC_N_CLASSES      8   /* enum diag_class values */

enum field_type { FIELD_TEXT, FIELD_INT, FIELD_REAL };

/* One named value of a cause's subject. */
struct diag_field {
	char name[32];
	enum field_type type;
	char text[DIAG_TEXT];
	int64_t i;
	double d;
};

/* A subject: scalar fields plus at most one list of rows (competitors,
 * threads, waiters ...), each row a few fields. */
struct diag_subject {
	struct diag_field fields[DIAG_MAX_FIELDS];
	int nfields;
	char list_name[32];
	struct diag_field rows[DIAG_MAX_ROWS][DIAG_MAX_ROW_COLS];
	int row_cols[DIAG_MAX_ROWS];
	int nrows;
	int list_full;             /* rows beyond DIAG_MAX_ROWS were dropped */
};

struct diag_cause {
	const char *kind;          /* cpu_bound, cpu_contention, lock_contention ... */
	char title[DIAG_TEXT];
	double score;              /* 0..1 */
	const char *key_name;
	double key_value;
	const char *key_unit;      /* ns, percent, count, bytes */
	const char *sources;       /* the event sources it rests on, comma-separated */
	int rank_last;             /* not a resource problem: ranked after the others */
	int rank_first;            /* a decision rule puts it first (request queueing) */
	double rank_score;         /* > 0: ranks as if this were its score (a decision rule) */
	int inferred;              /* rests on a proxy, not a measurement: caps the
				    * confidence at medium when it ranks first */
	struct diag_subject subject;
	char evidence[DIAG_MAX_EVIDENCE][DIAG_TEXT * 2];
	int nevidence;
};

struct diag_spike {
	int found;
	uint64_t window_start, window_end;
	uint64_t baseline_start, baseline_end;
	double latency_ns, baseline_latency_ns;  /* the latency measure in each window */
	const char *latency_measure;             /* mean request service time, I/O call
						  * duration or blocking I/O wait */
	double io_ratio, cpu_ratio;              /* over the threads active in both windows */
	int threads_compared;                    /* those threads */
	int new_threads;                         /* threads active only in the spike window */
	const char *verdict;                     /* io, cpu, both, none */
};

struct diagnosis {
	struct diag_cause causes[DIAG_MAX_CAUSES];
	int ncauses;
	struct diag_spike spike;
	const char *confidence;                  /* high, medium, low */
	int unexplained;                         /* 0, 1 or 2: how much of the blocked time
						  * the rules could not attribute (lowers the
						  * confidence to medium or low) */
	char caveats[DIAG_MAX_CAVEATS][DIAG_TEXT * 2];
	int ncaveats;
	char summary[1024];
	struct diag_thread *threads;  /* the scope's threads (diagnose_free frees) */
	size_t nthreads;
	uint64_t (*blocked_by_nr)[DC_N_CLASSES]; /* [CALLS_MAX_NR]: blocked time inside each call number */
	/* The scope's requests with a readiness (request_queueing's rows in
	 * the scope), their queue_ns summed and how many were ready when
	 * their data arrived: counted by the pool rule in its one pass over
	 * the requests (diagnose_pool.c), so that the report's queueing line
	 * needs no pass of its own (0.8 s for the 4.8M requests of a 60 s
	 * default recording). queued < 0: not read. */
	int64_t queued, queued_ns, queued_on_arrival;
};

/* Where a thread's blocked time went, by wait class (thread_states);
 * DC_ACCEPT is net waits inside accept(): an idle server, not a peer;
 * DC_UNKNOWN is blocked time no evidence explains (never a sleep). */
enum diag_class { DC_BLOCK_IO, DC_FUTEX, DC_POLL, DC_SLEEP, DC_NET, DC_ACCEPT, DC_OTHER,
		  DC_UNKNOWN, DC_N };
_Static_assert(DC_N == DC_N_CLASSES, "DC_N_CLASSES must match enum diag_class");

/* One thread of the scope and its time in it (clipped to the window). */
struct diag_thread {
	uint32_t pid, tid;
	uint64_t running, runnable, blocked;
	uint64_t wait[DC_N];
	uint64_t samples;          /* CPU samples */
	uint64_t observed;         /* running + runnable + blocked, else the window */
	uint64_t runq_waits;       /* run-queue waits ended by a switch-in (runq_latency) */
	uint64_t runq_max;         /* the longest */
};

/* The scope's requests started in each window k of [base + k * width,
 * base + (k + 1) * width), k < n: how many and their service_ns summed (a
 * NULL as 0). The report reads them in its one pass over the requests
 * (report_requests.c) before the diagnosis runs; the spike rule takes
 * them when its windows are these, else reads them itself. */
#define DIAG_SPIKE_MAX_WINDOWS 100000 /* more windows than this: no spike rule */

struct request_windows {
	uint64_t base, width;
	size_t n;
	uint64_t *count;
	int64_t *sum;
	int valid;
};

/* What every rule gets: the database, the scope and a few facts. */
struct diag_input {
	struct diag_thread *threads;
	size_t nthreads;
	struct hmap thread_by_tid;     /* (tid, 0) -> index in threads */
	sqlite3 *db;
	const struct report_scope *scope;
	double freq_hz;            /* CPU sampling frequency, 0 if none */
	uint64_t samples;          /* CPU samples in the scope */
	int has_sched, has_syscall, has_block, has_net, has_lock, has_mem, has_cpu;
	int has_waits;             /* kernel sums of waits (thread_metrics kind 'waits') */
	int has_req;               /* requests inferred in the kernel (the req source) */
	uint32_t recorder_pid;     /* META record.pid, 0 if not recorded */
	uint64_t window_ns;        /* thread_time_shares window */
	const struct selection *sel;   /* the scope's CPU samples */
	const struct calls *calls;     /* the scope's system calls */
	const struct request_windows *req_windows; /* or NULL */
	uint64_t (*blocked_by_nr)[DC_N_CLASSES];
	const struct callchains *cc;
	const struct names *names;
};

/* Runs every rule, ranks, and writes the summary. 0 or -1 (reported).
 * Call diagnose_free afterwards either way. req_windows may be NULL. */
int diagnose_run(sqlite3 *db, const struct report_scope *scope, double freq_hz,
		 const struct selection *sel, const struct callchains *cc,
		 const struct names *names, const struct calls *calls,
		 const struct request_windows *req_windows, struct diagnosis *d);

void diagnose_free(struct diagnosis *d);

/* A cause's key number for people: "1.12 s", "75.2%", "18300". Returns buf. */
const char *diag_key_text(const struct diag_cause *c, char *buf, size_t len);

/* Rules (0 or -1 on a database error). Each adds zero or more causes. */
int diagnose_cpu_bound(const struct diag_input *in, struct diagnosis *d);     /* diagnose_cpu.c */
int diagnose_cpu_contention(const struct diag_input *in, struct diagnosis *d); /* diagnose_runq.c */
int diagnose_locks(const struct diag_input *in, struct diagnosis *d);          /* diagnose_locks.c */
int diagnose_waits(const struct diag_input *in, struct diagnosis *d);          /* diagnose_waits.c: disk, network, sleep */
int diagnose_pool(const struct diag_input *in, struct diagnosis *d);           /* diagnose_pool.c */
int diagnose_memory(const struct diag_input *in, struct diagnosis *d);         /* diagnose_memory.c */
int diagnose_spike(const struct diag_input *in, struct diagnosis *d);          /* diagnose_spike.c */
int diagnose_wakers(const struct diag_input *in, struct diagnosis *d);         /* diagnose_wakers.c: convoys, upstreams, idle */
int diagnose_gc(const struct diag_input *in, struct diagnosis *d);             /* diagnose_gc.c: GC pauses */

/* Helpers for the rules (diagnose_util.c). */
struct diag_cause *diag_add_cause(struct diagnosis *d, const char *kind);
void diag_evidence(struct diag_cause *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void diag_caveat(struct diagnosis *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void diag_text(struct diag_subject *s, const char *name, const char *text);
void diag_int(struct diag_subject *s, const char *name, int64_t value);
void diag_real(struct diag_subject *s, const char *name, double value);
/* Starts a row of the subject's list (named name); the row_* calls fill it. */
void diag_row(struct diag_subject *s, const char *list_name);
void diag_row_text(struct diag_subject *s, const char *name, const char *text);
void diag_row_int(struct diag_subject *s, const char *name, int64_t value);

/* Loads in->threads from thread_states and the samples (diagnose_threads.c). */
int diag_threads_load(struct diag_input *in, const struct selection *sel);
const struct diag_thread *diag_thread_find(const struct diag_input *in, uint32_t tid);

/* Observed time of a thread: the score denominator. A thread the
 * scheduler events do not cover counts the whole window. */
uint64_t diag_observed_ns(const struct diag_input *in, uint32_t tid);

/* The window's length (clipped to the capture). */
uint64_t diag_scope_ns(const struct diag_input *in);

/* 1 if a cause's time is worth claiming: at least 1 ms and 5% of the
 * window (a thread busy for a few ms is not the story of a run). */
int diag_material(const struct diag_input *in, uint64_t ns);

/* The thread's name ("?" if unknown) into buf. */
const char *diag_comm(const struct diag_input *in, uint32_t pid, uint32_t tid, char *buf,
		      size_t len);

/* Prepares sql with the scope bound (report_scope_sql placeholders). */
sqlite3_stmt *diag_prepare(const struct diag_input *in, const char *sql);

#endif /* ANALYZE_DIAGNOSE_H */
