/* diagnose_runq.c - "cpu_contention" (book 12.2): threads of the scope
 * that were runnable but not running (run-queue wait) for a meaningful
 * share of their time, and the tasks that held their CPUs meanwhile.
 *
 * Victims: threads whose runnable time is at least 5% of their observed
 * time. Key number: their runnable time, summed. Competitors: each
 * run-queue wait [ready, switch-in) on a CPU is split among the tasks the
 * recorded switches show running on that CPU meanwhile (each switch's next
 * task runs until the CPU's next recorded switch), so the tasks that kept
 * a victim waiting collect the wait in proportion to the time they held
 * the CPU. With -a every switch is recorded and the split is exact. A
 * filtered recording only has the switches of traced tasks: when the next
 * recorded switch does not switch out the task that was switched in
 * (others ran in between, unseen), that stretch is split evenly between
 * the task seen starting it and the task seen ending it.
 * The idle task means the CPU was free (a wakeup delay, not contention);
 * time before the CPU's first recorded switch is unknown. The waits come
 * from one sorted query, the switches of their CPUs from one sorted query
 * or a scan per CPU (scan_per_cpu): no index needed on big tables. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "db/db.h"
#include "diagnose.h"
#include "util/fmt.h"
#include "util/grow.h"
#include "util/hashmap.h"

#define VICTIM_SHARE 0.05
#define MAX_VICTIMS  64
#define MIN_SCORE    0.05

struct competitor {
	uint32_t pid, tid;
	uint64_t ns;
};

struct competitors {
	struct competitor *v;
	size_t len, cap;
	struct hmap by_tid;
	uint64_t idle_ns, unknown_ns;
};

static int charge(struct competitors *cs, uint32_t pid, uint32_t tid, uint64_t ns)
{
	int created = 0;
	uint64_t *slot;

	if (tid == 0) {
		cs->idle_ns += ns;
		return 0;
	}
	slot = hmap_upsert(&cs->by_tid, tid, 0, cs->len, &created);
	if (!slot)
		return -1;
	if (created) {
		if (array_grow((void **)&cs->v, &cs->cap, cs->len, sizeof(*cs->v), 32) < 0)
			return -1;
		cs->v[cs->len++] = (struct competitor){ .pid = pid, .tid = tid };
	}
	cs->v[*slot].ns += ns;
	return 0;
}

/* Victims as a comma list of tids (numbers only: safe inside SQL). */
static size_t victim_list(const struct diag_input *in, char *buf, size_t len,
			  uint64_t *runnable, uint64_t *observed)
{
	size_t n = 0, used = 0;

	*runnable = *observed = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < in->nthreads && n < MAX_VICTIMS; i++) {
		const struct diag_thread *t = &in->threads[i];
		if (t->observed == 0 || t->runnable < 1000000 ||
		    (double)t->runnable < VICTIM_SHARE * (double)t->observed)
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s%u", n ? "," : "", t->tid);
		*runnable += t->runnable;
		*observed += t->observed;
		n++;
	}
	return n;
}

/* The recorded switches of one CPU, in time order: at ts, prev (pid, tid)
 * leaves the CPU to next. */
struct cpu_switch {
	int64_t  ts;
	uint32_t prev_pid, prev_tid;
	uint32_t pid, tid;         /* next */
};

struct cpu_switches {
	int64_t cpu;             /* the CPU loaded, -1: none */
	struct cpu_switch *v;
	size_t len, cap;
};

/* Loads the switches of cpu from the statement s (rows cpu, ts, pid, tid
 * ordered by cpu, ts), which is left on the first row of a later CPU.
 * *srow is the step result of s's current row. */
static int load_cpu(sqlite3_stmt *s, int *srow, int64_t cpu, struct cpu_switches *sw)
{
	sw->cpu = cpu;
	sw->len = 0;
	while (*srow == SQLITE_ROW && sqlite3_column_int64(s, 0) < cpu)
		*srow = sqlite3_step(s);
	for (; *srow == SQLITE_ROW && sqlite3_column_int64(s, 0) == cpu; *srow = sqlite3_step(s)) {
		if (array_grow((void **)&sw->v, &sw->cap, sw->len, sizeof(*sw->v), 1024) < 0)
			return -1;
		sw->v[sw->len++] = (struct cpu_switch){ .ts = sqlite3_column_int64(s, 1),
			.pid = (uint32_t)sqlite3_column_int64(s, 2),
			.tid = (uint32_t)sqlite3_column_int64(s, 3),
			.prev_pid = (uint32_t)sqlite3_column_int64(s, 4),
			.prev_tid = (uint32_t)sqlite3_column_int64(s, 5) };
	}
	return 0;
}

/* Index of the last switch at or before t, or -1. */
static ssize_t last_switch_before(const struct cpu_switches *sw, int64_t t)
{
	size_t lo = 0, hi = sw->len;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sw->v[mid].ts <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (ssize_t)lo - 1;
}

static int charge_task(struct competitors *cs, uint32_t victim, uint32_t pid, uint32_t tid,
		       uint64_t ns)
{
	if (tid == victim) {   /* inconsistent: not a competitor */
		cs->unknown_ns += ns;
		return 0;
	}
	return charge(cs, pid, tid, ns);
}

/* Charges the stretch [at, end) that begins with switch x: to x's next
 * task, or, when the following switch y does not switch that task out
 * (unrecorded switches in between), half to it and half to y's prev. */
static int charge_stretch(struct competitors *cs, uint32_t victim, const struct cpu_switch *x,
			  const struct cpu_switch *y, uint64_t ns)
{
	if (!y || y->prev_tid == x->tid)
		return charge_task(cs, victim, x->pid, x->tid, ns);
	if (charge_task(cs, victim, x->pid, x->tid, ns / 2) < 0)
		return -1;
	return charge_task(cs, victim, y->prev_pid, y->prev_tid, ns - ns / 2);
}

/* Splits the wait [from, to) of victim tid among the tasks running on
 * the CPU meanwhile. */
static int charge_wait(struct competitors *cs, const struct cpu_switches *sw,
		       uint32_t victim, int64_t from, int64_t to)
{
	ssize_t i = last_switch_before(sw, from);
	int64_t at = from;

	if (i < 0) {   /* before the CPU's first recorded switch */
		int64_t end = sw->len && sw->v[0].ts < to ? sw->v[0].ts : to;
		cs->unknown_ns += (uint64_t)(end - at);
		at = end;
		i = 0;
	}
	for (; at < to && (size_t)i < sw->len; i++) {
		const struct cpu_switch *y = (size_t)i + 1 < sw->len ? &sw->v[i + 1] : NULL;
		int64_t end = y && y->ts < to ? y->ts : to;

		if (end <= at)
			continue;
		if (charge_stretch(cs, victim, &sw->v[i], y && y->ts <= to ? y : NULL,
				   (uint64_t)(end - at)) < 0)
			return -1;
		at = end;
	}
	return 0;
}

/* A victim's run-queue wait [from, to) on cpu. */
struct wait {
	int64_t cpu, from, to;
	uint32_t tid;
};

struct waits {
	struct wait *v;
	size_t len, cap;
	size_t ncpus;             /* distinct CPUs (v is ordered by cpu) */
};

static int collect_waits(sqlite3_stmt *w, struct waits *ws)
{
	while (sqlite3_step(w) == SQLITE_ROW) {
		struct wait x = { .cpu = sqlite3_column_int64(w, 0),
				  .tid = (uint32_t)sqlite3_column_int64(w, 1),
				  .from = sqlite3_column_int64(w, 2),
				  .to = sqlite3_column_int64(w, 3) };

		if (x.to <= x.from)
			continue;
		if (array_grow((void **)&ws->v, &ws->cap, ws->len, sizeof(*ws->v), 256) < 0)
			return -1;
		ws->ncpus += ws->len == 0 || ws->v[ws->len - 1].cpu != x.cpu;
		ws->v[ws->len++] = x;
	}
	return 0;
}

/* The switches of the waits' CPUs come from one statement ordered by
 * (cpu, ts), which sorts every switch of those CPUs, or from one
 * statement per CPU reading the table in its order (time order, no sort)
 * and keeping that CPU's rows. A scan visits a row for about a tenth of
 * what sorting it costs (log2 of the rows, times a comparison), so the
 * scans win while there are fewer CPUs than half that log: a 5 s
 * postgres capture's 205k switches on 2 CPUs, 0.09 s sorted against
 * 2 x 0.01 s. Memory is one CPU's switches either way. */
static int scan_per_cpu(const struct diag_input *in, size_t ncpus)
{
	int64_t rows = db_query_int(in->db, "SELECT max(rowid) FROM switches", 0);
	double lg = 0;

	for (; rows > 1; rows >>= 1)
		lg++;
	return (double)ncpus <= lg / 2;
}

/* Statement for the switches of the waits' CPUs: per CPU (bind :cpu,
 * load_cpu_scan) or sorted (load_cpu). */
static sqlite3_stmt *switches_statement(const struct diag_input *in, const struct waits *ws,
					int per_cpu)
{
	char sql[4096];
	size_t used;

	if (per_cpu)
		return diag_prepare(in, "SELECT cpu, ts, next_pid, next_tid, prev_pid, prev_tid"
				    " FROM switches WHERE cpu = :cpu AND ts <= :to");
	used = (size_t)snprintf(sql, sizeof(sql), "SELECT cpu, ts, next_pid, next_tid,"
				" prev_pid, prev_tid FROM switches WHERE ts <= :to AND cpu IN (");
	for (size_t i = 0; i < ws->len && used < sizeof(sql) - 64; i++)
		if (i == 0 || ws->v[i].cpu != ws->v[i - 1].cpu)
			used += (size_t)snprintf(sql + used, sizeof(sql) - used, "%s%lld",
						 i ? "," : "", (long long)ws->v[i].cpu);
	if (used >= sizeof(sql) - 64)   /* thousands of CPUs: every switch */
		return diag_prepare(in, "SELECT cpu, ts, next_pid, next_tid, prev_pid, prev_tid"
				    " FROM switches WHERE ts <= :to ORDER BY cpu, ts");
	snprintf(sql + used, sizeof(sql) - used, ") ORDER BY cpu, ts");
	return diag_prepare(in, sql);
}

/* Loads the switches of cpu with the per-CPU statement s. */
static int load_cpu_scan(sqlite3_stmt *s, int64_t cpu, struct cpu_switches *sw)
{
	int row, rc;

	sqlite3_bind_int64(s, sqlite3_bind_parameter_index(s, ":cpu"), cpu);
	row = sqlite3_step(s);
	rc = load_cpu(s, &row, cpu, sw);
	sqlite3_reset(s);
	return rc;
}

static int charge_waits(const struct diag_input *in, const char *victims,
			struct competitors *cs)
{
	char sql[4096], where[1024];
	struct cpu_switches sw = { .cpu = -1 };
	struct waits ws = { 0 };
	sqlite3_stmt *w, *s = NULL;
	int rc, srow = SQLITE_DONE, per_cpu = 0;

	/* runq_latency's rows (runnable, state_code 1 of enum state_kind, and
	 * not cut by the capture's edges) read from thread_state_rows itself:
	 * through the views, every row of the table was joined with the three
	 * lookup tables before the filter (0.15 of a 0.9 s report) */
	snprintf(sql, sizeof(sql), "SELECT cpu, tid, max(start_ts, :from),"
		 " min(start_ts + duration, :to) FROM thread_state_rows"
		 " WHERE state_code = 1 AND partial = 0 AND tid IN (%s) AND %s"
		 " ORDER BY cpu, start_ts", victims,
		 report_scope_sql(where, sizeof(where), "pid", "tid", "start_ts",
				  "start_ts + duration"));
	w = diag_prepare(in, sql);
	rc = w ? collect_waits(w, &ws) : -1;
	sqlite3_finalize(w);
	if (rc == 0 && ws.len > 0) {
		per_cpu = scan_per_cpu(in, ws.ncpus);
		s = switches_statement(in, &ws, per_cpu);
		if (!s)
			rc = -1;
		else if (!per_cpu)
			srow = sqlite3_step(s);
	}
	for (size_t i = 0; rc == 0 && i < ws.len; i++) {
		const struct wait *x = &ws.v[i];

		if (x->cpu != sw.cpu)
			rc = per_cpu ? load_cpu_scan(s, x->cpu, &sw) : load_cpu(s, &srow, x->cpu, &sw);
		if (rc == 0)
			rc = charge_wait(cs, &sw, x->tid, x->from, x->to);
	}
	free(sw.v);
	free(ws.v);
	sqlite3_finalize(s);
	return rc;
}

static int by_ns_desc(const void *a, const void *b)
{
	const struct competitor *x = a, *y = b;

	return x->ns != y->ns ? (x->ns > y->ns ? -1 : 1) : (x->tid < y->tid ? -1 : 1);
}

static void describe(const struct diag_input *in, struct diag_cause *c,
		     struct competitors *cs, const char *victims, size_t nvictims,
		     uint64_t runnable, uint64_t observed)
{
	char a[FMT_BUF], b[FMT_BUF], pct[FMT_BUF], comm[64];

	snprintf(c->title, sizeof(c->title), "CPU contention: %zu thread(s) waited %s in the"
		 " run queue (%s of their time)", nvictims,
		 fmt_duration_ns(a, sizeof(a), runnable),
		 fmt_percent(pct, sizeof(pct), runnable, observed));
	diag_int(&c->subject, "victims", (int64_t)nvictims);
	diag_text(&c->subject, "victim_tids", victims);
	if (cs->len > 0)
		qsort(cs->v, cs->len, sizeof(*cs->v), by_ns_desc);
	for (size_t i = 0; i < cs->len && i < DIAG_MAX_ROWS; i++) {
		diag_row(&c->subject, "competitors");
		diag_row_int(&c->subject, "pid", cs->v[i].pid);
		diag_row_int(&c->subject, "tid", cs->v[i].tid);
		diag_row_text(&c->subject, "comm",
			      diag_comm(in, cs->v[i].pid, cs->v[i].tid, comm, sizeof(comm)));
		diag_row_int(&c->subject, "cpu_ns", (int64_t)cs->v[i].ns);
		if (i < 3)
			diag_evidence(c, "pid %u tid %u (%s) ran on the CPU for %s of that wait",
				      cs->v[i].pid, cs->v[i].tid, comm,
				      fmt_duration_ns(b, sizeof(b), cs->v[i].ns));
	}
	if (cs->idle_ns > 0)
		diag_evidence(c, "%s of the wait had the CPU idle (wakeup delay, not"
			      " contention)", fmt_duration_ns(b, sizeof(b), cs->idle_ns));
	if (cs->unknown_ns > 0)
		diag_evidence(c, "%s of the wait is before the CPU's first recorded switch"
			      " (not attributed)", fmt_duration_ns(b, sizeof(b), cs->unknown_ns));
}

int diagnose_cpu_contention(const struct diag_input *in, struct diagnosis *d)
{
	char victims[MAX_VICTIMS * 12 + 1];
	uint64_t runnable, observed;
	size_t n = victim_list(in, victims, sizeof(victims), &runnable, &observed);
	struct competitors cs = { 0 };
	struct diag_cause *c;
	double score;
	int rc;

	if (!in->has_sched || n == 0 || !diag_material(in, runnable))
		return 0;
	score = (double)runnable / (double)observed;
	if (score < MIN_SCORE)
		return 0;
	hmap_init(&cs.by_tid);
	rc = charge_waits(in, victims, &cs);
	if (rc == 0 && (c = diag_add_cause(d, "cpu_contention"))) {
		c->score = score;
		c->key_name = "runnable_total";
		c->key_value = (double)runnable;
		c->key_unit = "ns";
		c->sources = "sched";
		describe(in, c, &cs, victims, n, runnable, observed);
	}
	hmap_free(&cs.by_tid);
	free(cs.v);
	return rc;
}
