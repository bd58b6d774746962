/* test_diff_capture.h - synthetic captures for the diff tests: one
 * process "app" (pid 100, threads 100 "app" and 101 "io") whose binary
 * /usr/bin/app has the functions main, work, hot, cold and fresh. A
 * "build" moves every function by shift bytes and changes the build-id,
 * so two builds have the same names at different addresses. Samples, in
 * stacks innermost first: hot <- work <- main, cold <- work <- main,
 * fresh <- main. Thread 101 makes clock_nanosleep calls. */
#ifndef TESTS_DIFF_CAPTURE_H
#define TESTS_DIFF_CAPTURE_H

#include <stdint.h>

struct diff_capture {
	const char *kernel;       /* META host.kernel.release ("6.1.0-test") */
	const char *filter_comm;  /* META filter.comm ("none") */
	unsigned freq_hz;         /* META sampling.cpu.freq_hz (100) */
	uint64_t duration_ns;     /* STATS record.duration_ns (4 s) */
	uint64_t shift;           /* function address shift: another build */
	int hot, cold, fresh;     /* samples per stack */
	int sleeps;               /* clock_nanosleep calls of thread 101 */
	uint64_t sleep_ns;        /* their duration, + (call % 10) x sleep_step */
	uint64_t sleep_step;      /* (1 us): each run of 10 calls spans 9 steps */
	uint64_t lost;            /* STATS cpu.lost.kernel */
	uint64_t busy_ns, steal_ns; /* STATS host.cpu.busy_ns, .steal_ns (idle 0);
				     * none when both are 0 */
};

/* Defaults above, with hot = 300 and cold = 100. */
struct diff_capture diff_capture_basic(void);

/* Writes the capture to path; 0 or -errno. */
int write_diff_capture(const char *path, const struct diff_capture *c);

#endif /* TESTS_DIFF_CAPTURE_H */
