/* schema_views.c - the views of the perfcap schema: correlations that are
 * cheap to compute at query time from the tables the loader fills
 * (syscall_intervals, thread_states, runq_latency, offcpu_intervals) and
 * futex waits per address (futex_calls, futex_waits, futex_contention),
 * block I/O per device and thread (block_io_by_device, block_io_by_thread),
 * request spans on socket fds (request_spans) and their queueing
 * (request_queueing), projections of the requests table, what the threads
 * serving the slowest requests did (slow_request_samples)
 * and the per-source data-quality summary (data_quality). docs/schema.md documents each. */
#include <stddef.h>

#include "db.h"
#include "schema.h"


static const char syscall_intervals_sql[] =
	"CREATE VIEW syscall_intervals AS"
	" SELECT s.syscall_id, s.ts AS start_ts, s.ts + s.duration AS end_ts,"
	"  s.duration, s.pid, s.tid, s.nr,"
	"  COALESCE(n.name, 'syscall_' || s.nr) AS name, n.family,"
	"  CASE WHEN n.fd_arg THEN (((s.arg0 & 4294967295) | -4294967296 *"
	"    ((s.arg0 >> 31) & 1))) END AS fd,"
	"  n.io,"
	"  CASE WHEN n.count_arg THEN s.arg2 END AS bytes_requested,"
	"  CASE WHEN n.io IS NOT NULL AND s.ret >= 0 THEN s.ret END AS bytes_transferred,"
	"  s.ret,"
	"  CASE WHEN s.ret BETWEEN -4095 AND -1 THEN -s.ret END AS errno,"
	"  s.arg0, s.arg1, s.arg2, s.ustack_id"
	" FROM syscalls s LEFT JOIN syscall_names n USING (nr);";

/* The codes are those of enum state_kind, enum runnable_reason and enum
 * wait_class (correlate_state.h, wait_class.h). */
static const char thread_states_sql[] =
	"CREATE VIEW thread_states AS"
	" SELECT tid, pid,"
	"  CASE state_code WHEN 0 THEN 'running' WHEN 1 THEN 'runnable' WHEN 2 THEN 'io'"
	"   WHEN 3 THEN 'sleep' ELSE 'blocked' END AS state,"
	"  start_ts, start_ts + duration AS end_ts, duration, cpu,"
	"  CASE reason_code WHEN 1 THEN 'wakeup' WHEN 2 THEN 'preempted'"
	"   WHEN 3 THEN 'new' END AS reason,"
	"  waker_tid, waker_pid,"
	"  CASE wait_class_code WHEN 0 THEN 'preempted' WHEN 1 THEN 'block_io'"
	"   WHEN 2 THEN 'futex' WHEN 3 THEN 'poll' WHEN 4 THEN 'sleep' WHEN 5 THEN 'net'"
	"   WHEN 6 THEN 'other' END AS wait_class,"
	"  syscall_nr, syscall_id, partial"
	" FROM thread_state_rows;";

static const char runq_latency_sql[] =
	"CREATE VIEW runq_latency AS"
	" SELECT tid, pid, start_ts AS ready_ts, end_ts AS switch_in_ts,"
	"  duration AS latency, cpu, reason, waker_tid, waker_pid"
	" FROM thread_states WHERE state = 'runnable' AND partial = 0;";

static const char offcpu_intervals_sql[] =
	"CREATE VIEW offcpu_intervals AS"
	" SELECT o.offcpu_id, o.ts - o.duration AS start_ts, o.ts AS end_ts,"
	"  o.duration, o.pid, o.tid, o.state, o.wait_class, o.class_source,"
	"  o.syscall_id, o.syscall_nr, n.name AS syscall, o.waker_tid,"
	"  o.ustack_id, o.kstack_id,"
	"  (SELECT f.name FROM stack_frames sf JOIN frames f USING (frame_id)"
	"   WHERE sf.stack_id = o.kstack_id AND sf.position = 0) AS kernel_function,"
	"  (SELECT f.name FROM stack_frames sf JOIN frames f USING (frame_id)"
	"   WHERE sf.stack_id = o.ustack_id AND sf.position = 0) AS user_function"
	" FROM offcpu o LEFT JOIN syscall_names n ON n.nr = o.syscall_nr;";

/* Recorder STATS "<source>.<what>" and loader quality rows side by side:
 * one row per event source. */
static const char data_quality_sql[] =
	"CREATE VIEW data_quality AS"
	" WITH kv AS ("
	"   SELECT substr(key, 1, instr(key, '.') - 1) AS source,"
	"          substr(key, instr(key, '.') + 1) AS k, value"
	"   FROM stats WHERE chunk = 'stats' AND instr(key, '.') > 1"
	"   UNION ALL SELECT source, 'imported.' || key, value FROM quality),"
	" src AS (SELECT DISTINCT source FROM kv WHERE k IN ('events', 'lost.kernel',"
	"   'lost.user', 'sampled_out', 'rate_capped', 'stack_errors', 'imported.records')),"
	" q AS (SELECT src.source,"
	"   (SELECT value FROM kv WHERE kv.source = src.source AND k = 'events') AS recorded,"
	"   COALESCE((SELECT value FROM kv WHERE kv.source = src.source"
	"     AND k = 'imported.records'), 0) AS imported,"
	"   COALESCE((SELECT value FROM kv WHERE kv.source = src.source"
	"     AND k = 'lost.kernel'), 0) AS lost_kernel,"
	"   COALESCE((SELECT value FROM kv WHERE kv.source = src.source"
	"     AND k = 'lost.user'), 0) AS lost_user,"
	"   COALESCE((SELECT value FROM kv WHERE kv.source = src.source"
	"     AND k = 'sampled_out'), 0) AS sampled_out,"
	"   COALESCE((SELECT value FROM kv WHERE kv.source = src.source"
	"     AND k = 'rate_capped'), 0) AS rate_capped,"
	"   COALESCE((SELECT value FROM kv WHERE kv.source = src.source"
	"     AND k = 'stack_errors'), 0) AS stack_errors,"
	"   COALESCE((SELECT sum(value) FROM kv WHERE kv.source = src.source"
	"     AND k LIKE 'imported.%unmatched%'), 0) AS unmatched,"
	"   COALESCE((SELECT sum(value) FROM kv WHERE kv.source = src.source"
	"     AND k LIKE 'imported.%expired%'), 0) AS expired,"
	"   COALESCE((SELECT value FROM kv WHERE kv.source = src.source"
	"     AND k = 'imported.late'), 0) AS late"
	"   FROM src)"
	" SELECT *, CASE WHEN imported + lost_kernel + lost_user > 0"
	"   THEN round(1.0 * (lost_kernel + lost_user) /"
	"     (imported + lost_kernel + lost_user), 6) END AS lost_share"
	" FROM q ORDER BY source;";

/* Nearest-rank percentile P (integer percent) of column V over rows
 * numbered RK (row_number, ascending V) of N rows: the value at rank
 * ceil(P * N / 100). */
#define PCTL(p, rk, n, v) \
	"max(CASE WHEN " rk " = (" n " * " #p " + 99) / 100 THEN " v " END)"

/* futex(2) calls (x86_64 nr 202): the address and the command
 * (FUTEX_PRIVATE_FLAG 128 and FUTEX_CLOCK_REALTIME 256 masked off). */
static const char futex_calls_sql[] =
	"CREATE VIEW futex_calls AS"
	" SELECT syscall_id, ts AS start_ts, ts + duration AS end_ts, duration, pid, tid,"
	"  arg0 AS addr, arg1 & 127 AS op,"
	"  CASE arg1 & 127 WHEN 0 THEN 'FUTEX_WAIT' WHEN 1 THEN 'FUTEX_WAKE'"
	"   WHEN 9 THEN 'FUTEX_WAIT_BITSET' WHEN 10 THEN 'FUTEX_WAKE_BITSET'"
	"   ELSE 'op_' || (arg1 & 127) END AS op_name,"
	"  CASE WHEN arg1 & 127 IN (0, 9) THEN 'wait' WHEN arg1 & 127 IN (1, 10) THEN 'wake'"
	"   ELSE 'other' END AS kind,"
	"  (arg1 & 128) <> 0 AS private, ret, ustack_id"
	" FROM syscalls WHERE nr = 202;";

static const char futex_waits_sql[] =
	"CREATE VIEW futex_waits AS"
	" WITH r AS (SELECT *, row_number() OVER (PARTITION BY pid, addr, op ORDER BY duration)"
	"   AS rk, count(*) OVER (PARTITION BY pid, addr, op) AS n FROM futex_calls),"
	" t AS (SELECT pid, addr, op, group_concat(tid) AS tids FROM (SELECT DISTINCT pid, addr,"
	"   op, tid FROM futex_calls ORDER BY pid, addr, op, tid) GROUP BY pid, addr, op),"
	" s AS (SELECT pid, addr, op, group_concat(ustack_id) AS ids FROM (SELECT DISTINCT pid,"
	"   addr, op, ustack_id FROM futex_calls WHERE ustack_id IS NOT NULL"
	"   ORDER BY pid, addr, op, ustack_id) GROUP BY pid, addr, op)"
	" SELECT r.pid, r.addr, r.op, min(r.op_name) AS op_name, min(r.kind) AS kind,"
	"  count(*) AS calls, t.tids,"
	"  sum(r.kind = 'wait') AS waits,"
	"  CASE WHEN min(r.kind) = 'wait' THEN sum(r.duration) END AS wait_ns,"
	"  CASE WHEN min(r.kind) = 'wait' THEN " PCTL(50, "rk", "n", "r.duration") " END AS wait_p50,"
	"  CASE WHEN min(r.kind) = 'wait' THEN " PCTL(99, "rk", "n", "r.duration") " END AS wait_p99,"
	"  CASE WHEN min(r.kind) = 'wait' THEN max(r.duration) END AS wait_max,"
	"  sum(r.kind = 'wake') AS wake_calls,"
	"  CASE WHEN min(r.kind) = 'wake' THEN sum(max(r.ret, 0)) END AS woken,"
	"  sum(r.ret BETWEEN -4095 AND -1) AS errors,"
	"  s.ids AS ustack_ids"
	" FROM r JOIN t USING (pid, addr, op) LEFT JOIN s USING (pid, addr, op)"
	" GROUP BY r.pid, r.addr, r.op ORDER BY r.pid, r.addr, r.op;";

static const char futex_contention_sql[] =
	"CREATE VIEW futex_contention AS"
	" WITH a AS (SELECT DISTINCT pid, addr FROM futex_calls WHERE kind <> 'other'),"
	" w AS (SELECT *, row_number() OVER (PARTITION BY pid, addr ORDER BY duration) AS rk,"
	"   count(*) OVER (PARTITION BY pid, addr) AS n FROM futex_calls WHERE kind = 'wait'),"
	" ws AS (SELECT pid, addr, count(DISTINCT tid) AS waiters, count(*) AS waits,"
	"   sum(duration) AS wait_ns, " PCTL(50, "rk", "n", "duration") " AS wait_p50,"
	"   " PCTL(99, "rk", "n", "duration") " AS wait_p99, max(duration) AS wait_max"
	"   FROM w GROUP BY pid, addr),"
	" wk AS (SELECT pid, addr, count(*) AS wake_calls, sum(max(ret, 0)) AS woken"
	"   FROM futex_calls WHERE kind = 'wake' GROUP BY pid, addr),"
	" wt AS (SELECT pid, addr, group_concat(tid) AS tids FROM (SELECT DISTINCT pid, addr, tid"
	"   FROM futex_calls WHERE kind = 'wait' ORDER BY pid, addr, tid) GROUP BY pid, addr),"
	" kt AS (SELECT pid, addr, group_concat(tid) AS tids FROM (SELECT DISTINCT pid, addr, tid"
	"   FROM futex_calls WHERE kind = 'wake' ORDER BY pid, addr, tid) GROUP BY pid, addr),"
	" st AS (SELECT pid, addr, group_concat(ustack_id) AS ids FROM (SELECT DISTINCT pid, addr,"
	"   ustack_id FROM futex_calls WHERE kind = 'wait' AND ustack_id IS NOT NULL"
	"   ORDER BY pid, addr, ustack_id) GROUP BY pid, addr)"
	" SELECT a.pid, a.addr, COALESCE(ws.waiters, 0) AS waiters, wt.tids AS waiter_tids,"
	"  COALESCE(ws.waits, 0) AS waits, COALESCE(ws.wait_ns, 0) AS wait_ns,"
	"  ws.wait_p50, ws.wait_p99, ws.wait_max,"
	"  COALESCE(wk.wake_calls, 0) AS wake_calls, COALESCE(wk.woken, 0) AS woken,"
	"  kt.tids AS waker_tids, st.ids AS wait_ustack_ids"
	" FROM a LEFT JOIN ws USING (pid, addr) LEFT JOIN wk USING (pid, addr)"
	"  LEFT JOIN wt USING (pid, addr) LEFT JOIN kt USING (pid, addr)"
	"  LEFT JOIN st USING (pid, addr)"
	" ORDER BY wait_ns DESC, a.pid, a.addr;";

/* Block I/O per device and per submitting thread and device. KEYS is the
 * grouping; queue and service time are ranked separately. */
#define BLOCK_IO_VIEW(name, keys) \
	"CREATE VIEW " name " AS" \
	" WITH r AS (SELECT *," \
	"   row_number() OVER (PARTITION BY " keys " ORDER BY queue_ns) AS rq," \
	"   row_number() OVER (PARTITION BY " keys " ORDER BY service_ns) AS rs," \
	"   count(*) OVER (PARTITION BY " keys ") AS n FROM block_io)" \
	" SELECT " keys ", min(dev_name) AS dev_name, count(*) AS requests," \
	"  sum(op & 255 = 0) AS reads, sum(op & 255 = 1) AS writes, sum(bytes) AS bytes," \
	"  sum(queue_ns) AS queue_ns, " PCTL(50, "rq", "n", "queue_ns") " AS queue_p50," \
	"  " PCTL(99, "rq", "n", "queue_ns") " AS queue_p99," \
	"  sum(service_ns) AS service_ns, " PCTL(50, "rs", "n", "service_ns") " AS service_p50," \
	"  " PCTL(99, "rs", "n", "service_ns") " AS service_p99," \
	"  sum(error <> 0) AS errors" \
	" FROM r GROUP BY " keys " ORDER BY " keys ";"

static const char block_io_by_device_sql[] =
	BLOCK_IO_VIEW("block_io_by_device", "dev");
static const char block_io_by_thread_sql[] =
	BLOCK_IO_VIEW("block_io_by_thread", "pid, tid, dev");

/* Request spans and their queueing: projections of the requests table,
 * which correlate/requests.c fills at import (the rules are there and in
 * docs/schema.md, request_spans and request_queueing); requests_by_start
 * serves the order. pool_utilisation is a table of its own. */
static const char request_spans_sql[] =
	"CREATE VIEW request_spans AS"
	" SELECT pid, fd, cookie, conn_ts, request, tids, start_ts, first_write_ts, end_ts,"
	"  service_ns, bytes_in, bytes_out, reads, writes"
	" FROM requests ORDER BY start_ts, pid, fd;";

static const char request_queueing_sql[] =
	"CREATE VIEW request_queueing AS"
	" SELECT pid, fd, cookie, origin, conn_ts, request, ready_ts, ready_source,"
	"  start_ts AS pickup_ts, pickup_tid, tids, queue_ns, service_ns, end_ts, sojourn_ns"
	" FROM requests ORDER BY start_ts, pid, fd;";

/* CPU samples and off-CPU intervals of the threads serving the slowest
 * requests: those whose service_ns is at or above the nearest-rank p90 of
 * their process (CTE sl), each with the threads that made its calls (CTE
 * th: the request's tids, numbered rn per thread in start order). Samples
 * are matched by a sweep per thread (sw: the running max of rn gives each
 * sample the latest slow request its thread started before it), then one
 * equality join on (pid, tid, rn): no scan of the samples per request.
 * Off-CPU intervals (far fewer) are joined by overlap. docs/schema.md,
 * slow_request_samples. */
static const char slow_request_samples_sql[] =
	"CREATE VIEW slow_request_samples AS WITH"
	" rk AS (SELECT *, row_number() OVER (PARTITION BY pid ORDER BY service_ns) AS rk,"
	"   count(*) OVER (PARTITION BY pid) AS cnt FROM requests),"
	" p AS (SELECT pid, " PCTL(90, "rk", "cnt", "service_ns") " AS p90 FROM rk GROUP BY pid),"
	" sl AS (SELECT r.*, p.p90 FROM requests r JOIN p USING (pid)"
	"   WHERE r.service_ns >= p.p90),"
	" th0 AS (SELECT DISTINCT sl.pid, sl.fd, sl.conn, sl.request, t.value AS tid, sl.cookie,"
	"   sl.conn_ts, sl.start_ts, sl.end_ts, sl.service_ns, sl.p90"
	"   FROM sl, json_each('[' || sl.tids || ']') t),"
	" th AS (SELECT *, row_number() OVER (PARTITION BY pid, tid"
	"   ORDER BY start_ts, fd, conn, request) AS rn FROM th0),"
	" sw AS (SELECT *, max(rn) OVER (PARTITION BY pid, tid ORDER BY ts, kind"
	"   ROWS UNBOUNDED PRECEDING) AS cur FROM (SELECT pid, tid, start_ts AS ts, 0 AS kind,"
	"   rn, NULL AS cpu, NULL AS ustack_id, NULL AS kstack_id FROM th"
	"   UNION ALL SELECT pid, tid, ts, 1, NULL, cpu, ustack_id, kstack_id FROM samples"
	"   WHERE tid IN (SELECT tid FROM th)))"
	" SELECT th.pid, th.fd, th.cookie, th.conn_ts, th.request, th.service_ns,"
	"  th.p90 AS service_p90, th.start_ts, th.end_ts, th.tid, 'cpu' AS kind, sw.ts,"
	"  NULL AS duration, NULL AS wait_class, sw.cpu, sw.ustack_id, sw.kstack_id,"
	"  (SELECT f.name FROM stack_frames sf JOIN frames f USING (frame_id)"
	"   WHERE sf.stack_id = sw.kstack_id AND sf.position = 0) AS kernel_function,"
	"  (SELECT f.name FROM stack_frames sf JOIN frames f USING (frame_id)"
	"   WHERE sf.stack_id = sw.ustack_id AND sf.position = 0) AS user_function"
	" FROM sw JOIN th ON th.pid = sw.pid AND th.tid = sw.tid AND th.rn = sw.cur"
	" WHERE sw.kind = 1 AND sw.ts <= th.end_ts"
	" UNION ALL"
	" SELECT th.pid, th.fd, th.cookie, th.conn_ts, th.request, th.service_ns, th.p90,"
	"  th.start_ts, th.end_ts, th.tid, 'offcpu', max(o.start_ts, th.start_ts),"
	"  min(o.end_ts, th.end_ts) - max(o.start_ts, th.start_ts), o.wait_class, NULL,"
	"  o.ustack_id, o.kstack_id, o.kernel_function, o.user_function"
	" FROM th JOIN offcpu_intervals o ON o.tid = th.tid AND o.pid = th.pid"
	"  AND o.end_ts > th.start_ts AND o.start_ts < th.end_ts"
	" ORDER BY 1, 4, 5, 10, 12;";

int schema_create_views(sqlite3 *db)
{
	const char *all[] = { syscall_intervals_sql, thread_states_sql, runq_latency_sql,
			      offcpu_intervals_sql, data_quality_sql, futex_calls_sql,
			      futex_waits_sql, futex_contention_sql, block_io_by_device_sql,
			      block_io_by_thread_sql, request_spans_sql,
			      request_queueing_sql, slow_request_samples_sql };

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (db_exec(db, all[i]) < 0)
			return -1;
	return 0;
}
