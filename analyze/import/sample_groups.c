/* sample_groups.c - per (thread, stack pair) sample aggregation in an
 * open-addressing table with linear probing (see sample_groups.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sample_groups.h"

static size_t group_slot(const struct sample_groups *g, uint32_t pid, uint32_t tid,
			 uint32_t ustack, uint32_t kstack)
{
	uint64_t x = (((uint64_t)pid << 32) | tid) ^
		     ((((uint64_t)ustack << 32) | kstack) * 0x9e3779b97f4a7c15ull);

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	return (size_t)x & (g->cap - 1);
}

static int same_key(const struct sample_group *s, uint32_t pid, uint32_t tid,
		    uint32_t ustack, uint32_t kstack)
{
	return s->pid == pid && s->tid == tid && s->ustack == ustack && s->kstack == kstack;
}

void sample_groups_init(struct sample_groups *g)
{
	memset(g, 0, sizeof(*g));
}

void sample_groups_free(struct sample_groups *g)
{
	free(g->slots);
	memset(g, 0, sizeof(*g));
}

static int grow(struct sample_groups *g)
{
	struct sample_groups bigger = { .cap = g->cap ? g->cap * 2 : 1024, .len = g->len };

	bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots));
	if (!bigger.slots)
		return -ENOMEM;
	for (size_t i = 0; i < g->cap; i++) {
		const struct sample_group *s = &g->slots[i];
		if (s->count == 0)
			continue;
		size_t j = group_slot(&bigger, s->pid, s->tid, s->ustack, s->kstack);
		while (bigger.slots[j].count != 0)
			j = (j + 1) & (bigger.cap - 1);
		bigger.slots[j] = *s;
	}
	free(g->slots);
	*g = bigger;
	return 0;
}

int sample_groups_add(struct sample_groups *g, uint32_t pid, uint32_t tid,
		      uint32_t ustack, uint32_t kstack, uint64_t ts)
{
	struct sample_group *s;

	if ((g->len + 1) * 2 > g->cap && grow(g) < 0)
		return -ENOMEM;
	for (size_t i = group_slot(g, pid, tid, ustack, kstack);; i = (i + 1) & (g->cap - 1)) {
		s = &g->slots[i];
		if (s->count == 0) {
			*s = (struct sample_group){ .pid = pid, .tid = tid, .ustack = ustack,
						    .kstack = kstack, .first_ts = ts };
			g->len++;
			break;
		}
		if (same_key(s, pid, tid, ustack, kstack))
			break;
	}
	s->count++;
	if (ts < s->first_ts)
		s->first_ts = ts;
	return 0;
}

const struct sample_group *sample_groups_next(const struct sample_groups *g, size_t *pos)
{
	while (*pos < g->cap) {
		const struct sample_group *s = &g->slots[(*pos)++];
		if (s->count != 0)
			return s;
	}
	return NULL;
}
