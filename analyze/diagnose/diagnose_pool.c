/* diagnose_pool.c - thread pools (book 12.4), from the requests that
 * the view request_queueing shows (per request: when it became available,
 * when a worker picked it up, queue and service time; read from the
 * requests table itself, in storage order) and the view pool_utilisation
 * (per window: workers, busy workers, queue depth). Skipped when the
 * database has no request_queueing view.
 *
 * Queueing time is the primary symptom. When requests of a process spent
 * a meaningful share of their latency queued, the kind says why:
 *   pool_underprovisioned  the workers were busy serving (busy >= 75% of
 *                          them): more requests than workers; what the
 *                          workers waited on while serving is evidence;
 *   workers_blocked        workers were not serving and were blocked on
 *                          something other than waiting for work (a lock,
 *                          disk, a sleep);
 *   dispatch_stall         workers were idle, waiting for work, while
 *                          requests queued: dispatch or signalling broke.
 * Key number: the mean queueing time per request. Score: queue time over
 * queue + service time; when it is at least 25% this rule ranks first
 * (the waits inside the workers explain why the pool is saturated and
 * are listed after it).
 *
 * Server models: a process whose requests one thread picks up is an
 * event loop (redis, an nginx worker), not a pool: its requests overlap on
 * that thread, so "busy workers" would count connections, not threads.
 * There the rule reads the share of the loop thread's time its own work
 * took (running; runnable time is the run queue's, below), says
 * event_loop_saturated when it is at least 75%, and claims nothing else;
 * a pool's busy workers never exceed its workers.
 *
 * Busy is not the same as working: a busy worker or loop thread may be
 * runnable, waiting for a CPU. When the workers spent most of their busy
 * time (not waiting for work: running, runnable or blocked while
 * serving) runnable (at least CPU_STARVED of it), the queueing is the run
 * queue's doing, not the pool's size or the loop's own work: the cause
 * keeps only the share of the queueing their running explains, never
 * ranks first, and its evidence points at the run queue (the
 * cpu_contention rule names the competitors).
 *
 * Without requests (no req source, no system calls), a pool is
 * recognised by its threads: a process with a dispatcher (a thread whose
 * blocked time is mostly accept or poll waits, some of them accept) and at
 * least two other threads, the workers, whose busy share is their time
 * not waiting for work (condition variables, accept, poll). When the
 * workers are busy at least 90% on average while work keeps arriving (the
 * dispatcher was woken meanwhile), the pool is saturated:
 * pool_underprovisioned with key number utilisation (percent), ranked
 * first, and what the busy workers wait on as evidence. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "diagnose.h"
#include "util/fmt.h"
#include "util/grow.h"
#include "util/hashmap.h"

#define MIN_QUEUE_SHARE 0.10
#define FIRST_QUEUE_SHARE 0.25
#define BUSY_SATURATED 0.75
#define CPU_STARVED 0.50

struct pool_stats {
	int64_t pid, requests, workers;
	double queue_mean, queue_total, service_total, service_mean;
	double busy_avg, depth_max, depth_avg;
	char worker_tids[512];
};

/* A worker's first request in request_queueing's order: (start_ts, pid,
 * fd) by its index, then rowid; the pid is fixed here. */
struct first_pickup {
	int64_t tid, start, fd, rowid;
};

static int pickup_before(const struct first_pickup *a, const struct first_pickup *b)
{
	if (a->start != b->start)
		return a->start < b->start;
	if (a->fd != b->fd)
		return a->fd < b->fd;
	return a->rowid < b->rowid;
}

static int by_first_pickup(const void *pa, const void *pb)
{
	const struct first_pickup *a = pa, *b = pb;

	return pickup_before(a, b) ? -1 : pickup_before(b, a);
}

struct pickups {
	struct hmap index;           /* tid -> position in v */
	struct first_pickup *v;
	size_t n, cap;
};

/* A new worker, or an earlier first request of a known one. 0 or -1. */
static int note_pickup(struct pickups *w, const struct first_pickup *row)
{
	int created;
	uint64_t *at = hmap_upsert(&w->index, (uint64_t)row->tid, 0, w->n, &created);

	if (!at)
		return -1;
	if (!created) {
		if (pickup_before(row, &w->v[*at]))
			w->v[*at] = *row;
		return 0;
	}
	if (array_grow((void **)&w->v, &w->cap, w->n, sizeof(*w->v), 64) < 0)
		return -1;
	w->v[w->n++] = *row;
	return 0;
}

/* "tid,tid,...", cut to len - 1 characters as snprintf cuts. */
static void join_tids(const struct first_pickup *v, size_t n, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && used + 1 < len; i++) {
		int w = snprintf(buf + used, len - used, "%s%lld", i ? "," : "",
				 (long long)v[i].tid);
		if (w < 0)
			break;
		used += (size_t)w < len - used ? (size_t)w : len - used - 1;
	}
}

/* p->workers and p->worker_tids: the pid's workers in the order of their
 * first request in request_queueing's order, which is what
 * group_concat(DISTINCT pickup_tid) over that view gave (its GROUP BY
 * sorter keeps equal keys in input order), from the rows read in storage
 * order: the view cost a rowid lookup per request (0.8 s of the report of
 * a 12 s redis capture, 938k requests). */
static void set_workers(struct pickups *w, struct pool_stats *p)
{
	p->workers = (int64_t)w->n;   /* the distinct pickup threads */
	if (w->n == 0)
		return;
	qsort(w->v, w->n, sizeof(*w->v), by_first_pickup);
	join_tids(w->v, w->n, p->worker_tids, sizeof(p->worker_tids));
}

/* One process's queued requests, summed in load_requests' pass, and its
 * workers' first requests. */
struct pid_totals {
	int64_t pid;
	uint64_t requests;
	int64_t queue, service;
	uint64_t services;          /* rows with a service time (avg's count) */
	struct pickups w;
};

/* The totals of pid in v (n of them, kept in ascending pid order), added
 * when new. NULL when out of memory. */
static struct pid_totals *totals_of(struct pid_totals **v, size_t *n, size_t *cap, int64_t pid)
{
	size_t i = 0;

	while (i < *n && (*v)[i].pid < pid)
		i++;
	if (i < *n && (*v)[i].pid == pid)
		return &(*v)[i];
	if (array_grow((void **)v, cap, *n, sizeof(**v), 8) < 0)
		return NULL;
	memmove(&(*v)[i + 1], &(*v)[i], (*n - i) * sizeof(**v));
	(*n)++;
	(*v)[i] = (struct pid_totals){ .pid = pid };
	hmap_init(&(*v)[i].w.index);
	return &(*v)[i];
}

/* Adds a row (pid, queue_ns, service_ns, pickup_tid, start_ts, fd, rowid)
 * to its process's totals. 0 or -1. */
static int add_row(struct pid_totals *t, sqlite3_stmt *st)
{
	t->requests++;
	t->queue += sqlite3_column_int64(st, 1);
	if (sqlite3_column_type(st, 2) != SQLITE_NULL) {
		t->service += sqlite3_column_int64(st, 2);
		t->services++;
	}
	if (sqlite3_column_type(st, 3) == SQLITE_NULL)
		return 0;
	return note_pickup(&t->w, &(struct first_pickup){ sqlite3_column_int64(st, 3),
		sqlite3_column_int64(st, 4), sqlite3_column_int64(st, 5),
		sqlite3_column_int64(st, 6) });
}

/* The process whose requests queued longest (the smallest pid on a tie),
 * its totals and its workers, in one pass over the requests in storage
 * order (GROUP BY pid sorted every request, and the workers took a second
 * pass: seconds on a busy server's capture); the same pass counts every
 * process's requests for the report's queueing line (d->queued). 0 or -1. */
static int load_requests(const struct diag_input *in, struct pool_stats *p, struct diagnosis *d)
{
	char where[1024], sql[2048];
	struct pid_totals *v = NULL, *t, *best = NULL;
	size_t n = 0, cap = 0;
	sqlite3_stmt *st;
	int step = SQLITE_DONE, rc = 0;
	int64_t queued = 0, queued_ns = 0, on_arrival = 0;

	snprintf(sql, sizeof(sql),
		 "SELECT pid, queue_ns, service_ns, pickup_tid, start_ts, fd, rowid,"
		 " ready_source = 'data_ready'"
		 " FROM requests NOT INDEXED WHERE queue_ns IS NOT NULL AND %s",
		 report_scope_sql(where, sizeof(where), "pid", "pickup_tid", "ready_ts", "ready_ts"));
	st = diag_prepare(in, sql);
	if (!st)
		return -1;
	while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
		queued++;
		queued_ns += sqlite3_column_int64(st, 1);
		on_arrival += sqlite3_column_int64(st, 7);
		t = totals_of(&v, &n, &cap, sqlite3_column_int64(st, 0));
		rc = t ? add_row(t, st) : -1;
	}
	if (rc == 0 && step != SQLITE_DONE)
		rc = -1;
	sqlite3_finalize(st);
	if (rc == 0) {
		d->queued = queued;
		d->queued_ns = queued_ns;
		d->queued_on_arrival = on_arrival;
	}
	for (size_t i = 0; rc == 0 && i < n; i++)
		if (!best || v[i].queue > best->queue)
			best = &v[i];
	if (best) {
		p->pid = best->pid;
		p->requests = (int64_t)best->requests;
		p->queue_mean = (double)best->queue / (double)best->requests;
		p->queue_total = (double)best->queue;
		p->service_total = (double)best->service;
		p->service_mean = best->services ? (double)best->service / (double)best->services : 0;
		set_workers(&best->w, p);
	}
	for (size_t i = 0; i < n; i++) {
		free(v[i].w.v);
		hmap_free(&v[i].w.index);
	}
	free(v);
	return rc;
}

/* The workers of pid from request_workers, in the order set_workers
 * gives. 0 or -1. */
static int load_workers(const struct diag_input *in, struct pool_stats *p)
{
	struct pickups w = { .v = NULL };
	sqlite3_stmt *st = diag_prepare(in, "SELECT tid FROM request_workers WHERE pid = :which"
					" ORDER BY first_start_ts, first_fd, first_seq");
	int step = SQLITE_ERROR;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, sqlite3_bind_parameter_index(st, ":which"), p->pid);
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		if (array_grow((void **)&w.v, &w.cap, w.n, sizeof(*w.v), 64) < 0)
			break;
		w.v[w.n++] = (struct first_pickup){ .tid = sqlite3_column_int64(st, 0) };
	}
	sqlite3_finalize(st);
	p->workers = (int64_t)w.n;
	if (step == SQLITE_DONE && w.n)
		join_tids(w.v, w.n, p->worker_tids, sizeof(p->worker_tids));
	free(w.v);
	return step == SQLITE_DONE ? 0 : -1;
}

/* load_requests from the import's per-process sums (request_totals, see
 * correlate/request_totals.h), when they are what the scan would sum: no
 * pid, tid or comm filter, every readiness inside the scope's window, and
 * summed over the table as it is (as many rows; none: scan, as before).
 * 1 when used, 0 when not (scan then), -1 on error. */
static int load_totals(const struct diag_input *in, struct pool_stats *p, struct diagnosis *d)
{
	sqlite3_stmt *st;
	int step, outside;
	int64_t queued = 0, queued_ns = 0, on_arrival = 0, best_queue = 0;

	if (in->scope->filtered || !report_has_object(in->db, "request_totals"))
		return 0;
	st = diag_prepare(in, "SELECT (SELECT count(*) = 0 FROM request_totals) +"
			  " (SELECT count(*) FROM request_totals WHERE min_ready_ts < :from"
			  " OR max_ready_ts >= :to OR requests_rows IS NOT"
			  " (SELECT max(rowid) FROM requests))");
	if (!st)
		return -1;
	step = sqlite3_step(st);
	outside = step == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
	sqlite3_finalize(st);
	if (outside != 0)
		return outside < 0 ? -1 : 0;
	st = diag_prepare(in, "SELECT pid, queued, queue_ns, service_ns, services, on_arrival"
			  " FROM request_totals ORDER BY pid");
	if (!st)
		return -1;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t n = sqlite3_column_int64(st, 1), q = sqlite3_column_int64(st, 2);
		int64_t services = sqlite3_column_int64(st, 4);

		queued += n;
		queued_ns += q;
		on_arrival += sqlite3_column_int64(st, 5);
		if (n > 0 && (!p->requests || q > best_queue)) { /* the smallest pid on a tie */
			best_queue = q;
			p->pid = sqlite3_column_int64(st, 0);
			p->requests = n;
			p->queue_mean = (double)q / (double)n;
			p->queue_total = (double)q;
			p->service_total = (double)sqlite3_column_int64(st, 3);
			p->service_mean = services ? p->service_total / (double)services : 0;
		}
	}
	sqlite3_finalize(st);
	if (step != SQLITE_DONE)
		return -1;
	d->queued = queued;
	d->queued_ns = queued_ns;
	d->queued_on_arrival = on_arrival;
	if (p->requests && load_workers(in, p) < 0)
		return -1;
	return 1;
}

static void load_utilisation(const struct diag_input *in, struct pool_stats *p)
{
	char sql[512];
	sqlite3_stmt *st;

	if (!report_has_object(in->db, "pool_utilisation"))
		return;
	snprintf(sql, sizeof(sql), "SELECT max(workers), avg(busy_avg), max(queue_depth_max),"
		 " avg(queue_depth_avg) FROM pool_utilisation WHERE pid = %lld"
		 " AND window_start < :to AND window_end > :from", (long long)p->pid);
	st = diag_prepare(in, sql);
	if (st && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
		if (sqlite3_column_int64(st, 0) > p->workers)
			p->workers = sqlite3_column_int64(st, 0);
		p->busy_avg = sqlite3_column_double(st, 1);
		p->depth_max = sqlite3_column_double(st, 2);
		p->depth_avg = sqlite3_column_double(st, 3);
	}
	sqlite3_finalize(st);
}

/* The next worker of a "tid,tid,..." list at *s (advanced), NULL at its
 * end; a tid the diagnosis has no thread for is skipped. */
static const struct diag_thread *next_worker(const struct diag_input *in, const char **s)
{
	while (**s) {
		const struct diag_thread *t = diag_thread_find(in, (uint32_t)strtoul(*s, NULL, 10));
		const char *comma = strchr(*s, ',');

		*s = comma ? comma + 1 : "";
		if (t)
			return t;
	}
	return NULL;
}

/* Sums the workers' waits of class k. */
static uint64_t worker_wait(const struct diag_input *in, const struct pool_stats *p,
			    enum diag_class k, uint64_t *observed)
{
	const struct diag_thread *t;
	const char *s = p->worker_tids;
	uint64_t sum = 0;

	*observed = 0;
	while ((t = next_worker(in, &s))) {
		sum += t->wait[k];
		*observed += t->observed;
	}
	return sum;
}

static const char *pool_kind(const struct diag_input *in, const struct pool_stats *p,
			     double busy_ratio)
{
	uint64_t observed, idle, stuck;

	if (busy_ratio >= BUSY_SATURATED)
		return "pool_underprovisioned";
	idle = worker_wait(in, p, DC_POLL, &observed) + worker_wait(in, p, DC_ACCEPT, &observed);
	stuck = worker_wait(in, p, DC_BLOCK_IO, &observed) + worker_wait(in, p, DC_SLEEP, &observed);
	/* futex waits of idle workers are usually the pool's condition variable */
	if (stuck > idle && in->has_sched)
		return "workers_blocked";
	return "dispatch_stall";
}

static void describe_worker_waits(const struct diag_input *in, struct diag_cause *c,
				  const struct pool_stats *p)
{
	static const char *names[DC_N] = { "block I/O", "futex (locks, condition variables)",
		"poll/epoll", "sleep", "sockets (a peer or downstream)", "accept", "other",
		"unknown (no evidence)" };
	uint64_t observed = 0, best = 0;
	int best_k = -1;
	char pct[FMT_BUF];

	for (int k = 0; k < DC_N; k++) {
		uint64_t w = worker_wait(in, p, (enum diag_class)k, &observed);
		if (w > best) {
			best = w;
			best_k = k;
		}
	}
	if (best_k >= 0)
		diag_evidence(c, "workers spent %s of their time blocked on %s",
			      fmt_percent(pct, sizeof(pct), best, observed), names[best_k]);
}

#define POOL_SATURATED 0.90

/* A thread's share of its observed time not spent waiting for work. */
static double busy_share(const struct diag_thread *t)
{
	uint64_t idle = t->wait[DC_FUTEX] + t->wait[DC_ACCEPT] + t->wait[DC_POLL];

	if (t->observed == 0)
		return 0;
	return idle >= t->observed ? 0 : 1.0 - (double)idle / (double)t->observed;
}

/* A thread that takes in work from clients: blocked mostly waiting for
 * connections or events, and it accepted connections (a poll loop woken
 * only by its timeouts brings no work). */
static int is_dispatcher(const struct diag_thread *t)
{
	uint64_t wait_work = t->wait[DC_ACCEPT] + t->wait[DC_POLL];

	return t->blocked > 0 && wait_work * 2 > t->blocked && t->wait[DC_ACCEPT] > 0;
}

/* The pool of one process by its threads (no requests recorded). */
static int default_pool(const struct diag_input *in, struct diagnosis *d)
{
	for (size_t i = 0; i < in->nthreads; i++) {
		const struct diag_thread *disp = &in->threads[i];
		struct diag_cause *c;
		double busy = 0;
		int workers = 0;
		char tids[512] = "", pct[FMT_BUF];
		uint64_t observed = 0;

		if (!is_dispatcher(disp))
			continue;
		for (size_t k = 0; k < in->nthreads; k++) {
			const struct diag_thread *t = &in->threads[k];
			if (t->pid != disp->pid || k == i || is_dispatcher(t))
				continue;
			busy += busy_share(t);
			observed += t->observed;
			workers++;
			if (strlen(tids) + 12 < sizeof(tids))
				snprintf(tids + strlen(tids), sizeof(tids) - strlen(tids), "%s%u",
					 tids[0] ? "," : "", t->tid);
		}
		if (workers < 2 || busy < POOL_SATURATED * workers ||
		    !diag_material(in, observed / (uint64_t)workers))
			continue;
		c = diag_add_cause(d, "pool_underprovisioned");
		if (!c)
			return 0;
		c->score = busy / workers;
		c->rank_first = 1;
		c->key_name = "utilisation";
		c->key_value = 100.0 * busy / workers;
		c->key_unit = "percent";
		c->sources = "sched";
		snprintf(c->title, sizeof(c->title), "thread pool saturated: %d workers of pid %u"
			 " busy %.0f%% of the time while work kept arriving (requests not"
			 " recorded: queueing not measured)", workers, disp->pid,
			 100.0 * busy / workers);
		diag_int(&c->subject, "pid", disp->pid);
		diag_int(&c->subject, "workers", workers);
		diag_real(&c->subject, "busy_workers_avg", busy);
		diag_int(&c->subject, "dispatcher_tid", disp->tid);
		diag_text(&c->subject, "worker_tids", tids);
		diag_evidence(c, "dispatcher tid %u waited for work (accept, poll) %s of its"
			      " blocked time and kept being woken", disp->tid,
			      fmt_percent(pct, sizeof(pct), disp->wait[DC_ACCEPT] +
					  disp->wait[DC_POLL], disp->blocked));
		{
			struct pool_stats p = { .pid = disp->pid, .workers = workers };
			snprintf(p.worker_tids, sizeof(p.worker_tids), "%s", tids);
			describe_worker_waits(in, c, &p);
		}
		return 0;
	}
	return 0;
}

/* The workers' runnable share of their busy time: their observed time
 * not spent waiting for work (busy_share), so a worker blocked on a
 * downstream while it serves is busy, not starved. */
static double workers_cpu_wait(const struct diag_input *in, const struct pool_stats *p)
{
	const struct diag_thread *t;
	const char *s = p->worker_tids;
	uint64_t runnable = 0, busy = 0;

	while ((t = next_worker(in, &s))) {
		runnable += t->runnable;
		busy += (uint64_t)(busy_share(t) * (double)t->observed);
	}
	return busy ? (double)runnable / (double)busy : 0;
}

/* Event loop: one thread picked up every request; the share of its time
 * its own work took (running). Its runnable time is not its work: with a
 * CPU of its own it would have run the same work and been idle the rest,
 * so a loop runnable much of its time and running little is held back by
 * the run queue (cpu_contention), not saturated. */
static double loop_busy(const struct diag_input *in, const struct pool_stats *p)
{
	const struct diag_thread *t = diag_thread_find(in, (uint32_t)strtoul(p->worker_tids,
									     NULL, 10));

	return t && t->observed ? (double)t->running / (double)t->observed : 0;
}

int diagnose_pool(const struct diag_input *in, struct diagnosis *d)
{
	struct pool_stats p = { 0 };
	struct diag_cause *c;
	double share, busy_ratio, cpu_wait;
	char a[FMT_BUF], b[FMT_BUF];
	int from_totals;

	if (!report_has_object(in->db, "request_queueing"))
		return in->has_sched ? default_pool(in, d) : 0;
	from_totals = load_totals(in, &p, d);
	if (from_totals < 0 || (from_totals == 0 && load_requests(in, &p, d) < 0)) {
		diag_caveat(d, "request_queueing could not be read: thread pools not checked");
		return 0;
	}
	if (p.requests == 0 || p.queue_total + p.service_total <= 0)
		return in->has_sched ? default_pool(in, d) : 0;
	load_utilisation(in, &p);
	if (p.busy_avg <= 0 && diag_scope_ns(in) > 0)   /* Little's law: requests in service */
		p.busy_avg = p.service_total / (double)diag_scope_ns(in);
	share = p.queue_total / (p.queue_total + p.service_total);
	if (share < MIN_QUEUE_SHARE)
		return 0;
	if (p.workers == 1 && in->has_sched) { /* an event loop, not a pool */
		p.busy_avg = loop_busy(in, &p);
		if (p.busy_avg < BUSY_SATURATED)
			return 0;
	}
	if (p.workers > 0 && p.busy_avg > (double)p.workers)
		p.busy_avg = (double)p.workers;   /* concurrency is not busy threads */
	busy_ratio = p.workers > 0 ? p.busy_avg / (double)p.workers : 0;
	c = diag_add_cause(d, p.workers == 1 && in->has_sched ? "event_loop_saturated" :
			   pool_kind(in, &p, busy_ratio));
	if (!c)
		return 0;
	cpu_wait = in->has_sched ? workers_cpu_wait(in, &p) : 0;
	c->score = cpu_wait >= CPU_STARVED ? share * (1 - cpu_wait) : share;
	c->rank_first = share >= FIRST_QUEUE_SHARE && cpu_wait < CPU_STARVED;
	c->key_name = "queue_mean";
	c->key_value = p.queue_mean;
	c->key_unit = "ns";
	c->sources = in->has_syscall ? "syscall,net,sched" : "req,sched";
	snprintf(c->title, sizeof(c->title), "%s: requests of pid %lld waited %s on average"
		 " before a worker picked them up (%lld workers, %.1f busy on average)",
		 strcmp(c->kind, "pool_underprovisioned") == 0 ? "thread pool too small" :
		 strcmp(c->kind, "workers_blocked") == 0 ? "pool workers blocked" :
		 strcmp(c->kind, "event_loop_saturated") == 0 ? "event loop saturated" :
		 "dispatch stall", (long long)p.pid,
		 fmt_duration_ns(a, sizeof(a), (uint64_t)p.queue_mean), (long long)p.workers,
		 p.busy_avg);
	diag_int(&c->subject, "pid", p.pid);
	diag_int(&c->subject, "workers", p.workers);
	diag_real(&c->subject, "busy_workers_avg", p.busy_avg);
	diag_real(&c->subject, "queue_depth_max", p.depth_max);
	diag_int(&c->subject, "service_mean_ns", (int64_t)p.service_mean);
	diag_int(&c->subject, "requests", p.requests);
	diag_text(&c->subject, "worker_tids", p.worker_tids);
	diag_evidence(c, "%lld requests: queue %s vs service %s on average; queueing is %.0f%%"
		      " of their latency", (long long)p.requests,
		      fmt_duration_ns(a, sizeof(a), (uint64_t)p.queue_mean),
		      fmt_duration_ns(b, sizeof(b), (uint64_t)p.service_mean), 100 * share);
	diag_evidence(c, "%lld workers, %.1f busy on average (%.0f%%), queue depth up to %.0f",
		      (long long)p.workers, p.busy_avg, 100 * busy_ratio, p.depth_max);
	if (cpu_wait >= CPU_STARVED)
		diag_evidence(c, "the %s runnable %.0f%% of their busy time, waiting for a CPU:"
			      " the run queue explains the queueing (see cpu_contention)",
			      p.workers == 1 ? "loop thread was" : "workers were", 100 * cpu_wait);
	if (in->has_sched)
		describe_worker_waits(in, c, &p);
	return 0;
}
