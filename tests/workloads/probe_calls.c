/* probe_calls.c - calls a noinline function, probed_work(), exactly N
 * times, each call sleeping SLEEP_US microseconds, from a caller named
 * probe_caller(); the user probe tests (tests/e2e/probe_uprobe.sh) and
 * bench/probes_cost.sh uprobe it. It measures its own calls with
 * CLOCK_MONOTONIC around each one and prints the truth:
 *   calls=N total_ns=T
 * probed_work(i, sleep_us) returns i * 2, so `ret` and `arg1` can be
 * checked. Each call also makes exactly one nanosleep() call of libc
 * when SLEEP_US > 0 (a probe on a shared library of the target). Usage:
 * probe_calls [N [SLEEP_US [GO_FILE]]] (default 200 calls of 1000 us;
 * SLEEP_US 0: no sleep, the cost benchmark's tight loop; GO_FILE: wait
 * until that file exists before the first call, for -p recordings).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) long probed_work(long i, long sleep_us)
{
	if (sleep_us > 0) {
		struct timespec ts = { sleep_us / 1000000, (sleep_us % 1000000) * 1000 };

		nanosleep(&ts, NULL); /* once: an EINTR (none expected) shortens the call */
	}
	__asm__ volatile("" ::: "memory");
	return i * 2;
}

__attribute__((noinline)) uint64_t probe_caller(long n, long sleep_us)
{
	uint64_t total = 0;

	for (long i = 0; i < n; i++) {
		uint64_t t0 = now_ns();

		probed_work(i, sleep_us);
		total += now_ns() - t0;
	}
	return total;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200;
	long sleep_us = argc > 2 ? atol(argv[2]) : 1000;
	uint64_t t0, total;

	if (argc > 3) {
		printf("waiting for %s\n", argv[3]);
		fflush(stdout);
		while (access(argv[3], F_OK) != 0)
			usleep(10000);
	}
	t0 = now_ns();
	total = probe_caller(n, sleep_us);

	printf("calls=%ld total_ns=%llu wall_ns=%llu\n", n, (unsigned long long)total,
	       (unsigned long long)(now_ns() - t0));
	return 0;
}
