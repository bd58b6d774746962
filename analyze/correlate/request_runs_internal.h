/* request_runs_internal.h - the request feed's sorted runs on disk
 * (request_feed.c): when a capture has more socket calls than the feed
 * keeps in memory, each full buffer is sorted in the pass's order and
 * appended to one unlinked temporary file (in TMPDIR, else /tmp) as a
 * run, and at the end the runs are merged, a small buffer of each in
 * memory at a time. Private to correlate/. */
#ifndef ANALYZE_REQUEST_RUNS_INTERNAL_H
#define ANALYZE_REQUEST_RUNS_INTERNAL_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "request_feed.h"

/* The pass's order of calls: (pid, fd, ts, ord, seq), total. */
int request_call_cmp(const struct request_call *x, const struct request_call *y);

/* Sorts one stream's calls (one pid and fd) by (ts, ord, seq) unless
 * they already are: stably by time, then each run of one time
 * (request_feed.c). 0 or -1 (out of memory). */
int request_order_stream(struct request_call *v, size_t n);

#define RUN_BUFFER_CALLS 1024     /* read from a run at a time (48 KiB) */

struct request_run {
	off_t next, end;          /* bytes of the file not read yet */
	struct request_call *buf; /* RUN_BUFFER_CALLS, while merging */
	size_t len, pos;          /* calls in buf, the head's index */
};

struct request_runs {
	FILE *file;               /* every run, one after another */
	off_t size;
	struct request_run *v;
	size_t n, cap;
	struct request_call *sorted;  /* the run in order, while it is written */
};

/* Sorts v[0..n) in the pass's order and appends it as a new run. 0 or -1
 * (reported). */
int request_runs_write(struct request_runs *R, struct request_call *v, size_t n);

/* Readies every run for the merge. 0 or -1 (reported). */
int request_runs_start(struct request_runs *R);

/* The smallest head of all runs into *out: 1, 0 when every run is done,
 * -1 on a read error (reported). */
int request_runs_next(struct request_runs *R, struct request_call *out);

void request_runs_free(struct request_runs *R);

#endif /* ANALYZE_REQUEST_RUNS_INTERNAL_H */
