/* ustack_scan.h - which modules a user stack copy can return into: every
 * 8-byte word of the copy (and its ip) that falls inside a file-backed
 * executable mapping of the process is a candidate return address. Its
 * module gets its unwind table embedded (unwind_tables.c) and the
 * candidate becomes a symbol hit (symbols.c), so a capture carries tables
 * and symbols only for the modules stacks actually pass through, not for
 * every library a process maps. A superset: a code pointer that is not a
 * return address costs a symbol, never a missing frame. */
#ifndef RECORD_USTACK_SCAN_H
#define RECORD_USTACK_SCAN_H

#include <stdbool.h>
#include <stdint.h>

#include "output/chunk_buffer.h"
#include "processes.h"

/* Scans one copy of pid taken at ts (ip, then size bytes of stack). An ip
 * outside the known mappings (a library loaded since they were read) has
 * them re-read first, as a frame-pointer stack's ips would. A copy of a
 * pid whose mappings are not known yet (its first copy may come before its
 * first sample) is kept and scanned later (ustack_scan_retry), within a
 * budget; past it, counted as unscanned. */
void ustack_scan(struct process_table *pt, uint32_t pid, uint64_t ts, uint64_t ip,
		 const uint8_t *data, uint32_t size);

/* Scans the kept copies whose process is now known. Called by
 * ustack_scan when the process table has grown, and at the end before the
 * unwind tables are written; copies still unknown stay counted as
 * unscanned. */
void ustack_scan_retry(struct process_table *pt);

/* Empties the cache of words already noted (ustack_scan.c): called when
 * address spaces or modules were forgotten, whose slots may come back. */
void ustack_scan_forget_words(void);

/* Whether some copy may return into module (a module registry index). */
bool ustack_scan_module_hit(uint32_t module);

/* STATS ustack.scanned, ustack.unscanned, ustack.deferred, ustack.code_words. 0 or -ENOMEM. */
int ustack_scan_stats_kv(struct chunk_buffer *kv);

void ustack_scan_free(void);

#endif /* RECORD_USTACK_SCAN_H */
