/* pingpong.c - two threads passing one byte back and forth through two
 * pipes: every round trip is two blocking reads, two wakeups and (on
 * separate or shared CPUs) at least two context switches. Prints round
 * trips per second: the context-switch-heavy load of
 * bench/sched_overhead.sh. Usage: pingpong [SECONDS [BURST_MS]] (default
 * 5 s, no burst).
 *
 * With BURST_MS, a third thread ("burst") spins for BURST_MS ms of its own
 * CPU time from 0.4 s into each second of the run (at most until 0.9 s),
 * and sleeps otherwise: a thread that runs in bursts away from the start
 * of each second, where sched windows open (tests/e2e/sched_windows.sh).
 * It prints its thread id and the CPU time it used in all.
 *
 * With PINGPONG_TIMELINE=1 in the environment it also prints, at the end,
 * "trips NS N V" about every 10 ms of the run: N round trips done and V
 * voluntary context switches of the main thread ("ping": its blocking
 * waits, getrusage RUSAGE_THREAD) by CLOCK_MONOTONIC time NS. (Not one
 * wait per round trip: a reader whose writer was preempted by the woken
 * thread finds its byte there.)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int ping[2], pong[2];
static double start, burst_end, burst_ms; /* set before the threads start */
static long burst_tid;
static double burst_cpu_s;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define TIMELINE_MAX 65536
static struct { uint64_t ns, trips, nvcsw; } timeline[TIMELINE_MAX];
static size_t ntimeline;

/* Notes trips at now (seconds), about every 10 ms (always: the last). */
static void note_trips(double now, unsigned long long trips, int always)
{
	if (!always && ntimeline && now * 1e9 < (double)timeline[ntimeline - 1].ns + 1e7)
		return;
	if (ntimeline < TIMELINE_MAX) {
		struct rusage ru = { 0 };

		getrusage(RUSAGE_THREAD, &ru);
		timeline[ntimeline].ns = (uint64_t)(now * 1e9);
		timeline[ntimeline].nvcsw = (uint64_t)ru.ru_nvcsw;
		timeline[ntimeline++].trips = trips;
	}
}

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_until(double t)
{
	double d = t - now_s();
	struct timespec ts;

	if (d <= 0)
		return;
	ts.tv_sec = (time_t)d;
	ts.tv_nsec = (long)((d - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
}

/* BURST_MS of CPU from 0.4 s into each second (see the top). */
static void *burst(void *arg)
{
	double cpu0 = cpu_s();

	(void)arg;
	prctl(PR_SET_NAME, "burst");
	burst_tid = syscall(SYS_gettid);
	for (double second = start; second + 0.4 < burst_end; second += 1.0) {
		double goal;

		sleep_until(second + 0.4);
		goal = cpu_s() + burst_ms / 1000.0;
		while (cpu_s() < goal && now_s() < second + 0.9 && now_s() < burst_end)
			;
	}
	burst_cpu_s = cpu_s() - cpu0;
	return NULL;
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
	double seconds = argc > 1 ? atof(argv[1]) : 5.0, end;
	unsigned long long trips = 0;
	pthread_t thread, burster;
	char byte = 'x';

	burst_ms = argc > 2 ? atof(argv[2]) : 0;
	if (seconds <= 0 || seconds > 3600 || burst_ms < 0 || burst_ms > 500) {
		fprintf(stderr, "usage: pingpong [SECONDS (0-3600] [BURST_MS (0-500]]]\n");
		return 2;
	}
	if (pipe(ping) || pipe(pong) || pthread_create(&thread, NULL, echo, NULL)) {
		perror("pingpong");
		return 1;
	}
	prctl(PR_SET_NAME, "ping");
	start = now_s();
	end = burst_end = start + seconds;
	if (burst_ms > 0 && pthread_create(&burster, NULL, burst, NULL)) {
		perror("pingpong");
		return 1;
	}
	for (double now = now_s(); now < end; now = now_s()) {
		note_trips(now, trips, 0);
		for (int i = 0; i < 100; i++) {
			if (write(ping[1], &byte, 1) != 1 || read(pong[0], &byte, 1) != 1) {
				perror("pingpong");
				return 1;
			}
		}
		trips += 100;
	}
	end = now_s();
	note_trips(end, trips, 1);
	close(ping[1]);
	pthread_join(thread, NULL);
	printf("pingpong: %llu round trips in %.3f s: %.0f round trips/s\n", trips, end - start,
	       (double)trips / (end - start));
	if (burst_ms > 0) {
		pthread_join(burster, NULL);
		printf("burst: tid %ld cpu_ns %.0f\n", burst_tid, burst_cpu_s * 1e9);
	}
	if (getenv("PINGPONG_TIMELINE"))
		for (size_t i = 0; i < ntimeline; i++)
			printf("trips %llu %llu %llu\n", (unsigned long long)timeline[i].ns,
			       (unsigned long long)timeline[i].trips,
			       (unsigned long long)timeline[i].nvcsw);
	return 0;
}
