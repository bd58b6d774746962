/* db_check.c - database helpers for tests (see db_check.h). */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture_builder.h"
#include "db_check.h"
#include "event_builder.h"
#include "run_tool.h"

sqlite3 *import_events(const char *dir, const char *name, const struct event_capture *ev,
		       const char *arg, ...)
{
	char cap[512], db_path[512];
	const char *extra[8] = { 0 };
	struct tool_result r;
	sqlite3 *db = NULL;
	va_list ap;
	int n = 0;

	snprintf(cap, sizeof(cap), "%s/%s.perfcap", dir, name);
	snprintf(db_path, sizeof(db_path), "%s/%s.db", dir, name);
	va_start(ap, arg);
	for (const char *a = arg; a && n < 7; a = va_arg(ap, const char *))
		extra[n++] = a;
	va_end(ap);
	cr_assert_eq(build_event_capture(cap, ev), 0);
	run_analyze(&r, "import", "--no-local-files", "-f", cap, "-o", db_path,
		    extra[0], extra[1], extra[2], extra[3], NULL);
	cr_assert_eq(r.status, 0, "import: %s", r.err);
	tool_result_free(&r);
	cr_assert_eq(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	return db;
}

static sqlite3_stmt *first_row(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;

	cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql,
		     sqlite3_errmsg(db));
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		return st;
	sqlite3_finalize(st);
	return NULL;
}

long long query_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = first_row(db, sql);
	long long value = st ? sqlite3_column_int64(st, 0) : LLONG_MIN;

	sqlite3_finalize(st);
	return value;
}

char *query_text(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = first_row(db, sql);
	char *value = st ? strdup((const char *)sqlite3_column_text(st, 0)) : NULL;

	sqlite3_finalize(st);
	return value;
}
