-- offcpu_intervals: the time threads spent off the CPU, each interval with
-- its wait class, the system call it was in, who woke it, and the
-- innermost kernel and user functions of its stacks.
-- docs/schema.md, offcpu_intervals.
SELECT o.offcpu_id, o.ts - o.duration AS start_ts, o.ts AS end_ts,
  o.duration, o.pid, o.tid, o.state, o.wait_class, o.class_source,
  o.syscall_id, o.syscall_nr, n.name AS syscall, o.waker_tid,
  o.ustack_id, o.kstack_id,
  (SELECT f.name FROM stack_frames sf JOIN frames f USING (frame_id)
   WHERE sf.stack_id = o.kstack_id AND sf.position = 0) AS kernel_function,
  (SELECT f.name FROM stack_frames sf JOIN frames f USING (frame_id)
   WHERE sf.stack_id = o.ustack_id AND sf.position = 0) AS user_function
FROM offcpu o LEFT JOIN syscall_names n ON n.nr = o.syscall_nr;
