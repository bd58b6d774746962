/* sorted_search.h - one binary search for the analyzer's sorted arrays of
 * records keyed by a time: the request windows by start, the pool's gaps
 * by end, the report's window weights, a collector's releases. Each record
 * is `size` bytes with an int64_t key at byte `off`, ascending (equal keys
 * allowed). */
#ifndef ANALYZE_SORTED_SEARCH_H
#define ANALYZE_SORTED_SEARCH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The index of the first of the n records whose key is above key; n when
 * none is. */
static inline size_t sorted_first_above(const void *base, size_t n, size_t size, size_t off,
					int64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int64_t v;

		memcpy(&v, (const char *)base + mid * size + off, sizeof(v));
		if (v <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The index of the first record whose key is key or above; n when none is. */
static inline size_t sorted_first_from(const void *base, size_t n, size_t size, size_t off,
				       int64_t key)
{
	return key == INT64_MIN ? 0 : sorted_first_above(base, n, size, off, key - 1);
}

#endif /* ANALYZE_SORTED_SEARCH_H */
