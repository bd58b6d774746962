/* test_sql_writer.c - the INSERT thread (db/sql_writer.h) with batches
 * (db/batch_insert.h) and row jobs (db/row_job.h): rows handed over from
 * the loading thread reach the database in the order they were handed
 * over, across many wraps of a batch's ring of buffers; a row job runs
 * after the batches queued before it and keeps long texts, NULLs and
 * integers at their bounds; a failing row job is reported through its
 * flag, with or without the thread. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "db/batch_insert.h"
#include "db/db.h"
#include "db/row_job.h"
#include "db/sql_writer.h"

static sqlite3 *open_db(void)
{
	sqlite3 *db = db_open_for_load(":memory:");

	cr_assert(db);
	cr_assert_eq(db_exec(db,
		"CREATE TABLE t (seq INTEGER, src TEXT);"
		"CREATE TABLE u (a INTEGER, b TEXT, c INTEGER NOT NULL);"
		"BEGIN"), 0);
	return db;
}

static void add_batch_row(struct batch_insert *b, int64_t seq)
{
	uint8_t *kind;
	int64_t *row = batch_row(b, &kind);

	row[0] = seq;
	batch_text(row, kind, 1, "batch");
	cr_assert_eq(batch_commit_row(b), 0);
}

/* Rows 0..n through the batch, a row job into the same table after every
 * full batch: rowid order must be seq order. */
static void check_order(int ring)
{
	sqlite3 *db = open_db();
	struct sql_writer *w = sql_writer_start();
	sqlite3_stmt *st = db_prepare(db, "INSERT INTO t (seq, src) VALUES (?,?)");
	struct batch_insert b;
	int failed = 0;
	int64_t seq = 0, batches = 3 * ring + 5;

	cr_assert(w && st);
	cr_assert_eq(batch_init(&b, db, "t (seq, src)", 2), 0);
	batch_use_writer(&b, w, ring);
	for (int64_t k = 0; k < batches; k++) {
		for (int r = 0; r < BATCH_ROWS; r++)
			add_batch_row(&b, seq++);
		/* the batch just went to the thread: the job comes after it */
		struct row_job *j = row_job_new(st, 2, &failed);
		cr_assert(j);
		row_job_int(j, 1, seq++);
		cr_assert_eq(row_job_text(j, 2, "job"), 0);
		row_job_run(w, j, &failed);
	}
	add_batch_row(&b, seq++);
	cr_assert_eq(batch_flush(&b), 0);
	batch_free(&b);          /* waits for its slots on the thread */
	sql_writer_stop(w);
	cr_assert_eq(failed, 0);
	cr_assert_eq(db_query_int(db, "SELECT count(*) FROM t", -1), seq);
	cr_assert_eq(db_query_int(db, "SELECT count(*) FROM t WHERE seq <> rowid - 1", -1), 0,
		     "rows left the thread out of order");
	cr_assert_eq(db_query_int(db, "SELECT count(*) FROM t WHERE src = 'job'", -1), batches);
	sqlite3_finalize(st);
	sqlite3_close(db);
}

Test(sql_writer, order_across_chunk_ring_wraps) { check_order(BATCH_RING_CHUNK); }
Test(sql_writer, order_across_steady_ring_wraps) { check_order(BATCH_RING_STEADY); }

/* A job's values, run on the thread and without one. */
static void check_values(int threaded)
{
	sqlite3 *db = open_db();
	struct sql_writer *w = threaded ? sql_writer_start() : NULL;
	sqlite3_stmt *st = db_prepare(db, "INSERT INTO u (a, b, c) VALUES (?,?,?)");
	char long_text[5000];
	int failed = 0;
	struct row_job *j;

	memset(long_text, 'p', sizeof(long_text) - 1);
	long_text[sizeof(long_text) - 1] = '\0';
	cr_assert(st && (w || !threaded));
	j = row_job_new(st, 3, &failed);
	row_job_int(j, 1, INT64_MIN);
	row_job_text(j, 2, long_text);
	row_job_int(j, 3, INT64_MAX);
	long_text[0] = 'q';      /* the job holds a copy */
	row_job_run(w, j, &failed);
	j = row_job_new(st, 3, &failed);
	row_job_text(j, 2, NULL);
	row_job_int(j, 3, 7);
	row_job_int(j, 4, 99);   /* out of range: ignored */
	row_job_run(w, j, &failed);
	sql_writer_stop(w);
	cr_assert_eq(failed, 0);
	cr_assert_eq(db_query_int(db, "SELECT count(*) FROM u", -1), 2);
	cr_assert_eq(db_query_int(db, "SELECT count(*) FROM u WHERE rowid = 1 AND"
				  " a = -9223372036854775807 - 1 AND c = 9223372036854775807 AND"
				  " length(b) = 4999 AND b NOT LIKE 'q%' AND b NOT GLOB '*[^p]*'",
				  -1), 1);
	cr_assert_eq(db_query_int(db, "SELECT count(*) FROM u WHERE rowid = 2 AND"
				  " a IS NULL AND b IS NULL AND c = 7", -1), 1);
	sqlite3_finalize(st);
	sqlite3_close(db);
}

Test(sql_writer, job_values_threaded) { check_values(1); }
Test(sql_writer, job_values_inline) { check_values(0); }

/* A row the database refuses (NOT NULL) sets the flag, the next job
 * still runs. */
static void check_failure(int threaded)
{
	sqlite3 *db = open_db();
	struct sql_writer *w = threaded ? sql_writer_start() : NULL;
	sqlite3_stmt *st = db_prepare(db, "INSERT INTO u (a, b, c) VALUES (?,?,?)");
	int failed = 0;
	struct row_job *j = row_job_new(st, 3, &failed);

	row_job_int(j, 1, 1);              /* c stays NULL: refused */
	row_job_run(w, j, &failed);
	j = row_job_new(st, 3, &failed);
	row_job_int(j, 3, 2);
	row_job_run(w, j, &failed);
	sql_writer_stop(w);
	cr_assert_eq(failed, 1);
	cr_assert_eq(db_query_int(db, "SELECT count(*) FROM u WHERE c = 2", -1), 1);
	row_job_run(NULL, NULL, &failed);  /* out of memory upstream */
	cr_assert_eq(failed, 1);
	failed = 0;
	row_job_run(NULL, NULL, &failed);
	cr_assert_eq(failed, 1, "a job that could not be made counts as failed");
	sqlite3_finalize(st);
	sqlite3_close(db);
}

Test(sql_writer, failed_job_threaded) { check_failure(1); }
Test(sql_writer, failed_job_inline) { check_failure(0); }
