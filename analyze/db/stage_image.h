/* stage_image.h - an SQLite database image, built in memory without
 * SQLite, that holds one rowid table: its rows are encoded as SQLite
 * records (the file format's record and b-tree leaf layout) straight into
 * 64 KiB pages, and finishing adds the schema page and the root. stage.c
 * hands the image to SQLite (sqlite3_deserialize) and copies the table
 * with INSERT INTO main.t SELECT * FROM stage.t, which SQLite does by
 * copying the records as they are (its transfer optimization) instead of
 * binding and encoding every value: see stage.h for why.
 *
 * Values are encoded exactly as SQLite encodes them when a row is inserted
 * (integers in the smallest serial type, 0 and 1 as the constant types of
 * schema format 4, text as UTF-8 bytes), so the copied rows are the rows an
 * INSERT would have stored. */
#ifndef ANALYZE_STAGE_IMAGE_H
#define ANALYZE_STAGE_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#define STAGE_PAGE_SIZE  65536u
#define STAGE_MAX_RECORD 8192u    /* bytes of one record; longer rows are refused */

/* The kind of a column's value (the codes of batch_insert's BATCH_*), and
 * STAGE_NONE: no kind refused. */
enum stage_value { STAGE_INT = 0, STAGE_NULL = 1, STAGE_TEXT = 2, STAGE_NONE = 3 };

/* One row to append: lead NULL columns (a rowid alias), then ncols values
 * in the table's column order: kinds[i], values[i] the integer or a
 * pointer to NUL-terminated text; refuse[i] a kind column i must not be
 * given as is (SQLite would convert it: stage.c), or STAGE_NONE. */
struct stage_row {
	int lead, ncols;
	const uint8_t *kinds;
	const int64_t *values;
	const uint8_t *refuse;
};

struct stage_image {
	unsigned char *buf;       /* pages 1..npages (sqlite3_malloc64) */
	size_t cap;               /* bytes allocated */
	uint32_t npages;          /* pages 1 and 2 are written by finish; leaves from 3 */
	uint32_t ncells;          /* cells of the last leaf */
	uint32_t content;         /* start of its cell content area */
	int64_t *leaf_max;        /* the largest rowid of each leaf */
	size_t leaf_cap;
	uint64_t rows;
};

void stage_image_init(struct stage_image *img);

/* Empties the image for the next rows (its buffer is kept unless it was
 * taken by stage_image_take). */
void stage_image_reset(struct stage_image *img);
void stage_image_free(struct stage_image *img);

/* Appends row with rowid (rowids must increase). 0; 1 when the row is
 * refused (a refused kind, or a record longer than STAGE_MAX_RECORD;
 * nothing appended); -1 out of memory. */
int stage_image_add(struct stage_image *img, int64_t rowid, const struct stage_row *row);

/* Pages the image holds (the limit stage.c flushes at). */
static inline uint32_t stage_image_pages(const struct stage_image *img)
{
	return img->npages;
}

/* Writes page 1 (the header and a schema naming table `name` created by
 * `sql`, rooted at page 2) and the root page. The image is then a database
 * of *size bytes at img->buf, until the next stage_image_reset. 0 or -1
 * (out of memory, or too many leaves). */
int stage_image_finish(struct stage_image *img, const char *name, const char *sql,
		       size_t *size);

/* A valid database with no table (static; not to be written). */
const unsigned char *stage_image_empty(size_t *size);

#endif /* ANALYZE_STAGE_IMAGE_H */
