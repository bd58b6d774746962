-- wakeup_graph_windows: wakeup_graph per window (window_ns, 1 s by
-- default, from the capture start; a wait counts in the window of its
-- wakeup): one row per window and edge, in window order, largest total
-- first within a window. docs/schema.md, wakeup_graph_windows.
SELECT e.window_start, e.pid, e.tid,
  (SELECT comm FROM threads t WHERE t.tid = e.tid ORDER BY t.ts DESC LIMIT 1) AS comm,
  e.wait_class, e.waker_kind, e.waker_pid, e.waker_tid,
  CASE WHEN e.waker_tid > 0 THEN coalesce(
    (SELECT comm FROM threads t WHERE t.tid = e.waker_tid ORDER BY t.ts DESC LIMIT 1),
    (SELECT comm FROM processes p WHERE p.pid = e.waker_pid ORDER BY p.ts DESC LIMIT 1))
  END AS waker_comm,
  e.waits, e.total_ns, e.max_ns
FROM (SELECT window_start, pid, tid, wait_class, waker_kind, waker_pid, waker_tid,
        count(*) AS waits, sum(duration) AS total_ns, max(duration) AS max_ns
      FROM wakeup_edges
      GROUP BY window_start, pid, tid, wait_class, waker_kind, waker_pid, waker_tid) e
ORDER BY e.window_start, e.total_ns DESC, e.pid, e.tid, e.wait_class, e.waker_kind,
  e.waker_pid, e.waker_tid;
