/* test_wait_class.c - the kernel-stack wait classes (analyze/correlate/
 * wait_class.c) on stacks as Linux 6.x records them: the innermost telling
 * frame decides, generic sleeping primitives (schedule_hrtimeout_range
 * under ep_poll, schedule_timeout under sk_wait_data) do not, and a stack
 * with no telling frame gives no class. And the second look at waits once
 * stacks have names (wait_stacks.c) by its join, the way it goes when the
 * correlator's pairs are not there. */
#include <criterion/criterion.h>
#include <sqlite3.h>

#include "correlate/correlate.h"
#include "correlate/wait_class.h"
#include "db/schema.h"

#define CLASS(...) ({ \
	const char *const names_[] = { __VA_ARGS__ }; \
	wait_class_of_kernel_stack(names_, (int)(sizeof(names_) / sizeof(names_[0]))); })

Test(wait_class, user_lock_in_futex)
{
	cr_expect_eq(CLASS("__schedule", "schedule", "futex_do_wait", "__futex_wait",
			   "futex_wait", "do_futex", "__x64_sys_futex"), WC_FUTEX);
}

Test(wait_class, epoll_not_the_timer_under_it)
{
	cr_expect_eq(CLASS("__schedule", "schedule", "schedule_hrtimeout_range_clock",
			   "ep_poll", "do_epoll_wait", "__x64_sys_epoll_wait"), WC_POLL);
}

Test(wait_class, nanosleep_is_sleep)
{
	cr_expect_eq(CLASS("__schedule", "schedule", "do_nanosleep", "hrtimer_nanosleep",
			   "common_nsleep", "__x64_sys_clock_nanosleep"), WC_SLEEP);
}

Test(wait_class, socket_receive_and_accept)
{
	cr_expect_eq(CLASS("__schedule", "schedule", "schedule_timeout", "wait_woken",
			   "sk_wait_data", "tcp_recvmsg_locked", "tcp_recvmsg"), WC_NET);
	cr_expect_eq(CLASS("__schedule", "schedule", "schedule_timeout",
			   "inet_csk_accept", "inet_accept", "do_accept"), WC_ACCEPT);
}

Test(wait_class, disk_through_the_page_cache)
{
	cr_expect_eq(CLASS("__schedule", "schedule", "io_schedule", "folio_wait_bit_common",
			   "filemap_fault"), WC_BLOCK_IO);
	cr_expect_eq(CLASS("__schedule", "schedule", "jbd2_log_wait_commit",
			   "ext4_sync_file", "do_fsync"), WC_BLOCK_IO);
}

Test(wait_class, kernel_lock_pipe_and_nothing)
{
	cr_expect_eq(CLASS("__schedule", "schedule", "rwsem_down_write_slowpath",
			   "down_write", "do_mprotect_pkey"), WC_KERNEL_LOCK);
	cr_expect_eq(CLASS("__schedule", "schedule", "pipe_read", "vfs_read"), WC_PIPE);
	cr_expect_eq(CLASS("__schedule", "schedule", "schedule_timeout", "wait_woken"), WC_N);
	cr_expect_eq(wait_class_of_kernel_stack(NULL, 0), WC_N);
}

Test(wait_class, names_are_the_documented_ones)
{
	cr_expect_str_eq(wait_class_name(WC_UNKNOWN), "unknown");
	cr_expect_str_eq(wait_class_name(WC_SLEEP), "sleep");
	cr_expect_str_eq(wait_class_name(WC_KERNEL_LOCK), "kernel_lock");
	cr_expect_str_eq(wait_class_name(WC_N), "unknown");
}

static long long one_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	long long v = -1;

	cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s", sql);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* Without the correlator's pairs, the join finds the blocked row each
 * OFFCPU record began with (tid and start), not one of another thread or
 * start, not one inside a system call; the record gets class_source
 * 'kstack'; a stack that tells nothing changes nothing. */
Test(wait_stacks, join_without_pairs)
{
	sqlite3 *db = NULL;

	cr_assert_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	cr_assert_eq(schema_create_tables(db), 0);
	cr_assert_eq(sqlite3_exec(db,
		"INSERT INTO frames (frame_id, kind, name) VALUES (1, 'kernel', 'pipe_read'),"
		" (2, 'kernel', 'do_syscall_64'), (3, 'kernel', 'ksys_read');"
		"INSERT INTO stack_frames VALUES (7, 0, 1), (7, 1, 2), (8, 0, 3), (8, 1, 2);"
		/* tid, pid, state_code, start_ts, duration, wait_class_code, syscall_nr */
		"INSERT INTO thread_state_rows (tid, pid, state_code, start_ts, duration,"
		" wait_class_code, syscall_nr) VALUES"
		" (10, 1, 3, 1000, 50, 7, NULL),"   /* rowid 1: matches the first record */
		" (11, 1, 3, 1000, 50, 7, NULL),"   /* 2: another thread */
		" (10, 1, 3, 2000, 50, 7, 0),"      /* 3: inside a read */
		" (10, 1, 3, 3000, 50, 7, NULL),"   /* 4: the second record, a stack telling nothing */
		" (10, 1, 0, 1050, 10, NULL, NULL);" /* 5: running */
		"INSERT INTO offcpu (offcpu_id, ts, duration, pid, tid, state, kstack_id,"
		" wait_class, class_source) VALUES"
		" (1, 1050, 50, 1, 10, 1, 7, 'unknown', 'state'),"
		" (2, 2050, 50, 1, 10, 1, 7, 'unknown', 'syscall'),"
		" (3, 3050, 50, 1, 10, 1, 8, 'unknown', 'state');",
		NULL, NULL, NULL), SQLITE_OK, "%s", sqlite3_errmsg(db));
	cr_assert_eq(wait_stacks_classify(db, NULL), 0);
	cr_expect_eq(one_int(db, "SELECT wait_class_code FROM thread_state_rows WHERE rowid = 1"),
		     WC_PIPE);
	cr_expect_eq(one_int(db, "SELECT count(*) FROM thread_state_rows"
			     " WHERE rowid IN (2, 3, 4) AND wait_class_code = 7"), 3);
	cr_expect_eq(one_int(db, "SELECT count(*) FROM offcpu WHERE class_source = 'kstack'"
			     " AND wait_class = 'pipe' AND offcpu_id = 1"), 1);
	cr_expect_eq(one_int(db, "SELECT count(*) FROM offcpu WHERE class_source = 'kstack'"), 1);
	sqlite3_close(db);
}
