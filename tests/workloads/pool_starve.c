/* pool_starve.c - acceptance workload "thread-pool starvation": a small
 * TCP server on loopback whose WORKERS threads each serve one request at
 * a time, every request waiting on a slow downstream; more clients than
 * workers, so requests queue between accept and a worker picking them up.
 *
 *   pool_starve downstream PORTFILE DELAY_MS
 *       answers each connection's request after DELAY_MS (a thread per
 *       connection: it is never the bottleneck)
 *   pool_starve server PORTFILE DOWN_PORT WORKERS REQUESTS
 *       an acceptor thread accepts REQUESTS connections and queues them;
 *       a worker reads the request, asks the downstream (connect, write,
 *       read its answer), answers and closes; exits after REQUESTS
 *   pool_starve client PORT CONCURRENCY REQUESTS
 *       CONCURRENCY threads send REQUESTS requests in all, one connection
 *       each, back to back
 *
 * PORTFILE receives the listening port once it listens (written whole,
 * by rename). The server measures, per request, the time from accept()'s
 * return to the worker's pickup (before its first read) and prints
 *   measured_queue_mean_ns=NS   the mean of those
 *   service_mean_ns=NS requests=N workers=W
 *   measured_utilisation_pct=P  the workers' time serving (pickup to
 *                               done) over their lifetimes, summed
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "loopback.h"

#define MSG 16
#define MAX_QUEUE 4096

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static int connect_to(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int s = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)))
		die("pool_starve: connect");
	return s;
}

static int read_full(int fd, char *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, buf + got, n - got);
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

/* ---- downstream ---- */

static long delay_ms;

static void *answer_later(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char buf[MSG];
	struct timespec d = { delay_ms / 1000, (delay_ms % 1000) * 1000000L };

	if (read_full(fd, buf, MSG) == 0) {
		nanosleep(&d, NULL);
		if (write(fd, buf, MSG) != MSG)
			perror("pool_starve: downstream write");
	}
	close(fd);
	return NULL;
}

__attribute__((noreturn)) static void downstream(const char *portfile, long ms)
{
	int s = loopback_listen(portfile, 1024);

	delay_ms = ms;
	for (;;) {
		pthread_t t;
		int fd = accept(s, NULL, NULL);

		if (fd < 0)
			die("pool_starve: accept");
		if (pthread_create(&t, NULL, answer_later, (void *)(intptr_t)fd))
			die("pool_starve: pthread_create");
		pthread_detach(t);
	}
}

/* ---- server ---- */

struct pending {
	int fd;
	uint64_t accepted_ns;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t ready;
	struct pending q[MAX_QUEUE];
	int head, tail, closed;
	uint64_t queue_ns, service_ns, lifetime_ns;
	int served;
} pool = { .lock = PTHREAD_MUTEX_INITIALIZER, .ready = PTHREAD_COND_INITIALIZER };
static int down_port;

static int take(struct pending *p)
{
	pthread_mutex_lock(&pool.lock);
	while (pool.head == pool.tail && !pool.closed)
		pthread_cond_wait(&pool.ready, &pool.lock);
	if (pool.head == pool.tail) {
		pthread_mutex_unlock(&pool.lock);
		return -1;
	}
	*p = pool.q[pool.head++ % MAX_QUEUE];
	pthread_mutex_unlock(&pool.lock);
	return 0;
}

__attribute__((noinline)) static void ask_downstream(char *buf)
{
	int d = connect_to(down_port);

	if (write(d, buf, MSG) != MSG || read_full(d, buf, MSG) < 0)
		die("pool_starve: downstream");
	close(d);
}

__attribute__((noinline)) static void serve(struct pending *p)
{
	uint64_t picked = now_ns();
	char buf[MSG];

	if (read_full(p->fd, buf, MSG) == 0) {
		ask_downstream(buf);
		if (write(p->fd, buf, MSG) != MSG)
			perror("pool_starve: answer");
	}
	close(p->fd);
	pthread_mutex_lock(&pool.lock);
	pool.queue_ns += picked - p->accepted_ns;
	pool.service_ns += now_ns() - picked;
	pool.served++;
	pthread_mutex_unlock(&pool.lock);
}

static void *worker(void *arg)
{
	struct pending p;
	uint64_t born = now_ns();

	(void)arg;
	while (take(&p) == 0)
		serve(&p);
	pthread_mutex_lock(&pool.lock);
	pool.lifetime_ns += now_ns() - born;
	pthread_mutex_unlock(&pool.lock);
	return NULL;
}

static int server(const char *portfile, int port, int workers, int requests)
{
	pthread_t t[64];
	int s = loopback_listen(portfile, 1024);

	down_port = port;
	for (int i = 0; i < workers; i++)
		if (pthread_create(&t[i], NULL, worker, NULL))
			die("pool_starve: pthread_create");
	for (int i = 0; i < requests; i++) {
		struct pending p;

		p.fd = accept(s, NULL, NULL);
		p.accepted_ns = now_ns();
		if (p.fd < 0)
			die("pool_starve: accept");
		pthread_mutex_lock(&pool.lock);
		pool.q[pool.tail++ % MAX_QUEUE] = p;
		pthread_cond_signal(&pool.ready);
		pthread_mutex_unlock(&pool.lock);
	}
	pthread_mutex_lock(&pool.lock);
	pool.closed = 1;
	pthread_cond_broadcast(&pool.ready);
	pthread_mutex_unlock(&pool.lock);
	for (int i = 0; i < workers; i++)
		pthread_join(t[i], NULL);
	printf("measured_queue_mean_ns=%llu\n",
	       (unsigned long long)(pool.queue_ns / (uint64_t)pool.served));
	printf("service_mean_ns=%llu requests=%d workers=%d\n",
	       (unsigned long long)(pool.service_ns / (uint64_t)pool.served), pool.served, workers);
	printf("measured_utilisation_pct=%.2f\n",
	       pool.lifetime_ns ? 100.0 * (double)pool.service_ns / (double)pool.lifetime_ns : 0.0);
	return 0;
}

/* ---- client ---- */

static int client_port, client_left;
static pthread_mutex_t client_lock = PTHREAD_MUTEX_INITIALIZER;

static void *client_thread(void *arg)
{
	char buf[MSG];

	(void)arg;
	memset(buf, 'q', MSG);
	for (;;) {
		int s;

		pthread_mutex_lock(&client_lock);
		s = client_left-- > 0;
		pthread_mutex_unlock(&client_lock);
		if (!s)
			return NULL;
		s = connect_to(client_port);
		if (write(s, buf, MSG) != MSG || read_full(s, buf, MSG) < 0)
			die("pool_starve: client");
		close(s);
	}
}

static int client(int port, int conc, int requests)
{
	pthread_t t[256];

	client_port = port;
	client_left = requests;
	for (int i = 0; i < conc; i++)
		if (pthread_create(&t[i], NULL, client_thread, NULL))
			die("pool_starve: pthread_create");
	for (int i = 0; i < conc; i++)
		pthread_join(t[i], NULL);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "downstream") == 0 && atol(argv[3]) > 0)
		downstream(argv[2], atol(argv[3]));
	if (argc == 6 && strcmp(argv[1], "server") == 0 && atoi(argv[3]) > 0 &&
	    atoi(argv[4]) > 0 && atoi(argv[4]) <= 64 && atoi(argv[5]) > 0 &&
	    atoi(argv[5]) < MAX_QUEUE)
		return server(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
	if (argc == 5 && strcmp(argv[1], "client") == 0 && atoi(argv[2]) > 0 &&
	    atoi(argv[3]) > 0 && atoi(argv[3]) <= 256 && atoi(argv[4]) > 0)
		return client(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
	fprintf(stderr, "usage: pool_starve downstream PORTFILE DELAY_MS\n"
		"       pool_starve server PORTFILE DOWN_PORT WORKERS REQUESTS\n"
		"       pool_starve client PORT CONCURRENCY REQUESTS\n");
	return 2;
}
