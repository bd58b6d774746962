/* two_fds.c - a thread that waits in read() at one place on two kinds of
 * file in turn: a pipe and a unix stream socket. Both waits have the same
 * user stack (the same call of read_one from the same line), but the
 * kernel sleeps in pipe_read for one and in the unix socket's receive
 * for the other. A kernel stack kept for a thread's later waits at the
 * same place (perfcap-record --offcpu-stack-reuse) must not give one the
 * other's: the fd is part of the place. A second thread writes a byte to
 * the pipe, then 2 ms later to the socket, and so on, so each read waits
 * about 2 ms.
 *
 * Usage: two_fds ROUNDS  (default 100; two waits a round)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int pipe_fds[2], sock_fds[2], rounds;

__attribute__((noipa)) static int read_one(int fd)
{
	char c;

	return (int)read(fd, &c, 1);
}

static void nap_ms(long ms)
{
	struct timespec t = { 0, ms * 1000 * 1000 };

	nanosleep(&t, NULL);
}

static void *writer(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2 * rounds; i++) {
		nap_ms(2);
		if (write(i % 2 ? sock_fds[1] : pipe_fds[1], "x", 1) != 1)
			break;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	int got = 0;

	rounds = argc > 1 ? atoi(argv[1]) : 100;
	if (pipe(pipe_fds) || socketpair(AF_UNIX, SOCK_STREAM, 0, sock_fds)) {
		perror("two_fds");
		return 1;
	}
	if (pthread_create(&t, NULL, writer, NULL)) {
		fprintf(stderr, "two_fds: cannot start the writer\n");
		return 1;
	}
	int fds[2] = { pipe_fds[0], sock_fds[0] };
	for (int i = 0; i < 2 * rounds; i++)
		got += read_one(fds[i % 2]);
	pthread_join(t, NULL);
	printf("two_fds: %d rounds, %d bytes read\n", rounds, got);
	return 0;
}
