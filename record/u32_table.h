/* u32_table.h - an open-addressing hash table from a u32 key (pid, tid) to a
 * u32 value (an index into the caller's array). Grows by doubling; never
 * allocates on lookup. */
#ifndef RECORD_U32_TABLE_H
#define RECORD_U32_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#define U32_TABLE_EMPTY 0xffffffffu /* a value that can not be stored */

struct u32_table_slot {
	uint32_t key;
	uint32_t value; /* U32_TABLE_EMPTY: free slot */
};

struct u32_table {
	struct u32_table_slot *slots;
	uint32_t nslots; /* power of two */
	uint32_t used;
};

/* Returns the value stored for key, or U32_TABLE_EMPTY. */
uint32_t u32_table_get(const struct u32_table *t, uint32_t key);
/* Inserts or replaces. value must not be U32_TABLE_EMPTY. 0 or -ENOMEM. */
int u32_table_put(struct u32_table *t, uint32_t key, uint32_t value);
void u32_table_free(struct u32_table *t);

#endif /* RECORD_U32_TABLE_H */
