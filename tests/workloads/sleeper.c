/* sleeper.c - a thread named "napper" that sleeps 50 ms 20 times: 1 s off
 * CPU, known to the millisecond, in a function named nap_50ms.
 *
 * The end-to-end test of the sched source checks ~1 s of OFFCPU time for
 * that thread with nap_50ms on its user stack. nap_50ms enters the kernel
 * with its own syscall instruction: glibc's nanosleep has no frame
 * pointer, so a frame-pointer unwinder starting inside it would skip its
 * caller. Usage: sleeper [ROUNDS] (default 20).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>

#define NAP_NS (50 * 1000 * 1000)

__attribute__((noinline)) void nap_50ms(void)
{
	struct timespec ts = { 0, NAP_NS };
	long ret;

	do {
		__asm__ volatile("syscall"
				 : "=a"(ret)
				 : "0"((long)SYS_nanosleep), "D"(&ts), "S"(&ts)
				 : "rcx", "r11", "memory");
	} while (ret == -4); /* EINTR: the rest of the nap is in ts */
}

static void *sleep_rounds(void *arg)
{
	int rounds = *(int *)arg;

	prctl(PR_SET_NAME, "napper");
	for (int i = 0; i < rounds; i++)
		nap_50ms();
	return NULL;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 20;
	pthread_t thread;

	if (rounds <= 0 || rounds > 100000) {
		fprintf(stderr, "usage: sleeper [ROUNDS (1-100000)]\n");
		return 2;
	}
	if (pthread_create(&thread, NULL, sleep_rounds, &rounds)) {
		perror("sleeper: pthread_create");
		return 1;
	}
	pthread_join(thread, NULL);
	printf("sleeper: slept %d x 50 ms\n", rounds);
	return 0;
}
