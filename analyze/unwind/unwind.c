/* unwind.c - the walk (see unwind.h): frame by frame, find the CFI row of
 * the pc (the call site, pc - 1, for return addresses), compute the CFA,
 * recover the return address and the callee-saved registers, and move up.
 * The CFA must grow from frame to frame, which bounds every walk by the
 * window's size even before the depth limit.
 *
 * Code without CFI (JIT code, hand-written assembly) is crossed with the
 * frame pointer when it keeps one: a pc in no module or without a CFI row
 * steps to [rbp + 8] with the caller's rbp at [rbp], if rbp lies in the
 * window above sp; the walk then goes on with CFI in the caller. Such
 * steps are counted (fp_steps); when rbp is not usable the walk stops
 * with the original reason (no_module, no_cfi). */
#include <stdlib.h>

#include "unwind_internal.h"

static const char *const stop_names[UNWIND_STOP_COUNT] = {
	[UNWIND_END] = "end",
	[UNWIND_WINDOW] = "window",
	[UNWIND_NO_MODULE] = "no_module",
	[UNWIND_NO_CFI] = "no_cfi",
	[UNWIND_BAD_RULE] = "bad_rule",
	[UNWIND_LOOP] = "loop",
	[UNWIND_DEPTH] = "depth",
	[UNWIND_NO_STACK] = "no_stack",
};

const char *unwind_stop_name(enum unwind_stop stop)
{
	return (unsigned)stop < UNWIND_STOP_COUNT ? stop_names[stop] : "?";
}

/* Registers a caller may need from its callee: rbx, rbp, r12-r15. */
static const unsigned callee_saved[] = { DWREG_RBX, DWREG_RBP, 12, 13, 14, 15 };

static void regs_from_capture(struct regfile *r, const uint64_t regs[PC_UREG_NR])
{
	static const unsigned dw[PC_UREG_NR] = {
		[PC_UREG_IP] = DWREG_RA, [PC_UREG_SP] = DWREG_RSP, [PC_UREG_BP] = DWREG_RBP,
		[PC_UREG_BX] = DWREG_RBX, [PC_UREG_R12] = 12, [PC_UREG_R13] = 13,
		[PC_UREG_R14] = 14, [PC_UREG_R15] = 15,
	};

	r->known = 0;
	for (unsigned i = 0; i < PC_UREG_NR; i++) {
		r->v[dw[i]] = regs[i];
		r->known |= 1u << dw[i];
	}
}

enum reg_rule { RULE_VALUE, RULE_UNDEFINED, RULE_SAME, RULE_WINDOW, RULE_BAD };

/* The caller's value of reg under frame f. */
static enum reg_rule recover(Dwarf_Frame *f, unsigned reg, const struct regfile *r,
			     uint64_t cfa, const struct unwind_memory *mem, uint64_t *out)
{
	Dwarf_Op ops_mem[3], *ops = NULL;
	size_t nops = 0;
	bool is_value;
	uint64_t v;
	enum expr_status st;

	if (dwarf_frame_register(f, (int)reg, ops_mem, &ops, &nops) != 0)
		return RULE_BAD;
	if (nops == 0) /* libdw: ops == ops_mem is "undefined", NULL "same value" */
		return ops ? RULE_UNDEFINED : RULE_SAME;
	st = expr_eval(ops, nops, r, cfa, true, mem, &v, &is_value);
	if (st != EXPR_OK)
		return st == EXPR_WINDOW ? RULE_WINDOW : RULE_BAD;
	/* a save slot below the frame's sp was popped already: in an epilogue
	 * after `leave` or `pop`, GCC's CFI still says "saved at CFA - 16"
	 * while the register holds the caller's value again (and the slot lies
	 * outside the copy, which starts at sp) */
	if (!is_value && reg != DWREG_RA && reg_known(r, DWREG_RSP) && v < r->v[DWREG_RSP])
		return RULE_SAME;
	if (!is_value && !window_read(mem, v, &v))
		return RULE_WINDOW;
	*out = v;
	return RULE_VALUE;
}

static enum unwind_stop stop_of_rule(enum reg_rule rule)
{
	switch (rule) {
	case RULE_UNDEFINED: return UNWIND_END;
	case RULE_WINDOW:    return UNWIND_WINDOW;
	default:             return UNWIND_BAD_RULE;
	}
}

/* Moves r from the frame described by f to its caller. Returns
 * UNWIND_STOP_COUNT to go on, else why to stop. */
static enum unwind_stop step_frame(Dwarf_Frame *f, struct regfile *r,
				   const struct unwind_memory *mem)
{
	Dwarf_Op *ops = NULL;
	size_t nops = 0;
	uint64_t cfa, ra = 0, v;
	bool is_value;
	enum expr_status st;
	enum reg_rule rule;
	struct regfile caller = *r;

	if (dwarf_frame_cfa(f, &ops, &nops) != 0)
		return UNWIND_BAD_RULE;
	st = expr_eval(ops, nops, r, 0, false, mem, &cfa, &is_value);
	if (st != EXPR_OK)
		return st == EXPR_WINDOW ? UNWIND_WINDOW : UNWIND_BAD_RULE;
	if (!reg_known(r, DWREG_RSP) || cfa <= r->v[DWREG_RSP])
		return UNWIND_LOOP;
	rule = recover(f, DWREG_RA, r, cfa, mem, &ra);
	if (rule != RULE_VALUE)
		return rule == RULE_SAME ? UNWIND_LOOP : stop_of_rule(rule);
	for (size_t i = 0; i < sizeof(callee_saved) / sizeof(callee_saved[0]); i++) {
		unsigned reg = callee_saved[i];

		rule = recover(f, reg, r, cfa, mem, &v);
		if (rule == RULE_VALUE)
			caller.v[reg] = v;
		else if (rule != RULE_SAME)
			caller.known &= ~(1u << reg);
	}
	caller.v[DWREG_RSP] = cfa;
	caller.v[DWREG_RA] = ra;
	*r = caller;
	return ra == 0 ? UNWIND_END : UNWIND_STOP_COUNT;
}

/* The frame-pointer step from a pc without CFI: the standard x86-64 frame
 * (push rbp; mov rsp, rbp): return address at rbp + 8, the caller's rbp at
 * rbp, its sp at rbp + 16. Only rbp is known in the caller. Returns
 * UNWIND_STOP_COUNT to go on, else `why` (the reason without fallback). */
static enum unwind_stop fp_step(struct regfile *r, const struct unwind_memory *mem,
				enum unwind_stop why)
{
	uint64_t bp = r->v[DWREG_RBP], ra, saved_bp;

	if (!reg_known(r, DWREG_RBP) || !reg_known(r, DWREG_RSP) || bp < r->v[DWREG_RSP] ||
	    bp > UINT64_MAX - 16 || !window_read(mem, bp + 8, &ra) ||
	    !window_read(mem, bp, &saved_bp))
		return why;
	r->known = (1u << DWREG_RSP) | (1u << DWREG_RA) | (1u << DWREG_RBP);
	r->v[DWREG_RSP] = bp + 16;
	r->v[DWREG_RBP] = saved_bp;
	r->v[DWREG_RA] = ra;
	return ra == 0 ? UNWIND_END : UNWIND_STOP_COUNT;
}

/* One frame: the CFI row for pc, then the step. */
static enum unwind_stop unwind_frame(struct regfile *r, int caller_frame,
				     const struct unwind_memory *mem, unwind_find_fn find,
				     void *ctx, uint32_t *fp_steps)
{
	uint64_t pc = r->v[DWREG_RA], lookup = caller_frame && pc ? pc - 1 : pc, vaddr = 0;
	struct unwind_cfi *cfi = NULL;
	Dwarf_Frame *f = NULL;
	enum unwind_stop stop;

	if (find(ctx, lookup, &cfi, &vaddr) < 0 || !cfi) {
		stop = UNWIND_NO_MODULE;
	} else {
		stop = UNWIND_NO_CFI;
		for (; cfi && stop == UNWIND_NO_CFI; cfi = cfi->next)
			if (dwarf_cfi_addrframe(cfi->cfi, vaddr, &f) == 0 && f)
				stop = UNWIND_STOP_COUNT;
	}
	if (stop != UNWIND_STOP_COUNT) {
		free(f);
		stop = fp_step(r, mem, stop);
		*fp_steps += stop == UNWIND_STOP_COUNT || stop == UNWIND_END;
		return stop;
	}
	stop = step_frame(f, r, mem);
	free(f);
	return stop;
}

void unwind_stack(const uint64_t regs[PC_UREG_NR], const struct unwind_memory *mem,
		  unwind_find_fn find, void *ctx, uint64_t *ips, uint32_t max,
		  struct unwind_result *out)
{
	struct regfile r;
	enum unwind_stop stop = UNWIND_DEPTH;

	regs_from_capture(&r, regs);
	out->n = 0;
	out->stop_pc = 0;
	out->fp_steps = 0;
	while (out->n < max) {
		ips[out->n++] = r.v[DWREG_RA];
		out->stop_pc = r.v[DWREG_RA];
		stop = unwind_frame(&r, out->n > 1, mem, find, ctx, &out->fp_steps);
		if (stop != UNWIND_STOP_COUNT)
			break;
		stop = UNWIND_DEPTH;
	}
	/* an empty copy is not cut by the window: there was no stack to read */
	out->stop = stop == UNWIND_WINDOW && mem->len == 0 ? UNWIND_NO_STACK : stop;
}
