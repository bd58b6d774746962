/* stage.c - staged tables (see stage.h): which tables qualify (their
 * definition, read from the schema), the mapping of a batch's columns to
 * the table's, the encoding of each row into the image (stage_image.c),
 * and the copy: sqlite3_deserialize of the finished image as the attached
 * stage database, then one INSERT ... SELECT. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "batch_insert.h"
#include "db.h"
#include "stage.h"
#include "stage_image.h"

#define STAGE_MAX_COLS    64
#define STAGE_FLUSH_PAGES 32      /* 2 MiB of rows per copy: memory per staged table */
#define NAME_MAX_LEN      64

/* A column's affinity, as far as staging cares. */
enum affinity { AFF_NONE, AFF_INTEGER, AFF_TEXT, AFF_OTHER };

struct stage {
	sqlite3 *db;
	char table[NAME_MAX_LEN];
	char *sql;                    /* the table's CREATE TABLE */
	int ncols;                    /* the batch's columns */
	int tcols;                    /* the table's */
	int col[STAGE_MAX_COLS];      /* the table column of each batch column */
	uint8_t affinity[STAGE_MAX_COLS]; /* of each table column */
	int64_t rowid;                /* the last one given */
	struct stage_image img;
	int in_order;                 /* batch column i is table column lead + i */
	int lead;                     /* then: the table's columns before them */
	uint8_t refuse[STAGE_MAX_COLS];   /* by batch column (in order) or table column */
	uint8_t kinds[STAGE_MAX_COLS];    /* a row put in table order (not in order) */
	int64_t values[STAGE_MAX_COLS];
};

_Static_assert(STAGE_INT == BATCH_INT && STAGE_NULL == BATCH_NULL && STAGE_TEXT == BATCH_TEXT,
	       "a batch's kinds are a stage row's");

/* Without sqlite3_deserialize (SQLite before 3.36 built without it),
 * nothing is staged: the stage is never attached. */
#ifndef PERFCAP_HAVE_DESERIALIZE
#define sqlite3_deserialize(db, schema, data, size, cap, flags) \
	((void)(db), (void)(data), (void)(size), (void)(cap), SQLITE_ERROR)
#endif

int stage_attach(sqlite3 *db)
{
#ifdef PERFCAP_HAVE_DESERIALIZE
	return db_exec(db, "ATTACH ':memory:' AS " STAGE_SCHEMA);
#else
	(void)db;
	return 0;
#endif
}

void stage_detach(sqlite3 *db)
{
	if (sqlite3_db_filename(db, STAGE_SCHEMA))
		db_exec(db, "DETACH " STAGE_SCHEMA);
}

/* SQLite's affinity rules for a declared type, reduced to what staging
 * can reproduce: INTEGER, TEXT and none (BLOB or no type). */
static uint8_t affinity_of(const char *type)
{
	if (!type || !*type)
		return AFF_NONE;
	if (strcasestr(type, "INT"))
		return AFF_INTEGER;
	if (strcasestr(type, "CHAR") || strcasestr(type, "CLOB") || strcasestr(type, "TEXT"))
		return AFF_TEXT;
	if (strcasestr(type, "BLOB"))
		return AFF_NONE;
	return AFF_OTHER;
}

/* The table name of "t (a, b)" into s->table, the columns' names into
 * names (comma-separated, trimmed in place in copy). 0 or -1. */
static int parse_columns(struct stage *s, char *copy, char **names)
{
	char *open = strchr(copy, '('), *save = NULL, *name;
	size_t len;
	int n = 0;

	if (!open || !strchr(open, ')'))
		return -1;
	len = strcspn(copy, " (");
	if (len == 0 || len >= sizeof(s->table))
		return -1;
	memcpy(s->table, copy, len);
	s->table[len] = '\0';
	*strchr(open, ')') = '\0';
	for (name = strtok_r(open + 1, ", ", &save); name; name = strtok_r(NULL, ", ", &save)) {
		if (n == s->ncols)
			return -1;
		names[n++] = name;
	}
	return n == s->ncols ? 0 : -1;
}

/* Its definition, if nothing about the table keeps a row from being
 * stored as given: not WITHOUT ROWID, no index. */
static char *plain_table_sql(sqlite3 *db, const char *table)
{
	char *sql = db_lookup_text(db, "SELECT sql FROM main.sqlite_master"
		" WHERE type = 'table' AND name = ?1", table, NULL);

	if (sql && (strcasestr(sql, "WITHOUT ROWID") ||
		    db_lookup_int(db, "SELECT count(*) FROM main.sqlite_master"
				  " WHERE type = 'index' AND tbl_name = ?1",
				  table, NULL, 1) != 0)) {
		free(sql);
		return NULL;
	}
	return sql;
}

/* One column of the table (a row of table_xinfo) into s, and the batch
 * columns that name it; the rowid alias must not be among them. 0 or -1. */
static int map_column(struct stage *s, sqlite3_stmt *st, char **names, int *mapped)
{
	int cid = sqlite3_column_int(st, 0), pk = sqlite3_column_int(st, 5);
	const char *name = (const char *)sqlite3_column_text(st, 1);
	const char *type = (const char *)sqlite3_column_text(st, 2);
	int is_rowid = pk == 1 && type && strcasecmp(type, "INTEGER") == 0;

	if (cid != s->tcols || cid >= STAGE_MAX_COLS || !name ||
	    sqlite3_column_int(st, 3) != 0 ||                       /* NOT NULL */
	    sqlite3_column_type(st, 4) != SQLITE_NULL ||           /* a default */
	    sqlite3_column_int(st, 6) != 0 ||                       /* generated */
	    (pk && !is_rowid) || affinity_of(type) == AFF_OTHER)
		return -1;
	s->affinity[cid] = affinity_of(type);
	for (int i = 0; i < s->ncols; i++) {
		if (strcasecmp(names[i], name) != 0)
			continue;
		if (is_rowid || s->col[i] >= 0)
			return -1;
		s->col[i] = cid;
		(*mapped)++;
	}
	s->tcols++;
	return 0;
}

/* Maps every batch column to a column of the table. 0 or -1. */
static int map_columns(struct stage *s, char **names)
{
	char sql[NAME_MAX_LEN + 64];
	sqlite3_stmt *st;
	int rc = 0, mapped = 0;

	snprintf(sql, sizeof(sql), "PRAGMA main.table_xinfo(\"%s\")", s->table);
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	for (int i = 0; i < s->ncols; i++)
		s->col[i] = -1;
	while (rc == 0 && sqlite3_step(st) == SQLITE_ROW)
		rc = map_column(s, st, names, &mapped);
	sqlite3_finalize(st);
	return rc == 0 && mapped == s->ncols && s->tcols > 0 ? 0 : -1;
}

/* The kind a column of affinity a must not be given as is. */
static uint8_t refused_kind(uint8_t a)
{
	return a == AFF_TEXT ? STAGE_INT : a == AFF_INTEGER ? STAGE_TEXT : STAGE_NONE;
}

/* Whether the batch's columns are the table's last ones in order (the
 * rows then go to the image as the batch holds them), and what each
 * column refuses. */
static void plan_rows(struct stage *s)
{
	s->lead = s->tcols - s->ncols;
	s->in_order = 1;
	for (int i = 0; i < s->ncols; i++)
		s->in_order &= s->col[i] == s->lead + i;
	for (int i = 0; i < s->ncols; i++)
		s->refuse[i] = refused_kind(s->affinity[s->col[i]]);
	if (!s->in_order)
		for (int c = 0; c < s->tcols; c++)
			s->refuse[c] = refused_kind(s->affinity[c]);
}

static int stage_setup(struct stage *s, const char *table_and_columns)
{
	char *copy = strdup(table_and_columns), *names[STAGE_MAX_COLS];
	char sql[NAME_MAX_LEN + 64];
	int rc = -1;

	if (copy && parse_columns(s, copy, names) == 0 && strchr(s->table, '"') == NULL &&
	    (s->sql = plain_table_sql(s->db, s->table)) && map_columns(s, names) == 0) {
		snprintf(sql, sizeof(sql), "SELECT coalesce(max(rowid), 0) FROM main.\"%s\"",
			 s->table);
		s->rowid = db_query_int(s->db, sql, -1);
		rc = s->rowid < 0 ? -1 : 0;
		plan_rows(s);
	}
	free(copy);
	return rc;
}

struct stage *stage_open(sqlite3 *db, const char *table_and_columns, int ncols)
{
	struct stage *s;

	if (!sqlite3_db_filename(db, STAGE_SCHEMA) || ncols <= 0 || ncols > STAGE_MAX_COLS)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->db = db;
	s->ncols = ncols;
	stage_image_init(&s->img);
	if (stage_setup(s, table_and_columns) < 0) {
		stage_close(s);
		return NULL;
	}
	return s;
}

void stage_close(struct stage *s)
{
	if (!s)
		return;
	stage_image_free(&s->img);
	free(s->sql);
	free(s);
}

/* A batch row as the image takes it: as it is when its columns are in
 * the table's order, else copied into the table's order. */
static struct stage_row row_of(struct stage *s, const int64_t *values, const uint8_t *kinds)
{
	if (s->in_order)
		return (struct stage_row){ s->lead, s->ncols, kinds, values, s->refuse };
	memset(s->kinds, STAGE_NULL, (size_t)s->tcols);
	for (int i = 0; i < s->ncols; i++) {
		s->kinds[s->col[i]] = kinds[i];
		s->values[s->col[i]] = values[i];
	}
	return (struct stage_row){ 0, s->tcols, s->kinds, s->values, s->refuse };
}

int stage_row_into(struct stage *s, struct stage_image *img, const int64_t *values,
		   const uint8_t *kinds)
{
	struct stage_row row = row_of(s, values, kinds);
	int rc = stage_image_add(img, s->rowid + 1, &row);

	if (rc < 0)
		db_report_error(NULL, s->table);
	if (rc == 0)
		s->rowid++;
	return rc;
}

int stage_image_full(const struct stage_image *img)
{
	return stage_image_pages(img) >= STAGE_FLUSH_PAGES;
}

int stage_rows(struct stage *s, const int64_t *values, const uint8_t *kinds, int rows,
	       int *done)
{
	for (int r = 0; r < rows; r++) {
		int rc = stage_row_into(s, &s->img, values + (size_t)r * (size_t)s->ncols,
					kinds + (size_t)r * (size_t)s->ncols);

		if (rc != 0) {
			*done = r;
			return rc;
		}
		if (stage_image_full(&s->img) && stage_flush(s) < 0) {
			*done = r + 1;
			return -1;
		}
	}
	*done = rows;
	return 0;
}

/* Hands SQLite the image at data (not a copy: it must stay while SQLite
 * may read it). 0 or -1 (reported). */
static int deserialize(sqlite3 *db, const unsigned char *data, size_t size)
{
	if (sqlite3_deserialize(db, STAGE_SCHEMA, (unsigned char *)data, (sqlite3_int64)size,
				(sqlite3_int64)size, SQLITE_DESERIALIZE_READONLY) == SQLITE_OK)
		return 0;
	db_report_error(db, "staging rows");
	return -1;
}

/* The image is copied, then the stage database is pointed at an empty
 * static one: SQLite never holds the image's buffer, which the next rows
 * reuse (no fresh memory to fault in for every copy). */
int stage_flush_image(struct stage *s, struct stage_image *img)
{
	char sql[2 * NAME_MAX_LEN + 64];
	const unsigned char *empty;
	size_t size, empty_size;
	int rc;

	if (img->rows == 0)
		return 0;
	if (stage_image_finish(img, s->table, s->sql, &size) < 0) {
		db_report_error(NULL, s->table);
		return -1;
	}
	if (deserialize(s->db, img->buf, size) < 0)
		return -1;
	snprintf(sql, sizeof(sql), "INSERT INTO main.\"%s\" SELECT * FROM " STAGE_SCHEMA ".\"%s\"",
		 s->table, s->table);
	rc = db_exec(s->db, sql);
	empty = stage_image_empty(&empty_size);
	if (deserialize(s->db, empty, empty_size) < 0)
		rc = -1;
	stage_image_reset(img);
	return rc;
}

int stage_flush(struct stage *s)
{
	return stage_flush_image(s, &s->img);
}

void stage_release(struct stage *s)
{
	stage_image_free(&s->img);
}
