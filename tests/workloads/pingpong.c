/* pingpong.c - two threads passing one byte back and forth through two
 * pipes: every round trip is two blocking reads, two wakeups and (on
 * separate or shared CPUs) at least two context switches. Prints round
 * trips per second: the context-switch-heavy load of
 * bench/sched_overhead.sh. Usage: pingpong [SECONDS] (default 5).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static int ping[2], pong[2];

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Echoes every byte from ping back on pong until the pipe closes. */
static void *echo(void *arg)
{
	char byte;

	(void)arg;
	prctl(PR_SET_NAME, "pong");
	while (read(ping[0], &byte, 1) == 1) {
		if (write(pong[1], &byte, 1) != 1)
			break;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 5.0, start, end;
	unsigned long long trips = 0;
	pthread_t thread;
	char byte = 'x';

	if (seconds <= 0 || seconds > 3600) {
		fprintf(stderr, "usage: pingpong [SECONDS (0-3600]]\n");
		return 2;
	}
	if (pipe(ping) || pipe(pong) || pthread_create(&thread, NULL, echo, NULL)) {
		perror("pingpong");
		return 1;
	}
	prctl(PR_SET_NAME, "ping");
	start = now_s();
	end = start + seconds;
	while (now_s() < end) {
		for (int i = 0; i < 100; i++) {
			if (write(ping[1], &byte, 1) != 1 || read(pong[0], &byte, 1) != 1) {
				perror("pingpong");
				return 1;
			}
		}
		trips += 100;
	}
	end = now_s();
	close(ping[1]);
	pthread_join(thread, NULL);
	printf("pingpong: %llu round trips in %.3f s: %.0f round trips/s\n", trips, end - start,
	       (double)trips / (end - start));
	return 0;
}
