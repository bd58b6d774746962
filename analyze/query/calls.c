/* calls.c - the system call pass of a report (calls.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "calls.h"
#include "util/radix_sort.h"

struct loader {
	struct calls *c;
	size_t nr_cap, futex_cap;
	struct hmap nr_index;                 /* (nr, 0) -> index in by_nr */
	struct hmap futex_index;              /* (pid << 1 | mutex, addr) -> index */
	struct hmap waiter_seen;              /* (futex index, tid) -> 1 */
	unsigned char io_nr[CALLS_MAX_NR];    /* 1: family rw, sync or net */
	int64_t futex_nr;                     /* futex's number, from syscall_names */
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

static int add_duration(struct loader *L, int64_t nr, int64_t d)
{
	struct calls *c = L->c;
	int created = 0;
	uint64_t *slot = hmap_upsert(&L->nr_index, (uint64_t)nr, 0, c->nnr, &created);
	struct call_durations *cd;

	if (!slot)
		return -1;
	if (created) {
		if (c->nnr == L->nr_cap) {
			size_t n = L->nr_cap ? L->nr_cap * 2 : 64;
			struct call_durations *grown = realloc(c->by_nr, n * sizeof(*grown));
			if (!grown)
				return -1;
			c->by_nr = grown;
			L->nr_cap = n;
		}
		c->by_nr[c->nnr++] = (struct call_durations){ .nr = nr };
	}
	cd = &c->by_nr[*slot];
	if (cd->len == cd->cap) {
		size_t n = cd->cap ? cd->cap * 2 : 256;
		int64_t *grown = realloc(cd->v, n * sizeof(*grown));
		if (!grown)
			return -1;
		cd->v = grown;
		cd->cap = n;
	}
	cd->v[cd->len++] = d;
	cd->total += d;
	return 0;
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
static int add_futex(struct loader *L, sqlite3_stmt *st, int64_t clipped)
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
	f->waits++;
	f->wait_ns += clipped > 0 ? (uint64_t)clipped : 0;
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

static void add_window(struct loader *L, int64_t nr, int64_t ts, int64_t duration)
{
	struct call_windows *w = &L->c->windows;
	uint64_t k;

	if (w->n == 0 || nr < 0 || nr >= CALLS_MAX_NR || !L->io_nr[nr] || ts < (int64_t)w->base)
		return;
	k = ((uint64_t)ts - w->base) / w->width;
	if (k < w->n) {
		w->io_calls[k] += 1;
		w->io_ns[k] += (double)duration;
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
	int rc = 0, step, nr_col = futex ? 4 : 2;

	report_scope_sql(where, sizeof(where), "pid", "tid", "ts", "(ts + duration)");
	if (futex)
		snprintf(sql, sizeof(sql), "SELECT ts, duration, pid, tid, nr, arg0, arg1, ustack_id,"
			 " min(ts + duration, :to) - max(ts, :from) FROM syscalls"
			 " WHERE (%s) AND nr = :futex", where);
	else
		snprintf(sql, sizeof(sql), "SELECT ts, duration, nr FROM syscalls WHERE (%s)%s",
			 where, L->futex_nr >= 0 ? " AND nr != :futex" : "");
	st = db_prepare(db, sql);
	if (!st)
		return -1;
	report_scope_bind(st, scope);
	sqlite3_bind_int64(st, sqlite3_bind_parameter_index(st, ":futex"), L->futex_nr);
	while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t nr = sqlite3_column_int64(st, nr_col), duration = sqlite3_column_int64(st, 1);
		L->c->count++;
		rc = add_duration(L, nr, duration);
		if (rc == 0 && futex)
			rc = add_futex(L, st, sqlite3_column_int64(st, 8));
		add_window(L, nr, sqlite3_column_int64(st, 0), duration);
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

static int by_value(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return a < b ? -1 : a > b;
}

/* A call's durations, ascending: a radix sort (qsort through by_value was
 * 8% of the report of a 60 s redis capture, 5.5M calls), or qsort when
 * its scratch can not be had. */
static void sort_durations(int64_t *v, size_t n)
{
	if (radix_sort_i64(v, n, sizeof(*v), 0) < 0)
		qsort(v, n, sizeof(*v), by_value);
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

int calls_load(sqlite3 *db, const struct report_scope *scope, uint64_t window_base,
	       uint64_t window_ns, struct calls *c)
{
	struct loader L = { .c = c };
	uint64_t end = scope->to < scope->capture_end ? scope->to : scope->capture_end;
	int rc;

	memset(c, 0, sizeof(*c));
	hmap_init(&L.nr_index);
	hmap_init(&L.futex_index);
	hmap_init(&L.waiter_seen);
	load_syscall_facts(&L, db);
	rc = make_windows(&c->windows, window_base, window_ns, end);
	if (rc == 0)
		rc = read_calls(&L, db, scope);
	hmap_free(&L.nr_index);
	hmap_free(&L.futex_index);
	hmap_free(&L.waiter_seen);
	if (rc < 0)
		return -1;
	for (size_t i = 0; i < c->nnr; i++)
		sort_durations(c->by_nr[i].v, c->by_nr[i].len);
	if (c->nnr > 0)
		qsort(c->by_nr, c->nnr, sizeof(*c->by_nr), by_total_desc);
	if (c->nfutex > 0)
		qsort(c->futex, c->nfutex, sizeof(*c->futex), by_wait_desc);
	return 0;
}

void calls_free(struct calls *c)
{
	for (size_t i = 0; i < c->nnr; i++)
		free(c->by_nr[i].v);
	free(c->by_nr);
	free(c->futex);
	free(c->windows.io_calls);
	free(c->windows.io_ns);
	memset(c, 0, sizeof(*c));
}

int64_t calls_percentile(const struct call_durations *d, int p)
{
	size_t rank = (d->len * (size_t)p + 99) / 100;

	return d->len ? d->v[(rank ? rank : 1) - 1] : 0;
}
