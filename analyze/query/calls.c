/* calls.c - the system call pass of a report (calls.h).
 *
 * The durations of each call number go to a rank_select (exact
 * percentiles in bounded memory). All numbers share one budget
 * (calls_memory, 16 bytes a kept value: 8, and 8 to sort it): when the
 * values kept exceed it, the number keeping the most drops its values for
 * a histogram. Those numbers' percentiles are then found in more reads of
 * the syscalls table, their budget shared among them. An every-source
 * recording of a busy redis makes 5.5M calls in 60 s; an hour of it,
 * 330M, needed 2.6 GB here before. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "calls.h"
#include "util/fmt.h"
#include "util/rank_select.h"
#include "util/temp_file.h"

struct loader {
	struct calls *c;
	size_t nr_cap, futex_cap;
	struct hmap nr_index;                 /* (nr, 0) -> index in by_nr */
	struct hmap futex_index;              /* (pid << 1 | mutex, addr) -> index */
	struct hmap waiter_seen;              /* (futex index, tid) -> 1 */
	unsigned char io_nr[CALLS_MAX_NR];    /* 1: family rw, sync or net */
	int64_t futex_nr;                     /* futex's number, from syscall_names */
	size_t kept, max_kept;                /* durations kept, over every number */
};

void top_count_add(struct top_count *top, int64_t key)
{
	int low = 0;

	for (int i = 0; i < FUTEX_TOP; i++) {
		if (top[i].n > 0 && top[i].key == key) {
			top[i].n++;
			return;
		}
		if (top[i].n < top[low].n)
			low = i;
	}
	if (top[low].n == 0) {
		top[low].key = key;
		top[low].n = 1;
	} else {
		top[low].n--;         /* Misra-Gries: frequent keys survive */
	}
}

/* The number keeping the most durations drops them (a histogram instead).
 * 0 or -1. */
static int spill_largest(struct loader *L)
{
	struct call_durations *big = NULL;

	for (size_t i = 0; i < L->c->nnr; i++) {
		struct call_durations *cd = &L->c->by_nr[i];
		if (!big || rank_select_kept(cd->sel) > rank_select_kept(big->sel))
			big = cd;
	}
	if (!big || !rank_select_kept(big->sel))
		return 0;
	L->kept -= rank_select_kept(big->sel);
	return rank_select_spill(big->sel);
}

static int add_duration(struct loader *L, int64_t nr, int64_t d, double weight)
{
	struct calls *c = L->c;
	int created = 0;
	uint64_t *slot = hmap_upsert(&L->nr_index, (uint64_t)nr, 0, c->nnr, &created);
	struct call_durations *cd;
	size_t kept;
	int b;

	if (!slot)
		return -1;
	if (created) {
		struct rank_select *sel = rank_select_new(L->max_kept);
		if (!sel)
			return -1;
		if (c->nnr == L->nr_cap) {
			size_t n = L->nr_cap ? L->nr_cap * 2 : 64;
			struct call_durations *grown = realloc(c->by_nr, n * sizeof(*grown));
			if (!grown) {
				rank_select_free(sel);
				return -1;
			}
			c->by_nr = grown;
			L->nr_cap = n;
		}
		c->by_nr[c->nnr++] = (struct call_durations){ .nr = nr, .sel = sel,
							     .hist_lo = LOG2_BUCKETS, .hist_hi = -1 };
	}
	cd = &c->by_nr[*slot];
	kept = rank_select_kept(cd->sel);
	if (rank_select_add(cd->sel, d) < 0)
		return -1;
	L->kept += rank_select_kept(cd->sel) - kept;
	cd->len++;
	cd->calls += weight;
	cd->recorded_total += d;
	cd->total += weight == 1.0 ? d : (int64_t)((double)d * weight + 0.5);
	b = log2_bucket(d);
	cd->hist[b]++;
	cd->hist_lo = b < cd->hist_lo ? b : cd->hist_lo;
	cd->hist_hi = b > cd->hist_hi ? b : cd->hist_hi;
	return L->kept > L->max_kept ? spill_largest(L) : 0;
}

static struct futex_waits *futex_entry(struct loader *L, uint32_t pid, uint64_t addr,
				       int mutex, size_t *index)
{
	struct calls *c = L->c;
	int created = 0;
	uint64_t *slot = hmap_upsert(&L->futex_index, (uint64_t)pid << 1 | (uint64_t)mutex, addr,
				     c->nfutex, &created);

	if (!slot)
		return NULL;
	if (created) {
		if (c->nfutex == L->futex_cap) {
			size_t n = L->futex_cap ? L->futex_cap * 2 : 64;
			struct futex_waits *grown = realloc(c->futex, n * sizeof(*grown));
			if (!grown)
				return NULL;
			c->futex = grown;
			L->futex_cap = n;
		}
		memset(&c->futex[c->nfutex], 0, sizeof(c->futex[0]));
		c->futex[c->nfutex].pid = pid;
		c->futex[c->nfutex].addr = addr;
		c->futex[c->nfutex++].mutex = mutex;
	}
	*index = *slot;
	return &c->futex[*slot];
}

static void add_waiter(struct futex_waits *f, uint32_t tid)
{
	size_t used = strlen(f->tids);
	char num[16];
	int len = snprintf(num, sizeof(num), "%s%u", used ? "," : "", tid);

	f->waiters++;
	if (used + (size_t)len < sizeof(f->tids))
		memcpy(f->tids + used, num, (size_t)len + 1);
}

/* futex op (arg1 & 127): 0 WAIT and 9 WAIT_BITSET wait, 1 WAKE and 10
 * WAKE_BITSET wake (as the futex_calls view). */
static int add_futex(struct loader *L, sqlite3_stmt *st, int64_t clipped, double weight)
{
	uint32_t pid = (uint32_t)sqlite3_column_int64(st, 2);
	uint32_t tid = (uint32_t)sqlite3_column_int64(st, 3);
	uint64_t addr = (uint64_t)sqlite3_column_int64(st, 5);
	int64_t op = sqlite3_column_int64(st, 6) & 127;
	int64_t duration = sqlite3_column_int64(st, 1);
	struct futex_waits *f;
	size_t index;
	int created = 0;

	if (op == 1 || op == 10) {
		for (int mutex = 0; mutex < 2; mutex++) {
			uint64_t *slot = hmap_find(&L->futex_index, (uint64_t)pid << 1 | (uint64_t)mutex,
						   addr);
			if (slot)
				top_count_add(L->c->futex[*slot].wakers, tid);
		}
		return 0;
	}
	if (op != 0 && op != 9)
		return 0;
	f = futex_entry(L, pid, addr, op == 0, &index);
	if (!f)
		return -1;
	f->waits += weight;
	f->wait_ns += clipped > 0 ? (double)clipped * weight : 0;
	if ((uint64_t)duration > f->max_ns)
		f->max_ns = (uint64_t)duration;
	if (sqlite3_column_type(st, 7) != SQLITE_NULL)
		top_count_add(f->stacks, sqlite3_column_int64(st, 7));
	if (!hmap_upsert(&L->waiter_seen, index, tid, 1, &created))
		return -1;
	if (created)
		add_waiter(f, tid);
	return 0;
}

static void add_window(struct loader *L, int64_t nr, int64_t ts, int64_t duration,
		       double weight)
{
	struct call_windows *w = &L->c->windows;
	uint64_t k;

	if (w->n == 0 || nr < 0 || nr >= CALLS_MAX_NR || !L->io_nr[nr] || ts < (int64_t)w->base)
		return;
	k = ((uint64_t)ts - w->base) / w->width;
	if (k < w->n) {
		w->io_calls[k] += weight;
		w->io_ns[k] += (double)duration * weight;
	}
}

/* The I/O call numbers and futex's, read from syscall_names. */
static void load_syscall_facts(struct loader *L, sqlite3 *db)
{
	sqlite3_stmt *st = db_prepare(db, "SELECT nr FROM syscall_names"
				      " WHERE family IN ('rw', 'sync', 'net')");

	while (st && sqlite3_step(st) == SQLITE_ROW) {
		int64_t nr = sqlite3_column_int64(st, 0);
		if (nr >= 0 && nr < CALLS_MAX_NR)
			L->io_nr[nr] = 1;
	}
	sqlite3_finalize(st);
	L->futex_nr = db_query_int(db, "SELECT nr FROM syscall_names WHERE name = 'futex'", -1);
}

/* One pass over the calls in scope: futex's own (futex 1, with the
 * columns add_futex reads) or every other (the three the durations and
 * windows need). Two passes, because SQLite computes every result column
 * of every row: the futex columns for all 12M calls of a 60 s capture of
 * redis made this pass 4.7 s, where the narrow one and a second pass that
 * reads only nr (futex's rows keep their order, which the wakers' counts
 * depend on) take 2.7 s. */
static int scan_calls(struct loader *L, sqlite3 *db, const struct report_scope *scope,
		      int futex)
{
	char where[1024], sql[1600];
	sqlite3_stmt *st;
	int rc = 0, step, nr_col = futex ? 4 : 2, weight_col = futex ? 9 : 3;
	/* the view's join to syscall_windows only when there are windows */
	const char *weight = L->c->weighted ? "weight" : "1.0";

	report_scope_sql(where, sizeof(where), "pid", "tid", "ts", "(ts + duration)");
	if (futex)
		snprintf(sql, sizeof(sql), "SELECT ts, duration, pid, tid, nr, arg0, arg1, ustack_id,"
			 " min(ts + duration, :to) - max(ts, :from), %s FROM syscalls"
			 " WHERE (%s) AND nr = :futex", weight, where);
	else
		snprintf(sql, sizeof(sql), "SELECT ts, duration, nr, %s FROM syscalls WHERE (%s)%s",
			 weight, where, L->futex_nr >= 0 ? " AND nr != :futex" : "");
	st = db_prepare(db, sql);
	if (!st)
		return -1;
	report_scope_bind(st, scope);
	sqlite3_bind_int64(st, sqlite3_bind_parameter_index(st, ":futex"), L->futex_nr);
	while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t nr = sqlite3_column_int64(st, nr_col), duration = sqlite3_column_int64(st, 1);
		double w = sqlite3_column_double(st, weight_col);
		L->c->count++;
		rc = add_duration(L, nr, duration, w);
		if (rc == 0 && futex)
			rc = add_futex(L, st, sqlite3_column_int64(st, 8), w);
		add_window(L, nr, sqlite3_column_int64(st, 0), duration, w);
	}
	if (rc == 0 && step != SQLITE_DONE) {
		db_report_error(db, "syscalls");
		rc = -1;
	}
	sqlite3_finalize(st);
	return rc;
}

static int read_calls(struct loader *L, sqlite3 *db, const struct report_scope *scope)
{
	int rc = scan_calls(L, db, scope, 0);

	return rc == 0 && L->futex_nr >= 0 ? scan_calls(L, db, scope, 1) : rc;
}

static int by_total_desc(const void *pa, const void *pb)
{
	const struct call_durations *a = pa, *b = pb;

	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return a->nr < b->nr ? -1 : a->nr > b->nr;
}

static int by_wait_desc(const void *pa, const void *pb)
{
	const struct futex_waits *a = pa, *b = pb;

	if (a->wait_ns != b->wait_ns)
		return a->wait_ns > b->wait_ns ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static int make_windows(struct call_windows *w, uint64_t base, uint64_t width, uint64_t end)
{
	if (width == 0 || end <= base || (end - base) / width >= 100000)
		return 0;
	w->base = base;
	w->width = width;
	w->n = (size_t)((end - base) / width + 1);
	w->io_calls = calloc(w->n, sizeof(double));
	w->io_ns = calloc(w->n, sizeof(double));
	return w->io_calls && w->io_ns ? 0 : -1;
}

/* The nearest-rank position (0-based) of percentile p of n values. */
static uint64_t rank_pos(uint64_t n, int p)
{
	uint64_t rank = (n * (uint64_t)p + 99) / 100;

	return rank ? rank - 1 : 0;
}

/* One more read of the scope's calls for the numbers still pending. */
static int read_again(struct loader *L, sqlite3 *db, const struct report_scope *scope)
{
	char where[1024], sql[1400];
	sqlite3_stmt *st;
	int step;

	report_scope_sql(where, sizeof(where), "pid", "tid", "ts", "(ts + duration)");
	snprintf(sql, sizeof(sql), "SELECT duration, nr FROM syscalls WHERE (%s)", where);
	if (!(st = db_prepare(db, sql)))
		return -1;
	report_scope_bind(st, scope);
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		const uint64_t *slot = hmap_find(&L->nr_index, (uint64_t)sqlite3_column_int64(st, 1), 0);
		if (slot && rank_select_pending(L->c->by_nr[*slot].sel))
			rank_select_add(L->c->by_nr[*slot].sel, sqlite3_column_int64(st, 0));
	}
	sqlite3_finalize(st);
	if (step != SQLITE_DONE) {
		db_report_error(db, "syscalls");
		return -1;
	}
	return 0;
}

/* Each number's percentiles: from its kept durations, or, for those that
 * dropped theirs, in more reads of the table. 0 or -1 (reported). */
static int find_percentiles(struct loader *L, sqlite3 *db, const struct report_scope *scope)
{
	struct calls *c = L->c;
	size_t pending = 0, passes = 0;
	char a[FMT_BUF], b[FMT_BUF];

	for (size_t i = 0; i < c->nnr; i++) {
		struct call_durations *cd = &c->by_nr[i];
		uint64_t pos[3] = { rank_pos(cd->len, 50), rank_pos(cd->len, 90),
				    rank_pos(cd->len, 99) };
		if (rank_select_ask(cd->sel, pos, 3) < 0)
			return -1;
		pending += rank_select_pending(cd->sel);
	}
	for (; pending; passes++) {
		int rc = 0;
		for (size_t i = 0; i < c->nnr && rc == 0; i++)
			if (rank_select_pending(c->by_nr[i].sel)) {
				rank_select_set_max(c->by_nr[i].sel, L->max_kept / pending);
				rc = rank_select_begin_pass(c->by_nr[i].sel);
			}
		if (rc < 0 || read_again(L, db, scope) < 0)
			return -1;
		pending = 0;
		for (size_t i = 0; i < c->nnr; i++) {
			if (!rank_select_pending(c->by_nr[i].sel))
				continue;
			if (rank_select_end_pass(c->by_nr[i].sel) < 0) {
				fprintf(stderr, "perfcap-analyze: report: the system calls could not"
					" be read again (out of memory, or the table changed)\n");
				return -1;
			}
			pending += rank_select_pending(c->by_nr[i].sel);
		}
	}
	for (size_t i = 0; i < c->nnr; i++) {
		struct call_durations *cd = &c->by_nr[i];
		cd->p50 = rank_select_value(cd->sel, 0);
		cd->p90 = rank_select_value(cd->sel, 1);
		cd->p99 = rank_select_value(cd->sel, 2);
		rank_select_free(cd->sel);
		cd->sel = NULL;
	}
	if (passes)
		fprintf(stderr, "perfcap-analyze: note: the durations of %s system calls exceed"
			" the report's memory for them (%s bytes, PERFCAP_REPORT_CALL_BYTES):"
			" percentiles found in %zu more read%s of the table\n",
			fmt_count(a, sizeof(a), c->count), fmt_count(b, sizeof(b), calls_memory()),
			passes, passes > 1 ? "s" : "");
	return 0;
}

size_t calls_memory(void)
{
	return temp_file_run_size("PERFCAP_REPORT_CALL_BYTES", (size_t)256 << 20);
}

int calls_load(sqlite3 *db, const struct report_scope *scope, uint64_t window_base,
	       uint64_t window_ns, struct calls *c)
{
	struct loader L = { .c = c };
	uint64_t end = scope->to < scope->capture_end ? scope->to : scope->capture_end;
	int rc;

	memset(c, 0, sizeof(*c));
	L.max_kept = calls_memory() / 16 ? calls_memory() / 16 : 1;
	hmap_init(&L.nr_index);
	hmap_init(&L.futex_index);
	hmap_init(&L.waiter_seen);
	load_syscall_facts(&L, db);
	c->weighted = report_syscall_windows(db);
	rc = make_windows(&c->windows, window_base, window_ns, end);
	if (rc == 0)
		rc = read_calls(&L, db, scope);
	hmap_free(&L.futex_index);
	hmap_free(&L.waiter_seen);
	if (rc == 0)
		rc = find_percentiles(&L, db, scope);
	hmap_free(&L.nr_index);
	if (rc < 0)
		return -1;
	if (c->nnr > 0)
		qsort(c->by_nr, c->nnr, sizeof(*c->by_nr), by_total_desc);
	if (c->nfutex > 0)
		qsort(c->futex, c->nfutex, sizeof(*c->futex), by_wait_desc);
	return 0;
}

void calls_free(struct calls *c)
{
	for (size_t i = 0; i < c->nnr; i++)
		rank_select_free(c->by_nr[i].sel);
	free(c->by_nr);
	free(c->futex);
	free(c->windows.io_calls);
	free(c->windows.io_ns);
	memset(c, 0, sizeof(*c));
}
