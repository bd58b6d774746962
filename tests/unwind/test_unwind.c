/* test_unwind.c - the offline unwinder (analyze/unwind/) on hand-built
 * .eh_frame tables: a normal two-frame walk that ends at an undefined
 * return address, and hostile input - a CFA that does not grow, absurd
 * offsets, an empty window, a pc in no module, truncated and random
 * tables. Every walk must stop with a reason, inside the window, without
 * crashing or hanging. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "common/unwind_prune.h"
#include "unwind/unwind.h"

/* ---- building .eh_frame -------------------------------------------------- */

struct eh { uint8_t b[512]; size_t n; };

static void put(struct eh *e, const void *p, size_t n) { if (n) memcpy(e->b + e->n, p, n); e->n += n; }
static void put8(struct eh *e, uint8_t v) { put(e, &v, 1); }
static void put32(struct eh *e, uint32_t v) { put(e, &v, 4); }
static void pad4(struct eh *e, size_t start)
{
	while ((e->n - start) % 4)
		put8(e, 0); /* DW_CFA_nop */
	uint32_t len = (uint32_t)(e->n - start - 4);
	memcpy(e->b + start, &len, 4);
}

/* CIE: "zR", code align 1, data align -8, RA = 16, FDE pointers udata4
 * (absolute 32-bit); initial rules CFA = rsp + 8, RA at CFA - 8. */
static void cie(struct eh *e)
{
	size_t start = e->n;
	static const uint8_t body[] = {
		1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x03,  /* version .. FDE encoding */
		0x0c, 7, 8,                             /* def_cfa rsp 8 */
		0x90, 1,                                /* offset RA, 1 * -8 */
	};
	put32(e, 0);
	put32(e, 0); /* CIE id */
	put(e, body, sizeof(body));
	pad4(e, start);
}

/* An FDE for [lo, hi) with extra instructions after the CIE's. */
static void fde(struct eh *e, uint32_t lo, uint32_t hi, const uint8_t *ins, size_t nins)
{
	size_t start = e->n;

	put32(e, 0);
	put32(e, (uint32_t)(e->n)); /* CIE pointer: back to offset 0 */
	put32(e, lo);
	put32(e, hi - lo);
	put8(e, 0); /* augmentation data length */
	put(e, ins, nins);
	pad4(e, start);
}

static struct unwind_cfi *cfi_of(struct eh *e, struct pc_unwind_table *t)
{
	const char *why;

	put32(e, 0); /* terminator */
	memset(t, 0, sizeof(*t));
	t->kind = PC_UNWIND_EH_FRAME;
	t->table = e->b;
	t->table_len = (uint32_t)e->n;
	t->table_addr = 0x40000;
	return unwind_cfi_new(t, &why);
}

/* Code lives at [0x1000, 0x3000): vaddr = pc. */
static int find(void *ctx, uint64_t pc, struct unwind_cfi **cfi, uint64_t *vaddr)
{
	if (pc < 0x1000 || pc >= 0x3000)
		return -1;
	*cfi = ctx;
	*vaddr = pc;
	return 0;
}

#define SP 0x7ffff000ull

static struct unwind_result walk(struct unwind_cfi *c, uint64_t ip, const uint64_t *stack,
				 size_t words)
{
	uint64_t regs[PC_UREG_NR] = { [PC_UREG_IP] = ip, [PC_UREG_SP] = SP };
	uint64_t ips[256];
	struct unwind_memory mem = { SP, (const uint8_t *)stack, words * 8 };
	struct unwind_result r;

	unwind_stack(regs, &mem, find, c, ips, 256, &r);
	cr_assert_leq(r.n, 256);
	return r;
}

/* F [0x1000,0x1100): the CIE's rules. G [0x2000,0x2100): RA undefined. */
static struct unwind_cfi *two_functions(struct eh *e, struct pc_unwind_table *t,
					const uint8_t *f_ins, size_t f_n)
{
	static const uint8_t undefined_ra[] = { 0x07, 16 };

	cie(e);
	fde(e, 0x1000, 0x1100, f_ins, f_n);
	fde(e, 0x2000, 0x2100, undefined_ra, sizeof(undefined_ra));
	return cfi_of(e, t);
}

Test(unwind, two_frames_end_at_undefined_return_address)
{
	struct eh e = { .n = 0 };
	struct pc_unwind_table t;
	struct unwind_cfi *c = two_functions(&e, &t, NULL, 0);
	uint64_t stack[4] = { 0x2010, 0, 0, 0 };
	struct unwind_result r;

	cr_assert_not_null(c);
	r = walk(c, 0x1010, stack, 4);
	cr_assert_eq(r.stop, UNWIND_END, "stop %s", unwind_stop_name(r.stop));
	cr_assert_eq(r.n, 2);
	unwind_cfi_free(c);
}

Test(unwind, recursion_runs_off_the_window)
{
	struct eh e = { .n = 0 };
	struct pc_unwind_table t;
	struct unwind_cfi *c = two_functions(&e, &t, NULL, 0);
	uint64_t stack[32];
	struct unwind_result r;

	for (int i = 0; i < 32; i++)
		stack[i] = 0x1020;
	r = walk(c, 0x1010, stack, 32);
	cr_assert_eq(r.stop, UNWIND_WINDOW, "stop %s", unwind_stop_name(r.stop));
	cr_assert_eq(r.n, 33);
	unwind_cfi_free(c);
}

Test(unwind, cfa_that_does_not_grow_is_a_loop)
{
	static const uint8_t cfa_rsp_0[] = { 0x0c, 7, 0 };  /* def_cfa rsp 0 */
	struct eh e = { .n = 0 };
	struct pc_unwind_table t;
	struct unwind_cfi *c = two_functions(&e, &t, cfa_rsp_0, sizeof(cfa_rsp_0));
	uint64_t stack[4] = { 0x1010, 0x1010, 0x1010, 0x1010 };
	struct unwind_result r;

	r = walk(c, 0x1010, stack, 4);
	cr_assert_eq(r.stop, UNWIND_LOOP, "stop %s", unwind_stop_name(r.stop));
	cr_assert_eq(r.n, 1);
	unwind_cfi_free(c);
}

Test(unwind, absurd_offsets_stop_at_the_window)
{
	/* def_cfa rsp 0x7fffffff; def_cfa_offset 2^63 (uleb) */
	static const uint8_t huge[] = { 0x0c, 7, 0xff, 0xff, 0xff, 0xff, 0x07 };
	static const uint8_t wrap[] = { 0x0e, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
					0x80, 0x80, 0x01 };
	uint64_t stack[4] = { 0x2010, 0, 0, 0 };
	const uint8_t *cases[] = { huge, wrap };
	size_t lens[] = { sizeof(huge), sizeof(wrap) };

	for (int i = 0; i < 2; i++) {
		struct eh e = { .n = 0 };
		struct pc_unwind_table t;
		struct unwind_cfi *c = two_functions(&e, &t, cases[i], lens[i]);
		struct unwind_result r = walk(c, 0x1010, stack, 4);

		cr_assert(r.stop == UNWIND_WINDOW || r.stop == UNWIND_LOOP ||
			  r.stop == UNWIND_BAD_RULE, "case %d: stop %s", i,
			  unwind_stop_name(r.stop));
		cr_assert_eq(r.n, 1);
		unwind_cfi_free(c);
	}
}

Test(unwind, empty_window_and_unknown_pc)
{
	struct eh e = { .n = 0 };
	struct pc_unwind_table t;
	struct unwind_cfi *c = two_functions(&e, &t, NULL, 0);
	struct unwind_result r = walk(c, 0x1010, NULL, 0);

	cr_assert_eq(r.stop, UNWIND_NO_STACK, "an empty copy is not a cut one");
	cr_assert_eq(r.n, 1);
	r = walk(c, 0x9000, NULL, 0);
	cr_assert_eq(r.stop, UNWIND_NO_MODULE);
	r = walk(c, 0x1800, NULL, 0);   /* inside the module, no FDE */
	cr_assert_eq(r.stop, UNWIND_NO_CFI);
	unwind_cfi_free(c);
}

/* After `leave` (F's last instruction is `ret`), GCC's CFI still says rbp
 * is saved at CFA - 16, which now lies below sp, outside the copy: the
 * slot was popped, rbp holds the caller's value again, and the caller G
 * (CFA = rbp + 16) unwinds with it. Postgres' check_stack_depth and palloc
 * stopped with bad_rule there. */
Test(unwind, popped_save_slot_is_same_value)
{
	static const uint8_t f_rbp_saved[] = { 0x86, 2 };          /* rbp at CFA - 16 */
	static const uint8_t g_rbp_frame[] = { 0x0c, 6, 16, 0x86, 2 }; /* CFA = rbp + 16 */
	struct eh e = { .n = 0 };
	struct pc_unwind_table t;
	struct unwind_cfi *c;
	uint64_t stack[4] = { 0x2010, 0x5555, 0x7777, 0 }; /* F's RA, -, G's saved rbp, G's RA 0 */
	uint64_t regs[PC_UREG_NR] = { [PC_UREG_IP] = 0x1010, [PC_UREG_SP] = SP,
				      [PC_UREG_BP] = SP + 16 };
	struct unwind_memory mem = { SP, (const uint8_t *)stack, sizeof(stack) };
	uint64_t ips[8];
	struct unwind_result r;

	cie(&e);
	fde(&e, 0x1000, 0x1100, f_rbp_saved, sizeof(f_rbp_saved));
	fde(&e, 0x2000, 0x2100, g_rbp_frame, sizeof(g_rbp_frame));
	c = cfi_of(&e, &t);
	cr_assert_not_null(c);
	unwind_stack(regs, &mem, find, c, ips, 8, &r);
	cr_assert_eq(r.stop, UNWIND_END, "stop %s", unwind_stop_name(r.stop));
	cr_assert_eq(r.n, 2);
	cr_expect_eq(ips[1], 0x2010);
	unwind_cfi_free(c);
}

/* Rows are compiled once per pc and kept with the module (frame_rows.c):
 * a walk answers the same from kept rows as from new ones, for each form
 * of rule. F: CFA = rsp + 16; the caller's rbx is the value CFA - 16
 * (val_offset); the caller's rbp is in F's rbx (DW_CFA_register: a
 * register location, whose value is the register's - the walk used to
 * read memory at it). G: CFA = rbx + 32, rbp the same value. K: CFA =
 * rbp + 32, its return address 0. A rule that went wrong would send a
 * later CFA, and the walk, elsewhere. */
Test(unwind, kept_rows_walk_as_new_ones)
{
	static const uint8_t f_ins[] = { 0x0e, 16, 0x14, 3, 2, 0x09, 6, 3 };
	static const uint8_t g_ins[] = { 0x0c, 3, 32, 0x08, 6 };
	static const uint8_t k_ins[] = { 0x0c, 6, 32 };
	struct eh e = { .n = 0 };
	struct pc_unwind_table t;
	struct unwind_cfi *c;
	uint64_t stack[6] = { 0, 0x2010, 0, 0x2810, 0, 0 };
	uint64_t regs[PC_UREG_NR] = { [PC_UREG_IP] = 0x1010, [PC_UREG_SP] = SP,
				      [PC_UREG_BX] = SP + 16 };
	struct unwind_memory mem = { SP, (const uint8_t *)stack, sizeof(stack) };

	cie(&e);
	fde(&e, 0x1000, 0x1100, f_ins, sizeof(f_ins));
	fde(&e, 0x2000, 0x2100, g_ins, sizeof(g_ins));
	fde(&e, 0x2800, 0x2900, k_ins, sizeof(k_ins));
	c = cfi_of(&e, &t);
	cr_assert_not_null(c);
	for (int round = 0; round < 3; round++) {
		uint64_t ips[8] = { 0 };
		struct unwind_result r;

		unwind_stack(regs, &mem, find, c, ips, 8, &r);
		cr_assert_eq(r.stop, UNWIND_END, "round %d: stop %s", round,
			     unwind_stop_name(r.stop));
		cr_assert_eq(r.n, 3, "round %d: %u frames", round, r.n);
		cr_expect_eq(ips[1], 0x2010);
		cr_expect_eq(ips[2], 0x2810);
	}
	unwind_cfi_free(c);
}

/* A copy that holds something but not the return address is cut. */
Test(unwind, cut_window)
{
	static const uint8_t cfa24[] = { 0x0e, 24 };     /* def_cfa_offset 24: RA at sp + 16 */
	struct eh e = { .n = 0 };
	struct pc_unwind_table t;
	struct unwind_cfi *c = two_functions(&e, &t, cfa24, sizeof(cfa24));
	uint64_t one[1] = { 0x2010 };
	struct unwind_result r = walk(c, 0x1010, one, 1);

	cr_assert_eq(r.stop, UNWIND_WINDOW, "stop %s", unwind_stop_name(r.stop));
	cr_assert_eq(r.n, 1);
	unwind_cfi_free(c);
}

/* Code without CFI (a JIT) that keeps a frame pointer is crossed with it:
 * [rbp] = the caller's rbp, [rbp + 8] = the return address, into G (whose
 * RA is undefined: complete). rbp below sp, or outside the window, keeps
 * the original stop. */
Test(unwind, frame_pointer_crosses_code_without_cfi)
{
	struct eh e = { .n = 0 };
	struct pc_unwind_table t;
	struct unwind_cfi *c = two_functions(&e, &t, NULL, 0);
	uint64_t stack[4] = { 0xdead, 0xbeef, 0 /* [rbp] */, 0x2010 /* [rbp + 8] */ };
	uint64_t regs[PC_UREG_NR] = { [PC_UREG_IP] = 0x9000, [PC_UREG_SP] = SP,
				      [PC_UREG_BP] = SP + 16 };
	struct unwind_memory mem = { SP, (const uint8_t *)stack, sizeof(stack) };
	uint64_t ips[16];
	struct unwind_result r;

	cr_assert_not_null(c);
	unwind_stack(regs, &mem, find, c, ips, 16, &r);
	cr_assert_eq(r.stop, UNWIND_END, "stop %s", unwind_stop_name(r.stop));
	cr_assert_eq(r.n, 2);
	cr_assert_eq(ips[1], 0x2010);
	cr_assert_eq(r.fp_steps, 1);
	regs[PC_UREG_BP] = SP - 8;       /* below sp: not a frame of this stack */
	unwind_stack(regs, &mem, find, c, ips, 16, &r);
	cr_assert_eq(r.stop, UNWIND_NO_MODULE);
	cr_assert_eq(r.fp_steps, 0);
	regs[PC_UREG_BP] = SP + 4096;    /* outside the window */
	unwind_stack(regs, &mem, find, c, ips, 16, &r);
	cr_assert_eq(r.stop, UNWIND_NO_MODULE);
	unwind_cfi_free(c);
}

/* Every prefix of a valid table, and random tables: a stop, never a crash. */
static void walk_any(uint8_t *bytes, size_t n)
{
	struct pc_unwind_table t = { .kind = PC_UNWIND_EH_FRAME, .table = bytes,
				     .table_len = (uint32_t)n, .table_addr = 0x40000 };
	const char *why;
	struct unwind_cfi *c = unwind_cfi_new(&t, &why);
	uint64_t stack[16];

	for (int i = 0; i < 16; i++)
		stack[i] = 0x1000 + (uint64_t)i * 0x111;
	if (!c)
		return;
	for (uint64_t ip = 0x1000; ip < 0x2100; ip += 0x3f) {
		struct unwind_result r = walk(c, ip, stack, 16);

		cr_assert_lt(r.stop, UNWIND_STOP_COUNT);
	}
	unwind_cfi_free(c);
}

Test(unwind, truncated_tables)
{
	struct eh e = { .n = 0 };
	struct pc_unwind_table t;
	struct unwind_cfi *c = two_functions(&e, &t, NULL, 0);

	unwind_cfi_free(c);
	for (size_t n = 1; n < e.n; n++) {
		uint8_t copy[512];

		memcpy(copy, e.b, n);
		walk_any(copy, n);
	}
}

Test(unwind, random_tables)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;

	for (int round = 0; round < 300; round++) {
		struct eh e = { .n = 0 };
		struct pc_unwind_table t;
		struct unwind_cfi *c = two_functions(&e, &t, NULL, 0);

		unwind_cfi_free(c);
		for (int k = 0; k < 6; k++) { /* flip bytes of a valid table */
			x ^= x << 13; x ^= x >> 7; x ^= x << 17;
			e.b[(x >> 8) % e.n] = (uint8_t)x;
		}
		walk_any(e.b, e.n);
	}
}

/* A register number no x86-64 table uses makes libdw size its register
 * array by it (1.9 GB for register 80 million): the table is refused
 * before libdw sees it, with the reason. */
Test(unwind, huge_register_refused)
{
	static const uint8_t huge_reg[] = { 0x07, 0x80, 0x80, 0x80, 0x26 }; /* undefined r80M */
	struct eh e = { .n = 0 };
	struct pc_unwind_table t;
	const char *why = NULL;

	cie(&e);
	fde(&e, 0x1000, 0x1100, huge_reg, sizeof(huge_reg));
	put32(&e, 0);
	memset(&t, 0, sizeof(t));
	t.kind = PC_UNWIND_EH_FRAME;
	t.table = e.b;
	t.table_len = (uint32_t)e.n;
	t.table_addr = 0x40000;
	cr_assert_null(unwind_cfi_new(&t, &why));
	cr_assert(why && strstr(why, "register"), "reason: %s", why ? why : "(none)");
}

/* A hostile entry hidden after a zero length (which a linear scan takes
 * for the end, but .eh_frame_hdr can point past) is still checked. */
Test(unwind, entries_after_a_zero_length_checked)
{
	static const uint8_t huge_reg[] = { 0x07, 0x80, 0x80, 0x80, 0x26 };
	struct eh e = { .n = 0 };
	struct pc_unwind_table t;
	const char *why = NULL;

	cie(&e);
	put32(&e, 0);                     /* a "terminator" */
	fde(&e, 0x1000, 0x1100, huge_reg, sizeof(huge_reg));
	memset(&t, 0, sizeof(t));
	t.kind = PC_UNWIND_EH_FRAME;
	t.table = e.b;
	t.table_len = (uint32_t)e.n;
	t.table_addr = 0x40000;
	cr_assert_null(unwind_cfi_new(&t, &why));
}

/* The tables of the real libc pass the check, header and all. */
Test(unwind, real_libc_tables_pass)
{
	static const char *const paths[] = { "/lib/x86_64-linux-gnu/libc.so.6",
					     "/usr/lib/x86_64-linux-gnu/libc.so.6" };
	struct pc_unwind_table t;
	char why[256];
	const char *reason = NULL;
	struct unwind_cfi *c;
	int fd = -1;

	for (size_t i = 0; i < 2 && fd < 0; i++)
		fd = open(paths[i], O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		cr_skip_test("no libc.so.6 at the Debian paths");
	memset(&t, 0, sizeof(t));
	cr_assert_eq(pc_unwind_table_load_fd(&t, fd, "libc.so.6", why, sizeof(why)), 0, "%s", why);
	close(fd);
	cr_assert_gt(t.hdr_len, 0u);
	c = unwind_cfi_new(&t, &reason);
	cr_assert_not_null(c, "libc's .eh_frame refused: %s", reason ? reason : "?");
	cr_assert(unwind_cfi_uses_header(c), "libc's .eh_frame_hdr not used");
	unwind_cfi_free(c);
	pc_unwind_table_free(&t);
}

/* A .debug_frame table (kind 1) has no header: hdr is NULL with hdr_len 0.
 * The record is still written (an unstripped Go binary, whose only CFI is
 * .debug_frame, hit a memcpy from NULL here under UBSan). */
Test(unwind, record_without_header)
{
	static const uint8_t table[16] = { 1, 2, 3 };
	struct pc_unwind_table t;
	struct pc_buf b = { 0 };

	memset(&t, 0, sizeof(t));
	t.kind = 1;
	t.table = (uint8_t *)table;
	t.table_len = sizeof(table);
	t.table_addr = 0;
	cr_assert_eq(pc_buf_add_unwind(&b, &t), 0);
	cr_assert_gt(b.len, sizeof(table));
	pc_buf_free(&b);
}

/* ---- .debug_frame (format kind 1) ----------------------------------------- */

/* The same two functions as a .debug_frame: CIE id 0xffffffff, no
 * augmentation (8-byte absolute addresses), FDE CIE pointers as section
 * offsets, as Go's linker writes them. */
static void debug_cie(struct eh *e)
{
	size_t start = e->n;
	static const uint8_t body[] = {
		3, 0, 1, 0x78, 16,                      /* version 3, "", 1, -8, RA 16 */
		0x0c, 7, 8,                             /* def_cfa rsp 8 */
		0x90, 1,                                /* offset RA, 1 * -8 */
	};
	put32(e, 0);
	put32(e, 0xffffffffu);
	put(e, body, sizeof(body));
	pad4(e, start);
}

static void debug_fde(struct eh *e, uint64_t lo, uint64_t hi, const uint8_t *ins, size_t nins)
{
	size_t start = e->n;
	uint64_t range = hi - lo;

	put32(e, 0);
	put32(e, 0);                            /* the CIE at offset 0 */
	put(e, &lo, 8);
	put(e, &range, 8);
	put(e, ins, nins);
	pad4(e, start);
}

static void debug_table(struct eh *e, struct pc_unwind_table *t)
{
	static const uint8_t undefined_ra[] = { 0x07, 16 };

	debug_cie(e);
	debug_fde(e, 0x1000, 0x1100, NULL, 0);
	debug_fde(e, 0x1800, 0x1900, NULL, 0);
	debug_fde(e, 0x2000, 0x2100, undefined_ra, sizeof(undefined_ra));
	memset(t, 0, sizeof(*t));
	t->kind = PC_UNWIND_DEBUG_FRAME;
	t->table = e->b;
	t->table_len = (uint32_t)e->n;
}

Test(unwind, debug_frame_walks_like_eh_frame)
{
	struct eh e = { .n = 0 };
	struct pc_unwind_table t;
	struct unwind_cfi *c;
	const char *why = NULL;
	uint64_t stack[4] = { 0x2010, 0, 0, 0 };
	struct unwind_result r;

	debug_table(&e, &t);
	c = unwind_cfi_new(&t, &why);
	cr_assert_not_null(c, "%s", why ? why : "?");
	r = walk(c, 0x1010, stack, 4);
	cr_assert_eq(r.stop, UNWIND_END, "stop %s", unwind_stop_name(r.stop));
	cr_assert_eq(r.n, 2);
	unwind_cfi_free(c);
}

/* Pruned to the two functions the stack passes through, the .debug_frame
 * walks the same, and the third function is gone. */
Test(unwind, debug_frame_pruned)
{
	struct eh e = { .n = 0 };
	struct pc_unwind_table t;
	struct pc_unwind_prune_stats st;
	struct unwind_cfi *c;
	const char *why = NULL;
	const uint64_t cand[] = { 0x1010, 0x200f, 0x2010 };
	uint64_t stack[4] = { 0x2010, 0, 0, 0 };
	struct unwind_result r;

	debug_table(&e, &t);
	t.table = malloc(t.table_len);                 /* pruning replaces it */
	cr_assert_not_null(t.table);
	memcpy(t.table, e.b, t.table_len);
	cr_assert_eq(pc_unwind_table_prune(&t, cand, 3, &st), 1);
	cr_expect_eq(st.fdes, 3);
	cr_expect_eq(st.kept, 2);
	cr_expect_gt(st.blanked_bytes, 0);
	c = unwind_cfi_new(&t, &why);
	cr_assert_not_null(c, "pruned .debug_frame refused: %s", why ? why : "?");
	r = walk(c, 0x1010, stack, 4);
	cr_assert_eq(r.stop, UNWIND_END, "stop %s", unwind_stop_name(r.stop));
	cr_assert_eq(r.n, 2);
	r = walk(c, 0x1810, stack, 4);
	cr_expect_neq(r.stop, UNWIND_END, "a dropped function still unwinds");
	unwind_cfi_free(c);
	free(t.table);
}

/* Two tables for one module (a cgo binary: .eh_frame for the C side, a
 * .debug_frame made from the pclntab for the Go side): a pc the first has
 * no row for is looked up in the chained second. */
Test(unwind, chained_tables)
{
	static const uint8_t undefined_ra[] = { 0x07, 16 };
	struct eh e = { .n = 0 }, d = { .n = 0 };
	struct pc_unwind_table t, dt;
	struct unwind_cfi *c, *second;
	const char *why = NULL;
	uint64_t stack[4] = { 0x2010, 0, 0, 0 };
	struct unwind_result r;

	cie(&e);
	fde(&e, 0x1000, 0x1100, NULL, 0);               /* F only */
	c = cfi_of(&e, &t);
	cr_assert_not_null(c);
	r = walk(c, 0x1010, stack, 4);
	cr_assert_eq(r.stop, UNWIND_NO_CFI, "G has no row yet: %s", unwind_stop_name(r.stop));
	debug_cie(&d);
	debug_fde(&d, 0x2000, 0x2100, undefined_ra, sizeof(undefined_ra)); /* G */
	memset(&dt, 0, sizeof(dt));
	dt.kind = PC_UNWIND_DEBUG_FRAME;
	dt.table = d.b;
	dt.table_len = (uint32_t)d.n;
	second = unwind_cfi_new(&dt, &why);
	cr_assert_not_null(second, "%s", why ? why : "?");
	unwind_cfi_chain(c, second);
	r = walk(c, 0x1010, stack, 4);
	cr_assert_eq(r.stop, UNWIND_END, "stop %s", unwind_stop_name(r.stop));
	cr_assert_eq(r.n, 2);
	unwind_cfi_free(c);                              /* and the chained one */
}
