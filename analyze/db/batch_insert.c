/* batch_insert.c - multi-row INSERTs (see batch_insert.h), or rows
 * staged as records (stage.h) for the tables that allow it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch_insert.h"
#include "db.h"
#include "sql_writer.h"
#include "stage.h"

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

/* Makes slot the one being filled, allocating its values on first use
 * (its text space waits for the first text copied). */
static int use_slot(struct batch_insert *b, int slot)
{
	size_t n = (size_t)BATCH_ROWS * b->ncols;

	if (!b->slot_values[slot]) {
		b->slot_values[slot] = calloc(n, sizeof(int64_t));
		b->slot_kinds[slot] = calloc(n, 1);
		if (!b->slot_values[slot] || !b->slot_kinds[slot]) {
			b->failed = 1;
			return -1;
		}
	}
	b->slot = slot;
	b->values = b->slot_values[slot];
	b->kinds = b->slot_kinds[slot];
	b->text = b->slot_text[slot];
	return 0;
}

int batch_init(struct batch_insert *b, sqlite3 *db, const char *table_and_columns,
	       int ncols)
{
	memset(b, 0, sizeof(*b));
	b->db = db;
	b->ncols = ncols;
	b->ring = BATCH_RING_STEADY;
	b->table_and_columns = strdup(table_and_columns);
	if (!b->table_and_columns || use_slot(b, 0) < 0)
		return -1;
	b->full = prepare_rows(b, BATCH_ROWS);
	if (!b->full)
		return -1;
	b->stage = stage_open(db, table_and_columns, ncols);
	return 0;
}

void batch_use_writer(struct batch_insert *b, struct sql_writer *w, int ring)
{
	b->writer = w;
	if (w)
		b->ring = ring < 2 ? 2 : ring > BATCH_SLOTS ? BATCH_SLOTS : ring;
}

void batch_encode_here(struct batch_insert *b, struct sql_writer *w)
{
	batch_use_writer(b, w, BATCH_RING_STEADY);
	if (!w || !b->stage)
		return;
	b->encode_here = 1;
	stage_image_init(&b->img[0]);
	stage_image_init(&b->img[1]);
	b->img_cur = 0;
}

int64_t *batch_row(struct batch_insert *b, uint8_t **kind)
{
	size_t first = (size_t)b->pending * b->ncols;

	memset(b->kinds + first, BATCH_INT, (size_t)b->ncols);
	*kind = b->kinds + first;
	return b->values + first;
}

void batch_text_copy(struct batch_insert *b, int64_t *row, uint8_t *kind, int col,
		     const char *text)
{
	size_t row_end = (size_t)(b->pending + 1) * BATCH_TEXT_PER_ROW;
	size_t room, len;
	char *copy;

	if (!text) {
		kind[col] = BATCH_NULL;
		return;
	}
	if (!b->text) {
		b->text = b->slot_text[b->slot] = malloc((size_t)BATCH_ROWS * BATCH_TEXT_PER_ROW);
		if (!b->text) {
			b->failed = 1;
			kind[col] = BATCH_NULL;
			return;
		}
	}
	if (b->text_used < (size_t)b->pending * BATCH_TEXT_PER_ROW)
		b->text_used = (size_t)b->pending * BATCH_TEXT_PER_ROW;
	room = row_end - b->text_used;
	if (room == 0) {      /* the row's text space is used up */
		batch_text(row, kind, col, "");
		return;
	}
	len = strnlen(text, room - 1);
	copy = b->text + b->text_used;
	memcpy(copy, text, len);
	copy[len] = '\0';
	b->text_used += len + 1;
	batch_text(row, kind, col, copy);
}

static int run_rows(struct batch_insert *b, sqlite3_stmt *st, int rows,
		    const int64_t *values, const uint8_t *kinds)
{
	int n = rows * b->ncols;

	for (int i = 0; i < n; i++) {
		if (kinds[i] == BATCH_INT)
			sqlite3_bind_int64(st, i + 1, values[i]);
		else if (kinds[i] == BATCH_TEXT)
			sqlite3_bind_text(st, i + 1, (const char *)(intptr_t)values[i], -1,
					  SQLITE_STATIC);
		else
			sqlite3_bind_null(st, i + 1);
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

/* rows rows through a multi-row INSERT (the full one, or one prepared for
 * fewer rows). */
static int insert_rows(struct batch_insert *b, int rows, const int64_t *values,
		       const uint8_t *kinds)
{
	sqlite3_stmt *st;
	int rc;

	if (rows == BATCH_ROWS)
		return run_rows(b, b->full, rows, values, kinds);
	if (rows == 0)
		return 0;
	st = prepare_rows(b, rows);
	if (!st) {
		b->failed = 1;
		return -1;
	}
	rc = run_rows(b, st, rows, values, kinds);
	sqlite3_finalize(st);
	return rc;
}

/* Writes the staged rows and stops staging (the table's next rows are
 * INSERTed, after them). */
static int leave_stage(struct batch_insert *b)
{
	int rc = stage_flush(b->stage);

	stage_close(b->stage);
	b->stage = NULL;
	if (rc < 0)
		b->failed = 1;
	return rc;
}

/* Writes rows rows: staged when the table is, else INSERTed; a row that
 * cannot be staged ends the staging. */
static int write_rows(struct batch_insert *b, int rows, const int64_t *values,
		      const uint8_t *kinds)
{
	size_t at;
	int done = 0, rc;

	if (b->stage) {
		rc = stage_rows(b->stage, values, kinds, rows, &done);
		if (rc == 0)
			return 0;
		if (rc < 0 || leave_stage(b) < 0) {
			b->failed = 1;
			return -1;
		}
	}
	at = (size_t)done * (size_t)b->ncols;
	return insert_rows(b, rows - done, values + at, kinds + at);
}

void batch_run_slot(struct batch_insert *b, int slot)
{
	if (b->encode_here) {
		if (stage_flush_image(b->stage, &b->img[slot]) < 0)
			b->failed = 1;
		return;
	}
	write_rows(b, BATCH_ROWS, b->slot_values[slot], b->slot_kinds[slot]);
}

/* Leaves the encoding mode (a row that cannot be staged, or the end):
 * the writer drained, the images copied in their order; rows after it
 * go through the slots. 0 or -1. */
static int stop_encoding(struct batch_insert *b)
{
	int rc;

	sql_writer_drain(b->writer);
	rc = stage_flush_image(b->stage, &b->img[b->img_cur]);
	stage_image_free(&b->img[0]);
	stage_image_free(&b->img[1]);
	b->encode_here = 0;
	if (rc < 0 || b->failed) {
		b->failed = 1;
		return -1;
	}
	return 0;
}

/* Encodes the row just committed (the slot's first: rows do not pile up
 * in this mode); a full image goes to the writer, and the other one is
 * filled once the writer is done with it. */
static int encode_row(struct batch_insert *b)
{
	int rc = stage_row_into(b->stage, &b->img[b->img_cur], b->values, b->kinds);

	b->text_used = 0;
	if (rc == 1) {   /* cannot be staged: this row and the rest are INSERTed */
		if (stop_encoding(b) < 0 || leave_stage(b) < 0)
			return -1;
		return insert_rows(b, 1, b->values, b->kinds);
	}
	if (rc < 0 || b->failed) {
		b->failed = 1;
		return -1;
	}
	if (stage_image_full(&b->img[b->img_cur])) {
		sql_writer_submit(b->writer, b, b->img_cur);
		b->img_cur ^= 1;
		sql_writer_wait_slot(b->writer, b, b->img_cur);
	}
	return 0;
}

/* Hands the full current slot to the writer and moves to the next one. */
static int hand_over(struct batch_insert *b)
{
	int next = (b->slot + 1) % b->ring;

	sql_writer_submit(b->writer, b, b->slot);
	/* a quarter of a deep ring at once, half of a small one as before */
	sql_writer_wait_slots(b->writer, b, next, b->ring >= 16 ? b->ring / 4 : b->ring / 2);
	return use_slot(b, next);
}

int batch_commit_row(struct batch_insert *b)
{
	if (b->encode_here)
		return encode_row(b);
	if (++b->pending < BATCH_ROWS)
		return 0;
	b->pending = 0;
	b->text_used = 0;
	if (b->writer)
		return hand_over(b);
	return write_rows(b, BATCH_ROWS, b->values, b->kinds);
}

static void wait_all_slots(struct batch_insert *b)
{
	for (int s = 0; b->writer && s < BATCH_SLOTS; s++)
		sql_writer_wait_slot(b->writer, b, s);
}

int batch_flush(struct batch_insert *b)
{
	int rc;

	if (b->encode_here && stop_encoding(b) < 0)
		return -1;
	if (b->writer)    /* the connection is ours alone only once it is idle */
		sql_writer_drain(b->writer);
	rc = write_rows(b, b->pending, b->values, b->kinds);
	b->pending = 0;
	b->text_used = 0;
	if (rc == 0 && b->stage && stage_flush(b->stage) < 0) {
		b->failed = 1;
		rc = -1;
	}
	if (b->stage)
		stage_release(b->stage);   /* a flush mostly comes last */
	return rc < 0 || b->failed ? -1 : 0;
}

void batch_free(struct batch_insert *b)
{
	wait_all_slots(b);
	stage_image_free(&b->img[0]);
	stage_image_free(&b->img[1]);
	stage_close(b->stage);
	sqlite3_finalize(b->full);
	free(b->table_and_columns);
	for (int s = 0; s < BATCH_SLOTS; s++) {
		free(b->slot_values[s]);
		free(b->slot_kinds[s]);
		free(b->slot_text[s]);
	}
	memset(b, 0, sizeof(*b));
}
