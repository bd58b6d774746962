/* report_latency.c - "Latency breakdown": requests (request_spans, and
 * their queueing from request_queueing when the view exists) and system
 * calls per name (syscall_intervals): count, nearest-rank p50/p90/p99,
 * total, and the dominant component — the largest measured part of the
 * calls' time: blocked in a wait class (thread_states inside the call),
 * or "in call" (running or runnable inside it). In JSON: "latency", with
 * log2 histograms of request service time and of the top calls. The
 * numbers are loaded once per report model (report_latency_load), then
 * rendered as text or JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "query/slow_path.h"
#include "util/fmt.h"
#include "util/log2_bucket.h"
#include "report_sections.h"

#define HIST_BUCKETS LOG2_BUCKETS

struct req_hist {
	uint64_t b[HIST_BUCKETS];
	int lo, hi;
};

struct latency_row {
	char name[64];
	int64_t nr;
	int64_t count, p50, p90, p99, total;
	char dominant[64];
	/* requests followed in windows: the row weighs each by its window */
	int64_t followed;         /* the requests themselves; -1: not weighted */
	int64_t followed_total;   /* their service time */
	int weighted_pct;         /* the percentiles are weighted too */
};

static void call_name(const struct report_context *ctx, int64_t nr, char *buf, size_t len)
{
	char *name = NULL, key[32];

	snprintf(key, sizeof(key), "%lld", (long long)nr);
	name = db_lookup_text(ctx->db, "SELECT name FROM syscall_names WHERE nr = ?1", key, NULL);
	snprintf(buf, len, "%s%s", name ? "" : "syscall_", name ? name : key);
	free(name);
}

/* The top max system calls by total time, from the report's one pass. */
static int call_rows(const struct report_context *ctx, struct latency_row *rows, int max)
{
	int n = 0;

	for (size_t i = 0; i < ctx->calls->nnr && n < max; i++, n++) {
		const struct call_durations *c = &ctx->calls->by_nr[i];
		struct latency_row *r = &rows[n];
		memset(r, 0, sizeof(*r));
		call_name(ctx, c->nr, r->name, sizeof(r->name));
		r->nr = c->nr;
		r->count = (int64_t)(c->calls + 0.5);   /* weighted: calls.h */
		r->p50 = c->p50;
		r->p90 = c->p90;
		r->p99 = c->p99;
		r->total = c->total;
		r->followed = -1;
		r->followed_total = c->recorded_total;   /* set_dominant's */
	}
	return n;
}

/* Request service times of the scope, ascending. */
/* The nearest-rank position (0-based) of percentile pct of n sorted
 * values (rank ceil(n * pct / 100), as the schema's percentiles are
 * defined). */
static uint64_t nearest_rank(uint64_t n, int pct)
{
	uint64_t rank = (n * (uint64_t)pct + 99) / 100;

	return rank ? rank - 1 : 0;
}

/* The requests' row of requests followed in the req source's windows:
 * count, total and percentiles weighted (each request by its window's
 * period over its length), the percentiles only when their service times
 * were all kept (else the followed requests' own, said by weighted_pct). */
static void weigh_row(struct request_preload *pre, struct latency_row *r)
{
	static const int pct[3] = { 50, 90, 99 };
	int64_t v[3];

	r->followed = r->count;
	r->followed_total = r->total;
	r->count = (int64_t)(pre->wcount + 0.5);
	r->total = (int64_t)(pre->wtotal + 0.5);
	r->weighted_pct = report_requests_weighted_ranks(pre, pct, 3, v) == 0;
	if (r->weighted_pct) {
		r->p50 = v[0];
		r->p90 = v[1];
		r->p99 = v[2];
	}
}

/* The requests' row: count, p50/p90/p99 and total of service_ns over the
 * requests in scope, and the value bounding the slowest tenth
 * (slow_path_floor_pos) into *floor_ns. The window-function statement
 * that did it (row_number over the sorted durations) took 1.7 s of a 5 s
 * report of a redis capture with 543k requests; the values are read once
 * instead, with the spans the dominant component needs (with the sched
 * source; *spans, else NULL): the report's one read of the requests
 * (report_requests_preload), made before the diagnosis or, when it was
 * not, here. Its histogram goes to hist. 1 (a row), 0 (no requests) or -1. */
static int request_row(const struct report_context *ctx, struct latency_row *r,
		       struct req_hist *hist, int64_t *floor_ns, struct request_read **spans)
{
	struct request_preload own = { 0 }, *pre = ctx->reqs;
	uint64_t pos[4];
	int64_t val[4];
	int rc = 0;

	if (!pre || !pre->valid) {        /* not read before the diagnosis: now */
		pre = &own;
		if (report_requests_preload(ctx, report_source_on(ctx, "sched"), pre) < 0) {
			report_requests_preload_free(pre);
			return -1;
		}
	}
	memset(r, 0, sizeof(*r));
	if (pre->n) {
		pos[0] = nearest_rank(pre->n, 50);
		pos[1] = nearest_rank(pre->n, 90);
		pos[2] = nearest_rank(pre->n, 99);
		pos[3] = slow_path_floor_pos(pre->n);
		rc = report_requests_ranks(ctx, pre, pos, 4, val) < 0 ? -1 : 1;
	}
	if (rc == 1) {
		snprintf(r->name, sizeof(r->name), "requests");
		r->count = (int64_t)pre->n;
		r->p50 = val[0];
		r->p90 = val[1];
		r->p99 = val[2];
		r->total = pre->total;
		r->followed = -1;
		*floor_ns = val[3];
		if (pre->weights)
			weigh_row(pre, r);
		memcpy(hist->b, pre->hist, sizeof(hist->b));
		hist->lo = pre->hist_lo;
		hist->hi = pre->hist_hi;
	}
	*spans = pre->spans;              /* taken over */
	pre->spans = NULL;
	report_requests_preload_free(&own);
	if (rc < 0) {
		report_requests_read_free(*spans);
		*spans = NULL;
	}
	return rc;
}

/* The largest measured part of each row's calls: the blocked class with
 * the most time inside them (thread states inside the call), or "in call"
 * (the rest: running or runnable inside it) when that is larger. Of the
 * calls recorded: with syscall windows the thread states are inside those
 * only, the row's total stands for all. */
static void set_dominant(const struct report_context *ctx, struct latency_row *rows, int n)
{
	static const char *const names[DC_N] = { "block_io", "futex", "poll", "sleep", "net",
						  "net", "other", "unknown" };

	for (int i = 0; i < n; i++) {
		const uint64_t *b = rows[i].nr >= 0 && rows[i].nr < CALLS_MAX_NR ?
				    ctx->diag->blocked_by_nr[rows[i].nr] : NULL;
		uint64_t blocked = 0, best = 0;
		int best_k = -1;
		int64_t recorded = rows[i].followed_total;
		double total = recorded > 0 ? (double)recorded : 1;
		for (int k = 0; b && k < DC_N; k++) {
			blocked += b[k];
			if (b[k] > best) {
				best = b[k];
				best_k = k;
			}
		}
		int64_t in_call = recorded - (int64_t)blocked;
		if (best_k >= 0 && (int64_t)best >= in_call)
			snprintf(rows[i].dominant, sizeof(rows[i].dominant), "blocked %s %.0f%%",
				 names[best_k], 100.0 * (double)best / total);
		else
			snprintf(rows[i].dominant, sizeof(rows[i].dominant), "in call %.0f%%",
				 100.0 * (double)(in_call > 0 ? in_call : 0) / total);
	}
}

void report_hist_add(uint64_t *buckets, int *lo, int *hi, int64_t d, uint64_t count)
{
	int b = log2_bucket(d);

	buckets[b] += count;
	*lo = b < *lo ? b : *lo;
	*hi = b > *hi ? b : *hi;
}

static void hist_write(struct json_writer *w, const char *name, const uint64_t *buckets,
		       int lo, int hi)
{
	if (hi < 0)
		return;
	json_begin_object(w, NULL);
	json_string(w, "name", name);
	json_string(w, "unit", "ns");
	json_begin_array(w, "buckets");
	for (int b = lo; b <= hi; b++) {
		json_begin_object(w, NULL);
		json_int(w, "le_ns", 1ll << b);
		json_uint(w, "count", buckets[b]);
		json_end_object(w);
	}
	json_end_array(w);
	json_end_object(w);
}

static void call_hist_json(const struct report_context *ctx, const char *name,
			   const struct call_durations *c)
{
	hist_write(ctx->json, name, c->hist, c->hist_lo, c->hist_hi);
}

static void row_json(struct json_writer *w, const struct latency_row *r)
{
	json_begin_object(w, NULL);
	json_string(w, "name", r->name);
	json_int(w, "count", r->count);
	json_int(w, "p50_ns", r->p50);
	json_int(w, "p90_ns", r->p90);
	json_int(w, "p99_ns", r->p99);
	json_int(w, "total_ns", r->total);
	json_string(w, "dominant", r->dominant);
	json_end_object(w);
}

static void print_row(FILE *out, const struct latency_row *r)
{
	char c[FMT_BUF], a[FMT_BUF], b[FMT_BUF], d[FMT_BUF], t[FMT_BUF];

	fprintf(out, "  %-18s %9s %10s %10s %10s %10s  %s\n", r->name,
		fmt_count(c, sizeof(c), (uint64_t)r->count),
		fmt_duration_ns(a, sizeof(a), (uint64_t)r->p50),
		fmt_duration_ns(b, sizeof(b), (uint64_t)r->p90),
		fmt_duration_ns(d, sizeof(d), (uint64_t)r->p99),
		fmt_duration_ns(t, sizeof(t), (uint64_t)r->total), r->dominant);
}

/* Mean queueing of the requests, from request_queueing (-1: no view);
 * *arrivals: how many of them were ready when their data arrived (the req
 * source) rather than at a poll return. Counted by the diagnosis's pass
 * over the requests when it made one (struct diagnosis, queued). */
static double queue_mean(const struct report_context *ctx, int64_t *n, int64_t *arrivals)
{
	char where[1024], sql[1400];
	sqlite3_stmt *st;
	double mean = -1;

	*n = *arrivals = 0;
	if (!report_has_object(ctx->db, "request_queueing"))
		return -1;
	if (ctx->diag && ctx->diag->queued >= 0) {
		if (ctx->diag->queued == 0)
			return -1;
		*n = ctx->diag->queued;
		*arrivals = ctx->diag->queued_on_arrival;
		return (double)ctx->diag->queued_ns / (double)ctx->diag->queued;
	}
	snprintf(sql, sizeof(sql), "SELECT count(*), avg(queue_ns),"
		 " sum(ready_source = 'data_ready') FROM %s WHERE %s",
		 report_requests_from(ctx->scope, "request_queueing"),
		 report_scope_sql(where, sizeof(where), "pid", "pickup_tid", "ready_ts", "ready_ts"));
	st = report_prepare(ctx, sql);
	if (st && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0) {
		*n = sqlite3_column_int64(st, 0);
		mean = sqlite3_column_double(st, 1);
		*arrivals = sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	return mean;
}

/* The waits source's kernel sums per class (thread_metrics kind waits):
 * every blocked wait of the scope's threads, counted with its duration in
 * a log2 histogram, so a default recording (no system calls) still has
 * latencies. Percentiles are bucket upper bounds. */
#define WAIT_CLASSES_MAX 8
#define METRIC_BUCKETS   32

struct wait_row {
	char name[16];
	uint64_t waits, total;
	uint64_t hist[METRIC_BUCKETS];
};

static uint64_t bucket_upper_ns(int b)
{
	return b >= METRIC_BUCKETS - 1 ? (1ull << 41) : 1ull << (b + 10);
}

static uint64_t wait_percentile(const struct wait_row *w, int pct)
{
	uint64_t want = (w->waits * (uint64_t)pct + 99) / 100, seen = 0;

	for (int b = 0; b < METRIC_BUCKETS; b++) {
		seen += w->hist[b];
		if (seen >= want && want > 0)
			return bucket_upper_ns(b);
	}
	return 0;
}

static int load_waits(const struct report_context *ctx, struct wait_row *rows, int max)
{
	char where[1024], sql[4096], hist[1024] = "";
	sqlite3_stmt *st;
	int n = 0;

	for (int b = 0; b < METRIC_BUCKETS; b++)
		snprintf(hist + strlen(hist), sizeof(hist) - strlen(hist), ", sum(h%d)", b);
	snprintf(sql, sizeof(sql), "SELECT class, sum(calls), sum(total_ns)%s FROM thread_metrics"
		 " WHERE kind = 'waits' AND class <> 'futex_wake' AND %s GROUP BY class"
		 " ORDER BY 3 DESC LIMIT %d", hist,
		 report_scope_sql(where, sizeof(where), "pid", "tid", "window_start", "window_end"),
		 max);
	st = report_prepare(ctx, sql);
	if (!st)
		return -1;
	while (n < max && sqlite3_step(st) == SQLITE_ROW) {
		struct wait_row *w = &rows[n++];
		memset(w, 0, sizeof(*w));
		snprintf(w->name, sizeof(w->name), "%s", sqlite3_column_text(st, 0) ?
			 (const char *)sqlite3_column_text(st, 0) : "?");
		w->waits = (uint64_t)sqlite3_column_int64(st, 1);
		w->total = (uint64_t)sqlite3_column_int64(st, 2);
		for (int b = 0; b < METRIC_BUCKETS; b++)
			w->hist[b] = (uint64_t)sqlite3_column_int64(st, 3 + b);
	}
	sqlite3_finalize(st);
	return n;
}

static void waits_json(struct json_writer *w, const struct wait_row *rows, int n)
{
	json_begin_array(w, "waits");
	for (int i = 0; i < n; i++) {
		json_begin_object(w, NULL);
		json_string(w, "class", rows[i].name);
		json_uint(w, "waits", rows[i].waits);
		json_uint(w, "p50_ns", wait_percentile(&rows[i], 50));
		json_uint(w, "p90_ns", wait_percentile(&rows[i], 90));
		json_uint(w, "p99_ns", wait_percentile(&rows[i], 99));
		json_uint(w, "total_ns", rows[i].total);
		json_end_object(w);
	}
	json_end_array(w);
}

static void waits_text(FILE *out, const struct wait_row *rows, int n, int scaled)
{
	char a[FMT_BUF], b[FMT_BUF], c[FMT_BUF], t[FMT_BUF];

	if (n == 0)
		return;
	if (scaled)   /* format 1.12: sched windows (thread_metrics.scale) */
		fprintf(out, "  Blocking waits (kernel sums of the waits source: every blocked wait in"
			" the sched windows, scaled to their seconds; percentiles are log2 bucket"
			" bounds):\n");
	else
		fprintf(out, "  Blocking waits (kernel sums of the waits source: every blocked wait;"
			" percentiles are log2 bucket bounds):\n");
	fprintf(out, "  %-18s %9s %10s %10s %10s %10s\n", "class", "waits", "p50 <=", "p90 <=",
		"p99 <=", "total");
	for (int i = 0; i < n; i++)
		fprintf(out, "  %-18s %9llu %10s %10s %10s %10s\n", rows[i].name,
			(unsigned long long)rows[i].waits,
			fmt_duration_ns(a, sizeof(a), wait_percentile(&rows[i], 50)),
			fmt_duration_ns(b, sizeof(b), wait_percentile(&rows[i], 90)),
			fmt_duration_ns(c, sizeof(c), wait_percentile(&rows[i], 99)),
			fmt_duration_ns(t, sizeof(t), rows[i].total));
}

/* What the section shows, loaded once for text or JSON. */
struct latency {
	struct wait_row waits[WAIT_CLASSES_MAX];
	int nwaits;
	struct latency_row req, sys[64];
	int nreq, nsys, top;
	struct slow_path slow;    /* where the slowest tenth's time went */
	int64_t queued;           /* requests in request_queueing */
	int64_t arrivals;         /* ... of them ready at their data's arrival */
	double queue_mean;        /* their mean queueing, -1 without the view */
	struct req_hist req_hist; /* the requests' service times */
};

static const char *const waker_names[SW_N] = { "thread", "process", "interrupt", "none" };

/* latency.requests.slow: the serving threads' states during the slowest
 * requests (query/slow_path.c). */
static void slow_json(struct json_writer *w, const struct slow_path *s)
{
	if (s->requests == 0 || s->covered == 0) {
		json_null(w, "slow");
		return;
	}
	json_begin_object(w, "slow");
	json_uint(w, "requests", s->requests);
	json_int(w, "threshold_ns", s->threshold_ns);
	json_uint(w, "service_ns", s->span_ns);
	json_uint(w, "running_ns", s->running);
	json_uint(w, "runnable_ns", s->runnable);
	json_uint(w, "blocked_ns", s->blocked);
	json_begin_object(w, "blocked_by_class");
	for (int k = 1; k < SLOW_PATH_CLASSES; k++)
		if (s->by_class[k])
			json_uint(w, slow_path_class_name(s, k), s->by_class[k]);
	json_end_object(w);
	json_begin_object(w, "woken_by");
	for (int k = 0; k < SW_N; k++)
		json_uint(w, waker_names[k], s->woken_by[k]);
	json_end_object(w);
	json_end_object(w);
}

/* "Slowest 10%: ..." under the requests row. */
static void slow_text(FILE *out, const struct slow_path *s)
{
	char a[FMT_BUF], p[4][FMT_BUF];
	int order[SLOW_PATH_CLASSES], n = 0;

	if (s->requests == 0 || s->covered == 0)
		return;
	fprintf(out, "  slowest %llu requests (service >= %s), their serving threads: running %s,"
		" runnable %s, blocked %s\n", (unsigned long long)s->requests,
		fmt_duration_ns(a, sizeof(a), (uint64_t)s->threshold_ns),
		fmt_percent(p[0], sizeof(p[0]), s->running, s->covered),
		fmt_percent(p[1], sizeof(p[1]), s->runnable, s->covered),
		fmt_percent(p[2], sizeof(p[2]), s->blocked, s->covered));
	if (s->blocked == 0)
		return;
	for (int k = 1; k < SLOW_PATH_CLASSES; k++)
		if (s->by_class[k])
			order[n++] = k;
	for (int i = 1; i < n; i++) /* by time, descending */
		for (int j = i; j > 0 && s->by_class[order[j]] > s->by_class[order[j - 1]]; j--) {
			int t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	fprintf(out, "    blocked on:");
	for (int i = 0; i < n && i < 4; i++)
		fprintf(out, "%s %s %s", i ? "," : "", slow_path_class_name(s, order[i]),
			fmt_percent(p[3], sizeof(p[3]), s->by_class[order[i]], s->covered));
	fprintf(out, "; woken by another thread %s, another process %s, an interrupt %s,"
		" not seen %s\n",
		fmt_percent(p[0], sizeof(p[0]), s->woken_by[SW_THREAD], s->blocked),
		fmt_percent(p[1], sizeof(p[1]), s->woken_by[SW_PROCESS], s->blocked),
		fmt_percent(p[2], sizeof(p[2]), s->woken_by[SW_INTERRUPT], s->blocked),
		fmt_percent(p[3], sizeof(p[3]), s->woken_by[SW_NONE], s->blocked));
}

static void requests_json(struct json_writer *w, const struct latency *l)
{
	if (l->nreq == 0) {
		json_null(w, "requests");
		return;
	}
	json_begin_object(w, "requests");
	json_int(w, "count", l->req.count);
	json_int(w, "p50_ns", l->req.p50);
	json_int(w, "p90_ns", l->req.p90);
	json_int(w, "p99_ns", l->req.p99);
	json_int(w, "total_ns", l->req.total);
	if (l->req.followed >= 0) {   /* weighted: windows */
		json_int(w, "followed", l->req.followed);
		json_bool(w, "weighted_percentiles", l->req.weighted_pct);
	}
	json_string(w, "dominant", l->req.dominant);
	if (l->queue_mean >= 0)
		json_double(w, "queue_mean_ns", l->queue_mean);
	else
		json_null(w, "queue_mean_ns");
	slow_json(w, &l->slow);
	json_end_object(w);
}

static void write_json(const struct report_context *ctx, const struct latency *l)
{
	struct json_writer *w = ctx->json;

	json_begin_object(w, "latency");
	requests_json(w, l);
	waits_json(w, l->waits, l->nwaits);
	json_begin_array(w, "syscalls");
	for (int i = 0; i < l->nsys; i++)
		row_json(w, &l->sys[i]);
	json_end_array(w);
	json_begin_array(w, "histograms");
	if (l->nreq > 0)
		hist_write(ctx->json, "requests", l->req_hist.b, l->req_hist.lo, l->req_hist.hi);
	for (int i = 0; i < l->nsys && i < 5; i++)
		call_hist_json(ctx, l->sys[i].name, &ctx->calls->by_nr[i]);
	json_end_array(w);
	json_end_object(w);
}

static void print_requests(const struct report_context *ctx, const struct latency *l)
{
	char a[FMT_BUF];

	if (l->nreq == 0) {
		report_none(ctx, "requests on sockets",
			    report_source_on(ctx, "syscall") ? "syscall" : "req");
		return;
	}
	fprintf(ctx->out, "  Requests on sockets (request_spans):\n");
	fprintf(ctx->out, "  %-18s %9s %10s %10s %10s %10s  %s\n", "", "count", "p50", "p90",
		"p99", "total", "");
	print_row(ctx->out, &l->req);
	if (l->req.followed >= 0)
		fprintf(ctx->out, "  weighted: the %s requests followed in the req source's windows,"
			" each standing for its window's period over its length (request_windows),"
			" give the count, total%s above; the lines below are of those followed\n",
			fmt_count(a, sizeof(a), (uint64_t)l->req.followed),
			l->req.weighted_pct ? " and percentiles" : " (percentiles: of those followed,"
			" too many to weigh in the report's memory)");
	if (l->queue_mean >= 0)
		fprintf(ctx->out, "  queueing before pickup: mean %s over %lld requests"
			" (request_queueing%s)\n",
			fmt_duration_ns(a, sizeof(a), (uint64_t)l->queue_mean), (long long)l->queued,
			l->arrivals ? ": from their data's arrival" : "");
	slow_text(ctx->out, &l->slow);
}

static void print_text(const struct report_context *ctx, const struct latency *l)
{
	fprintf(ctx->out, "\nLatency breakdown\n");
	print_requests(ctx, l);
	waits_text(ctx->out, l->waits, l->nwaits, l->nwaits &&
		   db_query_int(ctx->db, "SELECT count(*) > 0 FROM thread_metrics"
				" WHERE scale IS NOT NULL", 0));
	if (l->nsys == 0) {
		report_none(ctx, "system calls", "syscall");
		return;
	}
	fprintf(ctx->out, "  System calls (top %d by total time):\n", l->top);
	fprintf(ctx->out, "  %-18s %9s %10s %10s %10s %10s  %s\n", "name", "count", "p50", "p90",
		"p99", "total", "dominant component");
	for (int i = 0; i < l->nsys; i++)
		print_row(ctx->out, &l->sys[i]);
}

void report_latency_free(struct latency *l)
{
	if (!l)
		return;
	free(l);
}

/* The requests' row, its dominant component and the slowest requests'
 * path: one pass over thread_state_rows serves the two when there are
 * spans. 0 or -1. */
static int load_requests(const struct report_context *ctx, struct latency *l)
{
	struct request_read *spans = NULL;
	const struct slow_candidate *cands;
	int64_t floor_ns = 0;
	struct slow_walk *walk = NULL;
	size_t ncands;
	int rc = 0, walked = 0, dominant;

	l->queue_mean = queue_mean(ctx, &l->queued, &l->arrivals);
	l->nreq = request_row(ctx, &l->req, &l->req_hist, &floor_ns, &spans);
	if (l->nreq < 0)
		return -1;
	/* the slow requests are picked from the spans when there are some */
	cands = report_requests_candidates(spans, &ncands);
	/* the slow path and the dominant component are of the requests
	 * followed (the spans), not weighted */
	if (l->nreq > 0)
		rc = slow_path_begin(ctx->db, ctx->scope, (uint64_t)(l->req.followed >= 0 ?
				     l->req.followed : l->req.count), floor_ns, cands,
				     ncands, &l->slow, &walk);
	if (rc == 0 && l->nreq > 0) {
		dominant = report_request_dominant(ctx, spans, l->req.followed >= 0 ?
						   l->req.followed_total : l->req.total, walk, &walked,
						   l->req.dominant, sizeof(l->req.dominant));
		if (dominant == -2)
			rc = -1;
		else if (dominant < 0)
			snprintf(l->req.dominant, sizeof(l->req.dominant), "unknown (no sched source)");
	}
	if (rc == 0 && walk && !walked)
		rc = slow_path_walk(walk, ctx->db);
	slow_path_end(walk);
	report_requests_read_free(spans);
	return rc < 0 ? -1 : 0;
}

struct latency *report_latency_load(const struct report_context *ctx)
{
	struct latency *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->top = ctx->opts->top < 64 ? ctx->opts->top : 64;
	if (load_requests(ctx, l) < 0) {
		report_latency_free(l);
		return NULL;
	}
	l->nsys = call_rows(ctx, l->sys, l->top);
	l->nwaits = report_has_object(ctx->db, "thread_metrics") ?
		    load_waits(ctx, l->waits, WAIT_CLASSES_MAX) : 0;
	if (l->nwaits < 0) {
		report_latency_free(l);
		return NULL;
	}
	set_dominant(ctx, l->sys, l->nsys);
	return l;
}

int report_section_latency(const struct report_context *ctx)
{
	if (!ctx->latency)
		return -1;
	if (ctx->json)
		write_json(ctx, ctx->latency);
	else
		print_text(ctx, ctx->latency);
	return 0;
}
