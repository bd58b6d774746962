/* pool.c - pool_utilisation, one process at a time (see pool.h). Per
 * window: the busy and the waiting areas are integrals of two step
 * functions (+1 at each pickup, -1 at each end; +1 at each readiness, -1
 * at each pickup), computed without sorting: a point x adds the part of
 * its window after x, and the whole width of every later window (counted
 * in a difference array); pickups and their queueing are counted in their
 * windows. All of it is summed as the requests come, into windows
 * numbered from the capture's start (a window before the first one seen
 * is added in front), so a request leaves only its readiness and pickup
 * times behind: the most requests waiting at once needs them in order,
 * each sorted, merged (pool_times.h: past 4M requests of a process they
 * go to disk in sorted runs, so memory stays bounded). (Keeping every request, 40 bytes, and its thread,
 * 8, until the process ended cost a default recording of redis with 2M
 * requests 0.35 s of page faults alone.) A sweep over all the events
 * sorted by (time, kind) computed the same sums with three times the
 * sorting (a fifth of the request pass). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "db/sql_writer.h"
#include "pool.h"
#include "util/sorted_search.h"

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
	hmap_init(&p->workers);
	pool_times_init(&p->times);
	load_windows(db, &p->win);
	p->insert = db_prepare(db, insert_sql);
	return p->insert ? 0 : -1;
}

void pool_free(struct pool *p)
{
	sqlite3_finalize(p->insert);
	free(p->w);
	pool_times_free(&p->times);
	hmap_free(&p->workers);
	*p = (struct pool){ 0 };
}

static int oom(struct pool *p)
{
	fprintf(stderr, "perfcap-analyze: out of memory\n");
	p->failed = 1;
	return -1;
}

static int64_t window_start(const struct pool *p, int64_t k)
{
	return p->win.origin + k * p->win.width;
}

/* The window holding ts: widths from the origin, rounded down. A
 * request's times and the next request's fall mostly in the window asked
 * last, which is then the answer without a division (five a request,
 * about a tenth of the pass's time before). */
static int64_t window_index(struct pool *p, int64_t ts)
{
	int64_t d = ts - p->win.origin, w = p->win.width;

	if (p->has_last && ts >= p->last_start && ts - p->last_start < w)
		return p->last_k;
	p->last_k = d / w - (d % w < 0);
	p->last_start = window_start(p, p->last_k);
	p->has_last = 1;
	return p->last_k;
}

/* Room for wcap >= need windows. 0 or -1. */
static int reserve_windows(struct pool *p, size_t need)
{
	size_t cap = p->wcap ? p->wcap : 64;
	struct pool_window *w;

	if (need <= p->wcap)
		return 0;
	while (cap < need)
		cap *= 2;
	w = realloc(p->w, cap * sizeof(*w));
	if (!w)
		return -1;
	p->w = w;
	p->wcap = cap;
	return 0;
}

/* Makes the windows lo .. hi (lo <= k0, k0 + nw - 1 <= hi) exist, new ones
 * zero; past POOL_MAX_WINDOWS the process is left out (too_many). 0 or -1. */
static int span_windows(struct pool *p, int64_t lo, int64_t hi)
{
	uint64_t n = (uint64_t)hi - (uint64_t)lo + 1;
	size_t front = p->nw ? (size_t)((uint64_t)p->k0 - (uint64_t)lo) : 0;

	if (n > POOL_MAX_WINDOWS) {
		p->too_many = 1;
		p->nw = 0;
		return 0;
	}
	if (reserve_windows(p, (size_t)n) < 0)
		return oom(p);
	memmove(p->w + front, p->w, p->nw * sizeof(*p->w));
	memset(p->w, 0, front * sizeof(*p->w));
	memset(p->w + front + p->nw, 0, ((size_t)n - front - p->nw) * sizeof(*p->w));
	p->k0 = lo;
	p->nw = (size_t)n;
	return 0;
}

/* Window k, made if needed; NULL when the process is left out or out of
 * memory (p->failed). */
static struct pool_window *window_at(struct pool *p, int64_t k)
{
	int64_t last = p->k0 + (int64_t)p->nw - 1;
	int rc = 0;

	if (p->too_many)
		return NULL;
	if (!p->nw)
		rc = span_windows(p, k, k);
	else if (k < p->k0 || k > last)
		rc = span_windows(p, k < p->k0 ? k : p->k0, k > last ? k : last);
	return rc < 0 || p->too_many ? NULL : &p->w[k - p->k0];
}

/* sign x a step of 1 from x on, into area a: the rest of x's window, and
 * every later window whole. */
static void add_step(struct pool *p, int a, int64_t x, int64_t sign)
{
	int64_t k = window_index(p, x);
	struct pool_window *w = window_at(p, k);

	if (!w)
		return;
	w->part[a] += sign * (window_start(p, k + 1) - x);
	w->next[a] += sign;
}

/* Pickup threads repeat: only a thread other than the last is looked up. */
static int add_worker(struct pool *p, int64_t tid)
{
	if (p->nreq > 1 && tid == p->last_tid)
		return 0;
	p->last_tid = tid;
	return hmap_upsert(&p->workers, (uint64_t)tid, 0, 0, NULL) ? 0 : oom(p);
}

int pool_add(struct pool *p, int64_t pid, int64_t tid, int64_t ready_ts, int64_t pickup_ts,
	     int64_t end_ts, int has_queue, int64_t queue_ns)
{
	struct pool_window *w;

	if (p->nreq && pid != p->pid && pool_flush(p) < 0)
		return -1;
	if (!p->nreq) {
		p->pid = pid;
		p->t0 = ready_ts;
		p->t1 = end_ts;
	}
	p->nreq++;
	if (ready_ts < p->t0)
		p->t0 = ready_ts;
	if (end_ts > p->t1)
		p->t1 = end_ts;
	if (add_worker(p, tid) < 0 || pool_times_add(&p->times, ready_ts, pickup_ts) < 0)
		return -1;
	add_step(p, 0, pickup_ts, 1);
	add_step(p, 0, end_ts, -1);
	add_step(p, 1, ready_ts, 1);
	add_step(p, 1, pickup_ts, -1);
	w = window_at(p, window_index(p, pickup_ts));
	if (w) {
		w->requests++;
		if (has_queue) {
			w->queue_sum += queue_ns;
			w->queue_count++;
		}
	}
	return p->failed ? -1 : 0;
}

/* The time of gaps inside [lo, hi). */
static int64_t gap_time(const struct pool_windows *w, int64_t lo, int64_t hi)
{
	/* the first gap ending after lo */
	size_t a = sorted_first_above(w->gaps, w->ngaps, sizeof(*w->gaps),
				      offsetof(struct pool_gap, end), lo);
	int64_t t = 0;

	for (; a < w->ngaps && w->gaps[a].start < hi; a++) {
		int64_t s = w->gaps[a].start > lo ? w->gaps[a].start : lo;
		int64_t e = w->gaps[a].end < hi ? w->gaps[a].end : hi;

		t += e > s ? e - s : 0;
	}
	return t;
}

/* What a window's sums are averaged over: its time inside the capture,
 * less the gaps (no request followed then). */
static int64_t window_divisor(const struct pool_windows *w, int64_t start)
{
	int64_t end = start + w->width;
	int64_t hi = w->has_cap_end && w->cap_end < end ? w->cap_end : end;
	int64_t lo = w->has_cap_start && w->cap_start > start ? w->cap_start : start;
	int64_t d = hi - lo > 0 ? hi - lo : w->width;

	if (w->ngaps && hi > lo)
		d -= gap_time(w, lo, hi);
	return d > 0 ? d : 1;
}

/* One window's row; busy and waiting: the steps counted whole in it. */
static int write_window(struct pool *p, size_t at, int64_t busy, int64_t waiting,
			int64_t workers)
{
	const struct pool_window *s = &p->w[at];
	int64_t start = window_start(p, p->k0 + (int64_t)at), width = p->win.width;
	sqlite3_stmt *st = p->insert;
	int64_t v[] = { p->pid, start, start + width, workers, s->requests,
			s->part[0] + busy * width, window_divisor(&p->win, start),
			s->part[1] + waiting * width, s->depth_max, s->queue_sum, s->queue_count };

	if (p->writer)
		sql_writer_drain(p->writer);
	for (int i = 0; i < (int)(sizeof(v) / sizeof(v[0])); i++)
		sqlite3_bind_int64(st, i + 1, v[i]);
	return db_run(st);
}

/* The number of windows, with a warning when there are too many (the
 * process is then left out). */
static int too_many_windows(const struct pool *p)
{
	int64_t w = p->win.width;
	int64_t first = p->t0 - (((p->t0 - p->win.origin) % w) + w) % w;
	int64_t n = (p->t1 - first) / w + 1;

	if (!p->too_many && n <= POOL_MAX_WINDOWS)
		return 0;
	fprintf(stderr, "perfcap-analyze: warning: process %lld: requests span %lld"
		" windows; pool_utilisation left out for it\n",
		(long long)p->pid, (long long)n);
	return 1;
}

/* The most requests waiting at once in each window: the count at its
 * start and after each change inside it; at one time pickups come before
 * readiness (a request picked up at the instant another became ready is
 * not counted twice). 0 or -1. */
static int add_depth_max(struct pool *p)
{
	struct pool_times_read r[2];
	int64_t depth = 0, ready = 0, pickup = 0;
	int has_ready, has_pickup, rc = -1;
	size_t k = 0;

	if (pool_times_start(&p->times, r) < 0 ||
	    (has_ready = pool_times_next(&r[0], &ready)) < 0 ||
	    (has_pickup = pool_times_next(&r[1], &pickup)) < 0)
		goto out;
	while (has_ready || has_pickup) {
		int is_pickup = has_pickup && (!has_ready || pickup <= ready);
		int64_t ts = is_pickup ? pickup : ready;

		for (; k + 1 < p->nw && ts >= window_start(p, p->k0 + (int64_t)k + 1); k++)
			p->w[k + 1].depth_max = depth;
		depth += is_pickup ? -1 : 1;
		if (depth > p->w[k].depth_max)
			p->w[k].depth_max = depth;
		if (is_pickup)
			has_pickup = pool_times_next(&r[1], &pickup);
		else
			has_ready = pool_times_next(&r[0], &ready);
		if (has_pickup < 0 || has_ready < 0)
			goto out;
	}
	for (; k + 1 < p->nw; k++)
		p->w[k + 1].depth_max = depth;
	rc = 0;
out:
	pool_times_read_end(r);
	if (rc < 0)
		p->failed = 1;
	return rc;
}

static int write_windows(struct pool *p)
{
	int64_t busy = 0, waiting = 0, workers = (int64_t)p->workers.len;
	int rc = add_depth_max(p);

	for (size_t k = 0; rc == 0 && k < p->nw; k++) {
		rc = write_window(p, k, busy, waiting, workers);
		busy += p->w[k].next[0];
		waiting += p->w[k].next[1];
	}
	return rc;
}

int pool_flush(struct pool *p)
{
	int rc = 0;

	if (!p->nreq)
		return 0;
	if (p->failed)
		rc = -1;
	else if (!too_many_windows(p))
		rc = write_windows(p);
	p->nreq = 0;
	p->nw = 0;
	pool_times_reset(&p->times);
	p->too_many = 0;
	hmap_free(&p->workers);
	hmap_init(&p->workers);
	return rc;
}
