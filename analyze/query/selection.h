/* selection.h - the sampled stacks a scope looks at (selection.c): the
 * rows of sample_counts, or with a time window the samples inside it,
 * grouped by thread and stack and read once so every consumer works on
 * the same rows. */
#ifndef ANALYZE_QUERY_SELECTION_H
#define ANALYZE_QUERY_SELECTION_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

#include "scope.h"

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

/* Reads the sample groups of the scope: sample_counts when there is no
 * time window, else the samples in it. 0 or -1 (reported). */
int selection_load(sqlite3 *db, const struct report_scope *scope, struct selection *sel);
void selection_free(struct selection *sel);

#endif /* ANALYZE_QUERY_SELECTION_H */
