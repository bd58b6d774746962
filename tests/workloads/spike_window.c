/* spike_window.c - acceptance workload "latency spike window" (book
 * 12.1): a loop serves a steady stream of requests, one every 10 ms, each
 * 0.5 ms of computation and a 4 KiB write to a file, waiting for the next
 * one in poll() (an event loop idle between requests). From BEFORE_S to
 * BEFORE_S + SPIKE_S every request also fsync()s the file: I/O time rises,
 * computation per request stays the same.
 *
 * Ground truth (CLOCK_MONOTONIC):
 *   spike_start_ns=NS spike_end_ns=NS   the window with fsyncs
 *   measured_io_wait_ns=NS   time in write() and fsync(), all requests
 *   requests_before=N requests_spike=N requests_after=N
 * Usage: spike_window FILE [BEFORE_S SPIKE_S AFTER_S] (default 2 1.5 0.5).
 */
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PERIOD_NS 10000000ull
#define CHUNK 4096

static volatile uint64_t sink;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* About 0.5 ms of arithmetic. */
__attribute__((noinline)) static void compute_answer(void)
{
	uint64_t x = sink;

	for (int i = 0; i < 50000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
}

__attribute__((noinline)) static uint64_t store_result(int fd, const char *buf, int n, int sync)
{
	uint64_t t0 = now_ns();

	if (pwrite(fd, buf, CHUNK, (off_t)(n % 1024) * CHUNK) != CHUNK ||
	    (sync && fsync(fd) != 0)) {
		perror("spike_window: write");
		exit(1);
	}
	return now_ns() - t0;
}

int main(int argc, char **argv)
{
	static char buf[CHUNK];
	double before = argc > 4 ? atof(argv[2]) : 2, spike = argc > 4 ? atof(argv[3]) : 1.5;
	double after = argc > 4 ? atof(argv[4]) : 0.5;
	uint64_t start, s0, s1, end, next, io = 0;
	int fd, n = 0, counts[3] = { 0, 0, 0 };

	if ((argc != 2 && argc != 5) || before <= 0 || spike <= 0 || after < 0) {
		fprintf(stderr, "usage: spike_window FILE [BEFORE_S SPIKE_S AFTER_S]\n");
		return 2;
	}
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	memset(buf, 'r', sizeof(buf));
	start = now_ns();
	s0 = start + (uint64_t)(before * 1e9);
	s1 = s0 + (uint64_t)(spike * 1e9);
	end = s1 + (uint64_t)(after * 1e9);
	for (next = start; next < end; next += PERIOD_NS) {
		uint64_t t = now_ns();
		int phase;

		if (t < next)
			poll(NULL, 0, (int)((next - t + 999999) / 1000000));
		t = now_ns();
		phase = t < s0 ? 0 : t < s1 ? 1 : 2;
		compute_answer();
		io += store_result(fd, buf, n++, phase == 1);
		counts[phase]++;
		if (next + PERIOD_NS < t)
			next = t - PERIOD_NS + 1; /* behind: no burst to catch up */
	}
	close(fd);
	unlink(argv[1]);
	printf("spike_start_ns=%llu spike_end_ns=%llu\n", (unsigned long long)s0,
	       (unsigned long long)s1);
	printf("measured_io_wait_ns=%llu\n", (unsigned long long)io);
	printf("requests_before=%d requests_spike=%d requests_after=%d\n", counts[0], counts[1],
	       counts[2]);
	return 0;
}
