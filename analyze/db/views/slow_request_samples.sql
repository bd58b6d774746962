-- slow_request_samples: what the threads serving the slowest requests did:
-- their CPU samples and off-CPU intervals during each request whose
-- service time is at or above the nearest-rank p90 of its process.
-- Samples are matched by a sweep per thread (no scan of the samples per
-- request); off-CPU intervals (far fewer) by overlap.
-- docs/schema.md, slow_request_samples.
WITH
-- shared: request_rows
-- The read and write calls on socket fds, grouped into requests; the same
-- CTEs in request_spans.sql, request_queueing.sql and
-- slow_request_samples.sql (the build checks they match).
--
-- socket_fd_events: a stream per (pid, fd) in time order of the sockets
-- rows (ord 0: a connection opens), successful closes (ord 1) and reads
-- (ret > 0) / writes (ret >= 0) (ord 2). Only calls on a (pid, fd) that
-- ever held a socket are taken: no other call can belong to a connection,
-- and a capture without sockets costs nothing.
socket_fd_events AS (SELECT pid, fd, ts, 0 AS ord, 0 AS syscall_id, NULL AS tid,
  NULL AS end_ts, NULL AS io, NULL AS bytes, cookie, origin FROM sockets
 UNION ALL SELECT pid, fd, start_ts, 1, syscall_id, tid, end_ts, NULL, NULL, NULL,
  NULL FROM syscall_intervals WHERE EXISTS (SELECT 1 FROM sockets) AND name = 'close'
  AND ret = 0 AND (pid, fd) IN (SELECT pid, fd FROM sockets)
 UNION ALL SELECT pid, fd, start_ts, 2, syscall_id, tid, end_ts, io,
  bytes_transferred, NULL, NULL FROM syscall_intervals
  WHERE EXISTS (SELECT 1 FROM sockets)
  AND ((io = 'read' AND ret > 0) OR (io = 'write' AND ret >= 0))
  AND (pid, fd) IN (SELECT pid, fd FROM sockets)),
-- events_by_connection: running window sums give each event its
-- connection (conn: the count of opens so far, conn_ts the last open) and
-- the last close, so a call belongs to a live connection when
-- closed_ts < conn_ts. One sort, no join of every call with every
-- connection of its fd.
events_by_connection AS (SELECT *, sum(ord = 0) OVER w AS conn,
  max(CASE WHEN ord = 0 THEN ts END) OVER w AS conn_ts,
  max(CASE WHEN ord = 1 THEN ts END) OVER w AS closed_ts FROM socket_fd_events
  WINDOW w AS (PARTITION BY pid, fd ORDER BY ts, ord, syscall_id
  ROWS UNBOUNDED PRECEDING)),
-- connection_events: the events of each connection with its cookie and
-- origin.
connection_events AS (SELECT pid, fd, conn, conn_ts, max(cookie) OVER c AS cookie,
  max(origin) OVER c AS origin, ord, closed_ts, tid, ts AS start_ts, end_ts,
  syscall_id, io, bytes FROM events_by_connection WHERE conn > 0
  WINDOW c AS (PARTITION BY pid, fd, conn)),
-- request_starts: the calls on live connections; a read that is the first
-- call of its connection or follows a write starts a request (starts = 1:
-- the request's first read, made by the thread that picked it up).
request_starts AS (SELECT *, CASE WHEN io = 'read'
  AND COALESCE(lag(io) OVER w, 'write') = 'write' THEN 1 ELSE 0 END AS starts
  FROM connection_events
  WHERE ord = 2 AND (closed_ts IS NULL OR closed_ts < conn_ts)
  WINDOW w AS (PARTITION BY pid, fd, conn ORDER BY start_ts, syscall_id)),
-- request_calls: the calls numbered by request within their connection.
request_calls AS (SELECT *, sum(starts) OVER (PARTITION BY pid, fd, conn
  ORDER BY start_ts, syscall_id) AS request FROM request_starts),
-- requests: one row per request: the connection, the thread that picked
-- it up (its first read), the span and the bytes. The calls reach the
-- grouping sorted by tid, so group_concat(DISTINCT tid) lists the threads
-- in ascending order (one pass, no join).
requests AS (SELECT pid, fd, conn, min(cookie) AS cookie, min(origin) AS origin,
  min(conn_ts) AS conn_ts, request, group_concat(DISTINCT tid) AS tids,
  max(CASE WHEN starts = 1 THEN tid END) AS pickup_tid,
  min(start_ts) AS start_ts,
  min(CASE WHEN io = 'write' THEN start_ts END) AS first_write_ts,
  max(end_ts) AS end_ts, max(end_ts) - min(start_ts) AS service_ns,
  sum(CASE WHEN io = 'read' THEN bytes ELSE 0 END) AS bytes_in,
  sum(CASE WHEN io = 'write' THEN bytes ELSE 0 END) AS bytes_out,
  sum(io = 'read') AS reads, sum(io = 'write') AS writes
 FROM (SELECT * FROM request_calls WHERE request > 0
  ORDER BY pid, fd, conn, request, tid)
 GROUP BY pid, fd, conn, request
 HAVING sum(io = 'write') > 0)
-- end shared: request_rows
-- ranked_requests, service_p90, slow_requests: the requests at or above
-- the p90 of service time of their process.
, ranked_requests AS (SELECT *, row_number() OVER (PARTITION BY pid ORDER BY service_ns)
  AS rk, count(*) OVER (PARTITION BY pid) AS cnt FROM requests),
service_p90 AS (SELECT pid,
  max(CASE WHEN rk = (cnt * 90 + 99) / 100 THEN service_ns END) AS p90
  FROM ranked_requests GROUP BY pid),
slow_requests AS (SELECT r.*, p.p90 FROM requests r JOIN service_p90 p USING (pid)
  WHERE r.service_ns >= p.p90),
-- slow_request_threads, slow_threads: each slow request with the threads that made its calls,
-- numbered rn per thread in start order.
slow_request_threads AS (SELECT DISTINCT sl.pid, sl.fd, sl.conn, sl.request, n.tid,
  sl.cookie, sl.conn_ts, sl.start_ts, sl.end_ts, sl.service_ns, sl.p90
  FROM slow_requests sl JOIN request_calls n USING (pid, fd, conn, request)),
slow_threads AS (SELECT *, row_number() OVER (PARTITION BY pid, tid
  ORDER BY start_ts, fd, conn, request) AS rn FROM slow_request_threads),
-- sample_sweep: per thread in time order, the running max of rn gives
-- each sample the latest slow request its thread started before it.
sample_sweep AS (SELECT *, max(rn) OVER (PARTITION BY pid, tid ORDER BY ts, kind
  ROWS UNBOUNDED PRECEDING) AS cur FROM (SELECT pid, tid, start_ts AS ts, 0 AS kind,
  rn, NULL AS cpu, NULL AS ustack_id, NULL AS kstack_id FROM slow_threads
  UNION ALL SELECT pid, tid, ts, 1, NULL, cpu, ustack_id, kstack_id FROM samples
  WHERE tid IN (SELECT tid FROM slow_threads)))
SELECT th.pid, th.fd, th.cookie, th.conn_ts, th.request, th.service_ns,
  th.p90 AS service_p90, th.start_ts, th.end_ts, th.tid, 'cpu' AS kind, sw.ts,
  NULL AS duration, NULL AS wait_class, sw.cpu, sw.ustack_id, sw.kstack_id,
  (SELECT f.name FROM stack_frames sf JOIN frames f USING (frame_id)
   WHERE sf.stack_id = sw.kstack_id AND sf.position = 0) AS kernel_function,
  (SELECT f.name FROM stack_frames sf JOIN frames f USING (frame_id)
   WHERE sf.stack_id = sw.ustack_id AND sf.position = 0) AS user_function
FROM sample_sweep sw JOIN slow_threads th
  ON th.pid = sw.pid AND th.tid = sw.tid AND th.rn = sw.cur
WHERE sw.kind = 1 AND sw.ts <= th.end_ts
UNION ALL
SELECT th.pid, th.fd, th.cookie, th.conn_ts, th.request, th.service_ns, th.p90,
  th.start_ts, th.end_ts, th.tid, 'offcpu', max(o.start_ts, th.start_ts),
  min(o.end_ts, th.end_ts) - max(o.start_ts, th.start_ts), o.wait_class, NULL,
  o.ustack_id, o.kstack_id, o.kernel_function, o.user_function
FROM slow_threads th JOIN offcpu_intervals o ON o.tid = th.tid AND o.pid = th.pid
  AND o.end_ts > th.start_ts AND o.start_ts < th.end_ts
ORDER BY 1, 4, 5, 10, 12;
