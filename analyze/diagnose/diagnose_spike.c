/* diagnose_spike.c - the latency spike window (book 12.1): cut the scope
 * into the windows of thread_time_shares (import --window), measure
 * latency in each (mean request service time from request_spans when the
 * scope has at least 10 requests, else the mean duration of its I/O
 * system calls: families rw, sync and net; sleeps, polls and futex waits
 * are waiting for work, not latency), take
 * the worst window and compare it with the last window before the spike
 * began (the latest earlier window at most 2/3 of the worst's latency).
 *
 * Without a system call source (the default recording) there are neither
 * requests nor calls; the waits source's kernel sums (thread_metrics kind
 * 'waits') give the same measure's blocking part: the mean blocked
 * interval of the I/O classes (vfs_read, vfs_write, net_recv, net_send),
 * every blocking wait counted, none cut off by a minimum length (the
 * offcpu intervals start at 1 ms and would drop the short waits of the
 * quiet windows). Its windows are the recorder's (META waits.window_ns,
 * 1 s): the windows are then the coarser of the two, and a sum or a
 * thread_time_shares row goes whole to the window holding its middle.
 *
 * Verdict, from the ratios worst / baseline of I/O time (uninterruptible
 * waits and socket calls; file read/write time without the sched
 * source) and CPU time (running, else samples): "io" when I/O rose
 * (>= 1.5x, and by a fifth or more of what the two added together) and
 * CPU did not, "cpu" the reverse, "both", or "none". As
 * the book compares each thread with itself, the ratios sum only the
 * threads active in both windows: a process that appears with the spike
 * (a competitor's burst) is counted apart, not taken for the victims'
 * own CPU or I/O. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "diagnose.h"
#include "util/fmt.h"

#define MAX_WINDOWS DIAG_SPIKE_MAX_WINDOWS
#define RISE 1.5
#define SHARE_OF_RISE 0.2 /* of the time I/O and CPU added together */
#define MIN_REQUESTS 10
#define RATIO_CAP 1000.0

struct window_row {
	double io, cpu, syscall_ns, syscalls, req_ns, reqs, wait_ns, waits;
};

enum measure { BY_CALLS, BY_REQUESTS, BY_WAITS };

static const char *const measure_names[] = {
	[BY_CALLS] = "mean I/O system call duration",
	[BY_REQUESTS] = "mean request service time",
	[BY_WAITS] = "mean blocking I/O wait",
};

/* The windows: [base + k * width, + width). */
struct grid {
	uint64_t base, width;
};

static double latency_of(const struct window_row *w, enum measure m)
{
	if (m == BY_REQUESTS)
		return w->reqs > 0 ? w->req_ns / w->reqs : 0;
	if (m == BY_WAITS)
		return w->waits > 0 ? w->wait_ns / w->waits : 0;
	return w->syscalls > 0 ? w->syscall_ns / w->syscalls : 0;
}

/* SQL for the window index of a row spanning [start, end): the window
 * holding its middle. */
static const char *window_of(char *buf, size_t len, const struct grid *g, const char *start,
			     const char *end)
{
	snprintf(buf, len, "((%s + (%s - %s) / 2 - %llu) / %llu)", start, end, start,
		 (unsigned long long)g->base, (unsigned long long)g->width);
	return buf;
}

static double ratio(double now, double before)
{
	double r;

	if (before <= 0)
		return now > 0 ? RATIO_CAP : 1;
	r = now / before;
	return r > RATIO_CAP ? RATIO_CAP : r;
}

static int load_shares(const struct diag_input *in, struct window_row *w, size_t n,
		       const struct grid *g)
{
	char where[1024], k[256], sql[2048];
	sqlite3_stmt *st;

	snprintf(sql, sizeof(sql),
		 "SELECT %s, sum(io_wait_ns), sum(net_recv_ns + net_send_ns),"
		 " sum(vfs_read_ns + vfs_write_ns), sum(running_ns), sum(cpu_samples)"
		 " FROM thread_time_shares WHERE %s GROUP BY 1",
		 window_of(k, sizeof(k), g, "window_start", "window_end"),
		 report_scope_sql(where, sizeof(where), "pid", "tid", "window_start", "window_end"));
	st = diag_prepare(in, sql);
	if (!st)
		return -1;
	while (sqlite3_step(st) == SQLITE_ROW) {
		int64_t k = sqlite3_column_int64(st, 0);
		if (k < 0 || (size_t)k >= n)
			continue;
		w[k].io = sqlite3_column_double(st, 2) +
			  (in->has_sched ? sqlite3_column_double(st, 1) : sqlite3_column_double(st, 3));
		w[k].cpu = in->has_sched ? sqlite3_column_double(st, 4) :
			   sqlite3_column_double(st, 5);
	}
	sqlite3_finalize(st);
	return 0;
}

/* I/O system calls per window, from the report's one pass over them. */
static void copy_io_calls(const struct diag_input *in, struct window_row *w, size_t n,
			  const struct grid *g)
{
	const struct call_windows *cw = &in->calls->windows;

	if (cw->n == 0 || cw->base != g->base || cw->width != g->width)
		return;
	for (size_t k = 0; k < n && k < cw->n; k++) {
		w[k].syscalls = cw->io_calls[k];
		w[k].syscall_ns = cw->io_ns[k];
	}
}

/* Blocked time and blocking waits of the I/O classes per window, from
 * the waits source's kernel sums (a system call that did not block is
 * not among them: the measure is the blocking part of the calls). */
static int load_waits(const struct diag_input *in, struct window_row *w, size_t n,
		      const struct grid *g)
{
	char where[1024], k[256], sql[2048];
	sqlite3_stmt *st;

	snprintf(sql, sizeof(sql),
		 "SELECT %s, sum(calls), sum(total_ns) FROM thread_metrics"
		 " WHERE kind = 'waits' AND class IN ('vfs_read', 'vfs_write', 'net_recv', 'net_send')"
		 " AND window_start + (window_end - window_start) / 2 >= %llu AND %s GROUP BY 1",
		 window_of(k, sizeof(k), g, "window_start", "window_end"),
		 (unsigned long long)g->base,
		 report_scope_sql(where, sizeof(where), "pid", "tid", "window_start", "window_end"));
	st = diag_prepare(in, sql);
	if (!st)
		return -1;
	while (sqlite3_step(st) == SQLITE_ROW) {
		int64_t i = sqlite3_column_int64(st, 0);
		if (i < 0 || (size_t)i >= n)
			continue;
		w[i].waits = sqlite3_column_double(st, 1);
		w[i].wait_ns = sqlite3_column_double(st, 2);
	}
	sqlite3_finalize(st);
	return 0;
}

/* The requests per window from the report's one pass over them, when its
 * windows are these: 1 (and *total), else 0. */
static int copy_requests(const struct diag_input *in, struct window_row *w, size_t n,
			 const struct grid *g, double *total)
{
	const struct request_windows *rw = in->req_windows;

	if (!rw || !rw->valid || rw->base != g->base || rw->width != g->width || rw->n != n)
		return 0;
	*total = 0;
	for (size_t k = 0; k < n; k++) {
		if (!rw->count[k])
			continue;
		w[k].reqs = (double)rw->count[k];
		w[k].req_ns = (double)rw->sum[k];
		*total += w[k].reqs;
	}
	return 1;
}

static double load_requests(const struct diag_input *in, struct window_row *w, size_t n,
			    const struct grid *g)
{
	char where[1024], sql[2048];
	sqlite3_stmt *st;
	double total = 0;
	uint64_t *counts;
	int64_t *sums;

	if (!report_has_object(in->db, "request_spans") || !(in->has_syscall || in->has_req))
		return 0;
	if (copy_requests(in, w, n, g, &total))
		return total;
	/* summed here in one pass: GROUP BY would sort every request */
	snprintf(sql, sizeof(sql), "SELECT (start_ts - %llu) / %llu, service_ns FROM %s WHERE %s",
		 (unsigned long long)g->base, (unsigned long long)g->width,
		 report_requests_from(in->scope, "request_spans"),
		 report_scope_sql(where, sizeof(where), "pid", "CAST(tids AS INTEGER)", "start_ts",
				  "start_ts"));
	st = diag_prepare(in, sql);
	counts = calloc(n ? n : 1, sizeof(*counts));
	sums = calloc(n ? n : 1, sizeof(*sums));
	while (st && counts && sums && sqlite3_step(st) == SQLITE_ROW) {
		int64_t k = sqlite3_column_int64(st, 0);

		if (k < 0 || (size_t)k >= n)
			continue;
		counts[k]++;
		sums[k] += sqlite3_column_int64(st, 1);   /* NULL: 0, as sum() skips it */
	}
	sqlite3_finalize(st);
	for (size_t k = 0; counts && sums && k < n; k++) {
		if (!counts[k])
			continue;
		w[k].reqs = (double)counts[k];
		w[k].req_ns = (double)sums[k];
		total += w[k].reqs;
	}
	free(counts);
	free(sums);
	return total;
}

static void find_spike(const struct window_row *w, size_t n, enum measure m,
		       struct diag_spike *s, size_t *worst_out, size_t *base_out)
{
	size_t worst = 0;
	int have = 0;

	for (size_t k = 1; k < n; k++)
		if (latency_of(&w[k], m) > 0 &&
		    (!have || latency_of(&w[k], m) > latency_of(&w[worst], m))) {
			worst = k;
			have = 1;
		}
	if (!have)
		return;
	for (size_t j = worst; j > 0; j--) {
		double lat = latency_of(&w[j - 1], m);
		if (lat > 0 && lat * RISE <= latency_of(&w[worst], m)) {
			s->found = 1;
			*worst_out = worst;
			*base_out = j - 1;
			return;
		}
	}
}

struct thread_pair {
	int64_t tid;
	double io[2], cpu[2];     /* [0] baseline, [1] spike window */
};

static double row_io(const struct diag_input *in, sqlite3_stmt *st)
{
	return sqlite3_column_double(st, 3) +
	       (in->has_sched ? sqlite3_column_double(st, 2) : sqlite3_column_double(st, 4));
}

static double row_cpu(const struct diag_input *in, sqlite3_stmt *st)
{
	return in->has_sched ? sqlite3_column_double(st, 5) : sqlite3_column_double(st, 6);
}

static struct thread_pair *pair_of(struct thread_pair **v, size_t *n, size_t *cap,
				   int64_t tid)
{
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i].tid == tid)
			return &(*v)[i];
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		struct thread_pair *grown = realloc(*v, c * sizeof(*grown));
		if (!grown)
			return NULL;
		*v = grown;
		*cap = c;
	}
	memset(&(*v)[*n], 0, sizeof((*v)[0]));
	(*v)[*n].tid = tid;
	return &(*v)[(*n)++];
}

/* Ratios over the threads active in both windows; threads new in the
 * spike window are counted in s->new_threads. 0, or -1 if no thread was
 * in both (the window totals then stand). */
static int compare_threads(const struct diag_input *in, const struct grid *g, size_t worst,
			   size_t before, struct diag_spike *s, double io[2], double cpu[2])
{
	char where[1024], k[256], sql[2048];
	struct thread_pair *v = NULL;
	size_t n = 0, cap = 0;
	sqlite3_stmt *st;

	window_of(k, sizeof(k), g, "window_start", "window_end");
	snprintf(sql, sizeof(sql), "SELECT tid, %s = %zu, io_wait_ns, net_recv_ns +"
		 " net_send_ns, vfs_read_ns + vfs_write_ns, running_ns, cpu_samples"
		 " FROM thread_time_shares WHERE window_start < %llu AND window_end > %llu"
		 " AND %s IN (%zu, %zu) AND %s", k, worst,
		 (unsigned long long)s->window_end, (unsigned long long)s->baseline_start, k,
		 before, worst,
		 report_scope_sql(where, sizeof(where), "pid", "tid", "window_start", "window_end"));
	st = diag_prepare(in, sql);
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		struct thread_pair *p = pair_of(&v, &n, &cap, sqlite3_column_int64(st, 0));
		int k = sqlite3_column_int(st, 1) ? 1 : 0;
		if (!p)
			break;
		p->io[k] += row_io(in, st);
		p->cpu[k] += row_cpu(in, st);
	}
	sqlite3_finalize(st);
	for (size_t i = 0; i < n; i++) {
		if (v[i].io[0] + v[i].cpu[0] <= 0) {
			s->new_threads += v[i].io[1] + v[i].cpu[1] > 0;
			continue;
		}
		s->threads_compared++;
		for (int k = 0; k < 2; k++) {
			io[k] += v[i].io[k];
			cpu[k] += v[i].cpu[k];
		}
	}
	free(v);
	if (s->threads_compared == 0)
		return -1;
	s->io_ratio = ratio(io[1], io[0]);
	s->cpu_ratio = ratio(cpu[1], cpu[0]);
	return 0;
}

/* Which of I/O and CPU made the spike: each rose by RISE or more and
 * added at least SHARE_OF_RISE of the time the two added together. A
 * ratio alone misleads when one side is small: a victim's CPU going from
 * 10 to 16 ms beside 1.2 s more of I/O wait did not make its spike. */
static const char *verdict_of(const struct diag_input *in, const struct diag_spike *s,
			      const double io[2], const double cpu[2])
{
	/* CPU is running time with the sched source, else samples: as ns
	 * when the sampling rate says how; without it only the ratios */
	double to_ns = in->has_sched ? 1 : in->freq_hz > 0 ? 1e9 / in->freq_hz : 0;
	double io_added = io[1] > io[0] ? io[1] - io[0] : 0;
	double cpu_added = cpu[1] > cpu[0] ? (cpu[1] - cpu[0]) * to_ns : 0;
	double added = io_added + cpu_added;
	int io_up = s->io_ratio >= RISE && (!to_ns || io_added >= SHARE_OF_RISE * added);
	int cpu_up = s->cpu_ratio >= RISE && (!to_ns || cpu_added >= SHARE_OF_RISE * added);

	return io_up && cpu_up ? "both" : io_up ? "io" : cpu_up ? "cpu" : "none";
}

int diagnose_spike(const struct diag_input *in, struct diagnosis *d)
{
	struct diag_spike *s = &d->spike;
	struct grid g = {
		.base = (uint64_t)db_query_int(in->db, "SELECT min(window_start) FROM thread_time_shares",
					       (int64_t)in->scope->capture_start),
		.width = in->window_ns,
	};
	uint64_t end = in->scope->to < in->scope->capture_end ? in->scope->to : in->scope->capture_end;
	size_t n, worst = 0, before = 0;
	struct window_row *w;
	enum measure m = BY_CALLS;

	memset(s, 0, sizeof(*s));
	if (!in->has_syscall && in->has_waits) {
		uint64_t waits_ns = (uint64_t)db_query_int(in->db, "SELECT value FROM meta"
			" WHERE key = 'waits.window_ns'", 1000000000);
		m = BY_WAITS;
		if (waits_ns > g.width)
			g.width = waits_ns;
	}
	if (g.width == 0 || end <= g.base)
		return 0;
	n = (size_t)((end - g.base) / g.width + 1);
	if (n < 2 || n > MAX_WINDOWS)
		return 0;
	w = calloc(n, sizeof(*w));
	if (!w)
		return -1;
	copy_io_calls(in, w, n, &g);
	if (load_shares(in, w, n, &g) < 0 || (m == BY_WAITS && load_waits(in, w, n, &g) < 0)) {
		free(w);
		return -1;
	}
	if (load_requests(in, w, n, &g) >= MIN_REQUESTS)
		m = BY_REQUESTS;
	find_spike(w, n, m, s, &worst, &before);
	if (s->found) {
		double io[2] = { 0 }, cpu[2] = { 0 };

		s->window_start = g.base + worst * g.width;
		s->window_end = s->window_start + g.width;
		s->baseline_start = g.base + before * g.width;
		s->baseline_end = s->baseline_start + g.width;
		s->latency_ns = latency_of(&w[worst], m);
		s->baseline_latency_ns = latency_of(&w[before], m);
		s->latency_measure = measure_names[m];
		if (compare_threads(in, &g, worst, before, s, io, cpu) < 0) {
			io[0] = w[before].io, io[1] = w[worst].io;
			cpu[0] = w[before].cpu, cpu[1] = w[worst].cpu;
			s->io_ratio = ratio(io[1], io[0]);
			s->cpu_ratio = ratio(cpu[1], cpu[0]);
		}
		s->verdict = verdict_of(in, s, io, cpu);
	}
	free(w);
	return 0;
}
