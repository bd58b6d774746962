/* gc_proxy.c - GC pauses of a HotSpot JVM inferred from the scheduler when
 * the recording has no GC probes (gc_pauses.source 'proxy', docs/schema.md).
 *
 * A stop-the-world collection stops every Java thread at a safepoint and
 * runs the collector on HotSpot's own threads: the `VM Thread`, which
 * executes the VM operation, and the parallel `GC Thread#N` workers. A
 * default recording (cpu, sched) sees exactly that shape in the threads'
 * running intervals: a window in which a pause worker runs while no
 * application thread does. Two things look alike and are kept out:
 *   - an idle application, or the VM Thread's own short chores: a window
 *     counts only if an application thread stopped running at most 1 ms
 *     before it began (the safepoint took it off the CPU) and a pause
 *     worker woke an application thread by its end + 1 ms (the safepoint
 *     let it go: HotSpot's VM Thread releases the stopped threads, and
 *     wakes a System.gc() caller when the collection is done);
 *   - concurrent collector threads (`G1 Conc#N`, `G1 Refine#N`, the
 *     marker) run beside the application by design: not pause workers.
 * A pause worker's switch-outs shorter than 1 ms do not split a window,
 * nor does its time waiting for a CPU (runnable: woken, or preempted by
 * other load), which is pause time all the same; application time always
 * splits one. Counting only the workers' running time, a JVM sharing its
 * two CPUs with two busy loops had its 20 System.gc() pauses cut into
 * fragments that failed the tests below: 0-54% of the measured pause time
 * found in 5 runs; with the runnable time, 78-95% (89-92% on a quiet
 * host). What remains includes the time to reach
 * the safepoint and any non-GC safepoint operation, so it is an upper
 * estimate, said so wherever it is shown (the diagnosis caps its
 * confidence). Thread roles come from their names (one table below); a
 * JVM whose threads are renamed gets no proxy.
 *
 * Measured on a G1 JVM doing 20 System.gc() recorded with -e cpu,sched,gc
 * at once: the windows covered all 170.6 ms of the USDT-measured pauses
 * and added 13%.
 */
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "load_state.h"
#include "util/sorted_search.h"

#define GAP_NS    1000000ll   /* a worker off CPU this briefly is still in the pause */
#define LEAD_NS   1000000ll   /* an app thread stopped at most this before */

enum role { ROLE_APP, ROLE_PAUSE_WORKER, ROLE_RUNTIME };

/* HotSpot's thread names (prefixes, as cut to 15 bytes by the kernel). */
static const struct {
	const char *prefix;
	enum role role;
} names[] = {
	{ "VM Thread", ROLE_PAUSE_WORKER },
	{ "GC Thread#", ROLE_PAUSE_WORKER },
	{ "G1 ", ROLE_RUNTIME },              /* concurrent marking, refinement, service */
	{ "C1 CompilerThre", ROLE_RUNTIME },
	{ "C2 CompilerThre", ROLE_RUNTIME },
	{ "VM Periodic Tas", ROLE_RUNTIME },
	{ "Signal Dispatch", ROLE_RUNTIME },
	{ "Finalizer", ROLE_RUNTIME },
	{ "Reference Handl", ROLE_RUNTIME },
	{ "Common-Cleaner", ROLE_RUNTIME },
	{ "Service Thread", ROLE_RUNTIME },
	{ "Monitor Deflati", ROLE_RUNTIME },
	{ "Notification Th", ROLE_RUNTIME },
	{ "Attach Listener", ROLE_RUNTIME },
	{ "Sweeper thread", ROLE_RUNTIME },
};

static enum role role_of(const char *comm)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strncmp(comm, names[i].prefix, strlen(names[i].prefix)))
			return names[i].role;
	return ROLE_APP;
}

struct span {
	int64_t s, e;
};

struct spans {
	struct span *v;
	size_t n, cap;
};

static int push(struct spans *x, int64_t s, int64_t e)
{
	if (x->n == x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 256;
		struct span *grown = realloc(x->v, cap * sizeof(*grown));

		if (!grown)
			return -1;
		x->v = grown;
		x->cap = cap;
	}
	x->v[x->n++] = (struct span){ s, e };
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->s < y->s ? -1 : x->s > y->s;
}

/* Sorts and merges overlapping (or closer than gap) spans in place. */
static void merge(struct spans *x, int64_t gap)
{
	size_t out = 0;

	qsort(x->v, x->n, sizeof(*x->v), by_start);
	for (size_t i = 0; i < x->n; i++) {
		if (out && x->v[i].s <= x->v[out - 1].e + gap) {
			if (x->v[i].e > x->v[out - 1].e)
				x->v[out - 1].e = x->v[i].e;
		} else {
			x->v[out++] = x->v[i];
		}
	}
	x->n = out;
}

/* The role of each thread of a process, from its latest name. */
struct tid_role {
	int64_t tid;
	enum role role;
};

struct roles {
	struct tid_role *v;
	size_t n;
	int64_t vm;               /* the VM Thread's tid, 0 if none */
};

static int by_tid(const void *a, const void *b)
{
	const struct tid_role *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* threads rows in time order: a later name of a tid replaces the earlier
 * (HotSpot names its threads after they start as "java"). */
static int load_roles(sqlite3 *db, int64_t pid, struct roles *r)
{
	sqlite3_stmt *st = db_prepare(db, "SELECT tid, comm FROM threads WHERE pid = ?"
				      " ORDER BY tid, ts");
	size_t cap = 0;
	int rc = 0;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, pid);
	while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
		int64_t tid = sqlite3_column_int64(st, 0);
		const char *comm = (const char *)sqlite3_column_text(st, 1);

		if (!r->n || r->v[r->n - 1].tid != tid) {
			if (r->n == cap) {
				struct tid_role *grown;
				cap = cap ? 2 * cap : 64;
				if (!(grown = realloc(r->v, cap * sizeof(*grown)))) {
					rc = -1;
					break;
				}
				r->v = grown;
			}
			r->n++;
		}
		r->v[r->n - 1] = (struct tid_role){ tid, role_of(comm ? comm : "") };
		if (comm && !strncmp(comm, "VM Thread", 9))
			r->vm = tid;
	}
	sqlite3_finalize(st);
	qsort(r->v, r->n, sizeof(*r->v), by_tid);
	return rc;
}

static enum role role_of_tid(const struct roles *r, int64_t tid)
{
	struct tid_role key = { tid, ROLE_APP };
	const struct tid_role *hit = bsearch(&key, r->v, r->n, sizeof(*r->v), by_tid);

	return hit ? hit->role : ROLE_APP;
}

/* The running intervals of pid's threads, split by role. */
static int load_running(sqlite3 *db, int64_t pid, const struct roles *r, struct spans *work,
			struct spans *app)
{
	sqlite3_stmt *st = db_prepare(db, "SELECT tid, start_ts, end_ts, state = 'running'"
				      " FROM thread_states WHERE pid = ?"
				      " AND state IN ('running', 'runnable')");
	int rc = 0;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, pid);
	while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
		enum role role = role_of_tid(r, sqlite3_column_int64(st, 0));
		int running = sqlite3_column_int(st, 3);

		/* a pause worker waiting for a CPU is still in the pause */
		if (role == ROLE_PAUSE_WORKER || (role == ROLE_APP && running))
			rc = push(role == ROLE_APP ? app : work, sqlite3_column_int64(st, 1),
				  sqlite3_column_int64(st, 2));
	}
	sqlite3_finalize(st);
	return rc;
}

/* When a pause worker woke an application thread: the end of a safepoint
 * (the VM Thread releases the stopped Java threads; a System.gc() caller
 * is woken when its VM operation is done). Sorted. */
static int load_releases(sqlite3 *db, int64_t pid, const struct roles *r, struct spans *rel)
{
	sqlite3_stmt *st = db_prepare(db, "SELECT ts, tid, waker_tid FROM wakeups"
				      " WHERE pid = ? AND waker_pid = pid ORDER BY ts");
	int rc = 0;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, pid);
	while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
		if (role_of_tid(r, sqlite3_column_int64(st, 1)) == ROLE_APP &&
		    role_of_tid(r, sqlite3_column_int64(st, 2)) == ROLE_PAUSE_WORKER)
			rc = push(rel, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 0));
	}
	sqlite3_finalize(st);
	return rc;
}

/* Whether a release falls in [s, e + LEAD_NS] (rel sorted). */
static int released(const struct spans *rel, int64_t s, int64_t e)
{
	size_t i = sorted_first_from(rel->v, rel->n, sizeof(*rel->v), offsetof(struct span, s), s);

	return i < rel->n && rel->v[i].s <= e + LEAD_NS;
}

/* The application's last stop at or before t (app sorted, merged): the
 * end of the latest span ending at or before t, or INT64_MIN. */
static int64_t last_stop(const struct spans *app, int64_t t)
{
	size_t lo = 0, hi = app->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (app->v[mid].e <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? app->v[lo - 1].e : INT64_MIN;
}

/* Worker time not overlapped by application time. */
static int windows(const struct spans *work, const struct spans *app, struct spans *out)
{
	size_t j = 0;

	for (size_t i = 0; i < work->n; i++) {
		int64_t cur = work->v[i].s, end = work->v[i].e;

		while (j < app->n && app->v[j].e <= cur)
			j++;
		for (size_t k = j; k < app->n && app->v[k].s < end && cur < end; k++) {
			if (app->v[k].s > cur && push(out, cur, app->v[k].s) < 0)
				return -1;
			if (app->v[k].e > cur)
				cur = app->v[k].e;
		}
		if (cur < end && push(out, cur, end) < 0)
			return -1;
	}
	return 0;
}

/* Keeps the windows that begin within LEAD_NS of an application stop (the
 * safepoint took a running Java thread off the CPU) and end with a pause
 * worker waking an application thread (the safepoint let it go). */
static void keep_pauses(struct spans *w, const struct spans *app, const struct spans *rel)
{
	size_t out = 0;

	for (size_t i = 0; i < w->n; i++) {
		int64_t stop = last_stop(app, w->v[i].s);

		if (stop != INT64_MIN && w->v[i].s - stop <= LEAD_NS &&
		    released(rel, w->v[i].s, w->v[i].e))
			w->v[out++] = w->v[i];
	}
	w->n = out;
}

static int insert(sqlite3 *db, int64_t pid, int64_t vm, const struct spans *w)
{
	sqlite3_stmt *st = db_prepare(db,
		"INSERT INTO gc_pauses (pid, tid, start_ts, end_ts, duration, runtime, source)"
		" VALUES (?, ?, ?, ?, ?, 'jvm', 'proxy')");
	int rc = 0;

	if (!st)
		return -1;
	for (size_t i = 0; i < w->n && rc == 0; i++) {
		sqlite3_bind_int64(st, 1, pid);
		sqlite3_bind_int64(st, 2, vm);
		sqlite3_bind_int64(st, 3, w->v[i].s);
		sqlite3_bind_int64(st, 4, w->v[i].e);
		sqlite3_bind_int64(st, 5, w->v[i].e - w->v[i].s);
		rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return rc;
}

static int one_jvm(sqlite3 *db, int64_t pid)
{
	struct spans work = { 0 }, app = { 0 }, out = { 0 }, rel = { 0 };
	struct roles roles = { 0 };
	int rc = load_roles(db, pid, &roles);

	if (rc == 0)
		rc = load_running(db, pid, &roles, &work, &app);
	if (rc == 0)
		rc = load_releases(db, pid, &roles, &rel);
	if (rc == 0 && work.n && app.n) {
		merge(&work, GAP_NS);   /* a worker's short switch-outs inside one pause */
		merge(&app, 0);
		rc = windows(&work, &app, &out);
		if (rc == 0) {
			keep_pauses(&out, &app, &rel);
			rc = insert(db, pid, roles.vm, &out);
		}
	}
	free(roles.v);
	free(work.v);
	free(app.v);
	free(out.v);
	free(rel.v);
	return rc;
}

int gc_proxy_build(sqlite3 *db)
{
	sqlite3_stmt *st = db_prepare(db,
		"SELECT pid FROM process_runtimes WHERE runtime = 'jvm'"
		" AND pid NOT IN (SELECT pid FROM gc_pauses)"
		" AND EXISTS (SELECT 1 FROM meta WHERE key = 'sources' AND value LIKE '%sched%')");
	int64_t pids[64];
	int n = 0, rc = 0;

	if (!st)
		return -1;
	while (n < 64 && sqlite3_step(st) == SQLITE_ROW)
		pids[n++] = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	for (int i = 0; i < n && rc == 0; i++)
		rc = one_jvm(db, pids[i]);
	return rc;
}
