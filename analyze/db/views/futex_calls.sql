-- futex_calls: every futex(2) call with its address and command
-- (FUTEX_PRIVATE_FLAG 128 and FUTEX_CLOCK_REALTIME 256 masked off), and
-- whether it waits or wakes; weight as in syscalls. docs/schema.md, futex_calls.
SELECT syscall_id, ts AS start_ts, ts + duration AS end_ts, duration, pid, tid,
  arg0 AS addr, arg1 & 127 AS op,
  CASE arg1 & 127 WHEN 0 THEN 'FUTEX_WAIT' WHEN 1 THEN 'FUTEX_WAKE'
   WHEN 9 THEN 'FUTEX_WAIT_BITSET' WHEN 10 THEN 'FUTEX_WAKE_BITSET'
   ELSE 'op_' || (arg1 & 127) END AS op_name,
  CASE WHEN arg1 & 127 IN (0, 9) THEN 'wait' WHEN arg1 & 127 IN (1, 10) THEN 'wake'
   ELSE 'other' END AS kind,
  (arg1 & 128) <> 0 AS private, ret, ustack_id, weight
FROM syscalls WHERE nr = (SELECT nr FROM syscall_names WHERE name = 'futex');
