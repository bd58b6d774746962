/* tcp_echo.c - a loopback TCP request/response workload with known
 * connections: a server process and a client process (forked).
 *
 *   1 keep-alive connection: REQUESTS (default 100) requests of REQ_BYTES,
 *     each answered by RESP_BYTES before the next is sent;
 *   SHORT_CONNS short connections: connect, one request, one response,
 *     close (client first, so the client side goes through TIME_WAIT).
 *
 * Only 127.0.0.1 on a port the kernel picks. Prints "server PID", "client
 * PID" and "port PORT" first, then "keepalive SPORT" (the client's port of
 * the keep-alive connection), and at the end "requests N seconds S rate
 * R/s" for the keep-alive phase; exits when the client is done.
 *
 * Usage: tcp_echo [PAUSE_MS | wait] [REQUESTS] [DELAY_US]
 * After the keep-alive connection is established and before its first
 * byte, the client waits PAUSE_MS (default 0), or until it gets SIGUSR1
 * ("wait"), so a recorder attached meanwhile (-p) sees an already open
 * connection ("discovered"). With DELAY_US, the server waits until each
 * request's first byte is there (poll), then DELAY_US more before reading
 * it: every request is queued at least that long after its data arrived,
 * a known answer for the readiness of requests.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KEEPALIVE_REQS 100 /* default */
#define SHORT_CONNS    20
#define REQ_BYTES      100
#define RESP_BYTES     300

#define PAUSE_SIGNAL (-1L)

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void block_usr1(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

static void wait_usr1(void)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigwait(&set, &sig);
}

static int io_full(int fd, char *buf, size_t len, int writing)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = writing ? write(fd, buf + done, len - done)
				    : read(fd, buf + done, len - done);

		if (n <= 0)
			return n == 0 && !writing && done == 0 ? 1 : -1; /* 1: EOF */
		done += (size_t)n;
	}
	return 0;
}

/* ---- server ------------------------------------------------------------ */

static long delay_us; /* before reading a request whose data is there */

/* Returns once fd has data (or EOF), delay_us after it had. */
static void delay_read(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct timespec ts = { delay_us / 1000000, (delay_us % 1000000) * 1000L };

	if (!delay_us)
		return;
	while (poll(&p, 1, -1) < 0)
		;
	while (nanosleep(&ts, &ts))
		;
}

/* Answers every request of one connection until the peer closes. */
static int serve(int fd)
{
	char req[REQ_BYTES], resp[RESP_BYTES];
	int r;

	memset(resp, 'r', sizeof(resp));
	while (delay_read(fd), (r = io_full(fd, req, sizeof(req), 0)) == 0) {
		if (io_full(fd, resp, sizeof(resp), 1))
			return -1;
	}
	return r == 1 ? 0 : -1;
}

static int run_server(int lfd)
{
	for (int i = 0; i < 1 + SHORT_CONNS; i++) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0 || serve(fd)) {
			perror("server");
			return 1;
		}
		close(fd);
	}
	return 0;
}

/* ---- client ------------------------------------------------------------ */

static int dial(const struct sockaddr_in *addr)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || connect(fd, (const struct sockaddr *)addr, sizeof(*addr))) {
		perror("connect");
		exit(1);
	}
	return fd;
}

static int request(int fd)
{
	char req[REQ_BYTES], resp[RESP_BYTES];

	memset(req, 'q', sizeof(req));
	if (io_full(fd, req, sizeof(req), 1) || io_full(fd, resp, sizeof(resp), 0)) {
		perror("request");
		return -1;
	}
	return 0;
}

static void print_local_port(int fd)
{
	struct sockaddr_in me;
	socklen_t len = sizeof(me);

	getsockname(fd, (struct sockaddr *)&me, &len);
	printf("keepalive %u\n", ntohs(me.sin_port));
	fflush(stdout);
}

static int run_client(const struct sockaddr_in *addr, long pause_ms, long requests)
{
	int fd = dial(addr);
	double t0, secs;

	print_local_port(fd);
	if (pause_ms == PAUSE_SIGNAL)
		wait_usr1();
	else
		sleep_ms(pause_ms);
	t0 = now_s();
	for (long i = 0; i < requests; i++) {
		if (request(fd))
			return 1;
	}
	secs = now_s() - t0;
	close(fd);
	printf("requests %ld seconds %.3f rate %.1f/s\n", requests, secs, requests / secs);
	fflush(stdout);
	for (int i = 0; i < SHORT_CONNS; i++) {
		fd = dial(addr);
		if (request(fd))
			return 1;
		close(fd);
	}
	return 0;
}

/* ---- main --------------------------------------------------------------- */

static int listen_loopback(struct sockaddr_in *addr)
{
	socklen_t len = sizeof(*addr);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)addr, sizeof(*addr)) || listen(fd, 64) ||
	    getsockname(fd, (struct sockaddr *)addr, &len)) {
		perror("listen");
		exit(1);
	}
	return fd;
}

int main(int argc, char **argv)
{
	long pause_ms = argc < 2 ? 0 : strcmp(argv[1], "wait") ? atol(argv[1]) : PAUSE_SIGNAL;
	long requests = argc > 2 ? atol(argv[2]) : KEEPALIVE_REQS;
	struct sockaddr_in addr;
	int lfd, status = 0, err;
	pid_t client;

	delay_us = argc > 3 ? atol(argv[3]) : 0;
	if (pause_ms < PAUSE_SIGNAL || requests < 0 || delay_us < 0 || delay_us > 10000000) {
		fprintf(stderr, "usage: tcp_echo [PAUSE_MS | wait] [REQUESTS] [DELAY_US]\n");
		return 2;
	}
	lfd = listen_loopback(&addr);

	block_usr1(); /* inherited by the client: no signal lost before sigwait */
	printf("server %d\nport %u\n", getpid(), ntohs(addr.sin_port));
	fflush(stdout);
	client = fork();
	if (client < 0) {
		perror("fork");
		return 1;
	}
	if (client == 0) {
		close(lfd);
		printf("client %d\n", getpid());
		fflush(stdout);
		_exit(run_client(&addr, pause_ms, requests));
	}
	err = run_server(lfd);
	if (err)
		kill(client, SIGTERM);
	waitpid(client, &status, 0);
	close(lfd);
	return err || !WIFEXITED(status) || WEXITSTATUS(status);
}
