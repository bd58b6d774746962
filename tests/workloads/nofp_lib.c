/* nofp_lib.c - the shared-library half of the nofp_chain workload, built
 * -O2 -fomit-frame-pointer like Debian's packages: lib_c spins on the CPU
 * for spin_ms, then blocks (off CPU) for sleep_ms, at the deepest level of
 * main -> level_a -> level_b -> lib_c. */
#include <stdint.h>
#include <time.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) uint64_t lib_c(uint64_t seed, unsigned spin_ms, unsigned sleep_ms)
{
	volatile uint64_t x = seed;
	uint64_t end = now_ns() + (uint64_t)spin_ms * 1000000ull;
	struct timespec nap = { .tv_sec = sleep_ms / 1000, .tv_nsec = (sleep_ms % 1000) * 1000000l };

	while (now_ns() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	if (sleep_ms)
		nanosleep(&nap, NULL);
	return x;
}
