/* hashmap.h - an open-addressing hash table from a pair of 64-bit keys to
 * a 64-bit value. Used for stack ids, pids, the frame cache and sample
 * counts: everything the loader looks up per record. */
#ifndef ANALYZE_HASHMAP_H
#define ANALYZE_HASHMAP_H

#include <stddef.h>
#include <stdint.h>

struct hmap_slot {
	uint64_t a;
	uint64_t b;
	uint64_t value;
	uint64_t used;
};

struct hmap {
	struct hmap_slot *slots;
	size_t cap;                 /* power of two, or 0 before the first insert */
	size_t len;
};

void hmap_init(struct hmap *m);
void hmap_free(struct hmap *m);

/* Pointer to the value stored for (a, b), or NULL. Valid until the next
 * insert. */
uint64_t *hmap_find(const struct hmap *m, uint64_t a, uint64_t b);

/* Pointer to the value for (a, b), inserting initial if absent (then
 * *created = 1). NULL on out-of-memory. Valid until the next insert. */
uint64_t *hmap_upsert(struct hmap *m, uint64_t a, uint64_t b, uint64_t initial,
		      int *created);

/* Iteration: for (size_t i = 0; hmap_next(m, &i, &slot); ) ... */
int hmap_next(const struct hmap *m, size_t *pos, const struct hmap_slot **slot);

#endif /* ANALYZE_HASHMAP_H */
