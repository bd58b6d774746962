/* test_prune.c - a pruned .eh_frame (common/unwind_prune.c, format 1.6)
 * answers every lookup the recorder kept it for exactly like the whole
 * table, and no other: on the real libc, for candidate addresses spread
 * over the library, libdw finds the same FDE (same range, same CFA rule)
 * in the pruned table, through its header and also by scanning the
 * section in order (the fillers must parse); addresses of dropped FDEs
 * are found in the whole table and not in the pruned one; the checker of
 * captured tables (cfi_check.c) accepts the pruned one with its header;
 * and a table the pruner does not understand is left whole. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/unwind_prune.h"
#include "unwind/unwind_internal.h"

static int load_libc(struct pc_unwind_table *t)
{
	static const char *const paths[] = { "/lib/x86_64-linux-gnu/libc.so.6",
					     "/usr/lib/x86_64-linux-gnu/libc.so.6" };
	char why[256];
	int fd = -1, rc;

	for (size_t i = 0; i < 2 && fd < 0; i++)
		fd = open(paths[i], O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	rc = pc_unwind_table_load_fd(t, fd, "libc.so.6", why, sizeof(why));
	close(fd);
	cr_assert_eq(rc, 0, "%s", why);
	return 0;
}

/* The initial location of the header's entry i. */
static uint64_t entry_loc(const struct pc_unwind_table *t, uint32_t i)
{
	int32_t rel;

	memcpy(&rel, t->hdr + 12 + 8 * (size_t)i, 4);
	return t->hdr_addr + (uint64_t)(int64_t)rel;
}

static uint32_t entry_count(const struct pc_unwind_table *t)
{
	uint32_t n;

	memcpy(&n, t->hdr + 8, 4);
	return n;
}

struct found {
	int ok;
	Dwarf_Addr start, end;
	size_t ncfa;
	Dwarf_Op cfa[8];
};

static struct found lookup(struct unwind_cfi *c, uint64_t addr)
{
	struct found f = { 0 };
	Dwarf_Frame *frame = NULL;
	Dwarf_Op *ops = NULL;

	if (dwarf_cfi_addrframe(c->cfi, addr, &frame) != 0)
		return f;
	f.ok = dwarf_frame_info(frame, &f.start, &f.end, NULL) >= 0 &&
	       dwarf_frame_cfa(frame, &ops, &f.ncfa) == 0 && f.ncfa <= 8;
	if (f.ok)
		memcpy(f.cfa, ops, f.ncfa * sizeof(*ops));
	free(frame);
	return f;
}

static void expect_same(const struct found *a, const struct found *b, uint64_t addr)
{
	cr_assert(a->ok, "whole table: no frame for %#lx", (unsigned long)addr);
	cr_assert(b->ok, "pruned table: no frame for kept %#lx", (unsigned long)addr);
	cr_expect_eq(a->start, b->start, "start differs at %#lx", (unsigned long)addr);
	cr_expect_eq(a->end, b->end, "end differs at %#lx", (unsigned long)addr);
	cr_assert_eq(a->ncfa, b->ncfa);
	for (size_t i = 0; i < a->ncfa; i++) {
		cr_expect_eq(a->cfa[i].atom, b->cfa[i].atom);
		cr_expect_eq(a->cfa[i].number, b->cfa[i].number);
		cr_expect_eq(a->cfa[i].number2, b->cfa[i].number2);
	}
}

#define STEP 61   /* every 61st function of libc is a candidate */

Test(prune, real_libc_keeps_what_candidates_need)
{
	struct pc_unwind_table whole = { 0 }, pruned = { 0 }, scan = { 0 };
	struct pc_unwind_prune_stats st;
	struct unwind_cfi *cw, *cp, *cs;
	const char *why = NULL;
	uint64_t cand[4096];
	size_t n = 0;
	uint32_t count;

	if (load_libc(&whole) < 0 || load_libc(&pruned) < 0 || load_libc(&scan) < 0)
		cr_skip_test("no libc.so.6 at the Debian paths");
	count = entry_count(&whole);
	cr_assert_gt(count, 10 * STEP);
	for (uint32_t i = 0; i < count && n < 4096; i += STEP)
		cand[n++] = entry_loc(&whole, i) + 1;   /* inside the function */
	cr_assert_eq(pc_unwind_table_prune(&pruned, cand, n, &st), 1);
	cr_expect_eq(st.fdes, count);
	cr_expect_geq(st.kept, n / 2);
	cr_expect_leq(st.kept, n);
	cr_expect_gt(st.blanked_bytes, whole.table_len / 2);
	cr_expect_eq(pruned.table_len, whole.table_len, "kept bytes must not move");
	cr_expect_eq(pruned.hdr_len, 12 + 8 * st.kept);

	cw = unwind_cfi_new(&whole, &why);
	cp = unwind_cfi_new(&pruned, &why);
	cr_assert_not_null(cp, "pruned table refused: %s", why ? why : "?");
	cr_assert(unwind_cfi_uses_header(cp), "the pruned header must pass the check");
	/* the same section without its header: libdw walks every entry */
	cr_assert_eq(pc_unwind_table_prune(&scan, cand, n, &st), 1);
	scan.hdr_len = 0;
	cs = unwind_cfi_new(&scan, &why);
	cr_assert_not_null(cs, "pruned table without header refused: %s", why ? why : "?");
	cr_assert(!unwind_cfi_uses_header(cs));

	for (size_t i = 0; i < n; i++) {
		struct found a = lookup(cw, cand[i]), b = lookup(cp, cand[i]), s = lookup(cs, cand[i]);

		expect_same(&a, &b, cand[i]);
		expect_same(&a, &s, cand[i]);
	}
	for (uint32_t i = STEP / 2; i < count; i += STEP) {   /* dropped functions */
		uint64_t addr = entry_loc(&whole, i) + 1;
		struct found a = lookup(cw, addr), b = lookup(cp, addr), s = lookup(cs, addr);

		if (!a.ok)
			continue;
		cr_expect(!b.ok, "dropped %#lx still found through the header", (unsigned long)addr);
		cr_expect(!s.ok, "dropped %#lx still found by the scan", (unsigned long)addr);
	}
	unwind_cfi_free(cw);
	unwind_cfi_free(cp);
	unwind_cfi_free(cs);
	pc_unwind_table_free(&whole);
	pc_unwind_table_free(&pruned);
	pc_unwind_table_free(&scan);
}

/* No candidate in the table: every FDE goes, the CIEs stay. */
Test(prune, no_candidates_blanks_every_fde)
{
	struct pc_unwind_table t = { 0 };
	struct pc_unwind_prune_stats st;
	const char *why = NULL;
	struct unwind_cfi *c;

	if (load_libc(&t) < 0)
		cr_skip_test("no libc.so.6 at the Debian paths");
	cr_assert_eq(pc_unwind_table_prune(&t, NULL, 0, &st), 1);
	cr_expect_eq(st.kept, 0);
	cr_expect_eq(t.hdr_len, 12);
	c = unwind_cfi_new(&t, &why);
	cr_assert_not_null(c, "%s", why ? why : "?");
	unwind_cfi_free(c);
	pc_unwind_table_free(&t);
}

/* Layouts the pruner does not read are left byte for byte: a header with
 * another table encoding, a table whose entries do not hold together (an
 * .eh_frame taken for a .debug_frame: its CIE id 0 reads as an FDE whose
 * CIE is not before it), an entry with the 64-bit length escape. */
Test(prune, unknown_layouts_left_whole)
{
	struct pc_unwind_table t = { 0 };
	struct pc_unwind_prune_stats st;
	uint8_t *before;
	uint32_t len;

	if (load_libc(&t) < 0)
		cr_skip_test("no libc.so.6 at the Debian paths");
	len = t.table_len;
	before = malloc(len);
	cr_assert_not_null(before);
	memcpy(before, t.table, len);

	t.hdr[3] = 0x1b;                                  /* table not datarel */
	cr_expect_eq(pc_unwind_table_prune(&t, NULL, 0, &st), 0);
	cr_expect_eq(memcmp(before, t.table, len), 0);
	t.hdr[3] = 0x3b;

	t.kind = PC_UNWIND_DEBUG_FRAME;
	cr_expect_eq(pc_unwind_table_prune(&t, NULL, 0, &st), 0);
	t.kind = PC_UNWIND_EH_FRAME;

	memset(t.table + len - 4, 0xff, 4);               /* a 64-bit length at the end */
	cr_expect_eq(pc_unwind_table_prune(&t, NULL, 0, &st), 0);
	cr_expect_eq(memcmp(before, t.table, len - 4), 0);
	cr_expect_eq(st.kept, st.fdes);
	free(before);
	pc_unwind_table_free(&t);
}
