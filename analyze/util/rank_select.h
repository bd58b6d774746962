/* rank_select.h - exact order statistics (the values at given positions of
 * the sorted stream) of a stream of int64 values, in bounded memory.
 *
 * The report's request percentiles are nearest-rank values of every
 * request's service time: millions of values, hundreds of millions in an
 * hour-long recording. While the stream fits the memory given, the values
 * are kept and sorted, as before. Past it they are dropped, and the stream
 * is read again (the caller replays it: the same rows in any order) as
 * often as needed to narrow each asked position down to its value:
 *
 *   1. the first pass fills a log-linear histogram (256 buckets per power
 *      of two, so a bucket spans at most 1/256 of its values: 3.9 us at
 *      1 ms) once the values are dropped;
 *   2. each asked position then lies in one bucket, whose count is known;
 *      a bucket that fits the memory is collected and sorted in the next
 *      pass, else it is cut into 65,536 equal parts and counted again.
 *
 * Usually one more pass; at most five (2^64 / 65,536^4 = 1). A replay
 * whose count differs from the first pass fails rather than answering
 * from different data. Memory: the kept values (at most max_values), then
 * the histogram (106 KB), then per asked position 512 KB or its bucket
 * (at most max_values over the positions asked). Several selectors can
 * share one budget: their owner spills the largest (rank_select_spill)
 * and divides the budget among the spilled ones before their passes
 * (rank_select_set_max). */
#ifndef ANALYZE_RANK_SELECT_H
#define ANALYZE_RANK_SELECT_H

#include <stddef.h>
#include <stdint.h>

#define RANK_SELECT_MAX_ASK 8

struct rank_select;

/* A selector that keeps at most max_values values (at least 1). NULL when
 * out of memory. */
struct rank_select *rank_select_new(size_t max_values);
void rank_select_free(struct rank_select *r);

/* Adds one value of the current pass. 0, or -1 when out of memory. */
int rank_select_add(struct rank_select *r, int64_t v);

/* Values in the first pass; of them, kept in memory (0 once spilled). */
uint64_t rank_select_count(const struct rank_select *r);
size_t rank_select_kept(const struct rank_select *r);

/* Drops the kept values into the histogram now (before rank_select_ask).
 * 0 or -1 (out of memory, or asked already). */
int rank_select_spill(struct rank_select *r);

/* Changes how many values r may keep (or collect in a pass) from now on. */
void rank_select_set_max(struct rank_select *r, size_t max_values);

/* Ends the first pass and asks for the values at 0-based positions pos[0..k)
 * of the sorted stream (each below the count; k at most
 * RANK_SELECT_MAX_ASK). 0, or -1 when out of memory or asked wrongly. */
int rank_select_ask(struct rank_select *r, const uint64_t *pos, size_t k);

/* 1 while the stream must be read again: rank_select_begin_pass, then
 * rank_select_add for each value, then rank_select_end_pass. */
int rank_select_pending(const struct rank_select *r);
int rank_select_begin_pass(struct rank_select *r);
/* 0, or -1 when out of memory or the pass did not see the first pass's
 * values (another count). */
int rank_select_end_pass(struct rank_select *r);

/* The value at asked position i (valid once nothing is pending). */
int64_t rank_select_value(const struct rank_select *r, size_t i);

/* Passes made after the first (0: the values fit). */
unsigned rank_select_passes(const struct rank_select *r);

#endif /* ANALYZE_RANK_SELECT_H */
