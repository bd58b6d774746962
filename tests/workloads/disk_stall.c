/* disk_stall.c - acceptance workload "disk stall": a storm process
 * floods the disk with large fsync'd writes while a victim makes small
 * fsync'd writes; the victim's writes wait behind the storm's.
 *
 *   disk_stall storm FILE SECONDS   write 8 MiB (O_DIRECT: straight to the
 *                                   device queue) + fsync() in a loop
 *   disk_stall victim FILE N        N times: write 4 KiB + fsync()
 *
 * The victim times each write() and fsync() with CLOCK_MONOTONIC and
 * CLOCK_THREAD_CPUTIME_ID and prints
 *   measured_io_wait_ns=NS   wall - CPU time in its writes and fsyncs,
 *                            less the run-queue wait the kernel counted for
 *                            the thread meanwhile (/proc/thread-self/
 *                            schedstat): the time it was blocked in them.
 *                            The test runs it SCHED_FIFO, which keeps that
 *                            wait small, but a host whose storms hold the
 *                            CPU in the kernel still made it 89 of 342 ms.
 *   runq_wait_ns=NS          that run-queue wait (-1: no schedstat)
 *   victim_ops=N fsync_mean_ns=NS
 * Both remove FILE at the end. The end-to-end test runs two storms and
 * records only the victim.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define STORM_CHUNK (8 << 20)
#define VICTIM_CHUNK 4096

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int open_file(const char *path, int flags)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | flags, 0600);

	if (fd < 0)
		perror(path);
	return fd;
}

static int storm(const char *path, double seconds)
{
	void *buf = NULL;
	uint64_t end = now_ns() + (uint64_t)(seconds * 1e9);
	int fd = open_file(path, O_DIRECT), n = 0;

	if (posix_memalign(&buf, 4096, STORM_CHUNK) || fd < 0)
		return 1;
	memset(buf, 's', STORM_CHUNK);
	while (now_ns() < end) {
		/* rewrite the same 64 MiB so the file does not grow without bound */
		if (pwrite(fd, buf, STORM_CHUNK, (off_t)(n % 16) * STORM_CHUNK) != STORM_CHUNK ||
		    fsync(fd) != 0) {
			perror("disk_stall: storm write");
			return 1;
		}
		n++;
	}
	close(fd);
	unlink(path);
	free(buf);
	printf("storm_writes=%d\n", n);
	return 0;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The thread's run-queue wait so far (schedstat's second field), ns;
 * -1 when the kernel does not say. */
static int64_t runq_wait_ns(void)
{
	unsigned long long run, wait;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");
	int ok = f && fscanf(f, "%llu %llu", &run, &wait) == 2;

	if (f)
		fclose(f);
	return ok ? (int64_t)wait : -1;
}

/* One 4 KiB write + fsync; returns the time it spent off CPU in them,
 * and adds their run-queue wait to *runq. */
__attribute__((noinline)) static uint64_t write_record(int fd, const char *buf, int i,
						       uint64_t *fsync_ns, int64_t *runq)
{
	int64_t q0 = runq_wait_ns(), q1;
	uint64_t t0 = now_ns(), c0 = cpu_ns(), t1, off;

	if (pwrite(fd, buf, VICTIM_CHUNK, (off_t)i * VICTIM_CHUNK) != VICTIM_CHUNK) {
		perror("disk_stall: victim write");
		exit(1);
	}
	t1 = now_ns();
	if (fsync(fd) != 0) {
		perror("disk_stall: victim fsync");
		exit(1);
	}
	*fsync_ns += now_ns() - t1;
	off = (now_ns() - t0) - (cpu_ns() - c0);
	q1 = runq_wait_ns();
	if (q0 < 0 || q1 < 0 || *runq < 0)
		*runq = -1;
	else
		*runq += q1 - q0;
	return off;
}

static int victim(const char *path, int n)
{
	static char buf[VICTIM_CHUNK];
	uint64_t total = 0, fsyncs = 0;
	int64_t runq = 0;
	int fd = open_file(path, 0);

	if (fd < 0)
		return 1;
	memset(buf, 'v', sizeof(buf));
	for (int i = 0; i < n; i++)
		total += write_record(fd, buf, i, &fsyncs, &runq);
	close(fd);
	unlink(path);
	if (runq > 0 && (uint64_t)runq < total)
		total -= (uint64_t)runq;
	printf("measured_io_wait_ns=%llu\n", (unsigned long long)total);
	printf("runq_wait_ns=%lld\n", (long long)runq);
	printf("victim_ops=%d fsync_mean_ns=%llu\n", n, (unsigned long long)(fsyncs / (uint64_t)n));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "storm") == 0 && atof(argv[3]) > 0)
		return storm(argv[2], atof(argv[3]));
	if (argc == 4 && strcmp(argv[1], "victim") == 0 && atoi(argv[3]) > 0)
		return victim(argv[2], atoi(argv[3]));
	fprintf(stderr, "usage: disk_stall storm FILE SECONDS | disk_stall victim FILE N\n");
	return 2;
}
