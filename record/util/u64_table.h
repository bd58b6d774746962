/* u64_table.h - an open-addressing hash table from a u64 key to a u32
 * value (an id). Grows by doubling; never allocates on lookup. Used to
 * remember which capture stack id a kernel stack map id became, and to
 * index processes and threads. */
#ifndef RECORD_U64_TABLE_H
#define RECORD_U64_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#define U64_TABLE_EMPTY 0xffffffffu /* a value that can not be stored */

struct u64_table_slot {
	uint64_t key;
	uint32_t value; /* U64_TABLE_EMPTY: free slot */
	uint32_t reserved;
};

struct u64_table {
	struct u64_table_slot *slots;
	uint32_t nslots; /* power of two */
	uint32_t used;
};

/* Returns the value stored for key, or U64_TABLE_EMPTY. */
uint32_t u64_table_get(const struct u64_table *t, uint64_t key);
/* Inserts or replaces. value must not be U64_TABLE_EMPTY. 0 or -ENOMEM. */
int u64_table_put(struct u64_table *t, uint64_t key, uint32_t value);
/* Keeps only the entries for which keep() is true (the slots are rebuilt,
 * their number unchanged). 0 or -ENOMEM (then the table is unchanged). */
int u64_table_filter(struct u64_table *t, bool (*keep)(uint64_t key, uint32_t value, void *ctx),
		     void *ctx);
void u64_table_free(struct u64_table *t);

#endif /* RECORD_U64_TABLE_H */
