/* lock_storm.c - acceptance workload "lock convoy": WORKERS threads (8)
 * take one pthread mutex ROUNDS times each and hold it HOLD_US (2 ms)
 * while sleeping (a slow operation under the lock), then pause 0.5 ms.
 * Every other worker queues behind the holder: the process's time is
 * mostly waiting for that one lock.
 *
 * Ground truth: each worker times its pthread_mutex_lock calls with
 * CLOCK_MONOTONIC; the program prints
 *   mutex=0xADDR
 *   measured_wait_ns=NS   the sum over all workers and calls
 *   measured_hold_ns=NS   time the lock was held, summed
 * Usage: lock_storm [ROUNDS [WORKERS [HOLD_US]]] (default 40 8 2000).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_WORKERS 64
#define PAUSE_NS 500000L

static pthread_mutex_t storm_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t start;
static int rounds;
static long hold_ns;

struct worker {
	pthread_t thread;
	uint64_t wait_ns, hold_ns;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void nap(long ns)
{
	struct timespec ts = { ns / 1000000000L, ns % 1000000000L };

	while (nanosleep(&ts, &ts) != 0)
		;
}

__attribute__((noinline)) static void update_shared_state(struct worker *w)
{
	uint64_t t0 = now_ns(), t1;

	pthread_mutex_lock(&storm_lock);
	t1 = now_ns();
	w->wait_ns += t1 - t0;
	nap(hold_ns);
	w->hold_ns += now_ns() - t1;
	pthread_mutex_unlock(&storm_lock);
}

static void *work(void *arg)
{
	struct worker *w = arg;

	pthread_barrier_wait(&start);
	for (int i = 0; i < rounds; i++) {
		update_shared_state(w);
		nap(PAUSE_NS);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static struct worker w[MAX_WORKERS];
	int workers = argc > 2 ? atoi(argv[2]) : 8;
	uint64_t wait = 0, held = 0;

	rounds = argc > 1 ? atoi(argv[1]) : 40;
	hold_ns = 1000L * (argc > 3 ? atol(argv[3]) : 2000);
	if (rounds <= 0 || rounds > 100000 || workers < 2 || workers > MAX_WORKERS ||
	    hold_ns <= 0 || hold_ns > 1000000000L) {
		fprintf(stderr, "usage: lock_storm [ROUNDS [WORKERS (2-64) [HOLD_US]]]\n");
		return 2;
	}
	pthread_barrier_init(&start, NULL, (unsigned)workers);
	for (int i = 0; i < workers; i++)
		if (pthread_create(&w[i].thread, NULL, work, &w[i])) {
			perror("lock_storm: pthread_create");
			return 1;
		}
	for (int i = 0; i < workers; i++) {
		pthread_join(w[i].thread, NULL);
		wait += w[i].wait_ns;
		held += w[i].hold_ns;
	}
	printf("mutex=%p\n", (void *)&storm_lock);
	printf("measured_wait_ns=%llu\n", (unsigned long long)wait);
	printf("measured_hold_ns=%llu\n", (unsigned long long)held);
	return 0;
}
