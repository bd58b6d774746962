/* diff_table.c - named series for diff (see diff.h): a growable array of
 * rows indexed by a 64-bit hash of the name, collisions resolved by
 * probing the second key. */
#include <stdlib.h>
#include <string.h>

#include "diff.h"

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;   /* FNV-1a */

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

void diff_table_init(struct dtable *t)
{
	memset(t, 0, sizeof(*t));
	hmap_init(&t->index);
}

void diff_table_free(struct dtable *t)
{
	for (size_t i = 0; i < t->len; i++) {
		free(t->rows[i].key);
		free(t->rows[i].vals);
		free(t->rows[i].block_median);
	}
	free(t->rows);
	hmap_free(&t->index);
	memset(t, 0, sizeof(*t));
}

const struct dseries *diff_table_find(const struct dtable *t, const char *key)
{
	uint64_t h = name_hash(key);

	for (uint64_t probe = 0;; probe++) {
		uint64_t *slot = hmap_find(&t->index, h, probe);

		if (!slot)
			return NULL;
		if (strcmp(t->rows[*slot - 1].key, key) == 0)
			return &t->rows[*slot - 1];
	}
}

struct dseries *diff_table_get(struct dtable *t, const char *key)
{
	uint64_t h = name_hash(key), probe = 0, *slot;
	struct dseries *row;

	for (;; probe++) {
		slot = hmap_find(&t->index, h, probe);
		if (!slot)
			break;
		if (strcmp(t->rows[*slot - 1].key, key) == 0)
			return &t->rows[*slot - 1];
	}
	if (t->len == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct dseries *rows = realloc(t->rows, cap * sizeof(*rows));

		if (!rows)
			return NULL;
		t->rows = rows;
		t->cap = cap;
	}
	row = &t->rows[t->len];
	memset(row, 0, sizeof(*row));
	row->key = strdup(key);
	if (!row->key || !hmap_upsert(&t->index, h, probe, t->len + 1, NULL)) {
		free(row->key);
		return NULL;
	}
	t->len++;
	return row;
}

int diff_series_push(struct dseries *s, uint64_t value)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		uint64_t *vals = realloc(s->vals, cap * sizeof(*vals));

		if (!vals)
			return -1;
		s->vals = vals;
		s->cap = cap;
	}
	s->vals[s->n++] = value;
	return 0;
}

int64_t diff_table_index(const struct dtable *t, const struct dseries *s)
{
	return (int64_t)(s - t->rows);
}

/* Hoare's selection, middle pivot: v[k] ends as the k-th smallest of v,
 * with nothing larger before it and nothing smaller after. */
uint64_t diff_select(uint64_t *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;

	while (lo < hi) {
		uint64_t pivot = v[lo + (hi - lo) / 2], t;
		size_t i = lo, j = hi;

		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				t = v[i];
				v[i] = v[j];
				v[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			break;
	}
	return v[k];
}
