-- runq_latency: how long each thread waited for a CPU once runnable: the
-- complete runnable intervals of thread_states, from ready to switch-in.
-- docs/schema.md, runq_latency.
SELECT tid, pid, start_ts AS ready_ts, end_ts AS switch_in_ts,
  duration AS latency, cpu, reason, waker_tid, waker_pid
FROM thread_states WHERE state = 'runnable' AND partial = 0;
