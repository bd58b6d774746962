/* stack_store.h - the capture's deduplicated stacks kept in memory while
 * loading: their ips (needed to resolve frames once every module record
 * has been read), how many samples use them and when they were first used. */
#ifndef ANALYZE_STACK_STORE_H
#define ANALYZE_STACK_STORE_H

#include <stdint.h>

#include "util/hashmap.h"

/* Deepest stack kept; deeper ones are cut and marked truncated. */
#define STACK_MAX_IPS 4096

struct stack_entry {
	uint32_t  id;
	uint32_t  pid;            /* address space (user stacks) */
	uint32_t  first_pid;      /* pid of the first sample using it */
	uint16_t  kind;           /* enum pc_stack_kind */
	uint16_t  flags;          /* PC_STACK_F_* */
	uint32_t  nr;
	uint64_t *ips;            /* innermost first */
	uint64_t  first_ts;       /* earliest sample using it; UINT64_MAX if none */
	uint64_t  nsamples;
	int       present;        /* a STACK record defined it */
	/* filled by resolve.c */
	uint32_t  nframes;
	uint32_t  nunresolved;
	uint32_t  njunk;          /* return addresses in no mapping, not in frames */
	int       probably_truncated;
};

struct stack_store {
	struct stack_entry *entries;
	uint32_t len;
	uint32_t cap;
	struct hmap by_id;        /* id -> index in entries */
};

void stack_store_init(struct stack_store *s);
void stack_store_free(struct stack_store *s);

/* The entry for id, created empty (not present) if never seen. NULL on
 * out-of-memory. Valid until the next call that creates an entry. */
struct stack_entry *stack_store_get(struct stack_store *s, uint32_t id);

/* The entry for id or NULL if it was never seen. */
struct stack_entry *stack_store_find(const struct stack_store *s, uint32_t id);

/* Records that count samples of pid, the first at ts, use stack id.
 * 0 or -ENOMEM. */
int stack_store_use(struct stack_store *s, uint32_t id, uint64_t ts, uint32_t pid,
		    uint64_t count);

/* Defines a stack from its record fields: ips points to nr little-endian
 * u64 (any alignment), copied and cut to STACK_MAX_IPS. 0, -EEXIST if id
 * was already defined, -ENOMEM. */
int stack_store_define(struct stack_store *s, uint32_t id, uint32_t pid,
		       uint16_t kind, uint16_t flags, const void *ips, uint32_t nr);

#endif /* ANALYZE_STACK_STORE_H */
