/* unwind_prune.h - cuts a module's .eh_frame (or .debug_frame) down to
 * the entries the recorded stacks can need before it is embedded (format
 * 1.6, UNWIND flag PRUNED).
 *
 * An offline unwinder looks up call frame information for exactly two
 * kinds of pc: the ip of the saved registers and return addresses it reads
 * from the copied stack window. Both are words the recorder saw (the ip,
 * and every word of every copy that falls in a module's executable
 * mapping: record/consume/ustack_scan.c), so an FDE that covers none of
 * them is never consulted when that capture is unwound. Such FDEs are
 * replaced, run by run, by one filler FDE of the same total size that
 * covers no address (its initial location and range are zero, its
 * instructions DW_CFA_nop), and leave the .eh_frame_hdr search table.
 * Every kept byte stays at its offset, so pc-relative pointers, CIE
 * pointers and the header's remaining entries stay valid and any DWARF
 * reader (libdw, or a reader that walks the section in order) reads a
 * well-formed section; zstd turns the zeros into almost nothing.
 *
 * A 9 KB-per-sample reference point (perf --call-graph dwarf) is what this
 * is measured against: the whole .eh_frame of libc and of a server binary
 * is hundreds of KB per capture, most of it FDEs no sample touched.
 */
#ifndef PERFCAP_UNWIND_PRUNE_H
#define PERFCAP_UNWIND_PRUNE_H

#include <stddef.h>
#include <stdint.h>

#include "unwind_table.h"

struct pc_unwind_prune_stats {
	uint64_t fdes;            /* FDEs in the section */
	uint64_t kept;            /* of which kept */
	uint64_t blanked_bytes;   /* bytes turned into filler */
	uint64_t hdr_bytes_cut;   /* search table bytes dropped */
};

/* Keeps the FDEs of t (a .eh_frame or .debug_frame) that cover at least one of the
 * n ELF virtual addresses in vaddrs (sorted ascending). Returns 1 when t
 * was pruned, 0 when it is left whole (an entry or header
 * layout this code does not read: correctness first), -ENOMEM. An FDE
 * whose range cannot be decoded is kept. */
int pc_unwind_table_prune(struct pc_unwind_table *t, const uint64_t *vaddrs, size_t n,
			  struct pc_unwind_prune_stats *st);

#endif /* PERFCAP_UNWIND_PRUNE_H */
