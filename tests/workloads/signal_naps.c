/* signal_naps.c - naps interrupted by signals, and a process killed while
 * it naps: the cases where an off-CPU stack copy taken on the way back to
 * user space could differ from the stack at the switch-out.
 *
 * The main thread calls main -> level_a -> level_b -> nap, which sleeps
 * 20 ms at a time in nanosleep(); a second thread sends it SIGUSR1 every
 * 7 ms, whose handler (on_signal) runs after most naps end. Then a child
 * process naps in child_nap for up to 10 s and is killed by SIGKILL after
 * 1 s, so it exits without returning to user space. (The recorder reads a
 * process's mappings when it first meets it; a child killed sooner than
 * a busy recorder gets to it leaves copies nothing can unwind: with 200
 * ms that happened in 1 run of 5 of the whole suite.)
 *
 * Usage: signal_naps NAPS  (default 100)
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static atomic_int signals, done;
static pthread_t main_thread;

__attribute__((noinline)) static void on_signal(int sig)
{
	(void)sig;
	atomic_fetch_add(&signals, 1);
}

__attribute__((noinline)) static int nap(void)
{
	struct timespec t = { 0, 20 * 1000 * 1000 };

	return nanosleep(&t, NULL);
}

__attribute__((noinline)) static int level_b(void)
{
	return nap() + 1;
}

__attribute__((noinline)) static int level_a(void)
{
	return level_b() + 1;
}

static void *signaller(void *arg)
{
	struct timespec t = { 0, 7 * 1000 * 1000 };

	(void)arg;
	while (!atomic_load(&done)) {
		nanosleep(&t, NULL);
		pthread_kill(main_thread, SIGUSR1);
	}
	return NULL;
}

__attribute__((noinline)) static void child_nap(void)
{
	struct timespec t = { 10, 0 };

	nanosleep(&t, NULL);
	_exit(0);
}

/* A child that naps and is killed while off CPU. */
static void killed_nap(void)
{
	struct timespec t = { 1, 0 };
	pid_t pid = fork();

	if (pid == 0)
		child_nap();
	if (pid < 0)
		return;
	nanosleep(&t, NULL);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

int main(int argc, char **argv)
{
	int naps = argc > 1 ? atoi(argv[1]) : 100, interrupted = 0;
	struct sigaction sa = { .sa_handler = on_signal };
	pthread_t t;

	sigaction(SIGUSR1, &sa, NULL);
	main_thread = pthread_self();
	if (pthread_create(&t, NULL, signaller, NULL))
		return 1;
	for (int i = 0; i < naps; i++)
		interrupted += level_a() != 2;
	atomic_store(&done, 1);
	pthread_join(t, NULL);
	killed_nap();
	printf("%d naps, %d interrupted, %d signals\n", naps, interrupted, atomic_load(&signals));
	return 0;
}
