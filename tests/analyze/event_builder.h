/* event_builder.h - event source records (format/SPEC.md 2.3) for
 * synthetic captures: tests append records in the order a recorder would
 * have written them, then build_event_capture (capture_builder.h) wraps
 * them in a complete capture. Times are ns; pids/tids are free. */
#ifndef TESTS_EVENT_BUILDER_H
#define TESTS_EVENT_BUILDER_H

#include <stdint.h>

#include "perfcap_format.h"

#define MS 1000000ull
#define SEC 1000000000ull

struct event_capture {
	struct pc_buf events;     /* the records, in order */
	uint64_t nevents;
	uint64_t t_min, t_max;
	uint64_t start_ns;        /* META record.start_ns; 0: not written */
	uint64_t end_ns;          /* STATS record.end_ns; 0: not written */
	const char *sources;      /* META sources; NULL: not written */
	int per_chunk;            /* records per EVENTS chunk; 0: all in one */
	struct pc_buf stats;      /* extra STATS pairs (pc_buf_add_kv) */
	struct pc_buf meta;       /* extra META pairs (pc_buf_add_kv) */
};

void ev_init(struct event_capture *c, uint64_t start_ns, uint64_t end_ns,
	     const char *sources);
void ev_free(struct event_capture *c);

void ev_switch(struct event_capture *c, uint64_t ts, uint32_t cpu, uint32_t prev_pid,
	       uint32_t prev_tid, uint32_t prev_state, uint32_t next_pid, uint32_t next_tid);
/* ev_switch with the record's PC_SWITCH_F_* flags (which side was traced). */
void ev_switch_flags(struct event_capture *c, uint64_t ts, uint32_t cpu, uint32_t prev_pid,
		     uint32_t prev_tid, uint32_t prev_state, uint32_t next_pid,
		     uint32_t next_tid, uint16_t flags);
void ev_wakeup(struct event_capture *c, uint64_t ts, uint32_t pid, uint32_t tid,
	       uint32_t waker_pid, uint32_t waker_tid, uint32_t cpu, int is_new);
/* (1.12) a gap between the sched source's windows, and a thread as the
 * next window opened (where: PC_SCHED_TASK_*, 0 blocked in state). */
void ev_sched_gap(struct event_capture *c, uint64_t start, uint64_t end);
void ev_sched_task(struct event_capture *c, uint64_t ts, uint32_t pid, uint32_t tid,
		   uint16_t where, uint32_t state, uint64_t runtime_ns);
void ev_sched_task_close(struct event_capture *c, uint64_t ts, uint32_t pid, uint32_t tid,
			 uint16_t where, uint32_t state, uint64_t runtime_ns);
/* Either (type PC_REC_SCHED_TASK*), with the run queue and (1.16)
 * voluntary switch counters too. */
void ev_sched_task_delay(struct event_capture *c, uint16_t type, uint64_t ts, uint32_t pid,
			 uint32_t tid, uint16_t where, uint32_t state, uint64_t runtime_ns,
			 uint64_t run_delay_ns, uint64_t nvcsw);
void ev_offcpu(struct event_capture *c, uint64_t end, uint64_t duration, uint32_t pid,
	       uint32_t tid, uint32_t state, uint32_t ustack, uint32_t kstack,
	       uint32_t waker_tid);
/* An OFFCPU record without stacks ended by a task's wakeup (format 1.4:
 * the waker's pid too, in task context). */
void ev_offcpu_woken(struct event_capture *c, uint64_t end, uint64_t duration, uint32_t pid,
		     uint32_t tid, uint32_t state, uint32_t waker_pid, uint32_t waker_tid);
void ev_fork(struct event_capture *c, uint64_t ts, uint32_t parent_pid,
	     uint32_t parent_tid, uint32_t child_pid, uint32_t child_tid, int thread);
void ev_syscall(struct event_capture *c, uint64_t ts, uint64_t duration, uint32_t pid,
		uint32_t tid, uint32_t nr, int64_t ret, uint64_t a0, uint64_t a1,
		uint64_t a2);
/* (1.15) a call with the thread's read and write calls so far at its exit
 * (syscr + syscw), no arguments. */
void ev_syscall_io(struct event_capture *c, uint64_t ts, uint64_t duration, uint32_t pid,
		   uint32_t tid, uint32_t nr, int64_t ret, uint64_t io_calls);
/* (1.14) the syscall program's window at ts: calls paired in [ts, ts +
 * open_ns) stand for the period. Written before its calls. */
void ev_syscall_window(struct event_capture *c, uint64_t ts, uint64_t open_ns,
		       uint64_t period_ns);
/* ev_syscall with a user stack id (PC_STACK_NONE: none). */
void ev_syscall_stack(struct event_capture *c, uint64_t ts, uint64_t duration,
		      uint32_t pid, uint32_t tid, uint32_t nr, int64_t ret, uint64_t a0,
		      uint64_t a1, uint64_t a2, uint32_t ustack);
void ev_block(struct event_capture *c, uint64_t ts, uint64_t queue_ns,
	      uint64_t service_ns, uint32_t pid, uint32_t tid, uint32_t dev, uint32_t op,
	      uint64_t sector, uint32_t bytes);
void ev_socket_v4(struct event_capture *c, uint64_t ts, uint32_t pid, uint32_t tid,
		  int32_t fd, uint16_t flags, const char *saddr, uint16_t sport,
		  const char *daddr, uint16_t dport, uint64_t cookie);
/* A SOCKET record of the recorder's /proc snapshots (format 1.4): flag
 * PC_SOCK_F_SNAPSHOT (| PC_SOCK_F_PEER), TCP state, inode as cookie;
 * IPv6 when an address holds ':'. */
/* A REQUEST record (format 1.7, the req source): one request of
 * connection (cookie, conn_ts) on fd of pid, served by tid from start to
 * end, its first write at start + 1 ns; ready_ns / lower_ns 0: flag
 * READY / LOWER not set. */
struct ev_request {
	uint64_t cookie, conn_ts, start, end, ready_ns, lower_ns;
	uint32_t pid, tid, number;
	uint32_t other_tid;      /* another thread that served it, or 0 */
	int32_t fd;
	uint8_t origin;
	uint16_t lport;
	uint32_t bytes_in;       /* 0: 100 */
};
void ev_request(struct event_capture *c, const struct ev_request *q);
/* (1.10) a second whose requests were followed in a window at ts; (1.16)
 * gap_conns connections opened and closed between windows read gap_bytes,
 * the streams' snapshots at snap_start and snap_end (0: none). */
void ev_request_window(struct event_capture *c, uint64_t ts, uint64_t open_ns,
		       uint64_t period_ns, uint64_t started, uint64_t gap_conns,
		       uint64_t gap_bytes, uint64_t snap_start, uint64_t snap_end);
/* (1.15) a connection's byte stream: read bytes (copied, its low 32 bits)
 * at a mark of kind (enum pc_mark_kind; 0: a 1.15 mark, copied only). */
void ev_request_mark(struct event_capture *c, uint64_t ts, uint64_t cookie, uint64_t conn_ts,
		     uint32_t pid, uint64_t read, uint32_t kind);
/* A REQUEST_BATCH of the n consecutive requests q[0..n) of q[0]'s
 * connection (number q[0].number on), its header claiming `claimed`
 * entries (n, or a lie for the hostile tests). */
void ev_request_batch(struct event_capture *c, const struct ev_request *q, uint8_t n,
		      uint8_t claimed);
void ev_socket_snapshot(struct event_capture *c, uint64_t ts, uint32_t pid, int32_t fd,
			uint16_t flags, const char *laddr, uint16_t lport, const char *raddr,
			uint16_t rport, uint32_t state, uint64_t inode);
void ev_tcp_state_v6(struct event_capture *c, uint64_t ts, uint64_t cookie,
		     const char *saddr, uint16_t sport, const char *daddr, uint16_t dport,
		     uint16_t oldstate, uint16_t newstate);
void ev_tcp_retrans_v4(struct event_capture *c, uint64_t ts, uint64_t cookie,
		       const char *saddr, uint16_t sport, const char *daddr, uint16_t dport,
		       uint16_t state);
void ev_lock(struct event_capture *c, uint64_t ts, uint64_t duration, uint32_t pid,
	     uint32_t tid, uint64_t lock, uint32_t kstack);
void ev_mutex(struct event_capture *c, uint64_t ts, uint64_t duration, uint32_t pid,
	      uint32_t tid, uint64_t addr, uint32_t ustack);
void ev_fault(struct event_capture *c, uint64_t ts, uint32_t pid, uint32_t tid,
	      uint64_t addr, uint64_t ip, uint32_t weight);
/* A THREAD_METRIC record (PC_METRIC_F_WAIT in flags: the waits source's)
 * of count calls or waits summing total_ns, all in the histogram bucket of
 * their mean; no key. */
void ev_thread_metric(struct event_capture *c, uint64_t window_start, uint64_t window_ns,
		      uint32_t pid, uint32_t tid, uint16_t klass, uint16_t flags,
		      uint64_t count, uint64_t total_ns);
/* A USDT probe of the recording: META probe.ID.{spec,kind,file,name,args}
 * and STATS probe.ID.hits (the kernel's exact count). name is
 * PROVIDER:NAME. */
void ev_usdt_probe(struct event_capture *c, unsigned id, const char *file, const char *name,
		   uint64_t hits);
/* An entry probe (kind entry: a Go function's entry, -e gc) on function
 * name of file, described in META, or in STATS when late (placed after
 * the META: a traced process exec'd the runtime), hits in STATS. */
void ev_entry_probe(struct event_capture *c, unsigned id, const char *file, const char *name,
		    uint64_t hits, int late);
/* A PROBE record of a timed call of uprobe id (flag TIMED, no stack). */
void ev_probe_call(struct event_capture *c, uint64_t ts, uint64_t duration, uint32_t pid,
		   uint32_t tid, unsigned id);
/* A PROBE record of a USDT hit of probe id (no stack), its first argument arg0. */
void ev_probe_hit(struct event_capture *c, uint64_t ts, uint32_t pid, uint32_t tid,
		  unsigned id, uint64_t arg0);
void ev_sample(struct event_capture *c, uint64_t ts, uint32_t pid, uint32_t tid);
/* ev_sample with stacks (capture_builder.h STACK_*; PC_STACK_NONE: none). */
void ev_sample_stack(struct event_capture *c, uint64_t ts, uint32_t pid, uint32_t tid,
		     uint32_t ustack, uint32_t kstack);

#endif /* TESTS_EVENT_BUILDER_H */
