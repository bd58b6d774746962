-- thread_states: what each thread did over time, one interval per state
-- (running, runnable, io, sleep, blocked), with why it became runnable
-- and what it waited for. The codes of thread_state_rows are decoded by
-- the lookup tables state_kinds, runnable_reasons and wait_classes, which
-- the importer fills from the correlator's enums. docs/schema.md,
-- thread_states.
SELECT r.tid, r.pid,
  COALESCE(state.name, 'blocked') AS state,
  r.start_ts, r.start_ts + r.duration AS end_ts, r.duration, r.cpu,
  reason.name AS reason,
  r.waker_tid, r.waker_pid,
  class.name AS wait_class,
  r.syscall_nr, r.syscall_id, r.partial
FROM thread_state_rows r
  LEFT JOIN state_kinds state ON state.code = r.state_code
  LEFT JOIN runnable_reasons reason ON reason.code = r.reason_code
  LEFT JOIN wait_classes class ON class.code = r.wait_class_code;
