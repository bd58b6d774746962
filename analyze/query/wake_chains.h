/* wake_chains.h - the wakeup graph of a report scope: its main edges
 * waker -> wakee (view wakeup_edges, docs/schema.md) and, for each, where
 * the chains of wakeups behind its waits end (book 8.3, off-wake
 * analysis; perf sched's wakeup chains). A wait that a thread ended (kind
 * "thread" or "process") is followed to that waker's own wait during it:
 * the waker's latest blocked interval that ended after the wait began and
 * no later than it ended. Then that wait's waker, up to WAKE_CHAIN_HOPS
 * times. The chain ends at:
 *   a wait ended by no thread: its waker kind (timer, device,
 *     softirq:NET_RX, unknown), with the thread whose wait that was;
 *   "running": the last waker had no blocked wait during the one it
 *     ended (it was on CPU, or runnable): the chain ends at its work;
 *   "depth": longer than WAKE_CHAIN_HOPS.
 * The waker's wait is looked up by the wait's end (its switch-in), not by
 * the wakeup's time, which offcpu does not keep: a waker that blocked and
 * woke again between the wakeup and the switch-in is followed through
 * that later wait (at most the wakee's run-queue latency).
 *
 * Cost: the edges are one grouped scan of offcpu; the chains one more
 * scan of the blocked intervals ending in the scope, or up to
 * WAKE_CHAIN_LOOKBACK_NS before it, sorted per thread in memory (a
 * binary search per hop). Chains reaching before that stop at "running"
 * as if the waker had not waited. */
#ifndef ANALYZE_QUERY_WAKE_CHAINS_H
#define ANALYZE_QUERY_WAKE_CHAINS_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

#include "scope.h"

#define WAKE_CHAIN_HOPS 8
#define WAKE_CHAIN_LOOKBACK_NS 10000000000ll
#define WAKE_EDGE_ROOTS 3

/* Where the chains of some waits of an edge end. */
struct wake_root {
	char kind[24];            /* a waker kind, "running" or "depth" */
	uint32_t pid, tid;        /* the thread whose wait that kind ended; for
				   * "running" the waker that ran; for "depth"
				   * the last thread followed */
	char wait_class[16];      /* that thread's wait; "" for "running" */
	uint64_t waits, ns;       /* the edge's waits (scope-clipped ns) ending here */
};

/* One edge: blocked waits of thread tid in wait_class ended by waker_kind
 * (waker_pid/waker_tid: the task, 0 for timers, devices, unknown). */
struct wake_edge {
	uint32_t pid, tid;
	char wait_class[16];
	char waker_kind[24];
	uint32_t waker_pid, waker_tid;
	uint64_t waits, total_ns, max_ns;   /* total_ns clipped to the scope */
	uint64_t hops;                      /* hops followed, summed over the waits */
	struct wake_root roots[WAKE_EDGE_ROOTS];   /* most ns first */
	int nroots;
	uint64_t other_roots_ns;            /* ns of roots beyond roots[] */
};

struct wake_graph {
	struct wake_edge *edges;  /* largest total_ns first */
	size_t len;
	uint64_t blocked_ns;      /* all blocked waits of the scope, clipped */
	uint64_t blocked_waits;
};

/* Loads the top edges of the scope (at most top) and their chains' roots.
 * 0 or -1 (database error, reported through db_report_error). */
int wake_graph_load(sqlite3 *db, const struct report_scope *scope, int top,
		    struct wake_graph *g);
void wake_graph_free(struct wake_graph *g);

#endif /* ANALYZE_QUERY_WAKE_CHAINS_H */
