/* diff_spill.h - a run's latency values on disk, for diffs whose values do
 * not fit the memory given to them (PERFCAP_DIFF_LATENCY_BYTES).
 *
 * diff compares latency series by statistics of their whole distributions
 * (Kolmogorov-Smirnov, Mann-Whitney U, quantiles with their intervals, the
 * medians of blocks of consecutive calls), so it needs every value, sorted,
 * and some in recorded order. A run whose values exceed its share of the
 * memory moves them into a private temporary SQLite database, one row per
 * value (series, its position in the series in recorded order, value),
 * indexed by (series, value, position) once loaded. The comparison then
 * reads each series sorted from the index, and a block's median with one
 * query that walks the same index: SQLite's page cache and sorter bound the
 * memory, whatever the number of values. The answers are the same as from
 * memory (tests/analyze/bounded_report.sh compares them). */
#ifndef ANALYZE_DIFF_SPILL_H
#define ANALYZE_DIFF_SPILL_H

#include <stdint.h>

#include <sqlite3.h>

struct diff_spill {
	sqlite3 *db;              /* NULL: nothing spilled */
	sqlite3_stmt *insert;
	sqlite3_stmt *sorted;     /* a series' values, ascending */
	sqlite3_stmt *block;      /* the value at a rank of a block of positions */
	uint64_t rows;
};

/* A new spill in its own temporary database (deleted when closed), or
 * NULL (reported). */
struct diff_spill *diff_spill_open(void);

/* One value of series key_id at position seq of the series. 0 or -1. */
int diff_spill_add(struct diff_spill *s, int64_t key_id, uint64_t seq, uint64_t value);

/* After the last value: commits and builds the index. 0 or -1. */
int diff_spill_finish(struct diff_spill *s);

/* Starts reading series key_id ascending; each diff_spill_next gives one
 * value: 1, 0 at the end, -1 on an error (reported). */
int diff_spill_rewind(struct diff_spill *s, int64_t key_id);
int diff_spill_next(struct diff_spill *s, uint64_t *value);

/* The value of 1-based rank among the positions [from, to) of series
 * key_id, sorted. 0 or -1. */
int diff_spill_block_rank(struct diff_spill *s, int64_t key_id, uint64_t from, uint64_t to,
			  uint64_t rank, uint64_t *value);

/* Closes and frees s (NULL: nothing). */
void diff_spill_close(struct diff_spill *s);

#endif /* ANALYZE_DIFF_SPILL_H */
