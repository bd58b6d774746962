/* pool.h - thread-pool utilisation per window (the pool_utilisation
 * table), computed per process from its requests' readiness, pickup and
 * end (requests.c feeds it one process at a time). docs/schema.md,
 * pool_utilisation. */
#ifndef ANALYZE_POOL_H
#define ANALYZE_POOL_H

#include <stdint.h>
#include <sqlite3.h>

#include "pool_times.h"
#include "util/hashmap.h"

/* How windows are cut: width, the origin they are aligned to (the
 * capture's start), and the capture's start and end when known (a window
 * that sticks out of the capture is averaged over its inside only). */
struct pool_windows {
	int64_t width;
	int64_t origin;
	int64_t cap_start, cap_end;
	int has_cap_start, has_cap_end;
	/* Time no request was followed in (the req source's windows, format
	 * 1.10: each second's part after its window): left out of the
	 * averages, in time order, not overlapping; NULL: none. */
	const struct pool_gap *gaps;
	size_t ngaps;
};

struct pool_gap {
	int64_t start, end;
};

/* One window's sums, kept while its process's requests come (pool.c). */
struct pool_window {
	int64_t part[2];           /* [0] busy, [1] waiting: steps' parts in it */
	int64_t next[2];           /* steps counted whole from the next window on */
	int64_t requests, queue_sum, queue_count, depth_max;
};

struct sql_writer;

/* The process being collected is summed per window as its requests come
 * (no request is kept but for its readiness and pickup times, 16 bytes,
 * which the deepest queue needs in order). */
struct pool {
	sqlite3 *db;
	sqlite3_stmt *insert;
	struct sql_writer *writer; /* runs other batches on db: drained before a write */
	struct pool_windows win;
	int64_t pid;
	size_t nreq;
	int64_t t0, t1;
	struct pool_window *w;     /* windows k0 .. k0 + nw - 1 (k: widths from origin) */
	int64_t k0;
	size_t nw, wcap;
	int too_many;              /* more than POOL_MAX_WINDOWS: left out */
	struct pool_times times;   /* every request's readiness and pickup */
	struct hmap workers;       /* the distinct pickup threads */
	int64_t last_tid;
	int64_t last_k, last_start; /* the last window looked up, and its start */
	int has_last;
	int failed;
};

/* 0 or -1 (reported). writer (or NULL): the INSERT thread other batches
 * of db use, drained before each write of the pool's own. */
int pool_init(struct pool *p, sqlite3 *db, struct sql_writer *writer);
void pool_free(struct pool *p);

/* One request of process pid, which must not precede the previous
 * request's process (requests arrive grouped by process). ready_ts is
 * already min(readiness or pickup, pickup). has_queue: queue_ns is known. */
int pool_add(struct pool *p, int64_t pid, int64_t tid, int64_t ready_ts, int64_t pickup_ts,
	     int64_t end_ts, int has_queue, int64_t queue_ns);

/* Writes the windows of the process being collected. 0 or -1. */
int pool_flush(struct pool *p);

#endif /* ANALYZE_POOL_H */
