/* stage.h - writing a big table's rows without binding them: the rows are
 * encoded as SQLite records into a database image built in memory
 * (stage_image.h), which is handed to SQLite as the attached in-memory
 * database perfcap_stage (sqlite3_deserialize) and copied with
 * INSERT INTO main.t SELECT * FROM perfcap_stage.t. SQLite copies such
 * rows record by record (its transfer optimization: the tables have the
 * same definition) instead of binding every value of a multi-row INSERT,
 * copying it into a register and encoding the record again: on the 1.9M
 * system calls of a redis capture the INSERT thread's time fell by about
 * a third, and the cost no longer grows with the number of columns (the
 * 22 of requests).
 *
 * Only a table whose rows SQLite would store exactly as given is staged:
 * a rowid table with no index, no generated column, no default, no NOT
 * NULL and no primary key but an INTEGER one the rows leave to SQLite,
 * whose columns have INTEGER, TEXT or no affinity; an integer bound to a
 * TEXT column or text bound to an INTEGER one (which SQLite would convert)
 * ends the staging of that table (stage_rows returns 1) and the caller
 * goes on with INSERTs. Rows get the rowids SQLite would have given them:
 * one more than the largest, in order. */
#ifndef ANALYZE_STAGE_H
#define ANALYZE_STAGE_H

#include <stdint.h>
#include <sqlite3.h>

#include "stage_image.h"

#define STAGE_SCHEMA "perfcap_stage"

struct stage;

/* Attaches the stage database; outside a transaction (ATTACH cannot run
 * inside one). Without it, stage_open returns NULL. 0 or -1 (reported). */
int stage_attach(sqlite3 *db);

/* Detaches it (outside a transaction); nothing if it is not attached. */
void stage_detach(sqlite3 *db);

/* A stage for the rows of table_and_columns ("t (a, b, c)", ncols
 * columns, as batch_insert takes them), or NULL when the table cannot be
 * staged or the stage is not attached (then the caller INSERTs). */
struct stage *stage_open(sqlite3 *db, const char *table_and_columns, int ncols);

/* Encodes rows rows of ncols values (batch_insert's values and BATCH_*
 * kinds), copying them into the table whenever the image is full. 0; 1
 * when row *done cannot be staged (rows before it are, the stage should
 * be flushed and closed); -1 on an error (reported). */
int stage_rows(struct stage *s, const int64_t *values, const uint8_t *kinds, int rows,
	       int *done);

/* Copies the staged rows into the table. 0 or -1 (reported). */
int stage_flush(struct stage *s);

/* The same, split between two threads (batch_insert's encoding mode):
 * the producer encodes each row into an image of its own, and once the
 * image is full another thread copies it into the table while the
 * producer fills a second one. Rows get their rowids as they are
 * encoded, so the images must be copied in the order they were filled.
 * stage_row_into: 0; 1 when the row cannot be staged (nothing appended);
 * -1 on an error (reported). stage_flush_image copies img's rows into the
 * table and empties img (0 or -1, reported); it reads only the table's
 * name and definition from s, which the producer does not change. */
int stage_row_into(struct stage *s, struct stage_image *img, const int64_t *values,
		   const uint8_t *kinds);
int stage_image_full(const struct stage_image *img);
int stage_flush_image(struct stage *s, struct stage_image *img);

/* Frees the image's memory after a flush (more rows allocate it again). */
void stage_release(struct stage *s);

/* Frees the stage; rows not flushed are dropped. NULL is accepted. */
void stage_close(struct stage *s);

#endif /* ANALYZE_STAGE_H */
