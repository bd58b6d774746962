/* test_stage.c - staged rows (db/stage.h) against plain INSERTs: the same
 * rows written through a batch with the stage attached and bound one by
 * one into a reference table must read back equal, value and type, in
 * rowid order: integers at every serial type's bounds, NULL, text (empty,
 * long), enough rows for many leaves, an interior root and several copies.
 * A value SQLite would convert ends the staging and the rows stay right;
 * a table with an index or a generated column is never staged. The same
 * with the rows encoded on the producer's thread and copied on a writer
 * thread (batch_encode_here), over several images. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "db/batch_insert.h"
#include "db/db.h"
#include "db/sql_writer.h"
#include "db/stage.h"

static const int64_t bounds[] = {
	0, 1, -1, 2, 127, 128, -128, -129, 32767, 32768, -32768, -32769,
	8388607, 8388608, -8388608, -8388609, 2147483647, 2147483648ll,
	-2147483648ll, -2147483649ll, 140737488355327ll, 140737488355328ll,
	-140737488355328ll, -140737488355329ll, INT64_MAX, INT64_MIN,
};
#define NBOUNDS (sizeof(bounds) / sizeof(bounds[0]))

static sqlite3 *open_db(void)
{
	sqlite3 *db;

#ifndef PERFCAP_HAVE_DESERIALIZE
	cr_skip_test("SQLite without sqlite3_deserialize: nothing is staged");
#endif
	db = db_open_for_load(":memory:");

	cr_assert(db);
	cr_assert_eq(db_exec(db,
		"CREATE TABLE t (id INTEGER PRIMARY KEY, a INTEGER, b TEXT, c, d INTEGER);"
		"CREATE TABLE ref (id INTEGER PRIMARY KEY, a INTEGER, b TEXT, c, d INTEGER);"), 0);
	cr_assert_eq(stage_attach(db), 0);
	cr_assert_eq(db_exec(db, "BEGIN"), 0);
	return db;
}

/* Row i's values: a at the bounds, b text of varying length or NULL, c
 * an integer or text (no affinity), d NULL. */
static void row_values(int64_t i, char *text, size_t len, int64_t *a, const char **b,
		       int *b_null, int64_t *c, const char **c_text)
{
	size_t n = (size_t)(i % 101);   /* a batch keeps 127 bytes of text a row */

	*a = (int64_t)((uint64_t)bounds[i % NBOUNDS] + (uint64_t)(i % 5 == 4 ? i : 0));
	memset(text, 'x' + (int)(i % 3), n < len ? n : len - 1);
	text[n < len ? n : len - 1] = '\0';
	*b = text;
	*b_null = i % 17 == 3;
	*c = -i * 1000003;
	*c_text = i % 7 == 0 ? "seven" : NULL;
}

/* Rows 0..rows into the batch, then flushed; and the same rows bound one
 * by one into ref, afterwards: the batch's writer thread may be using
 * the connection until the flush. */
static void fill(sqlite3 *db, struct batch_insert *b, int64_t rows)
{
	sqlite3_stmt *ref;
	char text[200];

	for (int64_t i = 0; i < rows; i++) {
		int64_t a, c;
		const char *t, *c_text;
		int b_null;
		uint8_t *kind;
		int64_t *row = batch_row(b, &kind);

		row_values(i, text, sizeof(text), &a, &t, &b_null, &c, &c_text);
		row[0] = a;
		batch_text_copy(b, row, kind, 1, b_null ? NULL : t);
		if (c_text)
			batch_text(row, kind, 2, c_text);
		else
			row[2] = c;
		kind[3] = BATCH_NULL;
		cr_assert_eq(batch_commit_row(b), 0);
	}
	cr_assert_eq(batch_flush(b), 0);
	ref = db_prepare(db, "INSERT INTO ref (a, b, c, d) VALUES (?,?,?,NULL)");
	for (int64_t i = 0; i < rows; i++) {
		int64_t a, c;
		const char *t, *c_text;
		int b_null;

		row_values(i, text, sizeof(text), &a, &t, &b_null, &c, &c_text);
		sqlite3_bind_int64(ref, 1, a);
		db_bind_text(ref, 2, b_null ? NULL : t);
		if (c_text)
			db_bind_text(ref, 3, c_text);
		else
			sqlite3_bind_int64(ref, 3, c);
		cr_assert_eq(db_run(ref), 0);
	}
	sqlite3_finalize(ref);
}

static void assert_same(sqlite3 *db, const char *table, int64_t rows)
{
	char sql[512];

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", table);
	cr_assert_eq(db_query_int(db, sql, -1), rows);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s x JOIN ref r USING (id) WHERE"
		 " x.a IS r.a AND typeof(x.a) = typeof(r.a) AND x.b IS r.b AND"
		 " typeof(x.b) = typeof(r.b) AND x.c IS r.c AND typeof(x.c) = typeof(r.c)"
		 " AND x.d IS NULL", table);

	cr_assert_eq(db_query_int(db, sql, -1), rows, "%s differs from ref", table);
	cr_assert_eq(db_query_int(db, "SELECT count(*) FROM pragma_integrity_check"
				  " WHERE integrity_check <> 'ok'", -1), 0);
}

/* encode: the rows encoded on this thread and copied on a writer thread
 * (batch_encode_here), two images taking turns. */
static void check_rows_as(int64_t rows, int encode)
{
	sqlite3 *db = open_db();
	struct sql_writer *w = encode ? sql_writer_start() : NULL;
	struct batch_insert b;

	cr_assert_eq(batch_init(&b, db, "t (a, b, c, d)", 4), 0);
	cr_assert(b.stage, "t is staged");
	if (encode) {
		cr_assert(w);
		batch_encode_here(&b, w);
		cr_assert(b.encode_here);
	}
	fill(db, &b, rows);
	cr_assert(b.stage, "t stayed staged");
	batch_free(&b);
	sql_writer_stop(w);
	assert_same(db, "t", rows);
	cr_assert_eq(db_exec(db, "COMMIT"), 0);
	stage_detach(db);
	sqlite3_close(db);
}

static void check_rows(int64_t rows) { check_rows_as(rows, 0); }

Test(stage, no_rows) { check_rows(0); }
Test(stage, one_leaf) { check_rows(100); }
Test(stage, many_leaves_and_copies) { check_rows(400000); }
Test(stage, encoded_here_no_rows) { check_rows_as(0, 1); }
Test(stage, encoded_here_many_images) { check_rows_as(400000, 1); }

/* Text into an INTEGER column: SQLite converts '12' to 12, so the table
 * leaves the stage at that row and the rest is INSERTed, in order; rows
 * encoded on this thread too, the conversion after several images. */
static void converting_value_at(int n, int at, int encode)
{
	sqlite3 *db = open_db();
	struct sql_writer *w = encode ? sql_writer_start() : NULL;
	struct batch_insert b;
	sqlite3_stmt *ref;
	char sql[128];

	cr_assert_eq(batch_init(&b, db, "t (a)", 1), 0);
	cr_assert(b.stage);
	if (encode)
		batch_encode_here(&b, w);
	for (int i = 0; i < n; i++) {
		uint8_t *kind;
		int64_t *row = batch_row(&b, &kind);

		if (i == at)
			batch_text(row, kind, 0, "12");
		else
			row[0] = i;
		cr_assert_eq(batch_commit_row(&b), 0);
	}
	cr_assert_eq(batch_flush(&b), 0);
	cr_assert_null(b.stage, "staging ended");
	batch_free(&b);
	sql_writer_stop(w);
	ref = db_prepare(db, "INSERT INTO ref (a) VALUES (?)");
	for (int i = 0; i < n; i++) {
		if (i == at)
			db_bind_text(ref, 1, "12");
		else
			sqlite3_bind_int64(ref, 1, i);
		cr_assert_eq(db_run(ref), 0);
	}
	sqlite3_finalize(ref);
	cr_assert_eq(db_query_int(db, "SELECT count(*) FROM t JOIN ref r USING (id)"
				  " WHERE t.a IS r.a AND typeof(t.a) = typeof(r.a)", -1), n);
	snprintf(sql, sizeof(sql), "SELECT a FROM t WHERE id = %d", at + 1);
	cr_assert_eq(db_query_int(db, sql, -1), 12);
	sqlite3_close(db);
}

Test(stage, converting_value_ends_staging) { converting_value_at(1000, 700, 0); }
Test(stage, converting_value_ends_encoding) { converting_value_at(1000000, 700000, 1); }

Test(stage, refused_tables)
{
	sqlite3 *db = open_db();
	struct batch_insert b;

	cr_assert_eq(db_exec(db, "CREATE TABLE g (a INTEGER, b INTEGER GENERATED ALWAYS AS"
			     " (a + 1) VIRTUAL); CREATE TABLE i (a INTEGER); CREATE INDEX"
			     " i_a ON i (a); CREATE TABLE w (a INTEGER PRIMARY KEY, b) WITHOUT"
			     " ROWID; CREATE TABLE n (a INTEGER NOT NULL);"
			     " CREATE TABLE r (a REAL)"), 0);
	const char *refused[] = { "g (a)", "i (a)", "w (a, b)", "n (a)", "r (a)", "t (id, a)" };
	for (size_t k = 0; k < sizeof(refused) / sizeof(refused[0]); k++) {
		int ncols = strchr(refused[k], ',') ? 2 : 1;

		cr_assert_eq(batch_init(&b, db, refused[k], ncols), 0);
		cr_assert_null(b.stage, "%s is not staged", refused[k]);
		batch_free(&b);
	}
	sqlite3_close(db);
}
