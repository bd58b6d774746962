/* diff_spill.c - a run's latency values in a temporary database (see
 * diff_spill.h). Rows go in inside one transaction, without a journal or
 * syncs (the file dies with the process), and the index is built once at
 * the end, by SQLite's external sort. */
#include <stdio.h>
#include <stdlib.h>

#include "db/db.h"
#include "diff_spill.h"

/* A small page cache: the index is read in order, once per series. */
#define SPILL_CACHE_KIB 8192

static int exec(struct diff_spill *s, const char *sql)
{
	if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) == SQLITE_OK)
		return 0;
	db_report_error(s->db, "diff: spilling latencies");
	return -1;
}

static sqlite3_stmt *prepare(struct diff_spill *s, const char *sql)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
		db_report_error(s->db, "diff: spilling latencies");
		return NULL;
	}
	return st;
}

struct diff_spill *diff_spill_open(void)
{
	struct diff_spill *s = calloc(1, sizeof(*s));
	char pragmas[160];

	if (!s) {
		fprintf(stderr, "perfcap-analyze: diff: out of memory\n");
		return NULL;
	}
	/* "": a private database in a temporary file, deleted on close */
	if (sqlite3_open_v2("", &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
	    SQLITE_OK) {
		fprintf(stderr, "perfcap-analyze: diff: cannot open a temporary database: %s\n",
			s->db ? sqlite3_errmsg(s->db) : "out of memory");
		diff_spill_close(s);
		return NULL;
	}
	snprintf(pragmas, sizeof(pragmas), "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;"
		 " PRAGMA temp_store = FILE; PRAGMA cache_size = -%d;", SPILL_CACHE_KIB);
	if (exec(s, pragmas) < 0 ||
	    exec(s, "CREATE TABLE v (key_id INTEGER, seq INTEGER, value INTEGER); BEGIN") < 0 ||
	    !(s->insert = prepare(s, "INSERT INTO v VALUES (?1, ?2, ?3)"))) {
		diff_spill_close(s);
		return NULL;
	}
	return s;
}

int diff_spill_add(struct diff_spill *s, int64_t key_id, uint64_t seq, uint64_t value)
{
	sqlite3_bind_int64(s->insert, 1, key_id);
	sqlite3_bind_int64(s->insert, 2, (int64_t)seq);
	sqlite3_bind_int64(s->insert, 3, (int64_t)value);
	if (sqlite3_step(s->insert) != SQLITE_DONE) {
		db_report_error(s->db, "diff: spilling latencies");
		sqlite3_reset(s->insert);
		return -1;
	}
	sqlite3_reset(s->insert);
	s->rows++;
	return 0;
}

int diff_spill_finish(struct diff_spill *s)
{
	if (exec(s, "COMMIT; CREATE INDEX v_key_value ON v (key_id, value, seq)") < 0)
		return -1;
	s->sorted = prepare(s, "SELECT value FROM v WHERE key_id = ?1 ORDER BY value");
	/* the index gives the block's values in order: no sort, and it stops
	 * at the rank asked */
	s->block = prepare(s, "SELECT value FROM v WHERE key_id = ?1 AND seq >= ?2 AND seq < ?3"
			   " ORDER BY value LIMIT 1 OFFSET ?4");
	return s->sorted && s->block ? 0 : -1;
}

int diff_spill_rewind(struct diff_spill *s, int64_t key_id)
{
	sqlite3_reset(s->sorted);
	return sqlite3_bind_int64(s->sorted, 1, key_id) == SQLITE_OK ? 0 : -1;
}

int diff_spill_next(struct diff_spill *s, uint64_t *value)
{
	int rc = sqlite3_step(s->sorted);

	if (rc == SQLITE_ROW) {
		*value = (uint64_t)sqlite3_column_int64(s->sorted, 0);
		return 1;
	}
	if (rc == SQLITE_DONE)
		return 0;
	db_report_error(s->db, "diff: reading spilled latencies");
	return -1;
}

int diff_spill_block_rank(struct diff_spill *s, int64_t key_id, uint64_t from, uint64_t to,
			  uint64_t rank, uint64_t *value)
{
	int rc;

	sqlite3_reset(s->block);
	sqlite3_bind_int64(s->block, 1, key_id);
	sqlite3_bind_int64(s->block, 2, (int64_t)from);
	sqlite3_bind_int64(s->block, 3, (int64_t)to);
	sqlite3_bind_int64(s->block, 4, (int64_t)rank - 1);
	rc = sqlite3_step(s->block);
	if (rc == SQLITE_ROW) {
		*value = (uint64_t)sqlite3_column_int64(s->block, 0);
		sqlite3_reset(s->block);
		return 0;
	}
	if (rc != SQLITE_DONE)
		db_report_error(s->db, "diff: reading spilled latencies");
	else
		fprintf(stderr, "perfcap-analyze: diff: spilled latencies: no rank %llu in a block\n",
			(unsigned long long)rank);
	sqlite3_reset(s->block);
	return -1;
}

void diff_spill_close(struct diff_spill *s)
{
	if (!s)
		return;
	sqlite3_finalize(s->insert);
	sqlite3_finalize(s->sorted);
	sqlite3_finalize(s->block);
	sqlite3_close(s->db);
	free(s);
}
