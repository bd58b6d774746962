/* load_gc.c - the `gc_pauses` table (docs/schema.md): the pauses of
 * language runtimes' garbage collectors, from the static probes their
 * runtimes fire when a collection begins and ends (USDT hits in
 * probe_hits). Hits of the known begin/end probes (gc_probe_pairs, the
 * only list of them) are paired per thread in time order: a begin opens a
 * pause on its thread, the next end of the same pair on that thread closes
 * it. Whatever cannot be paired is counted in the quality table (source
 * `probe`, keys gc.*), never dropped silently: a begin whose end never
 * came (a collection still running when the recording stopped, or an end
 * record lost), an end whose begin was not seen (recording started
 * mid-collection), and probe hits the kernel counted without a record
 * (--sample, --rate-cap). Built once the probes table is. */
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "load_state.h"

/* The known begin/end probe pairs, by the probes table's name
 * (PROVIDER:NAME). Both probes of a pair fire on the same thread. */
static const struct gc_probe_pair {
	const char *runtime;  /* as process_runtimes names it (util/runtimes.c) */
	const char *begin, *end;
} gc_probe_pairs[] = {
	/* CPython built --with-dtrace (Debian's python3.X): gc_collect_main(),
	 * run by the thread that triggered the collection, holding the GIL,
	 * so every Python thread of the process waits; arg0 of gc__start is
	 * the generation collected */
	{ "python", "python:gc__start", "python:gc__done" },
	/* HotSpot (Debian's openjdk-17 libjvm.so has them, no semaphore):
	 * SvcGCMarker around a collection's VM operation, on the VM thread
	 * inside a safepoint: the Java threads are stopped; arg0 of gc__begin
	 * is 1 for a full collection */
	{ "jvm", "hotspot:gc__begin", "hotspot:gc__end" },
};
#define NPAIRS (sizeof(gc_probe_pairs) / sizeof(gc_probe_pairs[0]))

#define MAX_GC_PROBES 64

struct gc_probe {
	int64_t probe_id;
	int pair;         /* index in gc_probe_pairs */
	int is_end;
};

struct gc_hit {
	int64_t ts, pid, tid;
	int pair, is_end;
};

static int by_thread_time(const void *pa, const void *pb)
{
	const struct gc_hit *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->is_end - b->is_end;   /* a begin and an end at one instant: begin first */
}

/* The usdt probes of the recording that are a known begin or end, and
 * the hits the kernel counted beyond the records written. */
static int find_probes(struct loader *L, struct gc_probe *probes, size_t *n)
{
	sqlite3_stmt *st = db_prepare(L->db, "SELECT probe_id, name, coalesce(hits, 0),"
				      " records FROM probes WHERE kind = 'usdt' ORDER BY probe_id");
	int rc;

	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && *n < MAX_GC_PROBES) {
		const char *name = (const char *)sqlite3_column_text(st, 1);
		int64_t hits = sqlite3_column_int64(st, 2), records = sqlite3_column_int64(st, 3);

		for (size_t i = 0; name && i < NPAIRS; i++) {
			int is_end = strcmp(name, gc_probe_pairs[i].end) == 0;

			if (!is_end && strcmp(name, gc_probe_pairs[i].begin) != 0)
				continue;
			probes[*n].probe_id = sqlite3_column_int64(st, 0);
			probes[*n].pair = (int)i;
			probes[(*n)++].is_end = is_end;
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
		h->is_end = p->is_end;
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
	db_bind_text(ins, 7, "usdt");
	if (sqlite3_step(ins) != SQLITE_DONE)
		return -1;
	sqlite3_reset(ins);
	return 0;
}

/* Pairs the sorted hits thread by thread into pauses. */
static int pair_hits(struct loader *L, const struct gc_hit *hits, size_t n)
{
	sqlite3_stmt *ins = db_prepare(L->db, "INSERT INTO gc_pauses (pid, tid, start_ts, end_ts,"
				       " duration, runtime, source) VALUES (?, ?, ?, ?, ?, ?, ?)");
	const struct gc_hit *open = NULL;   /* the begin waiting for its end */
	int rc = 0;

	if (!ins)
		return -1;
	for (size_t i = 0; i < n && rc == 0; i++) {
		const struct gc_hit *h = &hits[i];

		if (open && (open->pid != h->pid || open->tid != h->tid)) {
			L->gc.begin_unmatched++;   /* its thread's hits ended first */
			open = NULL;
		}
		if (!h->is_end) {
			if (open)
				L->gc.begin_unmatched++;   /* a second begin: the end was lost */
			open = h;
		} else if (open && open->pair == h->pair) {
			rc = insert_pause(ins, open, h->ts);
			L->gc.pauses++;
			open = NULL;
		} else {
			L->gc.end_unmatched++;
		}
	}
	if (open)
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
