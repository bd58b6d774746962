/* hashmap.c - open-addressing hash table with linear probing (see hashmap.h). */
#include <stdlib.h>

#include "hashmap.h"

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

static size_t slot_index(const struct hmap *m, uint64_t a, uint64_t b)
{
	return (size_t)(mix64(a ^ (b * 0x9e3779b97f4a7c15ull)) & (m->cap - 1));
}

void hmap_init(struct hmap *m)
{
	m->slots = NULL;
	m->cap = 0;
	m->len = 0;
}

void hmap_free(struct hmap *m)
{
	free(m->slots);
	hmap_init(m);
}

uint64_t *hmap_find(const struct hmap *m, uint64_t a, uint64_t b)
{
	if (m->cap == 0)
		return NULL;
	for (size_t i = slot_index(m, a, b);; i = (i + 1) & (m->cap - 1)) {
		struct hmap_slot *s = &m->slots[i];
		if (!s->used)
			return NULL;
		if (s->a == a && s->b == b)
			return &s->value;
	}
}

static int hmap_grow(struct hmap *m)
{
	size_t new_cap = m->cap ? m->cap * 2 : 64;
	struct hmap old = *m;

	m->slots = calloc(new_cap, sizeof(*m->slots));
	if (!m->slots) {
		*m = old;
		return -1;
	}
	m->cap = new_cap;
	for (size_t i = 0; i < old.cap; i++) {
		const struct hmap_slot *s = &old.slots[i];
		if (!s->used)
			continue;
		size_t j = slot_index(m, s->a, s->b);
		while (m->slots[j].used)
			j = (j + 1) & (m->cap - 1);
		m->slots[j] = *s;
	}
	free(old.slots);
	return 0;
}

uint64_t *hmap_upsert(struct hmap *m, uint64_t a, uint64_t b, uint64_t initial,
		      int *created)
{
	if ((m->len + 1) * 2 > m->cap && hmap_grow(m) < 0)
		return NULL;
	size_t i = slot_index(m, a, b);
	for (;; i = (i + 1) & (m->cap - 1)) {
		struct hmap_slot *s = &m->slots[i];
		if (!s->used)
			break;
		if (s->a == a && s->b == b) {
			if (created)
				*created = 0;
			return &s->value;
		}
	}
	m->slots[i] = (struct hmap_slot){ .a = a, .b = b, .value = initial, .used = 1 };
	m->len++;
	if (created)
		*created = 1;
	return &m->slots[i].value;
}

int hmap_next(const struct hmap *m, size_t *pos, const struct hmap_slot **slot)
{
	while (*pos < m->cap) {
		const struct hmap_slot *s = &m->slots[(*pos)++];
		if (s->used) {
			*slot = s;
			return 1;
		}
	}
	return 0;
}
