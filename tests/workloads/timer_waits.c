/* timer_waits.c - a thread named "timeouts" that waits ROUNDS times (default
 * 20) for a datagram that never comes, on a UDP socket with a 20 ms
 * receive timeout (SO_RCVTIMEO). The kernel sleeps such a receive with a
 * timer_list (schedule_timeout), whose expiry wakes the thread from the
 * TIMER soft interrupt: the waker the wake_context test must name
 * (nanosleep, poll and epoll time out by hrtimers, from the hard
 * interrupt). Prints "timeouts TID" first.
 *
 * The process is pinned to one CPU, kept busy meanwhile by a spinning
 * thread at nice 19: a timer of an idle CPU may be expired by another CPU
 * (the timer migration of Linux 6.9+), which the recorder's per-CPU fields
 * do not name. Usage: timer_waits [ROUNDS]
 */
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static atomic_int done;

static void *spinner(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "spinner");
	setpriority(PRIO_PROCESS, (id_t)gettid(), 19);
	while (!atomic_load(&done))
		;
	return NULL;
}

static void *waiter(void *arg)
{
	int rounds = *(int *)arg, fd = socket(AF_INET, SOCK_DGRAM, 0), got = 0;
	struct timeval tv = { 0, 20 * 1000 };
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	char byte;

	prctl(PR_SET_NAME, "timeouts");
	printf("timeouts %d\n", gettid());
	fflush(stdout);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv))) {
		perror("timer_waits: socket");
		exit(1);
	}
	for (int i = 0; i < rounds; i++)
		got += recv(fd, &byte, 1, 0) > 0;
	close(fd);
	return (void *)(long)got;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 20, cpu = sched_getcpu();
	pthread_t t, spin;
	cpu_set_t one;
	void *got;

	CPU_ZERO(&one);
	CPU_SET(cpu < 0 ? 0 : cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		perror("timer_waits: sched_setaffinity");
	if (rounds < 1 || pthread_create(&spin, NULL, spinner, NULL) ||
	    pthread_create(&t, NULL, waiter, &rounds))
		return 1;
	pthread_join(t, &got);
	atomic_store(&done, 1);
	pthread_join(spin, NULL);
	printf("timer_waits: %d timeouts, %ld datagrams\n", rounds, (long)got);
	return 0;
}
