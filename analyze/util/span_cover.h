/* span_cover.h - how much of an interval the spans of one key (a thread)
 * cover, each span counted once: sum over the key's spans of
 * |[start, end) n [s, e)|, in O(log n) per question, whatever the spans'
 * overlaps.
 *
 * The report asks it once per thread state: how much of this running,
 * runnable or blocked interval fell inside the requests its thread
 * served. An event loop's requests overlap (it reads two clients, then
 * answers both), so a search for "the first span ending after s" over
 * spans sorted by start is wrong for them: ends are not sorted. Instead,
 * with F(x) = sum over spans of |[start, end) n (-inf, x)|, the answer is
 * F(e) - F(s), and
 *
 *   F(x) = (starts below x) * x - (their sum) - (ends below x) * x + (their sum)
 *
 * from the key's starts and ends, each sorted with running sums: two binary
 * searches per point. Sums are taken modulo 2^64; F itself is a sum of
 * durations, so the wrapped result is exact.
 *
 * Memory: 32 bytes a span, 48 while span_cover_build sorts. */
#ifndef ANALYZE_SPAN_COVER_H
#define ANALYZE_SPAN_COVER_H

#include <stddef.h>
#include <stdint.h>

#define SPAN_COVER_PEAK_BYTES 48   /* per span, during the build */

struct span_cover;

struct span_cover *span_cover_new(void);
void span_cover_free(struct span_cover *c);
/* Drops every span and frees their memory. */
void span_cover_reset(struct span_cover *c);

/* Adds a span of key (empty or reversed spans cover nothing and are not
 * kept). 0, or -1 when out of memory. */
int span_cover_add(struct span_cover *c, int64_t key, int64_t start, int64_t end);

/* Sorts the spans added; then span_cover_overlap answers. 0 or -1. */
int span_cover_build(struct span_cover *c);

/* Sum of the overlaps of [s, e) with key's spans (0 for e <= s). */
uint64_t span_cover_overlap(const struct span_cover *c, int64_t key, int64_t s, int64_t e);

#endif /* ANALYZE_SPAN_COVER_H */
