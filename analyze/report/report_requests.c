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
 * rank_select.h reads them again for the percentiles; the spans are taken
 * in slices of consecutive rowids that fit, the first during the read,
 * each later one read again before its own pass over thread_state_rows;
 * of the slow path's candidates only the slowest SLOW_PATH_MAX are kept
 * (all it can pick). A capture that fits is read once, as before. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "query/slow_path.h"
#include "util/fmt.h"
#include "util/grow.h"
#include "util/radix_sort.h"
#include "util/rank_select.h"
#include "util/span_cover.h"
#include "util/temp_file.h"
#include "report_sections.h"

enum { RC_RUNNING, RC_RUNNABLE, RC_BLOCK_IO, RC_FUTEX, RC_POLL, RC_SLEEP, RC_NET, RC_OTHER,
       RC_N };

static const char *const component_names[RC_N] = { "running", "runnable", "block_io wait",
	"futex wait", "poll wait", "sleep", "socket wait", "other wait" };

/* The spans and candidates read: the current slice's spans in cover; slice
 * k holds the rows with rowid in (bounds[k-1], bounds[k]] (no bound
 * below the first, none above the last), max_spans rows each but the
 * last; rows: every row read. cands: the slow path's candidates
 * (add_candidate). */
struct request_read {
	struct span_cover *cover;
	size_t max_spans, slice_rows;
	int64_t *bounds, last_row;
	size_t nbounds, cap_bounds;
	uint64_t rows;
	struct slow_candidate *cands, floor;
	size_t ncands, cap_cands;
	int have_floor, floor_exact;
};

/* The statement of every read of the requests: those overlapping the
 * window (the latency section's) and those started in it (the spike
 * rule's), told apart by in_window; rowid in (after, upto]. */
static sqlite3_stmt *prepare_read(const struct report_context *ctx, int64_t after, int64_t upto)
{
	char overlap[1024], started[1024], sql[3200];

	snprintf(sql, sizeof(sql), "SELECT CAST(tids AS INTEGER), start_ts, end_ts, pid, fd, rowid,"
		 " service_ns FROM %s WHERE ((%s) OR (%s)) AND rowid > %lld AND rowid <= %lld"
		 " ORDER BY rowid", report_requests_from(ctx->scope, "requests"),
		 report_scope_sql(overlap, sizeof(overlap), "pid", "CAST(tids AS INTEGER)",
				  "start_ts", "end_ts"),
		 report_scope_sql(started, sizeof(started), "pid", "CAST(tids AS INTEGER)",
				  "start_ts", "start_ts"), (long long)after, (long long)upto);
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
	if (array_grow((void **)&r->cands, &r->cap_cands, r->ncands, sizeof(*r->cands), 256))
		return -1;
	r->cands[r->ncands++] = c;
	return r->ncands == 2 * SLOW_PATH_MAX ? cut_candidates(r) : 0;
}

/* The span of the current row of st, in the first slice or in the count
 * of a later one. 0 or -1. */
static int add_span(struct request_read *r, sqlite3_stmt *st)
{
	if (r->slice_rows == r->max_spans) {      /* a new slice from this row */
		if (array_grow((void **)&r->bounds, &r->cap_bounds, r->nbounds,
			       sizeof(*r->bounds), 16))
			return -1;
		r->bounds[r->nbounds++] = r->last_row;
		r->slice_rows = 0;
	}
	r->slice_rows++;
	r->rows++;
	r->last_row = sqlite3_column_int64(st, 5);
	if (r->nbounds == 0 && span_cover_add(r->cover, sqlite3_column_int64(st, 0),
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

size_t report_requests_slices(const struct request_read *r)
{
	return r ? r->nbounds + 1 : 0;
}

void report_requests_read_free(struct request_read *r)
{
	if (r) {
		span_cover_free(r->cover);
		free(r->bounds);
		free(r->cands);
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

static struct request_read *read_new(void)
{
	struct request_read *r = calloc(1, sizeof(*r));

	if (r && !(r->cover = span_cover_new())) {
		free(r);
		return NULL;
	}
	if (r)
		r->max_spans = fit(report_requests_memory() / 4 * 3, SPAN_COVER_PEAK_BYTES);
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

/* One request of the first read. 0 or -1. */
static int add_request(struct request_preload *p, sqlite3_stmt *st)
{
	int64_t ns = sqlite3_column_int64(st, 6);

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
	p->hist_lo = REPORT_HIST_BUCKETS;
	p->hist_hi = -1;
	if (w->n && (!(w->count = calloc(w->n, sizeof(*w->count))) ||
		     !(w->sum = calloc(w->n, sizeof(*w->sum)))))
		return -1;
	if (!(p->ns = rank_select_new(fit(report_requests_memory() / 4, 16))) ||
	    (want_spans && !(p->spans = read_new())))
		return -1;
	st = prepare_read(ctx, INT64_MIN, INT64_MAX);
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
	if (rc != SQLITE_DONE || (p->spans && span_cover_build(p->spans->cover) < 0))
		return -1;
	w->valid = w->n > 0;
	p->valid = 1;
	return 0;
}

void report_requests_preload_free(struct request_preload *p)
{
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
		    !(st = prepare_read(ctx, INT64_MIN, INT64_MAX)) ||
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

/* What the first pass over thread_state_rows notes for the later slices:
 * per block of STATE_BLOCK rowids, the earliest start and the latest end
 * of its rows. The table is written about in time order (a state when it
 * ends), so a later slice reads only the blocks its time meets instead
 * of the whole table again. */
#define STATE_BLOCK 4096

struct state_blocks {
	int64_t (*range)[2];
	size_t n, cap;
};

static int note_block(struct state_blocks *b, int64_t rowid, int64_t start, int64_t end)
{
	size_t k = rowid > 0 ? (size_t)(rowid / STATE_BLOCK) : 0;

	while (b->n <= k) {
		if (array_grow((void **)&b->range, &b->cap, b->n, sizeof(*b->range), 64))
			return -1;
		b->range[b->n][0] = INT64_MAX;
		b->range[b->n++][1] = INT64_MIN;
	}
	if (start < b->range[k][0])
		b->range[k][0] = start;
	if (end > b->range[k][1])
		b->range[k][1] = end;
	return 0;
}

/* Steps st (SLOW_PATH_STATE_COLUMNS, then rowid): each row's overlap with
 * the spans of its thread summed per component, each row given to the
 * slow path's walk (NULL: none) and noted in blocks (NULL: not). 0 or -1
 * (reported). */
static int sum_states(const struct report_context *ctx, sqlite3_stmt *st,
		      const struct span_cover *cover, struct slow_walk *walk,
		      struct state_blocks *blocks, uint64_t sums[RC_N])
{
	struct slow_state_row row;
	int step = SQLITE_ERROR;

	while (st && (step = sqlite3_step(st)) == SQLITE_ROW) {
		slow_path_state_of(st, 0, &row);
		if (walk)
			slow_path_add_state(walk, &row);
		if (blocks && note_block(blocks, sqlite3_column_int64(st, 8), row.start,
					 row.start + row.duration) < 0)
			return -1;
		sums[component_of(row.state, row.cls)] +=
			span_cover_overlap(cover, row.tid, row.start, row.start + row.duration);
	}
	if (st && step != SQLITE_DONE)
		db_report_error(ctx->db, "thread_state_rows");
	return step == SQLITE_DONE ? 0 : -1;
}

/* The first slice's pass: every row, for the slow path's walk too (which
 * needed a pass of its own before: 0.45 and 0.6 s of a 20 s postgres
 * recording's report), noting the blocks when there are later slices. */
static int first_states(const struct report_context *ctx, const struct request_read *r,
			struct slow_walk *walk, struct state_blocks *blocks, uint64_t sums[RC_N])
{
	sqlite3_stmt *st = report_prepare(ctx, "SELECT " SLOW_PATH_STATE_COLUMNS ", rowid"
					  " FROM thread_state_rows");
	int rc = sum_states(ctx, st, r->cover, walk, r->nbounds ? blocks : NULL, sums);

	sqlite3_finalize(st);
	return rc;
}

/* A later slice's pass: the rows of the blocks its spans' time meets, in
 * runs of consecutive blocks. */
static int later_states(const struct report_context *ctx, const struct request_read *r,
			const struct state_blocks *b, uint64_t sums[RC_N])
{
	int64_t first, last;
	sqlite3_stmt *st = report_prepare(ctx, "SELECT " SLOW_PATH_STATE_COLUMNS ", rowid"
					  " FROM thread_state_rows WHERE rowid BETWEEN ?3 AND ?4"
					  " AND start_ts < ?1 AND start_ts + duration > ?2");
	int rc = st ? 0 : -1;

	span_cover_range(r->cover, &first, &last);
	for (size_t k = 0; rc == 0 && k < b->n;) {
		size_t j = k;
		while (j < b->n && b->range[j][0] < last && b->range[j][1] > first)
			j++;
		if (j == k) {
			k++;
			continue;
		}
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, last);
		sqlite3_bind_int64(st, 2, first);
		sqlite3_bind_int64(st, 3, (int64_t)(k * STATE_BLOCK));
		sqlite3_bind_int64(st, 4, (int64_t)(j * STATE_BLOCK) - 1);
		rc = sum_states(ctx, st, r->cover, NULL, NULL, sums);
		k = j;
	}
	sqlite3_finalize(st);
	return rc;
}

static int add_slice_span(void *arg, sqlite3_stmt *st)
{
	struct request_read *r = arg;

	r->slice_rows++;
	return span_cover_add(r->cover, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
			      sqlite3_column_int64(st, 2));
}

/* Reads slice k (> 0) of the spans again into r->cover. 0 or -1 (reported). */
static int read_slice(const struct report_context *ctx, struct request_read *r, size_t k)
{
	int64_t upto = k < r->nbounds ? r->bounds[k] : INT64_MAX;
	uint64_t want = k < r->nbounds ? r->max_spans : r->rows - r->nbounds * r->max_spans;

	span_cover_reset(r->cover);
	r->slice_rows = 0;
	if (each_row(ctx, prepare_read(ctx, r->bounds[k - 1], upto), add_slice_span, r) < 0 ||
	    span_cover_build(r->cover) < 0)
		return -1;
	if (r->slice_rows != want) {
		fprintf(stderr, "perfcap-analyze: report: the requests table changed while the"
			" report read it\n");
		return -1;
	}
	return 0;
}

int report_request_dominant(const struct report_context *ctx, struct request_read *spans,
			    int64_t total_ns, struct slow_walk *walk, int *walked,
			    char *buf, size_t len)
{
	uint64_t sums[RC_N] = { 0 }, covered = 0, best = 0;
	struct state_blocks blocks = { 0 };
	int best_k = -1, rc = 0;

	*walked = 0;
	if (!spans || total_ns <= 0)
		return -1;
	for (size_t k = 0; rc == 0 && spans->rows > 0 && k <= spans->nbounds; k++) {
		if (k == 0)
			rc = first_states(ctx, spans, walk, &blocks, sums);
		else if ((rc = read_slice(ctx, spans, k)) == 0)
			rc = later_states(ctx, spans, &blocks, sums);
		*walked = 1;
	}
	free(blocks.range);
	if (rc < 0)
		return -2;
	if (spans->nbounds) {
		char a[FMT_BUF], b[FMT_BUF];
		fprintf(stderr, "perfcap-analyze: note: the spans of %s requests exceed the"
			" report's memory for them (%s bytes, PERFCAP_REPORT_REQUEST_BYTES): read"
			" in %zu slices\n", fmt_count(a, sizeof(a), spans->rows),
			fmt_count(b, sizeof(b), report_requests_memory()), spans->nbounds + 1);
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
	snprintf(buf, len, "%s %.0f%% (unattributed %.0f%%)", component_names[best_k],
		 100.0 * (double)best / (double)total_ns,
		 covered < (uint64_t)total_ns ? 100.0 * (double)((uint64_t)total_ns - covered) /
		 (double)total_ns : 0.0);
	return 0;
}
