/* diagnose_threads.c - the scope's threads and where their time went, in
 * one streaming pass over thread_state_rows (clipped to the window) plus
 * the CPU samples: the denominators and wait totals the rules share, and
 * the report's per-thread time shares. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "diagnose.h"

static int thread_index(struct diag_input *in, size_t *cap, uint32_t pid, uint32_t tid)
{
	int created = 0;
	uint64_t *slot = hmap_upsert(&in->thread_by_tid, tid, 0, in->nthreads, &created);

	if (!slot)
		return -1;
	if (!created)
		return (int)*slot;
	if (in->nthreads == *cap) {
		size_t n = *cap ? *cap * 2 : 64;
		struct diag_thread *grown = realloc(in->threads, n * sizeof(*grown));
		if (!grown)
			return -1;
		in->threads = grown;
		*cap = n;
	}
	memset(&in->threads[in->nthreads], 0, sizeof(in->threads[0]));
	in->threads[in->nthreads].pid = pid;
	in->threads[in->nthreads].tid = tid;
	return (int)in->nthreads++;
}

/* wait_class_code (enum wait_class, docs/schema.md wait_classes): 0
 * preempted, 1 block_io, 2 futex, 3 poll, 4 sleep, 5 net, 6 other,
 * 7 unknown, 8 accept, 9 kernel_lock, 10 pipe. */
static enum diag_class class_of(int64_t code, int64_t syscall_nr)
{
	switch (code) {
	case 1: return DC_BLOCK_IO;
	case 2: return DC_FUTEX;
	case 3: return DC_POLL;
	case 4: return DC_SLEEP;
	case 5: return syscall_nr == 43 || syscall_nr == 288 ? DC_ACCEPT : DC_NET;
	case 7: return DC_UNKNOWN;
	case 8: return DC_ACCEPT;
	default: return DC_OTHER;
	}
}

/* state_code (enum state_kind): 0 running, 1 runnable, else blocked. */
static void add_state(struct diag_thread *t, int64_t state, int64_t wait_class,
		      int64_t syscall_nr, uint64_t ns)
{
	if (state == 0) {
		t->running += ns;
	} else if (state == 1) {
		t->runnable += ns;
	} else {
		t->blocked += ns;
		t->wait[class_of(wait_class, syscall_nr)] += ns;
	}
}

/* Adds one row: the thread's totals, its run-queue waits (runnable and
 * not cut by the capture's edges, as runq_latency) and blocked time per
 * system call number. */
static void add_row(struct diag_input *in, struct diag_thread *t, sqlite3_stmt *st,
		    uint64_t ns)
{
	int64_t state = sqlite3_column_int64(st, 2), cls = sqlite3_column_int64(st, 3);
	int64_t nr = sqlite3_column_type(st, 4) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 4);
	uint64_t duration = (uint64_t)sqlite3_column_int64(st, 7);

	add_state(t, state, cls, nr, ns);
	if (state == 1 && sqlite3_column_int64(st, 6) == 0) {
		t->runq_waits++;
		if (duration > t->runq_max)
			t->runq_max = duration;
	}
	if (state >= 2 && nr >= 0 && nr < CALLS_MAX_NR)
		in->blocked_by_nr[nr][class_of(cls, nr)] += ns;
}

/* One streaming pass over thread_state_rows, aggregated here: a GROUP BY
 * would sort every row. */
static int load_states(struct diag_input *in, size_t *cap)
{
	char where[1024], sql[2048];
	sqlite3_stmt *st;
	int rc = 0, step;

	snprintf(sql, sizeof(sql),
		 "SELECT pid, tid, state_code, wait_class_code, syscall_nr,"
		 " min(start_ts + duration, :to) - max(start_ts, :from), partial, duration"
		 " FROM thread_state_rows"
		 " WHERE tid <> 0 AND %s",
		 report_scope_sql(where, sizeof(where), "pid", "tid", "start_ts",
				  "(start_ts + duration)"));
	st = diag_prepare(in, sql);
	if (!st)
		return -1;
	while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t ns = sqlite3_column_int64(st, 5);
		int i;
		if (ns <= 0)
			continue;
		i = thread_index(in, cap, (uint32_t)sqlite3_column_int64(st, 0),
				 (uint32_t)sqlite3_column_int64(st, 1));
		if (i < 0)
			rc = -1;
		else
			add_row(in, &in->threads[i], st, (uint64_t)ns);
	}
	if (rc == 0 && step != SQLITE_DONE) {
		db_report_error(in->db, "thread_state_rows");
		rc = -1;
	}
	sqlite3_finalize(st);
	return rc;
}

static int add_samples(struct diag_input *in, size_t *cap, const struct selection *sel)
{
	for (size_t g = 0; g < sel->len; g++) {
		int i = thread_index(in, cap, sel->groups[g].pid, sel->groups[g].tid);
		if (i < 0)
			return -1;
		in->threads[i].samples += sel->groups[g].count;
	}
	return 0;
}

/* The waits source's class of a thread_metrics class name, or -1. */
static int metric_class(const char *name)
{
	if (!name)
		return -1;
	if (strcmp(name, "futex_wait") == 0)
		return DC_FUTEX;
	if (strcmp(name, "poll") == 0)
		return DC_POLL;
	if (strcmp(name, "net_recv") == 0 || strcmp(name, "net_send") == 0)
		return DC_NET;
	return -1;   /* file waits may be disk or pipes; "other" says nothing */
}

/* Blocked time the scheduler events could not classify (no recorded call,
 * no kernel stack: intervals shorter than --offcpu-min) is given to the
 * classes the waits source measured for that thread in the kernel (the
 * system call it blocked in), up to what those sums leave unexplained by
 * the intervals already classified: exact totals, apportioned. */
static int apportion_unknown(struct diag_input *in)
{
	char where[1024], sql[2048];
	sqlite3_stmt *st;
	uint64_t (*measured)[DC_N] = calloc(in->nthreads ? in->nthreads : 1, sizeof(*measured));
	int step;

	if (!measured)
		return -1;
	snprintf(sql, sizeof(sql),
		 "SELECT tid, class, CAST(sum(total_ns * max(0, min(window_end, :to) -"
		 " max(window_start, :from)) * 1.0 / max(1, min(window_end, :capture_end) -"
		 " max(window_start, :capture_start))) AS INTEGER) FROM thread_metrics"
		 " WHERE kind = 'waits' AND %s GROUP BY 1, 2",
		 report_scope_sql(where, sizeof(where), "pid", "tid", "window_start", "window_end"));
	st = diag_prepare(in, sql);
	if (!st) {
		free(measured);
		return -1;
	}
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		uint64_t *slot = hmap_find(&in->thread_by_tid, (uint64_t)sqlite3_column_int64(st, 0), 0);
		int k = metric_class((const char *)sqlite3_column_text(st, 1));
		if (slot && k >= 0)
			measured[*slot][k] += (uint64_t)sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	for (size_t i = 0; step == SQLITE_DONE && i < in->nthreads; i++) {
		struct diag_thread *t = &in->threads[i];
		uint64_t left[DC_N] = { 0 }, sum = 0, move;
		for (int k = 0; k < DC_N; k++) {
			left[k] = measured[i][k] > t->wait[k] ? measured[i][k] - t->wait[k] : 0;
			sum += left[k];
		}
		if (t->wait[DC_UNKNOWN] == 0 || sum == 0)
			continue;
		move = sum < t->wait[DC_UNKNOWN] ? sum : t->wait[DC_UNKNOWN];
		for (int k = 0; k < DC_N; k++)
			t->wait[k] += (uint64_t)((double)move * (double)left[k] / (double)sum);
		t->wait[DC_UNKNOWN] -= move;
	}
	free(measured);
	if (step != SQLITE_DONE) {
		db_report_error(in->db, "thread_metrics");
		return -1;
	}
	return 0;
}

/* Sched windows (format 1.12): the states were seen only outside the
 * gaps. They are made to stand for the whole scope as the time shares
 * are (correlate/sched_windows.c): a thread's time on a CPU in the gaps
 * is exact where its run time counters were written at both edges
 * (sched_gap_runs, 1.13), and the rest of that time is split among its
 * off-CPU states as the windows saw them; the gap time without counters
 * is scaled from what was seen. */
struct gap_share {
	uint64_t ran;              /* in the scope's gaps with counters, */
	uint64_t alive;            /* the part of them it lived, */
	uint64_t covered;          /* and all of them (after an exit too) */
};

/* Each thread's sched_gap_runs within the scope, into runs[thread]. */
static int load_gap_runs(struct diag_input *in, struct gap_share *runs)
{
	sqlite3_stmt *st;
	int step;

	if (!report_has_object(in->db, "sched_gap_runs"))
		return 0;   /* imported before 1.13 */
	st = diag_prepare(in, "SELECT tid, sum(running_ns * alive / max(1, lived - start_ts)),"
			  " sum(alive), sum(ov) FROM (SELECT tid, running_ns, start_ts,"
			  " coalesce(exit_ts, end_ts) AS lived, max(0, min(coalesce(exit_ts, end_ts),"
			  " :to) - max(start_ts, :from)) AS alive, min(end_ts, :to) -"
			  " max(start_ts, :from) AS ov FROM sched_gap_runs"
			  " WHERE end_ts > :from AND start_ts < :to) GROUP BY tid");
	if (!st)
		return -1;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		uint64_t *slot = hmap_find(&in->thread_by_tid, (uint64_t)sqlite3_column_int64(st, 0), 0);

		if (slot) {
			runs[*slot].ran = (uint64_t)sqlite3_column_int64(st, 1);
			runs[*slot].alive = (uint64_t)sqlite3_column_int64(st, 2);
			runs[*slot].covered = (uint64_t)sqlite3_column_int64(st, 3);
		}
	}
	sqlite3_finalize(st);
	if (step != SQLITE_DONE) {
		db_report_error(in->db, "sched_gap_runs");
		return -1;
	}
	return 0;
}

static uint64_t times(uint64_t v, double f)
{
	return (uint64_t)((double)v * f);
}

/* Thread t seen in seen ns of the scope, gap ns not; g: its gaps' run. */
static void scale_thread(struct diag_thread *t, uint64_t seen, uint64_t gap,
			 const struct gap_share *g)
{
	uint64_t covered = g->covered < gap ? g->covered : gap;
	uint64_t alive = g->alive < covered ? g->alive : covered;
	uint64_t ran = g->ran < alive ? g->ran : alive;
	double fu = (double)(seen + gap - covered) / (double)seen, k;
	uint64_t off, added = alive - ran;

	t->runq_waits = times(t->runq_waits, (double)(seen + gap - (covered - alive)) /
			      (double)seen);
	t->running = times(t->running, fu) + ran;
	t->runnable = times(t->runnable, fu);
	t->blocked = times(t->blocked, fu);
	for (int c = 0; c < DC_N; c++)
		t->wait[c] = times(t->wait[c], fu);
	off = t->runnable + t->blocked;
	if (!off) {   /* seen only on a CPU: off it in the gaps, kind unknown */
		t->blocked += added;
		t->wait[DC_UNKNOWN] += added;
		return;
	}
	k = (double)(off + added) / (double)off;
	t->runnable = times(t->runnable, k);
	t->blocked = times(t->blocked, k);
	for (int c = 0; c < DC_N; c++)
		t->wait[c] = times(t->wait[c], k);
}

static int scale_states(struct diag_input *in)
{
	uint64_t scope = diag_scope_ns(in);
	uint64_t gap = report_sched_gap_ns(in->db, in->scope->from, in->scope->from + scope);
	struct gap_share *runs;

	if (!gap || gap >= scope)   /* followed whole, or not at all: as seen */
		return 0;
	runs = calloc(in->nthreads ? in->nthreads : 1, sizeof(*runs));
	if (!runs || load_gap_runs(in, runs) < 0) {
		free(runs);
		return -1;
	}
	for (size_t i = 0; i < in->nthreads; i++)
		scale_thread(&in->threads[i], scope - gap, gap, &runs[i]);
	free(runs);
	return 0;
}

int diag_threads_load(struct diag_input *in, const struct selection *sel)
{
	size_t cap = 0;
	uint64_t window = diag_scope_ns(in);
	if (in->has_sched && load_states(in, &cap) < 0)
		return -1;
	if (in->has_sched && scale_states(in) < 0)   /* sched windows */
		return -1;
	if (add_samples(in, &cap, sel) < 0)
		return -1;
	if (in->has_sched && in->has_waits && apportion_unknown(in) < 0)
		return -1;
	for (size_t i = 0; i < in->nthreads; i++) {
		struct diag_thread *t = &in->threads[i];
		t->observed = t->running + t->runnable + t->blocked;
		if (t->observed == 0)
			t->observed = window;
	}
	return 0;
}

const struct diag_thread *diag_thread_find(const struct diag_input *in, uint32_t tid)
{
	uint64_t *slot = hmap_find(&in->thread_by_tid, tid, 0);

	return slot ? &in->threads[*slot] : NULL;
}

uint64_t diag_scope_ns(const struct diag_input *in)
{
	const struct report_scope *s = in->scope;
	uint64_t to = s->to > s->capture_end ? s->capture_end : s->to;

	return to > s->from ? to - s->from : 0;
}

int diag_material(const struct diag_input *in, uint64_t ns)
{
	return ns >= 1000000 && (double)ns >= 0.05 * (double)diag_scope_ns(in);
}

uint64_t diag_observed_ns(const struct diag_input *in, uint32_t tid)
{
	const struct diag_thread *t = diag_thread_find(in, tid);

	return t ? t->observed : diag_scope_ns(in);
}

const char *diag_comm(const struct diag_input *in, uint32_t pid, uint32_t tid, char *buf,
		      size_t len)
{
	const char *name = names_thread(in->names, pid, tid);

	snprintf(buf, len, "%s", name ? name : "?");
	return buf;
}
