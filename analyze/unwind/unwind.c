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
 * with the original reason (no_module, no_cfi).
 *
 * A pc's row is compiled once and kept with its module's CFI
 * (frame_rows.c): the walk itself only computes. */
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

/* What recover found for a register of the caller. */
enum recovered { RECOVER_VALUE, RECOVER_UNDEFINED, RECOVER_SAME, RECOVER_WINDOW, RECOVER_BAD };

/* The result of a compiled rule, as expr_eval would give it for the
 * expression the rule was compiled from. */
static enum expr_status eval_rule(const struct frame_rule *rule, const struct regfile *r,
				  uint64_t cfa, bool has_cfa, const struct unwind_memory *mem,
				  uint64_t *out, bool *is_value)
{
	*is_value = false;
	switch (rule->kind) {
	case RULE_REG_OFFSET:
		if (!reg_known(r, rule->reg))
			return EXPR_BAD;
		*out = r->v[rule->reg] + rule->off;
		return EXPR_OK;
	case RULE_REG_VALUE:
		if (!reg_known(r, rule->reg))
			return EXPR_BAD;
		*out = r->v[rule->reg];
		*is_value = true;
		return EXPR_OK;
	case RULE_AT_CFA:
	case RULE_CFA_VALUE:
		if (!has_cfa)
			return EXPR_BAD;
		*out = cfa + rule->off;
		*is_value = rule->kind == RULE_CFA_VALUE;
		return EXPR_OK;
	case RULE_EXPR:
		return expr_eval(rule->ops, rule->nops, r, cfa, has_cfa, mem, out, is_value);
	default:
		return EXPR_BAD;
	}
}

/* The caller's value of reg under a rule of its frame. */
static enum recovered recover(const struct frame_rule *rule, unsigned reg, const struct regfile *r,
			     uint64_t cfa, const struct unwind_memory *mem, uint64_t *out)
{
	bool is_value;
	uint64_t v;
	enum expr_status st;

	if (rule->kind == RULE_BAD)
		return RECOVER_BAD;
	if (rule->kind == RULE_UNDEFINED)
		return RECOVER_UNDEFINED;
	if (rule->kind == RULE_SAME)
		return RECOVER_SAME;
	st = eval_rule(rule, r, cfa, true, mem, &v, &is_value);
	if (st != EXPR_OK)
		return st == EXPR_WINDOW ? RECOVER_WINDOW : RECOVER_BAD;
	/* a save slot below the frame's sp was popped already: in an epilogue
	 * after `leave` or `pop`, GCC's CFI still says "saved at CFA - 16"
	 * while the register holds the caller's value again (and the slot lies
	 * outside the copy, which starts at sp) */
	if (!is_value && reg != DWREG_RA && reg_known(r, DWREG_RSP) && v < r->v[DWREG_RSP])
		return RECOVER_SAME;
	if (!is_value && !window_read(mem, v, &v))
		return RECOVER_WINDOW;
	*out = v;
	return RECOVER_VALUE;
}

static enum unwind_stop stop_of_rule(enum recovered rule)
{
	switch (rule) {
	case RECOVER_UNDEFINED: return UNWIND_END;
	case RECOVER_WINDOW:    return UNWIND_WINDOW;
	default:                return UNWIND_BAD_RULE;
	}
}

/* Moves r from the frame described by row to its caller. Returns
 * UNWIND_STOP_COUNT to go on, else why to stop. */
static enum unwind_stop step_frame(const struct frame_row *row, struct regfile *r,
				   const struct unwind_memory *mem)
{
	uint64_t cfa, ra = 0, v;
	bool is_value;
	enum expr_status st;
	enum recovered rule;
	struct regfile caller = *r;

	if (row->cfa.kind == RULE_BAD)
		return UNWIND_BAD_RULE;
	st = eval_rule(&row->cfa, r, 0, false, mem, &cfa, &is_value);
	if (st != EXPR_OK)
		return st == EXPR_WINDOW ? UNWIND_WINDOW : UNWIND_BAD_RULE;
	if (!reg_known(r, DWREG_RSP) || cfa <= r->v[DWREG_RSP])
		return UNWIND_LOOP;
	rule = recover(&row->ra, DWREG_RA, r, cfa, mem, &ra);
	if (rule != RECOVER_VALUE)
		return rule == RECOVER_SAME ? UNWIND_LOOP : stop_of_rule(rule);
	for (unsigned i = 0; i < FRAME_ROW_SAVED; i++) {
		unsigned reg = frame_row_saved_regs[i];

		rule = recover(&row->saved[i], reg, r, cfa, mem, &v);
		if (rule == RECOVER_VALUE)
			caller.v[reg] = v;
		else if (rule != RECOVER_SAME)
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
	struct frame_row scratch;
	const struct frame_row *row = NULL;
	enum unwind_stop stop;

	if (find(ctx, lookup, &cfi, &vaddr) < 0 || !cfi) {
		stop = UNWIND_NO_MODULE;
	} else {
		row = frame_row_get(cfi, vaddr, &scratch);
		stop = row->found ? UNWIND_STOP_COUNT : UNWIND_NO_CFI;
	}
	if (stop != UNWIND_STOP_COUNT) {
		if (row)
			frame_row_release(row, &scratch);
		stop = fp_step(r, mem, stop);
		*fp_steps += stop == UNWIND_STOP_COUNT || stop == UNWIND_END;
		return stop;
	}
	stop = step_frame(row, r, mem);
	frame_row_release(row, &scratch);
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
