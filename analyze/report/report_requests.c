/* report_requests.c - the dominant component of request time (book
 * 12.5): what the serving thread was doing during each request span of
 * request_spans (its first thread, from the first read to the last
 * write's return): running, runnable, or blocked in a wait class. One
 * pass over thread_state_rows of the serving threads; each state
 * interval is split over the requests of its thread it overlaps (a
 * thread serves one request at a time, so its spans are disjoint and
 * sorted). The part no state covers is "unattributed", not zero.
 *
 * The spans are read in the same statement as every request's service
 * time (report_requests_preload), which the latency row needs: one scan of
 * the requests table instead of two (0.5-0.8 s each on 2M requests). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "query/slow_path.h"
#include "util/grow.h"
#include "util/hashmap.h"
#include "report_sections.h"

enum { RC_RUNNING, RC_RUNNABLE, RC_BLOCK_IO, RC_FUTEX, RC_POLL, RC_SLEEP, RC_NET, RC_OTHER,
       RC_N };

static const char *const component_names[RC_N] = { "running", "runnable", "block_io wait",
	"futex wait", "poll wait", "sleep", "socket wait", "other wait" };

/* A request span is a struct slow_candidate (query/slow_path.h: the slow
 * path picks its requests from the same rows); conn and row order the
 * spans of one thread and start as request_spans does, so that the
 * overlaps (which assume a thread's spans sorted) do not depend on the
 * order the rows were read in. */
static int by_tid_start(const void *pa, const void *pb)
{
	const struct slow_candidate *a = pa, *b = pb;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->conn != b->conn)
		return a->conn < b->conn ? -1 : 1;
	return (a->row > b->row) - (a->row < b->row);
}

struct request_read {
	struct slow_candidate *v;
	size_t n, cap;
};

/* Appends the span of the current row of st (columns 0-6). 0 or -1. */
static int add_span(struct request_read *r, sqlite3_stmt *st)
{
	struct slow_candidate *c;

	if (array_grow((void **)&r->v, &r->cap, r->n, sizeof(*r->v), 256))
		return -1;
	c = &r->v[r->n++];
	c->tid = sqlite3_column_int64(st, 0);
	c->start = sqlite3_column_int64(st, 1);
	c->end = sqlite3_column_int64(st, 2);
	c->conn = (uint64_t)(uint32_t)sqlite3_column_int64(st, 3) << 32 |
		  ((uint32_t)sqlite3_column_int64(st, 4) ^ 0x80000000u);
	c->row = sqlite3_column_int64(st, 5);
	c->service = sqlite3_column_int64(st, 6);
	c->service_set = sqlite3_column_type(st, 6) != SQLITE_NULL;
	return 0;
}

/* Appends the service time of the current row of st (column 6). 0 or -1. */
static int add_ns(int64_t **ns, size_t *n, size_t *cap, sqlite3_stmt *st)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 4096;
		int64_t *grown = realloc(*ns, c * sizeof(*grown));

		if (!grown)
			return -1;
		*ns = grown;
		*cap = c;
	}
	(*ns)[(*n)++] = sqlite3_column_int64(st, 6);
	return 0;
}

const struct slow_candidate *report_requests_spans(const struct request_read *r, size_t *n)
{
	*n = r ? r->n : 0;
	return r ? r->v : NULL;
}

void report_requests_read_free(struct request_read *r)
{
	if (r)
		free(r->v);
	free(r);
}

/* Adds the current row of st (report_requests_preload's columns) to the
 * window its start falls in, when it starts in the scope's window, as
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

int report_requests_preload(const struct report_context *ctx, int want_spans,
			    struct request_preload *p)
{
	char overlap[1024], started[1024], sql[3000];
	struct request_windows *w = &p->windows;
	int64_t from = (int64_t)ctx->scope->from;
	int64_t to = ctx->scope->to > INT64_MAX ? INT64_MAX : (int64_t)ctx->scope->to;
	size_t cap = 0;
	sqlite3_stmt *st;
	int rc = SQLITE_NOMEM;

	p->valid = 0;
	w->valid = 0;
	if (w->n && (!(w->count = calloc(w->n, sizeof(*w->count))) ||
		     !(w->sum = calloc(w->n, sizeof(*w->sum)))))
		return -1;
	if (want_spans && !(p->spans = calloc(1, sizeof(*p->spans))))
		return -1;
	/* the rows the latency section takes (overlapping the window) and
	 * those the spike rule takes (started in it), told apart below */
	snprintf(sql, sizeof(sql), "SELECT CAST(tids AS INTEGER), start_ts, end_ts, pid, fd, rowid,"
		 " service_ns FROM %s WHERE (%s) OR (%s)",
		 report_requests_from(ctx->scope, "requests"),
		 report_scope_sql(overlap, sizeof(overlap), "pid", "CAST(tids AS INTEGER)",
				  "start_ts", "end_ts"),
		 report_scope_sql(started, sizeof(started), "pid", "CAST(tids AS INTEGER)",
				  "start_ts", "start_ts"));
	st = report_prepare(ctx, sql);
	while (st && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t start = sqlite3_column_int64(st, 1), end = sqlite3_column_int64(st, 2);

		add_window(w, st, from, to);
		if (!(start < to && end > from))
			continue;
		if (add_ns(&p->ns, &p->n, &cap, st) < 0 || (p->spans && add_span(p->spans, st) < 0)) {
			rc = SQLITE_NOMEM;
			break;
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return -1;
	if (p->spans && p->spans->n > 0)
		qsort(p->spans->v, p->spans->n, sizeof(*p->spans->v), by_tid_start);
	w->valid = w->n > 0;
	p->valid = 1;
	return 0;
}

void report_requests_preload_free(struct request_preload *p)
{
	free(p->ns);
	report_requests_read_free(p->spans);
	free(p->windows.count);
	free(p->windows.sum);
	memset(p, 0, sizeof(*p));
}

static int component_of(int64_t state_code, int64_t wait_class_code)
{
	static const int by_class[7] = { RC_OTHER, RC_BLOCK_IO, RC_FUTEX, RC_POLL, RC_SLEEP,
					 RC_NET, RC_OTHER };

	if (state_code == 0 || state_code == 1)
		return (int)state_code;
	return wait_class_code >= 0 && wait_class_code < 7 ? by_class[wait_class_code] : RC_OTHER;
}

/* Adds the overlap of [s, e) with the spans of its thread (first..last). */
static void add_overlap(const struct slow_candidate *v, size_t first, size_t last, int64_t s, int64_t e,
			uint64_t *sum)
{
	size_t lo = first, hi = last;

	while (lo < hi) {                    /* first span ending after s */
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].end <= s)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < last && v[i].start < e; i++) {
		int64_t a = s > v[i].start ? s : v[i].start, b = e < v[i].end ? e : v[i].end;
		if (b > a)
			*sum += (uint64_t)(b - a);
	}
}

/* One pass over thread_state_rows: each row's overlap with the spans of
 * its thread summed per component, and each row given to the slow path's
 * walk too (walk NULL: none), which needed a pass of its own before (0.45
 * and 0.6 s of a 20 s postgres recording's report). 0 or -1 (reported). */
static int stream_states(const struct report_context *ctx, const struct slow_candidate *v, size_t n,
			 struct slow_walk *walk, uint64_t sums[RC_N])
{
	struct hmap range;                    /* (tid, 0) -> first << 32 | count */
	struct slow_state_row row;
	sqlite3_stmt *st;
	int step = SQLITE_ERROR;

	hmap_init(&range);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		int created;
		while (j < n && v[j].tid == v[i].tid)
			j++;
		uint64_t *slot = hmap_upsert(&range, (uint64_t)v[i].tid, 0, 0, &created);
		if (slot)
			*slot = (uint64_t)i << 32 | (uint64_t)(j - i);
		i = j;
	}
	st = report_prepare(ctx, "SELECT " SLOW_PATH_STATE_COLUMNS " FROM thread_state_rows");
	while (st && (step = sqlite3_step(st)) == SQLITE_ROW) {
		uint64_t *slot;
		size_t first, count;

		slow_path_state_of(st, 0, &row);
		if (walk)
			slow_path_add_state(walk, &row);
		slot = hmap_find(&range, (uint64_t)row.tid, 0);
		if (!slot)
			continue;
		first = (size_t)(*slot >> 32);
		count = (size_t)(*slot & 0xffffffffu);
		add_overlap(v, first, first + count, row.start, row.start + row.duration,
			    &sums[component_of(row.state, row.cls)]);
	}
	if (st && step != SQLITE_DONE)
		db_report_error(ctx->db, "thread_state_rows");
	sqlite3_finalize(st);
	hmap_free(&range);
	return step == SQLITE_DONE ? 0 : -1;
}

int report_request_dominant(const struct report_context *ctx, const struct request_read *spans,
			    int64_t total_ns, struct slow_walk *walk, int *walked,
			    char *buf, size_t len)
{
	uint64_t sums[RC_N] = { 0 }, covered = 0, best = 0;
	int best_k = -1;

	*walked = 0;
	if (!spans || total_ns <= 0)
		return -1;
	if (spans->n > 0) {
		if (stream_states(ctx, spans->v, spans->n, walk, sums) < 0)
			return -2;
		*walked = 1;
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
