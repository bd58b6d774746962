/* span_cover.c - the spans of each key as two sorted point lists, starts
 * and ends, with running sums (see span_cover.h for why). While spans are
 * added, a point's second word is its key; the build sorts each list by
 * (key, time) and replaces the key by the running sum of the key's times
 * up to and including the point. keys maps a key to its first point and
 * count, the same in both lists (a span adds one point to each). */
#include <stdlib.h>

#include "grow.h"
#include "hashmap.h"
#include "radix_sort.h"
#include "span_cover.h"

struct point {
	int64_t t;
	int64_t k;                  /* the key while adding; the running sum once built */
};

struct span_cover {
	struct point *starts, *ends;
	size_t n, cap_s, cap_e;
	struct hmap keys;           /* key -> first << 32 | count */
};

struct span_cover *span_cover_new(void)
{
	struct span_cover *c = calloc(1, sizeof(*c));

	if (c)
		hmap_init(&c->keys);
	return c;
}

void span_cover_free(struct span_cover *c)
{
	if (!c)
		return;
	free(c->starts);
	free(c->ends);
	hmap_free(&c->keys);
	free(c);
}

void span_cover_reset(struct span_cover *c)
{
	free(c->starts);
	free(c->ends);
	c->starts = c->ends = NULL;
	c->cap_s = c->cap_e = 0;
	c->n = 0;
	hmap_free(&c->keys);
	hmap_init(&c->keys);
}

int span_cover_add(struct span_cover *c, int64_t key, int64_t start, int64_t end)
{
	if (end <= start)
		return 0;
	if (array_grow((void **)&c->starts, &c->cap_s, c->n, sizeof(*c->starts), 1024) ||
	    array_grow((void **)&c->ends, &c->cap_e, c->n, sizeof(*c->ends), 1024))
		return -1;
	c->starts[c->n] = (struct point){ start, key };
	c->ends[c->n] = (struct point){ end, key };
	c->n++;
	return 0;
}

/* Sorts v by (key, time): by time, then stably by key. */
static int sort_points(struct point *v, size_t n)
{
	if (radix_sort_i64(v, n, sizeof(*v), offsetof(struct point, t)) < 0 ||
	    radix_sort_i64(v, n, sizeof(*v), offsetof(struct point, k)) < 0)
		return -1;
	return 0;
}

/* Replaces each point's key by the running sum of its key's times. */
static void running_sums(struct point *v, size_t first, size_t count)
{
	uint64_t sum = 0;

	for (size_t i = first; i < first + count; i++) {
		sum += (uint64_t)v[i].t;
		v[i].k = (int64_t)sum;
	}
}

int span_cover_build(struct span_cover *c)
{
	if (c->n > UINT32_MAX || sort_points(c->starts, c->n) < 0 || sort_points(c->ends, c->n) < 0)
		return -1;
	for (size_t i = 0; i < c->n;) {
		size_t j = i;
		int created;
		uint64_t *slot;

		while (j < c->n && c->starts[j].k == c->starts[i].k)
			j++;
		slot = hmap_upsert(&c->keys, (uint64_t)c->starts[i].k, 0, 0, &created);
		if (!slot)
			return -1;
		*slot = (uint64_t)i << 32 | (uint64_t)(j - i);
		running_sums(c->starts, i, j - i);
		running_sums(c->ends, i, j - i);
		i = j;
	}
	return 0;
}

/* count * x minus the sum of the points of v[first..first+count) below x. */
static uint64_t below(const struct point *v, size_t first, size_t count, int64_t x)
{
	size_t lo = first, hi = first + count;

	while (lo < hi) {                    /* the first point at or after x */
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].t < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == first)
		return 0;
	return (uint64_t)(lo - first) * (uint64_t)x - (uint64_t)v[lo - 1].k;
}

/* F(x) of span_cover.h, modulo 2^64. */
static uint64_t covered_before(const struct span_cover *c, size_t first, size_t count, int64_t x)
{
	return below(c->starts, first, count, x) - below(c->ends, first, count, x);
}

uint64_t span_cover_overlap(const struct span_cover *c, int64_t key, int64_t s, int64_t e)
{
	const uint64_t *slot;
	size_t first, count;

	if (e <= s || !(slot = hmap_find(&c->keys, (uint64_t)key, 0)))
		return 0;
	first = (size_t)(*slot >> 32);
	count = (size_t)(*slot & 0xffffffffu);
	if (e <= c->starts[first].t || s >= c->ends[first + count - 1].t)
		return 0;                    /* before the first start, after the last end */
	return covered_before(c, first, count, e) - covered_before(c, first, count, s);
}
