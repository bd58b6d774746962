-- request_queueing: how long each request waited before a thread picked
-- it up: when it was ready (a poll return of the pickup thread, else of
-- any thread of the process, else the previous response or the accept),
-- the queueing and the sojourn time. Requests of client (connected)
-- connections have no readiness. docs/schema.md, request_queueing.
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
-- request_bounds: the lower bound of each request's readiness: the accept
-- or first sighting of the connection for a first request, the previous
-- request's end for the others.
, request_bounds AS (SELECT *, CASE WHEN request = 1 THEN conn_ts ELSE lag(end_ts) OVER
  (PARTITION BY pid, fd, conn ORDER BY request) END AS lower_ts FROM requests),
-- poll_returns: poll family calls that returned ready fds (ret > 0).
poll_returns AS (SELECT pid, tid, end_ts FROM syscall_intervals
  WHERE EXISTS (SELECT 1 FROM sockets)
  AND family = 'poll' AND ret > 0
  AND pid IN (SELECT pid FROM sockets)),
-- own_poll: a sweep per thread in time order over poll returns and
-- pickups, carrying the request rows along (no join): each pickup gets the
-- last poll return of the pickup thread itself (a running max).
own_poll AS (SELECT * FROM (SELECT *, max(CASE WHEN kind = 0 THEN ts END) OVER
  (PARTITION BY pid, stream_tid ORDER BY ts, kind ROWS UNBOUNDED PRECEDING) AS last_poll
  FROM (SELECT pid, tid AS stream_tid, end_ts AS ts, 0 AS kind, NULL AS fd,
  NULL AS cookie, NULL AS origin, NULL AS conn_ts, NULL AS conn, NULL AS request,
  NULL AS tids, NULL AS pickup_tid, NULL AS start_ts, NULL AS end_ts,
  NULL AS service_ns, NULL AS lower_ts FROM poll_returns
  UNION ALL SELECT pid, pickup_tid, start_ts, 1, fd, cookie, origin, conn_ts, conn,
  request, tids, pickup_tid, start_ts, end_ts, service_ns, lower_ts FROM request_bounds))
  WHERE kind = 1),
-- any_poll: a sweep per process in reverse time order: each lower bound
-- gets the first poll return of any thread at or after it (a running min).
any_poll AS (SELECT * FROM (SELECT *, min(CASE WHEN kind = 1 THEN ts END) OVER
  (PARTITION BY pid ORDER BY ts DESC, kind DESC ROWS UNBOUNDED PRECEDING) AS next_poll
  FROM (SELECT pid, end_ts AS ts, 1 AS kind, NULL AS last_poll, NULL AS fd,
  NULL AS cookie, NULL AS origin, NULL AS conn_ts, NULL AS conn, NULL AS request,
  NULL AS tids, NULL AS pickup_tid, NULL AS start_ts, NULL AS end_ts,
  NULL AS service_ns, NULL AS lower_ts FROM poll_returns
  UNION ALL SELECT pid, lower_ts, 0, last_poll, fd, cookie, origin, conn_ts, conn,
  request, tids, pickup_tid, start_ts, end_ts, service_ns, lower_ts FROM own_poll))
  WHERE kind = 0),
-- ready_candidates: each counts only between the bound and the pickup.
ready_candidates AS (SELECT pid, fd, cookie, origin, conn_ts, conn, request, tids,
  pickup_tid, start_ts, end_ts, service_ns, lower_ts,
  CASE WHEN last_poll >= lower_ts THEN last_poll END AS own_ts,
  CASE WHEN next_poll <= start_ts AND lower_ts IS NOT NULL THEN next_poll END AS any_ts
  FROM any_poll),
-- ready_requests: the readiness chosen and where it came from.
ready_requests AS (SELECT pid, fd, cookie, origin, conn_ts, request, tids,
  start_ts AS pickup_ts, pickup_tid, end_ts, service_ns,
  CASE WHEN origin IS NOT 'connected' THEN COALESCE(own_ts, any_ts,
   CASE WHEN request > 1 OR origin = 'accepted' THEN lower_ts END) END AS ready_ts,
  CASE WHEN origin IS 'connected' THEN NULL
   WHEN own_ts IS NOT NULL THEN 'poll' WHEN any_ts IS NOT NULL THEN 'poll_other'
   WHEN request > 1 THEN 'previous_response' WHEN origin = 'accepted' THEN 'accept'
  END AS ready_source FROM ready_candidates)
SELECT pid, fd, cookie, origin, conn_ts, request, ready_ts, ready_source, pickup_ts,
  pickup_tid, tids, max(pickup_ts - ready_ts, 0) AS queue_ns, service_ns, end_ts,
  end_ts - ready_ts AS sojourn_ns
FROM ready_requests ORDER BY pickup_ts, pid, fd;
