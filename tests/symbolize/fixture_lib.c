/* fixture_lib.c - a shared library linked at a nonzero base address, so
 * file offsets and virtual addresses differ in every segment. */

__attribute__((noinline)) int lib_leaf(int x) { return x * 5 + 2; } /* MARK_lib_leaf */

static inline __attribute__((always_inline)) int lib_inline(int x)
{
	return x ^ 0x55; /* MARK_lib_inline */
}

int lib_entry(int x)
{
	return lib_leaf(lib_inline(x)); /* MARK_lib_call */
}
