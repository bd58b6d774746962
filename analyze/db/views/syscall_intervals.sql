-- syscall_intervals: every recorded system call as an interval, with its
-- name, family and what its arguments mean (the fd of calls that take one,
-- bytes asked for and moved, errno), from the syscall_names table.
-- weight: how many calls of the whole recording this one stands for (1,
-- or above --syscall-rate its window's: docs/schema.md, syscalls).
-- docs/schema.md, syscall_intervals.
SELECT s.syscall_id, s.ts AS start_ts, s.ts + s.duration AS end_ts,
  s.duration, s.pid, s.tid, s.nr,
  COALESCE(n.name, 'syscall_' || s.nr) AS name, n.family,
  -- args[0] as a signed 32-bit int
  CASE WHEN n.fd_arg THEN (((s.arg0 & 4294967295) | -4294967296 *
    ((s.arg0 >> 31) & 1))) END AS fd,
  n.io,
  CASE WHEN n.count_arg THEN s.arg2 END AS bytes_requested,
  CASE WHEN n.io IS NOT NULL AND s.ret >= 0 THEN s.ret END AS bytes_transferred,
  s.ret,
  CASE WHEN s.ret BETWEEN -4095 AND -1 THEN -s.ret END AS errno,
  s.arg0, s.arg1, s.arg2, s.ustack_id, s.weight
FROM syscalls s LEFT JOIN syscall_names n USING (nr);
