/* db_check.h - helpers for tests that read a database perfcap-analyze
 * wrote: import an event capture, query one value. */
#ifndef TESTS_DB_CHECK_H
#define TESTS_DB_CHECK_H

#include <sqlite3.h>

struct event_capture;

/* Writes ev as dir/NAME.perfcap, imports it with the extra arguments
 * (NULL-terminated, may be none) into dir/NAME.db and opens that
 * read-only. Asserts on failure. */
sqlite3 *import_events(const char *dir, const char *name, const struct event_capture *ev,
		       const char *arg, ...);

/* The first column of the first row as an integer; LLONG_MIN if there is
 * no row or it is NULL. Asserts that sql is valid. */
long long query_int(sqlite3 *db, const char *sql);

/* ... as malloc'd text; NULL if no row or NULL. */
char *query_text(sqlite3 *db, const char *sql);

#define expect_int(db, sql, n) \
	cr_expect_eq(query_int(db, sql), (long long)(n), "%s -> %lld, expected %lld", \
		     sql, query_int(db, sql), (long long)(n))

#define expect_text(db, sql, s) do { \
	char *got_ = query_text(db, sql); \
	cr_expect(got_ && strcmp(got_, s) == 0, "%s -> '%s', expected '%s'", sql, \
		  got_ ? got_ : "(null)", s); \
	free(got_); \
} while (0)

#endif /* TESTS_DB_CHECK_H */
