/* db.h - small SQLite helpers shared by import and report: opening a
 * database for loading or reading, running statements, reporting errors
 * as one line on stderr. */
#ifndef ANALYZE_DB_H
#define ANALYZE_DB_H

#include <stdint.h>
#include <sqlite3.h>

/* Opens (creating) a database to load into; path ":memory:" for an
 * in-memory one. 64 KiB pages, the bulk-load pragmas and a small page
 * cache. NULL on error (reported). */
sqlite3 *db_open_for_load(const char *path);

/* Gives a loaded database the readers' page cache (reports run on it). */
void db_use_reader_cache(sqlite3 *db);

/* Whether path starts with the SQLite file header (a database, not a
 * capture). */
int is_sqlite_file(const char *path);

/* Opens an existing database read-only. NULL on error (reported). */
sqlite3 *db_open_readonly(const char *path);

/* Runs one or more statements without results. 0 or -1 (reported). */
int db_exec(sqlite3 *db, const char *sql);

/* Prepares one statement. NULL on error (reported with the SQL). */
sqlite3_stmt *db_prepare(sqlite3 *db, const char *sql);

/* Steps a statement that returns no rows, then resets it and clears its
 * bindings. 0 or -1 (reported). */
int db_run(sqlite3_stmt *st);

/* Binds helpers: text bound with SQLITE_TRANSIENT; NULL text binds NULL. */
void db_bind_text(sqlite3_stmt *st, int col, const char *text);
void db_bind_u64(sqlite3_stmt *st, int col, uint64_t value);

/* A single integer from a query with no parameters (fallback on no row). */
int64_t db_query_int(sqlite3 *db, const char *sql, int64_t fallback);

/* Prints "perfcap-analyze: sqlite: <what>: <message>" on stderr. */
void db_report_error(sqlite3 *db, const char *what);



/* Looks up one value with a query taking two text parameters (the second
 * may be NULL if unused): the integer, or fallback if there is no row. */
int64_t db_lookup_int(sqlite3 *db, const char *sql, const char *p1, const char *p2,
		      int64_t fallback);

/* Same, for text: a malloc'd copy, or NULL if no row or NULL value. */
char *db_lookup_text(sqlite3 *db, const char *sql, const char *p1, const char *p2);
#endif /* ANALYZE_DB_H */
