/* time_gaps.h - time not observed: sorted, non-overlapping gaps, and how
 * much of an interval falls in them. The sched source's gaps between its
 * windows (format 1.12, sched_gaps) are read this way by the correlator's
 * time shares and by the report's requests. */
#ifndef ANALYZE_TIME_GAPS_H
#define ANALYZE_TIME_GAPS_H

#include <stddef.h>
#include <stdint.h>

#include "sorted_search.h"

struct time_gap {
	int64_t start, end;       /* [start, end) */
};

/* The part of [from, to) in g[0 .. n), sorted by start (so by end). */
static inline uint64_t time_gaps_overlap(const struct time_gap *g, size_t n, int64_t from,
					 int64_t to)
{
	uint64_t sum = 0;

	for (size_t i = sorted_first_above(g, n, sizeof(*g), offsetof(struct time_gap, end), from);
	     i < n && g[i].start < to; i++) {
		int64_t s = g[i].start > from ? g[i].start : from;
		int64_t e = g[i].end < to ? g[i].end : to;

		if (e > s)
			sum += (uint64_t)(e - s);
	}
	return sum;
}

#endif /* ANALYZE_TIME_GAPS_H */
