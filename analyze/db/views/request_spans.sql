-- request_spans: the requests a program served or made on its sockets: for
-- each, the connection, the threads that handled it, when it started,
-- first wrote and ended, and the bytes and calls in and out. A request is
-- the reads on a connection up to the writes that answer them. A
-- projection of the requests table, which import fills once
-- (correlate/requests.c). docs/schema.md, request_spans.
SELECT pid, fd, cookie, conn_ts, request, tids, start_ts, first_write_ts, end_ts,
  service_ns, bytes_in, bytes_out, reads, writes
FROM requests ORDER BY start_ts, pid, fd;
