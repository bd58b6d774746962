/* stack_table.h - deduplication of stacks. Each distinct (kind, address
 * space, flags, ips) gets a stack id, 0, 1, 2 ... in order of first sight;
 * samples refer to stacks by id. The ips of all stacks live in one growing
 * arena, so interning an already known stack allocates nothing. */
#ifndef RECORD_STACK_TABLE_H
#define RECORD_STACK_TABLE_H

#include <stdbool.h>
#include <stdint.h>

struct stack_entry {
	uint64_t hash;
	uint64_t ips_off;   /* index of the first ip in the arena */
	uint32_t nr;
	uint32_t aspace;    /* address space of a user stack; 0 for kernel */
	uint32_t pid;       /* written into the STACK record; 0 for kernel */
	uint16_t kind;      /* enum pc_stack_kind */
	uint16_t flags;     /* PC_STACK_F_* */
};

/* The aspace of a stack forgotten with its address space (evict.c): out
 * of the index, no ips; its id stays taken. */
#define STACK_ASPACE_FORGOTTEN 0xfffffffeu

struct stack_table {
	struct stack_entry *entries; /* indexed by stack id */
	uint32_t n;
	uint32_t cap;
	uint32_t *slots;             /* hash index: stack id or UINT32_MAX */
	uint32_t nslots;
	uint64_t *ips;               /* arena */
	uint64_t nips;
	uint64_t ips_cap;
};

/* Returns the id of the stack, adding it if new (*is_new tells), or
 * PC_STACK_NONE when out of memory. */
uint32_t stack_table_intern(struct stack_table *t, uint16_t kind, uint32_t aspace,
			    uint32_t pid, uint16_t flags, const uint64_t *ips,
			    uint32_t nr, bool *is_new);

static inline const uint64_t *stack_table_ips(const struct stack_table *t, uint32_t id)
{
	return t->ips + t->entries[id].ips_off;
}

/* After entries were marked STACK_ASPACE_FORGOTTEN: rebuilds the index
 * without them and, with move_ips, moves the ips of the others down over
 * the ips no entry uses any more. */
void stack_table_compact(struct stack_table *t, bool move_ips);

void stack_table_free(struct stack_table *t);

#endif /* RECORD_STACK_TABLE_H */
