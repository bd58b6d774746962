-- wakeup_edges: each blocked off-CPU interval (not preempted) with what
-- ended it: the kind of its waker, the waker task, and the window of the
-- wakeup. The one definition of the waker kinds: wakeup_graph reads it,
-- and the diagnosis (analyze/diagnose/diagnose_wakers.c) refines
-- 'process' into service, client, upstream or peer.
-- docs/schema.md, wakeup_edges.
SELECT o.offcpu_id, o.ts - o.duration AS start_ts, o.ts AS end_ts, o.duration,
  o.pid, o.tid, o.wait_class,
  CASE
    -- a hard interrupt: a device completing an I/O wait, else a timer
    WHEN o.waker_context = 1 THEN
      CASE WHEN o.wait_class = 'block_io' THEN 'device' ELSE 'timer' END
    -- a soft interrupt, by vector (format/SPEC.md, WAKEUP); 15 (1.11): one
    -- the recorder did not name (not a timer's, not NET_RX): for an I/O
    -- wait, a device's completion, as for a hard interrupt
    WHEN o.waker_context = 2 THEN
      CASE o.waker_softirq WHEN 1 THEN 'timer' WHEN 8 THEN 'timer' WHEN 4 THEN 'device'
        WHEN 15 THEN CASE WHEN o.wait_class = 'block_io' THEN 'device' ELSE 'softirq:?' END
        WHEN 0 THEN 'softirq:HI' WHEN 2 THEN 'softirq:NET_TX' WHEN 3 THEN 'softirq:NET_RX'
        WHEN 5 THEN 'softirq:IRQ_POLL' WHEN 6 THEN 'softirq:TASKLET'
        WHEN 7 THEN 'softirq:SCHED' WHEN 9 THEN 'softirq:RCU'
        ELSE 'softirq:' || ifnull(o.waker_softirq, '?') END
    -- a task: a thread of the same process, or another process
    WHEN o.waker_context = 0 AND o.waker_pid > 0 THEN
      CASE WHEN o.waker_pid = o.pid THEN 'thread' ELSE 'process' END
    -- no wakeup seen, the idle task, or a capture older than format 1.4
    ELSE 'unknown' END AS waker_kind,
  -- the waker task: for a soft interrupt other than timers and block
  -- completions, the task it ran on (a loopback send's sender); 0 for
  -- timers, devices, unnamed soft interrupts and unknown wakers
  CASE WHEN o.waker_context = 0 THEN ifnull(o.waker_pid, 0)
    WHEN o.waker_context = 2 AND o.waker_softirq NOT IN (1, 4, 8, 15) THEN ifnull(o.irq_pid, 0)
    ELSE 0 END AS waker_pid,
  CASE WHEN o.waker_context = 0 THEN ifnull(o.waker_tid, 0)
    WHEN o.waker_context = 2 AND o.waker_softirq NOT IN (1, 4, 8, 15) THEN ifnull(o.irq_tid, 0)
    ELSE 0 END AS waker_tid,
  o.waker_context, o.waker_softirq,
  -- the window of thread_time_shares holding the wakeup (the wait's end):
  -- window_ns (1 s by default) from the capture start; uncorrelated
  -- subqueries, computed once per statement
  (SELECT coalesce((SELECT CAST(value AS INTEGER) FROM meta
      WHERE key = 'record.start_ns' AND CAST(value AS INTEGER) > 0),
    (SELECT min(t_start) FROM chunks WHERE t_start > 0), 0))
  + (o.ts - (SELECT coalesce((SELECT CAST(value AS INTEGER) FROM meta
      WHERE key = 'record.start_ns' AND CAST(value AS INTEGER) > 0),
    (SELECT min(t_start) FROM chunks WHERE t_start > 0), 0)))
  / (SELECT coalesce((SELECT CAST(value AS INTEGER) FROM schema_info
      WHERE key = 'window_ns' AND CAST(value AS INTEGER) > 0), 1000000000))
  * (SELECT coalesce((SELECT CAST(value AS INTEGER) FROM schema_info
      WHERE key = 'window_ns' AND CAST(value AS INTEGER) > 0), 1000000000)) AS window_start
FROM offcpu o
WHERE o.state <> 0 AND o.wait_class <> 'preempted';
