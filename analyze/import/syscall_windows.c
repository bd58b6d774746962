/* syscall_windows.c - SYSCALL_WINDOW records while a capture loads (see
 * syscall_windows.h).
 *
 * The recorder writes a window's record as it opens, before any call
 * paired in it, so a call's window is known when its record is decoded:
 * one of the last few, since calls come from the rings out of time order
 * only by a few milliseconds. The lookup starts at the last window found
 * and otherwise bisects. A window's weight for a call of duration d is
 * period / max(open - d, open / 4): the chance that a call of that length
 * entered and exited inside the window is (open - d) / period; a call
 * longer than three quarters of the window is weighed as if it were that
 * long, so that one long call cannot stand for a thousand (the view
 * syscalls, db/schema.c, computes it).
 */
#include <stdlib.h>

#include "db/db.h"
#include "syscall_windows.h"

int syscall_windows_add(struct syscall_windows *w, const struct pc_rec_syscall_window *r)
{
	struct syscall_window *last = w->n ? &w->v[w->n - 1] : NULL;

	if (!r->period_ns || r->open_ns > r->period_ns || r->ts > (uint64_t)INT64_MAX ||
	    r->period_ns > (uint64_t)INT64_MAX - r->ts || (last && r->ts < last->ts))
		return 0;
	if (last && r->ts == last->ts) {
		*last = (struct syscall_window){ r->ts, r->open_ns, r->period_ns, r->rate };
		return 1;
	}
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 64;
		struct syscall_window *v = realloc(w->v, cap * sizeof(*v));

		if (!v)
			return -1;
		w->v = v;
		w->cap = cap;
	}
	w->v[w->n++] = (struct syscall_window){ r->ts, r->open_ns, r->period_ns, r->rate };
	return 1;
}

static int inside(const struct syscall_window *x, uint64_t ts)
{
	return ts >= x->ts && ts - x->ts < x->open_ns;
}

const struct syscall_window *syscall_windows_find(struct syscall_windows *w, uint64_t ts)
{
	size_t lo = 0, hi = w->n;

	if (!w->n)
		return NULL;
	if (w->last < w->n && inside(&w->v[w->last], ts))
		return &w->v[w->last];
	while (lo < hi) {        /* the first window starting after ts */
		size_t mid = lo + (hi - lo) / 2;

		if (w->v[mid].ts <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || !inside(&w->v[lo - 1], ts))
		return NULL;
	w->last = lo - 1;
	return &w->v[lo - 1];
}

double syscall_window_weight(const struct syscall_window *x, uint64_t ns)
{
	uint64_t fit;

	if (!x || !x->open_ns)
		return 1.0;
	fit = ns < x->open_ns ? x->open_ns - ns : 0;
	if (fit < x->open_ns / 4)
		fit = x->open_ns / 4;
	return fit ? (double)x->period_ns / (double)fit : 1.0;
}

int syscall_windows_store(sqlite3 *db, const struct syscall_windows *w)
{
	sqlite3_stmt *st;
	int rc = 0;

	if (!w->n)
		return 0;
	st = db_prepare(db, "INSERT OR REPLACE INTO syscall_windows (start_ts, open_ns, period_ns,"
			" rate) VALUES (?, ?, ?, ?)");
	if (!st)
		return -1;
	for (size_t i = 0; i < w->n && rc == 0; i++) {
		sqlite3_bind_int64(st, 1, (int64_t)w->v[i].ts);
		sqlite3_bind_int64(st, 2, (int64_t)w->v[i].open_ns);
		sqlite3_bind_int64(st, 3, (int64_t)w->v[i].period_ns);
		sqlite3_bind_int64(st, 4, w->v[i].rate > INT64_MAX ? INT64_MAX : (int64_t)w->v[i].rate);
		if (sqlite3_step(st) != SQLITE_DONE) {
			db_report_error(db, "syscall_windows");
			rc = -1;
		}
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return rc;
}

void syscall_windows_release(struct syscall_windows *w)
{
	free(w->v);
	*w = (struct syscall_windows){ 0 };
}
