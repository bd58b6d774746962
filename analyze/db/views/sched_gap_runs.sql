-- sched_gap_runs: each traced thread's time on a CPU and on a run queue
-- inside each gap between sched windows (format 1.13), exact: the
-- differences of the kernel's counters between the thread as the window
-- closed (sched_tasks.edge 'close', at the gap's start) and as the next
-- one opened ('open', at its end), or as it exited inside the gap
-- ('exit', at exit_ts; NULL otherwise). A thread made inside the gap has
-- no row for it. running_ns is at most the time between (a running
-- thread's counter is brought up to date at its ticks and switches).
-- vcsw (format 1.16; NULL before): its voluntary context switches there,
-- each a blocking wait. docs/schema.md, sched_gap_runs.
SELECT o.pid, o.tid, g.start_ts, g.end_ts, NULL AS exit_ts,
  max(0, min(max(o.runtime_ns) - min(c.runtime_ns), g.end_ts - g.start_ts)) AS running_ns,
  max(0, max(o.run_delay_ns) - min(c.run_delay_ns)) AS run_delay_ns,
  max(0, max(o.nvcsw) - min(c.nvcsw)) AS vcsw
FROM sched_gaps g
JOIN sched_tasks c ON c.edge = 'close' AND c.ts = g.start_ts
JOIN sched_tasks o ON o.edge = 'open' AND o.ts = g.end_ts AND o.tid = c.tid
GROUP BY g.start_ts, o.tid
UNION ALL
SELECT e.pid, e.tid, g.start_ts, g.end_ts, min(e.ts) AS exit_ts,
  max(0, min(min(e.runtime_ns) - min(c.runtime_ns), min(e.ts) - g.start_ts)) AS running_ns,
  max(0, min(e.run_delay_ns) - min(c.run_delay_ns)) AS run_delay_ns,
  max(0, min(e.nvcsw) - min(c.nvcsw)) AS vcsw
FROM sched_gaps g
JOIN sched_tasks c ON c.edge = 'close' AND c.ts = g.start_ts
JOIN sched_tasks e ON e.edge = 'exit' AND e.tid = c.tid AND e.ts > g.start_ts
  AND e.ts <= g.end_ts
GROUP BY g.start_ts, e.tid
ORDER BY 3, 2;
