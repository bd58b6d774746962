/* diagnose_locks.c - "lock_contention" (book 12.2): the lock the scope's
 * threads waited on longest, with its waiters, the call site they waited
 * from, the thread that released them (the holder) and what it was doing.
 *
 * Candidates, per lock: user mutexes timed by uprobes (user_mutexes,
 * exact), futex FUTEX_WAIT calls per (pid, address) (futex_calls op 0:
 * glibc's mutexes wait with FUTEX_WAIT, its condition variables and
 * semaphores with FUTEX_WAIT_BITSET, which is waiting for work, not for a
 * lock) and kernel lock contention (kernel_locks). A mutex is a futex at
 * the same address: when both sources saw it, the uprobe figure wins.
 *
 * A default recording has none of these, but the waits source sums every
 * futex wait per thread, second and address in the kernel
 * (thread_metrics class futex_wait). An address counts as a lock when the
 * waiters' off-CPU user stacks say so (pthread_mutex_lock, __lll_lock_wait
 * ...) or, without telling stacks, when the threads that woke it also
 * waited on it (a convoy); condition variables and semaphores (waiting for
 * work or for a result) do not.
 * Key number: wait time summed over the waiters, clipped to the window. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "diagnose.h"
#include "util/fmt.h"
#include "util/text.h"

#define MIN_SCORE 0.05
#define MIN_WAIT_NS 1000000

struct lock_candidate {
	const char *source;       /* user_mutexes, futex, kernel_locks */
	const char *sources;      /* event sources */
	int64_t pid, addr;
	int64_t waiters, waits, wait_ns, max_ns;
	char tids[512];
	const struct futex_waits *futex;   /* the futex entry of that address, if any */
};

static const char *const lock_queries[][3] = {
	{ "user_mutexes", "lock",
	  "SELECT pid, addr, count(DISTINCT tid), count(*), sum(min(ts, :to) - max(ts - duration,"
	  " :from)), max(duration), group_concat(DISTINCT tid) FROM user_mutexes WHERE %s"
	  " GROUP BY pid, addr ORDER BY 5 DESC LIMIT 1" },
	{ "futex", "syscall", NULL },   /* from the report's pass over the calls */
	{ "kernel_locks", "lock",
	  "SELECT min(pid), lock_addr, count(DISTINCT tid), count(*), sum(min(ts, :to) -"
	  " max(ts - duration, :from)), max(duration), group_concat(DISTINCT tid)"
	  " FROM kernel_locks WHERE %s GROUP BY lock_addr ORDER BY 5 DESC LIMIT 1" },
	/* the waits source's sums, clipped to the window in proportion */
	{ "futex_waits", "waits",
	  "SELECT pid, key, count(DISTINCT tid), sum(calls), CAST(sum(total_ns *"
	  " max(0, min(window_end, :to) - max(window_start, :from)) * 1.0 / max(1,"
	  " min(window_end, :capture_end) - max(window_start, :capture_start))) AS INTEGER),"
	  " max(total_ns), group_concat(DISTINCT tid)"
	  " FROM thread_metrics WHERE kind = 'waits' AND class = 'futex_wait' AND %s"
	  " GROUP BY pid, key ORDER BY 5 DESC LIMIT 8" },
};
#define N_LOCK_QUERIES 4

static const struct futex_waits *futex_of(const struct diag_input *in, int64_t pid,
					  int64_t addr)
{
	for (size_t i = 0; i < in->calls->nfutex; i++) {
		const struct futex_waits *f = &in->calls->futex[i];
		if (f->mutex && f->pid == (uint32_t)pid && f->addr == (uint64_t)addr)
			return f;
	}
	return NULL;
}

/* The mutex futex address with most wait (futex waits are sorted). */
static void futex_candidate(const struct diag_input *in, struct lock_candidate *lc)
{
	for (size_t i = 0; i < in->calls->nfutex; i++) {
		const struct futex_waits *f = &in->calls->futex[i];
		if (!f->mutex || f->wait_ns == 0)
			continue;
		lc->source = "futex";
		lc->sources = "syscall";
		lc->pid = f->pid;
		lc->addr = (int64_t)f->addr;
		lc->waiters = f->waiters;
		lc->waits = (int64_t)f->waits;
		lc->wait_ns = (int64_t)f->wait_ns;
		lc->max_ns = (int64_t)f->max_ns;
		snprintf(lc->tids, sizeof(lc->tids), "%s", f->tids);
		lc->futex = f;
		return;
	}
}

/* How the waiters' futex sleeps look from user space: their off-CPU user
 * stacks' time under mutex code vs condition variable / semaphore code. */
struct futex_kind {
	uint64_t mutex_ns, cond_ns;
};

static int user_frame_kind(const char *name)
{
	static const char *const mutex[] = { "pthread_mutex_", "__pthread_mutex_",
		"___pthread_mutex_", "__lll_lock_wait", "lll_mutex_lock", "__GI___lll_lock_wait",
		"pthread_rwlock_", "__pthread_rwlock_", "___pthread_rwlock_", "pthread_spin_" };
	static const char *const cond[] = { "pthread_cond_", "__pthread_cond_",
		"___pthread_cond_", "sem_wait", "sem_timedwait", "sem_clockwait", "__new_sem_wait",
		"pthread_barrier_wait", "pthread_join", "__pthread_clockjoin" };

	for (size_t i = 0; i < sizeof(mutex) / sizeof(mutex[0]); i++)
		if (strncmp(name, mutex[i], strlen(mutex[i])) == 0)
			return 1;
	for (size_t i = 0; i < sizeof(cond) / sizeof(cond[0]); i++)
		if (strncmp(name, cond[i], strlen(cond[i])) == 0)
			return 2;
	return 0;
}

static int futex_kind_of(const struct diag_input *in, const char *tids, struct futex_kind *k)
{
	char sql[1024];
	sqlite3_stmt *st;

	memset(k, 0, sizeof(*k));
	snprintf(sql, sizeof(sql), "SELECT ustack_id, sum(duration) FROM offcpu WHERE tid IN (%s)"
		 " AND wait_class = 'futex' AND ts > :from AND ts - duration < :to"
		 " AND ustack_id IS NOT NULL GROUP BY 1 ORDER BY 2 DESC LIMIT 64", tids);
	st = diag_prepare(in, sql);
	if (!st)
		return -1;
	while (sqlite3_step(st) == SQLITE_ROW) {
		uint32_t n;
		const uint32_t *fns = callchains_get(in->cc, sqlite3_column_int64(st, 0), &n);
		uint64_t ns = (uint64_t)sqlite3_column_int64(st, 1);
		for (uint32_t i = 0; i < n; i++) {
			int kind = user_frame_kind(in->cc->functions[fns[i]].name);
			if (kind == 1)
				k->mutex_ns += ns;
			if (kind == 2)
				k->cond_ns += ns;
			if (kind)
				break;
		}
	}
	sqlite3_finalize(st);
	return 0;
}

/* Whether the threads that woke waiters on (pid, addr) also waited on it. */
static int wakers_also_wait(const struct diag_input *in, int64_t pid, int64_t addr)
{
	char sql[768];

	snprintf(sql, sizeof(sql), "SELECT count(DISTINCT w.tid), count(DISTINCT s.tid)"
		 " FROM thread_metrics w LEFT JOIN thread_metrics s ON s.tid = w.tid"
		 " AND s.pid = w.pid AND s.key = w.key AND s.class = 'futex_wait'"
		 " AND s.kind = 'waits' WHERE w.kind = 'waits' AND w.class = 'futex_wake'"
		 " AND w.pid = %lld AND w.key = %lld", (long long)pid, (long long)addr);
	{
		sqlite3_stmt *st = diag_prepare(in, sql);
		int64_t wakers = 0, waiting = 0;
		if (st && sqlite3_step(st) == SQLITE_ROW) {
			wakers = sqlite3_column_int64(st, 0);
			waiting = sqlite3_column_int64(st, 1);
		}
		sqlite3_finalize(st);
		return wakers > 0 && waiting * 2 > wakers;
	}
}

/* 1 if the futex address waited on by tids is a lock, by the waiters'
 * stacks, else by the convoy test. */
static int futex_is_lock(const struct diag_input *in, int64_t pid, int64_t addr, const char *tids)
{
	struct futex_kind k;

	if (futex_kind_of(in, tids, &k) < 0)
		return 0;
	if (k.mutex_ns || k.cond_ns)
		return k.mutex_ns > k.cond_ns;
	return wakers_also_wait(in, pid, addr);
}

static void candidate_row(sqlite3_stmt *st, int which, struct lock_candidate *lc)
{
	lc->source = lock_queries[which][0];
	lc->sources = lock_queries[which][1];
	lc->pid = sqlite3_column_int64(st, 0);
	lc->addr = sqlite3_column_int64(st, 1);
	lc->waiters = sqlite3_column_int64(st, 2);
	lc->waits = sqlite3_column_int64(st, 3);
	lc->wait_ns = sqlite3_column_int64(st, 4);
	lc->max_ns = sqlite3_column_int64(st, 5);
	snprintf(lc->tids, sizeof(lc->tids), "%s",
		 sqlite3_column_text(st, 6) ? (const char *)sqlite3_column_text(st, 6) : "");
	if (strlen(lc->tids) == sizeof(lc->tids) - 1 && strrchr(lc->tids, ','))
		*strrchr(lc->tids, ',') = '\0';   /* cut: drop the partial number */
}

static int load_candidate(const struct diag_input *in, int which, struct lock_candidate *lc)
{
	char where[1024], sql[2048];
	const char *start = "(ts - duration)", *end = "ts";
	sqlite3_stmt *st;
	int step;

	memset(lc, 0, sizeof(*lc));
	if (which == 1) {
		futex_candidate(in, lc);
		return 0;
	}
	if (which == 3) { /* thread_metrics rows are windows */
		start = "window_start";
		end = "window_end";
	}
	snprintf(sql, sizeof(sql), lock_queries[which][2],
		 report_scope_sql(where, sizeof(where), "pid", "tid", start, end));
	st = diag_prepare(in, sql);
	if (!st)
		return -1;
	/* the first row that is a lock (futex_waits: the others are queues) */
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		candidate_row(st, which, lc);
		if (which != 3 || futex_is_lock(in, lc->pid, lc->addr, lc->tids))
			break;
		memset(lc, 0, sizeof(*lc));
	}
	if (step == SQLITE_ROW)
		lc->futex = futex_of(in, lc->pid, lc->addr);
	sqlite3_finalize(st);
	if (step != SQLITE_ROW && step != SQLITE_DONE) {
		db_report_error(in->db, lock_queries[which][0]);
		return -1;
	}
	return 0;
}

/* Observed time of the waiters; when the tid list was cut, the listed
 * ones stand for all (scaled by waiters / listed). */
static uint64_t observed_of(const struct diag_input *in, const char *tids, int64_t waiters)
{
	uint64_t sum = 0;
	int64_t listed = 0;

	for (const char *p = tids; *p; listed++) {
		sum += diag_observed_ns(in, (uint32_t)strtoul(p, NULL, 10));
		p = strchr(p, ',');
		p = p ? p + 1 : "";
	}
	if (listed > 0 && waiters > listed)
		sum = (uint64_t)((double)sum * (double)waiters / (double)listed);
	return sum;
}

static int is_lock_plumbing(const struct function *f)
{
	const char *base = text_basename(f->module);
	static const char *const prefixes[] = { "pthread_", "__pthread", "lll_", "__lll",
		"futex", "__futex", "syscall", "__GI", "___pthread", "mutex_", "__mutex",
		"_raw_spin", "queued_spin", "rwsem", "__rwsem", "osq_", "down_", "contention" };

	if (f->is_kernel && strstr(f->name, "lock"))
		return 1;
	if (!f->is_kernel && (strncmp(base, "libc", 4) == 0 || strncmp(base, "libpthread", 10) == 0
			      || strncmp(base, "ld-linux", 8) == 0))
		return 1;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(f->name, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	return 0;
}

/* The innermost frame of the waits' most common stack that is not lock
 * plumbing (libc, pthread, kernel lock functions). */
static void call_site(const struct diag_input *in, const struct lock_candidate *lc,
		      char *buf, size_t len)
{
	char sql[1024];
	sqlite3_stmt *st;
	int64_t stack = -1;
	uint32_t n = 0;
	const uint32_t *fns;
	const char *table = strcmp(lc->source, "futex") == 0 ? "futex_calls" : lc->source;
	const char *col = strcmp(lc->source, "kernel_locks") == 0 ? "kstack_id" : "ustack_id";
	const char *addr_col = strcmp(lc->source, "kernel_locks") == 0 ? "lock_addr" : "addr";

	snprintf(buf, len, "unknown (no stacks recorded)");
	if (lc->futex && strcmp(lc->source, "futex") == 0) {
		uint64_t best = 0;
		for (int i = 0; i < FUTEX_TOP; i++)
			if (lc->futex->stacks[i].n > best) {
				best = lc->futex->stacks[i].n;
				stack = lc->futex->stacks[i].key;
			}
		goto resolve;
	}
	if (strcmp(lc->source, "futex_waits") == 0) /* the waiters' futex sleeps */
		snprintf(sql, sizeof(sql), "SELECT ustack_id FROM offcpu WHERE tid IN (%s) AND"
			 " wait_class = 'futex' AND ustack_id IS NOT NULL GROUP BY 1"
			 " ORDER BY sum(duration) DESC LIMIT 1", lc->tids);
	else
		snprintf(sql, sizeof(sql), "SELECT %s FROM %s WHERE %s = %lld %s AND %s IS NOT NULL"
			 " GROUP BY 1 ORDER BY count(*) DESC LIMIT 1", col, table, addr_col,
			 (long long)lc->addr, strcmp(lc->source, "futex") == 0 ? "AND op = 0" : "",
			 col);
	st = db_prepare(in->db, sql);
	if (st && sqlite3_step(st) == SQLITE_ROW)
		stack = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
resolve:
	fns = stack >= 0 ? callchains_get(in->cc, stack, &n) : NULL;
	for (uint32_t i = 0; i < n; i++)
		if (!is_lock_plumbing(&in->cc->functions[fns[i]])) {
			snprintf(buf, len, "%s", in->cc->functions[fns[i]].name);
			return;
		}
	if (n > 0)
		snprintf(buf, len, "%s", in->cc->functions[fns[0]].name);
}

/* The thread that most often woke the waiters out of their futex waits. */
static int64_t holder_of(const struct diag_input *in, const struct lock_candidate *lc,
			 int64_t *wakes)
{
	char sql[1024];
	sqlite3_stmt *st;
	int64_t tid = -1;

	*wakes = 0;
	if (lc->futex) {
		for (int i = 0; i < FUTEX_TOP; i++)
			if (lc->futex->wakers[i].n > (uint64_t)*wakes) {
				*wakes = (int64_t)lc->futex->wakers[i].n;
				tid = lc->futex->wakers[i].key;
			}
		if (tid > 0)
			return tid;
	}
	if (strcmp(lc->source, "futex_waits") == 0) /* who woke on that address */
		snprintf(sql, sizeof(sql), "SELECT tid, sum(calls) FROM thread_metrics WHERE"
			 " kind = 'waits' AND class = 'futex_wake' AND pid = %lld AND key = %lld"
			 " AND window_end > :from AND window_start < :to"
			 " GROUP BY 1 ORDER BY 2 DESC LIMIT 1", (long long)lc->pid,
			 (long long)lc->addr);
	else if (in->has_sched)
		snprintf(sql, sizeof(sql), "SELECT waker_tid, count(*) FROM thread_states"
			 " WHERE tid IN (%s) AND wait_class = 'futex' AND waker_tid > 0"
			 " AND start_ts < :to AND end_ts > :from GROUP BY 1 ORDER BY 2 DESC LIMIT 1",
			 lc->tids);
	else
		snprintf(sql, sizeof(sql), "SELECT tid, count(*) FROM futex_calls WHERE kind ="
			 " 'wake' AND pid = %lld AND addr = %lld AND start_ts < :to AND end_ts > :from"
			 " GROUP BY 1 ORDER BY 2 DESC LIMIT 1", (long long)lc->pid,
			 (long long)lc->addr);
	st = diag_prepare(in, sql);
	if (st && sqlite3_step(st) == SQLITE_ROW) {
		tid = sqlite3_column_int64(st, 0);
		*wakes = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	return tid;
}

/* The wait class a thread was blocked in longest. */
static const char *main_wait(const struct diag_thread *t)
{
	static const char *const names[DC_N] = { "block I/O", "futex", "poll", "sleep",
		"sockets", "accept", "other", "unknown" };
	int best = DC_OTHER;

	for (int k = 0; k < DC_N; k++)
		if (t->wait[k] > t->wait[best])
			best = k;
	return names[best];
}

/* What a thread was doing: its time split and its hottest function. */
static void doing(const struct diag_input *in, uint32_t tid, char *buf, size_t len)
{
	const struct diag_thread *t = diag_thread_find(in, tid);
	uint64_t best = 0;
	int64_t best_fn = -1;
	char pct[3][FMT_BUF];
	uint64_t *counts;

	snprintf(buf, len, "unknown (not in scope)");
	if (!t)
		return;
	counts = calloc((size_t)in->cc->nfunctions + 1, sizeof(*counts));
	for (size_t i = 0; counts && i < in->sel->len; i++) {
		const struct selected_group *g = &in->sel->groups[i];
		uint32_t kl, ul;
		const uint32_t *k = callchains_get(in->cc, g->kstack, &kl);
		const uint32_t *u = callchains_get(in->cc, g->ustack, &ul);
		if (g->tid != tid || (kl == 0 && ul == 0))
			continue;
		counts[kl ? k[0] : u[0]] += g->count;
		if (counts[kl ? k[0] : u[0]] > best) {
			best = counts[kl ? k[0] : u[0]];
			best_fn = kl ? k[0] : u[0];
		}
	}
	snprintf(buf, len, "running %s, runnable %s, blocked %s of its time (mostly %s)%s%s",
		 fmt_percent(pct[0], sizeof(pct[0]), t->running, t->observed),
		 fmt_percent(pct[1], sizeof(pct[1]), t->runnable, t->observed),
		 fmt_percent(pct[2], sizeof(pct[2]), t->blocked, t->observed), main_wait(t),
		 best_fn >= 0 ? "; hottest function " : "",
		 best_fn >= 0 ? in->cc->functions[best_fn].name : "");
	free(counts);
}

static void describe(const struct diag_input *in, struct diag_cause *c,
		     const struct lock_candidate *lc, uint64_t observed)
{
	char site[128], what[256], comm[64], a[FMT_BUF], b[FMT_BUF], pct[FMT_BUF];
	int64_t wakes, holder = holder_of(in, lc, &wakes);

	call_site(in, lc, site, sizeof(site));
	snprintf(c->title, sizeof(c->title), "lock contention on %s 0x%llx in pid %lld (%lld"
		 " waiters, %s waiting)", strcmp(lc->source, "kernel_locks") == 0 ?
		 "kernel lock" : "mutex", (unsigned long long)lc->addr, (long long)lc->pid,
		 (long long)lc->waiters, fmt_duration_ns(a, sizeof(a), (uint64_t)lc->wait_ns));
	diag_int(&c->subject, "pid", lc->pid);
	snprintf(a, sizeof(a), "0x%llx", (unsigned long long)lc->addr);
	diag_text(&c->subject, "address", a);
	diag_text(&c->subject, "lock_source", lc->source);
	diag_int(&c->subject, "waiters", lc->waiters);
	diag_text(&c->subject, "waiter_tids", lc->tids);
	diag_int(&c->subject, "waits", lc->waits);
	diag_text(&c->subject, "call_site", site);
	diag_evidence(c, "%lld waits by %lld threads (%s), %s in total, longest %s, %s of"
		      " their time", (long long)lc->waits, (long long)lc->waiters, lc->tids,
		      fmt_duration_ns(a, sizeof(a), (uint64_t)lc->wait_ns),
		      fmt_duration_ns(b, sizeof(b), (uint64_t)lc->max_ns),
		      fmt_percent(pct, sizeof(pct), (uint64_t)lc->wait_ns, observed));
	diag_evidence(c, "waiters wait from %s (source: %s)", site, lc->source);
	if (holder > 0) {
		doing(in, (uint32_t)holder, what, sizeof(what));
		diag_comm(in, (uint32_t)lc->pid, (uint32_t)holder, comm, sizeof(comm));
		diag_int(&c->subject, "holder_tid", holder);
		diag_text(&c->subject, "holder_comm", comm);
		diag_text(&c->subject, "holder_doing", what);
		diag_evidence(c, "holder: tid %lld (%s) woke the waiters most often (%lld wakes); %s",
			      (long long)holder, comm, (long long)wakes, what);
	}
}

int diagnose_locks(const struct diag_input *in, struct diagnosis *d)
{
	struct lock_candidate cand[N_LOCK_QUERIES], *best = NULL;
	struct diag_cause *c;
	uint64_t observed;
	/* the kernel sums stand in for the futex calls when those were not recorded */
	const int enabled[N_LOCK_QUERIES] = { in->has_lock, in->has_syscall, in->has_lock,
					      in->has_waits && !in->has_syscall };

	for (int i = 0; i < N_LOCK_QUERIES; i++) {
		memset(&cand[i], 0, sizeof(cand[i]));
		if (enabled[i] && load_candidate(in, i, &cand[i]) < 0)
			return -1;
		if (cand[i].wait_ns <= 0)
			continue;
		if (best && i == 1 && cand[0].wait_ns > 0 && cand[0].pid == cand[1].pid &&
		    cand[0].addr == cand[1].addr)
			continue;             /* the mutex already measured by its uprobes */
		if (!best || cand[i].wait_ns > best->wait_ns)
			best = &cand[i];
	}
	if (!best || best->wait_ns < MIN_WAIT_NS || !diag_material(in, (uint64_t)best->wait_ns))
		return 0;
	observed = observed_of(in, best->tids, best->waiters);
	if (observed == 0 || (double)best->wait_ns / (double)observed < MIN_SCORE)
		return 0;
	c = diag_add_cause(d, "lock_contention");
	if (!c)
		return 0;
	c->score = (double)best->wait_ns / (double)observed;
	if (c->score > 1)
		c->score = 1;
	c->key_name = "wait_total";
	c->key_value = (double)best->wait_ns;
	c->key_unit = "ns";
	c->sources = best->sources;
	describe(in, c, best, observed);
	return 0;
}
