/* report_threads.c - per-thread time shares (end of "Contention and
 * scheduling"): where each thread of the scope spent the window —
 * running, runnable, and blocked by wait class — as shares of the time its
 * scheduler events cover (the totals the diagnosis computed). In JSON:
 * "threads" and "timeline": for the threads with most observed time, the
 * window cut into TIMELINE_BUCKETS equal buckets, each given the state
 * that filled most of it, adjacent buckets of one state merged into spans.
 * One streaming pass over thread_state_rows, no sort, bounded output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "util/fmt.h"
#include "report_sections.h"

#define MAX_TIMELINE_THREADS 32
#define TIMELINE_BUCKETS 2000

enum { T_RUNNING, T_RUNNABLE, T_IO, T_FUTEX, T_POLL, T_SLEEP, T_NET, T_OTHER, T_UNKNOWN,
       T_N };

static const char *const state_names[T_N] = { "running", "runnable", "io", "futex", "poll",
					      "sleep", "net", "other", "unknown" };

static void split(const struct diag_thread *t, uint64_t ns[T_N])
{
	ns[T_RUNNING] = t->running;
	ns[T_RUNNABLE] = t->runnable;
	ns[T_IO] = t->wait[DC_BLOCK_IO];
	ns[T_FUTEX] = t->wait[DC_FUTEX];
	ns[T_POLL] = t->wait[DC_POLL];
	ns[T_SLEEP] = t->wait[DC_SLEEP];
	ns[T_NET] = t->wait[DC_NET] + t->wait[DC_ACCEPT];
	ns[T_OTHER] = t->wait[DC_OTHER];
	ns[T_UNKNOWN] = t->wait[DC_UNKNOWN];
}

static uint64_t covered(const struct diag_thread *t)
{
	return t->running + t->runnable + t->blocked;
}

static int by_covered(const void *pa, const void *pb)
{
	const struct diag_thread *a = *(const struct diag_thread *const *)pa;
	const struct diag_thread *b = *(const struct diag_thread *const *)pb;

	if (covered(a) != covered(b))
		return covered(a) > covered(b) ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

/* The threads with scheduler time, most first. NULL if none or no memory. */
static const struct diag_thread **sorted_threads(const struct report_context *ctx, size_t *n)
{
	const struct diag_thread **v = malloc((ctx->diag->nthreads + 1) * sizeof(*v));

	*n = 0;
	for (size_t i = 0; v && i < ctx->diag->nthreads; i++)
		if (covered(&ctx->diag->threads[i]) > 0)
			v[(*n)++] = &ctx->diag->threads[i];
	if (v)
		qsort(v, *n, sizeof(*v), by_covered);
	return v;
}

static const char *comm_of(const struct report_context *ctx, const struct diag_thread *t)
{
	const char *name = names_thread(ctx->names, t->pid, t->tid);

	return name ? name : "?";
}

static void thread_json(const struct report_context *ctx, const struct diag_thread *t)
{
	static const char *const keys[T_N] = { "running_ns", "runnable_ns", "io_ns", "futex_ns",
					       "poll_ns", "sleep_ns", "net_ns", "other_ns", "unknown_ns" };
	struct json_writer *w = ctx->json;
	uint64_t ns[T_N];

	split(t, ns);
	json_begin_object(w, NULL);
	json_int(w, "pid", t->pid);
	json_int(w, "tid", t->tid);
	json_string(w, "comm", comm_of(ctx, t));
	json_uint(w, "observed_ns", covered(t));
	for (int k = 0; k < T_N; k++)
		json_uint(w, keys[k], ns[k]);
	json_end_object(w);
}

/* Timeline state of a thread_state_rows row. The timeline keeps to the
 * contract's seven states: socket waits show as "other" there (the
 * threads' net_ns has them). */
static int row_state(int64_t state_code, int64_t wait_class_code)
{
	static const int by_class[7] = { T_OTHER, T_IO, T_FUTEX, T_POLL, T_SLEEP, T_OTHER,
					 T_OTHER };

	if (state_code == 0 || state_code == 1)
		return (int)state_code;
	return wait_class_code >= 0 && wait_class_code < 7 ? by_class[wait_class_code] : T_OTHER;
}

struct buckets {
	uint64_t start, width;         /* bucket b is [start + b*width, start + (b+1)*width) */
	uint64_t (*ns)[TIMELINE_BUCKETS][T_N];   /* per timeline thread */
	int nthreads;
};

static void add_interval(struct buckets *b, int thread, int state, uint64_t s, uint64_t e)
{
	uint64_t first = (s - b->start) / b->width, last = (e - 1 - b->start) / b->width;

	for (uint64_t k = first; k <= last && k < TIMELINE_BUCKETS; k++) {
		uint64_t lo = b->start + k * b->width, hi = lo + b->width;
		b->ns[thread][k][state] += (e < hi ? e : hi) - (s > lo ? s : lo);
	}
}

static int fill_buckets(const struct report_context *ctx, const struct diag_thread **top,
			struct buckets *b)
{
	char where[1024], sql[2048];
	sqlite3_stmt *st;

	snprintf(sql, sizeof(sql), "SELECT tid, state_code, wait_class_code, max(start_ts, :from),"
		 " min(start_ts + duration, :to) FROM thread_state_rows WHERE %s",
		 report_scope_sql(where, sizeof(where), "pid", "tid", "start_ts",
				  "(start_ts + duration)"));
	st = report_prepare(ctx, sql);
	if (!st)
		return -1;
	while (sqlite3_step(st) == SQLITE_ROW) {
		uint32_t tid = (uint32_t)sqlite3_column_int64(st, 0);
		int64_t s = sqlite3_column_int64(st, 3), e = sqlite3_column_int64(st, 4);
		for (int i = 0; i < b->nthreads; i++)
			if (top[i]->tid == tid && e > s && (uint64_t)s >= b->start)
				add_interval(b, i, row_state(sqlite3_column_int64(st, 1),
							     sqlite3_column_int64(st, 2)),
					     (uint64_t)s, (uint64_t)e);
	}
	sqlite3_finalize(st);
	return 0;
}

static int bucket_state(const uint64_t ns[T_N])
{
	int best = -1;

	for (int k = 0; k < T_N; k++)
		if (ns[k] > 0 && (best < 0 || ns[k] > ns[best]))
			best = k;
	return best;
}

static void span_json(struct json_writer *w, uint64_t s, uint64_t e, int state)
{
	json_begin_array(w, NULL);
	json_uint(w, NULL, s);
	json_uint(w, NULL, e);
	json_string(w, NULL, state_names[state]);
	json_end_array(w);
}

/* ---- user probe calls on the timeline (format 1.5) ---------------------- */

struct probe_span {
	uint64_t start, end;      /* first call's start, latest end among them */
	int64_t probe;            /* the lowest probe id among them */
	int64_t calls;            /* calls merged into this span */
};

struct probe_lane {
	struct probe_span *v;
	size_t n;
};

/* The probe calls (and USDT hits) of each timeline thread in scope, in
 * time order, merged per timeline bucket (at most TIMELINE_BUCKETS spans
 * a thread, whatever the calls). 0 or -1. */
static int load_probe_lanes(const struct report_context *ctx, const struct diag_thread **top,
			    int nthreads, const struct buckets *b, struct probe_lane *lanes)
{
	char where[1024], sql[1600];

	if (!report_has_object(ctx->db, "probe_hits"))
		return 0;
	for (int i = 0; i < nthreads; i++) {
		sqlite3_stmt *st;

		snprintf(sql, sizeof(sql), "SELECT min(ts), max(ts + duration), min(probe_id),"
			 " count(*) FROM probe_hits WHERE tid = %u AND pid = %u AND %s"
			 " GROUP BY (ts - %llu) / %llu ORDER BY 1", top[i]->tid, top[i]->pid,
			 report_scope_sql(where, sizeof(where), "pid", "tid", "ts", "ts + duration"),
			 (unsigned long long)b->start, (unsigned long long)b->width);
		st = report_prepare(ctx, sql);
		if (!st)
			return -1;
		while (sqlite3_step(st) == SQLITE_ROW) {
			struct probe_span *grown;

			if ((lanes[i].n & (lanes[i].n - 1)) == 0) { /* 0, 1, 2, 4 ...: grow */
				grown = realloc(lanes[i].v, (lanes[i].n ? 2 * lanes[i].n : 1) *
							    sizeof(*grown));
				if (!grown) {
					sqlite3_finalize(st);
					return -1;
				}
				lanes[i].v = grown;
			}
			lanes[i].v[lanes[i].n++] = (struct probe_span){
				(uint64_t)sqlite3_column_int64(st, 0),
				(uint64_t)sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
				sqlite3_column_int64(st, 3) };
		}
		sqlite3_finalize(st);
	}
	return 0;
}

static void probes_json(struct json_writer *w, const struct probe_lane *lane)
{
	if (!lane || lane->n == 0)
		return;
	json_begin_array(w, "probes");
	for (size_t k = 0; k < lane->n; k++) {
		json_begin_array(w, NULL);
		json_uint(w, NULL, lane->v[k].start);
		json_uint(w, NULL, lane->v[k].end);
		json_int(w, NULL, lane->v[k].probe);
		json_int(w, NULL, lane->v[k].calls);
		json_end_array(w);
	}
	json_end_array(w);
}

static void spans_json(const struct report_context *ctx, const struct diag_thread *t,
		       const struct buckets *b, int i, uint64_t end,
		       const struct probe_lane *lane)
{
	struct json_writer *w = ctx->json;
	int cur = -1;
	uint64_t cur_start = 0;

	json_begin_object(w, NULL);
	json_int(w, "pid", t->pid);
	json_int(w, "tid", t->tid);
	json_string(w, "comm", comm_of(ctx, t));
	json_begin_array(w, "spans");
	for (int k = 0; k <= TIMELINE_BUCKETS; k++) {
		int state = k < TIMELINE_BUCKETS ? bucket_state(b->ns[i][k]) : -1;
		uint64_t at = b->start + (uint64_t)k * b->width;
		if (state == cur)
			continue;
		if (cur >= 0)
			span_json(w, cur_start, at < end ? at : end, cur);
		cur = state;
		cur_start = at;
	}
	json_end_array(w);
	probes_json(w, lane);
	json_end_object(w);
}

static int timeline_json(const struct report_context *ctx, const struct diag_thread **top,
			 size_t n)
{
	const struct report_scope *s = ctx->scope;
	uint64_t end = s->to > s->capture_end ? s->capture_end : s->to;
	struct buckets b = { .start = s->from, .nthreads = n < MAX_TIMELINE_THREADS ?
			     (int)n : MAX_TIMELINE_THREADS };
	struct json_writer *w = ctx->json;
	struct probe_lane *lanes;
	int rc = 0;

	b.width = end > s->from ? (end - s->from + TIMELINE_BUCKETS - 1) / TIMELINE_BUCKETS : 1;
	if (b.width == 0)
		b.width = 1;
	b.ns = calloc((size_t)b.nthreads + 1, sizeof(*b.ns));
	lanes = calloc((size_t)b.nthreads + 1, sizeof(*lanes));
	if (!b.ns || !lanes) {
		free(b.ns);
		free(lanes);
		return -1;
	}
	if (b.nthreads > 0)
		rc = fill_buckets(ctx, top, &b);
	if (rc == 0 && b.nthreads > 0)
		rc = load_probe_lanes(ctx, top, b.nthreads, &b, lanes);
	json_begin_object(w, "timeline");
	json_uint(w, "start_ns", s->from);
	json_uint(w, "end_ns", end);
	json_uint(w, "bucket_ns", b.width);
	json_begin_array(w, "threads");
	for (int i = 0; rc == 0 && i < b.nthreads; i++)
		spans_json(ctx, top[i], &b, i, end, &lanes[i]);
	json_end_array(w);
	json_end_object(w);
	for (int i = 0; i < b.nthreads; i++)
		free(lanes[i].v);
	free(lanes);
	free(b.ns);
	return rc;
}

static void print_rows(const struct report_context *ctx, const struct diag_thread **v,
		       size_t n)
{
	char p[T_N][FMT_BUF], obs[FMT_BUF];
	uint64_t ns[T_N];

	fprintf(ctx->out, "  Time shares per thread (of the time its scheduler events cover):\n");
	fprintf(ctx->out, "  %7s %7s %-16s %9s %7s %7s %7s %7s %7s %7s %7s %7s\n", "pid", "tid",
		"comm", "observed", "running", "runq", "io", "futex", "poll", "sleep", "net",
		"other");
	for (size_t i = 0; i < n && i < (size_t)ctx->opts->top; i++) {
		split(v[i], ns);
		for (int k = 0; k < T_N; k++)
			fmt_percent(p[k], sizeof(p[k]), ns[k], covered(v[i]));
		fprintf(ctx->out, "  %7u %7u %-16s %9s %7s %7s %7s %7s %7s %7s %7s %7s\n",
			v[i]->pid, v[i]->tid, comm_of(ctx, v[i]),
			fmt_duration_ns(obs, sizeof(obs), covered(v[i])), p[0], p[1], p[2], p[3],
			p[4], p[5], p[6], p[7]);
	}
	if (n > (size_t)ctx->opts->top)
		fprintf(ctx->out, "  ... %zu more threads (--top)\n", n - (size_t)ctx->opts->top);
}

int report_section_threads(const struct report_context *ctx)
{
	size_t n = 0;
	const struct diag_thread **v = sorted_threads(ctx, &n);
	int rc = 0;

	if (!v)
		return -1;
	if (ctx->json) {
		json_begin_array(ctx->json, "threads");
		for (size_t i = 0; i < n; i++)
			thread_json(ctx, v[i]);
		json_end_array(ctx->json);
		rc = timeline_json(ctx, v, n);
	} else if (n == 0) {
		report_none(ctx, "thread states", "sched");
	} else {
		print_rows(ctx, v, n);
	}
	free(v);
	return rc;
}
