/* u32_table.c - an open-addressing hash table from a u32 key (pid, tid) to a
 * u32 value, with linear probing. Entries are never removed: the recorder
 * only learns about more processes and threads as it runs. */
#include <errno.h>
#include <stdlib.h>

#include "u32_table.h"

static uint32_t slot_of(uint32_t key, uint32_t nslots)
{
	/* Fibonacci hashing spreads consecutive pids over the table. */
	return (uint32_t)((key * 2654435769u) & (nslots - 1));
}

uint32_t u32_table_get(const struct u32_table *t, uint32_t key)
{
	if (!t->nslots)
		return U32_TABLE_EMPTY;
	for (uint32_t i = slot_of(key, t->nslots);; i = (i + 1) & (t->nslots - 1)) {
		const struct u32_table_slot *s = &t->slots[i];

		if (s->value == U32_TABLE_EMPTY)
			return U32_TABLE_EMPTY;
		if (s->key == key)
			return s->value;
	}
}

static void insert_slot(struct u32_table_slot *slots, uint32_t nslots,
			uint32_t key, uint32_t value, uint32_t *used)
{
	for (uint32_t i = slot_of(key, nslots);; i = (i + 1) & (nslots - 1)) {
		if (slots[i].value == U32_TABLE_EMPTY) {
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

static int grow(struct u32_table *t)
{
	uint32_t nslots = t->nslots ? t->nslots * 2 : 256;
	struct u32_table_slot *slots = malloc(sizeof(*slots) * nslots);
	uint32_t used = 0;

	if (!slots)
		return -ENOMEM;
	for (uint32_t i = 0; i < nslots; i++)
		slots[i].value = U32_TABLE_EMPTY;
	for (uint32_t i = 0; i < t->nslots; i++) {
		if (t->slots[i].value != U32_TABLE_EMPTY)
			insert_slot(slots, nslots, t->slots[i].key, t->slots[i].value, &used);
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	t->used = used;
	return 0;
}

int u32_table_put(struct u32_table *t, uint32_t key, uint32_t value)
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

void u32_table_free(struct u32_table *t)
{
	free(t->slots);
	t->slots = NULL;
	t->nslots = t->used = 0;
}
