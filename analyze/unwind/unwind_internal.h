/* unwind_internal.h - what the unwinder's files share: the register file of
 * one frame and the DWARF expression subset the CFI rules use. */
#ifndef ANALYZE_UNWIND_INTERNAL_H
#define ANALYZE_UNWIND_INTERNAL_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdint.h>

#include "unwind.h"

/* x86-64 DWARF register numbers: 0-15 general registers, 16 the return
 * address (rip). */
#define DWREG_RBX 3
#define DWREG_RBP 6
#define DWREG_RSP 7
#define DWREG_RA  16
#define DWREG_NR  17

struct regfile {
	uint64_t v[DWREG_NR];
	uint32_t known;           /* bit r: v[r] is known */
};

static inline bool reg_known(const struct regfile *r, unsigned reg)
{
	return reg < DWREG_NR && (r->known >> reg & 1);
}

/* Reads 8 bytes at addr from the window. false outside it. */
/* 0 if a module's .eh_frame entries and instructions are safe to give
 * libdw (cfi_check.c), else -1 with *why; *use_hdr says whether its
 * .eh_frame_hdr points only at checked entries. */
int cfi_check(const struct pc_unwind_table *t, int *use_hdr, const char **why);

bool window_read(const struct unwind_memory *mem, uint64_t addr, uint64_t *out);

/* Result of evaluating an expression. */
enum expr_status { EXPR_OK = 0, EXPR_WINDOW, EXPR_BAD };

/* Evaluates ops with regs and cfa (DW_OP_call_frame_cfa). *is_value is set
 * when the expression ends with DW_OP_stack_value (a value, not an
 * address). At most 64 operations, a 16-deep stack. */
enum expr_status expr_eval(const Dwarf_Op *ops, size_t nops, const struct regfile *regs,
			   uint64_t cfa, bool has_cfa, const struct unwind_memory *mem,
			   uint64_t *out, bool *is_value);

struct unwind_cfi {
	void *image;              /* the in-memory ELF (cfi_image.c) */
	size_t image_len;
	void *elf;                /* Elf * */
	Dwarf_CFI *cfi;
	Dwarf *dwarf;             /* a .debug_frame's: owns cfi */
	struct unwind_cfi *next;  /* asked where this one has no row (owned) */
	int uses_header;          /* .eh_frame_hdr in the image */
};

#endif /* ANALYZE_UNWIND_INTERNAL_H */
