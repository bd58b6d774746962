/* row_job.c - rows kept as values and run later (see row_job.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "row_job.h"
#include "sql_writer.h"

enum { COL_NULL, COL_INT, COL_TEXT };

struct row_job {
	sqlite3_stmt *st;
	int ncols;
	int *failed;
	int broken;                   /* a text could not be copied */
	uint8_t kind[ROW_JOB_MAX_COLS];
	int64_t value[ROW_JOB_MAX_COLS];
	char *text[ROW_JOB_MAX_COLS];
};

struct row_job *row_job_new(sqlite3_stmt *st, int ncols, int *failed)
{
	struct row_job *j;

	if (ncols < 1 || ncols > ROW_JOB_MAX_COLS)
		return NULL;
	j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	j->st = st;
	j->ncols = ncols;
	j->failed = failed;
	return j;
}

static int in_range(const struct row_job *j, int col)
{
	return col >= 1 && col <= j->ncols;
}

void row_job_int(struct row_job *j, int col, int64_t value)
{
	if (!in_range(j, col))
		return;
	j->kind[col - 1] = COL_INT;
	j->value[col - 1] = value;
}

int row_job_text(struct row_job *j, int col, const char *text)
{
	if (!in_range(j, col))
		return -1;
	free(j->text[col - 1]);
	j->text[col - 1] = NULL;
	j->kind[col - 1] = COL_NULL;
	if (!text)
		return 0;
	j->text[col - 1] = strdup(text);
	if (!j->text[col - 1]) {
		j->broken = 1;
		return -1;
	}
	j->kind[col - 1] = COL_TEXT;
	return 0;
}

void row_job_free(struct row_job *j)
{
	if (!j)
		return;
	for (int i = 0; i < j->ncols; i++)
		free(j->text[i]);
	free(j);
}

/* Binds, steps and frees: on the INSERT thread, or the caller's. */
static void run(void *arg)
{
	struct row_job *j = arg;

	for (int i = 0; i < j->ncols; i++) {
		if (j->kind[i] == COL_INT)
			sqlite3_bind_int64(j->st, i + 1, j->value[i]);
		else if (j->kind[i] == COL_TEXT)
			sqlite3_bind_text(j->st, i + 1, j->text[i], -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(j->st, i + 1);
	}
	if (j->broken) {
		fprintf(stderr, "perfcap-analyze: out of memory\n");
		sqlite3_clear_bindings(j->st);
		*j->failed = 1;
	} else if (db_run(j->st) < 0) {
		*j->failed = 1;
	}
	row_job_free(j);
}

void row_job_run(struct sql_writer *w, struct row_job *j, int *failed)
{
	if (!j) {
		fprintf(stderr, "perfcap-analyze: out of memory\n");
		*failed = 1;
	} else if (w)
		sql_writer_call(w, run, j);
	else
		run(j);
}
