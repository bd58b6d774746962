/* diagnose_gc.c - "gc_pauses": the pauses of a runtime's garbage
 * collector (gc_pauses, paired at import from the runtime's GC begin/end
 * probes: import/load_gc.c) when they explain the time of a process.
 *
 * Per process and runtime, its pauses in the scope, clipped to the
 * window: their count, total, nearest-rank p99 and maximum. The known
 * collectors stop the process's application threads while they run
 * (CPython's collector holds the GIL, on the thread that triggered it,
 * which is the thread running Python; HotSpot's pauses are safepoints;
 * Go's are stops of the world),
 * so the score is the pause total over the process's observed time (its
 * longest-observed thread: how long the capture saw the process live), not
 * over the sum of its threads. Claimed at 5% like every cause. Where the
 * capture has requests (-e syscall), the share of the process's slowest
 * tenth of requests that overlap a pause says whether the pauses are in
 * the requests' way; the share of the process's CPU samples taken inside
 * pauses says how much of its CPU was the collector's (a compute-bound
 * verdict on the same process then ranks after GC: diagnose.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "diagnose.h"
#include "util/fmt.h"

#define MIN_SCORE      0.05
#define MAX_PROCESSES  3      /* causes claimed at most, most pause time first */

struct pause {
	int64_t start, end;
};

struct gc_group {
	int64_t pid;
	char runtime[32];
	uint64_t total;
	struct pause *pauses;     /* by start */
	int64_t *max_end;         /* max_end[i]: latest end of pauses[0..i] */
	uint64_t *durations;      /* clipped, ascending */
	size_t n;
};

static void group_free(struct gc_group *g)
{
	free(g->pauses);
	free(g->max_end);
	free(g->durations);
	memset(g, 0, sizeof(*g));
}

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The pauses of one process and runtime in scope, clipped to the window. */
static int load_group(const struct diag_input *in, struct gc_group *g)
{
	char where[1024], sql[1400];
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;

	snprintf(sql, sizeof(sql), "SELECT start_ts, end_ts FROM gc_pauses WHERE pid = %lld AND"
		 " runtime = ?99 AND %s ORDER BY start_ts", (long long)g->pid,
		 report_scope_sql(where, sizeof(where), "pid", "tid", "start_ts", "end_ts"));
	if (!(st = diag_prepare(in, sql)))
		return -1;
	db_bind_text(st, 99, g->runtime);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t s = sqlite3_column_int64(st, 0), e = sqlite3_column_int64(st, 1);

		if (s < (int64_t)in->scope->from)
			s = (int64_t)in->scope->from;
		if (e > (int64_t)in->scope->to)
			e = (int64_t)in->scope->to;
		if (e < s)
			continue;
		if (g->n == cap) {
			size_t c = cap ? cap * 2 : 64;
			struct pause *p = realloc(g->pauses, c * sizeof(*p));
			int64_t *m = p ? realloc(g->max_end, c * sizeof(*m)) : NULL;
			uint64_t *d = m ? realloc(g->durations, c * sizeof(*d)) : NULL;

			if (p)
				g->pauses = p;
			if (m)
				g->max_end = m;
			if (!d) {
				sqlite3_finalize(st);
				return -1;
			}
			g->durations = d;
			cap = c;
		}
		g->pauses[g->n] = (struct pause){ s, e };
		g->max_end[g->n] = g->n && g->max_end[g->n - 1] > e ? g->max_end[g->n - 1] : e;
		g->durations[g->n++] = (uint64_t)(e - s);
		g->total += (uint64_t)(e - s);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return -1;
	if (g->n > 1)
		qsort(g->durations, g->n, sizeof(g->durations[0]), by_u64);
	return 0;
}

/* 1 if a pause of the group overlaps [start, end). */
static int overlaps(const struct gc_group *g, int64_t start, int64_t end)
{
	size_t lo = 0, hi = g->n;

	while (lo < hi) {   /* pauses starting before end: [0, lo) */
		size_t mid = (lo + hi) / 2;
		if (g->pauses[mid].start < end)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && g->max_end[lo - 1] > start;
}

/* Share (%) of the process's slowest tenth of requests in scope that
 * overlap a pause; NAN when it has no requests. */
static double slow_overlap(const struct diag_input *in, const struct gc_group *g,
			   int64_t *slow)
{
	char where[1024], sql[1600];
	int64_t requests, hit = 0;
	sqlite3_stmt *st;

	*slow = 0;
	if (!report_has_object(in->db, "request_spans"))
		return NAN;
	report_scope_sql(where, sizeof(where), "pid", "CAST(tids AS INTEGER)", "start_ts",
			 "end_ts");
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM request_spans WHERE pid = %lld AND %s"
		 " AND service_ns IS NOT NULL", (long long)g->pid, where);
	if (!(st = diag_prepare(in, sql)))
		return NAN;
	requests = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	if (requests <= 0)
		return NAN;
	snprintf(sql, sizeof(sql), "SELECT start_ts, end_ts FROM request_spans WHERE pid = %lld"
		 " AND %s AND service_ns IS NOT NULL ORDER BY service_ns DESC LIMIT %lld",
		 (long long)g->pid, where, (long long)(requests / 10 ? requests / 10 : 1));
	if (!(st = diag_prepare(in, sql)))
		return NAN;
	while (sqlite3_step(st) == SQLITE_ROW) {
		(*slow)++;
		hit += overlaps(g, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1));
	}
	sqlite3_finalize(st);
	return *slow ? 100.0 * (double)hit / (double)*slow : NAN;
}

/* The process's CPU samples in scope, and those taken inside a pause of
 * the group (the collector's CPU, or the process stopped by it). */
static void samples_in_pauses(const struct diag_input *in, const struct gc_group *g,
			      int64_t *all, int64_t *inside)
{
	char where[1024], sql[1400];
	sqlite3_stmt *st;

	*all = *inside = 0;
	snprintf(sql, sizeof(sql), "SELECT ts FROM samples WHERE pid = %lld AND %s",
		 (long long)g->pid, report_scope_sql(where, sizeof(where), "pid", "tid", "ts", "ts"));
	if (!(st = diag_prepare(in, sql)))
		return;
	while (sqlite3_step(st) == SQLITE_ROW) {
		int64_t ts = sqlite3_column_int64(st, 0);

		(*all)++;
		*inside += overlaps(g, ts, ts + 1);
	}
	sqlite3_finalize(st);
}

/* How long the capture saw the process: its longest-observed thread. */
static uint64_t process_observed(const struct diag_input *in, int64_t pid)
{
	uint64_t longest = 0;

	for (size_t i = 0; i < in->nthreads; i++)
		if (in->threads[i].pid == (uint32_t)pid && in->threads[i].observed > longest)
			longest = in->threads[i].observed;
	return longest ? longest : diag_scope_ns(in);
}

/* Whether pid's pauses were inferred (gc_proxy.c) rather than probed. */
static int inferred(const struct diag_input *in, int64_t pid)
{
	char sql[160];

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM gc_pauses WHERE pid = %lld AND"
		 " source = 'proxy'", (long long)pid);
	return db_query_int(in->db, sql, 0) > 0;
}

static void add_cause(const struct diag_input *in, struct diagnosis *d, struct gc_group *g)
{
	char comm[64], tot[FMT_BUF], p99t[FMT_BUF], maxt[FMT_BUF], obs[FMT_BUF], tail[64] = "";
	uint64_t observed = process_observed(in, g->pid);
	uint64_t p99 = g->durations[(size_t)ceil(0.99 * (double)g->n) - 1];
	uint64_t max = g->durations[g->n - 1];
	int64_t slow, samples, inside;
	double score = observed ? (double)g->total / (double)observed : 0, pct;
	struct diag_cause *c;

	if (score < MIN_SCORE || !diag_material(in, g->total) ||
	    !(c = diag_add_cause(d, "gc_pauses")))
		return;
	pct = slow_overlap(in, g, &slow);
	samples_in_pauses(in, g, &samples, &inside);
	c->score = score > 1 ? 1 : score;
	c->key_name = "pause_total";
	c->key_value = (double)g->total;
	c->key_unit = "ns";
	c->sources = "probe,sched";
	c->inferred = inferred(in, g->pid);
	if (c->inferred)
		c->sources = "sched (proxy)";
	diag_comm(in, (uint32_t)g->pid, (uint32_t)g->pid, comm, sizeof(comm));
	fmt_duration_ns(tot, sizeof(tot), g->total);
	fmt_duration_ns(p99t, sizeof(p99t), p99);
	fmt_duration_ns(maxt, sizeof(maxt), max);
	if (isfinite(pct))
		snprintf(tail, sizeof(tail), ", %.0f%% of slow requests overlap one", pct);
	if (snprintf(c->title, sizeof(c->title), "GC pauses%s: %zu, total %s, p99 %s%s (%s, pid %lld"
		     " %s)", c->inferred ? " (inferred, no GC probes)" : "", g->n, tot, p99t, tail,
		     g->runtime, (long long)g->pid, comm) < 0)
		c->title[0] = '\0';   /* a long name is cut: the subject has it whole */
	diag_int(&c->subject, "pid", g->pid);
	diag_text(&c->subject, "runtime", g->runtime);
	diag_int(&c->subject, "pauses", (int64_t)g->n);
	diag_int(&c->subject, "p99_ns", (int64_t)p99);
	diag_int(&c->subject, "max_ns", (int64_t)max);
	diag_real(&c->subject, "slow_request_overlap_pct", pct);
	diag_int(&c->subject, "cpu_samples", samples);
	diag_int(&c->subject, "cpu_samples_in_pauses", inside);
	diag_evidence(c, "%zu %s collector pauses (gc_pauses) in pid %lld (%s): %s of the %s the"
		      " capture observed it; the longest %s", g->n, g->runtime,
		      (long long)g->pid, comm, tot,
		      fmt_duration_ns(obs, sizeof(obs), observed), maxt);
	if (c->inferred)
		diag_evidence(c, "no GC probes were recorded: the windows are those where HotSpot's"
			      " VM Thread or a GC Thread#N ran while no Java thread did, from a Java"
			      " thread's stop to its release by them (gc_pauses.source proxy); they"
			      " include reaching the safepoint and any non-GC safepoint: record with"
			      " -e gc for the collector's own account");
	if (samples > 0)
		diag_evidence(c, "%lld of its %lld CPU samples (%.0f%%) were taken inside a pause",
			      (long long)inside, (long long)samples,
			      100.0 * (double)inside / (double)samples);
	if (isfinite(pct))
		diag_evidence(c, "%.0f%% of its %lld slowest requests (the slowest tenth) overlap"
			      " a pause", pct, (long long)slow);
}

int diagnose_gc(const struct diag_input *in, struct diagnosis *d)
{
	char where[1024], sql[1400];
	struct gc_group groups[MAX_PROCESSES];
	sqlite3_stmt *st;
	int n = 0, rc = 0;
	int64_t unmatched;

	if (!report_has_object(in->db, "gc_pauses"))
		return 0;
	snprintf(sql, sizeof(sql), "SELECT pid, runtime FROM gc_pauses WHERE %s GROUP BY pid,"
		 " runtime ORDER BY sum(duration) DESC, pid LIMIT %d",
		 report_scope_sql(where, sizeof(where), "pid", "tid", "start_ts", "end_ts"),
		 MAX_PROCESSES);
	if (!(st = diag_prepare(in, sql)))
		return -1;
	memset(groups, 0, sizeof(groups));
	while (sqlite3_step(st) == SQLITE_ROW && n < MAX_PROCESSES) {
		const unsigned char *rt = sqlite3_column_text(st, 1);

		groups[n].pid = sqlite3_column_int64(st, 0);
		snprintf(groups[n].runtime, sizeof(groups[n].runtime), "%s",
			 rt ? (const char *)rt : "?");
		n++;
	}
	sqlite3_finalize(st);
	for (int i = 0; i < n; i++) {
		if (rc == 0 && (rc = load_group(in, &groups[i])) == 0 && groups[i].n > 0)
			add_cause(in, d, &groups[i]);
		group_free(&groups[i]);
	}
	unmatched = db_query_int(in->db, "SELECT coalesce(sum(value), 0) FROM quality WHERE"
				 " source = 'probe' AND key IN ('gc.begin_unmatched',"
				 " 'gc.end_unmatched', 'gc.unrecorded')", 0);
	if (rc == 0 && n > 0 && unmatched > 0)
		diag_caveat(d, "%lld GC begin/end probe hits made no pause (unpaired or not"
			    " recorded: quality probe/gc.*): GC pause totals are low",
			    (long long)unmatched);
	return rc;
}
