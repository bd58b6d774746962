/* grow.h - room for one more element at the end of a growable array.
 *
 * The import, the diagnosis and the exporters keep their rows in plain
 * arrays (pointer, used count, capacity) that double when full; this is
 * the one place that doubles them. */
#ifndef ANALYZE_GROW_H
#define ANALYZE_GROW_H

#include <stddef.h>

/* Makes room for element n of *v (n used of *cap elements of size bytes):
 * nothing when n < *cap, else the capacity doubles (first: the capacity of
 * an empty array). 0, or -1 when out of memory or the size would overflow
 * (*v and *cap are then unchanged). */
int array_grow(void **v, size_t *cap, size_t n, size_t size, size_t first);

/* array_grow, but to max elements at most: -1 (nothing changed) when n
 * is max already. */
int array_grow_max(void **v, size_t *cap, size_t n, size_t size, size_t first, size_t max);

#endif /* ANALYZE_GROW_H */
