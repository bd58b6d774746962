/* test_go_cfi.c - the call frame information the recorder makes for a
 * stripped Go binary from its pclntab (common/gopclntab_cfi.c) against the
 * Go linker's own .debug_frame of the same build kept unstripped
 * (tests/go/build.sh: go_hot.stripped and go_hot.full differ only in -s -w,
 * so their code is at the same addresses). At every pc where a function's
 * SP delta changes, and just after, libdw must give the same CFA from both
 * tables; every function the candidates touch gets an FDE and no other;
 * the runtime's top frames end a walk. Skips loudly without go. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/gopclntab_cfi.h"
#include "unwind/unwind_internal.h"

static int open_fixture(const char *name)
{
	const char *dir = getenv("GO_FIXTURES");
	char path[4096];
	struct stat st;
	int fd;

	cr_assert_not_null(dir, "GO_FIXTURES not set");
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (stat(path, &st) != 0 || st.st_size == 0) {
		fprintf(stderr, "SKIP: %s is empty: no go at build time; install golang-go\n", path);
		cr_skip_test("no go at build time: %s empty", name);
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0, "%s", path);
	return fd;
}

static int cfa_of(struct unwind_cfi *c, uint64_t pc, Dwarf_Op out[4], size_t *n)
{
	Dwarf_Frame *frame = NULL;
	Dwarf_Op *ops = NULL;
	int ok;

	if (dwarf_cfi_addrframe(c->cfi, pc, &frame) != 0)
		return 0;
	ok = dwarf_frame_cfa(frame, &ops, n) == 0 && *n <= 4;
	if (ok)
		memcpy(out, ops, *n * sizeof(*ops));
	free(frame);
	return ok;
}

struct check {
	struct unwind_cfi *ours, *go;
	uint64_t compared, differ;
};

static void same_cfa(struct check *k, uint64_t pc)
{
	Dwarf_Op a[4], b[4];
	size_t na = 0, nb = 0;

	if (!cfa_of(k->go, pc, b, &nb))
		return;                        /* Go's table has no row here either */
	cr_assert(cfa_of(k->ours, pc, a, &na), "no row of ours at %#lx", (unsigned long)pc);
	k->compared++;
	if (na != nb || memcmp(a, b, na * sizeof(a[0])) != 0)
		k->differ++;
}

static void on_run(void *ctx, uint64_t start, uint64_t end, int32_t delta)
{
	(void)delta;
	same_cfa(ctx, start);
	if (start + 1 < end)
		same_cfa(ctx, start + 1);
}

Test(go_cfi, pclntab_rows_match_go_debug_frame)
{
	int fs = open_fixture("go_hot.stripped"), ff = open_fixture("go_hot.full");
	struct pc_unwind_table ours = { 0 }, go = { 0 };
	struct pc_go_pclntab g;
	struct check k = { 0 };
	const char *why = NULL;
	uint64_t *cand;
	uint32_t nfdes = 0;
	char msg[128];

	cr_assert_eq(pc_elf_go_pclntab_fd(fs, &g), 0);
	cr_assert_gt(g.nfuncs, 100);
	cand = calloc(g.nfuncs, sizeof(*cand));
	cr_assert_not_null(cand);
	for (size_t i = 0; i < g.nfuncs; i++)          /* every function: sorted */
		cand[i] = g.funcs[i].entry + 1;
	cr_assert_eq(pc_unwind_table_from_go(&ours, &g, cand, g.nfuncs, &nfdes), 0);
	cr_expect_geq(nfdes, g.nfuncs * 9 / 10, "%u FDEs for %zu functions", nfdes, g.nfuncs);
	cr_expect_eq(ours.flags, PC_UNWIND_F_PRUNED | PC_UNWIND_F_SYNTHESIZED);
	cr_assert_eq(pc_unwind_table_load_fd(&go, ff, "go_hot.full", msg, sizeof(msg)), 0, "%s", msg);
	cr_assert_eq(go.kind, PC_UNWIND_DEBUG_FRAME, "go_hot.full should carry a .debug_frame only");

	k.ours = unwind_cfi_new(&ours, &why);
	cr_assert_not_null(k.ours, "synthesized table refused: %s", why ? why : "?");
	k.go = unwind_cfi_new(&go, &why);
	cr_assert_not_null(k.go, "Go's .debug_frame refused: %s", why ? why : "?");
	for (size_t i = 0; i < g.nfuncs; i++)
		if (g.funcs[i].pcsp)
			pc_gopclntab_sp_deltas(g.data, g.len, &g.funcs[i], g.quantum, on_run, &k);
	fprintf(stderr, "go_cfi: %lu CFA rows compared, %lu differ, %u FDEs\n",
		(unsigned long)k.compared, (unsigned long)k.differ, nfdes);
	cr_expect_gt(k.compared, 1000);
	cr_expect_eq(k.differ, 0, "%lu of %lu CFA rows differ from Go's own", (unsigned long)k.differ,
		     (unsigned long)k.compared);

	unwind_cfi_free(k.ours);
	unwind_cfi_free(k.go);
	pc_unwind_table_free(&ours);
	pc_unwind_table_free(&go);
	pc_elf_go_pclntab_free(&g);
	free(cand);
	close(fs);
	close(ff);
}

/* Only the functions the candidates touch get an FDE. */
Test(go_cfi, only_candidates_functions)
{
	int fs = open_fixture("go_hot.stripped");
	struct pc_unwind_table t = { 0 };
	struct pc_go_pclntab g;
	uint64_t cand[3];
	uint32_t nfdes = 0;
	size_t hot = SIZE_MAX;

	cr_assert_eq(pc_elf_go_pclntab_fd(fs, &g), 0);
	for (size_t i = 0; i < g.nfuncs && hot == SIZE_MAX; i++)
		if (!strcmp(g.funcs[i].name, "main.hotLoop"))
			hot = i;
	cr_assert_neq(hot, SIZE_MAX, "no main.hotLoop");
	cand[0] = g.funcs[hot].entry;
	cand[1] = g.funcs[hot].entry + 3;               /* the same function */
	cand[2] = g.funcs[hot].entry + g.funcs[hot].size; /* the next one */
	cr_assert_eq(pc_unwind_table_from_go(&t, &g, cand, 3, &nfdes), 0);
	cr_expect_eq(nfdes, 2);
	pc_unwind_table_free(&t);
	cr_expect_eq(pc_unwind_table_from_go(&t, &g, NULL, 0, &nfdes), -ENOENT);
	pc_elf_go_pclntab_free(&g);
	close(fs);
}
