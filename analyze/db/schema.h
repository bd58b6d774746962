/* schema.h - the SQLite schema perfcap-analyze imports captures into
 * (documented in docs/schema.md). Tables are created empty, filled by the
 * loader, and indexed after the bulk insert. */
#ifndef ANALYZE_SCHEMA_H
#define ANALYZE_SCHEMA_H

#include <stddef.h>
#include <sqlite3.h>

#define SCHEMA_VERSION 2

/* Creates all tables and sets user_version. 0 or -1 (reported). */
int schema_create_tables(sqlite3 *db);

/* schema_views.c: creates the views (correlations computed at query time
 * and the per-source data-quality summary). 0 or -1 (reported). */
int schema_create_views(sqlite3 *db);

/* Creates the indexes (after the bulk insert). 0 or -1 (reported). */
int schema_create_indexes(sqlite3 *db);

/* Checks that db was made by a compatible perfcap-analyze. 0, or -1 with
 * a one-line reason in errbuf. */
int schema_check(sqlite3 *db, char *errbuf, size_t errlen);

#endif /* ANALYZE_SCHEMA_H */
