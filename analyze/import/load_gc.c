/* load_gc.c - the `gc_pauses` table (docs/schema.md): the pauses of
 * language runtimes' garbage collectors, from the probes that bound them
 * (probe_hits of USDT probes, of entry probes on Go's runtime, or timed
 * uprobe calls). Hits of the known probes (gc_probe_pairs, the only list
 * of them) are paired in time order: per thread where begin and end fire
 * on the collecting thread (CPython, HotSpot), per process for Go (one
 * stop of the world at a time, whichever thread restarts it; in practice
 * the stopper, which keeps its thread meanwhile). A begin opens a pause,
 * the next end of the same pair closes it; a timed call (a CPython
 * without USDT: gc_collect_main) is a pause by itself.
 *
 * Go also stops the world for other reasons (ReadMemStats, GOMAXPROCS,
 * traces), so its pair names marker functions only a collection's stops
 * run; a stop without a marker hit inside is not a GC pause (counted:
 * gc.other_stops). Go 1.19+ passes the times it accounts a collection's
 * pause between to its CPU limiter (start- and finishGCTransition, the
 * recorder captures them): where they were hit the pause takes those
 * bounds, else it runs from the stop's entry to the restart's.
 *
 * Whatever cannot be paired is counted in the quality table (source
 * `probe`, keys gc.*), never dropped silently: a begin whose end never
 * came (a collection still running when the recording stopped, or an end
 * record lost), an end whose begin was not seen (recording started
 * mid-collection), and probe hits the kernel counted without a record
 * (--sample, --rate-cap). Built once the probes table is. */
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "load_state.h"

#define MARKERS_MAX 2

/* The known begin/end probe pairs, by the probes table's name
 * (PROVIDER:NAME for USDT, the function for entry probes). */
static const struct gc_probe_pair {
	const char *runtime;  /* as process_runtimes names it (util/runtimes.c) */
	const char *begin, *end;
	int per_process;      /* paired per process: one at a time in it */
	const char *markers[MARKERS_MAX]; /* a pause needs one of these inside */
	const char *start;    /* a marker whose argument is the runtime's own begin time */
	const char *finish;   /* where the runtime ends its pause (its end time) */
	const char *source;   /* gc_pauses.source */
	const char *call;     /* instead of begin and end: a function whose timed
			       * calls (uprobes) are the pauses */
} gc_probe_pairs[] = {
	/* CPython built --with-dtrace (Debian's python3.X): gc_collect_main(),
	 * run by the thread that triggered the collection, holding the GIL,
	 * so every Python thread of the process waits; arg0 of gc__start is
	 * the generation collected */
	{ "python", "python:gc__start", "python:gc__done", 0, { NULL }, NULL, NULL, "usdt" },
	/* HotSpot (Debian's openjdk-17 libjvm.so has them, no semaphore):
	 * SvcGCMarker around a collection's VM operation, on the VM thread
	 * inside a safepoint: the Java threads are stopped; arg0 of gc__begin
	 * is 1 for a full collection */
	{ "jvm", "hotspot:gc__begin", "hotspot:gc__end", 0, { NULL }, NULL, NULL, "usdt" },
	/* CPython without dtrace (-e gc's fallback): the function those two
	 * probes bound, timed by a uprobe and its uretprobe */
	{ "python", NULL, NULL, 0, { NULL }, NULL, NULL, "uprobe", "gc_collect_main" },
	/* Go (perfcap-record -e gc: entry probes, never return probes): the
	 * world stopped from the entry of stopTheWorldWithSema to the entry
	 * of startTheWorldWithSema; a collection stops it twice, at sweep
	 * termination (finishsweep_m runs inside) and at mark termination
	 * (gcMarkTermination runs inside); Go 1.19+ passes the times it
	 * accounts a pause between to its CPU limiter's start- and
	 * finishGCTransition, called only there */
	{ "go", "runtime.stopTheWorldWithSema", "runtime.startTheWorldWithSema", 1,
	  { "runtime.finishsweep_m", "runtime.gcMarkTermination" },
	  "runtime.(*gcCPULimiterState).startGCTransition",
	  "runtime.(*gcCPULimiterState).finishGCTransition", "uprobe" },
};
#define NPAIRS (sizeof(gc_probe_pairs) / sizeof(gc_probe_pairs[0]))

#define MAX_GC_PROBES 64

/* In the order hits of one instant are taken. */
enum gc_role { ROLE_BEGIN = 0, ROLE_MARK = 1, ROLE_START = 2, ROLE_FINISH = 3, ROLE_END = 4,
	       ROLE_CALL = 5 };

struct gc_probe {
	int64_t probe_id;
	int pair;         /* index in gc_probe_pairs */
	int role;         /* enum gc_role */
};

struct gc_hit {
	int64_t ts, pid, tid;
	int64_t value;    /* a start's or finish's argument: the runtime's own time */
	int64_t duration; /* a timed call's */
	int64_t thread;   /* the pairing key: tid, or 0 for a per-process pair */
	int pair, role;
};

static int by_thread_time(const void *pa, const void *pb)
{
	const struct gc_hit *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->thread != b->thread)
		return a->thread < b->thread ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->role - b->role;   /* at one instant: enum gc_role's order */
}

/* The role of the probe named name in pair p, or -1. */
static int role_in(const struct gc_probe_pair *p, const char *name)
{
	if (p->call)
		return strcmp(name, p->call) == 0 ? ROLE_CALL : -1;
	if (strcmp(name, p->begin) == 0)
		return ROLE_BEGIN;
	if (strcmp(name, p->end) == 0)
		return ROLE_END;
	for (int m = 0; m < MARKERS_MAX && p->markers[m]; m++)
		if (strcmp(name, p->markers[m]) == 0)
			return ROLE_MARK;
	if (p->start && strcmp(name, p->start) == 0)
		return ROLE_START;
	if (p->finish && strcmp(name, p->finish) == 0)
		return ROLE_FINISH;
	return -1;
}

/* The usdt and entry probes of the recording that play a role in a known
 * pair, and the hits the kernel counted beyond the records written. */
static int find_probes(struct loader *L, struct gc_probe *probes, size_t *n)
{
	sqlite3_stmt *st = db_prepare(L->db, "SELECT probe_id, name, coalesce(hits, 0), records"
				      " FROM probes WHERE kind IN ('usdt', 'entry', 'uprobe') ORDER BY probe_id");
	int rc;

	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && *n < MAX_GC_PROBES) {
		const char *name = (const char *)sqlite3_column_text(st, 1);
		int64_t hits = sqlite3_column_int64(st, 2), records = sqlite3_column_int64(st, 3);

		for (size_t i = 0; name && i < NPAIRS; i++) {
			int role = role_in(&gc_probe_pairs[i], name);

			if (role < 0)
				continue;
			probes[*n].probe_id = sqlite3_column_int64(st, 0);
			probes[*n].pair = (int)i;
			probes[(*n)++].role = role;
			if (hits > records)
				L->gc.unrecorded += (uint64_t)(hits - records);
			break;
		}
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

static const struct gc_probe *probe_of(const struct gc_probe *probes, size_t n, int64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (probes[i].probe_id == id)
			return &probes[i];
	return NULL;
}

/* Every hit of those probes, sorted by thread and time. */
static int load_hits(struct loader *L, const struct gc_probe *probes, size_t nprobes,
		     struct gc_hit **hits, size_t *n)
{
	sqlite3_stmt *st = db_prepare(L->db, "SELECT probe_id, ts, pid, tid, arg0, duration FROM probe_hits");
	size_t cap = 0;
	int rc;

	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const struct gc_probe *p = probe_of(probes, nprobes, sqlite3_column_int64(st, 0));
		struct gc_hit *h;

		if (!p)
			continue;
		if (*n == cap) {
			struct gc_hit *grown = realloc(*hits, (cap ? cap * 2 : 256) * sizeof(**hits));
			if (!grown) {
				sqlite3_finalize(st);
				return -1;
			}
			*hits = grown;
			cap = cap ? cap * 2 : 256;
		}
		h = &(*hits)[(*n)++];
		h->ts = sqlite3_column_int64(st, 1);
		h->pid = sqlite3_column_int64(st, 2);
		h->tid = sqlite3_column_int64(st, 3);
		h->value = sqlite3_column_int64(st, 4);
		h->duration = sqlite3_column_int64(st, 5);
		h->pair = p->pair;
		h->role = p->role;
		h->thread = gc_probe_pairs[p->pair].per_process ? 0 : h->tid;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return -1;
	if (*n > 1)
		qsort(*hits, *n, sizeof(**hits), by_thread_time);
	return 0;
}

/* begin's pause, from start_ts (0: the begin's own time) to end_ts. */
static int insert_pause(sqlite3_stmt *ins, const struct gc_hit *begin, int64_t start_ts,
			int64_t end_ts)
{
	if (start_ts <= 0 || start_ts > end_ts)
		start_ts = begin->ts;
	sqlite3_bind_int64(ins, 1, begin->pid);
	sqlite3_bind_int64(ins, 2, begin->tid);
	sqlite3_bind_int64(ins, 3, start_ts);
	sqlite3_bind_int64(ins, 4, end_ts);
	sqlite3_bind_int64(ins, 5, end_ts - start_ts);
	db_bind_text(ins, 6, gc_probe_pairs[begin->pair].runtime);
	db_bind_text(ins, 7, gc_probe_pairs[begin->pair].source);
	if (sqlite3_step(ins) != SQLITE_DONE)
		return -1;
	sqlite3_reset(ins);
	return 0;
}

/* The pairing state of one thread (or process). */
struct pairing {
	const struct gc_hit *begin;     /* the open pause */
	int marked;                     /* a marker hit inside it */
	int64_t start;                  /* the runtime's own begin time, 0: none */
	const struct gc_hit *pending;   /* a pause ended by the restart, which its
					 * finish may still end later */
	int64_t pending_start, pending_end;
	int finished;                   /* the open pause ended at its finish: the
					 * restart that follows is part of it */
};

static int flush_pending(sqlite3_stmt *ins, struct pairing *g)
{
	int rc = g->pending ? insert_pause(ins, g->pending, g->pending_start, g->pending_end) : 0;

	g->pending = NULL;
	return rc;
}

static void on_begin(struct loader *L, struct pairing *g, const struct gc_hit *h)
{
	if (g->begin)
		L->gc.begin_unmatched++;   /* a second begin: the end was lost */
	g->begin = h;
	g->marked = 0;
	g->start = 0;
	g->finished = 0;
}

/* When a pause ended by its finish ended: the time the runtime passed to
 * it (its own clock is CLOCK_MONOTONIC, like the recorder's), when that
 * lies between the begin and the hit; else the hit. */
static int64_t finish_time(const struct gc_hit *begin, const struct gc_hit *finish)
{
	return finish->value > begin->ts && finish->value <= finish->ts ? finish->value
									 : finish->ts;
}

/* The runtime's own end of a collection's pause: the open one (mark
 * termination), or the one the restart just ended (sweep termination). */
static int on_finish(struct loader *L, sqlite3_stmt *ins, struct pairing *g,
		     const struct gc_hit *h)
{
	int rc = 0;

	if (g->begin && g->marked) {
		rc = insert_pause(ins, g->begin, g->start, finish_time(g->begin, h));
		L->gc.pauses++;
		g->begin = NULL;
		g->finished = 1;
	} else if (g->pending) {
		g->pending_end = finish_time(g->pending, h);
		rc = flush_pending(ins, g);
	}
	return rc;
}

/* An end closes the open pause of its pair: a pause, unless the pair
 * needs a marker and none came (a Go world stop of another kind). */
static int on_end(struct loader *L, sqlite3_stmt *ins, struct pairing *g,
		  const struct gc_hit *h)
{
	const struct gc_probe_pair *p = &gc_probe_pairs[h->pair];

	if (!g->begin || g->begin->pair != h->pair) {
		if (g->finished)
			g->finished = 0;           /* the restart after a finish */
		else
			L->gc.end_unmatched++;     /* an end with no begin open */
		return 0;
	}
	if (p->markers[0] && !g->marked) {
		L->gc.other_stops++;
		g->begin = NULL;
		return 0;
	}
	L->gc.pauses++;
	if (p->finish) {                           /* its finish may follow */
		g->pending = g->begin;
		g->pending_start = g->start;
		g->pending_end = h->ts;
		g->begin = NULL;
		return 0;
	}
	{
		const struct gc_hit *begin = g->begin;

		g->begin = NULL;
		return insert_pause(ins, begin, g->start, h->ts);
	}
}

/* A marker inside the open pause: a collection's. A start marker also
 * says when the runtime began counting the pause: its argument, when it
 * lies at most a second before the begin's hit. */
static void on_mark(struct pairing *g, const struct gc_hit *h)
{
	if (!g->begin || g->begin->pair != h->pair)
		return;
	g->marked = 1;
	if (h->role == ROLE_START && h->value > 0 && h->value <= g->begin->ts &&
	    g->begin->ts - h->value < 1000000000)
		g->start = h->value;
}

/* One hit, in time order within its thread (or process). */
static int step(struct loader *L, sqlite3_stmt *ins, struct pairing *g, const struct gc_hit *h)
{
	int rc = 0;

	if (h->role != ROLE_FINISH)
		rc = flush_pending(ins, g);        /* no finish came: the restart ended it */
	if (rc)
		return rc;
	if (h->role == ROLE_CALL) {              /* a pause timed whole */
		L->gc.pauses++;
		rc = insert_pause(ins, h, h->ts, h->ts + h->duration);
	} else if (h->role == ROLE_BEGIN) {
		on_begin(L, g, h);
	} else if (h->role == ROLE_MARK || h->role == ROLE_START) {
		on_mark(g, h);
	} else if (h->role == ROLE_FINISH) {
		rc = on_finish(L, ins, g, h);
	} else {
		rc = on_end(L, ins, g, h);
	}
	return rc;
}

/* Pairs the sorted hits, thread by thread (or process by process), into
 * pauses. */
static int pair_hits(struct loader *L, const struct gc_hit *hits, size_t n)
{
	sqlite3_stmt *ins = db_prepare(L->db, "INSERT INTO gc_pauses (pid, tid, start_ts, end_ts,"
				       " duration, runtime, source) VALUES (?, ?, ?, ?, ?, ?, ?)");
	struct pairing g = { 0 };
	int rc = 0;

	if (!ins)
		return -1;
	for (size_t i = 0; i < n && rc == 0; i++) {
		const struct gc_hit *h = &hits[i];

		if (i > 0 && (hits[i - 1].pid != h->pid || hits[i - 1].thread != h->thread)) {
			rc = flush_pending(ins, &g);   /* a new thread: the last one's are done */
			if (g.begin)
				L->gc.begin_unmatched++;
			memset(&g, 0, sizeof(g));
		}
		if (rc == 0)
			rc = step(L, ins, &g, h);
	}
	if (rc == 0)
		rc = flush_pending(ins, &g);
	if (g.begin)
		L->gc.begin_unmatched++;
	sqlite3_finalize(ins);
	return rc;
}

int gc_pauses_build(struct loader *L)
{
	struct gc_probe probes[MAX_GC_PROBES];
	struct gc_hit *hits = NULL;
	size_t nprobes = 0, nhits = 0;
	int rc;

	memset(&L->gc, 0, sizeof(L->gc));
	if (find_probes(L, probes, &nprobes) < 0)
		return -1;
	if (nprobes == 0)
		return 0;
	L->gc.present = 1;
	rc = load_hits(L, probes, nprobes, &hits, &nhits);
	if (rc == 0)
		rc = pair_hits(L, hits, nhits);
	free(hits);
	return rc;
}
