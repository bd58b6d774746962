/* symbolize_cache.c - the symbolizer's string-keyed hash map (string
 * interning, module-state and embedded-module indexes) and its result cache:
 * (module id, offset) -> frames, in an open-addressing hash table.
 */

#include "symbolize_internal.h"

static uint64_t hash_string(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	while (*s != '\0') {
		h ^= (uint8_t)*s++;
		h *= 0x100000001b3ull;
	}
	return h;
}

static struct str_slot *str_map_find_slot(const struct str_map *map,
					  const char *key, uint64_t hash)
{
	size_t mask = map->cap - 1, i = hash & mask;

	while (map->slots[i].key != NULL) {
		if (map->slots[i].hash == hash && strcmp(map->slots[i].key, key) == 0)
			break;
		i = (i + 1) & mask;
	}
	return &map->slots[i];
}

void *str_map_get(const struct str_map *map, const char *key)
{
	struct str_slot *slot;

	if (map->cap == 0)
		return NULL;
	slot = str_map_find_slot(map, key, hash_string(key));
	return slot->key != NULL ? slot->value : NULL;
}

static int str_map_grow(struct str_map *map)
{
	size_t new_cap = map->cap ? map->cap * 2 : 64, i;
	struct str_map bigger = { calloc(new_cap, sizeof(struct str_slot)),
				  new_cap, map->count };

	if (bigger.slots == NULL)
		return -ENOMEM;
	for (i = 0; i < map->cap; i++) {
		struct str_slot *old = &map->slots[i];

		if (old->key != NULL)
			*str_map_find_slot(&bigger, old->key, old->hash) = *old;
	}
	free(map->slots);
	*map = bigger;
	return 0;
}

/* The slot of key, inserted (value NULL) if missing. NULL if out of memory. */
struct str_slot *str_map_upsert(struct str_map *map, const char *key)
{
	uint64_t hash = hash_string(key);
	struct str_slot *slot;

	if ((map->count + 1) * 2 > map->cap && str_map_grow(map) != 0)
		return NULL;
	slot = str_map_find_slot(map, key, hash);
	if (slot->key != NULL)
		return slot;
	slot->key = strdup(key);
	if (slot->key == NULL)
		return NULL;
	slot->hash = hash;
	slot->value = NULL;
	map->count++;
	return slot;
}

/* A stable copy of s, shared by all equal strings. */
const char *str_map_intern(struct str_map *map, const char *s)
{
	struct str_slot *slot = str_map_upsert(map, s);

	return slot != NULL ? slot->key : NULL;
}

void str_map_free(struct str_map *map)
{
	size_t i;

	for (i = 0; i < map->cap; i++)
		free(map->slots[i].key);
	free(map->slots);
	memset(map, 0, sizeof(*map));
}

static uint64_t hash_location(uint32_t module_id, uint64_t offset)
{
	uint64_t h = offset ^ ((uint64_t)module_id * 0x9e3779b97f4a7c15ull);

	h ^= h >> 33; /* murmur3 finalizer */
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

static struct cache_slot *cache_find_slot(const struct result_cache *c,
					  uint32_t module_id, uint64_t offset)
{
	size_t mask = c->cap - 1, i = hash_location(module_id, offset) & mask;

	while (c->slots[i].used) {
		if (c->slots[i].module_id == module_id &&
		    c->slots[i].offset == offset)
			break;
		i = (i + 1) & mask;
	}
	return &c->slots[i];
}

const struct cache_slot *cache_get(const struct result_cache *c,
				   uint32_t module_id, uint64_t offset)
{
	const struct cache_slot *slot;

	if (c->cap == 0)
		return NULL;
	slot = cache_find_slot(c, module_id, offset);
	return slot->used ? slot : NULL;
}

static int cache_grow(struct result_cache *c)
{
	size_t new_cap = c->cap ? c->cap * 2 : 1024, i;
	struct cache_slot *old = c->slots;
	size_t old_cap = c->cap;

	c->slots = calloc(new_cap, sizeof(*c->slots));
	if (c->slots == NULL) {
		c->slots = old;
		return -ENOMEM;
	}
	c->cap = new_cap;
	for (i = 0; i < old_cap; i++) {
		if (old[i].used)
			*cache_find_slot(c, old[i].module_id, old[i].offset) = old[i];
	}
	free(old);
	return 0;
}

static int cache_reserve_frames(struct result_cache *c, size_t n)
{
	size_t new_cap = c->frames_cap ? c->frames_cap : 1024;
	struct sym_frame *frames;

	if (c->nframes + n <= c->frames_cap)
		return 0;
	while (new_cap < c->nframes + n)
		new_cap *= 2;
	if (new_cap > UINT32_MAX)
		return -ENOMEM;
	frames = realloc(c->frames, new_cap * sizeof(*frames));
	if (frames == NULL)
		return -ENOMEM;
	c->frames = frames;
	c->frames_cap = new_cap;
	return 0;
}

int cache_put(struct result_cache *c, uint32_t module_id,
	      uint64_t offset, const struct sym_frame *frames, int n)
{
	struct cache_slot *slot;

	if ((c->count + 1) * 2 > c->cap && cache_grow(c) != 0)
		return -ENOMEM;
	if (cache_reserve_frames(c, (size_t)n) != 0)
		return -ENOMEM;
	slot = cache_find_slot(c, module_id, offset);
	slot->used = 1;
	slot->module_id = module_id;
	slot->offset = offset;
	slot->first = (uint32_t)c->nframes;
	slot->nframes = (uint32_t)n;
	memcpy(c->frames + c->nframes, frames, (size_t)n * sizeof(*frames));
	c->nframes += (size_t)n;
	c->count++;
	return 0;
}

void cache_clear(struct result_cache *c)
{
	if (c->slots != NULL)
		memset(c->slots, 0, c->cap * sizeof(*c->slots));
	c->count = 0;
	c->nframes = 0;
}

void cache_free(struct result_cache *c)
{
	free(c->slots);
	free(c->frames);
	memset(c, 0, sizeof(*c));
}
