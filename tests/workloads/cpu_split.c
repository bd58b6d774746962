/* cpu_split.c - burns CPU in two named functions in a 3:1 ratio.
 *
 * The demo workload and the end-to-end test's known answer: burn_a runs
 * three times as many identical iterations as burn_b, so a correct profiler
 * attributes about 75% of the process's samples to burn_a and 25% to
 * burn_b. Usage: cpu_split [SECONDS] (default 3).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ROUND_ITERATIONS 200000u

static volatile uint64_t sink;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Called once per burn so the burners are not leaf functions: GCC sets up
 * no frame pointer in a leaf even with -fno-omit-frame-pointer, which would
 * hide main from frame-pointer stacks. */
__attribute__((noinline)) void round_done(void)
{
	__asm__ volatile("" ::: "memory");
}

/* burn_a and burn_b have the same body on purpose: equal cost per iteration. */
__attribute__((noinline)) void burn_a(uint64_t iterations)
{
	uint64_t x = sink | 1;

	for (uint64_t i = 0; i < iterations; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		sink = x;
	}
	round_done();
}

__attribute__((noinline)) void burn_b(uint64_t iterations)
{
	uint64_t x = sink | 1;

	for (uint64_t i = 0; i < iterations; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		sink = x;
	}
	round_done();
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3.0;
	double end;
	unsigned long rounds = 0;

	if (seconds <= 0 || seconds > 3600) {
		fprintf(stderr, "usage: cpu_split [SECONDS (0-3600]]\n");
		return 2;
	}
	end = now_s() + seconds;
	while (now_s() < end) {
		burn_a(3 * ROUND_ITERATIONS);
		burn_b(ROUND_ITERATIONS);
		rounds++;
	}
	printf("cpu_split: %lu rounds (burn_a 3x, burn_b 1x)\n", rounds);
	return 0;
}
