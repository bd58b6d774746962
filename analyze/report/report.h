/* report.h - outputs computed from an imported database: the report's
 * model and its text rendering (report_run.c), the JSON report
 * (report_json.c, docs/report-json.md)
 * and folded stacks (report_folded.c). All work on the scope chosen by
 * the options (query/scope.h) and on the samples of that scope
 * (query/selection.h). */
#ifndef ANALYZE_REPORT_H
#define ANALYZE_REPORT_H

#include <stdio.h>
#include <sqlite3.h>

#include "query/scope.h"
#include "query/selection.h"

/* The report's model: everything the sections show, computed once from
 * the database (report_run.c), then rendered as text or JSON any number
 * of times (report --html renders it twice). report_model_build returns
 * NULL when out of memory; a model whose load failed renders as -1. */
struct report_model;
struct report_model *report_model_build(sqlite3 *db, const struct report_options *opts);
int report_model_text(const struct report_model *m, FILE *out);
int report_model_json(const struct report_model *m, FILE *out);
void report_model_free(struct report_model *m);

/* Build, render once, free. 0 or -1. */
int report_text(sqlite3 *db, const struct report_options *opts, FILE *out);

/* Prints the folded stacks of the scope, "stack count" per line. 0 or -1. */
int report_folded(sqlite3 *db, const struct report_options *opts, FILE *out);

/* The report as one JSON object (docs/report-json.md). 0 or -1; on -1 the
 * output may hold a partial document. */
int report_json(sqlite3 *db, const struct report_options *opts, FILE *out);

#endif /* ANALYZE_REPORT_H */
