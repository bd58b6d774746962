-- futex_waits: futex calls per process, address and command: how many,
-- by which threads, how long the waits took (nearest-rank p50 and p99),
-- how many threads the wakes woke, from which user stacks. Counts and
-- sums weighted (calls paired in windows above --syscall-rate stand for
-- their second), percentiles of the calls recorded.
-- docs/schema.md, futex_waits.
WITH ranked AS (SELECT *, row_number() OVER (PARTITION BY pid, addr, op ORDER BY duration)
  AS rk, count(*) OVER (PARTITION BY pid, addr, op) AS n FROM futex_calls),
caller_lists AS (SELECT pid, addr, op, group_concat(tid) AS tids FROM (SELECT DISTINCT pid,
  addr, op, tid FROM futex_calls ORDER BY pid, addr, op, tid) GROUP BY pid, addr, op),
stack_lists AS (SELECT pid, addr, op, group_concat(ustack_id) AS ids FROM (SELECT DISTINCT
  pid, addr, op, ustack_id FROM futex_calls WHERE ustack_id IS NOT NULL
  ORDER BY pid, addr, op, ustack_id) GROUP BY pid, addr, op)
SELECT r.pid, r.addr, r.op, min(r.op_name) AS op_name, min(r.kind) AS kind,
  CAST(round(sum(r.weight)) AS INTEGER) AS calls, t.tids,
  CAST(round(sum((r.kind = 'wait') * r.weight)) AS INTEGER) AS waits,
  CASE WHEN min(r.kind) = 'wait' THEN CAST(round(sum(r.duration * r.weight)) AS INTEGER)
   END AS wait_ns,
  -- nearest rank: the value at rank ceil(p * n / 100)
  CASE WHEN min(r.kind) = 'wait'
   THEN max(CASE WHEN rk = (n * 50 + 99) / 100 THEN r.duration END) END AS wait_p50,
  CASE WHEN min(r.kind) = 'wait'
   THEN max(CASE WHEN rk = (n * 99 + 99) / 100 THEN r.duration END) END AS wait_p99,
  CASE WHEN min(r.kind) = 'wait' THEN max(r.duration) END AS wait_max,
  CAST(round(sum((r.kind = 'wake') * r.weight)) AS INTEGER) AS wake_calls,
  CASE WHEN min(r.kind) = 'wake' THEN CAST(round(sum(max(r.ret, 0) * r.weight)) AS INTEGER)
   END AS woken,
  CAST(round(sum((r.ret BETWEEN -4095 AND -1) * r.weight)) AS INTEGER) AS errors,
  s.ids AS ustack_ids
FROM ranked r JOIN caller_lists t USING (pid, addr, op)
  LEFT JOIN stack_lists s USING (pid, addr, op)
GROUP BY r.pid, r.addr, r.op ORDER BY r.pid, r.addr, r.op;
