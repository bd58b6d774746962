/* report_requests.c - the dominant component of request time (book
 * 12.5): what the serving thread was doing during each request span of
 * request_spans (its first thread, from the first read to the last
 * write's return): running, runnable, or blocked in a wait class. One
 * pass over thread_state_rows of the serving threads; each state
 * interval adds its overlap with the requests of its thread (span_cover.h:
 * exact when an event loop's requests overlap). The part no state covers
 * is "unattributed", not zero.
 *
 * The spans are read in the same statement as every request's service
 * time (report_requests_preload), which the latency row needs: one scan of
 * the requests table instead of two (0.5-0.8 s each on 2M requests).
 *
 * Memory is bounded (report_requests_memory, 256 MiB): a 40 s redis
 * recording has 3.2M requests, an hour of it 290M, and the report held
 * 64 bytes of each. The service times are kept while they fit, else
 * rank_select.h reads them again for the percentiles; the spans are kept
 * while they fit, else read again sorted by thread and start and merged
 * with thread_state_rows sorted the same way (SQLite's sorter spills to
 * temporary files); of the slow path's candidates only the slowest
 * SLOW_PATH_MAX are kept (all it can pick). A capture that fits is read
 * once, as before. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "query/slow_path.h"
#include "util/fmt.h"
#include "util/grow.h"
#include "util/radix_sort.h"
#include "util/rank_select.h"
#include "util/sorted_search.h"
#include "util/span_cover.h"
#include "util/temp_file.h"
#include "util/time_gaps.h"
#include "report_sections.h"

enum { RC_RUNNING, RC_RUNNABLE, RC_BLOCK_IO, RC_FUTEX, RC_POLL, RC_SLEEP, RC_NET, RC_OTHER,
       RC_N };

static const char *const component_names[RC_N] = { "running", "runnable", "block_io wait",
	"futex wait", "poll wait", "sleep", "socket wait", "other wait" };

/* The spans and candidates read: the spans in cover while they fit
 * (max_spans), else none (merge: report_request_dominant reads them again,
 * sorted); rows: every row read. cands: the slow path's candidates
 * (add_candidate). */
struct request_read {
	struct span_cover *cover;
	size_t max_spans;
	int merge;
	uint64_t rows;
	struct slow_candidate *cands, floor;
	size_t ncands, cap_cands;
	int have_floor, floor_exact;
	struct time_gap *gaps;      /* the sched source's gaps (format 1.12), sorted */
	size_t ngaps;
	uint64_t gap_ns;            /* the spans' time in them: not followed by sched */
};

/* The statement of every read of the requests: those overlapping the
 * window (the latency section's) and those started in it (the spike
 * rule's), told apart by in_window; in storage order, or sorted by
 * serving thread and start (SQLite's sorter: bounded memory, temporary
 * files past it). */
static sqlite3_stmt *prepare_read(const struct report_context *ctx, int by_thread)
{
	char overlap[1024], started[1024], sql[3200];
	/* window_ts: a database imported before format 1.10 has none */
	int windows = report_has_object(ctx->db, "request_windows");

	snprintf(sql, sizeof(sql), "SELECT CAST(tids AS INTEGER), start_ts, end_ts, pid, fd, rowid,"
		 " service_ns, %s FROM %s WHERE (%s) OR (%s)%s", windows ? "window_ts" : "NULL",
		 report_requests_from(ctx->scope, "requests"),
		 report_scope_sql(overlap, sizeof(overlap), "pid", "CAST(tids AS INTEGER)",
				  "start_ts", "end_ts"),
		 report_scope_sql(started, sizeof(started), "pid", "CAST(tids AS INTEGER)",
				  "start_ts", "start_ts"),
		 by_thread ? " ORDER BY ifnull(CAST(tids AS INTEGER), 0), ifnull(start_ts, 0)" : "");
	return report_prepare(ctx, sql);
}

/* Whether the current row of st overlaps the scope's window (the SQL's
 * pid and thread conditions hold already). */
static int in_window(const struct report_context *ctx, sqlite3_stmt *st)
{
	int64_t from = (int64_t)ctx->scope->from;
	int64_t to = ctx->scope->to > INT64_MAX ? INT64_MAX : (int64_t)ctx->scope->to;

	return sqlite3_column_int64(st, 1) < to && sqlite3_column_int64(st, 2) > from;
}

/* Steps st to its end, calling row(arg, st) on each row in the window.
 * 0, or -1 (a database error, reported; or row's -1). */
static int each_row(const struct report_context *ctx, sqlite3_stmt *st,
		    int (*row)(void *arg, sqlite3_stmt *st), void *arg)
{
	int rc = SQLITE_ERROR;

	while (st && (rc = sqlite3_step(st)) == SQLITE_ROW)
		if (in_window(ctx, st) && row(arg, st) < 0) {
			sqlite3_finalize(st);
			return -1;
		}
	if (st && rc != SQLITE_DONE)
		db_report_error(ctx->db, "requests");
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

static void candidate_of(sqlite3_stmt *st, struct slow_candidate *c)
{
	c->tid = sqlite3_column_int64(st, 0);
	c->start = sqlite3_column_int64(st, 1);
	c->end = sqlite3_column_int64(st, 2);
	c->conn = (uint64_t)(uint32_t)sqlite3_column_int64(st, 3) << 32 |
		  ((uint32_t)sqlite3_column_int64(st, 4) ^ 0x80000000u);
	c->row = sqlite3_column_int64(st, 5);
	c->service = sqlite3_column_int64(st, 6);
	c->service_set = 1;
}

/* Whether a comes after b in slow_candidate_order: the service times
 * decide almost always, without the call. */
static int later(const struct slow_candidate *a, const struct slow_candidate *b)
{
	if (a->service != b->service)
		return a->service < b->service;
	return slow_candidate_order(a, b) > 0;
}

static int by_slowness(const void *a, const void *b)
{
	return slow_candidate_order(a, b);
}

/* The candidates cut to those at or above the SLOW_PATH_MAX-th largest
 * service time (ties kept; a radix sort of the service times finds it),
 * or, when ties keep more than 1.5 times as many, to the slowest
 * SLOW_PATH_MAX in full order (a sort of the candidates). 0 or -1. */
static int cut_candidates(struct request_read *r)
{
	int64_t *svc = malloc(r->ncands * sizeof(*svc));
	size_t m = 0;

	if (!svc)
		return -1;
	for (size_t i = 0; i < r->ncands; i++)
		svc[i] = r->cands[i].service;
	if (radix_sort_i64(svc, r->ncands, sizeof(*svc), 0) < 0) {
		free(svc);
		return -1;
	}
	r->floor = (struct slow_candidate){ .service = svc[r->ncands - SLOW_PATH_MAX] };
	free(svc);
	for (size_t i = 0; i < r->ncands; i++)
		if (r->cands[i].service >= r->floor.service)
			r->cands[m++] = r->cands[i];
	r->ncands = m;
	r->floor_exact = 0;
	if (m > SLOW_PATH_MAX + SLOW_PATH_MAX / 2) {
		qsort(r->cands, r->ncands, sizeof(*r->cands), by_slowness);
		r->ncands = SLOW_PATH_MAX;
		r->floor = r->cands[SLOW_PATH_MAX - 1];
		r->floor_exact = 1;
	}
	r->have_floor = 1;
	return 0;
}

/* Keeps the row of st if it may be among the slowest SLOW_PATH_MAX: the
 * candidates are appended until there are twice that many, then cut
 * (cut_candidates); a later row below the floor is not kept. Sequential,
 * unlike a heap of 11 MB whose every replacement missed the cache (0.3 s
 * of the report of 800k requests). 0 or -1. */
static int add_candidate(struct request_read *r, sqlite3_stmt *st)
{
	struct slow_candidate c;

	if (sqlite3_column_type(st, 6) == SQLITE_NULL)
		return 0;                 /* never a slow one */
	if (r->have_floor && sqlite3_column_int64(st, 6) < r->floor.service)
		return 0;
	candidate_of(st, &c);
	if (r->have_floor && r->floor_exact && !later(&r->floor, &c))
		return 0;
	if (array_grow_max((void **)&r->cands, &r->cap_cands, r->ncands, sizeof(*r->cands), 256,
			   2 * SLOW_PATH_MAX))
		return -1;
	r->cands[r->ncands++] = c;
	return r->ncands == 2 * SLOW_PATH_MAX ? cut_candidates(r) : 0;
}

/* The span of the current row of st, while they fit, and its time in
 * the sched gaps. 0 or -1. */
static int add_span(struct request_read *r, sqlite3_stmt *st)
{
	r->gap_ns += time_gaps_overlap(r->gaps, r->ngaps, sqlite3_column_int64(st, 1),
				       sqlite3_column_int64(st, 2));
	if (++r->rows > r->max_spans && !r->merge) {    /* they do not fit: none */
		r->merge = 1;
		span_cover_reset(r->cover);
	}
	if (!r->merge && span_cover_add(r->cover, sqlite3_column_int64(st, 0),
					sqlite3_column_int64(st, 1),
					sqlite3_column_int64(st, 2)) < 0)
		return -1;
	return add_candidate(r, st);
}

const struct slow_candidate *report_requests_candidates(const struct request_read *r, size_t *n)
{
	*n = r ? r->ncands : 0;
	return r ? r->cands : NULL;
}

void report_requests_read_free(struct request_read *r)
{
	if (r) {
		span_cover_free(r->cover);
		free(r->cands);
		free(r->gaps);
	}
	free(r);
}

size_t report_requests_memory(void)
{
	return temp_file_run_size("PERFCAP_REPORT_REQUEST_BYTES", (size_t)256 << 20);
}

/* A quarter of the memory for service times (8 bytes, and 8 to sort),
 * the rest for spans; in a multiple of 1,024 when that large, so that
 * the arrays' doubling stays within it. */
static size_t fit(size_t bytes, size_t each)
{
	size_t n = bytes / each, m = 1024;

	if (n < 1024)
		return n ? n : 1;
	while (m * 2 <= n)
		m *= 2;
	return m;
}

/* The gaps between the sched source's windows (format 1.12), in order:
 * *n of them (0: none, or no table). NULL with *n 0 when none. */
static struct time_gap *load_gaps(const struct report_context *ctx, size_t *n)
{
	struct time_gap *v = NULL;
	size_t cap = 0;
	sqlite3_stmt *st;

	*n = 0;
	if (!report_has_object(ctx->db, "sched_gaps"))
		return NULL;
	st = db_prepare(ctx->db, "SELECT start_ts, end_ts FROM sched_gaps ORDER BY start_ts");
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		if (array_grow((void **)&v, &cap, *n, sizeof(*v), 64) < 0)
			break;
		v[*n].start = sqlite3_column_int64(st, 0);
		v[(*n)++].end = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	return v;
}

static struct request_read *read_new(const struct report_context *ctx)
{
	struct request_read *r = calloc(1, sizeof(*r));

	if (r && !(r->cover = span_cover_new())) {
		free(r);
		return NULL;
	}
	if (r) {
		r->max_spans = fit(report_requests_memory() / 4 * 3, SPAN_COVER_PEAK_BYTES);
		r->gaps = load_gaps(ctx, &r->ngaps);
	}
	return r;
}

/* Adds the current row of st (prepare_read's columns) to the window its
 * start falls in, when it starts in the scope's window, as
 * diagnose_spike.c's statement counts it ((start_ts - base) / width,
 * truncated; service_ns NULL as 0). */
static void add_window(struct request_windows *w, sqlite3_stmt *st, int64_t from, int64_t to)
{
	int64_t start = sqlite3_column_int64(st, 1), k;

	if (!w->n || start < from || start >= to)
		return;
	k = (start - (int64_t)w->base) / (int64_t)w->width;
	if (k < 0 || (uint64_t)k >= w->n)
		return;
	w->count[k]++;
	w->sum[k] += sqlite3_column_int64(st, 6);
}

/* ---- weights of requests followed in windows ----------------------------- */

struct request_weight {
	int64_t ts;
	double w;
};

struct weighted_ns {
	int64_t ns;
	double w;
};

/* request_windows' weights by start, into p->weights (none: NULL). 0 or -1. */
static int load_weights(const struct report_context *ctx, struct request_preload *p)
{
	size_t cap = 0;
	sqlite3_stmt *st = NULL;
	int rc;

	if (!report_has_object(ctx->db, "request_windows") ||
	    sqlite3_prepare_v2(ctx->db, "SELECT start_ts, weight FROM request_windows WHERE"
			       " weight IS NOT NULL ORDER BY start_ts", -1, &st, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return 0;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (array_grow((void **)&p->weights, &cap, p->nweights, sizeof(*p->weights), 64) < 0) {
			sqlite3_finalize(st);
			return -1;
		}
		p->weights[p->nweights++] = (struct request_weight){ sqlite3_column_int64(st, 0),
								      sqlite3_column_double(st, 1) };
	}
	sqlite3_finalize(st);
	return 0;
}

/* The weight of the current row of st: its window's, else 1. */
static double weight_of(const struct request_preload *p, sqlite3_stmt *st)
{
	int64_t ts;
	size_t i;

	if (sqlite3_column_type(st, 7) == SQLITE_NULL)
		return 1;
	ts = sqlite3_column_int64(st, 7);
	i = sorted_first_from(p->weights, p->nweights, sizeof(*p->weights),
			      offsetof(struct request_weight, ts), ts);
	return i < p->nweights && p->weights[i].ts == ts ? p->weights[i].w : 1;
}

/* Keeps ns with its weight w, while the memory allows (wns_over past it). */
static int add_weighted(struct request_preload *p, int64_t ns, double w)
{
	size_t max = report_requests_memory() / 4 / sizeof(*p->wns);

	p->wcount += w;
	p->wtotal += w * (double)ns;
	if (p->wns_over)
		return 0;
	if (p->nwns >= max) {
		p->wns_over = 1;
		free(p->wns);
		p->wns = NULL;
		p->nwns = p->capwns = 0;
		return 0;
	}
	if (array_grow((void **)&p->wns, &p->capwns, p->nwns, sizeof(*p->wns), 1024) < 0)
		return -1;
	p->wns[p->nwns++] = (struct weighted_ns){ ns, w };
	return 0;
}

static int by_ns(const void *pa, const void *pb)
{
	const struct weighted_ns *a = pa, *b = pb;

	return a->ns < b->ns ? -1 : a->ns > b->ns;
}

int report_requests_weighted_ranks(struct request_preload *p, const int *pct, size_t k,
				   int64_t *out)
{
	double sum = 0;
	size_t i = 0;

	if (p->wns_over || !p->nwns)
		return -1;
	qsort(p->wns, p->nwns, sizeof(*p->wns), by_ns);
	for (size_t j = 0; j < k; j++) {   /* pct ascending */
		double want = p->wcount * pct[j] / 100.0;

		while (i < p->nwns - 1 && sum + p->wns[i].w < want)
			sum += p->wns[i++].w;
		out[j] = p->wns[i].ns;
	}
	return 0;
}

/* One request of the first read. 0 or -1. */
static int add_request(struct request_preload *p, sqlite3_stmt *st)
{
	int64_t ns = sqlite3_column_int64(st, 6);

	if (p->weights && add_weighted(p, ns, weight_of(p, st)) < 0)
		return -1;
	p->n++;
	p->total = (int64_t)((uint64_t)p->total + (uint64_t)ns);  /* no UB on a wild value */
	report_hist_add(p->hist, &p->hist_lo, &p->hist_hi, ns, 1);
	if (rank_select_add(p->ns, ns) < 0)
		return -1;
	return p->spans ? add_span(p->spans, st) : 0;
}

int report_requests_preload(const struct report_context *ctx, int want_spans,
			    struct request_preload *p)
{
	struct request_windows *w = &p->windows;
	int64_t from = (int64_t)ctx->scope->from;
	int64_t to = ctx->scope->to > INT64_MAX ? INT64_MAX : (int64_t)ctx->scope->to;
	sqlite3_stmt *st;
	int rc = SQLITE_NOMEM;

	p->valid = 0;
	w->valid = 0;
	p->hist_lo = LOG2_BUCKETS;
	p->hist_hi = -1;
	if (w->n && (!(w->count = calloc(w->n, sizeof(*w->count))) ||
		     !(w->sum = calloc(w->n, sizeof(*w->sum)))))
		return -1;
	if (!(p->ns = rank_select_new(fit(report_requests_memory() / 4, 16))) ||
	    (want_spans && !(p->spans = read_new(ctx))) || load_weights(ctx, p) < 0)
		return -1;
	st = prepare_read(ctx, 0);
	while (st && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		add_window(w, st, from, to);
		if (in_window(ctx, st) && add_request(p, st) < 0) {
			rc = SQLITE_NOMEM;
			break;
		}
	}
	if (st && rc != SQLITE_DONE && rc != SQLITE_NOMEM)
		db_report_error(ctx->db, "requests");
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE || (p->spans && !p->spans->merge &&
				  span_cover_build(p->spans->cover) < 0))
		return -1;
	w->valid = w->n > 0;
	p->valid = 1;
	return 0;
}

void report_requests_preload_free(struct request_preload *p)
{
	free(p->weights);
	free(p->wns);
	p->weights = NULL;
	p->wns = NULL;
	p->nweights = p->nwns = p->capwns = 0;
	rank_select_free(p->ns);
	report_requests_read_free(p->spans);
	free(p->windows.count);
	free(p->windows.sum);
	memset(p, 0, sizeof(*p));
}

static int add_rank_value(void *arg, sqlite3_stmt *st)
{
	return rank_select_add(arg, sqlite3_column_int64(st, 6));
}

int report_requests_ranks(const struct report_context *ctx, struct request_preload *p,
			  const uint64_t *pos, size_t k, int64_t *out)
{
	char a[FMT_BUF], b[FMT_BUF];
	unsigned passes;

	if (rank_select_ask(p->ns, pos, k) < 0) {
		fprintf(stderr, "perfcap-analyze: report: out of memory for the request"
			" percentiles\n");
		return -1;
	}
	while (rank_select_pending(p->ns)) {
		sqlite3_stmt *st = NULL;

		if (rank_select_begin_pass(p->ns) < 0 ||
		    !(st = prepare_read(ctx, 0)) ||
		    each_row(ctx, st, add_rank_value, p->ns) < 0 ||
		    rank_select_end_pass(p->ns) < 0) {
			fprintf(stderr, "perfcap-analyze: report: the requests could not be read again"
				" for their percentiles (out of memory, or the table changed)\n");
			return -1;
		}
	}
	for (size_t i = 0; i < k; i++)
		out[i] = rank_select_value(p->ns, i);
	passes = rank_select_passes(p->ns);
	if (passes)
		fprintf(stderr, "perfcap-analyze: note: the service times of %s requests exceed"
			" the report's memory for them (%s bytes, PERFCAP_REPORT_REQUEST_BYTES):"
			" percentiles found in %u more read%s of the table\n",
			fmt_count(a, sizeof(a), p->n),
			fmt_count(b, sizeof(b), report_requests_memory()), passes,
			passes > 1 ? "s" : "");
	return 0;
}

static int component_of(int64_t state_code, int64_t wait_class_code)
{
	static const int by_class[7] = { RC_OTHER, RC_BLOCK_IO, RC_FUTEX, RC_POLL, RC_SLEEP,
					 RC_NET, RC_OTHER };

	if (state_code == 0 || state_code == 1)
		return (int)state_code;
	return wait_class_code >= 0 && wait_class_code < 7 ? by_class[wait_class_code] : RC_OTHER;
}

/* Adds a state row's overlap with its thread's spans and gives it to the
 * slow path's walk (NULL: none). */
static void add_state(const struct slow_state_row *row, uint64_t ns, struct slow_walk *walk,
		      uint64_t sums[RC_N])
{
	if (walk)
		slow_path_add_state(walk, row);
	sums[component_of(row->state, row->cls)] += ns;
}

/* One pass over thread_state_rows, each row's overlap with the spans of
 * its thread from the cover; the slow path's walk is fed the same rows
 * (it needed a pass of its own before: 0.45 and 0.6 s of a 20 s postgres
 * recording's report). 0 or -1 (reported). */
static int cover_states(const struct report_context *ctx, const struct span_cover *cover,
			struct slow_walk *walk, uint64_t sums[RC_N])
{
	sqlite3_stmt *st = report_prepare(ctx, "SELECT " SLOW_PATH_STATE_COLUMNS
					  " FROM thread_state_rows");
	struct slow_state_row row;
	int step = SQLITE_ERROR;

	while (st && (step = sqlite3_step(st)) == SQLITE_ROW) {
		slow_path_state_of(st, 0, &row);
		add_state(&row, span_cover_overlap(cover, row.tid, row.start,
						   row.start + row.duration), walk, sums);
	}
	if (st && step != SQLITE_DONE)
		db_report_error(ctx->db, "thread_state_rows");
	sqlite3_finalize(st);
	return step == SQLITE_DONE ? 0 : -1;
}

/* The spans of one thread that may still overlap its next states, while
 * both are read in (thread, start) order. */
struct sweep {
	sqlite3_stmt *req;          /* prepare_read(ctx, 1), stepped */
	int req_row;                /* req holds a row not yet taken */
	int64_t tid;                /* the thread of active */
	struct { int64_t start, end; } *active;
	size_t n, cap;
	uint64_t taken;             /* spans taken (in the window) */
};

/* Steps the requests to the next one in the window. 0, or -1 (reported). */
static int next_span(const struct report_context *ctx, struct sweep *w)
{
	int rc;

	while ((rc = sqlite3_step(w->req)) == SQLITE_ROW)
		if (in_window(ctx, w->req)) {
			w->req_row = 1;
			return 0;
		}
	w->req_row = 0;
	if (rc != SQLITE_DONE) {
		db_report_error(ctx->db, "requests");
		return -1;
	}
	return 0;
}

/* The overlap of the state [s, e) of thread tid with that thread's spans:
 * the spans of tid starting before e join the active ones, those ended by
 * s leave (states come in start order, so no later one needs them). 0
 * or -1. */
static int sweep_overlap(const struct report_context *ctx, struct sweep *w, int64_t tid,
			 int64_t s, int64_t e, uint64_t *ns)
{
	size_t k = 0;

	if (tid != w->tid) {
		w->n = 0;
		w->tid = tid;
	}
	while (w->req_row && sqlite3_column_int64(w->req, 0) <= tid) {
		int64_t t = sqlite3_column_int64(w->req, 0), a = sqlite3_column_int64(w->req, 1);
		int64_t b = sqlite3_column_int64(w->req, 2);
		if (t == tid && a >= e)
			break;
		w->taken++;
		if (t == tid && b > a && b > s) {
			if (array_grow((void **)&w->active, &w->cap, w->n, sizeof(*w->active), 64))
				return -1;
			w->active[w->n].start = a;
			w->active[w->n++].end = b;
		}
		if (next_span(ctx, w) < 0)
			return -1;
	}
	*ns = 0;
	for (size_t i = 0; i < w->n; i++) {
		int64_t a = w->active[i].start > s ? w->active[i].start : s;
		int64_t b = w->active[i].end < e ? w->active[i].end : e;
		if (w->active[i].end <= s)
			continue;                    /* over: dropped */
		if (b > a)
			*ns += (uint64_t)(b - a);
		w->active[k++] = w->active[i];
	}
	w->n = k;
	return 0;
}

/* The spans did not fit: the requests and thread_state_rows both read
 * sorted by thread and start (SQLite's sorter spills to temporary files,
 * so memory stays bounded), and merged: each state meets the spans of its
 * thread active at its time. The same sums as cover_states, in one pass
 * over each table. 0 or -1 (reported). */
static int merge_states(const struct report_context *ctx, const struct request_read *r,
			struct slow_walk *walk, uint64_t sums[RC_N])
{
	struct sweep w = { .tid = INT64_MIN };
	sqlite3_stmt *st;
	struct slow_state_row row;
	int step = SQLITE_ERROR, rc;

	/* two sorters at once, each may hold the page cache's size (the
	 * readers' 16 MiB, db/db.c) in memory before it spills */
	w.req = prepare_read(ctx, 1);
	st = report_prepare(ctx, "SELECT " SLOW_PATH_STATE_COLUMNS
					  " FROM thread_state_rows"
					  " ORDER BY ifnull(tid, 0), ifnull(start_ts, 0)");
	rc = w.req && st ? next_span(ctx, &w) : -1;

	while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
		uint64_t ns = 0;
		slow_path_state_of(st, 0, &row);
		rc = sweep_overlap(ctx, &w, row.tid, row.start, row.start + row.duration, &ns);
		if (rc == 0)
			add_state(&row, ns, walk, sums);
	}
	if (rc == 0 && step != SQLITE_DONE) {
		db_report_error(ctx->db, "thread_state_rows");
		rc = -1;
	}
	while (rc == 0 && w.req_row) {       /* spans after the last state: counted */
		w.taken++;
		rc = next_span(ctx, &w);
	}
	if (rc == 0 && w.taken != r->rows) {
		fprintf(stderr, "perfcap-analyze: report: the requests table changed while the"
			" report read it\n");
		rc = -1;
	}
	sqlite3_finalize(w.req);
	sqlite3_finalize(st);
	free(w.active);
	return rc;
}

int report_request_dominant(const struct report_context *ctx, struct request_read *spans,
			    int64_t total_ns, struct slow_walk *walk, int *walked,
			    char *buf, size_t len)
{
	uint64_t sums[RC_N] = { 0 }, covered = 0, best = 0, gap;
	int64_t all_ns = total_ns;
	int best_k = -1, n;

	*walked = 0;
	if (!spans || total_ns <= 0)
		return -1;
	if (spans->rows > 0) {
		if ((spans->merge ? merge_states(ctx, spans, walk, sums) :
		     cover_states(ctx, spans->cover, walk, sums)) < 0)
			return -2;
		*walked = 1;
	}
	if (spans->merge) {
		char a[FMT_BUF], b[FMT_BUF];
		fprintf(stderr, "perfcap-analyze: note: the spans of %s requests exceed the"
			" report's memory for them (%s bytes, PERFCAP_REPORT_REQUEST_BYTES): read"
			" again sorted by thread, with thread_state_rows\n",
			fmt_count(a, sizeof(a), spans->rows),
			fmt_count(b, sizeof(b), report_requests_memory()));
	}
	for (int k = 0; k < RC_N; k++) {
		covered += sums[k];
		if (sums[k] > best) {
			best = sums[k];
			best_k = k;
		}
	}
	if (best_k < 0)
		return -1;
	/* sched windows: the shares are of the time the sched source saw */
	gap = spans->gap_ns;
	if (gap && gap < (uint64_t)total_ns)
		total_ns -= (int64_t)gap;
	n = snprintf(buf, len, "%s %.0f%% (unattributed %.0f%%", component_names[best_k],
		     100.0 * (double)best / (double)total_ns,
		     covered < (uint64_t)total_ns ? 100.0 * (double)((uint64_t)total_ns - covered) /
		     (double)total_ns : 0.0);
	if (n > 0 && (size_t)n < len)   /* "of the 78% in sched windows": their time seen */
		snprintf(buf + n, len - (size_t)n, gap ? ", of the %.0f%% in sched windows)" : ")",
			 100.0 * (double)total_ns / (double)all_ns);
	return 0;
}
