/* dwarf_expr.c - evaluates the DWARF expressions libdw gives for CFA and
 * register rules (dwarf_frame_cfa, dwarf_frame_register): register plus
 * offset, the CFA plus offset, and the small arithmetic of PLT entries'
 * CFA expressions. Anything else is refused (EXPR_BAD), never guessed.
 * Bounded: 64 operations, a 16-deep stack, memory only inside the window. */
#include <dwarf.h>
#include <string.h>

#include "unwind_internal.h"

#define EXPR_MAX_OPS   64
#define EXPR_MAX_STACK 16

bool window_read(const struct unwind_memory *mem, uint64_t addr, uint64_t *out)
{
	if (!mem->len || addr < mem->base || addr - mem->base > mem->len ||
	    mem->len - (addr - mem->base) < 8)
		return false;
	memcpy(out, mem->bytes + (addr - mem->base), 8);
	return true;
}

struct estack {
	uint64_t v[EXPR_MAX_STACK];
	unsigned n;
};

static bool push(struct estack *s, uint64_t v)
{
	if (s->n == EXPR_MAX_STACK)
		return false;
	s->v[s->n++] = v;
	return true;
}

static bool pop(struct estack *s, uint64_t *v)
{
	if (!s->n)
		return false;
	*v = s->v[--s->n];
	return true;
}

static bool binary(struct estack *s, uint8_t atom)
{
	uint64_t a, b;

	if (!pop(s, &b) || !pop(s, &a))
		return false;
	switch (atom) {
	case DW_OP_plus:  return push(s, a + b);
	case DW_OP_minus: return push(s, a - b);
	case DW_OP_and:   return push(s, a & b);
	case DW_OP_or:    return push(s, a | b);
	case DW_OP_mul:   return push(s, a * b);
	case DW_OP_shl:   return push(s, b < 64 ? a << b : 0);
	case DW_OP_shr:   return push(s, b < 64 ? a >> b : 0);
	case DW_OP_ge:    return push(s, (int64_t)a >= (int64_t)b);
	case DW_OP_gt:    return push(s, (int64_t)a > (int64_t)b);
	case DW_OP_le:    return push(s, (int64_t)a <= (int64_t)b);
	case DW_OP_lt:    return push(s, (int64_t)a < (int64_t)b);
	case DW_OP_eq:    return push(s, a == b);
	case DW_OP_ne:    return push(s, a != b);
	default:          return false;
	}
}

static bool is_binary(uint8_t atom)
{
	switch (atom) {
	case DW_OP_plus: case DW_OP_minus: case DW_OP_and: case DW_OP_or: case DW_OP_mul:
	case DW_OP_shl: case DW_OP_shr: case DW_OP_ge: case DW_OP_gt: case DW_OP_le:
	case DW_OP_lt: case DW_OP_eq: case DW_OP_ne:
		return true;
	default:
		return false;
	}
}

static bool push_reg(struct estack *s, const struct regfile *regs, uint64_t reg, int64_t off)
{
	return reg < DWREG_NR && reg_known(regs, (unsigned)reg) &&
	       push(s, regs->v[reg] + (uint64_t)off);
}

static bool is_const(uint8_t atom)
{
	return atom == DW_OP_const1u || atom == DW_OP_const1s || atom == DW_OP_const2u ||
	       atom == DW_OP_const2s || atom == DW_OP_const4u || atom == DW_OP_const4s ||
	       atom == DW_OP_const8u || atom == DW_OP_const8s || atom == DW_OP_constu ||
	       atom == DW_OP_consts;
}

/* One operation other than deref / stack_value. */
static bool step(struct estack *s, const Dwarf_Op *op, const struct regfile *regs,
		 uint64_t cfa, bool has_cfa)
{
	uint64_t a;

	if (op->atom >= DW_OP_lit0 && op->atom <= DW_OP_lit31)
		return push(s, op->atom - DW_OP_lit0);
	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31)
		return push_reg(s, regs, op->atom - DW_OP_breg0, (int64_t)op->number);
	if (op->atom >= DW_OP_reg0 && op->atom <= DW_OP_reg31)
		return push_reg(s, regs, op->atom - DW_OP_reg0, 0);
	if (is_const(op->atom))
		return push(s, op->number);
	if (is_binary(op->atom))
		return binary(s, op->atom);
	switch (op->atom) {
	case DW_OP_bregx:          return push_reg(s, regs, op->number, (int64_t)op->number2);
	case DW_OP_regx:           return push_reg(s, regs, op->number, 0);
	case DW_OP_call_frame_cfa: return has_cfa && push(s, cfa);
	case DW_OP_plus_uconst:    return pop(s, &a) && push(s, a + op->number);
	case DW_OP_dup:            return s->n && push(s, s->v[s->n - 1]);
	case DW_OP_drop:           return pop(s, &a);
	case DW_OP_nop:            return true;
	default:                   return false;
	}
}

enum expr_status expr_eval(const Dwarf_Op *ops, size_t nops, const struct regfile *regs,
			   uint64_t cfa, bool has_cfa, const struct unwind_memory *mem,
			   uint64_t *out, bool *is_value)
{
	struct estack s = { .n = 0 };
	uint64_t a;

	*is_value = false;
	if (!nops || nops > EXPR_MAX_OPS)
		return EXPR_BAD;
	for (size_t i = 0; i < nops; i++) {
		if (ops[i].atom == DW_OP_stack_value && i + 1 == nops) {
			*is_value = true;
		} else if (ops[i].atom == DW_OP_deref) {
			if (!pop(&s, &a))
				return EXPR_BAD;
			if (!window_read(mem, a, &a))
				return EXPR_WINDOW;
			if (!push(&s, a))
				return EXPR_BAD;
		} else if (!step(&s, &ops[i], regs, cfa, has_cfa)) {
			return EXPR_BAD;
		}
	}
	return pop(&s, out) ? EXPR_OK : EXPR_BAD;
}
