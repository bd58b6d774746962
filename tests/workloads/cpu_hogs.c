/* cpu_hogs.c - two threads, "hog1" and "hog2", burning CPU for SECONDS
 * while pinned to the same CPU (sched_setaffinity): each is runnable the
 * whole time but can run only about half of it, so about half of each
 * one's time is run-queue wait. The end-to-end test of the sched source
 * checks that share. Usage: cpu_hogs [SECONDS] [CPU] (default 2, 0).
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

struct hog {
	const char *name;
	int cpu;
	double seconds;
	uint64_t rounds;
};

static volatile uint64_t sink;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void burn(struct hog *h)
{
	double end = now_s() + h->seconds;

	while (now_s() < end) {
		for (int i = 0; i < 10000; i++)
			sink = sink * 6364136223846793005ull + 1;
		h->rounds++;
	}
}

static void *run_hog(void *arg)
{
	struct hog *h = arg;
	cpu_set_t set;

	prctl(PR_SET_NAME, h->name);
	CPU_ZERO(&set);
	CPU_SET(h->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("cpu_hogs: sched_setaffinity");
	burn(h);
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2.0;
	int cpu = argc > 2 ? atoi(argv[2]) : 0;
	struct hog hogs[2] = { { "hog1", cpu, seconds, 0 }, { "hog2", cpu, seconds, 0 } };
	pthread_t threads[2];

	if (seconds <= 0 || seconds > 3600 || cpu < 0) {
		fprintf(stderr, "usage: cpu_hogs [SECONDS (0-3600]] [CPU]\n");
		return 2;
	}
	for (int i = 0; i < 2; i++) {
		if (pthread_create(&threads[i], NULL, run_hog, &hogs[i])) {
			perror("cpu_hogs: pthread_create");
			return 1;
		}
	}
	for (int i = 0; i < 2; i++)
		pthread_join(threads[i], NULL);
	printf("cpu_hogs: hog1 %llu rounds, hog2 %llu rounds on CPU %d\n",
	       (unsigned long long)hogs[0].rounds, (unsigned long long)hogs[1].rounds, cpu);
	return 0;
}
