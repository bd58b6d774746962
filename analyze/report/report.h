/* report.h - outputs computed from an imported database: the text report
 * (report_run.c), the JSON report (report_json.c, docs/report-json.md)
 * and folded stacks (report_folded.c). All work on the scope chosen by
 * the options (query/scope.h) and on the samples of that scope
 * (query/selection.h). */
#ifndef ANALYZE_REPORT_H
#define ANALYZE_REPORT_H

#include <stdio.h>
#include <sqlite3.h>

#include "query/scope.h"
#include "query/selection.h"

int report_text(sqlite3 *db, const struct report_options *opts, FILE *out);

/* Prints the folded stacks of the scope, "stack count" per line. 0 or -1. */
int report_folded(sqlite3 *db, const struct report_options *opts, FILE *out);

/* The report as one JSON object (docs/report-json.md). 0 or -1; on -1 the
 * output may hold a partial document. */
int report_json(sqlite3 *db, const struct report_options *opts, FILE *out);

#endif /* ANALYZE_REPORT_H */
