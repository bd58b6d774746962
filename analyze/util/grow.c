/* grow.c - room for one more element at the end of a growable array (see
 * grow.h). */
#include <stdint.h>
#include <stdlib.h>

#include "grow.h"

int array_grow(void **v, size_t *cap, size_t n, size_t size, size_t first)
{
	return array_grow_max(v, cap, n, size, first, SIZE_MAX);
}

int array_grow_max(void **v, size_t *cap, size_t n, size_t size, size_t first, size_t max)
{
	size_t want = *cap ? *cap * 2 : first;
	void *w;

	if (n < *cap)
		return 0;
	if (want < *cap)
		want = SIZE_MAX;
	if (want > max)
		want = max;
	if (want <= n || (size && want > SIZE_MAX / size))
		return -1;
	w = realloc(*v, want * size);
	if (!w)
		return -1;
	*v = w;
	*cap = want;
	return 0;
}
