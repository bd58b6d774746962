/* pool.c - pool_utilisation, one process at a time (see pool.h). Per
 * window: the busy and the waiting areas are integrals of two step
 * functions (+1 at each pickup, -1 at each end; +1 at each readiness, -1
 * at each pickup), computed without sorting: a point x adds the part of
 * its window after x, and the whole width of every later window (counted
 * in a difference array); pickups and their queueing are counted in their
 * windows; only the most requests waiting at once needs times in order:
 * the readiness and the pickup times, each sorted, merged. A sweep over
 * all the events sorted by (time, kind) computed the same sums with three
 * times the sorting (a fifth of the request pass). */
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
	free(p->req);
	free(p->tids);
	*p = (struct pool){ 0 };
}

static int push(struct pool *p, const struct pool_request *r)
{
	if (p->nreq == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 4096;
		struct pool_request *req = realloc(p->req, cap * sizeof(*req));

		if (!req) {
			fprintf(stderr, "perfcap-analyze: out of memory\n");
			return -1;
		}
		p->req = req;
		p->cap = cap;
	}
	p->req[p->nreq++] = *r;
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
	if (p->nreq && pid != p->pid && pool_flush(p) < 0)
		return -1;
	if (!p->nreq) {
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
	return push(p, &(struct pool_request){ ready_ts, pickup_ts, end_ts, queue_ns,
					       has_queue != 0 });
}

/* The number of distinct pickup threads, or -1 when out of memory: the
 * list holds a thread each time it differs from the previous request's,
 * so nearly as many as the requests when workers take turns (2M
 * requests of a 20 s default recording of redis, 50 workers: qsort took
 * 0.15 s of its import); radix-sorted, a pass per varying byte. */
static int64_t count_workers(struct pool *p)
{
	int64_t n = 0;

	if (radix_sort_i64(p->tids, p->ntids, sizeof(*p->tids), 0) < 0)
		return -1;
	for (size_t i = 0; i < p->ntids; i++)
		if (i == 0 || p->tids[i] != p->tids[i - 1])
			n++;
	return n;
}

/* One window's sums. */
struct window_sums {
	int64_t start;
	int64_t busy_area, queue_area, depth_max;
	int64_t requests, queue_sum, queue_count;
};

/* The process's windows: width-wide on the grid from origin, the first at
 * or before t0, up to the one holding t1; a step's integral per window is
 * its part of one window (part[]) plus whole windows from a window on
 * (later[], a difference array). */
struct grid {
	int64_t first, width, n;
	struct window_sums *sums;
	int64_t *part[2], *later[2];   /* [0]: busy, [1]: waiting */
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

/* The number of windows (0 when there are too many, with a warning). */
static int64_t count_windows(const struct pool *p, struct grid *g)
{
	int64_t w = p->win.width;

	g->width = w;
	g->first = p->t0 - (((p->t0 - p->win.origin) % w) + w) % w;
	g->n = (p->t1 - g->first) / w + 1;
	if (g->n > POOL_MAX_WINDOWS) {
		fprintf(stderr, "perfcap-analyze: warning: process %lld: requests span %lld"
			" windows; pool_utilisation left out for it\n",
			(long long)p->pid, (long long)g->n);
		return 0;
	}
	return g->n;
}

static int grid_alloc(struct grid *g)
{
	g->sums = calloc((size_t)g->n, sizeof(*g->sums));
	for (int a = 0; a < 2; a++) {
		g->part[a] = calloc((size_t)g->n, sizeof(int64_t));
		g->later[a] = calloc((size_t)g->n + 1, sizeof(int64_t));
	}
	return g->sums && g->part[0] && g->part[1] && g->later[0] && g->later[1] ? 0 : -1;
}

static void grid_free(struct grid *g)
{
	free(g->sums);
	for (int a = 0; a < 2; a++) {
		free(g->part[a]);
		free(g->later[a]);
	}
}

static int64_t window_of(const struct grid *g, int64_t ts)
{
	return (ts - g->first) / g->width;
}

/* sign x a step of 1 from x on, into area a: the rest of x's window, and
 * every later window whole. */
static void add_step(struct grid *g, int a, int64_t x, int64_t sign)
{
	int64_t k = window_of(g, x);

	g->part[a][k] += sign * (g->first + (k + 1) * g->width - x);
	g->later[a][k + 1] += sign;
}

/* The areas, the pickups and their queueing, per window. */
static void add_areas(struct pool *p, struct grid *g)
{
	for (size_t i = 0; i < p->nreq; i++) {
		const struct pool_request *r = &p->req[i];
		struct window_sums *s = &g->sums[window_of(g, r->pickup)];

		add_step(g, 0, r->pickup, 1);
		add_step(g, 0, r->end, -1);
		add_step(g, 1, r->ready, 1);
		add_step(g, 1, r->pickup, -1);
		s->requests++;
		if (r->has_queue) {
			s->queue_sum += r->queue_ns;
			s->queue_count++;
		}
	}
	for (int64_t k = 0, busy = 0, waiting = 0; k < g->n; k++) {
		busy += g->later[0][k];
		waiting += g->later[1][k];
		g->sums[k].start = g->first + k * g->width;
		g->sums[k].busy_area = g->part[0][k] + busy * g->width;
		g->sums[k].queue_area = g->part[1][k] + waiting * g->width;
	}
}

/* The readiness or (pickups) the pickup times, sorted; NULL if out of
 * memory. */
static int64_t *sorted_times(const struct pool *p, int pickups)
{
	int64_t *t = malloc((p->nreq ? p->nreq : 1) * sizeof(*t));

	if (!t)
		return NULL;
	for (size_t i = 0; i < p->nreq; i++)
		t[i] = pickups ? p->req[i].pickup : p->req[i].ready;
	if (radix_sort_i64(t, p->nreq, sizeof(*t), 0) < 0) {
		free(t);
		return NULL;
	}
	return t;
}

/* The most requests waiting at once in each window: the count at its
 * start and after each change inside it; at one time pickups come before
 * readiness (a request picked up at the instant another became ready is
 * not counted twice). 0 or -1. */
static int add_depth_max(struct pool *p, struct grid *g)
{
	int64_t *ready = sorted_times(p, 0), *pickup = sorted_times(p, 1);
	int64_t depth = 0, k = 0;
	size_t i = 0, j = 0;

	if (!ready || !pickup) {
		free(ready);
		free(pickup);
		return -1;
	}
	while (i < p->nreq || j < p->nreq) {
		int is_pickup = j < p->nreq && (i == p->nreq || pickup[j] <= ready[i]);
		int64_t ts = is_pickup ? pickup[j++] : ready[i++];

		for (; k + 1 < g->n && ts >= g->sums[k + 1].start; k++)
			g->sums[k + 1].depth_max = depth;
		depth += is_pickup ? -1 : 1;
		if (depth > g->sums[k].depth_max)
			g->sums[k].depth_max = depth;
	}
	for (; k + 1 < g->n; k++)
		g->sums[k + 1].depth_max = depth;
	free(ready);
	free(pickup);
	return 0;
}

static int write_windows(struct pool *p, struct grid *g, int64_t workers)
{
	int rc;

	add_areas(p, g);
	rc = add_depth_max(p, g);
	if (rc < 0)
		fprintf(stderr, "perfcap-analyze: out of memory\n");
	for (int64_t k = 0; rc == 0 && k < g->n; k++)
		rc = write_window(p, &g->sums[k], workers);
	return rc;
}

int pool_flush(struct pool *p)
{
	struct grid g = { 0 };
	int64_t workers;
	int rc = 0;

	if (!p->nreq)
		return 0;
	workers = count_workers(p);
	if (workers < 0) {
		fprintf(stderr, "perfcap-analyze: out of memory\n");
		rc = -1;
	} else if (count_windows(p, &g) > 0) {
		if (grid_alloc(&g) < 0) {
			fprintf(stderr, "perfcap-analyze: out of memory\n");
			rc = -1;
		} else {
			rc = write_windows(p, &g, workers);
		}
	}
	grid_free(&g);
	p->nreq = 0;
	p->ntids = 0;
	return rc;
}
