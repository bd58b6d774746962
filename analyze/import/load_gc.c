/* load_gc.c - the `gc_pauses` table (docs/schema.md): the pauses of
 * language runtimes' garbage collectors, from the probes that bound them
 * (probe_hits of USDT probes, or of entry probes on Go's runtime). Hits of
 * the known begin/end probes (gc_probe_pairs, the only list of them) are
 * paired in time order, per thread where both fire on the collecting
 * thread (CPython, HotSpot), per process where they may not (Go's world
 * is stopped by one thread and may be started by another, and only one
 * stop runs at a time): a begin opens a pause, the next end of the same
 * pair closes it. Go also stops the world for other reasons (ReadMemStats,
 * GOMAXPROCS, traces), so its pair names marker functions that only a
 * collection's stops run; a stop with no marker hit inside is not a GC
 * pause (counted, gc.other_stops). Whatever cannot be paired is counted
 * in the quality table (source `probe`, keys gc.*), never dropped
 * silently: a begin whose end never came (a collection still running when
 * the recording stopped, or an end record lost), an end whose begin was
 * not seen (recording started mid-collection), and probe hits the kernel
 * counted without a record (--sample, --rate-cap). Built once the probes
 * table is. */
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
	int per_process;      /* begin and end may fire on different threads */
	const char *markers[MARKERS_MAX]; /* a pause needs one of these inside */
	const char *source;   /* gc_pauses.source */
} gc_probe_pairs[] = {
	/* CPython built --with-dtrace (Debian's python3.X): gc_collect_main(),
	 * run by the thread that triggered the collection, holding the GIL,
	 * so every Python thread of the process waits; arg0 of gc__start is
	 * the generation collected */
	{ "python", "python:gc__start", "python:gc__done", 0, { NULL }, "usdt" },
	/* HotSpot (Debian's openjdk-17 libjvm.so has them, no semaphore):
	 * SvcGCMarker around a collection's VM operation, on the VM thread
	 * inside a safepoint: the Java threads are stopped; arg0 of gc__begin
	 * is 1 for a full collection */
	{ "jvm", "hotspot:gc__begin", "hotspot:gc__end", 0, { NULL }, "usdt" },
	/* Go (perfcap-record -e gc: entry probes, never return probes): the
	 * world stopped from the entry of stopTheWorldWithSema to the entry
	 * of startTheWorldWithSema; a collection stops it twice, at sweep
	 * termination (finishsweep_m runs inside) and at mark termination
	 * (gcMarkTermination runs inside) */
	{ "go", "runtime.stopTheWorldWithSema", "runtime.startTheWorldWithSema", 1,
	  { "runtime.finishsweep_m", "runtime.gcMarkTermination" }, "uprobe" },
};
#define NPAIRS (sizeof(gc_probe_pairs) / sizeof(gc_probe_pairs[0]))

#define MAX_GC_PROBES 64

enum gc_role { ROLE_BEGIN = 0, ROLE_MARK = 1, ROLE_END = 2 }; /* order at one instant */

struct gc_probe {
	int64_t probe_id;
	int pair;         /* index in gc_probe_pairs */
	int role;         /* enum gc_role */
};

struct gc_hit {
	int64_t ts, pid, tid;
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
	return a->role - b->role;   /* at one instant: begin, marker, end */
}

/* The role of the probe named name in pair p, or -1. */
static int role_in(const struct gc_probe_pair *p, const char *name)
{
	if (strcmp(name, p->begin) == 0)
		return ROLE_BEGIN;
	if (strcmp(name, p->end) == 0)
		return ROLE_END;
	for (int m = 0; m < MARKERS_MAX && p->markers[m]; m++)
		if (strcmp(name, p->markers[m]) == 0)
			return ROLE_MARK;
	return -1;
}

/* The usdt and entry probes of the recording that are a known begin, end
 * or marker, and the hits the kernel counted beyond the records written. */
static int find_probes(struct loader *L, struct gc_probe *probes, size_t *n)
{
	sqlite3_stmt *st = db_prepare(L->db, "SELECT probe_id, name, coalesce(hits, 0), records"
				      " FROM probes WHERE kind IN ('usdt', 'entry') ORDER BY probe_id");
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
	sqlite3_stmt *st = db_prepare(L->db, "SELECT probe_id, ts, pid, tid FROM probe_hits");
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

static int insert_pause(sqlite3_stmt *ins, const struct gc_hit *begin, int64_t end_ts)
{
	sqlite3_bind_int64(ins, 1, begin->pid);
	sqlite3_bind_int64(ins, 2, begin->tid);
	sqlite3_bind_int64(ins, 3, begin->ts);
	sqlite3_bind_int64(ins, 4, end_ts);
	sqlite3_bind_int64(ins, 5, end_ts - begin->ts);
	db_bind_text(ins, 6, gc_probe_pairs[begin->pair].runtime);
	db_bind_text(ins, 7, gc_probe_pairs[begin->pair].source);
	if (sqlite3_step(ins) != SQLITE_DONE)
		return -1;
	sqlite3_reset(ins);
	return 0;
}

/* The pause a begin opened: its begin, and whether a marker was seen. */
struct open_pause {
	const struct gc_hit *begin;
	int marked;
};

/* An end closes the open pause of its pair: a pause, unless the pair
 * needs a marker and none came (a Go world stop of another kind). */
static int close_pause(struct loader *L, sqlite3_stmt *ins, struct open_pause *o,
		       const struct gc_hit *end)
{
	const struct gc_probe_pair *p = &gc_probe_pairs[o->begin->pair];
	int rc = 0;

	if (p->markers[0] && !o->marked) {
		L->gc.other_stops++;
	} else {
		rc = insert_pause(ins, o->begin, end->ts);
		L->gc.pauses++;
	}
	o->begin = NULL;
	return rc;
}

static void step(struct loader *L, struct open_pause *o, const struct gc_hit *h)
{
	if (h->role == ROLE_BEGIN) {
		if (o->begin)
			L->gc.begin_unmatched++;   /* a second begin: the end was lost */
		o->begin = h;
		o->marked = 0;
	} else if (h->role == ROLE_MARK) {
		if (o->begin && o->begin->pair == h->pair)
			o->marked = 1;
	} else {
		L->gc.end_unmatched++;     /* an end with no begin open */
	}
}

/* Pairs the sorted hits, thread by thread (or process by process), into
 * pauses. */
static int pair_hits(struct loader *L, const struct gc_hit *hits, size_t n)
{
	sqlite3_stmt *ins = db_prepare(L->db, "INSERT INTO gc_pauses (pid, tid, start_ts, end_ts,"
				       " duration, runtime, source) VALUES (?, ?, ?, ?, ?, ?, ?)");
	struct open_pause open = { NULL, 0 };
	int rc = 0;

	if (!ins)
		return -1;
	for (size_t i = 0; i < n && rc == 0; i++) {
		const struct gc_hit *h = &hits[i];

		if (open.begin && (open.begin->pid != h->pid || open.begin->thread != h->thread)) {
			L->gc.begin_unmatched++;   /* its thread's hits ended first */
			open.begin = NULL;
		}
		if (h->role == ROLE_END && open.begin && open.begin->pair == h->pair)
			rc = close_pause(L, ins, &open, h);
		else
			step(L, &open, h);
	}
	if (open.begin)
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
