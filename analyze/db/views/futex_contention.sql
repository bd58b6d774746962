-- futex_contention: contention per futex address (a lock or condition
-- variable): its waiters and their wait time (nearest-rank p50 and p99),
-- its wakers and how many threads they woke, the user stacks that waited;
-- most waited first. Counts and sums weighted as futex_waits'.
-- docs/schema.md, futex_contention.
WITH addresses AS (SELECT DISTINCT pid, addr FROM futex_calls WHERE kind <> 'other'),
ranked_waits AS (SELECT *, row_number() OVER (PARTITION BY pid, addr ORDER BY duration)
  AS rk, count(*) OVER (PARTITION BY pid, addr) AS n FROM futex_calls WHERE kind = 'wait'),
wait_stats AS (SELECT pid, addr, count(DISTINCT tid) AS waiters,
  CAST(round(sum(weight)) AS INTEGER) AS waits,
  CAST(round(sum(duration * weight)) AS INTEGER) AS wait_ns,
  -- nearest rank: the value at rank ceil(p * n / 100)
  max(CASE WHEN rk = (n * 50 + 99) / 100 THEN duration END) AS wait_p50,
  max(CASE WHEN rk = (n * 99 + 99) / 100 THEN duration END) AS wait_p99,
  max(duration) AS wait_max
  FROM ranked_waits GROUP BY pid, addr),
wake_stats AS (SELECT pid, addr, CAST(round(sum(weight)) AS INTEGER) AS wake_calls,
  CAST(round(sum(max(ret, 0) * weight)) AS INTEGER) AS woken
  FROM futex_calls WHERE kind = 'wake' GROUP BY pid, addr),
waiter_lists AS (SELECT pid, addr, group_concat(tid) AS tids FROM (SELECT DISTINCT pid,
  addr, tid FROM futex_calls WHERE kind = 'wait' ORDER BY pid, addr, tid)
  GROUP BY pid, addr),
waker_lists AS (SELECT pid, addr, group_concat(tid) AS tids FROM (SELECT DISTINCT pid,
  addr, tid FROM futex_calls WHERE kind = 'wake' ORDER BY pid, addr, tid)
  GROUP BY pid, addr),
stack_lists AS (SELECT pid, addr, group_concat(ustack_id) AS ids FROM (SELECT DISTINCT pid,
  addr, ustack_id FROM futex_calls WHERE kind = 'wait' AND ustack_id IS NOT NULL
  ORDER BY pid, addr, ustack_id) GROUP BY pid, addr)
SELECT a.pid, a.addr, COALESCE(ws.waiters, 0) AS waiters, wt.tids AS waiter_tids,
  COALESCE(ws.waits, 0) AS waits, COALESCE(ws.wait_ns, 0) AS wait_ns,
  ws.wait_p50, ws.wait_p99, ws.wait_max,
  COALESCE(wk.wake_calls, 0) AS wake_calls, COALESCE(wk.woken, 0) AS woken,
  kt.tids AS waker_tids, st.ids AS wait_ustack_ids
FROM addresses a LEFT JOIN wait_stats ws USING (pid, addr)
  LEFT JOIN wake_stats wk USING (pid, addr)
  LEFT JOIN waiter_lists wt USING (pid, addr) LEFT JOIN waker_lists kt USING (pid, addr)
  LEFT JOIN stack_lists st USING (pid, addr)
ORDER BY wait_ns DESC, a.pid, a.addr;
