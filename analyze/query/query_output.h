/* query_output.h - printing the rows of a SQL statement as tab-separated
 * text, CSV (RFC 4180) or JSON, each with the column names first. */
#ifndef ANALYZE_QUERY_OUTPUT_H
#define ANALYZE_QUERY_OUTPUT_H

#include <stdio.h>
#include <sqlite3.h>

enum query_format { QUERY_TAB = 0, QUERY_CSV, QUERY_JSON };

/* Parses "tab", "csv" or "json". 0 or -1. */
int query_format_parse(const char *name, enum query_format *out);

/* Steps st to the end, printing a header and every row. Returns 0, or the
 * SQLite error code of a failing step (nothing more is printed). */
int query_print(sqlite3_stmt *st, enum query_format format, FILE *out);

#endif /* ANALYZE_QUERY_OUTPUT_H */
