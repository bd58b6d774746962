/* nofp_chain.c - a workload built -O2 -fomit-frame-pointer (like Debian's
 * packages) whose every CPU sample has the exact user stack
 * main -> level_a -> level_b -> lib_c (lib_c in libnofp_lib.so), spinning
 * and then sleeping at the deepest level. Frame-pointer walks break on it;
 * .eh_frame unwinding must not.
 *
 * Usage: nofp_chain SECONDS [SPIN_MS SLEEP_MS]  (defaults 40 10)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

uint64_t lib_c(uint64_t seed, unsigned spin_ms, unsigned sleep_ms);

/* The calls are not in tail position (the result is used after them), so
 * every level keeps its own frame. */
__attribute__((noinline)) static uint64_t level_b(uint64_t seed, unsigned spin, unsigned nap)
{
	uint64_t r = lib_c(seed ^ 0x5bd1e995u, spin, nap);

	return r ^ (r >> 7);
}

__attribute__((noinline)) static uint64_t level_a(uint64_t seed, unsigned spin, unsigned nap)
{
	uint64_t r = level_b(seed + 1, spin, nap);

	return r + (r << 3);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3;
	unsigned spin = argc > 2 ? (unsigned)atoi(argv[2]) : 40;
	unsigned nap = argc > 3 ? (unsigned)atoi(argv[3]) : 10;
	struct timespec t0, t;
	uint64_t acc = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		acc += level_a(acc, spin, nap);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
	printf("%llu\n", (unsigned long long)(acc & 1));
	return 0;
}
