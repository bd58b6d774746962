/* diff_workload.c - one program for the diff end-to-end tests: a small
 * request/response server with a known cost per request, plus a lock
 * convoy, and flags that inject one regression each:
 *
 *   --slow-func             hot_func does twice the work (2x its CPU time)
 *   --lock-hold-extra-ms N  the locker holds the shared mutex N ms longer
 *   --fsync-per-request     each request writes 4 KiB and fsyncs it
 *   --sleep-ms N            each request sleeps N ms in slow_path()
 *
 * Threads (named, so runs align by comm): "client" sends a 64-byte
 * request over loopback TCP, waits for the answer, thinks --think-us
 * (0.5 to 1.5 times, varied so it does not beat with the sampling timer);
 * "server" reads it, runs handle_request (parse_request, hot_func, the
 * injected work) and answers. "locker" every 20 ms takes a mutex, lets
 * three "waiter" threads queue on it (take_shared_lock), holds it
 * 2 ms (+ extra, sleeping) and releases it. Runs --seconds (default 3).
 *
 * Prints its ground truth on stdout as key=value lines: requests,
 * hot_func_iterations, lock_hold_ns, fsync_ns_per_request (measured),
 * sleep_ns_per_request (measured). */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define WAITERS 3
#define MSG 64
#define PARSE_ITERS 150000ul
#define HOT_ITERS 250000ul

static struct {
	double seconds;
	int slow_func;
	long lock_extra_ms;
	int fsync_per_request;
	long sleep_ms;
	long think_us;
	const char *dir;
} opt = { .seconds = 3, .think_us = 1000, .dir = "." };

static atomic_int stop;
static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static sem_t turn[WAITERS];
static int journal_fd = -1;
static uint64_t fsync_ns, sleep_ns, requests;
static volatile uint64_t sink;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ns_for(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	nanosleep(&ts, NULL);
}

/* Each function spins in its own loop (no shared helper) so its CPU
 * samples are its own self time. */
void parse_request(void)
{
	uint64_t x = sink;

	for (unsigned long i = 0; i < PARSE_ITERS; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
}

void hot_func(void)
{
	unsigned long iters = opt.slow_func ? 2 * HOT_ITERS : HOT_ITERS;
	uint64_t x = sink;

	for (unsigned long i = 0; i < iters; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
}

void write_journal(void)
{
	static char block[4096];
	uint64_t t0 = now_ns();

	if (pwrite(journal_fd, block, sizeof(block), 0) != (ssize_t)sizeof(block) ||
	    fsync(journal_fd) != 0)
		perror("diff_workload: journal");
	fsync_ns += now_ns() - t0;
}

void slow_path(void)
{
	uint64_t t0 = now_ns();

	sleep_ns_for((uint64_t)opt.sleep_ms * 1000000ull);
	sleep_ns += now_ns() - t0;
}

void handle_request(void)
{
	parse_request();
	hot_func();
	if (opt.fsync_per_request)
		write_journal();
	if (opt.sleep_ms)
		slow_path();
}

static int full_io(int fd, char *buf, int writing)
{
	size_t done = 0;

	while (done < MSG) {
		ssize_t n = writing ? write(fd, buf + done, MSG - done)
				    : read(fd, buf + done, MSG - done);
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

static void *server_main(void *arg)
{
	int listener = *(int *)arg, fd;
	char buf[MSG];

	pthread_setname_np(pthread_self(), "server");
	fd = accept(listener, NULL, NULL);
	if (fd < 0)
		return NULL;
	while (full_io(fd, buf, 0) == 0) {
		handle_request();
		requests++;
		if (full_io(fd, buf, 1) < 0)
			break;
	}
	close(fd);
	return NULL;
}

static void client_main(uint16_t port)
{
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons(port) };
	uint64_t end = now_ns() + (uint64_t)(opt.seconds * 1e9);
	char buf[MSG] = "GET /";
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	pthread_setname_np(pthread_self(), "client");
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		perror("diff_workload: connect");
		exit(1);
	}
	uint64_t rnd = 88172645463325252ull;

	while (now_ns() < end) {
		if (full_io(fd, buf, 1) < 0 || full_io(fd, buf, 0) < 0)
			break;
		/* think 0.5x to 1.5x --think-us (xorshift, fixed seed): a fixed
		 * period would alias with the sampling timer */
		rnd ^= rnd << 13;
		rnd ^= rnd >> 7;
		rnd ^= rnd << 17;
		sleep_ns_for((uint64_t)opt.think_us * (500 + rnd % 1001));
	}
	close(fd);
}

void hold_lock(void)
{
	pthread_mutex_lock(&shared_lock);
	for (int i = 0; i < WAITERS; i++)
		sem_post(&turn[i]);
	sleep_ns_for((uint64_t)(2 + opt.lock_extra_ms) * 1000000ull);
	pthread_mutex_unlock(&shared_lock);
}

static void *locker_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "locker");
	while (!atomic_load(&stop)) {
		hold_lock();
		poll(NULL, 0, 20);
	}
	for (int i = 0; i < WAITERS; i++)
		sem_post(&turn[i]);
	return NULL;
}

void wait_for_turn(int i) { sem_wait(&turn[i]); }

void take_shared_lock(void)
{
	pthread_mutex_lock(&shared_lock);
	pthread_mutex_unlock(&shared_lock);
}

static void *waiter_main(void *arg)
{
	int i = (int)(long)arg;

	pthread_setname_np(pthread_self(), "waiter");
	while (1) {
		wait_for_turn(i);
		if (atomic_load(&stop))
			break;
		take_shared_lock();
	}
	return NULL;
}

static void usage(void)
{
	fprintf(stderr, "usage: diff_workload [--seconds S] [--think-us N] [--dir DIR] "
		"[--slow-func] [--lock-hold-extra-ms N] [--fsync-per-request] [--sleep-ms N]\n");
	exit(2);
}

static void parse_args(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--slow-func") == 0)
			opt.slow_func = 1;
		else if (strcmp(a, "--fsync-per-request") == 0)
			opt.fsync_per_request = 1;
		else if (!v)
			usage();
		else if (strcmp(a, "--seconds") == 0 && ++i)
			opt.seconds = atof(v);
		else if (strcmp(a, "--lock-hold-extra-ms") == 0 && ++i)
			opt.lock_extra_ms = atol(v);
		else if (strcmp(a, "--sleep-ms") == 0 && ++i)
			opt.sleep_ms = atol(v);
		else if (strcmp(a, "--think-us") == 0 && ++i)
			opt.think_us = atol(v);
		else if (strcmp(a, "--dir") == 0 && ++i)
			opt.dir = v;
		else
			usage();
	}
	if (opt.seconds <= 0 || opt.lock_extra_ms < 0 || opt.sleep_ms < 0 || opt.think_us < 0)
		usage();
}

int main(int argc, char **argv)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	socklen_t len = sizeof(addr);
	pthread_t server, locker, waiters[WAITERS];
	char path[4096];
	int listener;

	parse_args(argc, argv);
	snprintf(path, sizeof(path), "%s/diff_workload.journal", opt.dir);
	journal_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	listener = socket(AF_INET, SOCK_STREAM, 0);
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (journal_fd < 0 || listener < 0 || bind(listener, (struct sockaddr *)&addr, len) < 0 ||
	    listen(listener, 1) < 0 || getsockname(listener, (struct sockaddr *)&addr, &len) < 0) {
		perror("diff_workload: setup");
		return 1;
	}
	for (int i = 0; i < WAITERS; i++)
		sem_init(&turn[i], 0, 0);
	pthread_create(&server, NULL, server_main, &listener);
	pthread_create(&locker, NULL, locker_main, NULL);
	for (long i = 0; i < WAITERS; i++)
		pthread_create(&waiters[i], NULL, waiter_main, (void *)i);
	client_main(ntohs(addr.sin_port));
	pthread_join(server, NULL);
	atomic_store(&stop, 1);
	pthread_join(locker, NULL);
	for (int i = 0; i < WAITERS; i++)
		pthread_join(waiters[i], NULL);
	close(listener);
	close(journal_fd);
	unlink(path);
	printf("requests=%llu\n", (unsigned long long)requests);
	printf("hot_func_iterations=%lu\n", opt.slow_func ? 2 * HOT_ITERS : HOT_ITERS);
	printf("lock_hold_ns=%llu\n", (unsigned long long)(2 + opt.lock_extra_ms) * 1000000ull);
	printf("fsync_ns_per_request=%llu\n",
	       (unsigned long long)(requests ? fsync_ns / requests : 0));
	printf("sleep_ns_per_request=%llu\n",
	       (unsigned long long)(requests ? sleep_ns / requests : 0));
	return 0;
}
