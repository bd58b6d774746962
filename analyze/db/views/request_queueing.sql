-- request_queueing: how long each request waited before a thread picked
-- it up: when it was ready (a poll return of the pickup thread, else of
-- any thread of the process, else the previous response or the accept),
-- the queueing and the sojourn time. Requests of client (connected)
-- connections have no readiness. A projection of the requests table
-- (correlate/requests.c computes readiness once, at import).
-- docs/schema.md, request_queueing.
SELECT pid, fd, cookie, origin, conn_ts, request, ready_ts, ready_source,
  start_ts AS pickup_ts, pickup_tid, tids, queue_ns, service_ns, end_ts, sojourn_ns
FROM requests ORDER BY start_ts, pid, fd;
