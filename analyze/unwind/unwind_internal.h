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

struct hmap;

struct unwind_cfi {
	void *image;              /* the in-memory ELF (cfi_image.c) */
	size_t image_len;
	void *elf;                /* Elf * */
	Dwarf_CFI *cfi;
	Dwarf *dwarf;             /* a .debug_frame's: owns cfi */
	struct unwind_cfi *next;  /* asked where this one has no row (owned) */
	int uses_header;          /* .eh_frame_hdr in the image */
	struct hmap *rows;        /* the chain's rows by pc (frame_rows.c); NULL: none yet */
};

/* ---- compiled CFI rows (frame_rows.c) ---- */

/* How a rule gives its result (an address to read, or a value). */
enum frame_rule_kind {
	RULE_BAD = 0,       /* libdw refused it */
	RULE_UNDEFINED,     /* register rules only */
	RULE_SAME,          /* register rules only */
	RULE_REG_OFFSET,    /* reg + off, an address (the CFA: its value) */
	RULE_REG_VALUE,     /* the value of reg (DW_CFA_register) */
	RULE_AT_CFA,        /* CFA + off, an address */
	RULE_CFA_VALUE,     /* CFA + off, a value */
	RULE_EXPR,          /* ops, evaluated by expr_eval */
};

struct frame_rule {
	enum frame_rule_kind kind;
	unsigned reg;
	uint64_t off;
	const Dwarf_Op *ops;
	size_t nops;
	Dwarf_Op mem[3];          /* ops, when libdw wrote them in the caller's storage */
};

#define FRAME_ROW_SAVED 6
/* rbx, rbp, r12-r15: the registers a caller may need from its callee */
extern const unsigned frame_row_saved_regs[FRAME_ROW_SAVED];

struct frame_row {
	uint64_t vaddr;
	int found;                /* a table of the chain has a row for vaddr */
	Dwarf_Frame *f;           /* owns the CFA's expression */
	struct frame_rule cfa, ra, saved[FRAME_ROW_SAVED];
};

/* The row of vaddr in cfi's chain: kept with cfi, or made in *scratch
 * when it cannot be kept. Give it back with frame_row_release. */
const struct frame_row *frame_row_get(struct unwind_cfi *cfi, uint64_t vaddr,
				      struct frame_row *scratch);
void frame_row_release(const struct frame_row *row, const struct frame_row *scratch);
void frame_rows_free(struct unwind_cfi *cfi);

#endif /* ANALYZE_UNWIND_INTERNAL_H */
