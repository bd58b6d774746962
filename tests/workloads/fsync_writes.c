/* fsync_writes.c - a known amount of block I/O from one thread: N writes
 * of 4 KiB to FILE, each followed by fsync(), so each reaches the disk as
 * (at least) one write request submitted by this thread. Prints
 * "writer PID TID" first, "writes N seconds S rate R/s" at the end;
 * removes FILE.
 *
 * Usage: fsync_writes FILE [N (default 50)] [START_DELAY_MS (default 0)]
 * The delay lets a recorder attach (-p) before the first write.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define BLOCK 4096

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

static int write_all(int fd, int n)
{
	static char buf[BLOCK];

	for (int i = 0; i < n; i++) {
		memset(buf, 'a' + i % 26, sizeof(buf));
		if (pwrite(fd, buf, sizeof(buf), (off_t)i * BLOCK) != BLOCK) {
			perror("pwrite");
			return -1;
		}
		if (fsync(fd)) {
			perror("fsync");
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 50;
	long delay = argc > 3 ? atol(argv[3]) : 0;
	double t0, secs;
	int fd, err;

	if (argc < 2 || n <= 0 || delay < 0) {
		fprintf(stderr, "usage: fsync_writes FILE [N] [START_DELAY_MS]\n");
		return 2;
	}
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	printf("writer %d %ld\n", getpid(), (long)syscall(SYS_gettid));
	fflush(stdout);
	sleep_ms(delay);
	t0 = now_s();
	err = write_all(fd, n);
	secs = now_s() - t0;
	close(fd);
	unlink(argv[1]);
	if (!err)
		printf("writes %d seconds %.3f rate %.1f/s\n", n, secs, n / secs);
	return err ? 1 : 0;
}
