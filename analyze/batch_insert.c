/* batch_insert.c - multi-row INSERTs for integer rows (see batch_insert.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch_insert.h"
#include "db.h"

/* "INSERT INTO t (a, b) VALUES (?,?),(?,?)..." for rows rows. */
static sqlite3_stmt *prepare_rows(struct batch_insert *b, int rows)
{
	size_t row_len = (size_t)b->ncols * 2 + 3;
	size_t len = strlen(b->table_and_columns) + 32 + row_len * (size_t)rows;
	char *sql = malloc(len);
	sqlite3_stmt *st = NULL;
	size_t pos;

	if (!sql)
		return NULL;
	pos = (size_t)snprintf(sql, len, "INSERT INTO %s VALUES ", b->table_and_columns);
	for (int r = 0; r < rows; r++) {
		sql[pos++] = r ? ',' : ' ';
		sql[pos++] = '(';
		for (int c = 0; c < b->ncols; c++) {
			if (c)
				sql[pos++] = ',';
			sql[pos++] = '?';
		}
		sql[pos++] = ')';
	}
	sql[pos] = '\0';
	st = db_prepare(b->db, sql);
	free(sql);
	return st;
}

int batch_init(struct batch_insert *b, sqlite3 *db, const char *table_and_columns,
	       int ncols)
{
	memset(b, 0, sizeof(*b));
	b->db = db;
	b->ncols = ncols;
	b->table_and_columns = strdup(table_and_columns);
	b->values = calloc((size_t)BATCH_ROWS * ncols, sizeof(*b->values));
	b->is_null = calloc((size_t)BATCH_ROWS * ncols, 1);
	if (!b->table_and_columns || !b->values || !b->is_null)
		return -1;
	b->full = prepare_rows(b, BATCH_ROWS);
	return b->full ? 0 : -1;
}

int64_t *batch_row(struct batch_insert *b, uint8_t **null)
{
	size_t first = (size_t)b->pending * b->ncols;

	memset(b->is_null + first, 0, (size_t)b->ncols);
	*null = b->is_null + first;
	return b->values + first;
}

static int run_rows(struct batch_insert *b, sqlite3_stmt *st, int rows)
{
	int n = rows * b->ncols;

	for (int i = 0; i < n; i++) {
		if (b->is_null[i])
			sqlite3_bind_null(st, i + 1);
		else
			sqlite3_bind_int64(st, i + 1, b->values[i]);
	}
	if (sqlite3_step(st) != SQLITE_DONE) {
		db_report_error(b->db, b->table_and_columns);
		sqlite3_reset(st);
		b->failed = 1;
		return -1;
	}
	sqlite3_reset(st);
	return 0;
}

int batch_commit_row(struct batch_insert *b)
{
	if (++b->pending < BATCH_ROWS)
		return 0;
	b->pending = 0;
	return run_rows(b, b->full, BATCH_ROWS);
}

int batch_flush(struct batch_insert *b)
{
	sqlite3_stmt *st;
	int rc;

	if (b->pending == 0)
		return b->failed ? -1 : 0;
	st = prepare_rows(b, b->pending);
	if (!st)
		return -1;
	rc = run_rows(b, st, b->pending);
	sqlite3_finalize(st);
	b->pending = 0;
	return rc;
}

void batch_free(struct batch_insert *b)
{
	sqlite3_finalize(b->full);
	free(b->table_and_columns);
	free(b->values);
	free(b->is_null);
	memset(b, 0, sizeof(*b));
}
