/* stack_table.c - deduplication of stacks: an open-addressing hash table of
 * stack ids over an arena of ips. Stack ids are indexes into `entries`, so
 * they are dense, start at 0, and never collide with PC_STACK_NONE. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perfcap_format.h"
#include "stack_table.h"
#include "util/util.h"

#define FREE_SLOT 0xffffffffu

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v;
	h *= 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 31);
}

static uint64_t hash_stack(uint16_t kind, uint32_t aspace, uint16_t flags,
			   const uint64_t *ips, uint32_t nr)
{
	uint64_t h = mix(0x6a09e667f3bcc908ull, (uint64_t)kind << 48 | (uint64_t)flags << 32 | aspace);

	h = mix(h, nr);
	for (uint32_t i = 0; i < nr; i++)
		h = mix(h, ips[i]);
	return h;
}

static bool same_stack(const struct stack_table *t, const struct stack_entry *e,
		       uint64_t hash, uint16_t kind, uint32_t aspace, uint16_t flags,
		       const uint64_t *ips, uint32_t nr)
{
	return e->hash == hash && e->kind == kind && e->aspace == aspace &&
	       e->flags == flags && e->nr == nr &&
	       memcmp(t->ips + e->ips_off, ips, nr * sizeof(*ips)) == 0;
}

static void index_entries(struct stack_table *t, uint32_t *slots, uint32_t nslots)
{
	for (uint32_t i = 0; i < nslots; i++)
		slots[i] = FREE_SLOT;
	for (uint32_t id = 0; id < t->n; id++) {
		uint32_t i = (uint32_t)t->entries[id].hash & (nslots - 1);

		if (t->entries[id].aspace == STACK_ASPACE_FORGOTTEN)
			continue;
		while (slots[i] != FREE_SLOT)
			i = (i + 1) & (nslots - 1);
		slots[i] = id;
	}
}

static int grow_slots(struct stack_table *t)
{
	uint32_t nslots = t->nslots ? t->nslots * 2 : 1024;
	uint32_t *slots = malloc(nslots * sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	index_entries(t, slots, nslots);
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	return 0;
}

void stack_table_compact(struct stack_table *t, bool move_ips)
{
	uint64_t nips = 0;

	for (uint32_t id = 0; id < t->n; id++) {
		struct stack_entry *e = &t->entries[id];

		if (e->aspace == STACK_ASPACE_FORGOTTEN) {
			e->nr = 0;
			e->ips_off = 0;
			continue;
		}
		if (!move_ips)
			continue;
		memmove(t->ips + nips, t->ips + e->ips_off, e->nr * sizeof(*t->ips));
		e->ips_off = nips;
		nips += e->nr;
	}
	if (move_ips)
		t->nips = nips;
	if (t->nslots)
		index_entries(t, t->slots, t->nslots);
}

static int reserve_ips(struct stack_table *t, uint32_t nr)
{
	uint64_t cap = t->ips_cap ? t->ips_cap : 4096;
	uint64_t *ips;

	if (t->nips + nr <= t->ips_cap)
		return 0;
	while (cap < t->nips + nr)
		cap *= 2;
	ips = realloc(t->ips, cap * sizeof(*ips));
	if (!ips)
		return -ENOMEM;
	t->ips = ips;
	t->ips_cap = cap;
	return 0;
}

static uint32_t add_entry(struct stack_table *t, uint32_t slot, uint64_t hash,
			  uint16_t kind, uint32_t aspace, uint32_t pid, uint16_t flags,
			  const uint64_t *ips, uint32_t nr)
{
	struct stack_entry *entries, *e;

	if (t->n == PC_STACK_NONE - 1 || reserve_ips(t, nr))
		return PC_STACK_NONE;
	entries = array_reserve(t->entries, &t->cap, t->n + 1, sizeof(*entries));
	if (!entries)
		return PC_STACK_NONE;
	t->entries = entries;
	e = &t->entries[t->n];
	e->hash = hash;
	e->ips_off = t->nips;
	e->nr = nr;
	e->aspace = aspace;
	e->pid = pid;
	e->kind = kind;
	e->flags = flags;
	memcpy(t->ips + t->nips, ips, nr * sizeof(*ips));
	t->nips += nr;
	t->slots[slot] = t->n;
	return t->n++;
}

uint32_t stack_table_intern(struct stack_table *t, uint16_t kind, uint32_t aspace,
			    uint32_t pid, uint16_t flags, const uint64_t *ips,
			    uint32_t nr, bool *is_new)
{
	uint64_t hash = hash_stack(kind, aspace, flags, ips, nr);
	uint32_t i;

	*is_new = false;
	if ((t->n + 1) * 2 > t->nslots && grow_slots(t))
		return PC_STACK_NONE;
	for (i = (uint32_t)hash & (t->nslots - 1); t->slots[i] != FREE_SLOT;
	     i = (i + 1) & (t->nslots - 1)) {
		if (same_stack(t, &t->entries[t->slots[i]], hash, kind, aspace, flags, ips, nr))
			return t->slots[i];
	}
	i = add_entry(t, i, hash, kind, aspace, pid, flags, ips, nr);
	*is_new = i != PC_STACK_NONE;
	return i;
}

void stack_table_free(struct stack_table *t)
{
	free(t->entries);
	free(t->slots);
	free(t->ips);
	memset(t, 0, sizeof(*t));
}
