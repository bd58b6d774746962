/* fuzz_common.h - shared by the libFuzzer targets of tests/fuzz/: fuzz
 * bytes as a file the tools can open by path, and perfcap-analyze's own
 * main() (built with -Dmain=perfcap_analyze_main) run on it. */
#ifndef TESTS_FUZZ_COMMON_H
#define TESTS_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* The bytes in anonymous memory file number slot (0 or 1, reused by each
 * run); writes its /proc/self/fd path into path (64 bytes). Returns the
 * fd, which stays open. */
int fuzz_memfile(int slot, const uint8_t *data, size_t size, char path[64]);

/* stdout to /dev/null once: the reports are produced, not kept. */
void fuzz_quiet_stdout(void);

/* Runs perfcap-analyze with the NULL-terminated arguments (argv[0] is
 * added); returns its exit status. */
int fuzz_analyze(const char *arg, ...);

/* A private scratch directory for outputs (created once). */
const char *fuzz_scratch_dir(void);

#endif /* TESTS_FUZZ_COMMON_H */
