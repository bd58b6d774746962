-- request_spans: the requests a program served or made on its sockets: for
-- each, the connection, the threads that handled it, when it started,
-- first wrote and ended, and the bytes and calls in and out. A request is
-- the reads on a connection up to the writes that answer them.
-- docs/schema.md, request_spans.
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
SELECT pid, fd, cookie, conn_ts, request, tids, start_ts, first_write_ts, end_ts,
  service_ns, bytes_in, bytes_out, reads, writes
FROM requests ORDER BY start_ts, pid, fd;
