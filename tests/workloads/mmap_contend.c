/* mmap_contend.c - threads that map, touch and unmap anonymous memory in a
 * loop, all in one address space, so they contend for the kernel's
 * mmap_lock (an rwsem taken for writing by mmap and munmap): kernel lock
 * contention for the end-to-end test of the lock source. The amount of
 * contention depends on the machine; the test only counts it.
 * Usage: mmap_contend [THREADS [MILLISECONDS]] (default 4 threads, 500 ms).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#define MAX_THREADS 64
#define MAP_BYTES   (64 * 4096)

static uint64_t end_ns;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void map_touch_unmap(void)
{
	char *p = mmap(NULL, MAP_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	if (p == MAP_FAILED)
		return;
	for (int off = 0; off < MAP_BYTES; off += 4096)
		p[off] = 1;
	munmap(p, MAP_BYTES);
}

static void *churn(void *arg)
{
	unsigned long *rounds = arg;

	while (now_ns() < end_ns) {
		map_touch_unmap();
		(*rounds)++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 1 ? atoi(argv[1]) : 4;
	int ms = argc > 2 ? atoi(argv[2]) : 500;
	pthread_t threads[MAX_THREADS];
	unsigned long rounds[MAX_THREADS] = { 0 }, total = 0;

	if (nthreads < 1 || nthreads > MAX_THREADS || ms < 1 || ms > 600000) {
		fprintf(stderr, "usage: mmap_contend [THREADS (1-%d) [MILLISECONDS]]\n",
			MAX_THREADS);
		return 2;
	}
	end_ns = now_ns() + (uint64_t)ms * 1000000ull;
	for (int i = 0; i < nthreads; i++) {
		if (pthread_create(&threads[i], NULL, churn, &rounds[i])) {
			perror("mmap_contend: pthread_create");
			return 1;
		}
	}
	for (int i = 0; i < nthreads; i++) {
		pthread_join(threads[i], NULL);
		total += rounds[i];
	}
	printf("mmap_contend: %d threads, %lu map/touch/unmap rounds\n", nthreads, total);
	return 0;
}
