/* wake_chains.c - the scope's wakeup graph and the roots of its chains
 * (wake_chains.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "util/hashmap.h"
#include "wake_chains.h"

#define MAX_NAMES 64              /* distinct kinds and classes kept apart */
#define MAX_ROOTS 32              /* distinct roots counted per edge */

/* Interned kind and class names: a wait holds their indexes. */
struct names_table {
	char text[MAX_NAMES][24];
	int len;
};

static int intern(struct names_table *t, const char *s)
{
	if (!s)
		s = "";
	for (int i = 0; i < t->len; i++)
		if (strcmp(t->text[i], s) == 0)
			return i;
	if (t->len == MAX_NAMES)
		return MAX_NAMES - 1;    /* the last slot gathers the rest */
	snprintf(t->text[t->len], sizeof(t->text[0]), "%s", s);
	return t->len++;
}

/* One blocked interval, as wakeup_edges gives it. */
struct wait {
	int64_t start, end;
	uint32_t pid, tid, waker_pid, waker_tid;
	uint8_t kind, cls, in_scope, followed;
};

struct waits {
	struct wait *v;
	size_t len, cap;
	struct hmap by_tid;       /* (tid, 0) -> first << 32 | count, sorted by end */
	struct names_table kinds, classes;
	int kind_thread, kind_process;
};

static int by_tid_end(const void *pa, const void *pb)
{
	const struct wait *a = pa, *b = pb;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

static int load_waits(sqlite3 *db, const struct report_scope *scope, struct waits *w)
{
	char where[1024], sql[2048];
	sqlite3_stmt *st;
	int step;
	int64_t lookback = (int64_t)scope->from - WAKE_CHAIN_LOOKBACK_NS;

	snprintf(sql, sizeof(sql),
		 "SELECT pid, tid, start_ts, end_ts, waker_kind, waker_pid, waker_tid, wait_class,"
		 " %s FROM wakeup_edges WHERE start_ts < :to AND end_ts > %lld",
		 report_scope_sql(where, sizeof(where), "pid", "tid", "start_ts", "end_ts"),
		 (long long)lookback);
	st = db_prepare(db, sql);
	if (!st)
		return -1;
	report_scope_bind(st, scope);
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		struct wait *x;
		if (w->len == w->cap) {
			size_t c = w->cap ? w->cap * 2 : 1024;
			struct wait *grown = realloc(w->v, c * sizeof(*grown));
			if (!grown) {
				step = SQLITE_NOMEM;
				break;
			}
			w->v = grown;
			w->cap = c;
		}
		x = &w->v[w->len++];
		memset(x, 0, sizeof(*x));
		x->pid = (uint32_t)sqlite3_column_int64(st, 0);
		x->tid = (uint32_t)sqlite3_column_int64(st, 1);
		x->start = sqlite3_column_int64(st, 2);
		x->end = sqlite3_column_int64(st, 3);
		x->kind = (uint8_t)intern(&w->kinds, (const char *)sqlite3_column_text(st, 4));
		x->waker_pid = (uint32_t)sqlite3_column_int64(st, 5);
		x->waker_tid = (uint32_t)sqlite3_column_int64(st, 6);
		x->cls = (uint8_t)intern(&w->classes, (const char *)sqlite3_column_text(st, 7));
		x->in_scope = sqlite3_column_int(st, 8) != 0;
	}
	sqlite3_finalize(st);
	if (step != SQLITE_DONE) {
		db_report_error(db, "wakeup chains");
		return -1;
	}
	w->kind_thread = intern(&w->kinds, "thread");
	w->kind_process = intern(&w->kinds, "process");
	if (w->len > 1)
		qsort(w->v, w->len, sizeof(*w->v), by_tid_end);
	for (size_t i = 0; i < w->len;) {
		size_t j = i;
		int created;
		uint64_t *slot;
		while (j < w->len && w->v[j].tid == w->v[i].tid)
			j++;
		slot = hmap_upsert(&w->by_tid, w->v[i].tid, 0, 0, &created);
		if (!slot)
			return -1;
		*slot = (uint64_t)i << 32 | (uint64_t)(j - i);
		i = j;
	}
	return 0;
}

/* The waker's wait during x: its latest wait ending in (x->start, x->end],
 * or NULL. */
static const struct wait *waker_wait(const struct waits *w, const struct wait *x)
{
	const uint64_t *slot;
	size_t lo, hi, first;

	if (x->waker_tid == 0 || x->waker_tid == x->tid ||
	    !(slot = hmap_find(&w->by_tid, x->waker_tid, 0)))
		return NULL;
	first = (size_t)(*slot >> 32);
	lo = first;
	hi = first + (size_t)(*slot & 0xffffffffu);
	while (lo < hi) {                /* first wait ending after x */
		size_t mid = lo + (hi - lo) / 2;
		if (w->v[mid].end <= x->end)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == first || w->v[lo - 1].end <= x->start)
		return NULL;
	return &w->v[lo - 1];
}

/* Follows x to its root: root gets the kind, thread and class; returns the
 * hops taken. */
static int follow(const struct waits *w, const struct wait *x, struct wake_root *root)
{
	int hops = 0;

	for (;;) {
		const struct wait *p;
		if (x->kind != w->kind_thread && x->kind != w->kind_process) {
			snprintf(root->kind, sizeof(root->kind), "%s", w->kinds.text[x->kind]);
			root->pid = x->pid;
			root->tid = x->tid;
			snprintf(root->wait_class, sizeof(root->wait_class), "%s",
				 w->classes.text[x->cls]);
			return hops;
		}
		p = waker_wait(w, x);
		if (!p) {
			snprintf(root->kind, sizeof(root->kind), "running");
			root->pid = x->waker_pid;
			root->tid = x->waker_tid;
			root->wait_class[0] = '\0';
			return hops;
		}
		if (hops == WAKE_CHAIN_HOPS) {
			snprintf(root->kind, sizeof(root->kind), "depth");
			root->pid = x->pid;
			root->tid = x->tid;
			root->wait_class[0] = '\0';
			return hops;
		}
		x = p;
		hops++;
	}
}

static int load_edges(sqlite3 *db, const struct report_scope *scope, int top,
		      struct wake_graph *g)
{
	char where[1024], sql[2048];
	sqlite3_stmt *st;
	int step;

	snprintf(sql, sizeof(sql),
		 "SELECT pid, tid, wait_class, waker_kind, waker_pid, waker_tid, count(*),"
		 " sum(min(end_ts, :to) - max(start_ts, :from)), max(duration) FROM wakeup_edges"
		 " WHERE %s GROUP BY pid, tid, wait_class, waker_kind, waker_pid, waker_tid"
		 " ORDER BY 8 DESC, 1, 2, 3, 4, 5, 6 LIMIT %d",
		 report_scope_sql(where, sizeof(where), "pid", "tid", "start_ts", "end_ts"), top);
	st = db_prepare(db, sql);
	if (!st)
		return -1;
	report_scope_bind(st, scope);
	g->edges = calloc((size_t)(top > 0 ? top : 1), sizeof(*g->edges));
	while (g->edges && (step = sqlite3_step(st)) == SQLITE_ROW) {
		struct wake_edge *e = &g->edges[g->len++];
		const char *cls = (const char *)sqlite3_column_text(st, 2);
		const char *kind = (const char *)sqlite3_column_text(st, 3);
		e->pid = (uint32_t)sqlite3_column_int64(st, 0);
		e->tid = (uint32_t)sqlite3_column_int64(st, 1);
		snprintf(e->wait_class, sizeof(e->wait_class), "%s", cls ? cls : "");
		snprintf(e->waker_kind, sizeof(e->waker_kind), "%s", kind ? kind : "");
		e->waker_pid = (uint32_t)sqlite3_column_int64(st, 4);
		e->waker_tid = (uint32_t)sqlite3_column_int64(st, 5);
		e->waits = (uint64_t)sqlite3_column_int64(st, 6);
		e->total_ns = (uint64_t)sqlite3_column_int64(st, 7);
		e->max_ns = (uint64_t)sqlite3_column_int64(st, 8);
	}
	sqlite3_finalize(st);
	if (!g->edges || step != SQLITE_DONE) {
		db_report_error(db, "wakeup graph");
		return -1;
	}
	return 0;
}

static int edge_of(const struct wake_graph *g, const int (*codes)[2], const struct wait *x)
{
	for (size_t i = 0; i < g->len; i++) {
		const struct wake_edge *e = &g->edges[i];
		if (e->tid == x->tid && e->pid == x->pid && codes[i][0] == x->kind &&
		    codes[i][1] == x->cls && e->waker_tid == x->waker_tid &&
		    e->waker_pid == x->waker_pid)
			return (int)i;
	}
	return -1;
}

static int by_ns(const void *pa, const void *pb)
{
	const struct wake_root *a = pa, *b = pb;
	int c;

	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	if ((c = strcmp(a->kind, b->kind)) != 0)
		return c;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

static void add_root(struct wake_root *roots, int *n, const struct wake_root *r,
		     uint64_t ns)
{
	int i;

	for (i = 0; i < *n; i++)
		if (roots[i].tid == r->tid && roots[i].pid == r->pid &&
		    strcmp(roots[i].kind, r->kind) == 0 &&
		    strcmp(roots[i].wait_class, r->wait_class) == 0)
			break;
	if (i == *n) {
		if (*n == MAX_ROOTS)
			i = MAX_ROOTS - 1;   /* the last slot gathers the rest */
		else {
			roots[i] = *r;
			roots[i].ns = roots[i].waits = 0;
			(*n)++;
		}
	}
	roots[i].ns += ns;
	roots[i].waits++;
}

int wake_graph_load(sqlite3 *db, const struct report_scope *scope, int top,
		    struct wake_graph *g)
{
	struct waits w;
	struct wake_root (*roots)[MAX_ROOTS] = NULL;
	int (*codes)[2] = NULL, *nroots = NULL;
	int rc = -1;

	memset(g, 0, sizeof(*g));
	memset(&w, 0, sizeof(w));
	hmap_init(&w.by_tid);
	if (load_edges(db, scope, top, g) < 0 || load_waits(db, scope, &w) < 0)
		goto out;
	roots = calloc(g->len + 1, sizeof(*roots));
	codes = calloc(g->len + 1, sizeof(*codes));
	nroots = calloc(g->len + 1, sizeof(*nroots));
	if (!roots || !codes || !nroots)
		goto out;
	for (size_t i = 0; i < g->len; i++) {
		codes[i][0] = intern(&w.kinds, g->edges[i].waker_kind);
		codes[i][1] = intern(&w.classes, g->edges[i].wait_class);
	}
	for (size_t i = 0; i < w.len; i++) {
		const struct wait *x = &w.v[i];
		int64_t s, e;
		struct wake_root r;
		int k;

		if (!x->in_scope)
			continue;
		s = x->start > (int64_t)scope->from ? x->start : (int64_t)scope->from;
		e = (uint64_t)x->end < scope->to ? x->end : (int64_t)scope->to;
		g->blocked_ns += e > s ? (uint64_t)(e - s) : 0;
		g->blocked_waits++;
		if ((k = edge_of(g, (const int (*)[2])codes, x)) < 0)
			continue;
		memset(&r, 0, sizeof(r));
		g->edges[k].hops += (uint64_t)follow(&w, x, &r);
		add_root(roots[k], &nroots[k], &r, e > s ? (uint64_t)(e - s) : 0);
	}
	for (size_t i = 0; i < g->len; i++) {
		struct wake_edge *e = &g->edges[i];
		qsort(roots[i], (size_t)nroots[i], sizeof(roots[i][0]), by_ns);
		for (int k = 0; k < nroots[i]; k++) {
			if (k < WAKE_EDGE_ROOTS)
				e->roots[e->nroots++] = roots[i][k];
			else
				e->other_roots_ns += roots[i][k].ns;
		}
	}
	rc = 0;
out:
	free(roots);
	free(codes);
	free(nroots);
	free(w.v);
	hmap_free(&w.by_tid);
	if (rc < 0)
		wake_graph_free(g);
	return rc;
}

void wake_graph_free(struct wake_graph *g)
{
	free(g->edges);
	memset(g, 0, sizeof(*g));
}
