/* fixture_prog.c - a small PIE program whose functions the symbolizer tests
 * resolve. The MARK_ comments name the lines the tests expect; the tests find
 * them by reading this file, so the code may move freely. */
#include <stdio.h>

__attribute__((noinline)) int leaf_work(int x) { return x * 3 + 1; } /* MARK_leaf */

static inline __attribute__((always_inline)) int inline_helper(int x)
{
	return x * x + 7; /* MARK_inline_body */
}

__attribute__((noinline)) int inline_caller(int x)
{
	int y = inline_helper(x); /* MARK_inline_call */

	return y + leaf_work(y);
}

__attribute__((noinline)) int not_embedded(int x) { return x - 5; }

int main(int argc, char **argv)
{
	(void)argv;
	printf("%d\n", inline_caller(argc) + not_embedded(argc));
	return 0;
}
