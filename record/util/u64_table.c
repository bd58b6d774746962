/* u64_table.c - an open-addressing hash table from a u64 key (pid, tid,
 * kernel stack id) to a u32 value, with linear probing. Entries leave only
 * through u64_table_filter, which rebuilds the slots (no tombstones). */
#include <errno.h>
#include <stdlib.h>

#include "u64_table.h"

static uint32_t slot_of(uint64_t key, uint32_t nslots)
{
	key *= 0x9e3779b97f4a7c15ull;
	return (uint32_t)(key >> 32) & (nslots - 1);
}

uint32_t u64_table_get(const struct u64_table *t, uint64_t key)
{
	if (!t->nslots)
		return U64_TABLE_EMPTY;
	for (uint32_t i = slot_of(key, t->nslots);; i = (i + 1) & (t->nslots - 1)) {
		const struct u64_table_slot *s = &t->slots[i];

		if (s->value == U64_TABLE_EMPTY)
			return U64_TABLE_EMPTY;
		if (s->key == key)
			return s->value;
	}
}

static void insert_slot(struct u64_table_slot *slots, uint32_t nslots,
			uint64_t key, uint32_t value, uint32_t *used)
{
	for (uint32_t i = slot_of(key, nslots);; i = (i + 1) & (nslots - 1)) {
		if (slots[i].value == U64_TABLE_EMPTY) {
			slots[i].key = key;
			slots[i].value = value;
			(*used)++;
			return;
		}
		if (slots[i].key == key) {
			slots[i].value = value;
			return;
		}
	}
}

static int grow(struct u64_table *t)
{
	uint32_t nslots = t->nslots ? t->nslots * 2 : 256;
	struct u64_table_slot *slots = malloc(sizeof(*slots) * nslots);
	uint32_t used = 0;

	if (!slots)
		return -ENOMEM;
	for (uint32_t i = 0; i < nslots; i++)
		slots[i].value = U64_TABLE_EMPTY;
	for (uint32_t i = 0; i < t->nslots; i++) {
		if (t->slots[i].value != U64_TABLE_EMPTY)
			insert_slot(slots, nslots, t->slots[i].key, t->slots[i].value, &used);
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	t->used = used;
	return 0;
}

int u64_table_put(struct u64_table *t, uint64_t key, uint32_t value)
{
	/* keep the load factor under 1/2 so probes stay short */
	if ((t->used + 1) * 2 > t->nslots) {
		int err = grow(t);

		if (err)
			return err;
	}
	insert_slot(t->slots, t->nslots, key, value, &t->used);
	return 0;
}

int u64_table_filter(struct u64_table *t, bool (*keep)(uint64_t key, uint32_t value, void *ctx),
		     void *ctx)
{
	struct u64_table_slot *slots;
	uint32_t used = 0;

	if (!t->nslots)
		return 0;
	slots = malloc(sizeof(*slots) * t->nslots);
	if (!slots)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->nslots; i++)
		slots[i].value = U64_TABLE_EMPTY;
	for (uint32_t i = 0; i < t->nslots; i++) {
		const struct u64_table_slot *s = &t->slots[i];

		if (s->value != U64_TABLE_EMPTY && keep(s->key, s->value, ctx))
			insert_slot(slots, t->nslots, s->key, s->value, &used);
	}
	free(t->slots);
	t->slots = slots;
	t->used = used;
	return 0;
}

void u64_table_free(struct u64_table *t)
{
	free(t->slots);
	t->slots = NULL;
	t->nslots = t->used = 0;
}
