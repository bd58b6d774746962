/* epoll_waits.c - one thread calls epoll_wait(2) with a timeout COUNT
 * times on an epoll instance that never becomes ready, so each call waits
 * the whole timeout: the known load of the mux source's test.
 * Prints "tid=T epfd=E" (the waiting thread) on stdout first, then
 * "call I NS" for each call: its duration as the thread measured it around
 * the call (CLOCK_MONOTONIC), which encloses the kernel's part of it. The
 * timeout is only a minimum: on a busy host the wakeup comes later.
 * Usage: epoll_waits COUNT TIMEOUT_MS
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

struct waits {
	int count;
	int timeout_ms;
	int epfd;
};

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void *waiter(void *arg)
{
	struct waits *w = arg;
	struct epoll_event ev;

	printf("tid=%d epfd=%d\n", gettid(), w->epfd);
	fflush(stdout);
	for (int i = 0; i < w->count; i++) {
		long long t0 = now_ns();

		if (epoll_wait(w->epfd, &ev, 1, w->timeout_ms) < 0)
			perror("epoll_waits: epoll_wait");
		printf("call %d %lld\n", i, now_ns() - t0);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct waits w = {
		.count = argc > 1 ? atoi(argv[1]) : 10,
		.timeout_ms = argc > 2 ? atoi(argv[2]) : 20,
	};
	pthread_t t;

	if (w.count <= 0 || w.timeout_ms <= 0) {
		fprintf(stderr, "usage: epoll_waits COUNT TIMEOUT_MS\n");
		return 2;
	}
	w.epfd = epoll_create1(0);
	if (w.epfd < 0) {
		perror("epoll_waits: epoll_create1");
		return 1;
	}
	if (pthread_create(&t, NULL, waiter, &w))
		return 1;
	pthread_join(t, NULL);
	return 0;
}
