/* threads.c - the correlator's per-thread records (see threads.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "threads.h"

void threads_init(struct thread_table *tt)
{
	memset(tt, 0, sizeof(*tt));
	hmap_init(&tt->by_tid);
}

void threads_free(struct thread_table *tt)
{
	for (uint32_t i = 0; i < tt->len; i++) {
		free(tt->v[i]->waits);
		free(tt->v[i]);
	}
	free(tt->v);
	hmap_free(&tt->by_tid);
	memset(tt, 0, sizeof(*tt));
}

static struct thread *add_thread(struct thread_table *tt, uint32_t tid)
{
	struct thread *t;

	if (tt->len == tt->cap) {
		uint32_t new_cap = tt->cap ? tt->cap * 2 : 256;
		struct thread **grown = realloc(tt->v, new_cap * sizeof(*grown));
		if (!grown)
			return NULL;
		tt->v = grown;
		tt->cap = new_cap;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = tid;
	t->cpu = -1;
	tt->v[tt->len++] = t;
	return t;
}

struct thread *threads_get(struct thread_table *tt, uint32_t tid)
{
	int created = 0;
	uint64_t *index = hmap_upsert(&tt->by_tid, tid, 0, tt->len, &created);
	struct thread *t;

	if (!index)
		return NULL;
	if (!created)
		return tt->v[*index];
	t = add_thread(tt, tid);
	if (!t)   /* out of memory ends the import: the slot is never read again */
		return NULL;
	return t;
}

int thread_push_wait(struct thread *t, const struct pending_wait *w)
{
	if (t->nwaits == t->waits_cap) {
		uint32_t new_cap = t->waits_cap ? t->waits_cap * 2 : 4;
		struct pending_wait *grown = realloc(t->waits, new_cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		t->waits = grown;
		t->waits_cap = new_cap;
	}
	t->waits[t->nwaits++] = *w;
	return 0;
}

void thread_drop_waits(struct thread *t, uint32_t n)
{
	if (n >= t->nwaits) {
		t->nwaits = 0;
		return;
	}
	memmove(t->waits, t->waits + n, (t->nwaits - n) * sizeof(*t->waits));
	t->nwaits -= n;
}
