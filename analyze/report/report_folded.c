/* report_folded.c - report --folded: prints the folded stacks of the
 * scope (query/folded.c builds them), one "stack count" line each, the
 * input flamegraph.pl and speedscope read. */
#include <stdio.h>

#include "query/folded.h"
#include "report.h"

int report_folded(sqlite3 *db, const struct report_options *opts, FILE *out)
{
	struct folded_stack *lines = NULL;
	size_t n = 0;
	int rc = folded_stacks_load(db, opts, &lines, &n);

	for (size_t i = 0; rc == 0 && i < n; i++)
		fprintf(out, "%s %llu\n", lines[i].text, (unsigned long long)lines[i].count);
	folded_stacks_free(lines, n);
	return rc;
}
