/* addr_list.c - a growable list of addresses, sorted and deduplicated on
 * demand (hit addresses of a module or of the kernel). */
#include <errno.h>
#include <stdlib.h>

#include "addr_list.h"

int addr_list_add(struct addr_list *l, uint64_t addr)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		uint64_t *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = addr;
	return 0;
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void addr_list_sort_unique(struct addr_list *l)
{
	size_t out = 0;

	if (!l->n)
		return;
	qsort(l->v, l->n, sizeof(*l->v), compare_u64);
	for (size_t i = 0; i < l->n; i++) {
		if (out == 0 || l->v[out - 1] != l->v[i])
			l->v[out++] = l->v[i];
	}
	l->n = out;
}

void addr_list_free(struct addr_list *l)
{
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}
