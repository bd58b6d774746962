/* scope.h - what a report, a diagnosis or a diff looks at: the options
 * that choose it (--top, --from/--to, --pid, --tid, --comm), resolved
 * against the database into a time window and filters, and turned into
 * one SQL condition (scope.c) so every reader describes the same threads
 * over the same time. */
#ifndef ANALYZE_QUERY_SCOPE_H
#define ANALYZE_QUERY_SCOPE_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

/* A --from/--to bound as given: an offset from the capture start ("2s",
 * "500ms") or an absolute CLOCK_MONOTONIC time in ns (digits only). */
struct time_bound {
	int      given;
	int      absolute;        /* 1: value is absolute ns; 0: an offset */
	uint64_t value;
};

struct report_options {
	int         top;          /* functions to list (--top) */
	int         has_pid;
	uint32_t    pid;          /* --pid */
	int         has_tid;
	uint32_t    tid;          /* --tid */
	const char *comm;         /* --comm, or NULL */
	struct time_bound from;   /* --from */
	struct time_bound to;     /* --to */
	const char *input_path;   /* FILE|DB as given, for "capture" and "reproduce" */
	const char *analyze_command; /* the analyze command line, or NULL */
};

/* The time window and filters resolved against the database. */
struct report_scope {
	uint64_t capture_start;   /* META record.start_ns, else first event */
	uint64_t capture_end;     /* STATS record.end_ns, else last event */
	uint64_t from;            /* [from, to): absolute ns */
	uint64_t to;
	int      windowed;        /* --from or --to given */
	int      filtered;        /* --pid, --tid or --comm given */
	const struct report_options *opts;
};

/* Parses a --from/--to value. 0 or -1. */
int report_parse_time_bound(const char *text, struct time_bound *out);

/* Resolves the window. 0, or -1 with a one-line error written to
 * stderr (a bound outside the capture, from >= to). */
int report_scope_resolve(sqlite3 *db, const struct report_options *opts,
			 struct report_scope *scope);

/* Where an aggregate whose result does not depend on row order reads
 * the request views (request_spans, request_queueing: projections of the
 * requests table in start order) from: the table itself scanned in
 * storage order ("requests NOT INDEXED") when the report covers the
 * whole capture, the view (its index on start_ts) for a --from/--to
 * window. Through the view every row costs a lookup by rowid: on a redis
 * capture with 543k requests a statement took 0.35-0.45 s, the scan
 * 0.15 s. The columns a report reads have the same names in both. */
const char *report_requests_from(const struct report_scope *scope, const char *view);

/* SQL condition selecting rows of the scope, for a table whose columns
 * are named pid, tid and whose interval is [start_col, end_col) (end_col
 * may equal start_col for instants). Uses the parameters bound by
 * report_scope_bind: :from, :to, :capture_start, :capture_end, :pid, :tid,
 * :comm. Writes into buf. */
const char *report_scope_sql(char *buf, size_t len, const char *pid_col,
			     const char *tid_col, const char *start_col, const char *end_col);

/* Binds :from, :to, :capture_start, :capture_end, :pid, :tid, :comm of st
 * (those it uses). */
void report_scope_bind(sqlite3_stmt *st, const struct report_scope *scope);

/* 1 if a table or view of that name exists. */
int report_has_object(sqlite3 *db, const char *name);

/* Whether system calls were paired in windows (format 1.14: rows in
 * syscall_windows): the view syscalls' weight then says what each
 * stands for, and a query that reads none can leave out its join. */
int report_syscall_windows(sqlite3 *db);

/* Whether the sched windows' gaps have their threads' run time, exact
 * (format 1.13: sched_tasks rows at both edges; sched_gap_runs). */
int report_sched_gap_runs(sqlite3 *db);

/* The time in [from, to) the sched source did not follow: its gaps
 * between windows (format 1.12, sched_gaps); 0 without them. */
uint64_t report_sched_gap_ns(sqlite3 *db, uint64_t from, uint64_t to);

#endif /* ANALYZE_QUERY_SCOPE_H */
