/* map_index.c - per-process mapping lookup by address and time (see map_index.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "map_index.h"

void map_index_init(struct map_index *mi)
{
	memset(mi, 0, sizeof(*mi));
	hmap_init(&mi->by_pid);
}

void map_index_free(struct map_index *mi)
{
	for (uint32_t i = 0; i < mi->len; i++)
		free(mi->maps[i].path);
	for (uint32_t i = 0; i < mi->nlists; i++)
		free(mi->lists[i].idx);
	free(mi->maps);
	free(mi->lists);
	hmap_free(&mi->by_pid);
	memset(mi, 0, sizeof(*mi));
}

static int grow_array(void **array, uint32_t *cap, size_t elem_size)
{
	uint32_t new_cap = *cap ? *cap * 2 : 16;
	void *grown = realloc(*array, (size_t)new_cap * elem_size);

	if (!grown)
		return -ENOMEM;
	*array = grown;
	*cap = new_cap;
	return 0;
}

static struct pid_maps *pid_list(struct map_index *mi, uint32_t pid)
{
	int created = 0;
	uint64_t *slot;

	if (mi->nlists == mi->lists_cap &&
	    grow_array((void **)&mi->lists, &mi->lists_cap, sizeof(*mi->lists)) < 0)
		return NULL;
	slot = hmap_upsert(&mi->by_pid, pid, 0, mi->nlists, &created);
	if (!slot)
		return NULL;
	if (created)
		memset(&mi->lists[mi->nlists++], 0, sizeof(*mi->lists));
	return &mi->lists[*slot];
}

int64_t map_index_add(struct map_index *mi, const struct mapping *m)
{
	struct pid_maps *list;
	char *path;

	if (mi->len == mi->cap &&
	    grow_array((void **)&mi->maps, &mi->cap, sizeof(*mi->maps)) < 0)
		return -ENOMEM;
	list = pid_list(mi, m->pid);
	if (!list)
		return -ENOMEM;
	if (list->len == list->cap &&
	    grow_array((void **)&list->idx, &list->cap, sizeof(*list->idx)) < 0)
		return -ENOMEM;
	path = strdup(m->path ? m->path : "");
	if (!path)
		return -ENOMEM;
	mi->maps[mi->len] = *m;
	mi->maps[mi->len].path = path;
	list->idx[list->len++] = mi->len;
	return mi->len++;
}

static const struct map_index *sort_context;

static int compare_by_start(const void *pa, const void *pb)
{
	const struct mapping *a = &sort_context->maps[*(const uint32_t *)pa];
	const struct mapping *b = &sort_context->maps[*(const uint32_t *)pb];

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return *(const uint32_t *)pa < *(const uint32_t *)pb ? -1 : 1;
}

void map_index_finish(struct map_index *mi)
{
	sort_context = mi;
	for (uint32_t i = 0; i < mi->nlists; i++)
		qsort(mi->lists[i].idx, mi->lists[i].len, sizeof(uint32_t), compare_by_start);
	sort_context = NULL;
}

/* Is candidate a better match than best for a lookup at ts? Prefer maps
 * read at or before ts (latest first), then those read after (earliest). */
static int better_match(const struct mapping *candidate, const struct mapping *best,
			uint64_t ts)
{
	int cand_before = candidate->ts <= ts;
	int best_before = best->ts <= ts;

	if (cand_before != best_before)
		return cand_before;
	if (cand_before)
		return candidate->ts > best->ts;
	return candidate->ts < best->ts;
}

int64_t map_index_lookup(const struct map_index *mi, uint32_t pid, uint64_t addr,
			 uint64_t ts)
{
	const uint64_t *slot = hmap_find(&mi->by_pid, pid, 0);
	int64_t best = -1;

	if (!slot)
		return -1;
	const struct pid_maps *list = &mi->lists[*slot];
	for (uint32_t i = 0; i < list->len; i++) {
		const struct mapping *m = &mi->maps[list->idx[i]];
		if (m->start > addr)
			break;
		if (addr >= m->end)
			continue;
		if (best < 0 || better_match(m, &mi->maps[best], ts))
			best = list->idx[i];
	}
	return best;
}
