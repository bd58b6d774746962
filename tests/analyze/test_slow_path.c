/* test_slow_path.c - the slowest requests' path (query/slow_path.c) on a
 * database written by hand: picked from the rows the report read already
 * (candidates), the slow requests and their threads' states are those
 * the slow path's own statement selects, ties on the service time broken
 * the same way (start, pid, fd, rowid). Twenty requests, so two are slow:
 * most tie at the slowest service time, and which two win decides which
 * threads' states (each thread in another state) are summed. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "db/db.h"
#include "db/schema.h"
#include "query/slow_path.h"
#include "util/radix_sort.h"

#define NREQ 20

static sqlite3 *db;
static struct report_options opts = { .top = 20 };
static struct report_scope scope = { .capture_start = 0, .capture_end = 1000000,
				     .from = 0, .to = 1000001, .opts = &opts };

/* Request i: thread 100 + i, in state i % 4 during it (0 running, 1
 * runnable, else blocked); service 500 but for the fastest five; start
 * 10000 (i + 1), less 5000 for odd i, but for requests 4-7, which start
 * together at 40000 on one (pid, fd) and differ by rowid only. */
static void setup(void)
{
	char sql[512];

	cr_assert_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	cr_assert_eq(schema_create_tables(db), 0);
	for (int i = 0; i < NREQ; i++) {
		int64_t start = i >= 4 && i <= 7 ? 40000 : 10000 * (i + 1) - 5000 * (i % 2);
		int64_t service = i >= 15 ? 100 + i : 500;

		snprintf(sql, sizeof(sql), "INSERT INTO requests (pid, fd, tids, pickup_tid,"
			 " start_ts, end_ts, service_ns) VALUES (%d, %d, '%d', %d, %lld, %lld,"
			 " %lld)", 7, i >= 4 && i <= 7 ? 9 : i, 100 + i, 100 + i,
			 (long long)start, (long long)(start + service), (long long)service);
		cr_assert_eq(db_exec(db, sql), 0, "%s", sql);
		snprintf(sql, sizeof(sql), "INSERT INTO thread_state_rows (tid, pid, state_code,"
			 " start_ts, duration, wait_class_code) VALUES (%d, 7, %d, %lld, %lld, 3)",
			 100 + i, i % 4, (long long)start - 10, (long long)service + 20);
		cr_assert_eq(db_exec(db, sql), 0, "%s", sql);
	}
}

static void teardown(void)
{
	sqlite3_close(db);
}

TestSuite(slow_path, .init = setup, .fini = teardown);

/* The requests as the report reads them, and their sorted service times. */
static size_t read_rows(struct slow_candidate *c, int64_t *ns)
{
	sqlite3_stmt *st = db_prepare(db, "SELECT CAST(tids AS INTEGER), start_ts, end_ts, pid,"
				      " fd, rowid, service_ns FROM requests ORDER BY random()");
	size_t n = 0;

	cr_assert(st);
	while (sqlite3_step(st) == SQLITE_ROW && n < NREQ) {
		c[n] = (struct slow_candidate){ sqlite3_column_int64(st, 0),
			sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
			(uint64_t)(uint32_t)sqlite3_column_int64(st, 3) << 32 |
			((uint32_t)sqlite3_column_int64(st, 4) ^ 0x80000000u),
			sqlite3_column_int64(st, 5), sqlite3_column_int64(st, 6), 1 };
		ns[n] = c[n].service;
		n++;
	}
	sqlite3_finalize(st);
	cr_assert_eq(radix_sort_i64(ns, n, sizeof(*ns), 0), 0);
	return n;
}

/* The value bounding the slow tenth of ns (sorted, n of them). */
#define FLOOR ns[slow_path_floor_pos(n)]

Test(slow_path, candidates_pick_what_the_statement_selects)
{
	struct slow_candidate c[NREQ];
	int64_t ns[NREQ];
	struct slow_path from_sql, picked;
	size_t n = read_rows(c, ns);

	cr_assert_eq(n, NREQ);
	cr_assert_eq(slow_path_load(db, &scope, n, FLOOR, NULL, 0, &from_sql), 0);
	cr_assert_eq(slow_path_load(db, &scope, n, FLOOR, c, n, &picked), 0);
	/* the first two by start among the 500s: request 0 (start 10000,
	 * running) and request 1 (start 15000, runnable) */
	cr_assert_eq(picked.requests, 2);
	cr_assert_eq(picked.threshold_ns, 500);
	cr_assert_eq(picked.running, 500);
	cr_assert_eq(picked.runnable, 500);
	cr_assert_eq(picked.blocked, 0);
	cr_assert_eq(memcmp(&picked, &from_sql, sizeof(picked)), 0);
}

/* With requests 0-3 removed, one of 16 is slow: the four starting
 * together at 40000 tie on service, start, pid and fd, and the lowest
 * rowid wins: request 4 (running; 7, the highest, is blocked). */
Test(slow_path, ties_broken_by_start_then_rowid)
{
	struct slow_candidate c[NREQ];
	int64_t ns[NREQ];
	struct slow_path from_sql, picked;
	size_t n;

	cr_assert_eq(db_exec(db, "DELETE FROM requests WHERE pickup_tid IN (100, 101, 102, 103)"),
		     0);
	n = read_rows(c, ns);
	cr_assert_eq(n, NREQ - 4);
	cr_assert_eq(slow_path_load(db, &scope, n, FLOOR, NULL, 0, &from_sql), 0);
	cr_assert_eq(slow_path_load(db, &scope, n, FLOOR, c, n, &picked), 0);
	cr_assert_eq(picked.requests, 1);   /* a tenth of 16 */
	cr_assert_eq(picked.running, 500);  /* request 4 */
	cr_assert_eq(picked.blocked, 0);
	cr_assert_eq(memcmp(&picked, &from_sql, sizeof(picked)), 0);
}

/* The walk fed every row of the table by a caller (the report's one pass
 * over thread_state_rows), rows of other threads and times among them,
 * sums what its own statement over the requests' time range sums. */
Test(slow_path, a_walk_fed_every_row_sums_what_its_own_pass_sums)
{
	struct slow_candidate c[NREQ];
	int64_t ns[NREQ];
	struct slow_path own, fed;
	struct slow_walk *w;
	struct slow_state_row row;
	sqlite3_stmt *st;
	size_t n = read_rows(c, ns);

	/* a row of request 0's thread long after it, a blocked one of
	 * request 1's thread during it (woken by an interrupt) */
	cr_assert_eq(db_exec(db, "INSERT INTO thread_state_rows (tid, pid, state_code, start_ts,"
			     " duration, wait_class_code) VALUES (100, 7, 0, 900000, 50, NULL);"
			     "INSERT INTO thread_state_rows (tid, pid, state_code, start_ts, duration,"
			     " wait_class_code, waker_tid, waker_pid) VALUES"
			     " (101, 7, 3, 15100, 100, 2, 0, 0)"), 0);
	cr_assert_eq(slow_path_load(db, &scope, n, FLOOR, c, n, &own), 0);
	cr_assert_eq(slow_path_begin(db, &scope, n, FLOOR, c, n, &fed, &w), 0);
	cr_assert_not_null(w);
	st = db_prepare(db, "SELECT " SLOW_PATH_STATE_COLUMNS " FROM thread_state_rows");
	cr_assert(st);
	while (sqlite3_step(st) == SQLITE_ROW) {
		slow_path_state_of(st, 0, &row);
		slow_path_add_state(w, &row);
	}
	sqlite3_finalize(st);
	slow_path_end(w);
	cr_assert_eq(own.requests, 2);
	cr_assert_eq(own.blocked, 100);
	cr_assert_eq(own.by_class[2], 100);
	cr_assert_eq(own.woken_by[SW_INTERRUPT], 100);
	cr_assert_eq(memcmp(&own, &fed, sizeof(own)), 0);
}
