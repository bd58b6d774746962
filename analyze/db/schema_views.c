/* schema_views.c - the views of the perfcap schema: correlations that are
 * cheap to compute at query time from the tables the loader fills
 * (syscall_intervals, thread_states, runq_latency, offcpu_intervals) and
 * futex waits per address (futex_calls, futex_waits, futex_contention),
 * block I/O per device and thread (block_io_by_device, block_io_by_thread),
 * request spans on socket fds (request_spans), their queueing
 * (request_queueing), thread-pool use per window (pool_utilisation), what
 * the threads serving the slowest requests did (slow_request_samples)
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

/* The request calls of socket fds, shared by the request views: CTEs m, g,
 * k, b, n. A stream per (pid, fd) in time order holds the sockets rows
 * (ord 0: a connection opens), successful closes (ord 1) and reads
 * (ret > 0) / writes (ret >= 0) (ord 2); running window sums give each call
 * its connection (conn: the count of opens so far, conn_ts the last open)
 * and the last close, so a call belongs to a live connection when
 * closed_ts < conn_ts. One sort, no join of every call with every
 * connection of its fd. n numbers the requests: a read that is the first
 * call of its connection or follows a write starts one (starts = 1: the
 * request's first read, made by the thread that picked it up). Only
 * calls on a (pid, fd) that ever held a socket are sorted: no other call
 * can belong to a connection, and a capture without sockets costs nothing.
 * docs/schema.md, request_spans. */
#define REQUEST_CALLS_CTES \
	" m AS (SELECT pid, fd, ts, 0 AS ord, 0 AS syscall_id, NULL AS tid, NULL AS end_ts," \
	"   NULL AS io, NULL AS bytes, cookie, origin FROM sockets" \
	"  UNION ALL SELECT pid, fd, start_ts, 1, syscall_id, tid, end_ts, NULL, NULL, NULL," \
	"   NULL FROM syscall_intervals WHERE EXISTS (SELECT 1 FROM sockets) AND nr = 3" \
	"   AND ret = 0 AND (pid, fd) IN (SELECT pid, fd FROM sockets)" \
	"  UNION ALL SELECT pid, fd, start_ts, 2, syscall_id, tid, end_ts, io," \
	"   bytes_transferred, NULL, NULL FROM syscall_intervals" \
	"   WHERE EXISTS (SELECT 1 FROM sockets)" \
	"   AND ((io = 'read' AND ret > 0) OR (io = 'write' AND ret >= 0))" \
	"   AND (pid, fd) IN (SELECT pid, fd FROM sockets))," \
	" g AS (SELECT *, sum(ord = 0) OVER w AS conn," \
	"   max(CASE WHEN ord = 0 THEN ts END) OVER w AS conn_ts," \
	"   max(CASE WHEN ord = 1 THEN ts END) OVER w AS closed_ts FROM m" \
	"   WINDOW w AS (PARTITION BY pid, fd ORDER BY ts, ord, syscall_id" \
	"   ROWS UNBOUNDED PRECEDING))," \
	" k AS (SELECT pid, fd, conn, conn_ts, max(cookie) OVER c AS cookie," \
	"   max(origin) OVER c AS origin, ord, closed_ts, tid, ts AS start_ts, end_ts," \
	"   syscall_id, io, bytes FROM g WHERE conn > 0" \
	"   WINDOW c AS (PARTITION BY pid, fd, conn))," \
	" b AS (SELECT *, CASE WHEN io = 'read' AND COALESCE(lag(io) OVER w, 'write') = 'write'" \
	"   THEN 1 ELSE 0 END AS starts FROM k" \
	"   WHERE ord = 2 AND (closed_ts IS NULL OR closed_ts < conn_ts)" \
	"   WINDOW w AS (PARTITION BY pid, fd, conn ORDER BY start_ts, syscall_id))," \
	" n AS (SELECT *, sum(starts) OVER (PARTITION BY pid, fd, conn" \
	"   ORDER BY start_ts, syscall_id) AS request FROM b)"

/* One row per request of the calls in n (CTE r): the connection, the
 * thread that picked it up (its first read), the span and the bytes. The
 * calls reach the grouping sorted by tid, so group_concat(DISTINCT tid)
 * lists the threads in ascending order (one pass, no join). */
#define REQUEST_ROWS_CTES \
	REQUEST_CALLS_CTES "," \
	" r AS (SELECT pid, fd, conn, min(cookie) AS cookie, min(origin) AS origin," \
	"  min(conn_ts) AS conn_ts, request, group_concat(DISTINCT tid) AS tids," \
	"  max(CASE WHEN starts = 1 THEN tid END) AS pickup_tid," \
	"  min(start_ts) AS start_ts," \
	"  min(CASE WHEN io = 'write' THEN start_ts END) AS first_write_ts," \
	"  max(end_ts) AS end_ts, max(end_ts) - min(start_ts) AS service_ns," \
	"  sum(CASE WHEN io = 'read' THEN bytes ELSE 0 END) AS bytes_in," \
	"  sum(CASE WHEN io = 'write' THEN bytes ELSE 0 END) AS bytes_out," \
	"  sum(io = 'read') AS reads, sum(io = 'write') AS writes" \
	" FROM (SELECT * FROM n WHERE request > 0 ORDER BY pid, fd, conn, request, tid)" \
	" GROUP BY pid, fd, conn, request" \
	" HAVING sum(io = 'write') > 0)"

static const char request_spans_sql[] =
	"CREATE VIEW request_spans AS WITH" REQUEST_ROWS_CTES
	" SELECT pid, fd, cookie, conn_ts, request, tids, start_ts, first_write_ts, end_ts,"
	"  service_ns, bytes_in, bytes_out, reads, writes"
	" FROM r ORDER BY start_ts, pid, fd;";

/* Queueing of each request: the CTEs up to r, then (CTE l) the lower
 * bound of its readiness (the accept or first sighting of the connection
 * for a first request, the previous request's end for the others) and two
 * sweeps over poll family returns (ret > 0, CTE pl) that carry the request
 * rows along (no join): o, per thread in time order, gives each pickup the
 * last poll return of the pickup thread itself (a running max); a, per
 * process in reverse time order, gives each lower bound the first poll
 * return of any thread at or after it (a running min). Each counts only
 * between the bound and the pickup. docs/schema.md, request_queueing. */
#define REQUEST_QUEUE_COLS \
	"pid, fd, cookie, origin, conn_ts, conn, request, tids, pickup_tid, start_ts, end_ts," \
	" service_ns, lower_ts"
#define REQUEST_QUEUE_CTES \
	REQUEST_ROWS_CTES "," \
	" l AS (SELECT *, CASE WHEN request = 1 THEN conn_ts ELSE lag(end_ts) OVER" \
	"   (PARTITION BY pid, fd, conn ORDER BY request) END AS lower_ts FROM r)," \
	" pl AS (SELECT pid, tid, end_ts FROM syscall_intervals WHERE EXISTS (SELECT 1 FROM sockets)" \
	"   AND family = 'poll' AND ret > 0" \
	"   AND pid IN (SELECT pid FROM sockets))," \
	" o AS (SELECT * FROM (SELECT *, max(CASE WHEN kind = 0 THEN ts END) OVER (PARTITION BY" \
	"   pid, stream_tid ORDER BY ts, kind ROWS UNBOUNDED PRECEDING) AS last_poll FROM" \
	"   (SELECT pid, tid AS stream_tid, end_ts AS ts, 0 AS kind, NULL AS fd, NULL AS cookie," \
	"   NULL AS origin, NULL AS conn_ts, NULL AS conn, NULL AS request, NULL AS tids," \
	"   NULL AS pickup_tid, NULL AS start_ts, NULL AS end_ts, NULL AS service_ns," \
	"   NULL AS lower_ts FROM pl" \
	"   UNION ALL SELECT pid, pickup_tid, start_ts, 1, fd, cookie, origin, conn_ts, conn," \
	"   request, tids, pickup_tid, start_ts, end_ts, service_ns, lower_ts FROM l))" \
	"   WHERE kind = 1)," \
	" a AS (SELECT * FROM (SELECT *, min(CASE WHEN kind = 1 THEN ts END) OVER (PARTITION BY" \
	"   pid ORDER BY ts DESC, kind DESC ROWS UNBOUNDED PRECEDING) AS next_poll FROM" \
	"   (SELECT pid, end_ts AS ts, 1 AS kind, NULL AS last_poll, NULL AS fd, NULL AS cookie," \
	"   NULL AS origin, NULL AS conn_ts, NULL AS conn, NULL AS request, NULL AS tids," \
	"   NULL AS pickup_tid, NULL AS start_ts, NULL AS end_ts, NULL AS service_ns," \
	"   NULL AS lower_ts FROM pl" \
	"   UNION ALL SELECT pid, lower_ts, 0, last_poll, fd, cookie, origin, conn_ts, conn," \
	"   request, tids, pickup_tid, start_ts, end_ts, service_ns, lower_ts FROM o))" \
	"   WHERE kind = 0)," \
	" q AS (SELECT " REQUEST_QUEUE_COLS "," \
	"   CASE WHEN last_poll >= lower_ts THEN last_poll END AS own_ts," \
	"   CASE WHEN next_poll <= start_ts AND lower_ts IS NOT NULL THEN next_poll END AS any_ts" \
	"   FROM a)," \
	" rq AS (SELECT pid, fd, cookie, origin, conn_ts, request, tids, start_ts AS pickup_ts," \
	"   pickup_tid, end_ts, service_ns," \
	"   CASE WHEN origin IS NOT 'connected' THEN COALESCE(own_ts, any_ts," \
	"    CASE WHEN request > 1 OR origin = 'accepted' THEN lower_ts END) END AS ready_ts," \
	"   CASE WHEN origin IS 'connected' THEN NULL" \
	"    WHEN own_ts IS NOT NULL THEN 'poll' WHEN any_ts IS NOT NULL THEN 'poll_other'" \
	"    WHEN request > 1 THEN 'previous_response' WHEN origin = 'accepted' THEN 'accept'" \
	"   END AS ready_source FROM q)"

static const char request_queueing_sql[] =
	"CREATE VIEW request_queueing AS WITH" REQUEST_QUEUE_CTES
	" SELECT pid, fd, cookie, origin, conn_ts, request, ready_ts, ready_source, pickup_ts,"
	"  pickup_tid, tids, max(pickup_ts - ready_ts, 0) AS queue_ns, service_ns, end_ts,"
	"  end_ts - ready_ts AS sojourn_ns"
	" FROM rq ORDER BY pickup_ts, pid, fd;";

/* Pool utilisation per window: one sweep per process over the window edges
 * (kind 0), request ends (1: busy - 1), pickups (2: busy + 1, queue - 1) and
 * readiness (3: queue + 1); between a row and the next the running counts
 * hold, so each window's areas are sums of count * gap over its rows, and
 * its maximum queue depth the largest running count (its edge row carries
 * the depth from before). Client (connected) connections are left out.
 * docs/schema.md, pool_utilisation. */
static const char pool_utilisation_sql[] =
	"CREATE VIEW pool_utilisation AS WITH RECURSIVE"
	" cfg AS (SELECT COALESCE((SELECT CAST(value AS INTEGER) FROM schema_info"
	"   WHERE key = 'window_ns' AND CAST(value AS INTEGER) > 0), 1000000000) AS w,"
	"   COALESCE((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'record.start_ns'),"
	"   0) AS origin,"
	"   (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'record.start_ns') AS cap_start,"
	"   (SELECT CAST(value AS INTEGER) FROM stats WHERE key = 'record.end_ns'"
	"    ORDER BY chunk = 'stats' DESC LIMIT 1) AS cap_end),"
	" r AS (SELECT pid, pickup_tid, min(COALESCE(ready_ts, pickup_ts), pickup_ts) AS ready_ts,"
	"   pickup_ts, end_ts, queue_ns FROM request_queueing WHERE origin IS NOT 'connected'),"
	" span AS (SELECT pid, min(ready_ts) AS t0, max(end_ts) AS t1,"
	"   count(DISTINCT pickup_tid) AS workers FROM r GROUP BY pid),"
	" win(pid, ws, t1) AS (SELECT pid, t0 - ((t0 - origin) % w + w) % w, t1 FROM span, cfg"
	"   UNION ALL SELECT pid, ws + (SELECT w FROM cfg), t1 FROM win"
	"   WHERE ws + (SELECT w FROM cfg) <= t1),"
	" ev AS (SELECT pid, ws AS ts, 0 AS kind, 0 AS bd, 0 AS qd, NULL AS queue_ns FROM win"
	"  UNION ALL SELECT pid, max(ws) + (SELECT w FROM cfg), 0, 0, 0, NULL FROM win GROUP BY pid"
	"  UNION ALL SELECT pid, end_ts, 1, -1, 0, NULL FROM r"
	"  UNION ALL SELECT pid, pickup_ts, 2, 1, -1, queue_ns FROM r"
	"  UNION ALL SELECT pid, ready_ts, 3, 0, 1, NULL FROM r),"
	" s AS (SELECT *, sum(kind = 0) OVER w AS win_no, sum(bd) OVER w AS busy,"
	"   sum(qd) OVER w AS depth, lead(ts) OVER w AS next_ts FROM ev"
	"   WINDOW w AS (PARTITION BY pid ORDER BY ts, kind ROWS UNBOUNDED PRECEDING)),"
	" agg AS (SELECT pid, win_no, min(ts) AS window_start,"
	"   sum(busy * (COALESCE(next_ts, ts) - ts)) AS busy_area,"
	"   sum(depth * (COALESCE(next_ts, ts) - ts)) AS queue_area,"
	"   max(depth) AS queue_depth_max, sum(kind = 2) AS requests,"
	"   CAST(avg(CASE WHEN kind = 2 THEN queue_ns END) AS INTEGER) AS queue_mean_ns"
	"   FROM s GROUP BY pid, win_no),"
	" len AS (SELECT agg.*, span.workers, window_start + cfg.w AS window_end,"
	"   min(window_start + cfg.w, COALESCE(cfg.cap_end, window_start + cfg.w))"
	"   - max(window_start, COALESCE(cfg.cap_start, window_start)) AS inside"
	"   FROM agg JOIN span USING (pid), cfg"
	"   WHERE agg.win_no <= (SELECT count(*) FROM win WHERE win.pid = agg.pid))"
	" SELECT pid, window_start, window_end, workers, requests,"
	"  round(1.0 * busy_area / d, 6) AS busy_avg,"
	"  round(1.0 * busy_area / d / workers, 6) AS utilisation,"
	"  round(1.0 * queue_area / d, 6) AS queue_depth_avg, queue_depth_max, queue_mean_ns"
	" FROM (SELECT *, CASE WHEN inside > 0 THEN inside ELSE window_end - window_start END AS d"
	"  FROM len)"
	" ORDER BY pid, window_start;";

/* CPU samples and off-CPU intervals of the threads serving the slowest
 * requests: those whose service_ns is at or above the nearest-rank p90 of
 * their process (CTE sl), each with the threads that made its calls (CTE
 * th: n's distinct tids, numbered rn per thread in start order). Samples
 * are matched by a sweep per thread (sw: the running max of rn gives each
 * sample the latest slow request its thread started before it), then one
 * equality join on (pid, tid, rn): no scan of the samples per request.
 * Off-CPU intervals (far fewer) are joined by overlap. docs/schema.md,
 * slow_request_samples. */
static const char slow_request_samples_sql[] =
	"CREATE VIEW slow_request_samples AS WITH" REQUEST_ROWS_CTES ","
	" rk AS (SELECT *, row_number() OVER (PARTITION BY pid ORDER BY service_ns) AS rk,"
	"   count(*) OVER (PARTITION BY pid) AS cnt FROM r),"
	" p AS (SELECT pid, " PCTL(90, "rk", "cnt", "service_ns") " AS p90 FROM rk GROUP BY pid),"
	" sl AS (SELECT r.*, p.p90 FROM r JOIN p USING (pid) WHERE r.service_ns >= p.p90),"
	" th0 AS (SELECT DISTINCT sl.pid, sl.fd, sl.conn, sl.request, n.tid, sl.cookie,"
	"   sl.conn_ts, sl.start_ts, sl.end_ts, sl.service_ns, sl.p90"
	"   FROM sl JOIN n USING (pid, fd, conn, request)),"
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
			      request_queueing_sql, pool_utilisation_sql,
			      slow_request_samples_sql };

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (db_exec(db, all[i]) < 0)
			return -1;
	return 0;
}
