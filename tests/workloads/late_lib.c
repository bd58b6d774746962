/* late_lib.c - a shared library loaded by dlopen_late only after it has
 * run a while: its one function burns CPU, so a recording shows code from
 * a file that was not mapped when the process started. */
#include <stdint.h>
#include <time.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Spins for ms milliseconds; returns a value that depends on the work. */
__attribute__((noinline)) uint64_t late_lib_spin(int ms)
{
	uint64_t end = now_ns() + (uint64_t)ms * 1000000ull, x = 1;

	while (now_ns() < end) {
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	}
	return x;
}
