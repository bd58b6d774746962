/* cpu_contend.c - acceptance workload "CPU contention": a victim and
 * competing hog processes pinned (sched_setaffinity) to the same CPU.
 *
 *   cpu_contend hog CPU SECONDS      burn CPU on CPU for SECONDS
 *   cpu_contend victim CPU SECONDS   the same, timing itself
 *
 * The victim never blocks, so the part of its wall time it did not run was
 * run-queue wait. It prints
 *   measured_runnable_ns=NS   wall time - CLOCK_THREAD_CPUTIME_ID time
 *   victim_cpu_ns=NS wall_ns=NS
 * The end-to-end test starts three hogs, then records only the victim.
 */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile uint64_t sink;

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void crunch(void)
{
	uint64_t x = sink;

	for (int i = 0; i < 20000; i++)
		x = x * 6364136223846793005ull + 1;
	sink = x;
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0) {
		perror("cpu_contend: sched_setaffinity");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int cpu = argc == 4 ? atoi(argv[2]) : -1;
	double seconds = argc == 4 ? atof(argv[3]) : 0;
	uint64_t wall0, cpu0, end, wall, used;

	if (argc != 4 || (strcmp(argv[1], "hog") && strcmp(argv[1], "victim")) || cpu < 0 ||
	    seconds <= 0 || seconds > 600) {
		fprintf(stderr, "usage: cpu_contend hog|victim CPU SECONDS\n");
		return 2;
	}
	if (pin(cpu) < 0)
		return 1;
	wall0 = clock_ns(CLOCK_MONOTONIC);
	cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	end = wall0 + (uint64_t)(seconds * 1e9);
	while (clock_ns(CLOCK_MONOTONIC) < end)
		crunch();
	wall = clock_ns(CLOCK_MONOTONIC) - wall0;
	used = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	if (strcmp(argv[1], "victim") == 0) {
		printf("measured_runnable_ns=%llu\n", (unsigned long long)(wall - used));
		printf("victim_cpu_ns=%llu wall_ns=%llu\n", (unsigned long long)used,
		       (unsigned long long)wall);
	}
	return 0;
}
