/* diagnose_runq.c - "cpu_contention" (book 12.2): threads of the scope
 * that were runnable but not running (run-queue wait) for a meaningful
 * share of their time, and the tasks that held their CPUs meanwhile.
 *
 * Victims: threads whose runnable time is at least 5% of their observed
 * time. Key number: their runnable time, summed. Competitors: each
 * run-queue wait ended by a switch-in is charged to the task that
 * switch replaced on that CPU (switches.prev_*), so the task that kept a
 * victim waiting collects the wait; the idle task means the CPU was free
 * (a wakeup delay, not contention). Waits and switches are merged in C
 * from two sorted queries: no index needed on big tables. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "diagnose.h"
#include "fmt.h"
#include "hashmap.h"

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
		if (cs->len == cs->cap) {
			size_t n = cs->cap ? cs->cap * 2 : 32;
			struct competitor *grown = realloc(cs->v, n * sizeof(*grown));
			if (!grown)
				return -1;
			cs->v = grown;
			cs->cap = n;
		}
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

static int charge_waits(const struct diag_input *in, const char *victims,
			struct competitors *cs)
{
	char sql[4096], where[1024];
	sqlite3_stmt *w, *s;
	int rc = 0, ws, ss;

	snprintf(sql, sizeof(sql), "SELECT tid, switch_in_ts, min(switch_in_ts, :to) -"
		 " max(ready_ts, :from) FROM runq_latency WHERE tid IN (%s) AND %s"
		 " ORDER BY tid, switch_in_ts", victims,
		 report_scope_sql(where, sizeof(where), "pid", "tid", "ready_ts",
				  "switch_in_ts"));
	w = diag_prepare(in, sql);
	snprintf(sql, sizeof(sql), "SELECT next_tid, ts, prev_pid, prev_tid FROM switches"
		 " WHERE next_tid IN (%s) AND ts > :from ORDER BY next_tid, ts", victims);
	s = diag_prepare(in, sql);
	if (!w || !s) {
		sqlite3_finalize(w);
		sqlite3_finalize(s);
		return -1;
	}
	ss = sqlite3_step(s);
	while (rc == 0 && (ws = sqlite3_step(w)) == SQLITE_ROW) {
		int64_t tid = sqlite3_column_int64(w, 0), ts = sqlite3_column_int64(w, 1);
		int64_t ns = sqlite3_column_int64(w, 2);
		while (ss == SQLITE_ROW && (sqlite3_column_int64(s, 0) < tid ||
		       (sqlite3_column_int64(s, 0) == tid && sqlite3_column_int64(s, 1) < ts)))
			ss = sqlite3_step(s);
		if (ns <= 0)
			continue;
		if (ss == SQLITE_ROW && sqlite3_column_int64(s, 0) == tid &&
		    sqlite3_column_int64(s, 1) == ts)
			rc = charge(cs, (uint32_t)sqlite3_column_int64(s, 2),
				    (uint32_t)sqlite3_column_int64(s, 3), (uint64_t)ns);
		else
			cs->unknown_ns += (uint64_t)ns;
	}
	sqlite3_finalize(w);
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
			diag_evidence(c, "pid %u tid %u (%s) held the CPU for %s of that wait",
				      cs->v[i].pid, cs->v[i].tid, comm,
				      fmt_duration_ns(b, sizeof(b), cs->v[i].ns));
	}
	if (cs->idle_ns > 0)
		diag_evidence(c, "%s of the wait ended with the CPU idle (wakeup delay, not"
			      " contention)", fmt_duration_ns(b, sizeof(b), cs->idle_ns));
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
