/* test_kernel.c - kernel addresses resolved from a PC_MODULE_KERNEL record:
 * inside a symbol, at its start, in a symbol without a size, and past the
 * end of the last sized symbol. */
#include <criterion/criterion.h>

#include "common/elf_module.h"
#include "symbolize/symbolize.h"
#include "synthetic.h"

static struct symbolizer *kernel_symbolizer(struct pc_buf *b,
					    const uint64_t *addrs, size_t n)
{
	struct pc_elf_module m;
	struct symbolizer *s = symbolizer_new(NULL);

	cr_assert_not_null(s);
	synthetic_kernel_module(&m);
	cr_assert_eq(pc_buf_add_module(b, &m, addrs, n), 0);
	cr_assert_eq(symbolizer_add_module(s, (const struct pc_rec *)b->data), 0);
	return s;
}

static void assert_kernel_symbol(struct symbolizer *s, uint64_t addr,
				 const char *name, uint64_t sym_offset)
{
	struct sym_frame f;

	cr_assert_eq(symbolizer_resolve_kernel(s, addr, &f), 1);
	cr_assert_not_null(f.function, "0x%lx unresolved", (unsigned long)addr);
	cr_assert_str_eq(f.function, name);
	cr_assert_eq(f.sym_offset, sym_offset);
	cr_assert_eq(f.source, SYM_SRC_KERNEL);
	cr_assert_eq(f.mode, SYM_MODE_SYMBOL);
	cr_assert_str_eq(f.module, "[kernel]");
	cr_assert_eq(f.module_offset, addr);
}

static void assert_kernel_unresolved(struct symbolizer *s, uint64_t addr)
{
	struct sym_frame f;

	cr_assert_eq(symbolizer_resolve_kernel(s, addr, &f), 1);
	cr_assert_null(f.function);
	cr_assert_eq(f.mode, SYM_MODE_UNRESOLVED);
	cr_assert_str_eq(f.module, "[kernel]");
	cr_assert_eq(f.module_offset, addr);
}

Test(kernel, symbols_inside_start_and_past_end)
{
	struct pc_buf b = { 0 };
	struct symbolizer_stats st;
	struct symbolizer *s = kernel_symbolizer(&b, NULL, 0);

	assert_kernel_symbol(s, KBASE, "k_first", 0);
	assert_kernel_symbol(s, KBASE + 0xff, "k_first", 0xff);
	assert_kernel_symbol(s, KBASE + 0x100, "k_mid", 0);
	assert_kernel_symbol(s, KBASE + 0x1ff, "k_mid", 0xff);
	assert_kernel_symbol(s, KBASE + 0x210, "k_last", 0x10);
	assert_kernel_unresolved(s, KBASE + 0x250);
	assert_kernel_unresolved(s, KBASE - 1);
	assert_kernel_unresolved(s, KBASE + 0x250); /* cached miss */
	symbolizer_get_stats(s, &st);
	cr_assert_eq(st.lookups, 8);
	cr_assert_eq(st.cache_hits, 1);
	cr_assert_eq(st.unresolved, 3);
	symbolizer_free(s);
	pc_buf_free(&b);
}

/* A record keeping only k_mid bounds it where k_last started. */
Test(kernel, reduced_record_keeps_extent_of_unsized_symbol)
{
	uint64_t addrs[] = { KBASE + 0x180 };
	struct pc_buf b = { 0 };
	struct symbolizer *s = kernel_symbolizer(&b, addrs, 1);

	assert_kernel_symbol(s, KBASE + 0x1ff, "k_mid", 0xff);
	assert_kernel_unresolved(s, KBASE + 0x200);
	assert_kernel_unresolved(s, KBASE + 0x50);
	symbolizer_free(s);
	pc_buf_free(&b);
}

Test(kernel, no_kernel_module)
{
	struct symbolizer *s = symbolizer_new(NULL);

	assert_kernel_unresolved(s, KBASE);
	symbolizer_free(s);
}

/* A second record (a kernel module at higher addresses) is not swallowed
 * by the unsized last symbol of the first one. */
Test(kernel, several_records_closest_symbol_wins)
{
	static char strtab[] = "k_open_end\0mod_fn";
	struct pc_symbol image_syms[] = { { KBASE, 0, 0 } };
	struct pc_symbol module_syms[] = { { KBASE + 0x10000, 0x40, 11 } };
	struct pc_elf_module image = { .kind = PC_MODULE_KERNEL,
				       .syms = image_syms, .nsyms = 1,
				       .strtab = strtab,
				       .strtab_len = sizeof(strtab) };
	struct pc_elf_module module = image;
	struct pc_buf b1 = { 0 }, b2 = { 0 };
	struct symbolizer *s = symbolizer_new(NULL);
	struct sym_frame f;

	module.syms = module_syms;
	module.path = "ext4";
	cr_assert_eq(pc_buf_add_module(&b1, &image, NULL, 0), 0);
	cr_assert_eq(pc_buf_add_module(&b2, &module, NULL, 0), 0);
	cr_assert_eq(symbolizer_add_module(s, (const struct pc_rec *)b1.data), 0);
	cr_assert_eq(symbolizer_add_module(s, (const struct pc_rec *)b2.data), 0);
	assert_kernel_symbol(s, KBASE + 0x20, "k_open_end", 0x20);
	symbolizer_resolve_kernel(s, KBASE + 0x10008, &f);
	cr_assert_str_eq(f.function, "mod_fn");
	cr_assert_str_eq(f.module, "ext4");
	cr_assert_eq(f.sym_offset, 8);
	symbolizer_free(s);
	pc_buf_free(&b1);
	pc_buf_free(&b2);
}
