/* test_states.c - thread_states, runq_latency and thread_time_shares
 * rebuilt from synthetic context switches and wakeups with known answers:
 * exact intervals, partial intervals at the capture's edges, unmatched
 * events counted, records out of order put back in order, late records
 * counted, time shares split at window edges. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "db_check.h"
#include "event_builder.h"
#include "run_tool.h"

#define T(ms) (SEC + (uint64_t)(ms) * MS)  /* capture starts at 1 s */
#define PID 100
#define TID 101      /* the thread under test */
#define WAKER 102
#define NR_FUTEX 202
#define FUTEX_WAIT_PRIVATE 128

/* run 10 ms, sleep in futex 50 ms (woken by WAKER), runnable 5 ms, run
 * 10 ms, then sleep until the capture ends at 200 ms. */
static void known_thread(struct event_capture *ev)
{
	ev_init(ev, T(0), T(200), "cpu,sched,syscall");
	ev_switch(ev, T(100), 0, 0, 0, 0, PID, TID);
	ev_switch(ev, T(110), 0, PID, TID, PC_TASK_INTERRUPTIBLE, 0, 0);
	ev_wakeup(ev, T(160), PID, TID, PID, WAKER, 1, 0);
	ev_switch(ev, T(165), 1, 0, 0, 0, PID, TID);
	ev_syscall(ev, T(109), 52 * MS, PID, TID, NR_FUTEX, 0, 0x7000, FUTEX_WAIT_PRIVATE, 0);
	ev_switch(ev, T(175), 1, PID, TID, PC_TASK_INTERRUPTIBLE, 0, 0);
}

Test(states, known_intervals)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	known_thread(&ev);
	db = import_events(dir, "known", &ev, NULL);
	expect_int(db, "SELECT count(*) FROM thread_states WHERE tid=101", 5);
	expect_text(db, "SELECT group_concat(state || ':' || (duration / 1000000) || ':' || partial,"
		    " ' ') FROM (SELECT * FROM thread_states WHERE tid=101 ORDER BY start_ts)",
		    "running:10:0 sleep:50:0 runnable:5:0 running:10:0 sleep:25:1");
	expect_int(db, "SELECT start_ts FROM thread_states WHERE tid=101 AND state='sleep'"
		   " AND partial=0", T(110));
	expect_int(db, "SELECT waker_tid FROM thread_states WHERE tid=101 AND state='sleep'"
		   " AND partial=0", WAKER);
	expect_int(db, "SELECT syscall_nr FROM thread_states WHERE tid=101 AND state='sleep'"
		   " AND partial=0", NR_FUTEX);
	expect_text(db, "SELECT wait_class FROM thread_states WHERE tid=101 AND state='sleep'"
		    " AND partial=0", "futex");
	expect_text(db, "SELECT wait_class FROM thread_states WHERE tid=101 AND partial=1",
		    "unknown");
	expect_int(db, "SELECT count(*) FROM thread_states WHERE tid=101 AND partial=1"
		   " AND waker_tid IS NULL AND syscall_nr IS NULL", 1);
	expect_text(db, "SELECT reason || ':' || waker_tid || ':' || cpu FROM thread_states"
		    " WHERE tid=101 AND state='runnable'", "wakeup:102:1");
	expect_int(db, "SELECT cpu FROM thread_states WHERE tid=101 AND start_ts=" "1100000000",
		   0);
	expect_int(db, "SELECT count(*) FROM thread_states WHERE tid<>101", 0);
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

Test(states, runq_latency_and_time_shares)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	known_thread(&ev);
	db = import_events(dir, "shares", &ev, NULL);
	expect_text(db, "SELECT latency || ':' || reason || ':' || waker_tid FROM runq_latency"
		    " WHERE tid=101", "5000000:wakeup:102");
	expect_int(db, "SELECT count(*) FROM thread_time_shares WHERE tid=101", 1);
	expect_text(db, "SELECT window_start || '-' || window_end FROM thread_time_shares"
		    " WHERE tid=101", "1000000000-2000000000");
	expect_text(db, "SELECT running_ns || ' ' || runnable_ns || ' ' || io_wait_ns || ' ' ||"
		    " sleep_ns || ' ' || futex_wait_ns || ' ' || poll_wait_ns || ' ' ||"
		    " futex_waits || ' ' || syscalls || ' ' || syscall_ns"
		    " FROM thread_time_shares WHERE tid=101",
		    "20000000 5000000 0 75000000 50000000 0 1 1 52000000");
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

Test(states, windows_cut_intervals)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	known_thread(&ev);
	db = import_events(dir, "window", &ev, "--window", "10ms", NULL);
	expect_int(db, "SELECT value FROM schema_info WHERE key='window_ns'", 10 * MS);
	/* the 50 ms sleep from 110 to 160 ms: five full windows */
	expect_int(db, "SELECT count(*) FROM thread_time_shares WHERE tid=101"
		   " AND sleep_ns=10000000 AND futex_wait_ns=10000000", 5);
	expect_int(db, "SELECT sum(running_ns) FROM thread_time_shares WHERE tid=101", 20 * MS);
	expect_int(db, "SELECT sum(sleep_ns) FROM thread_time_shares WHERE tid=101", 75 * MS);
	/* the futex call from 109 to 161 ms: 1 + 50 + 1 ms */
	expect_int(db, "SELECT syscall_ns FROM thread_time_shares WHERE tid=101"
		   " AND window_start=1100000000", 1 * MS);
	expect_int(db, "SELECT sum(syscall_ns) FROM thread_time_shares WHERE tid=101", 52 * MS);
	expect_int(db, "SELECT min(window_start) FROM thread_time_shares", T(100));
	expect_int(db, "SELECT max(window_end) FROM thread_time_shares", T(200));
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

/* A thread already running when the capture starts, preempted; one already
 * sleeping, woken; one switched in twice; one switched in while blocked. */
static void edge_cases(struct event_capture *ev)
{
	ev_init(ev, T(0), T(200), "sched");
	ev_switch(ev, T(50), 0, 200, 200, PC_TASK_RUNNING, 0, 0);      /* ran since 0 */
	ev_switch(ev, T(60), 0, 0, 0, 0, 200, 200);                    /* runnable 10 */
	ev_wakeup(ev, T(20), 300, 300, 200, 200, 1, 0);                /* slept since 0 */
	ev_switch(ev, T(30), 1, 0, 0, 0, 300, 300);                    /* runnable 10 */
	ev_switch(ev, T(70), 1, 300, 300, PC_TASK_UNINTERRUPTIBLE, 0, 0);
	ev_switch(ev, T(90), 1, 0, 0, 0, 300, 300);                    /* no wakeup */
	ev_switch(ev, T(95), 0, 0, 0, 0, 200, 200);   /* 200 left CPU 0 unseen: 60-95 unknown */
	ev_wakeup(ev, T(100), 400, 400, 0, 0, 1, 1);                   /* a new thread */
	ev_switch(ev, T(104), 1, 300, 300, PC_TASK_INTERRUPTIBLE, 400, 400);
}

static void check_edge_cases(sqlite3 *db)
{
	expect_text(db, "SELECT group_concat(state || ':' || ((start_ts - 1000000000) / 1000000)"
		    " || '-' || ((end_ts - 1000000000) / 1000000) || ':' || partial, ' ')"
		    " FROM (SELECT * FROM thread_states WHERE tid=200 ORDER BY start_ts)",
		    "running:0-50:1 runnable:50-60:0 running:95-200:1");
	expect_text(db, "SELECT group_concat(state || ':' || ((start_ts - 1000000000) / 1000000)"
		    " || '-' || ((end_ts - 1000000000) / 1000000) || ':' || partial, ' ')"
		    " FROM (SELECT * FROM thread_states WHERE tid=300 ORDER BY start_ts)",
		    "blocked:0-20:1 runnable:20-30:0 running:30-70:0 io:70-90:0"
		    " running:90-104:0 sleep:104-200:1");
	expect_text(db, "SELECT reason || ':' || latency FROM runq_latency WHERE tid=400",
		    "new:4000000");
	expect_text(db, "SELECT group_concat(reason || ':' || (latency / 1000000), ' ') FROM"
		    " (SELECT * FROM runq_latency WHERE tid IN (200, 300) ORDER BY ready_ts)",
		    "wakeup:10 preempted:10");
	expect_int(db, "SELECT waker_tid IS NULL FROM thread_states WHERE tid=300 AND state='io'",
		   1);
	expect_int(db, "SELECT value FROM quality WHERE source='sched'"
		   " AND key='switch_in.unmatched'", 0);
	expect_int(db, "SELECT value FROM quality WHERE source='sched'"
		   " AND key='cpu_switch.unmatched'", 1);
	expect_int(db, "SELECT value FROM quality WHERE source='sched'"
		   " AND key='wakeup.unmatched'", 1);
	expect_int(db, "SELECT value FROM quality WHERE source='sched'"
		   " AND key='intervals.partial'", 5);
	expect_int(db, "SELECT unmatched FROM data_quality WHERE source='sched'", 2);
}

Test(states, capture_edges_and_unmatched_events)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	edge_cases(&ev);
	db = import_events(dir, "edges", &ev, NULL);
	check_edge_cases(db);
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

Test(states, small_chunks_give_the_same_answer)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	edge_cases(&ev);
	ev.per_chunk = 2;
	db = import_events(dir, "chunks", &ev, NULL);
	check_edge_cases(db);
	expect_int(db, "SELECT value FROM quality WHERE source='sched' AND key='late'", 0);
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

Test(states, records_later_than_the_reorder_window_are_counted)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	ev_init(&ev, T(0), 0, "sched");
	ev.per_chunk = 3;
	ev_switch(&ev, T(100), 0, 0, 0, 0, PID, TID);
	ev_switch(&ev, T(300), 0, PID, TID, PC_TASK_RUNNING, 0, 0);
	ev_switch(&ev, T(5000), 0, 0, 0, 0, PID, TID);
	/* the first chunk released everything before 3 s: this one is late */
	ev_switch(&ev, T(200), 1, 0, 0, 0, PID, WAKER);
	ev_switch(&ev, T(5100), 0, PID, TID, PC_TASK_RUNNING, 0, 0);
	db = import_events(dir, "late", &ev, NULL);
	expect_int(db, "SELECT value FROM quality WHERE source='sched' AND key='late'", 1);
	expect_int(db, "SELECT late FROM data_quality WHERE source='sched'", 1);
	expect_int(db, "SELECT count(*) FROM switches", 5);
	expect_int(db, "SELECT count(*) FROM thread_states WHERE tid=102", 0);
	expect_text(db, "SELECT group_concat(state || ':' || (duration / 1000000), ' ') FROM"
		    " (SELECT * FROM thread_states WHERE tid=101 ORDER BY start_ts)",
		    "running:200 runnable:4700 running:100");
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

/* With a pid filter the recorder marks which side of a switch was traced;
 * an untraced task on the other side (here the recorder, tid 900) gets no
 * states, instead of a "running" interval that never ends. */
Test(states, untraced_side_of_a_switch_gets_no_states)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	ev_init(&ev, T(0), T(200), "cpu,sched");
	ev_switch_flags(&ev, T(10), 0, 900, 900, 0, PID, TID, PC_SWITCH_F_NEXT_TRACED);
	ev_switch_flags(&ev, T(30), 0, PID, TID, 1, 900, 900, PC_SWITCH_F_PREV_TRACED);
	ev_wakeup(&ev, T(80), PID, TID, 0, 0, 0, 0);
	ev_switch_flags(&ev, T(85), 0, 0, 0, 0, PID, TID, PC_SWITCH_F_NEXT_TRACED);
	db = import_events(dir, "flags", &ev, NULL);
	expect_int(db, "SELECT count(*) FROM thread_states WHERE tid=900", 0);
	expect_text(db, "SELECT group_concat(state || ':' || (duration / 1000000), ' ') FROM"
		    " (SELECT * FROM thread_states WHERE tid=" "101" " ORDER BY start_ts)",
		    "running:20 sleep:50 runnable:5 running:115");
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

/* A traced thread that stops passing the filters (renamed out of --comm):
 * 101 runs from 10 ms; at 40 ms it leaves the CPU untraced (only the next
 * side, 102, is traced): its running interval ends there, exactly, and it
 * is not running until the capture ends. 102 then runs until 60 ms, when
 * the CPU's next recorded switch has another task (103) leaving: 102 left
 * unseen, so 40-60 ms is unknown (counted), not running. */
Test(states, a_thread_leaving_the_filter_stops_running)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	ev_init(&ev, T(0), T(200), "cpu,sched");
	ev_switch_flags(&ev, T(10), 0, 900, 900, 0, PID, 101, PC_SWITCH_F_NEXT_TRACED);
	ev_switch_flags(&ev, T(40), 0, PID, 101, 0, PID, 102, PC_SWITCH_F_NEXT_TRACED);
	ev_switch_flags(&ev, T(60), 0, PID, 103, 0, PID, 104,
			PC_SWITCH_F_PREV_TRACED | PC_SWITCH_F_NEXT_TRACED);
	db = import_events(dir, "leave", &ev, NULL);
	expect_text(db, "SELECT group_concat(state || ':' || (start_ts / 1000000 - 1000) || '-' ||"
		    " (end_ts / 1000000 - 1000) || ':' || partial, ' ') FROM"
		    " (SELECT * FROM thread_states WHERE tid IN (101, 102) ORDER BY tid, start_ts)",
		    "running:10-40:0");
	expect_int(db, "SELECT value FROM quality WHERE source='sched'"
		   " AND key='cpu_switch.unmatched'", 1);
	expect_int(db, "SELECT sum(running_ns) FROM thread_time_shares WHERE tid IN (101, 102)",
		   30 * MS);
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

/* A wakeup that comes before the switch-out it ends (sched_waking fires in
 * the waker once the sleeper declared its sleep; the sleeper's switch-out
 * still says it blocked): the thread is runnable from the switch-out, not
 * asleep until its switch-in with its wakeup missing. A wakeup while
 * running that the thread ran on after (it did not block) does not make a
 * later real block runnable: the later wakeup shows it was blocked. */
Test(states, a_wakeup_before_its_switch_out_makes_the_thread_runnable)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	ev_init(&ev, T(0), T(200), "cpu,sched");
	ev_switch(&ev, T(10), 0, 0, 0, 0, PID, TID);
	/* woken at 19.99 ms on CPU 1 while still on CPU 0, off at 20 */
	ev_wakeup(&ev, T(20) - 10000, PID, TID, PID, WAKER, 0, 0);
	ev_switch(&ev, T(20), 0, PID, TID, PC_TASK_INTERRUPTIBLE, 0, 0);
	ev_switch(&ev, T(30), 0, 0, 0, 0, PID, TID);          /* runnable 10 ms */
	/* woken while running at 40, runs on; blocks at 60, woken at 90 */
	ev_wakeup(&ev, T(40), PID, TID, PID, WAKER, 0, 0);
	ev_switch(&ev, T(60), 0, PID, TID, PC_TASK_INTERRUPTIBLE, 0, 0);
	ev_wakeup(&ev, T(90), PID, TID, PID, WAKER, 0, 0);
	ev_switch(&ev, T(95), 0, 0, 0, 0, PID, TID);
	ev_switch(&ev, T(100), 0, PID, TID, PC_TASK_INTERRUPTIBLE, 0, 0);
	db = import_events(dir, "early", &ev, NULL);
	expect_text(db, "SELECT group_concat(state || ':' || (duration / 1000000), ' ') FROM"
		    " (SELECT * FROM thread_states WHERE tid=101 AND partial=0 ORDER BY start_ts)",
		    "running:10 runnable:10 running:30 sleep:30 runnable:5 running:5");
	expect_text(db, "SELECT reason || ':' || waker_tid FROM thread_states WHERE tid=101"
		    " AND state='runnable' AND start_ts=" "1020000000", "wakeup:102");
	expect_int(db, "SELECT ifnull(unmatched, 0) FROM data_quality WHERE source='sched'", 0);
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

/* The gap tests' thread (see below); with_close: its counters are written
 * at the gap's start too (format 1.13), its run queue counter delay0 there
 * and delay1 at the gap's end, its voluntary switches 5 and 5 + vcsw. */
static void gap_scenario(struct event_capture *ev, int with_close, uint64_t delay0,
			 uint64_t delay1, uint64_t vcsw)
{
	ev_init(ev, T(0), T(1000), "cpu,sched,waits");
	ev_switch(ev, T(10), 0, 0, 0, 0, PID, TID);
	ev_switch(ev, T(200), 0, PID, TID, PC_TASK_INTERRUPTIBLE, 0, 0);
	if (with_close)
		ev_sched_task_delay(ev, PC_REC_SCHED_TASK_CLOSE, T(300), PID, TID, 0,
				    PC_TASK_INTERRUPTIBLE, 100 * MS, delay0, 5);
	ev_sched_gap(ev, T(300), T(900));
	ev_sched_task_delay(ev, PC_REC_SCHED_TASK, T(900), PID, TID, 0, PC_TASK_INTERRUPTIBLE,
			    250 * MS, delay1, 5 + vcsw);
	ev_wakeup(ev, T(950), PID, TID, PID, WAKER, 1, 0);
	ev_switch(ev, T(960), 1, 0, 0, 0, PID, TID);
	ev_thread_metric(ev, T(0), SEC, PID, TID, PC_METRIC_FUTEX_WAIT, PC_METRIC_F_WAIT,
			 10, 100 * MS);
}

/* The sched source followed a window only (format 1.12): the thread runs
 * 190 ms, sleeps from 200 ms, then nothing is seen from 300 to 900 ms (a
 * SCHED_GAP); at 900 ms it is blocked (SCHED_TASK), woken at 950, on CPU
 * at 960 to the end at 1000. Its states stop at the gap and resume from
 * the SCHED_TASK, both ends partial; the first second, 400 ms of it seen,
 * has its state times and the waits' sums scaled by 1000 / 400. */
Test(states, a_sched_gap_cuts_the_states_and_scales_the_shares)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	gap_scenario(&ev, 0, 0, 0, 0);
	db = import_events(dir, "gap", &ev, NULL);
	expect_text(db, "SELECT group_concat(state || ':' || ((start_ts - 1000000000) / 1000000)"
		    " || '+' || (duration / 1000000) || ':' || partial, ' ') FROM (SELECT * FROM"
		    " thread_states WHERE tid=101 ORDER BY start_ts)",
		    "running:10+190:0 sleep:200+100:1 sleep:900+50:1 runnable:950+10:0"
		    " running:960+40:1");
	expect_int(db, "SELECT count(*) FROM sched_gaps", 1);
	expect_int(db, "SELECT state_code FROM sched_tasks WHERE tid=101", 3);
	expect_int(db, "SELECT runtime_ns FROM sched_tasks WHERE tid=101", 250 * MS);
	/* seen: running 230, sleep 150, runnable 10 ms; x 2.5 */
	expect_text(db, "SELECT (running_ns / 1000000) || ' ' || (sleep_ns / 1000000) || ' ' ||"
		    " (runnable_ns / 1000000) FROM thread_time_shares WHERE tid=101", "575 375 25");
	expect_text(db, "SELECT calls || ' ' || (total_ns / 1000000) || ' ' || scale FROM"
		    " thread_metrics WHERE tid=101", "25 250 2.5");
	expect_text(db, "SELECT futex_waits || ' ' || (futex_wait_ns / 1000000) FROM"
		    " thread_time_shares WHERE tid=101", "25 250");
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

/* The same, with the thread's run time counter written at the gap's start
 * too (format 1.13, SCHED_TASK_CLOSE): 100 ms there, 250 ms at its end,
 * so it ran 150 ms of the 600 ms gap, exactly. Running is 230 seen + 150;
 * the other 450 ms of the gap are split as the windows saw its off-CPU
 * time (sleep 150, runnable 10 of 160 ms); futex waits, a kind of sleep,
 * as sleep; their count as before (x 2.5). */
Test(states, a_sched_gap_with_counters_at_both_edges_gives_its_run_time_exactly)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	gap_scenario(&ev, 1, 0, 0, 0);
	db = import_events(dir, "gap_runs", &ev, NULL);
	expect_int(db, "SELECT count(*) FROM sched_tasks WHERE tid=101 AND edge='close'", 1);
	expect_text(db, "SELECT (running_ns / 1000000) || ' ' || (run_delay_ns / 1000000) FROM"
		    " sched_gap_runs WHERE tid=101", "150 0");
	expect_text(db, "SELECT (running_ns / 1000000) || ' ' || (sleep_ns / 1000000) || ' ' ||"
		    " (runnable_ns / 1000000) || ' ' || other_wait_ns FROM thread_time_shares"
		    " WHERE tid=101", "380 571 38 0");
	expect_text(db, "SELECT futex_waits || ' ' || (futex_wait_ns / 1000000) FROM"
		    " thread_time_shares WHERE tid=101", "25 381");
	/* the states themselves are what was seen */
	expect_text(db, "SELECT group_concat(state || ':' || ((start_ts - 1000000000) / 1000000)"
		    " || '+' || (duration / 1000000), ' ') FROM (SELECT * FROM"
		    " thread_states WHERE tid=101 ORDER BY start_ts)",
		    "running:10+190 sleep:200+100 sleep:900+50 runnable:950+10 running:960+40");
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

/* The gap's run queue time is the thread's run_delay counter's move
 * across it, not the windows' split: 20 ms at the gap's start, 120 ms at
 * its end. Of the 600 ms gap it ran 150, waited for a CPU 100 and was
 * blocked 350, all sleep (the only blocked state the windows saw): running
 * 230 + 150, runnable 10 + 100, sleep 150 + 350; futex waits as sleep. A
 * capture whose counters never moved (a kernel without them) splits the
 * gap's off-CPU time as the windows saw it (the test above). */
Test(states, a_sched_gap_takes_its_run_queue_time_from_the_counter)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	gap_scenario(&ev, 1, 20 * MS, 120 * MS, 40);
	db = import_events(dir, "gap_queue", &ev, NULL);
	expect_text(db, "SELECT (running_ns / 1000000) || ' ' || (run_delay_ns / 1000000) FROM"
		    " sched_gap_runs WHERE tid=101", "150 100");
	expect_text(db, "SELECT (running_ns / 1000000) || ' ' || (runnable_ns / 1000000) || ' ' ||"
		    " (sleep_ns / 1000000) || ' ' || other_wait_ns FROM thread_time_shares"
		    " WHERE tid=101", "380 110 500 0");
	expect_text(db, "SELECT futex_waits || ' ' || (futex_wait_ns / 1000000) FROM"
		    " thread_time_shares WHERE tid=101", "25 333");
	/* the waits' sums (format 1.16): the 10 waits seen and the gap's 40
	 * voluntary switches; the 100 ms seen and the gap's 350 ms blocked
	 * (600 less 150 run and 100 queued) */
	expect_text(db, "SELECT calls || ' ' || (total_ns / 1000000) || ' ' || scale || ' ' ||"
		    " time_scale FROM thread_metrics WHERE tid=101", "50 450 5.0 4.5");
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

/* A thread the windows saw only on a CPU: its off-CPU time in the gap has
 * no kind (other_wait). It runs from 0 to 300 ms, then 200 of the 600 ms
 * gap, and from 900 to the end. */
Test(states, off_cpu_time_in_a_gap_unseen_in_the_windows_has_no_kind)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	ev_init(&ev, T(0), T(1000), "cpu,sched");
	ev_switch(&ev, T(0), 0, 0, 0, 0, PID, TID);
	ev_sched_task_close(&ev, T(300), PID, TID, PC_SCHED_TASK_ON_CPU, 0, 300 * MS);
	ev_sched_gap(&ev, T(300), T(900));
	ev_sched_task(&ev, T(900), PID, TID, PC_SCHED_TASK_ON_CPU, 0, 500 * MS);
	db = import_events(dir, "gap_only_running", &ev, NULL);
	expect_text(db, "SELECT (running_ns / 1000000) || ' ' || (other_wait_ns / 1000000) || ' '"
		    " || (sleep_ns + runnable_ns + io_wait_ns) FROM thread_time_shares WHERE tid=101",
		    "600 400 0");
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}
