/* syscall_storm.c - issues cheap system calls as fast as it can.
 *
 * The load for the recorder's throughput benchmark: THREADS threads each
 * call getppid() (a real syscall, never served by the vDSO) in a loop for
 * SECONDS, optionally at a fixed RATE per thread. Prints the number of
 * calls and the achieved rate, so a benchmark can compare the rate with and
 * without recording and against the recorder's event count.
 * Usage: syscall_storm [THREADS] [SECONDS] [RATE_PER_THREAD|0]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct storm {
	double   seconds;
	double   rate;       /* calls/s per thread, 0 = unlimited */
	uint64_t calls;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Calls in batches of 1000, checking the clock between batches; with a rate,
 * sleeps until the batch is due. */
static void *storm_thread(void *arg)
{
	struct storm *s = arg;
	double start = now_s(), end = start + s->seconds;

	for (double t = start; t < end; t = now_s()) {
		for (int i = 0; i < 1000; i++)
			syscall(SYS_getppid);
		s->calls += 1000;
		if (s->rate > 0) {
			double due = start + (double)s->calls / s->rate;
			while (now_s() < due)
				;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 1;
	double seconds = argc > 2 ? atof(argv[2]) : 5;
	double rate = argc > 3 ? atof(argv[3]) : 0;
	pthread_t tids[64];
	struct storm st[64];
	uint64_t total = 0;
	double start;

	if (threads < 1 || threads > 64 || seconds <= 0 || seconds > 3600 || rate < 0) {
		fprintf(stderr, "usage: syscall_storm [THREADS 1-64] [SECONDS] [RATE_PER_THREAD|0]\n");
		return 2;
	}
	start = now_s();
	for (int i = 0; i < threads; i++) {
		st[i] = (struct storm){ .seconds = seconds, .rate = rate };
		pthread_create(&tids[i], NULL, storm_thread, &st[i]);
	}
	for (int i = 0; i < threads; i++) {
		pthread_join(tids[i], NULL);
		total += st[i].calls;
	}
	printf("syscall_storm: %llu calls in %.2f s: %.0f calls/s\n",
	       (unsigned long long)total, now_s() - start, (double)total / (now_s() - start));
	return 0;
}
