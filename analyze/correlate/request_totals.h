/* request_totals.h - per process, the sums the diagnosis' pool rule takes
 * from the requests that have a readiness (queue_ns set), kept while the
 * request passes write the rows (requests.c, kernel_requests.c) and
 * written once as the tables request_totals and request_workers
 * (docs/schema.md). A report over the whole capture then reads a row per
 * process instead of scanning every request (1.3 s of the report of a
 * 40 s redis recording, 3.2M requests).
 *
 * They hold what that scan gives: per process the requests with a
 * readiness, their queue and service time, how many were ready on arrival
 * (ready_source 'data_ready'), and each pickup thread's first request
 * (start, fd, and its place in the table's write order, which orders as
 * the rowid does). The earliest and latest readiness say which scopes the
 * sums cover: the rule uses them only when the scope's window holds every
 * readiness and no filter is given. Each row also says how many rows
 * requests had when they were summed, so that sums that do not describe
 * the table (rows added since, a database built by hand) are not used. */
#ifndef ANALYZE_REQUEST_TOTALS_H
#define ANALYZE_REQUEST_TOTALS_H

#include <stdint.h>
#include <sqlite3.h>

#include "util/hashmap.h"

struct request_total {
	int64_t pid;
	int64_t queued, queue_ns, service_ns, services, on_arrival;
	int64_t min_ready, max_ready;
	int64_t requests_rows;      /* set when written: t->seq */
};

struct request_worker {
	int64_t pid, tid, start, fd, seq;
};

struct request_totals {
	struct request_total *p;    /* by first sight */
	size_t np, pcap;
	struct hmap pids;           /* pid -> index in p */
	struct request_worker *w;
	size_t nw, wcap;
	struct hmap workers;        /* (pid, tid) -> index in w */
	size_t last_p, last_w;      /* the last row's, looked up again only when */
	int has_last;               /* its process or thread changes (p, w + 1) */
	int64_t seq;                /* rows written so far, both passes */
	int failed;
};

void request_totals_init(struct request_totals *t);
void request_totals_free(struct request_totals *t);

/* One row written to requests, in write order (every row: seq counts
 * them all). has_ready: ready_ts and queue_ns are set. 0 or -1. */
int request_totals_add(struct request_totals *t, int64_t pid, int64_t fd, int64_t pickup_tid,
		       int64_t start, int64_t service_ns, int has_ready, int64_t ready,
		       int64_t queue_ns, int on_arrival);

/* Writes both tables (created by the schema). 0 or -1 (reported). */
int request_totals_write(sqlite3 *db, struct request_totals *t);

#endif /* ANALYZE_REQUEST_TOTALS_H */
