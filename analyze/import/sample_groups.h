/* sample_groups.h - samples aggregated while loading by (pid, tid, user
 * stack, kernel stack): how many and the earliest timestamp. This becomes
 * the sample_counts table, tells each stack when it was first used (to pick
 * the memory map current at that time) and feeds the quality counters.
 *
 * An open-addressing table whose slots are the groups themselves, so
 * counting a sample touches one cache line: this runs once per sample. */
#ifndef ANALYZE_SAMPLE_GROUPS_H
#define ANALYZE_SAMPLE_GROUPS_H

#include <stddef.h>
#include <stdint.h>

struct sample_group {
	uint32_t pid;
	uint32_t tid;
	uint32_t ustack;          /* or PC_STACK_NONE */
	uint32_t kstack;          /* or PC_STACK_NONE */
	uint64_t count;           /* 0 = empty slot */
	uint64_t first_ts;
};

struct sample_groups {
	struct sample_group *slots;
	size_t cap;               /* power of two, or 0 */
	size_t len;
};

void sample_groups_init(struct sample_groups *g);
void sample_groups_free(struct sample_groups *g);

/* Counts one sample. 0 or -ENOMEM. */
int sample_groups_add(struct sample_groups *g, uint32_t pid, uint32_t tid,
		      uint32_t ustack, uint32_t kstack, uint64_t ts);

/* Iteration: for (size_t pos = 0; (grp = sample_groups_next(g, &pos));) */
const struct sample_group *sample_groups_next(const struct sample_groups *g, size_t *pos);

#endif /* ANALYZE_SAMPLE_GROUPS_H */
