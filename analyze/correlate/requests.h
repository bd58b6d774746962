/* requests.h - request spans, their queueing and the thread pool's use per
 * window, computed once when a capture is imported and stored as tables
 * (requests, pool_utilisation); the views request_spans and
 * request_queueing are projections of requests. They used to be SQL
 * window functions evaluated on every read, which cost a report of a busy
 * server minutes; here one sorted pass over the socket calls does it.
 *
 * The rules, exactly those docs/schema.md states for the views:
 *  - a connection of a (pid, fd) starts at each sockets row (accept,
 *    connect or first sighting); a successful close(2) ends it, and calls
 *    after the close and before the next open belong to no connection;
 *  - on a live connection, a successful read that is the connection's
 *    first call or follows a write starts a request (its thread is the
 *    pickup thread); a request is kept when it has at least one write;
 *  - readiness: the last poll-family return (ret > 0) of the pickup thread
 *    at or before the pickup and at or after the lower bound (the
 *    connection's start for its first request, the previous request's end
 *    otherwise); else the first poll return of any thread of the process
 *    between the lower bound and the pickup; else the previous response
 *    or the accept; client (connected) connections have no readiness;
 *  - pool utilisation per window: busy workers and queue depth as areas
 *    over the window, client connections left out.
 *
 * Memory: every successful read, write and close on a descriptor (48
 * bytes) and every poll return (24 bytes) of the capture until the end
 * of the import (request_feed.h) and, while they are ordered, a copy of
 * the kept ones; the times of the poll returns of the processes that
 * have sockets twice (8 bytes each, poll_index.h), the live connections of
 * one (pid, fd) at a time, and the pool's 16 bytes per request of one
 * process (its readiness and pickup times). */
#ifndef ANALYZE_REQUESTS_H
#define ANALYZE_REQUESTS_H

#include <stdint.h>
#include <sqlite3.h>

#include "request_feed.h"

/* The table's columns in the order both builders (requests.c and
 * kernel_requests.c) fill them. */
struct request_totals;

#define REQUEST_COLUMNS \
	"requests (pid, fd, conn, cookie, origin, conn_ts, request, tids, pickup_tid," \
	" start_ts, first_write_ts, end_ts, service_ns, bytes_in, bytes_out, reads, writes," \
	" lower_ts, ready_ts, ready_source, queue_ns, sojourn_ns, window_ts)"
#define REQUEST_NCOLS 23

/* The processes requests_build wrote rows for: ascending, each once
 * (the kernel's records of these are then left out, --requests-from
 * auto). Freed with free(v). */
struct request_pids {
	int64_t *v;
	size_t n, cap;
};

/* Fills requests and pool_utilisation from the socket calls and poll
 * returns the decoder fed to f (every syscalls and sockets row, which
 * must be complete); the pool windows are schema_info's window_ns.
 * Consumes f's calls order and poll returns. Each row is also added to
 * totals (request_totals.h), and its process to pids. 0 or -1
 * (reported). */
int requests_build(sqlite3 *db, struct request_feed *f, struct request_totals *totals,
		   struct request_pids *pids);

#endif /* ANALYZE_REQUESTS_H */
