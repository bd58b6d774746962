/* slow_path.h - where the time of the slowest requests went: the serving
 * thread's states between each slow request's start and end (running,
 * runnable, blocked per wait class, and who ended the blocked waits), so
 * "why are the slow requests slow" has an answer with numbers. The slow
 * requests are the slowest tenth of the scope's request_spans by service
 * time (at least one). Overlapping requests of an event loop each count
 * the loop thread's states during their own span. */
#ifndef ANALYZE_SLOW_PATH_H
#define ANALYZE_SLOW_PATH_H

#include <stdint.h>
#include <sqlite3.h>

#include "scope.h"

#define SLOW_PATH_CLASSES 11   /* wait_class codes (docs/schema.md wait_classes) */

enum slow_waker { SW_THREAD, SW_PROCESS, SW_INTERRUPT, SW_NONE, SW_N };

struct slow_path {
	uint64_t requests;         /* the slow requests */
	uint64_t all;              /* requests in scope */
	int64_t threshold_ns;      /* the fastest slow request's service time */
	uint64_t span_ns;          /* their service time, summed */
	uint64_t running, runnable, blocked;
	uint64_t by_class[SLOW_PATH_CLASSES];   /* blocked time per wait_class_code */
	uint64_t woken_by[SW_N];   /* blocked time by what ended it */
	uint64_t covered;          /* running + runnable + blocked */
	char class_names[SLOW_PATH_CLASSES][16]; /* the database's wait_classes */
};

/* A request of the scope as the caller read it already: its serving
 * thread (CAST(tids AS INTEGER)), span, (pid, fd) as pid << 32 | fd +
 * 2^31, rowid, and service time (service_set: not NULL). */
struct slow_candidate {
	int64_t tid, start, end;
	uint64_t conn;
	int64_t row;
	int64_t service;
	int64_t service_set;
};

/* At most this many slow requests (memory: the walk keeps each). */
#define SLOW_PATH_MAX 200000

/* How many of all requests are the slow ones (a tenth, at least one, at
 * most SLOW_PATH_MAX), and the 0-based position, in the ascending order of
 * every request's service time (a NULL read as 0), of the value that
 * bounds them: the caller's floor_ns below. */
size_t slow_path_count(uint64_t all);
uint64_t slow_path_floor_pos(uint64_t all);

/* The slow requests' order: service time descending, then start, (pid,
 * fd) and rowid. < 0 when a comes first. A caller that keeps only the
 * first SLOW_PATH_MAX of its requests in this order (with a service
 * time) gives slow_path_load every candidate it would pick. */
int slow_candidate_order(const struct slow_candidate *a, const struct slow_candidate *b);

/* Fills out from the scope's requests, whose service times the caller
 * read already: n of them (0: none), floor_ns the value at
 * slow_path_floor_pos(n) of their ascending service times. It bounds the
 * slowest tenth, so that only the requests at or above it are read
 * again; or, when the caller has the candidates as cands (ncands of
 * them, any order: every request, or the first SLOW_PATH_MAX in
 * slow_candidate_order), they are picked from those without reading the
 * table again. 0 or -1 (reported). */
int slow_path_load(sqlite3 *db, const struct report_scope *scope, uint64_t n,
		   int64_t floor_ns, const struct slow_candidate *cands, size_t ncands,
		   struct slow_path *out);

/* slow_path_load in steps, for a caller that reads thread_state_rows for
 * other ends too, in one pass instead of two: slow_path_begin picks the
 * slow requests (*walk NULL when there are none: out is complete);
 * slow_path_add_state adds one row (any row: one of another thread or
 * outside their spans adds nothing); slow_path_walk reads the rows of
 * their time range itself; slow_path_end frees the walk (NULL is
 * accepted). A row is read with SLOW_PATH_STATE_COLUMNS from column col
 * by slow_path_state_of. */
struct slow_walk;

struct slow_state_row {
	int64_t tid, start, duration, state, cls;
	int has_waker;
	int64_t waker_tid, waker_pid, pid;
};

#define SLOW_PATH_STATE_COLUMNS "tid, start_ts, duration, state_code, wait_class_code," \
				" waker_tid, waker_pid, pid"

int slow_path_begin(sqlite3 *db, const struct report_scope *scope, uint64_t n,
		    int64_t floor_ns, const struct slow_candidate *cands, size_t ncands,
		    struct slow_path *out, struct slow_walk **walk);
void slow_path_state_of(sqlite3_stmt *st, int col, struct slow_state_row *row);
void slow_path_add_state(struct slow_walk *w, const struct slow_state_row *row);
int slow_path_walk(struct slow_walk *w, sqlite3 *db);
void slow_path_end(struct slow_walk *w);

/* "block_io", "futex" ... for a wait_class_code (the database's own
 * wait_classes table); "other" if unknown. */
const char *slow_path_class_name(const struct slow_path *s, int code);

#endif /* ANALYZE_SLOW_PATH_H */
