/* gopclntab_cfi.h - call frame information for a stripped Go binary, made
 * from its pclntab (format 1.6, UNWIND kind 1 with flag SYNTHESIZED).
 *
 * Go code has no .eh_frame, and `-ldflags=-s -w` (how Go programs ship)
 * drops the .debug_frame; a leaf function saves no frame pointer, so a
 * frame-pointer walk from it skips its caller. But the runtime unwinds its
 * own stacks, for tracebacks and the collector, from the pclntab that
 * stripping keeps: per function, the stack pointer's distance from the
 * entry's at every pc (pcsp). On x86-64 that is all a CFI row needs: CFA =
 * rsp + delta + 8, return address at CFA - 8. This file writes those rows
 * as a .debug_frame - one CIE, one FDE per function that covers a
 * candidate return address of the recording (the same words that prune
 * real tables: unwind_prune.h) - which the analyzer reads like any other.
 * The runtime's outermost frames (runtime.goexit, runtime.mstart,
 * runtime.rt0_go) mark the return address undefined, as Go's own DWARF
 * does, so a goroutine's stack ends there as complete.
 */
#ifndef PERFCAP_GOPCLNTAB_CFI_H
#define PERFCAP_GOPCLNTAB_CFI_H

#include <stddef.h>
#include <stdint.h>

#include "elf_module.h"
#include "unwind_table.h"

/* Fills t->table (kind PC_UNWIND_DEBUG_FRAME, flags PRUNED | SYNTHESIZED)
 * with FDEs for the functions of g that cover one of the n sorted ELF
 * virtual addresses; *nfdes says how many. Segments, build-id and path are
 * the caller's. 0, -ENOENT when no function covers a candidate (or none
 * has an SP-delta table), -ENOMEM. */
int pc_unwind_table_from_go(struct pc_unwind_table *t, const struct pc_go_pclntab *g,
			    const uint64_t *vaddrs, size_t n, uint32_t *nfdes);

#endif /* PERFCAP_GOPCLNTAB_CFI_H */
