/* radix_sort.h - a stable sort of fixed-size elements by a signed 64-bit
 * key inside each element, in linear time.
 *
 * The import sorts arrays of millions of small structs by time (the pool
 * sweep's events, the poll returns, a socket stream's calls); qsort with
 * a comparison function called through a pointer spent a fifth of the
 * request pass there. A least-significant-digit radix sort reads the key
 * bytes instead: one pass to count all eight byte positions, then one
 * stable distribution per position whose bytes are not all equal (times
 * of one capture share their high bytes, so usually five). Stable: equal
 * keys keep their order, so sorting by a second key first and then by the
 * first gives the order of both. */
#ifndef ANALYZE_RADIX_SORT_H
#define ANALYZE_RADIX_SORT_H

#include <stddef.h>

/* Sorts n elements of size bytes at base by the int64_t at key_offset in
 * each, ascending, stably. Needs n * size bytes of scratch. 0, or -1 when
 * out of memory (base is then untouched). */
int radix_sort_i64(void *base, size_t n, size_t size, size_t key_offset);

#endif /* ANALYZE_RADIX_SORT_H */
