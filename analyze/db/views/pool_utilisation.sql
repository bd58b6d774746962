-- pool_utilisation: how busy each process's pool of request threads was,
-- per window (schema_info window_ns, else 1 s): threads busy on average
-- and as a share of the workers, the queue depth (mean and maximum) and
-- the mean queueing of the requests picked up. One sweep per process over
-- the window edges (kind 0), request ends (1: busy - 1), pickups (2:
-- busy + 1, queue - 1) and readiness (3: queue + 1); between a row and
-- the next the running counts hold, so each window's areas are sums of
-- count * gap over its rows, and its maximum queue depth the largest
-- running count (its edge row carries the depth from before). Client
-- (connected) connections are left out. docs/schema.md, pool_utilisation.
WITH RECURSIVE
settings AS (SELECT COALESCE((SELECT CAST(value AS INTEGER) FROM schema_info
  WHERE key = 'window_ns' AND CAST(value AS INTEGER) > 0), 1000000000) AS w,
  COALESCE((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'record.start_ns'),
  0) AS origin,
  (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'record.start_ns') AS cap_start,
  (SELECT CAST(value AS INTEGER) FROM stats WHERE key = 'record.end_ns'
   ORDER BY chunk = 'stats' DESC LIMIT 1) AS cap_end),
served AS (SELECT pid, pickup_tid, min(COALESCE(ready_ts, pickup_ts), pickup_ts)
  AS ready_ts, pickup_ts, end_ts, queue_ns FROM request_queueing
  WHERE origin IS NOT 'connected'),
span AS (SELECT pid, min(ready_ts) AS t0, max(end_ts) AS t1,
  count(DISTINCT pickup_tid) AS workers FROM served GROUP BY pid),
windows(pid, ws, t1) AS (SELECT pid, t0 - ((t0 - origin) % w + w) % w, t1
  FROM span, settings
  UNION ALL SELECT pid, ws + (SELECT w FROM settings), t1 FROM windows
  WHERE ws + (SELECT w FROM settings) <= t1),
sweep_rows AS (SELECT pid, ws AS ts, 0 AS kind, 0 AS bd, 0 AS qd, NULL AS queue_ns
  FROM windows
 UNION ALL SELECT pid, max(ws) + (SELECT w FROM settings), 0, 0, 0, NULL FROM windows
  GROUP BY pid
 UNION ALL SELECT pid, end_ts, 1, -1, 0, NULL FROM served
 UNION ALL SELECT pid, pickup_ts, 2, 1, -1, queue_ns FROM served
 UNION ALL SELECT pid, ready_ts, 3, 0, 1, NULL FROM served),
sweep AS (SELECT *, sum(kind = 0) OVER w AS win_no, sum(bd) OVER w AS busy,
  sum(qd) OVER w AS depth, lead(ts) OVER w AS next_ts FROM sweep_rows
  WINDOW w AS (PARTITION BY pid ORDER BY ts, kind ROWS UNBOUNDED PRECEDING)),
window_sums AS (SELECT pid, win_no, min(ts) AS window_start,
  sum(busy * (COALESCE(next_ts, ts) - ts)) AS busy_area,
  sum(depth * (COALESCE(next_ts, ts) - ts)) AS queue_area,
  max(depth) AS queue_depth_max, sum(kind = 2) AS requests,
  CAST(avg(CASE WHEN kind = 2 THEN queue_ns END) AS INTEGER) AS queue_mean_ns
  FROM sweep GROUP BY pid, win_no),
-- window_lengths: the part of each window inside the capture
window_lengths AS (SELECT window_sums.*, span.workers,
  window_start + settings.w AS window_end,
  min(window_start + settings.w, COALESCE(settings.cap_end, window_start + settings.w))
  - max(window_start, COALESCE(settings.cap_start, window_start)) AS inside
  FROM window_sums JOIN span USING (pid), settings
  WHERE window_sums.win_no <= (SELECT count(*) FROM windows
    WHERE windows.pid = window_sums.pid))
SELECT pid, window_start, window_end, workers, requests,
  round(1.0 * busy_area / d, 6) AS busy_avg,
  round(1.0 * busy_area / d / workers, 6) AS utilisation,
  round(1.0 * queue_area / d, 6) AS queue_depth_avg, queue_depth_max, queue_mean_ns
FROM (SELECT *, CASE WHEN inside > 0 THEN inside ELSE window_end - window_start END AS d
  FROM window_lengths)
ORDER BY pid, window_start;
