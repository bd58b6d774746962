/* dlopen_late.c - runs a while with only its startup libraries, then
 * dlopen()s LIB, calls its late_lib_spin() for SPIN_MS milliseconds of
 * CPU, and dlclose()s it before exiting: the library's mapping exists
 * only in the middle of the run. The end-to-end test of the mem source
 * checks that the capture still has a MAP record for it.
 * Usage: dlopen_late LIB [SPIN_MS [WAIT_MS]] (defaults 300, 300).
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void nap_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) != 0)
		;
}

int main(int argc, char **argv)
{
	int spin_ms = argc > 2 ? atoi(argv[2]) : 300;
	int wait_ms = argc > 3 ? atoi(argv[3]) : 300;
	uint64_t (*spin)(int);
	void *lib;

	if (argc < 2 || spin_ms < 0 || wait_ms < 0) {
		fprintf(stderr, "usage: dlopen_late LIB [SPIN_MS [WAIT_MS]]\n");
		return 2;
	}
	nap_ms(wait_ms);
	lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "dlopen_late: %s\n", dlerror());
		return 1;
	}
	*(void **)&spin = dlsym(lib, "late_lib_spin");
	if (!spin) {
		fprintf(stderr, "dlopen_late: %s\n", dlerror());
		return 1;
	}
	printf("dlopen_late: late_lib_spin -> %llu\n", (unsigned long long)spin(spin_ms));
	dlclose(lib);
	nap_ms(wait_ms);
	return 0;
}
