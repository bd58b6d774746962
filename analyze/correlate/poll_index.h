/* poll_index.h - the poll-family returns of a capture's processes with
 * sockets, as the request pass (requests.c) asks for them: a request's
 * readiness is its pickup thread's last poll return at or before the
 * pickup, else its process's first poll return at or after its lower
 * bound.
 *
 * The returns are kept twice, as bare times: grouped by process, and
 * grouped by (process, thread), each group ascending, with a small table
 * of groups. The pass asks a connection's requests in time order, one
 * connection after another, so each search starts from the previous
 * answer in the same group (a galloping search: a few nearby elements)
 * and the group of the last question is tried first. The times alone take
 * a third of the room the (pid, tid, ts) triples took, and a search
 * compares one integer: in a 60 s recording of redis with every source
 * (2.4M poll returns, 4.8M requests), the searches had been a quarter of
 * the request pass, mostly cache misses over the triples.
 * Private to correlate/. */
#ifndef ANALYZE_POLL_INDEX_H
#define ANALYZE_POLL_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "request_feed.h"

/* One group: the times [from, to) of process pid (and thread tid). */
struct poll_group {
	int64_t pid, tid;
	size_t from, to;
};

/* Times grouped by process (tid 0 in the groups) or by thread. */
struct poll_times {
	int64_t *ts;
	struct poll_group *groups;
	size_t ngroups;
	size_t group_hint, hint;   /* the last question's group and answer */
};

struct poll_index {
	struct poll_times by_pid, by_tid;
};

/* Takes the n returns at polls (the feed's array, freed here, whatever
 * the outcome). 0, or -1 when out of memory (reported). */
int poll_index_build(struct poll_index *x, struct poll_ret *polls, size_t n);

void poll_index_free(struct poll_index *x);

/* The last return of thread tid of pid at or before ts; 0 when none
 * (*found 0). */
int64_t poll_index_last_of_thread(struct poll_index *x, int64_t pid, int64_t tid, int64_t ts,
				  int *found);

/* The first return of any thread of pid at or after ts; 0 when none
 * (*found 0). */
int64_t poll_index_first_of_process(struct poll_index *x, int64_t pid, int64_t ts, int *found);

#endif /* ANALYZE_POLL_INDEX_H */
