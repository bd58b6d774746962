-- wakeup_graph: who wakes whom. One row per edge waker -> wakee over the
-- blocked off-CPU intervals of wakeup_edges: the waiting thread, its wait
-- class, the waker's kind and task; how many waits, their total and
-- longest. Largest total first. docs/schema.md, wakeup_graph.
SELECT e.pid, e.tid,
  (SELECT comm FROM threads t WHERE t.tid = e.tid ORDER BY t.ts DESC LIMIT 1) AS comm,
  e.wait_class, e.waker_kind, e.waker_pid, e.waker_tid,
  CASE WHEN e.waker_tid > 0 THEN coalesce(
    (SELECT comm FROM threads t WHERE t.tid = e.waker_tid ORDER BY t.ts DESC LIMIT 1),
    (SELECT comm FROM processes p WHERE p.pid = e.waker_pid ORDER BY p.ts DESC LIMIT 1))
  END AS waker_comm,
  e.waits, e.total_ns, e.max_ns
FROM (SELECT pid, tid, wait_class, waker_kind, waker_pid, waker_tid, count(*) AS waits,
        sum(duration) AS total_ns, max(duration) AS max_ns
      FROM wakeup_edges GROUP BY pid, tid, wait_class, waker_kind, waker_pid, waker_tid) e
ORDER BY e.total_ns DESC, e.pid, e.tid, e.wait_class, e.waker_kind, e.waker_pid, e.waker_tid;
