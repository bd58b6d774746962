/* test_events.c - every event record type lands in its table with its
 * fields (addresses as text, devices as major:minor, stacks as ids or
 * NULL), syscalls read through syscall_intervals (names, fds, bytes,
 * errno), the recorder's per-source counters in data_quality, and a
 * re-import gives the same database. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture_builder.h"
#include "db_check.h"
#include "event_builder.h"
#include "run_tool.h"

#define T(ms) (SEC + (uint64_t)(ms) * MS)
enum { NR_READ = 0, NR_WRITE = 1, NR_CLOSE = 3, NR_READV = 19 };

static void all_types(struct event_capture *ev)
{
	ev_init(ev, T(0), T(100), "cpu,sched,syscall,block,net,lock,mem");
	ev_sample(ev, T(1), 100, 101);
	ev_switch(ev, T(2), 1, 100, 101, PC_TASK_INTERRUPTIBLE, 100, 102);
	ev_wakeup(ev, T(3), 100, 101, 100, 102, 1, 0);
	ev_fork(ev, T(4), 100, 101, 100, 103, 1);
	ev_offcpu(ev, T(5), MS, 100, 101, PC_TASK_INTERRUPTIBLE, STACK_A, PC_STACK_NONE, 102);
	ev_syscall(ev, T(6), 2 * MS, 100, 101, NR_READ, 100, 3, 0x7f00, 4096);
	ev_syscall(ev, T(9), MS, 100, 101, NR_WRITE, -11, 4, 0x7f00, 512);
	ev_syscall(ev, T(11), MS, 100, 101, NR_READV, 300, 5, 0x7f00, 2);
	ev_syscall(ev, T(13), MS, 100, 101, NR_CLOSE, -9, 0xffffffffull, 0, 0);
	ev_syscall(ev, T(15), MS, 100, 101, 999, 0, 0, 0, 0);
	ev_block(ev, T(20), 1 * MS, 3 * MS, 100, 101, 8u << 20 | 16, 1, 2048, 8192);
	ev_socket_v4(ev, T(21), 100, 101, 7, PC_SOCK_F_ACCEPTED, "10.0.0.1", 80,
		     "192.168.1.9", 40000, 0xabc);
	ev_tcp_state_v6(ev, T(22), 0xabc, "::1", 443, "fe80::1", 50000, 2, 1);
	ev_tcp_retrans_v4(ev, T(23), 0xabc, "10.0.0.1", 80, "192.168.1.9", 40000, 1);
	ev_lock(ev, T(24), MS, 100, 101, 0xffffffff82000000ull, STACK_KERNEL);
	ev_mutex(ev, T(25), 2 * MS, 100, 101, 0x7ffd0000, PC_STACK_NONE);
	ev_fault(ev, T(26), 100, 101, 0x1000, 0x555555555000ull, 16);
	pc_buf_add_kv_u64(&ev->stats, "syscall.events", 12);
	pc_buf_add_kv_u64(&ev->stats, "syscall.lost.kernel", 5);
	pc_buf_add_kv_u64(&ev->stats, "syscall.rate_capped", 2);
	pc_buf_add_kv_u64(&ev->stats, "sched.lost.user", 1);
}

Test(events, each_record_type_has_its_table)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	all_types(&ev);
	db = import_events(dir, "all", &ev, NULL);
	expect_int(db, "SELECT count(*) FROM samples", 1);
	expect_text(db, "SELECT prev_tid || '>' || next_tid || ' ' || prev_state || ' ' || cpu"
		    " FROM switches", "101>102 1 1");
	expect_text(db, "SELECT tid || ' by ' || waker_tid || ' new=' || new FROM wakeups",
		    "101 by 102 new=0");
	expect_text(db, "SELECT child_tid || ' ' || is_thread FROM forks", "103 1");
	expect_text(db, "SELECT ustack_id || ' ' || ifnull(kstack_id, 'null') || ' ' || duration"
		    " FROM offcpu", "0 null 1000000");
	expect_int(db, "SELECT count(*) FROM syscalls", 5);
	expect_text(db, "SELECT dev_name || ' ' || op_name || ' ' || bytes || ' ' || queue_ns"
		    " || ' ' || service_ns || ' ' || sector FROM block_io",
		    "8:16 write 8192 1000000 3000000 2048");
	expect_text(db, "SELECT origin || ' ' || fd || ' ' || saddr || ':' || sport || ' '"
		    " || daddr || ':' || dport || ' ' || cookie FROM sockets",
		    "accepted 7 10.0.0.1:80 192.168.1.9:40000 2748");
	expect_text(db, "SELECT saddr || ' ' || daddr || ' ' || o.name || '>' || n.name"
		    " FROM tcp_states JOIN tcp_state_names o ON o.state = oldstate"
		    " JOIN tcp_state_names n ON n.state = newstate",
		    "::1 fe80::1 SYN_SENT>ESTABLISHED");
	expect_text(db, "SELECT daddr || ' ' || state FROM tcp_retransmits", "192.168.1.9 1");
	expect_text(db, "SELECT printf('%x', lock_addr) || ' ' || kstack_id FROM kernel_locks",
		    "ffffffff82000000 2");
	expect_text(db, "SELECT duration || ' ' || ifnull(ustack_id, 'null') FROM user_mutexes",
		    "2000000 null");
	expect_text(db, "SELECT weight || ' ' || printf('%x', ip) FROM page_faults",
		    "16 555555555000");
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

Test(events, syscall_intervals_interpret_arguments)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	all_types(&ev);
	db = import_events(dir, "sys", &ev, NULL);
	expect_int(db, "SELECT count(*) FROM syscall_names", 362);
	expect_text(db, "SELECT name || ' fd=' || fd || ' ' || io || ' ' || bytes_requested"
		    " || ' ' || bytes_transferred || ' ' || duration || ' ' || end_ts"
		    " FROM syscall_intervals WHERE nr=0", "read fd=3 read 4096 100 2000000 1008000000");
	expect_text(db, "SELECT name || ' errno=' || errno || ' ' || bytes_requested || ' '"
		    " || ifnull(bytes_transferred, 'null') FROM syscall_intervals WHERE nr=1",
		    "write errno=11 512 null");
	expect_text(db, "SELECT ifnull(bytes_requested, 'null') || ' ' || bytes_transferred"
		    " FROM syscall_intervals WHERE nr=19", "null 300");
	expect_int(db, "SELECT fd FROM syscall_intervals WHERE nr=3", -1);
	expect_text(db, "SELECT name || ' ' || ifnull(fd, 'null') FROM syscall_intervals"
		    " WHERE nr=999", "syscall_999 null");
	expect_int(db, "SELECT value FROM quality WHERE source='syscall' AND key='unknown_nr'", 1);
	expect_text(db, "SELECT family FROM syscall_names WHERE name='epoll_pwait2'", "poll");
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

Test(events, data_quality_per_source)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	all_types(&ev);
	db = import_events(dir, "dq", &ev, NULL);
	expect_text(db, "SELECT group_concat(source, ',') FROM data_quality",
		    "block,cpu,lock,mem,net,sched,syscall");
	expect_text(db, "SELECT recorded || ' ' || imported || ' ' || lost_kernel || ' '"
		    " || lost_user || ' ' || rate_capped || ' ' || lost_share"
		    " FROM data_quality WHERE source='syscall'", "12 5 5 0 2 0.5");
	expect_text(db, "SELECT imported || ' ' || lost_user FROM data_quality"
		    " WHERE source='sched'", "4 1");
	expect_int(db, "SELECT imported FROM data_quality WHERE source='net'", 3);
	expect_int(db, "SELECT value FROM quality WHERE source='mem' AND key='faults.weighted'",
		   16);
	expect_int(db, "SELECT value FROM quality WHERE source='format'"
		   " AND key='records.tcp_retrans'", 1);
	expect_int(db, "SELECT value FROM quality WHERE source='format'"
		   " AND key='records.unknown'", 0);
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *data;
	long size;

	cr_assert(f, "%s", path);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	data = malloc((size_t)size);
	cr_assert(data && fread(data, 1, (size_t)size, f) == (size_t)size);
	fclose(f);
	*len = (size_t)size;
	return data;
}

Test(events, reimport_is_identical)
{
	char *dir = scratch_dir();
	char *cap = scratch_path(dir, "again.perfcap"), *db = scratch_path(dir, "again.db");
	struct event_capture ev;
	struct tool_result r;
	size_t len1, len2;
	char *first, *second;

	all_types(&ev);
	cr_assert_eq(build_event_capture(cap, &ev), 0);
	run_analyze(&r, "import", "--no-local-files", cap, "-o", db, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect_str_empty(r.err, "no progress line when stderr is not a terminal");
	tool_result_free(&r);
	first = read_file(db, &len1);
	run_analyze(&r, "import", "--no-local-files", "-f", cap, "-o", db, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tool_result_free(&r);
	second = read_file(db, &len2);
	cr_expect(len1 == len2 && memcmp(first, second, len1) == 0,
		  "two imports of one capture are byte-identical");
	free(first);
	free(second);
	free(cap);
	free(db);
	ev_free(&ev);
	scratch_remove(dir);
}

/* GC begin/end probe hits paired into gc_pauses per thread, in time order
 * whatever order the records came in; what does not pair is counted in
 * quality (probe/gc.*) and in data_quality's unmatched. Thread 101: two
 * pauses, the second begin repeated (its first end lost); thread 102: an
 * end before any begin, a pause, then a begin still open at the end;
 * thread 301 of a JVM: one pause; hits of another USDT probe are ignored,
 * and one gc__start hit the kernel counted has no record. */
Test(events, gc_pauses_paired_per_thread)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	ev_init(&ev, T(0), T(100), "cpu,sched,probe");
	ev_usdt_probe(&ev, 0, "/usr/bin/python3.11", "python:gc__start", 6);
	ev_usdt_probe(&ev, 1, "/usr/bin/python3.11", "python:gc__done", 4);
	ev_usdt_probe(&ev, 2, "/usr/bin/python3.11", "python:function__entry", 1);
	ev_usdt_probe(&ev, 3, "/usr/lib/jvm/libjvm.so", "hotspot:gc__begin", 1);
	ev_usdt_probe(&ev, 4, "/usr/lib/jvm/libjvm.so", "hotspot:gc__end", 1);
	ev_probe_hit(&ev, T(15), 100, 101, 1, 0);   /* recorded before its begin */
	ev_probe_hit(&ev, T(10), 100, 101, 0, 0);
	ev_probe_hit(&ev, T(20), 100, 101, 0, 2);
	ev_probe_hit(&ev, T(22), 100, 101, 0, 2);
	ev_probe_hit(&ev, T(25), 100, 101, 2, 0);
	ev_probe_hit(&ev, T(30), 100, 101, 1, 0);
	ev_probe_hit(&ev, T(5), 100, 102, 1, 0);
	ev_probe_hit(&ev, T(40), 100, 102, 0, 1);
	ev_probe_hit(&ev, T(41), 100, 102, 1, 0);
	ev_probe_hit(&ev, T(90), 100, 102, 0, 0);
	ev_probe_hit(&ev, T(50), 300, 301, 3, 1);
	ev_probe_hit(&ev, T(60), 300, 301, 4, 0);
	db = import_events(dir, "gc", &ev, NULL);
	/* in ms from the capture start (|| binds tighter than / in SQL) */
	expect_text(db, "SELECT group_concat(tid || ':' || ((start_ts - 1000000000) / 1000000) ||"
		    " '-' || ((end_ts - 1000000000) / 1000000) || ':' || (duration / 1000000) ||"
		    " ':' || runtime || ':' || source, ' ') FROM (SELECT * FROM gc_pauses"
		    " ORDER BY pid, tid, start_ts)",
		    "101:10-15:5:python:usdt 101:22-30:8:python:usdt 102:40-41:1:python:usdt"
		    " 301:50-60:10:jvm:usdt");
	expect_int(db, "SELECT value FROM quality WHERE source = 'probe' AND key = 'gc.pauses'", 4);
	expect_int(db, "SELECT value FROM quality WHERE source = 'probe'"
		   " AND key = 'gc.begin_unmatched'", 2);
	expect_int(db, "SELECT value FROM quality WHERE source = 'probe'"
		   " AND key = 'gc.end_unmatched'", 1);
	expect_int(db, "SELECT value FROM quality WHERE source = 'probe'"
		   " AND key = 'gc.unrecorded'", 1);
	expect_int(db, "SELECT unmatched FROM data_quality WHERE source = 'probe'", 3);
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

/* Go's entry probes (-e gc) paired per process into GC pauses. Process
 * 500: sweep termination stopped by thread 501 and restarted by 502, its
 * bounds the runtime's own times (startGCTransition's 9 ms, then
 * finishGCTransition's 15 ms, which comes after the restart); mark
 * termination (finish before the restart, which it swallows); a stop with
 * no collection marker (ReadMemStats) is no pause. Process 600, a Go
 * before 1.19: a marked stop, from the stop's entry to the restart's. The
 * finish probe was placed late: described in STATS only. */
Test(events, gc_pauses_go_per_process)
{
	static const char *const names[] = {
		"runtime.stopTheWorldWithSema", "runtime.startTheWorldWithSema",
		"runtime.finishsweep_m", "runtime.gcMarkTermination",
		"runtime.(*gcCPULimiterState).startGCTransition",
		"runtime.(*gcCPULimiterState).finishGCTransition",
	};
	static const unsigned hits[] = { 4, 4, 2, 1, 2, 2 };
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	ev_init(&ev, T(0), T(100), "cpu,sched,probe");
	for (unsigned i = 0; i < 6; i++)
		ev_entry_probe(&ev, i, "/srv/app", names[i], hits[i], i == 5);
	ev_probe_hit(&ev, T(10), 500, 501, 0, 0);      /* sweep termination */
	ev_probe_hit(&ev, T(11), 500, 501, 2, 0);
	ev_probe_hit(&ev, T(12), 500, 501, 4, T(9));
	ev_probe_hit(&ev, T(14), 500, 502, 1, 0);
	ev_probe_hit(&ev, T(16), 500, 502, 5, T(15));
	ev_probe_hit(&ev, T(20), 500, 502, 0, 0);      /* mark termination */
	ev_probe_hit(&ev, T(21), 500, 502, 3, 0);
	ev_probe_hit(&ev, T(22), 500, 502, 4, T(19));
	ev_probe_hit(&ev, T(23), 500, 502, 5, T(23));
	ev_probe_hit(&ev, T(24), 500, 502, 1, 0);
	ev_probe_hit(&ev, T(30), 500, 501, 0, 0);      /* no collection */
	ev_probe_hit(&ev, T(31), 500, 501, 1, 0);
	ev_probe_hit(&ev, T(40), 600, 601, 0, 0);      /* before Go 1.19 */
	ev_probe_hit(&ev, T(41), 600, 601, 2, 0);
	ev_probe_hit(&ev, T(42), 600, 602, 1, 0);
	db = import_events(dir, "gcgo", &ev, NULL);
	expect_text(db, "SELECT group_concat(tid || ':' || ((start_ts - 1000000000) / 1000000) ||"
		    " '-' || ((end_ts - 1000000000) / 1000000) || ':' || (duration / 1000000) ||"
		    " ':' || runtime || ':' || source, ' ') FROM (SELECT * FROM gc_pauses"
		    " ORDER BY pid, start_ts)",
		    "501:9-15:6:go:uprobe 502:19-23:4:go:uprobe 601:40-42:2:go:uprobe");
	expect_int(db, "SELECT value FROM quality WHERE source = 'probe' AND key = 'gc.pauses'", 3);
	expect_int(db, "SELECT value FROM quality WHERE source = 'probe'"
		   " AND key = 'gc.other_stops'", 1);
	expect_int(db, "SELECT sum(value) FROM quality WHERE source = 'probe' AND key IN"
		   " ('gc.begin_unmatched', 'gc.end_unmatched', 'gc.unrecorded')", 0);
	expect_text(db, "SELECT kind || ' ' || name FROM probes WHERE probe_id = 5",
		    "entry runtime.(*gcCPULimiterState).finishGCTransition");
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

/* A CPython without USDT (-e gc's fallback): each timed call of
 * gc_collect_main is a pause of its thread, from its entry for its
 * duration; calls of another uprobed function are not. */
Test(events, gc_pauses_python_timed_calls)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	ev_init(&ev, T(0), T(100), "cpu,sched,probe");
	pc_buf_add_kv(&ev.meta, "probe.0.spec", "uprobe:/lib/libpython3.11.so:gc_collect_main");
	pc_buf_add_kv(&ev.meta, "probe.0.kind", "uprobe");
	pc_buf_add_kv(&ev.meta, "probe.0.name", "gc_collect_main");
	pc_buf_add_kv(&ev.meta, "probe.1.spec", "uprobe:/lib/libpython3.11.so:PyGC_Collect");
	pc_buf_add_kv(&ev.meta, "probe.1.kind", "uprobe");
	pc_buf_add_kv(&ev.meta, "probe.1.name", "PyGC_Collect");
	pc_buf_add_kv_u64(&ev.stats, "probe.0.hits", 2);
	pc_buf_add_kv_u64(&ev.stats, "probe.1.hits", 1);
	ev_probe_call(&ev, T(10), 3 * MS, 700, 701, 0);
	ev_probe_call(&ev, T(9), 5 * MS, 700, 701, 1);
	ev_probe_call(&ev, T(30), 7 * MS, 700, 702, 0);
	db = import_events(dir, "gcpy", &ev, NULL);
	expect_text(db, "SELECT group_concat(tid || ':' || ((start_ts - 1000000000) / 1000000) ||"
		    " '-' || ((end_ts - 1000000000) / 1000000) || ':' || runtime || ':' || source,"
		    " ' ') FROM (SELECT * FROM gc_pauses ORDER BY start_ts)",
		    "701:10-13:python:uprobe 702:30-37:python:uprobe");
	expect_int(db, "SELECT sum(value) FROM quality WHERE source = 'probe' AND key IN"
		   " ('gc.begin_unmatched', 'gc.end_unmatched', 'gc.unrecorded')", 0);
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

/* Without GC probes: an empty gc_pauses and no gc.* quality rows. */
Test(events, no_gc_probes_no_gc_rows)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	all_types(&ev);
	db = import_events(dir, "nogc", &ev, NULL);
	expect_int(db, "SELECT count(*) FROM gc_pauses", 0);
	expect_int(db, "SELECT count(*) FROM quality WHERE key LIKE 'gc.%'", 0);
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}
