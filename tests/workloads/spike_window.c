/* spike_window.c - acceptance workload "latency spike window" (book
 * 12.1): a loop serves a steady stream of requests, one every 10 ms, each
 * 1 ms of computation and a 4 KiB write + fsync() to FILE, waiting for
 * the next one in poll() (an event loop idle between requests). From
 * BEFORE_S to BEFORE_S + SPIKE_S two child processes renamed "io_storm"
 * flood the same disk with 8 MiB O_DIRECT writes + fsync() (STORM_FILE.0,
 * STORM_FILE.1):
 * the requests' I/O gets slower, their computation stays the same. The
 * loop runs on the last CPU and the storm on CPU 0, so the interrupts
 * completing the storm's I/O are not charged to the loop's CPU time. Record
 * it with --comm spike_window so the storm stays out of scope (it is the
 * cause's origin, not a thread whose I/O wait is measured).
 *
 * Ground truth (CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID):
 *   spike_start_ns=NS spike_end_ns=NS   the storm's window
 *   measured_io_wait_ns=NS   wall - CPU time in the write()s and fsync()s
 *                            (off CPU in them; the test runs the loop
 *                            SCHED_FIFO so run-queue waits are ~0)
 *   io_before_ns=NS io_spike_ns=NS io_after_ns=NS   the same per phase
 *   requests_before=N requests_spike=N requests_after=N
 * Usage: spike_window FILE STORM_FILE [BEFORE_S SPIKE_S AFTER_S]
 * (default 2 1.5 0.5).
 */
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PERIOD_NS 10000000ull
#define CHUNK 4096
#define STORM_CHUNK (8 << 20)
#define STORMS 2

static volatile uint64_t sink;

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* About 1 ms of arithmetic. */
__attribute__((noinline)) static void compute_answer(void)
{
	uint64_t x = sink;

	for (int i = 0; i < 200000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
}

/* Returns the time spent off CPU in the write and the fsync. */
__attribute__((noinline)) static uint64_t store_result(int fd, const char *buf, int n)
{
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);

	if (pwrite(fd, buf, CHUNK, (off_t)(n % 1024) * CHUNK) != CHUNK || fsync(fd) != 0) {
		perror("spike_window: write");
		exit(1);
	}
	return (clock_ns(CLOCK_MONOTONIC) - t0) - (clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0);
}

/* Runs the caller on CPU cpu only (best effort: a machine with one CPU
 * keeps both on it). */
static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void storm(const char *path)
{
	void *buf = NULL;
	int fd, n = 0;

	prctl(PR_SET_NAME, "io_storm");
	pin(0);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT, 0600);
	if (fd < 0 || posix_memalign(&buf, 4096, STORM_CHUNK)) {
		perror(path);
		_exit(1);
	}
	memset(buf, 's', STORM_CHUNK);
	for (;; n++)
		if (pwrite(fd, buf, STORM_CHUNK, (off_t)(n % 8) * STORM_CHUNK) != STORM_CHUNK ||
		    fsync(fd) != 0)
			_exit(1);
}

int main(int argc, char **argv)
{
	static char buf[CHUNK];
	double before = argc > 5 ? atof(argv[3]) : 2, spike = argc > 5 ? atof(argv[4]) : 1.5;
	double after = argc > 5 ? atof(argv[5]) : 0.5;
	uint64_t start, s0, s1, end, next, io[3] = { 0, 0, 0 };
	int fd, n = 0, counts[3] = { 0, 0, 0 }, phase = 0;
	pid_t child[STORMS];

	if ((argc != 3 && argc != 6) || before <= 0 || spike <= 0 || after < 0) {
		fprintf(stderr, "usage: spike_window FILE STORM_FILE [BEFORE_S SPIKE_S AFTER_S]\n");
		return 2;
	}
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	memset(buf, 'r', sizeof(buf));
	pin((int)sysconf(_SC_NPROCESSORS_ONLN) - 1);
	start = clock_ns(CLOCK_MONOTONIC);
	s0 = start + (uint64_t)(before * 1e9);
	s1 = s0 + (uint64_t)(spike * 1e9);
	end = s1 + (uint64_t)(after * 1e9);
	for (next = start; next < end; next += PERIOD_NS) {
		uint64_t t = clock_ns(CLOCK_MONOTONIC);

		if (t < next)
			poll(NULL, 0, (int)((next - t + 999999) / 1000000));
		t = clock_ns(CLOCK_MONOTONIC);
		if (phase == 0 && t >= s0) {
			phase = 1;
			for (int i = 0; i < STORMS; i++) {
				char path[4096];

				snprintf(path, sizeof(path), "%s.%d", argv[2], i);
				child[i] = fork();
				if (child[i] == 0)
					storm(path);
			}
			s0 = clock_ns(CLOCK_MONOTONIC);
		}
		if (phase == 1 && t >= s1) {
			phase = 2;
			for (int i = 0; i < STORMS; i++) {
				char path[4096];

				kill(child[i], SIGKILL);
				waitpid(child[i], NULL, 0);
				snprintf(path, sizeof(path), "%s.%d", argv[2], i);
				unlink(path);
			}
			s1 = clock_ns(CLOCK_MONOTONIC);
		}
		compute_answer();
		io[phase] += store_result(fd, buf, n++);
		counts[phase]++;
		if (next + PERIOD_NS < t)
			next = t - PERIOD_NS + 1; /* behind: no burst to catch up */
	}
	close(fd);
	unlink(argv[1]);
	printf("spike_start_ns=%llu spike_end_ns=%llu\n", (unsigned long long)s0,
	       (unsigned long long)s1);
	printf("measured_io_wait_ns=%llu\n", (unsigned long long)(io[0] + io[1] + io[2]));
	printf("io_before_ns=%llu io_spike_ns=%llu io_after_ns=%llu\n", (unsigned long long)io[0],
	       (unsigned long long)io[1], (unsigned long long)io[2]);
	printf("requests_before=%d requests_spike=%d requests_after=%d\n", counts[0], counts[1],
	       counts[2]);
	return 0;
}
