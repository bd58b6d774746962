/* unwind_table.h - a module's unwind tables (.eh_frame and .eh_frame_hdr,
 * or .debug_frame) and their capture form, PC_REC_UNWIND (format 1.2).
 *
 * The recorder reads them from each module mapped by a process whose user
 * stacks were copied; the analyzer reads the records back and unwinds the
 * copies with them (analyze/unwind/), so a capture unwinds on a machine
 * without the binaries.
 */
#ifndef PERFCAP_UNWIND_TABLE_H
#define PERFCAP_UNWIND_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "perfcap_format.h"

/* Largest table kept: bigger modules are counted and skipped. */
#define PC_UNWIND_TABLE_MAX (64u << 20)

struct pc_unwind_table {
	uint16_t kind;                 /* enum pc_unwind_kind */
	uint16_t flags;                /* PC_UNWIND_F_* (the record's h.flags) */
	uint8_t  build_id_len;
	uint8_t  build_id[PC_BUILD_ID_MAX];
	struct pc_segment *segs;       /* PT_LOAD segments */
	uint32_t nsegs;
	uint64_t table_addr;           /* sh_addr of the table */
	uint64_t hdr_addr;             /* sh_addr of .eh_frame_hdr, 0 if none */
	uint8_t *table;                /* section bytes */
	uint32_t table_len;
	uint8_t *hdr;
	uint32_t hdr_len;
	char    *path;                 /* NUL-terminated, may be "" */
};

/* Reads the unwind tables and load segments of an open ELF file.
 * Returns 0, -ENOENT when the file has no unwind table, -E2BIG past
 * PC_UNWIND_TABLE_MAX, or another -errno; why gets a one-line reason. */
int pc_unwind_table_load_fd(struct pc_unwind_table *t, int fd, const char *path,
			    char *why, size_t len);

/* For a Go binary without .eh_frame or .debug_frame (stripped): a
 * .debug_frame made from its pclntab for the functions covering the n file
 * offsets (common/gopclntab_cfi.h). 0, -ENOENT (not Go, or no function
 * covers one), or another -errno; *nfdes gets the FDEs written. */
int pc_unwind_table_load_go_fd(struct pc_unwind_table *t, int fd, const char *path,
			       const uint64_t *offsets, size_t n, uint32_t *nfdes,
			       char *why, size_t len);

/* Appends a PC_REC_UNWIND record. 0 or -ENOMEM. */
int pc_buf_add_unwind(struct pc_buf *b, const struct pc_unwind_table *t);

/* Parses a PC_REC_UNWIND record into t (which owns copies). 0, or -EINVAL
 * for a malformed record, or -ENOMEM. */
int pc_unwind_table_from_rec(struct pc_unwind_table *t, const struct pc_rec *rec);

/* Translates a file offset into an ELF virtual address through the load
 * segments. 0, or -ENOENT if no segment covers it. */
int pc_unwind_offset_to_vaddr(const struct pc_unwind_table *t, uint64_t offset,
			      uint64_t *vaddr);

void pc_unwind_table_free(struct pc_unwind_table *t);

#endif /* PERFCAP_UNWIND_TABLE_H */
