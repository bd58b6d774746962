/* run_tool.h - helpers for tests that exercise the perfcap-analyze binary
 * (its path comes from the PERFCAP_ANALYZE environment variable, set by
 * meson): run it capturing stdout and stderr, make and remove scratch
 * directories, read files. */
#ifndef TESTS_RUN_TOOL_H
#define TESTS_RUN_TOOL_H

#include <stddef.h>

struct tool_result {
	int status;    /* exit status, or 128 + signal number */
	char *out;     /* stdout, NUL-terminated */
	char *err;     /* stderr, NUL-terminated */
};

/* Runs perfcap-analyze with the NULL-terminated arguments. */
void run_analyze(struct tool_result *r, const char *arg, ...);
void tool_result_free(struct tool_result *r);

/* A fresh scratch directory; scratch_path joins a name to it (malloc'd). */
char *scratch_dir(void);
char *scratch_path(const char *dir, const char *name);
void scratch_remove(char *dir);

/* Copies the first len bytes of src to dst. 0 or -1. */
int copy_prefix(const char *src, const char *dst, size_t len);

/* Number of lines in text that contain needle. */
int count_lines_with(const char *text, const char *needle);

#endif /* TESTS_RUN_TOOL_H */
