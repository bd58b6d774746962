/* rw_count.c - exactly N reads of K bytes from /dev/zero and N writes of K
 * bytes to /dev/null, started on a signal from the test.
 *
 * The syscall source's test attaches the recorder to this process (-p)
 * while it waits, so the recording sees these calls and nothing else of
 * the read/write family: the program prints "tid=T zero_fd=Z null_fd=N"
 * on stdout first, then polls (access(2) and nanosleep(2), never read or
 * write) until GO_FILE exists, then does the 2N calls and exits.
 * Usage: rw_count N K GO_FILE
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define MAX_K (1 << 20)

static void wait_for(const char *path)
{
	struct timespec tick = { 0, 10 * 1000 * 1000 };

	while (access(path, F_OK) != 0)
		nanosleep(&tick, NULL);
}

static int do_calls(int zero, int null, long n, size_t k, char *buf)
{
	for (long i = 0; i < n; i++) {
		if (read(zero, buf, k) != (ssize_t)k)
			return 1;
	}
	for (long i = 0; i < n; i++) {
		if (write(null, buf, k) != (ssize_t)k)
			return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 0;
	long k = argc > 2 ? atol(argv[2]) : 0;
	static char buf[MAX_K];
	int zero, null;

	if (argc != 4 || n <= 0 || k <= 0 || k > MAX_K) {
		fprintf(stderr, "usage: rw_count N K GO_FILE (1 <= K <= %d)\n", MAX_K);
		return 2;
	}
	zero = open("/dev/zero", O_RDONLY);
	null = open("/dev/null", O_WRONLY);
	if (zero < 0 || null < 0) {
		perror("rw_count: open");
		return 1;
	}
	printf("tid=%d zero_fd=%d null_fd=%d\n", gettid(), zero, null);
	fflush(stdout);
	wait_for(argv[3]);
	return do_calls(zero, null, n, (size_t)k, buf);
}
