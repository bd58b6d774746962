/* pool.c - pool_utilisation, one process at a time (see pool.h): the
 * process's requests become events (ready: queue + 1, pickup: busy + 1 and
 * queue - 1, end: busy - 1) plus one edge per window; sorted by time, one
 * sweep keeps the running counts, and between an event and the next they
 * hold, so a window's areas are sums of count x gap over its events (its
 * edge carries the counts from before it). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "db/db.h"
#include "db/sql_writer.h"
#include "pool.h"
#include "util/radix_sort.h"

/* Windows per process at most: a damaged capture whose requests span
 * years must not fill the disk with empty windows. */
#define POOL_MAX_WINDOWS 1000000

/* The averages are computed by SQLite from the sums so that they round
 * exactly as the schema's documented expressions do. */
static const char insert_sql[] =
	"INSERT INTO pool_utilisation VALUES (?1, ?2, ?3, ?4, ?5,"
	" round(1.0 * ?6 / ?7, 6), round(1.0 * ?6 / ?7 / ?4, 6), round(1.0 * ?8 / ?7, 6),"
	" ?9, CASE WHEN ?11 > 0 THEN CAST(1.0 * ?10 / ?11 AS INTEGER) END)";

static void load_windows(sqlite3 *db, struct pool_windows *w)
{
	w->width = db_query_int(db, "SELECT CAST(value AS INTEGER) FROM schema_info"
				" WHERE key = 'window_ns' AND CAST(value AS INTEGER) > 0",
				1000000000);
	w->has_cap_start = db_query_int(db, "SELECT count(*) FROM meta"
					" WHERE key = 'record.start_ns'", 0) > 0;
	w->cap_start = db_query_int(db, "SELECT CAST(value AS INTEGER) FROM meta"
				    " WHERE key = 'record.start_ns'", 0);
	w->origin = w->has_cap_start ? w->cap_start : 0;
	w->has_cap_end = db_query_int(db, "SELECT count(*) FROM stats"
				      " WHERE key = 'record.end_ns'", 0) > 0;
	w->cap_end = db_query_int(db, "SELECT CAST(value AS INTEGER) FROM stats"
				  " WHERE key = 'record.end_ns' ORDER BY chunk = 'stats' DESC"
				  " LIMIT 1", 0);
}

int pool_init(struct pool *p, sqlite3 *db, struct sql_writer *writer)
{
	*p = (struct pool){ .db = db, .writer = writer };
	load_windows(db, &p->win);
	p->insert = db_prepare(db, insert_sql);
	return p->insert ? 0 : -1;
}

void pool_free(struct pool *p)
{
	sqlite3_finalize(p->insert);
	free(p->ev);
	free(p->tids);
	*p = (struct pool){ 0 };
}

static int push(struct pool *p, int64_t ts, int kind, int has_queue, int64_t queue_ns)
{
	if (p->nev == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 4096;
		struct pool_event *ev = realloc(p->ev, cap * sizeof(*ev));

		if (!ev) {
			fprintf(stderr, "perfcap-analyze: out of memory\n");
			return -1;
		}
		p->ev = ev;
		p->cap = cap;
	}
	p->ev[p->nev++] = (struct pool_event){ ts, kind, has_queue, queue_ns };
	return 0;
}

static int push_tid(struct pool *p, int64_t tid)
{
	if (p->ntids == p->tids_cap) {
		size_t cap = p->tids_cap ? p->tids_cap * 2 : 64;
		int64_t *t = realloc(p->tids, cap * sizeof(*t));

		if (!t) {
			fprintf(stderr, "perfcap-analyze: out of memory\n");
			return -1;
		}
		p->tids = t;
		p->tids_cap = cap;
	}
	p->tids[p->ntids++] = tid;
	return 0;
}

int pool_add(struct pool *p, int64_t pid, int64_t tid, int64_t ready_ts, int64_t pickup_ts,
	     int64_t end_ts, int has_queue, int64_t queue_ns)
{
	if (p->nev && pid != p->pid && pool_flush(p) < 0)
		return -1;
	if (!p->nev) {
		p->pid = pid;
		p->t0 = ready_ts;
		p->t1 = end_ts;
	}
	if (ready_ts < p->t0)
		p->t0 = ready_ts;
	if (end_ts > p->t1)
		p->t1 = end_ts;
	/* only a new thread is kept: pickups repeat their threads */
	if ((!p->ntids || p->tids[p->ntids - 1] != tid) && push_tid(p, tid) < 0)
		return -1;
	if (push(p, ready_ts, POOL_READY, 0, 0) < 0 ||
	    push(p, pickup_ts, POOL_PICKUP, has_queue, queue_ns) < 0 ||
	    push(p, end_ts, POOL_END, 0, 0) < 0)
		return -1;
	return 0;
}

/* The events in (ts, kind) order: a radix sort by time, then each run of
 * equal times (short) by kind. Events equal in both may come in any
 * order: between them the gap is zero and their changes of the counts
 * all go the same way. */
static int sort_events(struct pool *p)
{
	if (radix_sort_i64(p->ev, p->nev, sizeof(*p->ev), offsetof(struct pool_event, ts)) < 0) {
		fprintf(stderr, "perfcap-analyze: out of memory\n");
		return -1;
	}
	for (size_t i = 1; i < p->nev; i++) {
		struct pool_event e = p->ev[i];
		size_t j = i;

		while (j > 0 && p->ev[j - 1].ts == e.ts && p->ev[j - 1].kind > e.kind) {
			p->ev[j] = p->ev[j - 1];
			j--;
		}
		p->ev[j] = e;
	}
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static size_t count_workers(struct pool *p)
{
	size_t n = 0;

	qsort(p->tids, p->ntids, sizeof(*p->tids), cmp_i64);
	for (size_t i = 0; i < p->ntids; i++)
		if (i == 0 || p->tids[i] != p->tids[i - 1])
			n++;
	return n;
}

/* One window's sums while the sweep is inside it. */
struct window_sums {
	int64_t start;
	int64_t busy_area, queue_area, depth_max;
	int64_t requests, queue_sum, queue_count;
};

static int64_t window_divisor(const struct pool_windows *w, int64_t start)
{
	int64_t end = start + w->width;
	int64_t hi = w->has_cap_end && w->cap_end < end ? w->cap_end : end;
	int64_t lo = w->has_cap_start && w->cap_start > start ? w->cap_start : start;

	return hi - lo > 0 ? hi - lo : w->width;
}

static int write_window(struct pool *p, const struct window_sums *s, int64_t workers)
{
	sqlite3_stmt *st = p->insert;
	int64_t v[] = { p->pid, s->start, s->start + p->win.width, workers, s->requests,
			s->busy_area, window_divisor(&p->win, s->start), s->queue_area,
			s->depth_max, s->queue_sum, s->queue_count };

	if (p->writer)
		sql_writer_drain(p->writer);
	for (int i = 0; i < (int)(sizeof(v) / sizeof(v[0])); i++)
		sqlite3_bind_int64(st, i + 1, v[i]);
	return db_run(st);
}

/* Adds the window edges: the first at or before t0 on the grid of
 * width-wide windows from origin, one per window up to t1, and the edge
 * that closes the last window. The number of windows, or -1. */
static int64_t add_edges(struct pool *p)
{
	int64_t w = p->win.width;
	int64_t first = p->t0 - (((p->t0 - p->win.origin) % w) + w) % w;
	int64_t nwin = (p->t1 - first) / w + 1;

	if (nwin > POOL_MAX_WINDOWS) {
		fprintf(stderr, "perfcap-analyze: warning: process %lld: requests span %lld"
			" windows; pool_utilisation left out for it\n",
			(long long)p->pid, (long long)nwin);
		return 0;
	}
	for (int64_t k = 0; k <= nwin; k++)
		if (push(p, first + k * w, POOL_EDGE, 0, 0) < 0)
			return -1;
	return nwin;
}

static int sweep(struct pool *p, int64_t nwin, int64_t workers)
{
	struct window_sums s = { 0 };
	int64_t busy = 0, depth = 0, win = 0;

	if (sort_events(p) < 0)
		return -1;
	for (size_t i = 0; i < p->nev; i++) {
		const struct pool_event *e = &p->ev[i];
		int64_t gap = (i + 1 < p->nev ? p->ev[i + 1].ts : e->ts) - e->ts;

		if (e->kind == POOL_EDGE) {
			if (win >= 1 && write_window(p, &s, workers) < 0)
				return -1;
			if (++win > nwin)
				break;
			s = (struct window_sums){ .start = e->ts, .depth_max = depth };
		}
		busy += e->kind == POOL_PICKUP ? 1 : e->kind == POOL_END ? -1 : 0;
		depth += e->kind == POOL_READY ? 1 : e->kind == POOL_PICKUP ? -1 : 0;
		s.busy_area += busy * gap;
		s.queue_area += depth * gap;
		if (depth > s.depth_max)
			s.depth_max = depth;
		if (e->kind == POOL_PICKUP) {
			s.requests++;
			if (e->has_queue) {
				s.queue_sum += e->queue_ns;
				s.queue_count++;
			}
		}
	}
	return 0;
}

int pool_flush(struct pool *p)
{
	int64_t nwin, workers;
	int rc = 0;

	if (!p->nev)
		return 0;
	workers = (int64_t)count_workers(p);
	nwin = add_edges(p);
	if (nwin < 0)
		rc = -1;
	else if (nwin > 0)
		rc = sweep(p, nwin, workers);
	p->nev = 0;
	p->ntids = 0;
	return rc;
}
