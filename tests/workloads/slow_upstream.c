/* slow_upstream.c - acceptance workload "waiting on an upstream": an
 * HTTP/1.1 keep-alive server on 127.0.0.1 that answers every request after
 * DELAY_MS, the slow backend behind a proxy (tests/e2e/accept_nginx_upstream.sh).
 *
 *   slow_upstream PORTFILE DELAY_MS
 *
 * A thread per connection, so concurrent requests are served concurrently
 * and the upstream itself never queues: each request costs DELAY_MS plus
 * a few microseconds, whatever the load. A request is read up to its
 * "\r\n\r\n" (no bodies: the proxy forwards GETs), then the thread sleeps
 * DELAY_MS and answers "200 ok" with Content-Length, keeping the
 * connection open. PORTFILE receives the listening port once it listens
 * (written whole, by rename).
 *
 * On SIGTERM or SIGINT it prints, on stdout, and exits:
 *   served=N                 requests answered
 *   mean_service_ns=NS       mean time from a request's last byte read to
 *                            its answer written (CLOCK_MONOTONIC)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "loopback.h"

static atomic_ullong served;
static atomic_ullong service_ns;
static long delay_ms;

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

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* One connection: requests back to back until the peer closes. */
static void *serve(void *arg)
{
	static const char answer[] = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
				     "Content-Length: 3\r\nConnection: keep-alive\r\n\r\nok\n";
	int fd = (int)(intptr_t)arg;
	char buf[8192];
	size_t have = 0;

	for (;;) {
		char *end;
		ssize_t r;

		buf[have] = '\0';
		end = strstr(buf, "\r\n\r\n");
		if (!end) {
			if (have == sizeof(buf) - 1)
				break; /* a header this long is not ours */
			r = read(fd, buf + have, sizeof(buf) - 1 - have);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			have += (size_t)r;
			continue;
		}
		uint64_t t0 = now_ns();
		struct timespec d = { delay_ms / 1000, (delay_ms % 1000) * 1000000L };

		while (nanosleep(&d, &d) && errno == EINTR)
			;
		if (write_all(fd, answer, sizeof(answer) - 1))
			break;
		atomic_fetch_add(&service_ns, now_ns() - t0);
		atomic_fetch_add(&served, 1);
		/* keep what followed this request's header */
		size_t used = (size_t)(end + 4 - buf);
		memmove(buf, buf + used, have - used);
		have -= used;
	}
	close(fd);
	return NULL;
}

/* The acceptor: a detached thread per connection. */
static void *accept_loop(void *arg)
{
	int s = (int)(intptr_t)arg, one = 1;
	pthread_attr_t attr;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (;;) {
		pthread_t t;
		int c = accept(s, NULL, NULL);

		if (c < 0) {
			if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE)
				continue;
			die("accept");
		}
		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (pthread_create(&t, &attr, serve, (void *)(intptr_t)c))
			close(c);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t acceptor;
	sigset_t stop;
	int s, sig;

	if (argc != 3 || atol(argv[2]) < 0) {
		fprintf(stderr, "usage: slow_upstream PORTFILE DELAY_MS\n");
		return 2;
	}
	delay_ms = atol(argv[2]);
	/* SIGTERM/SIGINT are taken by sigwait here; every thread blocks them */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	signal(SIGPIPE, SIG_IGN);
	s = loopback_listen(argv[1], 128);
	if (pthread_create(&acceptor, NULL, accept_loop, (void *)(intptr_t)s))
		die("pthread_create");
	while (sigwait(&stop, &sig))
		;
	unsigned long long n = atomic_load(&served);
	printf("served=%llu\nmean_service_ns=%llu\n", n, n ? atomic_load(&service_ns) / n : 0);
	fflush(stdout);
	_exit(0);
}
