/* batch_insert.h - fast bulk insertion of integer rows: rows are buffered
 * and written with one multi-row INSERT ... VALUES (...),(...) statement per
 * batch, which costs SQLite far less per row than one statement per row.
 * Used for the big tables (samples, stack_frames, sample_counts). */
#ifndef ANALYZE_BATCH_INSERT_H
#define ANALYZE_BATCH_INSERT_H

#include <stdint.h>
#include <sqlite3.h>

#define BATCH_ROWS 64

struct batch_insert {
	sqlite3 *db;
	sqlite3_stmt *full;       /* BATCH_ROWS rows */
	char *table_and_columns;  /* "samples (ts, pid, ...)" */
	int ncols;
	int pending;              /* rows buffered */
	int64_t *values;          /* BATCH_ROWS * ncols */
	uint8_t *is_null;
	int failed;
};

/* table_and_columns like "samples (ts, pid, tid)"; ncols must match. */
int batch_init(struct batch_insert *b, sqlite3 *db, const char *table_and_columns,
	       int ncols);

/* Values of the next row: set row[i] (and null[i] = 1 for SQL NULL), then
 * call batch_commit_row. */
int64_t *batch_row(struct batch_insert *b, uint8_t **null);
int batch_commit_row(struct batch_insert *b);

/* Writes the buffered rows. 0 or -1 (reported). */
int batch_flush(struct batch_insert *b);

/* Frees without writing what is still buffered. */
void batch_free(struct batch_insert *b);

#endif /* ANALYZE_BATCH_INSERT_H */
