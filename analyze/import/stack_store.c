/* stack_store.c - in-memory stacks of a capture being loaded (see stack_store.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perfcap_format.h"
#include "stack_store.h"

void stack_store_init(struct stack_store *s)
{
	memset(s, 0, sizeof(*s));
	hmap_init(&s->by_id);
}

void stack_store_free(struct stack_store *s)
{
	for (uint32_t i = 0; i < s->len; i++)
		free(s->entries[i].ips);
	free(s->entries);
	hmap_free(&s->by_id);
	memset(s, 0, sizeof(*s));
}

struct stack_entry *stack_store_find(const struct stack_store *s, uint32_t id)
{
	uint64_t *index = hmap_find(&s->by_id, id, 0);

	return index ? &s->entries[*index] : NULL;
}

static int stack_store_reserve(struct stack_store *s)
{
	if (s->len < s->cap)
		return 0;
	uint32_t new_cap = s->cap ? s->cap * 2 : 256;
	struct stack_entry *grown = realloc(s->entries, new_cap * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	s->entries = grown;
	s->cap = new_cap;
	return 0;
}

struct stack_entry *stack_store_get(struct stack_store *s, uint32_t id)
{
	int created = 0;
	uint64_t *index;

	if (stack_store_reserve(s) < 0)
		return NULL;
	index = hmap_upsert(&s->by_id, id, 0, s->len, &created);
	if (!index)
		return NULL;
	if (created) {
		struct stack_entry *e = &s->entries[s->len++];
		memset(e, 0, sizeof(*e));
		e->id = id;
		e->first_ts = UINT64_MAX;
	}
	return &s->entries[*index];
}

int stack_store_use(struct stack_store *s, uint32_t id, uint64_t ts, uint32_t pid,
		    uint64_t count)
{
	struct stack_entry *e = stack_store_get(s, id);

	if (!e)
		return -ENOMEM;
	if (ts < e->first_ts) {
		e->first_ts = ts;
		e->first_pid = pid;
	}
	e->nsamples += count;
	return 0;
}

int stack_store_define(struct stack_store *s, uint32_t id, uint32_t pid,
		       uint16_t kind, uint16_t flags, const void *ips, uint32_t nr)
{
	struct stack_entry *e = stack_store_get(s, id);

	if (!e)
		return -ENOMEM;
	if (e->present)
		return -EEXIST;
	if (nr > STACK_MAX_IPS) {
		nr = STACK_MAX_IPS;
		flags |= PC_STACK_F_TRUNCATED;
	}
	e->ips = malloc((nr ? nr : 1) * sizeof(uint64_t));
	if (!e->ips)
		return -ENOMEM;
	memcpy(e->ips, ips, nr * sizeof(uint64_t));
	e->pid = pid;
	e->kind = kind;
	e->flags = flags;
	e->nr = nr;
	e->present = 1;
	return 0;
}
