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

#include "stage_image.h"

#define BATCH_ROWS  256
/* A batch's ring of buffers: up to BATCH_SLOTS, each allocated when first
 * filled, as deep as its producer is bursty (batch_use_writer).
 * BATCH_RING_CHUNK holds a whole EVENTS chunk's rows of one table (a
 * chunk holds about 60k records): the loading thread then decodes and
 * correlates the next chunk while the INSERT thread writes this one's.
 * With a ring of 8 the two threads took turns instead (decoding a chunk
 * produces no rows, releasing it produces them all at once): a 1.4M-event
 * import spent 0.29 s of its 0.68 s chunk phase with each thread waiting
 * for the other. A producer of steady rows (the request passes) gains
 * nothing from depth and loses to it: the INSERT thread then reads rows
 * written long before, out of the cache (the request pass of a 60 s
 * default recording: 1.74 s with a ring of 8, 1.80 with 16, 1.86 with
 * 32, 2.03 with 256). */
#define BATCH_SLOTS 256
#define BATCH_RING_CHUNK BATCH_SLOTS
#define BATCH_RING_STEADY 8
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
	int ring;                 /* slots in use, <= BATCH_SLOTS (batch_use_writer) */
	int64_t *slot_values[BATCH_SLOTS];    /* NULL until the slot is first used */
	uint8_t *slot_kinds[BATCH_SLOTS];
	char *slot_text[BATCH_SLOTS]; /* copied text of each slot, NULL until copied */
	char *text;                   /* the current slot's */
	size_t text_used;
	int in_flight[BATCH_SLOTS];   /* queued or being written (writer's lock) */
	struct sql_writer *writer;    /* NULL: insert inline */
	struct stage *stage;          /* the table's rows are staged (stage.h), or NULL */
	int encode_here;              /* batch_encode_here: rows go to img[img_cur] */
	struct stage_image img[2];    /* slots 0 and 1 of the writer's jobs then */
	int img_cur;
	int failed;
};

/* table_and_columns like "samples (ts, pid, tid)"; ncols must match. */
int batch_init(struct batch_insert *b, sqlite3 *db, const char *table_and_columns,
	       int ncols);

/* Hands full batches to w from now on (NULL: inline again), filling a ring
 * of ring buffers (BATCH_RING_CHUNK or BATCH_RING_STEADY; 2..BATCH_SLOTS).
 * Called before the first row, or with NULL once the writer is drained. */
void batch_use_writer(struct batch_insert *b, struct sql_writer *w, int ring);

/* For a producer that makes rows steadily and has time to spare while the
 * writer copies them (the request passes): each row is encoded as a
 * record on the producer's thread as it is committed, into one of two
 * database images, and w only copies a full image into the table while
 * the next one fills. The INSERT thread did both before, and the request
 * pass waited for it (encoding was half of its work). Only for a staged
 * table (else as batch_use_writer with BATCH_RING_STEADY); called before
 * the first row. */
void batch_encode_here(struct batch_insert *b, struct sql_writer *w);

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
