/* batch_insert.h - fast bulk insertion of rows: rows are buffered and
 * written with one multi-row INSERT ... VALUES (...),(...) statement per
 * batch, which costs SQLite far less per row than one statement per row.
 * Values are integers, NULL, static text (string constants that outlive
 * the batch: state names, classes) or short text copied into the batch
 * (addresses, names). Used for every big table. When the stage database
 * is attached (stage.h) and the table allows it, rows are staged as
 * records and copied in bulk instead of bound. A batch given a writer
 * thread (batch_use_writer) hands full batches to it and goes on filling
 * another of its BATCH_SLOTS buffers. */
#ifndef ANALYZE_BATCH_INSERT_H
#define ANALYZE_BATCH_INSERT_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

#define BATCH_ROWS  256
/* A batch's ring of buffers: up to BATCH_SLOTS, each allocated when first
 * filled. Deep enough for a whole EVENTS chunk's rows of one table (a chunk
 * holds about 60k records): the loading thread then decodes and
 * correlates the next chunk while the INSERT thread writes this one's rows.
 * With a ring of 8 the two threads took turns instead (a chunk's decoding
 * produces no rows, its release produces them all at once), and a 1.4M
 * event import spent 0.29 s of its 0.68 s chunk phase with each thread
 * waiting for the other. */
#define BATCH_SLOTS 256
#define BATCH_WAIT_AHEAD (BATCH_SLOTS / 4)  /* slots the loader waits for at once */
#define BATCH_TEXT_PER_ROW 128    /* bytes of copied text a row may hold */

/* Kinds of a buffered value. */
#define BATCH_INT  0
#define BATCH_NULL 1
#define BATCH_TEXT 2              /* the value is a const char * to static text */

struct sql_writer;
struct stage;

struct batch_insert {
	sqlite3 *db;
	sqlite3_stmt *full;       /* BATCH_ROWS rows */
	char *table_and_columns;  /* "samples (ts, pid, ...)" */
	int ncols;
	int pending;              /* rows buffered in the current slot */
	int64_t *values;          /* the current slot's BATCH_ROWS * ncols values */
	uint8_t *kinds;           /* BATCH_* of each value */
	int slot;                 /* the slot being filled */
	int64_t *slot_values[BATCH_SLOTS];    /* NULL until the slot is first used */
	uint8_t *slot_kinds[BATCH_SLOTS];
	char *slot_text[BATCH_SLOTS]; /* copied text of each slot, NULL until copied */
	char *text;                   /* the current slot's */
	size_t text_used;
	int in_flight[BATCH_SLOTS];   /* queued or being written (writer's lock) */
	struct sql_writer *writer;    /* NULL: insert inline */
	struct stage *stage;          /* the table's rows are staged (stage.h), or NULL */
	int failed;
};

/* table_and_columns like "samples (ts, pid, tid)"; ncols must match. */
int batch_init(struct batch_insert *b, sqlite3 *db, const char *table_and_columns,
	       int ncols);

/* Hands full batches to w from now on (the database must be serialized). */
void batch_use_writer(struct batch_insert *b, struct sql_writer *w);

/* Values of the next row, all integers: set row[i] (and kind[i] =
 * BATCH_NULL for SQL NULL, or use batch_text), then call batch_commit_row. */
int64_t *batch_row(struct batch_insert *b, uint8_t **kind);
int batch_commit_row(struct batch_insert *b);

/* Sets column col of a row to static text (NULL text: SQL NULL). */
static inline void batch_text(int64_t *row, uint8_t *kind, int col, const char *text)
{
	row[col] = (int64_t)(intptr_t)text;
	kind[col] = text ? BATCH_TEXT : BATCH_NULL;
}

/* Sets column col of the row being filled to a copy of text (NULL: SQL
 * NULL); the row's copies share BATCH_TEXT_PER_ROW bytes, longer text is
 * cut. */
void batch_text_copy(struct batch_insert *b, int64_t *row, uint8_t *kind, int col,
		     const char *text);

/* Writes the buffered rows (draining the writer first). 0 or -1 (reported). */
int batch_flush(struct batch_insert *b);

/* Frees without writing what is still buffered (waits for the writer). */
void batch_free(struct batch_insert *b);

/* sql_writer.c calls this: writes a full slot. */
void batch_run_slot(struct batch_insert *b, int slot);

#endif /* ANALYZE_BATCH_INSERT_H */
