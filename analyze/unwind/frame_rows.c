/* frame_rows.c - the CFI rows of a module's pcs, compiled once.
 *
 * A copied stack is walked frame by frame, and the frames of a server's
 * copies are the same few hundred pcs again and again (a backend's read
 * loop, an event loop's epoll_wait). For each frame libdw finds the FDE
 * (a binary search and a tree lookup), interprets the CIE's and FDE's
 * instructions into a Dwarf_Frame (a malloc), and hands out each rule as
 * an expression that the walk then evaluates: a quarter of an import's
 * loading thread on a capture of postgres with its off-CPU copies.
 *
 * So the row of each (module, pc) is made once and kept with the module
 * (struct unwind_cfi): its Dwarf_Frame, which owns the CFA's expression,
 * and the rules of the return address and the callee-saved registers in a
 * compiled form. The forms libdw gives for the usual rows - CFA = register
 * + offset, a register saved at CFA + offset, or whose value is CFA +
 * offset - are kept as (register, offset) and computed directly; every
 * other expression is kept as libdw gave it and evaluated by expr_eval, as
 * before - except a register location (DW_CFA_register: the value is in
 * that register), which the walk used to read as an address. A pc with no
 * row in any table of the chain is kept too (found 0). Rows are found by pc
 * in the project's hash table (util/hashmap.h); after ROWS_MAX rows a
 * module's new pcs are compiled into the caller's storage each time and
 * not kept, so hostile copies with random pcs cannot grow memory without
 * bound. */
#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "unwind_internal.h"
#include "util/hashmap.h"

#define ROWS_MAX (1u << 16)

/* Registers a caller may need from its callee: rbx, rbp, r12-r15. */
const unsigned frame_row_saved_regs[FRAME_ROW_SAVED] = { DWREG_RBX, DWREG_RBP, 12, 13, 14, 15 };

/* Keeps ops in r: as (register, offset) or CFA + offset when they have
 * one of libdw's usual forms, else as the expression itself (copied when
 * it lives in the caller's ops_mem). */
static void compile_ops(struct frame_rule *r, const Dwarf_Op *ops, size_t nops,
			const Dwarf_Op *ops_mem)
{
	size_t n = nops;
	bool value = n && ops[n - 1].atom == DW_OP_stack_value;

	if (value)
		n--;
	if (!value && n == 1 && ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		r->kind = RULE_REG_OFFSET;
		r->reg = ops[0].atom - DW_OP_breg0;
		r->off = ops[0].number;
		return;
	}
	if (!value && n == 1 && (ops[0].atom == DW_OP_regx ||
				 (ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31))) {
		/* a register location (DW_CFA_register): the value is in it */
		r->kind = RULE_REG_VALUE;
		r->reg = ops[0].atom == DW_OP_regx ? (unsigned)ops[0].number
						   : (unsigned)(ops[0].atom - DW_OP_reg0);
		return;
	}
	if (!value && n == 1 && ops[0].atom == DW_OP_bregx && ops[0].number < DWREG_NR) {
		r->kind = RULE_REG_OFFSET;  /* libdw's form of a CFA rule "reg + offset" */
		r->reg = (unsigned)ops[0].number;
		r->off = ops[0].number2;
		return;
	}
	if (n >= 1 && n <= 2 && ops[0].atom == DW_OP_call_frame_cfa &&
	    (n == 1 || ops[1].atom == DW_OP_plus_uconst)) {
		r->kind = value ? RULE_CFA_VALUE : RULE_AT_CFA;
		r->off = n == 2 ? ops[1].number : 0;
		return;
	}
	r->kind = RULE_EXPR;
	r->nops = nops;
	if (ops == ops_mem && nops <= sizeof(r->mem) / sizeof(r->mem[0])) {
		memcpy(r->mem, ops, nops * sizeof(*ops));
		r->ops = r->mem;
	} else if (ops == ops_mem) {    /* cannot happen: libdw writes at most 3 */
		r->kind = RULE_BAD;
	} else {
		r->ops = ops;               /* owned by the CFI or by the Dwarf_Frame */
	}
}

static void compile_reg(struct frame_rule *r, Dwarf_Frame *f, unsigned reg)
{
	Dwarf_Op ops_mem[3], *ops = NULL;
	size_t nops = 0;

	if (dwarf_frame_register(f, (int)reg, ops_mem, &ops, &nops) != 0)
		r->kind = RULE_BAD;
	else if (nops == 0) /* libdw: ops == ops_mem is "undefined", NULL "same value" */
		r->kind = ops ? RULE_UNDEFINED : RULE_SAME;
	else
		compile_ops(r, ops, nops, ops_mem);
}

/* Fills row (vaddr already set) from f, which it then owns. */
static void compile_row(struct frame_row *row, Dwarf_Frame *f)
{
	Dwarf_Op *ops = NULL;
	size_t nops = 0;

	row->f = f;
	row->found = 1;
	if (dwarf_frame_cfa(f, &ops, &nops) != 0 || !nops)
		row->cfa.kind = RULE_BAD;
	else
		compile_ops(&row->cfa, ops, nops, NULL);
	compile_reg(&row->ra, f, DWREG_RA);
	for (unsigned i = 0; i < FRAME_ROW_SAVED; i++)
		compile_reg(&row->saved[i], f, frame_row_saved_regs[i]);
}

/* The row of vaddr from the first table of the chain that has one. */
static void make_row(struct unwind_cfi *cfi, uint64_t vaddr, struct frame_row *row)
{
	memset(row, 0, sizeof(*row));
	row->vaddr = vaddr;
	for (; cfi; cfi = cfi->next) {
		Dwarf_Frame *f = NULL;

		if (dwarf_cfi_addrframe(cfi->cfi, vaddr, &f) == 0 && f) {
			compile_row(row, f);
			return;
		}
		free(f);
	}
}

/* The row of vaddr in cfi's chain, kept in cfi->rows (vaddr -> the row's
 * pointer) unless the module has ROWS_MAX or memory runs out; then made
 * in scratch. */
const struct frame_row *frame_row_get(struct unwind_cfi *cfi, uint64_t vaddr,
				      struct frame_row *scratch)
{
	uint64_t *kept = cfi->rows ? hmap_find(cfi->rows, vaddr, 0) : NULL;
	struct frame_row *row;

	if (kept)
		return (const struct frame_row *)(uintptr_t)*kept;
	if (!cfi->rows && (cfi->rows = calloc(1, sizeof(*cfi->rows))) != NULL)
		hmap_init(cfi->rows);
	if (!cfi->rows || cfi->rows->len >= ROWS_MAX || !(row = malloc(sizeof(*row)))) {
		make_row(cfi, vaddr, scratch);
		return scratch;
	}
	make_row(cfi, vaddr, row);
	if (hmap_upsert(cfi->rows, vaddr, 0, (uint64_t)(uintptr_t)row, NULL))
		return row;
	free(row->f);             /* no room to keep it: made again in scratch */
	free(row);
	make_row(cfi, vaddr, scratch);
	return scratch;
}

void frame_row_release(const struct frame_row *row, const struct frame_row *scratch)
{
	if (row == scratch)
		free(row->f);
}

void frame_rows_free(struct unwind_cfi *cfi)
{
	const struct hmap_slot *slot;

	if (!cfi->rows)
		return;
	for (size_t i = 0; hmap_next(cfi->rows, &i, &slot);) {
		struct frame_row *row = (struct frame_row *)(uintptr_t)slot->value;

		free(row->f);
		free(row);
	}
	hmap_free(cfi->rows);
	free(cfi->rows);
	cfi->rows = NULL;
}
