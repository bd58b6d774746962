/* lock_convoy.c - 4 threads fight over one pthread mutex, each holding it
 * 5 ms per round for ROUNDS rounds: a lock convoy with a known answer.
 *
 * Each thread times its own pthread_mutex_lock calls with CLOCK_MONOTONIC
 * and the program prints, for the end-to-end test of the lock source:
 *   mutex=0xADDR                       the mutex's address
 *   waiter tid=TID waits=N wait_ns=NS  per thread (waits: calls >= 10 us)
 *   total_wait_ns=NS                   the sum over all calls
 * The holder sleeps while it holds the lock (no CPU burnt on 2 cores), and
 * after unlocking sleeps 1 ms, so a woken waiter can take the lock.
 * DELAY_MS: sleep that long first (for a recorder attaching with -p).
 * Usage: lock_convoy [ROUNDS [DELAY_MS]] (default 20 rounds, no delay).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define THREADS  4
#define HOLD_NS  (5 * 1000 * 1000)
#define GAP_NS   (1 * 1000 * 1000)
#define WAIT_MIN_NS 10000

static pthread_mutex_t convoy = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t start;
static int rounds;

struct waiter {
	pthread_t thread;
	pid_t tid;
	int waits;
	uint64_t wait_ns;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void nap(long ns)
{
	struct timespec ts = { 0, ns };

	while (nanosleep(&ts, &ts) != 0)
		;
}

__attribute__((noinline)) static void hold_convoy(struct waiter *w)
{
	uint64_t t0 = now_ns(), waited;

	pthread_mutex_lock(&convoy);
	waited = now_ns() - t0;
	w->wait_ns += waited;
	w->waits += waited >= WAIT_MIN_NS;
	nap(HOLD_NS);
	pthread_mutex_unlock(&convoy);
}

static void *fight(void *arg)
{
	struct waiter *w = arg;

	w->tid = (pid_t)syscall(SYS_gettid);
	pthread_barrier_wait(&start);
	for (int i = 0; i < rounds; i++) {
		hold_convoy(w);
		nap(GAP_NS);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct waiter w[THREADS] = { 0 };
	uint64_t total = 0;

	int delay_ms = argc > 2 ? atoi(argv[2]) : 0;

	rounds = argc > 1 ? atoi(argv[1]) : 20;
	if (rounds <= 0 || rounds > 100000 || delay_ms < 0 || delay_ms > 600000) {
		fprintf(stderr, "usage: lock_convoy [ROUNDS (1-100000) [DELAY_MS]]\n");
		return 2;
	}
	for (int i = 0; i < delay_ms; i++)
		nap(1000 * 1000);
	pthread_barrier_init(&start, NULL, THREADS);
	for (int i = 0; i < THREADS; i++) {
		if (pthread_create(&w[i].thread, NULL, fight, &w[i])) {
			perror("lock_convoy: pthread_create");
			return 1;
		}
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(w[i].thread, NULL);
	printf("mutex=%p\n", (void *)&convoy);
	for (int i = 0; i < THREADS; i++) {
		printf("waiter tid=%d waits=%d wait_ns=%llu\n", (int)w[i].tid, w[i].waits,
		       (unsigned long long)w[i].wait_ns);
		total += w[i].wait_ns;
	}
	printf("total_wait_ns=%llu\n", (unsigned long long)total);
	return 0;
}
