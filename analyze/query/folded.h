/* folded.h - folded stacks (folded.c): one line per distinct stack of a
 * selection, "comm;outermost;...;innermost", with its sample count;
 * merged and sorted bytewise so the result is deterministic. Built as
 * data: report --folded prints it, diff keys stacks by it. */
#ifndef ANALYZE_QUERY_FOLDED_H
#define ANALYZE_QUERY_FOLDED_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

#include "callchains.h"
#include "names.h"
#include "scope.h"
#include "selection.h"

struct folded_stack {
	char *text;
	uint64_t count;
};

/* Folded stacks of the selection. 0 or -1 (reported). */
int folded_stacks_build(const struct selection *sel, const struct callchains *cc,
			const struct names *names, struct folded_stack **lines, size_t *n);

/* Resolves the scope of opts, selects its samples and builds their folded
 * stacks. 0 or -1 (reported). */
int folded_stacks_load(sqlite3 *db, const struct report_options *opts,
		       struct folded_stack **lines, size_t *n);

void folded_stacks_free(struct folded_stack *lines, size_t n);

#endif /* ANALYZE_QUERY_FOLDED_H */
