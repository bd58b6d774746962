/* series_walk.h - everything diff needs from the sorted values of one
 * latency series on both sides, in one pass: each side's runs are merged
 * in ascending order (their values sorted in memory, or read sorted from a
 * spill database), and the two sides walked together a group of equal
 * values at a time, as statistics.c's array functions walk two sorted
 * arrays, with the same arithmetic in the same order: Mann-Whitney U, the
 * Kolmogorov-Smirnov D, the mean, values at given ranks (quantiles and
 * their intervals), each run's median and a log2 histogram. The values
 * themselves are never gathered: a side of a hundred million calls costs
 * what its runs' sources hold. */
#ifndef ANALYZE_DIFF_SERIES_WALK_H
#define ANALYZE_DIFF_SERIES_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "diff_spill.h"

/* One run's values of the series, ascending: an array, or a spill. */
struct vsource {
	uint64_t n;
	const uint64_t *vals;     /* sorted; NULL: read spill's key_id */
	struct diff_spill *spill;
	int64_t key_id;
	/* walk state */
	uint64_t taken, head;
	int has_head;
	uint64_t median;          /* its nearest-rank median, once taken */
};

#define WALK_RANKS 8

struct walk_side {
	struct vsource *runs;
	size_t nruns;
	/* asked: 1-based ranks in the side's pooled values (0: none) */
	size_t rank[WALK_RANKS];
	/* results */
	uint64_t n;
	uint64_t at[WALK_RANKS];  /* the value at each rank */
	double sum;               /* added in ascending order */
	uint64_t min, max;
	uint64_t hist[64];        /* values v with 2^(k-1) < v <= 2^k in hist[k] (v <= 1: 0) */
};

struct walk_result {
	double mw_p, auc;         /* Mann-Whitney U: p-value, P(new > base) */
	double ks_d;
};

/* The histogram bucket of v: the smallest k with v <= 2^k (63 for the rest). */
int walk_bucket(uint64_t v);

/* Walks both sides (their runs' n set, and rank[]). 0, or -1 on a read
 * error (reported). */
int series_walk(struct walk_side side[2], struct walk_result *out);

#endif /* ANALYZE_DIFF_SERIES_WALK_H */
