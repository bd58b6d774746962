/* two_sites.c - a thread that blocks at one place from two callers of the
 * same depth, in turn: site_short and site_long each call nap_for(), which
 * sleeps in nanosleep(). The waits of the two callers have the same user
 * ip, sp and system call (and equal callee-saved registers, as far as the
 * compiler lets them be); only the return address into site_short or
 * site_long, on the stack, tells them apart. An off-CPU stack copy that
 * stands for the thread's later waits at the same place (perfcap-record
 * --offcpu-stack-reuse) must not give one caller's wait the other's stack.
 * The waits alternate, short (2 ms) then long (12 ms), so their order and
 * their length say which caller each was. With BURST, each wait follows
 * BURST brief ones (20 us naps elsewhere, never recorded): a thread that
 * blocks mostly briefly, whose recorded waits the recorder does not
 * fingerprint (bpf/sched.bpf.c, HEAD_AFTER_RECORDED).
 *
 * Usage: two_sites [ROUNDS [BURST]]  (default 100 0)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* noipa: neither inlined nor cloned per constant argument, so both
 * callers reach the same nap_for. */
__attribute__((noipa)) static int nap_for(long ms)
{
	struct timespec t = { 0, ms * 1000 * 1000 };

	return nanosleep(&t, NULL);
}

__attribute__((noipa)) static int site_short(void)
{
	return nap_for(2) + 1;
}

__attribute__((noipa)) static int site_long(void)
{
	return nap_for(12) + 1;
}

__attribute__((noipa)) static int burst(int n)
{
	struct timespec t = { 0, 20 * 1000 };
	int acc = 0;

	for (int i = 0; i < n; i++)
		acc += nanosleep(&t, NULL);
	return acc;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 100, acc = 0;
	int brief = argc > 2 ? atoi(argv[2]) : 0;

	for (int i = 0; i < rounds; i++) {
		acc += burst(brief);
		acc += site_short();
		acc += burst(brief);
		acc += site_long();
	}
	printf("two_sites: %d rounds (%d)\n", rounds, acc);
	return 0;
}
