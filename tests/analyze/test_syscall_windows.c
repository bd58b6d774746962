/* test_syscall_windows.c - calls paired in the syscall program's windows
 * (format 1.14, perfcap-record --syscall-rate) with known answers: each
 * call's weight (its second over the part of its window a call of its
 * length could start in, the long ones bounded), the last period shortened
 * by a second record with the same start, malformed windows counted and
 * left out, the weights corrected by each thread's pace outside its
 * window against inside (format 1.15, syscall_pace), and the weighted
 * counts and times in the report's system call table, the futex views and
 * the time shares. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_check.h"
#include "event_builder.h"
#include "run_tool.h"

#define T(ms) (SEC + (uint64_t)(ms) * MS)  /* capture starts at 1 s */
#define PID 100
#define TID 101
#define NR_GETPPID 110
#define NR_FUTEX 202
#define US 1000ull

/* The integer after `"key": ` in the JSON object that has `"name": "NAME"`
 * (or `"key": "NAME"`), looked for after that name; -1 if none. */
static double json_after(const char *json, const char *name_kv, const char *key)
{
	const char *at = strstr(json, name_kv);
	char want[64];

	if (!at)
		return -1;
	snprintf(want, sizeof(want), "\"%s\": ", key);
	at = strstr(at, want);
	return at ? strtod(at + strlen(want), NULL) : -1;
}

/* A second followed whole (0-1000 ms), then two windowed seconds: a
 * 100-ms window at 1000 and at 2000 ms. In the first window: ten 1-us
 * calls (weight 10 each), one of 50 ms (1000 / 50 = 20) and one of 90 ms
 * (bounded: 1000 / 25 = 40). In the whole second: ten 1-us calls, weight
 * 1. In the second window: ten futex waits of 2 ms on one address, each
 * 1000 / 98. */
static void windows_scenario(struct event_capture *ev, const char *sources)
{
	ev_init(ev, T(0), T(3000), sources);
	for (int i = 0; i < 10; i++)
		ev_syscall(ev, T(100 + i), US, PID, TID, NR_GETPPID, PID - 1, 0, 0, 0);
	ev_syscall_window(ev, T(1000), 100 * MS, SEC);
	for (int i = 0; i < 10; i++)
		ev_syscall(ev, T(1001 + i), US, PID, TID, NR_GETPPID, PID - 1, 0, 0, 0);
	ev_syscall(ev, T(1020), 50 * MS, PID, TID, 35 /* nanosleep */, 0, 0, 0, 0);
	ev_syscall(ev, T(1005), 90 * MS, PID, TID + 1, 35, 0, 0, 0, 0);
	ev_syscall_window(ev, T(2000), 100 * MS, SEC);
	for (int i = 0; i < 10; i++)
		ev_syscall(ev, T(2001 + 3 * i), 2 * MS, PID, TID, NR_FUTEX, 0, 0x7000, 128, 0);
}

Test(syscall_windows, each_call_weighs_its_second_over_the_part_of_its_window_it_fit_in)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	windows_scenario(&ev, "syscall");
	db = import_events(dir, "weights", &ev, NULL);
	expect_int(db, "SELECT count(*) FROM syscall_windows", 2);
	expect_text(db, "SELECT group_concat(DISTINCT printf('%.3f', weight)) FROM (SELECT weight"
		    " FROM syscalls WHERE nr = 110 ORDER BY ts)", "1.000,10.000");
	expect_text(db, "SELECT printf('%.3f', weight) FROM syscalls WHERE nr = 35 AND tid = 101",
		    "20.000");
	expect_text(db, "SELECT printf('%.3f', weight) FROM syscalls WHERE nr = 35 AND tid = 102",
		    "40.000");
	expect_text(db, "SELECT printf('%.3f', weight) FROM syscall_intervals WHERE nr = 202"
		    " LIMIT 1", "10.204");
	/* the calls before the first window were followed whole */
	expect_int(db, "SELECT count(*) FROM syscall_rows WHERE window_ts IS NULL", 10);
	/* futex views: 10 waits stand for 102, 20 ms for 204 ms */
	expect_text(db, "SELECT waits || ' ' || (wait_ns / 1000000) FROM futex_contention",
		    "102 204");
	expect_text(db, "SELECT calls || ' ' || waits FROM futex_waits", "102 102");
	/* the time shares (no waits source: the calls fill them), weighted */
	expect_int(db, "SELECT sum(syscalls) FROM thread_time_shares WHERE tid = 101",
		   10 + 100 + 20 + 102);
	expect_int(db, "SELECT sum(futex_waits) FROM thread_time_shares", 102);
	/* 110 x 1 us, 50 ms x 20, 2 ms x 10 x 10.2 */
	expect_int(db, "SELECT sum(syscall_ns) / 1000000 FROM thread_time_shares WHERE tid = 101",
		   1204);
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

Test(syscall_windows, a_second_record_with_the_same_start_shortens_the_last_period)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	ev_init(&ev, T(0), T(1500), "syscall");
	ev_syscall_window(&ev, T(1000), 100 * MS, SEC);
	ev_syscall(&ev, T(1001), US, PID, TID, NR_GETPPID, PID - 1, 0, 0, 0);
	ev_syscall_window(&ev, T(1000), 100 * MS, 500 * MS);   /* the recording ended */
	db = import_events(dir, "last", &ev, NULL);
	expect_int(db, "SELECT count(*) FROM syscall_windows", 1);
	expect_text(db, "SELECT printf('%.3f', weight) FROM syscalls", "5.000");
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

/* Thread TID reads every 0.5 ms in a 100-ms window at 1000 ms: 200 reads,
 * its read/write count from 1000 to 1199, 2,000 a second. By its first
 * call of the next second (followed whole) the count is 4,800: 3,800 over
 * the second, so outside the window it went faster, and its 200 reads
 * stand for 3,800 (pace 1.9), not 2,000. TID + 1 does the same with a
 * count that moves 50 times only: too few to know its pace, time weights.
 * TID + 2 makes no call in the next second: time weights. */
Test(syscall_windows, the_threads_pace_outside_its_window_corrects_the_weights)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	ev_init(&ev, T(0), T(4000), "syscall");
	ev_syscall_window(&ev, T(1000), 100 * MS, SEC);
	for (int i = 0; i < 200; i++) {
		uint64_t at = T(1000) + (uint64_t)i * 500 * US;

		ev_syscall_io(&ev, at, US, PID, TID, 0 /* read */, 10, 1000 + i);
		ev_syscall_io(&ev, at, US, PID, TID + 1, 0, 10, 1000 + i / 4);
		ev_syscall_io(&ev, at, US, PID, TID + 2, 0, 10, 1000 + i);
	}
	ev_syscall_io(&ev, T(2000), US, PID, TID, 0, 10, 4800);
	ev_syscall_io(&ev, T(2000), US, PID, TID + 1, 0, 10, 4800);
	ev_syscall_io(&ev, T(3500), US, PID, TID + 2, 0, 10, 4800);
	db = import_events(dir, "pace", &ev, NULL);
	expect_text(db, "SELECT printf('%.4f', pace) || ' ' || io_window || ' ' || io_period"
		    " FROM syscall_pace", "1.9000 199 3800");
	expect_int(db, "SELECT round(sum(weight)) FROM syscalls WHERE tid = 101 AND ts < 2100000000", 3800);
	expect_int(db, "SELECT round(sum(weight)) FROM syscalls WHERE tid = 102 AND ts < 2100000000", 2000);
	expect_int(db, "SELECT round(sum(weight)) FROM syscalls WHERE tid = 103 AND ts < 2100000000", 2000);
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

Test(syscall_windows, malformed_windows_are_counted_and_left_out)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	ev_init(&ev, T(0), T(3000), "syscall");
	ev_syscall_window(&ev, T(2000), 100 * MS, SEC);
	ev_syscall_window(&ev, T(1000), 100 * MS, SEC);       /* before the last one */
	ev_syscall_window(&ev, T(2500), 2 * SEC, SEC);        /* open longer than its period */
	ev_syscall_window(&ev, T(2600), 0, 0);                /* no period */
	ev_syscall(&ev, T(2001), US, PID, TID, NR_GETPPID, PID - 1, 0, 0, 0);
	ev_syscall(&ev, T(1001), US, PID, TID, NR_GETPPID, PID - 1, 0, 0, 0);
	db = import_events(dir, "bad", &ev, NULL);
	expect_int(db, "SELECT count(*) FROM syscall_windows", 1);
	expect_int(db, "SELECT value FROM quality WHERE source = 'format' AND"
		   " key = 'records.malformed'", 3);
	expect_text(db, "SELECT group_concat(printf('%.0f', weight), ' ') FROM (SELECT weight"
		    " FROM syscalls ORDER BY ts)", "1 10");
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

Test(syscall_windows, the_report_counts_what_the_calls_stand_for_and_says_how_much_was_followed)
{
	char *dir = scratch_dir(), *cap = scratch_path(dir, "report.perfcap");
	struct event_capture ev;
	struct tool_result r;
	sqlite3 *db;

	windows_scenario(&ev, "syscall");
	pc_buf_add_kv(&ev.meta, "syscall.windows.budget", "10000");
	pc_buf_add_kv(&ev.stats, "syscall.windows.count", "2");
	pc_buf_add_kv(&ev.stats, "syscall.windows.covered_ns", "1200000000");
	pc_buf_add_kv(&ev.stats, "syscall.windows.span_ns", "3000000000");
	pc_buf_add_kv(&ev.stats, "syscall.windows.cut", "7");
	db = import_events(dir, "report", &ev, NULL);
	sqlite3_close(db);
	run_analyze(&r, "report", "--no-local-files", "--json", cap, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	/* getppid: 10 followed whole + 10 x 10; futex: 10 x 1000/98 */
	cr_expect_eq(json_after(r.out, "\"name\": \"getppid\"", "count"), 110, "%s", r.out);
	cr_expect_eq(json_after(r.out, "\"name\": \"futex\"", "count"), 102, "%s", r.out);
	cr_expect_eq(json_after(r.out, "\"name\": \"nanosleep\"", "count"), 60, "%s", r.out);
	cr_expect_float_eq(json_after(r.out, "\"key\": \"windows.followed_share\"", "value"),
			   0.4, 1e-9, "%s", r.out);
	cr_expect_eq(json_after(r.out, "\"key\": \"windows.cut\"", "value"), 7, "%s", r.out);
	tool_result_free(&r);
	run_analyze(&r, "report", "--no-local-files", cap, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "Syscalls followed:") != NULL, "%s", r.out);
	/* 3 s: the whole second and two windows of 100 ms */
	cr_expect(strstr(r.out, "in time windows above 10000 calls per s: 40.0% of the window"
			 " followed") != NULL, "%s", r.out);
	tool_result_free(&r);
	free(cap);
	ev_free(&ev);
	scratch_remove(dir);
}
