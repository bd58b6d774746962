/* unwind_tables.h - the UNWIND records written at the end of a recording:
 * the unwind tables of every module mapped executable by a process whose
 * user stacks were copied (ustack_copy.h), once per build-id. Those
 * modules also get all their symbols in the SYMBOLS chunk, since the
 * analyzer finds their return addresses only by unwinding. */
#ifndef RECORD_UNWIND_TABLES_H
#define RECORD_UNWIND_TABLES_H

#include <stdint.h>

#include "output/chunk_buffer.h"
#include "output/writer_thread.h"
#include "processes.h"

struct unwind_table_stats {
	uint64_t modules;         /* modules with a table written */
	uint64_t duplicates;      /* same build-id as one already written */
	uint64_t no_table;        /* no .eh_frame nor .debug_frame */
	uint64_t unreadable;      /* not open, not ELF, too large */
	uint64_t bytes;           /* table bytes written (blanked ones included) */
	uint64_t pruned;          /* tables cut to the FDEs candidates need */
	uint64_t go_synthesized;  /* .debug_frames made from a Go pclntab */
	uint64_t fdes;            /* FDEs in the pruned and unpruned .eh_frames */
	uint64_t fdes_kept;
	uint64_t blanked_bytes;   /* FDE bytes turned into filler */
};

/* Writes the UNWIND records (one SYMBOLS chunk) and marks the modules
 * (all_symbols). Call before symbols_write. 0 or the writer's error. */
int unwind_tables_write(struct writer_thread *wt, struct process_table *pt);

/* The counters as STATS keys (unwind.*), when any module was considered. */
int unwind_tables_stats_kv(struct chunk_buffer *kv);

#endif /* RECORD_UNWIND_TABLES_H */
