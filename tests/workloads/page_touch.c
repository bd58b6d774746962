/* page_touch.c - a thread named "toucher" maps PAGES fresh anonymous pages
 * (no huge pages) and writes one byte to each: PAGES user page faults in
 * that thread, known to within a few (its stack, its first calls), for the
 * end-to-end test of the mem source's sampled faults. Prints
 *   toucher tid=TID pages=PAGES
 * Usage: page_touch [PAGES] (default 20000).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static long pages;
static pid_t toucher_tid;

__attribute__((noinline)) static void touch_pages(char *p, long n, long page)
{
	for (long i = 0; i < n; i++)
		p[i * page] = 1;
}

static void *toucher(void *arg)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p;

	(void)arg;
	prctl(PR_SET_NAME, "toucher");
	toucher_tid = (pid_t)syscall(SYS_gettid);
	p = mmap(NULL, (size_t)(pages * page), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("page_touch: mmap");
		exit(1);
	}
	madvise(p, (size_t)(pages * page), MADV_NOHUGEPAGE);
	touch_pages(p, pages, page);
	munmap(p, (size_t)(pages * page));
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t thread;

	pages = argc > 1 ? atol(argv[1]) : 20000;
	if (pages <= 0 || pages > 10000000) {
		fprintf(stderr, "usage: page_touch [PAGES (1-10000000)]\n");
		return 2;
	}
	if (pthread_create(&thread, NULL, toucher, NULL)) {
		perror("page_touch: pthread_create");
		return 1;
	}
	pthread_join(thread, NULL);
	printf("toucher tid=%d pages=%ld\n", (int)toucher_tid, pages);
	return 0;
}
