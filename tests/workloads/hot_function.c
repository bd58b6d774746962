/* hot_function.c - acceptance workload "CPU hot function": one thread
 * spends about 80% of its CPU time in hot_spin() and the rest in
 * warm_spin(), both leaf functions (no calls inside), for SECONDS.
 *
 * Ground truth, measured with CLOCK_THREAD_CPUTIME_ID around each call and
 * CLOCK_PROCESS_CPUTIME_ID at the end:
 *   hot_function=hot_spin
 *   hot_cpu_ns=NS process_cpu_ns=NS
 *   measured_self_share_pct=P   100 * hot_cpu_ns / process_cpu_ns
 * Usage: hot_function [SECONDS] (default 2).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* About 1 ms of arithmetic per call on this class of machine. */
__attribute__((noinline)) void hot_spin(int rounds)
{
	uint64_t x = sink;

	for (int i = 0; i < rounds * 100000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
}

__attribute__((noinline)) void warm_spin(int rounds)
{
	uint64_t x = sink;

	for (int i = 0; i < rounds * 100000; i++)
		x = (x ^ (x >> 7)) * 2862933555777941757ull + 3037000493ull;
	sink = x;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2;
	uint64_t end, hot = 0, t0, t1, process;

	if (seconds <= 0 || seconds > 600) {
		fprintf(stderr, "usage: hot_function [SECONDS (0-600)]\n");
		return 2;
	}
	end = clock_ns(CLOCK_MONOTONIC) + (uint64_t)(seconds * 1e9);
	while (clock_ns(CLOCK_MONOTONIC) < end) {
		t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		hot_spin(4);
		t1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		hot += t1 - t0;
		warm_spin(1);
	}
	process = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	printf("hot_function=hot_spin\n");
	printf("hot_cpu_ns=%llu process_cpu_ns=%llu\n", (unsigned long long)hot,
	       (unsigned long long)process);
	printf("measured_self_share_pct=%.1f\n", 100.0 * (double)hot / (double)process);
	return 0;
}
