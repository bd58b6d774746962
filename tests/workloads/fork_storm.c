/* fork_storm.c - a fork storm of short-lived children, for the recorder's
 * memory bound (issue 16, defect 9): forks N children evenly over SECONDS,
 * each of which burns about WORK_MS of CPU in storm_child_work(), sleeps
 * LINGER_MS (so a recorder finds it alive in /proc) and exits; the parent
 * reaps them as it goes. The children are distinct processes with their
 * own address spaces, threads and stacks, so a recorder that keeps
 * per-process state forever grows with N. With MAPS, the parent first
 * makes MAPS separate anonymous executable mappings (as a JIT runtime
 * has), which every child inherits: each child's address space is then
 * that much larger for the recorder.
 * Usage: fork_storm N [SECONDS [MAPS]] (default 10 s, 0 maps). Prints the
 * children forked.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WORK_MS   3
#define LINGER_MS 30

static volatile uint64_t sink;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* What the capture must name: every child's CPU goes here. */
void storm_child_work(void)
{
	double end = now_s() + WORK_MS / 1000.0;

	while (now_s() < end)
		for (int i = 0; i < 2000; i++)
			sink += (uint64_t)i * 2654435761u;
}

/* n one-page executable mappings with a hole after each, so the kernel
 * does not merge them. */
static int make_exec_maps(long n)
{
	long page = sysconf(_SC_PAGESIZE);
	char *area = mmap(NULL, (size_t)(2 * n * page), PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (area == MAP_FAILED)
		return -1;
	for (long i = 0; i < n; i++)
		if (mprotect(area + 2 * i * page, (size_t)page, PROT_READ | PROT_EXEC))
			return -1;
	return 0;
}

static void reap(int block)
{
	while (waitpid(-1, NULL, block ? 0 : WNOHANG) > 0)
		;
}

static void sleep_until(double t)
{
	double d = t - now_s();
	struct timespec ts;

	if (d <= 0)
		return;
	ts.tv_sec = (time_t)d;
	ts.tv_nsec = (long)((d - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	double secs = argc > 2 ? atof(argv[2]) : 10, start;
	long maps = argc > 3 ? atol(argv[3]) : 0, forked = 0;
	struct timespec linger = { 0, LINGER_MS * 1000000L };

	if (n <= 0 || secs <= 0 || maps < 0) {
		fprintf(stderr, "usage: fork_storm N [SECONDS [MAPS]]\n");
		return 2;
	}
	if (maps && make_exec_maps(maps)) {
		perror("fork_storm: mmap");
		return 2;
	}
	start = now_s();
	for (long i = 0; i < n; i++) {
		pid_t pid;

		sleep_until(start + secs * (double)i / (double)n);
		pid = fork();
		if (pid == 0) {
			storm_child_work();
			nanosleep(&linger, NULL);
			_exit(0);
		}
		if (pid > 0)
			forked++;
		reap(0);
	}
	reap(1);
	printf("forked %ld children\n", forked);
	return forked == n ? 0 : 1;
}
