/* jit_spin.c - a tiny "JIT": copies a spin loop into anonymous executable
 * memory, describes it in /tmp/perf-PID.map the way JIT runtimes do, and
 * spends its time there. The end-to-end test checks that samples in that
 * memory are named jit_spin_loop from the capture alone.
 *
 * Usage: jit_spin [SECONDS] (default 2). x86-64 only. The perf map also
 * gets one malformed line, which the recorder must count. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* push rbp; mov rbp,rsp; mov rax,rdi; 1: sub rax,1; jnz 1b; pop rbp; ret
 * (a frame pointer, so the caller shows up in frame-pointer stacks) */
static const uint8_t spin_code[] = {
	0x55, 0x48, 0x89, 0xe5, 0x48, 0x89, 0xf8,
	0x48, 0x83, 0xe8, 0x01, 0x75, 0xfa, 0x5d, 0xc3,
};

typedef uint64_t (*spin_fn)(uint64_t iterations);

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static spin_fn make_jit_code(void)
{
	uint8_t *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			    -1, 0);

	if (mem == MAP_FAILED)
		return NULL;
	memcpy(mem, spin_code, sizeof(spin_code));
	if (mprotect(mem, 4096, PROT_READ | PROT_EXEC) != 0)
		return NULL;
	return (spin_fn)(uintptr_t)mem;
}

static int write_perf_map(spin_fn fn)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "%lx %zx jit_spin_loop\n", (unsigned long)(uintptr_t)fn, sizeof(spin_code));
	fprintf(f, "this line is not a perf map entry\n");
	return fclose(f);
}

/* Not a leaf: it calls the JIT code, so it has a frame of its own. */
__attribute__((noinline)) static uint64_t run_jit(spin_fn fn)
{
	return fn(2000000);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2.0;
	spin_fn fn = make_jit_code();
	double end;
	uint64_t calls = 0;

	if (!fn || write_perf_map(fn) != 0) {
		perror("jit_spin");
		return 1;
	}
	end = now_s() + seconds;
	while (now_s() < end) {
		run_jit(fn);
		calls++;
	}
	printf("pid=%d calls=%llu\n", (int)getpid(), (unsigned long long)calls);
	return 0;
}
