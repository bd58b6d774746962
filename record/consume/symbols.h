/* symbols.h - the SYMBOLS chunk written at the end of a recording: for each
 * module that user stacks hit, its build-id, load segments and the symbols
 * covering the hit addresses; the same for the kernel from /proc/kallsyms.
 * The capture can then be symbolized on a machine without these files. */
#ifndef RECORD_SYMBOLS_H
#define RECORD_SYMBOLS_H

#include <stdbool.h>
#include <stdint.h>

#include "perfmap.h"
#include "processes.h"
#include "stack_table.h"
#include "output/writer_thread.h"

struct symbol_stats {
	uint64_t modules_hit;          /* modules with at least one hit user ip */
	uint64_t modules_unreadable;   /* of those, no symbols could be read */
	uint64_t modules_gopclntab;    /* of those, functions named from a Go pclntab */
	uint64_t gopclntab_refused;    /* of those, a Go pclntab refused as malformed */
	uint64_t user_ips_unmapped;    /* user ips outside every known mapping */
	uint64_t kernel_ips;           /* distinct kernel addresses looked up */
	uint64_t jit_ips;              /* distinct ips in anonymous/unmapped memory */
	uint64_t jit_ips_named;        /* of those, covered by a perf map entry */
	struct perfmap_stats perfmaps; /* /tmp/perf-PID.map files */
	bool     kernel_symbols_unavailable;
};

/* Locates the ips of user stack e (of address space e->aspace) in its
 * mappings: file offsets go to their module's hits, the others (JIT or
 * unmapped) to jit_hits; ips outside every mapping are counted in
 * *unmapped. Used at the end and when an address space is evicted. */
void symbols_collect_user_stack(struct process_table *pt, const struct stack_entry *e,
				const uint64_t *ips, struct addr_list *jit_hits,
				uint64_t *unmapped);

/* Resolves every stack's ips and submits SYMBOLS chunk(s). Returns 0 or
 * the writer's error. */
int symbols_write(struct writer_thread *wt, const struct stack_table *stacks,
		  struct process_table *pt, struct symbol_stats *st);

#endif /* RECORD_SYMBOLS_H */
