/* report.h - outputs computed from an imported database: the text report
 * (report_text.c) and folded stacks (folded.c). Both work on the samples
 * chosen by the options (selection.c). */
#ifndef ANALYZE_REPORT_H
#define ANALYZE_REPORT_H

#include <stdint.h>
#include <stdio.h>
#include <sqlite3.h>

struct report_options {
	int         top;          /* functions to list (--top) */
	int         has_pid;
	uint32_t    pid;          /* --pid */
	const char *comm;         /* --comm, or NULL */
};

/* One row of sample_counts chosen by the options. */
struct selected_group {
	uint32_t pid;
	uint32_t tid;
	int64_t  ustack;          /* -1: none */
	int64_t  kstack;          /* -1: none */
	uint64_t count;
};

struct selection {
	struct selected_group *groups;
	size_t   len;
	uint64_t samples;         /* sum of counts */
};

/* Reads the rows of sample_counts matching --pid and --comm (selection.c).
 * 0 or -1 (reported). */
int selection_load(sqlite3 *db, const struct report_options *opts, struct selection *sel);
void selection_free(struct selection *sel);

int report_text(sqlite3 *db, const struct report_options *opts, FILE *out);
int report_folded(sqlite3 *db, const struct report_options *opts, FILE *out);

#endif /* ANALYZE_REPORT_H */
