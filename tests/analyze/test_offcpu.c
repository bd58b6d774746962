/* test_offcpu.c - off-CPU intervals classified by the system call they
 * waited in (futex, poll, sleep, block I/O by state or by a completed
 * block request, sockets) or, without one, by the task state; their
 * stacks; waits that never meet their call expire and are counted. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture_builder.h"
#include "db_check.h"
#include "event_builder.h"
#include "run_tool.h"

#define T(ms) (SEC + (uint64_t)(ms) * MS)
#define PID 100
#define S PC_TASK_INTERRUPTIBLE
#define D PC_TASK_UNINTERRUPTIBLE
enum { NR_READ = 0, NR_CLOSE = 3, NR_FSYNC = 74, NR_FUTEX = 202,
       NR_CLOCK_NANOSLEEP = 230, NR_EPOLL_WAIT = 232 };

/* Thread tid waits [at+1, at+9] ms in state inside syscall nr on fd
 * [at, at+10] ms. */
static void wait_in_call(struct event_capture *ev, uint32_t tid, uint64_t at,
			 uint32_t state, uint32_t nr, uint64_t fd)
{
	ev_offcpu(ev, T(at + 9), 8 * MS, PID, tid, state, STACK_A, STACK_KERNEL, 102);
	ev_syscall(ev, T(at), 10 * MS, PID, tid, nr, 0, fd, 128, 4096);
}

static void classes(struct event_capture *ev)
{
	ev_init(ev, T(0), T(1000), "sched,syscall,block,net");
	wait_in_call(ev, 201, 0, S, NR_FUTEX, 0x7000);
	wait_in_call(ev, 202, 0, S, NR_EPOLL_WAIT, 4);
	wait_in_call(ev, 203, 0, S, NR_CLOCK_NANOSLEEP, 0);
	wait_in_call(ev, 204, 0, D, NR_READ, 5);          /* disk read */
	wait_in_call(ev, 205, 0, D, NR_FSYNC, 5);
	ev_socket_v4(ev, T(1), PID, 206, 7, PC_SOCK_F_ACCEPTED, "10.0.0.1", 80,
		     "10.0.0.2", 5555, 1);
	wait_in_call(ev, 206, 10, S, NR_READ, 7);          /* socket read */
	wait_in_call(ev, 207, 0, S, NR_READ, 8);           /* a pipe, say */
	ev_block(ev, T(5), MS, 2 * MS, PID, 208, 8 << 20 | 1, 0, 100, 4096);
	wait_in_call(ev, 208, 0, S, NR_READ, 9);           /* waited for its block request */
	wait_in_call(ev, 209, 0, PC_TASK_RUNNING, NR_FUTEX, 0x7000);
	ev_offcpu(ev, T(50), 10 * MS, PID, 210, D, PC_STACK_NONE, PC_STACK_NONE, 0);
	ev_offcpu(ev, T(50), 10 * MS, PID, 211, S, PC_STACK_NONE, PC_STACK_NONE, 0);
	ev_syscall(ev, T(60), MS, PID, 210, NR_READ, 0, 3, 0, 0);  /* after the wait */
}

static char *class_of(sqlite3 *db, uint32_t tid)
{
	char sql[256];

	snprintf(sql, sizeof(sql), "SELECT wait_class || '/' || class_source FROM"
		 " offcpu_intervals WHERE tid=%u", tid);
	return query_text(db, sql);
}

#define expect_class(db, tid, want) do { \
	char *got_ = class_of(db, tid); \
	cr_expect(got_ && strcmp(got_, want) == 0, "tid %d: %s, expected %s", tid, \
		  got_ ? got_ : "(none)", want); \
	free(got_); \
} while (0)

Test(offcpu, classified_by_syscall_or_state)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	classes(&ev);
	db = import_events(dir, "classes", &ev, NULL);
	expect_int(db, "SELECT count(*) FROM offcpu", 11);
	expect_class(db, 201, "futex/syscall");
	expect_class(db, 202, "poll/syscall");
	expect_class(db, 203, "sleep/syscall");
	expect_class(db, 204, "block_io/syscall");
	expect_class(db, 205, "block_io/syscall");
	expect_class(db, 206, "net/syscall");
	expect_class(db, 207, "other/syscall");
	expect_class(db, 208, "block_io/syscall");
	expect_class(db, 209, "preempted/syscall");
	expect_class(db, 210, "block_io/state");
	expect_class(db, 211, "unknown/state");
	expect_int(db, "SELECT value FROM quality WHERE source='sched'"
		   " AND key='offcpu.by_state'", 2);
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

Test(offcpu, intervals_carry_stacks_syscall_and_waker)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	classes(&ev);
	db = import_events(dir, "stacks", &ev, NULL);
	expect_text(db, "SELECT syscall || ' ' || kernel_function || ' ' || user_function"
		    " || ' ' || waker_tid FROM offcpu_intervals WHERE tid=201",
		    "futex ksys_read A 102");
	expect_int(db, "SELECT start_ts FROM offcpu_intervals WHERE tid=201", T(1));
	expect_int(db, "SELECT end_ts - start_ts - duration FROM offcpu_intervals"
		   " WHERE tid=201", 0);
	expect_int(db, "SELECT s.tid FROM offcpu_intervals o JOIN syscall_intervals s"
		   " USING (syscall_id) WHERE o.tid=201", 201);
	expect_int(db, "SELECT count(*) FROM offcpu_intervals WHERE tid=210"
		   " AND ustack_id IS NULL AND kstack_id IS NULL AND syscall IS NULL", 1);
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

Test(offcpu, closed_socket_fd_is_a_file_again)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	ev_init(&ev, T(0), T(100), "sched,syscall,net");
	ev_socket_v4(&ev, T(1), PID, 201, 7, PC_SOCK_F_CONNECTED, "10.0.0.1", 4000,
		     "10.0.0.2", 80, 1);
	ev_syscall(&ev, T(2), MS, PID, 201, NR_CLOSE, 0, 7, 0, 0);
	wait_in_call(&ev, 201, 10, D, NR_READ, 7);
	db = import_events(dir, "reuse", &ev, NULL);
	expect_class(db, 201, "block_io/syscall");
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

Test(offcpu, waits_without_their_call_expire)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	ev_init(&ev, T(0), T(10000), "sched,syscall");
	for (int i = 0; i < 300; i++)
		ev_offcpu(&ev, T(10 + 10 * i), 5 * MS, PID, 201, S, PC_STACK_NONE,
			  PC_STACK_NONE, 0);
	db = import_events(dir, "expire", &ev, NULL);
	expect_int(db, "SELECT count(*) FROM offcpu WHERE class_source='state'", 300);
	expect_int(db, "SELECT value FROM quality WHERE source='sched' AND key='waits.expired'",
		   44);
	expect_int(db, "SELECT expired FROM data_quality WHERE source='sched'", 44);
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

Test(offcpu, without_a_syscall_source_waits_are_classified_at_once)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	ev_init(&ev, T(0), T(10000), "cpu,sched");
	for (int i = 0; i < 300; i++)
		ev_offcpu(&ev, T(10 + 10 * i), 5 * MS, PID, 201, D, PC_STACK_NONE,
			  PC_STACK_NONE, 0);
	db = import_events(dir, "nosys", &ev, NULL);
	expect_int(db, "SELECT count(*) FROM offcpu WHERE wait_class='block_io'", 300);
	expect_int(db, "SELECT value FROM quality WHERE source='sched' AND key='waits.expired'",
		   0);
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

/* Thread tid runs on CPU 0 from at, blocks (state) at at+10 ms, is woken
 * at at+20 and runs again at at+21; the OFFCPU record of that interval
 * carries kernel stack kstack. */
static void block_once(struct event_capture *ev, uint32_t tid, uint64_t at, uint32_t state,
		       uint32_t kstack)
{
	ev_switch(ev, T(at), 0, 0, 0, 0, PID, tid);
	ev_switch(ev, T(at + 10), 0, PID, tid, state, 0, 0);
	ev_wakeup(ev, T(at + 20), PID, tid, 0, 0, 0, 0);
	ev_switch(ev, T(at + 21), 0, 0, 0, 0, PID, tid);
	ev_offcpu(ev, T(at + 21), 11 * MS, PID, tid, state, PC_STACK_NONE, kstack, 0);
	ev_switch(ev, T(at + 22), 0, PID, tid, PC_TASK_RUNNING, 0, 0);
}

/* A wait no system call explains takes the class its kernel stack tells
 * (pipe_read: pipe), on the OFFCPU row and on the blocked thread_states
 * row of the same switch-out, with or without a syscall source; a stack
 * that tells nothing leaves the class the task state gave (unknown for
 * an interruptible sleep). */
static void kernel_stack_classes(const char *sources, const char *name)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	ev_init(&ev, T(0), T(1000), sources);
	block_once(&ev, 301, 100, S, STACK_KPIPE);
	block_once(&ev, 302, 200, S, STACK_KERNEL);
	block_once(&ev, 303, 300, D, STACK_KPIPE);
	block_once(&ev, 301, 400, S, STACK_KPIPE);
	db = import_events(dir, name, &ev, NULL);
	expect_class(db, 302, "unknown/state");
	expect_int(db, "SELECT count(*) FROM offcpu WHERE tid IN (301, 303)"
		   " AND wait_class = 'pipe' AND class_source = 'kstack'", 3);
	expect_int(db, "SELECT count(*) FROM thread_states WHERE state NOT IN"
		   " ('running', 'runnable') AND tid IN (301, 303) AND wait_class = 'pipe'", 3);
	expect_int(db, "SELECT count(*) FROM thread_states WHERE state NOT IN"
		   " ('running', 'runnable') AND tid = 302 AND wait_class = 'unknown'", 1);
	/* the blocked row is the one that began at the switch-out */
	expect_int(db, "SELECT count(*) FROM thread_states t JOIN offcpu o"
		   " ON o.tid = t.tid AND o.ts - o.duration = t.start_ts"
		   " WHERE t.wait_class = 'pipe'", 3);
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

Test(offcpu, kernel_stack_classes_without_a_syscall_source)
{
	kernel_stack_classes("cpu,sched", "kstack");
}

Test(offcpu, kernel_stack_classes_with_a_syscall_source)
{
	kernel_stack_classes("sched,syscall", "kstack_sys");
}
