/* db.c - SQLite helpers (see db.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "safe_file.h"

void db_report_error(sqlite3 *db, const char *what)
{
	fprintf(stderr, "perfcap-analyze: sqlite: %s: %s\n", what,
		db ? sqlite3_errmsg(db) : "out of memory");
}

/* PERFCAP_SQL_PROFILE=MS: every statement that ran MS milliseconds or
 * more is printed on stderr with its time; PERFCAP_SQL_LOG=FILE: every
 * statement, in full, with its time in ns, one per line appended to FILE
 * (tests/analyze/plans.sh checks their query plans). docs/perfcap-analyze.md,
 * PERFORMANCE. */
struct sql_trace {
	long long min_ms;         /* stderr threshold, -1: none */
	FILE *log;
};

static struct sql_trace sql_trace = { -1, NULL };

/* One line per statement, whole even when several threads run
 * statements (diff reads its runs on threads): the line is written under
 * the stream's lock. */
static void log_statement(FILE *f, sqlite3_int64 ns, const char *sql)
{
	flockfile(f);
	fprintf(f, "%lld\t", (long long)ns);
	for (const char *p = sql; *p; p++)
		putc_unlocked(*p == '\n' || *p == '\t' ? ' ' : *p, f);
	putc_unlocked('\n', f);
	fflush(f);
	funlockfile(f);
}

static int trace_statement(unsigned type, void *ctx, void *p, void *x)
{
	struct sql_trace *t = ctx;
	sqlite3_int64 ns = *(sqlite3_int64 *)x;
	char *sql;

	if (type != SQLITE_TRACE_PROFILE || (ns < t->min_ms * 1000000 && !t->log) ||
	    (t->min_ms < 0 && !t->log))
		return 0;
	sql = sqlite3_expanded_sql((sqlite3_stmt *)p);
	if (!sql)
		return 0;
	if (t->min_ms >= 0 && ns >= t->min_ms * 1000000)
		fprintf(stderr, "perfcap-analyze: sql %.3f s: %.600s\n", ns / 1e9, sql);
	if (t->log)
		log_statement(t->log, ns, sql);
	sqlite3_free(sql);
	return 0;
}

static void maybe_profile(sqlite3 *db)
{
	const char *ms = getenv("PERFCAP_SQL_PROFILE"), *log = getenv("PERFCAP_SQL_LOG");

	if (ms && *ms)
		sql_trace.min_ms = atoll(ms);
	if (log && *log && !sql_trace.log)
		sql_trace.log = fopen(log, "a");
	if (sql_trace.min_ms >= 0 || sql_trace.log)
		sqlite3_trace_v2(db, SQLITE_TRACE_PROFILE, trace_statement, &sql_trace);
}

/* The import's page cache: the interior pages of the tables it appends
 * to and the pages being filled; what is written goes to the file (the
 * kernel's page cache) as it comes. A larger one only held pages in
 * SQLite's own memory until the commit, each page first-touched there
 * and copied again at the commit: 64 MiB made the import of a real
 * capture 4-6% slower than 4 MiB (16 MiB was between; 1-2 MiB the same
 * as 4). Readers get READER_CACHE_KIB: their scans and sorts reuse it.
 * 64 MiB was no faster than 16 (report --json of redis, nginx and
 * postgres captures, five rounds each: the same means; diff, which reads
 * each table once, neither) and took 49 MB more at its peak. It also
 * bounds each of SQLite's sorters (the report's merge runs two). */
#define LOAD_CACHE_KIB   "4096"
#define READER_CACHE_KIB "16384"

void db_use_reader_cache(sqlite3 *db)
{
	db_exec(db, "PRAGMA cache_size=-" READER_CACHE_KIB ";");
}

sqlite3 *db_open_for_load(const char *path)
{
	sqlite3 *db = NULL;
	int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;

	if (sqlite3_open_v2(path, &db, flags, NULL) != SQLITE_OK) {
		db_report_error(db, path);
		sqlite3_close(db);
		return NULL;
	}
	if (db_exec(db, "PRAGMA page_size=65536;"
			"PRAGMA journal_mode=OFF;"
			"PRAGMA synchronous=OFF;"
			"PRAGMA locking_mode=EXCLUSIVE;"
			"PRAGMA temp_store=FILE;"
			"PRAGMA cache_size=-" LOAD_CACHE_KIB ";") < 0) {
		sqlite3_close(db);
		return NULL;
	}
	maybe_profile(db);
	return db;
}

int is_sqlite_file(const char *path)
{
	static const char magic[16] = "SQLite format 3";
	char head[16];
	FILE *f = pc_fopen_regular(path); /* a FIFO must not block */
	int is_db;

	if (!f)
		return 0;
	is_db = fread(head, 1, sizeof(head), f) == sizeof(head) &&
		memcmp(head, magic, sizeof(magic)) == 0;
	fclose(f);
	return is_db;
}

sqlite3 *db_open_readonly(const char *path)
{
	sqlite3 *db = NULL;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		db_report_error(db, path);
		sqlite3_close(db);
		return NULL;
	}
	db_exec(db, "PRAGMA temp_store=FILE;");
	db_use_reader_cache(db);
	maybe_profile(db);
	return db;
}

int db_exec(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		fprintf(stderr, "perfcap-analyze: sqlite: %s\n", msg ? msg : "error");
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

sqlite3_stmt *db_prepare(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		db_report_error(db, sql);
		return NULL;
	}
	return st;
}

int db_run(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		db_report_error(sqlite3_db_handle(st), "insert");
		return -1;
	}
	return 0;
}

void db_bind_text(sqlite3_stmt *st, int col, const char *text)
{
	if (text)
		sqlite3_bind_text(st, col, text, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, col);
}

void db_bind_u64(sqlite3_stmt *st, int col, uint64_t value)
{
	sqlite3_bind_int64(st, col, (sqlite3_int64)value);
}

int64_t db_query_int(sqlite3 *db, const char *sql, int64_t fallback)
{
	sqlite3_stmt *st = db_prepare(db, sql);
	int64_t value = fallback;

	if (!st)
		return fallback;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		value = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return value;
}

static sqlite3_stmt *prepare_lookup(sqlite3 *db, const char *sql, const char *p1,
				    const char *p2)
{
	sqlite3_stmt *st = db_prepare(db, sql);

	if (!st)
		return NULL;
	db_bind_text(st, 1, p1);
	if (sqlite3_bind_parameter_count(st) >= 2)
		db_bind_text(st, 2, p2);
	if (sqlite3_step(st) != SQLITE_ROW || sqlite3_column_type(st, 0) == SQLITE_NULL) {
		sqlite3_finalize(st);
		return NULL;
	}
	return st;
}

int64_t db_lookup_int(sqlite3 *db, const char *sql, const char *p1, const char *p2,
		      int64_t fallback)
{
	sqlite3_stmt *st = prepare_lookup(db, sql, p1, p2);
	int64_t value;

	if (!st)
		return fallback;
	value = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return value;
}

char *db_lookup_text(sqlite3 *db, const char *sql, const char *p1, const char *p2)
{
	sqlite3_stmt *st = prepare_lookup(db, sql, p1, p2);
	char *value;

	if (!st)
		return NULL;
	value = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return value;
}
