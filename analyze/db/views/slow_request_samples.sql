-- slow_request_samples: what the threads serving the slowest requests did:
-- their CPU samples and off-CPU intervals during each request whose
-- service time is at or above the nearest-rank p90 of its process.
-- The requests come from the requests table (correlate/requests.c).
-- Samples are matched by a sweep per thread (no scan of the samples per
-- request); off-CPU intervals (far fewer) by overlap.
-- docs/schema.md, slow_request_samples.
WITH
-- ranked_requests, service_p90, slow_requests: the requests at or above
-- the p90 of service time of their process.
ranked_requests AS (SELECT *, row_number() OVER (PARTITION BY pid ORDER BY service_ns)
  AS rk, count(*) OVER (PARTITION BY pid) AS cnt FROM requests),
service_p90 AS (SELECT pid,
  max(CASE WHEN rk = (cnt * 90 + 99) / 100 THEN service_ns END) AS p90
  FROM ranked_requests GROUP BY pid),
slow_requests AS (SELECT r.*, p.p90 FROM requests r JOIN service_p90 p USING (pid)
  WHERE r.service_ns >= p.p90),
-- slow_request_threads, slow_threads: each slow request with the threads
-- that made its calls (its tids), numbered rn per thread in start order.
slow_request_threads AS (SELECT DISTINCT sl.pid, sl.fd, sl.conn, sl.request,
  t.value AS tid, sl.cookie, sl.conn_ts, sl.start_ts, sl.end_ts, sl.service_ns, sl.p90
  FROM slow_requests sl, json_each('[' || sl.tids || ']') t),
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
