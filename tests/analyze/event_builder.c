/* event_builder.c - appends event source records (see event_builder.h). */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "event_builder.h"

void ev_init(struct event_capture *c, uint64_t start_ns, uint64_t end_ns,
	     const char *sources)
{
	memset(c, 0, sizeof(*c));
	c->start_ns = start_ns;
	c->end_ns = end_ns;
	c->sources = sources;
	c->t_min = UINT64_MAX;
}

void ev_free(struct event_capture *c)
{
	pc_buf_free(&c->events);
	pc_buf_free(&c->stats);
	pc_buf_free(&c->meta);
}

static void add(struct event_capture *c, void *rec, size_t len, uint16_t type,
		uint16_t flags, uint64_t ts)
{
	struct pc_rec *h = rec;

	h->type = type;
	h->flags = flags;
	pc_buf_add_rec(&c->events, rec, len, NULL, 0, NULL, 0);
	c->nevents++;
	if (ts < c->t_min)
		c->t_min = ts;
	if (ts > c->t_max)
		c->t_max = ts;
}

void ev_switch_flags(struct event_capture *c, uint64_t ts, uint32_t cpu, uint32_t prev_pid,
		     uint32_t prev_tid, uint32_t prev_state, uint32_t next_pid,
		     uint32_t next_tid, uint16_t flags)
{
	struct pc_rec_switch r = {
		.ts = ts, .cpu = cpu, .prev_state = prev_state, .prev_pid = prev_pid,
		.prev_tid = prev_tid, .next_pid = next_pid, .next_tid = next_tid,
		.prev_prio = 120, .next_prio = 120,
	};

	add(c, &r, sizeof(r), PC_REC_SWITCH, flags, ts);
}

void ev_switch(struct event_capture *c, uint64_t ts, uint32_t cpu, uint32_t prev_pid,
	       uint32_t prev_tid, uint32_t prev_state, uint32_t next_pid, uint32_t next_tid)
{
	ev_switch_flags(c, ts, cpu, prev_pid, prev_tid, prev_state, next_pid, next_tid, 0);
}

void ev_wakeup(struct event_capture *c, uint64_t ts, uint32_t pid, uint32_t tid,
	       uint32_t waker_pid, uint32_t waker_tid, uint32_t cpu, int is_new)
{
	struct pc_rec_wakeup r = {
		.ts = ts, .pid = pid, .tid = tid, .waker_pid = waker_pid,
		.waker_tid = waker_tid, .target_cpu = cpu,
	};

	add(c, &r, sizeof(r), PC_REC_WAKEUP, is_new ? PC_WAKEUP_F_NEW : 0, ts);
}

void ev_sched_gap(struct event_capture *c, uint64_t start, uint64_t end)
{
	struct pc_rec_sched_gap r = { .ts = start, .end_ts = end };

	add(c, &r, sizeof(r), PC_REC_SCHED_GAP, 0, start);
}

static void sched_task(struct event_capture *c, uint16_t type, uint64_t ts, uint32_t pid,
		       uint32_t tid, uint16_t where, uint32_t state, uint64_t runtime_ns,
		       uint64_t run_delay_ns, uint64_t nvcsw)
{
	struct pc_rec_sched_task r = {
		.ts = ts, .pid = pid, .tid = tid, .where = where, .state = state,
		.runtime_ns = runtime_ns, .run_delay_ns = run_delay_ns, .nvcsw = nvcsw,
	};

	add(c, &r, sizeof(r), type, 0, ts);
}

void ev_sched_task(struct event_capture *c, uint64_t ts, uint32_t pid, uint32_t tid,
		   uint16_t where, uint32_t state, uint64_t runtime_ns)
{
	sched_task(c, PC_REC_SCHED_TASK, ts, pid, tid, where, state, runtime_ns, 0, 0);
}

void ev_sched_task_delay(struct event_capture *c, uint16_t type, uint64_t ts, uint32_t pid,
			 uint32_t tid, uint16_t where, uint32_t state, uint64_t runtime_ns,
			 uint64_t run_delay_ns, uint64_t nvcsw)
{
	sched_task(c, type, ts, pid, tid, where, state, runtime_ns, run_delay_ns, nvcsw);
}

void ev_sched_task_close(struct event_capture *c, uint64_t ts, uint32_t pid, uint32_t tid,
			 uint16_t where, uint32_t state, uint64_t runtime_ns)
{
	sched_task(c, PC_REC_SCHED_TASK_CLOSE, ts, pid, tid, where, state, runtime_ns, 0, 0);
}

void ev_offcpu(struct event_capture *c, uint64_t end, uint64_t duration, uint32_t pid,
	       uint32_t tid, uint32_t state, uint32_t ustack, uint32_t kstack,
	       uint32_t waker_tid)
{
	struct pc_rec_offcpu r = {
		.ts = end, .duration = duration, .pid = pid, .tid = tid, .state = state,
		.ustack = ustack, .kstack = kstack, .waker_tid = waker_tid,
	};

	add(c, &r, sizeof(r), PC_REC_OFFCPU, 0, end);
}

void ev_offcpu_woken(struct event_capture *c, uint64_t end, uint64_t duration, uint32_t pid,
		     uint32_t tid, uint32_t state, uint32_t waker_pid, uint32_t waker_tid)
{
	struct pc_rec_offcpu r = {
		.ts = end, .duration = duration, .pid = pid, .tid = tid, .state = state,
		.ustack = PC_STACK_NONE, .kstack = PC_STACK_NONE, .waker_tid = waker_tid,
		.waker_pid = waker_pid,
	};

	add(c, &r, sizeof(r), PC_REC_OFFCPU, 0, end);
}

void ev_fork(struct event_capture *c, uint64_t ts, uint32_t parent_pid,
	     uint32_t parent_tid, uint32_t child_pid, uint32_t child_tid, int thread)
{
	struct pc_rec_fork r = {
		.ts = ts, .parent_pid = parent_pid, .parent_tid = parent_tid,
		.child_pid = child_pid, .child_tid = child_tid,
	};

	add(c, &r, sizeof(r), PC_REC_FORK, thread ? PC_FORK_F_THREAD : 0, ts);
}

void ev_syscall_stack(struct event_capture *c, uint64_t ts, uint64_t duration,
		      uint32_t pid, uint32_t tid, uint32_t nr, int64_t ret, uint64_t a0,
		      uint64_t a1, uint64_t a2, uint32_t ustack)
{
	struct pc_rec_syscall r = {
		.ts = ts, .duration = duration, .pid = pid, .tid = tid, .nr = nr,
		.ustack = ustack, .ret = ret, .args = { a0, a1, a2 },
	};

	add(c, &r, sizeof(r), PC_REC_SYSCALL, 0, ts + duration);
}

void ev_syscall_io(struct event_capture *c, uint64_t ts, uint64_t duration, uint32_t pid,
		   uint32_t tid, uint32_t nr, int64_t ret, uint64_t io_calls)
{
	struct pc_rec_syscall r = {
		.ts = ts, .duration = duration, .pid = pid, .tid = tid, .nr = nr,
		.ustack = PC_STACK_NONE, .ret = ret, .io_calls = io_calls,
	};

	add(c, &r, sizeof(r), PC_REC_SYSCALL, 0, ts + duration);
}

void ev_syscall(struct event_capture *c, uint64_t ts, uint64_t duration, uint32_t pid,
		uint32_t tid, uint32_t nr, int64_t ret, uint64_t a0, uint64_t a1,
		uint64_t a2)
{
	ev_syscall_stack(c, ts, duration, pid, tid, nr, ret, a0, a1, a2, PC_STACK_NONE);
}

void ev_syscall_window(struct event_capture *c, uint64_t ts, uint64_t open_ns,
		       uint64_t period_ns)
{
	struct pc_rec_syscall_window r = { .ts = ts, .open_ns = open_ns, .period_ns = period_ns };

	add(c, &r, sizeof(r), PC_REC_SYSCALL_WINDOW, 0, ts);
}

void ev_block(struct event_capture *c, uint64_t ts, uint64_t queue_ns,
	      uint64_t service_ns, uint32_t pid, uint32_t tid, uint32_t dev, uint32_t op,
	      uint64_t sector, uint32_t bytes)
{
	struct pc_rec_block r = {
		.ts = ts, .queue_ns = queue_ns, .service_ns = service_ns, .pid = pid,
		.tid = tid, .dev = dev, .op = op, .sector = sector, .bytes = bytes,
	};

	add(c, &r, sizeof(r), PC_REC_BLOCK, 0, ts);
}

void ev_thread_metric(struct event_capture *c, uint64_t window_start, uint64_t window_ns,
		      uint32_t pid, uint32_t tid, uint16_t klass, uint16_t flags,
		      uint64_t count, uint64_t total_ns)
{
	struct pc_rec_thread_metric r = {
		.window_start = window_start, .window_ns = window_ns, .pid = pid, .tid = tid,
		.klass = klass, .key = PC_METRIC_NO_KEY, .count = count, .total_ns = total_ns,
	};
	uint64_t mean = count ? total_ns / count : 0;
	int b = 0;

	while (b < PC_METRIC_HIST - 1 && mean >= (1024ull << b))
		b++;
	r.hist[b] = (uint32_t)count;
	add(c, &r, sizeof(r), PC_REC_THREAD_METRIC, flags, window_start + window_ns);
}

void ev_socket_v4(struct event_capture *c, uint64_t ts, uint32_t pid, uint32_t tid,
		  int32_t fd, uint16_t flags, const char *saddr, uint16_t sport,
		  const char *daddr, uint16_t dport, uint64_t cookie)
{
	struct pc_rec_socket r = {
		.ts = ts, .pid = pid, .tid = tid, .fd = fd, .family = 2, .protocol = 6,
		.cookie = cookie, .sport = sport, .dport = dport,
	};

	inet_pton(AF_INET, saddr, r.saddr);
	inet_pton(AF_INET, daddr, r.daddr);
	add(c, &r, sizeof(r), PC_REC_SOCKET, flags, ts);
}

void ev_request(struct event_capture *c, const struct ev_request *q)
{
	struct pc_rec_request r = {
		.start_ts = q->start, .end_ts = q->end, .conn_ts = q->conn_ts, .cookie = q->cookie,
		.first_write_ns = 1, .ready_ns = q->ready_ns, .lower_ns = q->lower_ns,
		.bytes_in = q->bytes_in ? q->bytes_in : 100, .bytes_out = 300, .pid = q->pid, .pickup_tid = q->tid,
		.other_tid = q->other_tid, .fd = q->fd,
		.number = q->number, .reads = 1, .writes = 1, .family = 2, .lport = q->lport,
		.origin = q->origin,
	};
	uint16_t flags = (q->ready_ns ? PC_REQUEST_F_READY : 0) |
			 (q->lower_ns ? PC_REQUEST_F_LOWER : 0);

	add(c, &r, sizeof(r), PC_REC_REQUEST, flags, q->start);
}

void ev_request_window(struct event_capture *c, uint64_t ts, uint64_t open_ns,
		       uint64_t period_ns, uint64_t started, uint64_t gap_conns,
		       uint64_t gap_bytes, uint64_t snap_start, uint64_t snap_end)
{
	struct pc_rec_request_window r = { .ts = ts, .open_ns = open_ns, .period_ns = period_ns,
					   .started = started, .gap_conns = gap_conns,
					   .gap_bytes = gap_bytes, .snap_start = snap_start,
					   .snap_end = snap_end };

	add(c, &r, sizeof(r), PC_REC_REQUEST_WINDOW, 0, ts);
}

void ev_request_mark(struct event_capture *c, uint64_t ts, uint64_t cookie, uint64_t conn_ts,
		     uint32_t pid, uint64_t read, uint32_t kind)
{
	struct pc_rec_request_mark r = { .ts = ts, .cookie = cookie, .conn_ts = conn_ts, .pid = pid,
					 .copied = (uint32_t)read, .read = kind ? read : 0,
					 .kind = kind };

	add(c, &r, sizeof(r), PC_REC_REQUEST_MARK, 0, ts);
}

void ev_request_batch(struct event_capture *c, const struct ev_request *q, uint8_t n,
		      uint8_t claimed)
{
	struct {
		struct pc_rec_request_batch h;
		struct pc_request_entry e[PC_REQUEST_BATCH_MAX];
	} b = {
		.h.base_ts = q[0].start, .h.conn_ts = q[0].conn_ts, .h.cookie = q[0].cookie,
		.h.pid = q[0].pid, .h.fd = q[0].fd, .h.number = q[0].number, .h.family = 2,
		.h.lport = q[0].lport, .h.origin = q[0].origin, .h.n = claimed,
	};

	for (uint8_t i = 0; i < n && i < PC_REQUEST_BATCH_MAX; i++)
		b.e[i] = (struct pc_request_entry){
			.start_off = (uint32_t)(q[i].start - q[0].start),
			.first_write_ns = 1, .end_ns = (uint32_t)(q[i].end - q[i].start),
			.ready_ns = (uint32_t)q[i].ready_ns, .lower_ns = (uint32_t)q[i].lower_ns,
			.bytes_in = 100, .bytes_out = 300, .pickup_tid = q[i].tid,
			.other_tid = q[i].other_tid, .reads = 1, .writes = 1,
			.flags = (q[i].ready_ns ? PC_REQUEST_F_READY : 0) |
				 (q[i].lower_ns ? PC_REQUEST_F_LOWER : 0),
		};
	add(c, &b, sizeof(b.h) + n * sizeof(b.e[0]), PC_REC_REQUEST_BATCH, 0, q[0].start);
}

void ev_socket_snapshot(struct event_capture *c, uint64_t ts, uint32_t pid, int32_t fd,
			uint16_t flags, const char *laddr, uint16_t lport, const char *raddr,
			uint16_t rport, uint32_t state, uint64_t inode)
{
	int v6 = strchr(laddr, ':') != NULL;
	struct pc_rec_socket r = {
		.ts = ts, .pid = pid, .tid = pid, .fd = fd, .family = v6 ? 10 : 2,
		.protocol = 6, .cookie = inode, .sport = lport, .dport = rport,
		.state = state,
	};

	inet_pton(v6 ? AF_INET6 : AF_INET, laddr, r.saddr);
	inet_pton(v6 ? AF_INET6 : AF_INET, raddr, r.daddr);
	add(c, &r, sizeof(r), PC_REC_SOCKET, flags, ts);
}

void ev_tcp_state_v6(struct event_capture *c, uint64_t ts, uint64_t cookie,
		     const char *saddr, uint16_t sport, const char *daddr, uint16_t dport,
		     uint16_t oldstate, uint16_t newstate)
{
	struct pc_rec_tcp_state r = {
		.ts = ts, .cookie = cookie, .family = 10, .oldstate = oldstate,
		.newstate = newstate, .sport = sport, .dport = dport,
	};

	inet_pton(AF_INET6, saddr, r.saddr);
	inet_pton(AF_INET6, daddr, r.daddr);
	add(c, &r, sizeof(r), PC_REC_TCP_STATE, 0, ts);
}

void ev_tcp_retrans_v4(struct event_capture *c, uint64_t ts, uint64_t cookie,
		       const char *saddr, uint16_t sport, const char *daddr, uint16_t dport,
		       uint16_t state)
{
	struct pc_rec_tcp_retrans r = {
		.ts = ts, .cookie = cookie, .family = 2, .state = state,
		.sport = sport, .dport = dport,
	};

	inet_pton(AF_INET, saddr, r.saddr);
	inet_pton(AF_INET, daddr, r.daddr);
	add(c, &r, sizeof(r), PC_REC_TCP_RETRANS, 0, ts);
}

void ev_lock(struct event_capture *c, uint64_t ts, uint64_t duration, uint32_t pid,
	     uint32_t tid, uint64_t lock, uint32_t kstack)
{
	struct pc_rec_lock r = {
		.ts = ts, .duration = duration, .pid = pid, .tid = tid, .lock = lock,
		.flags = 1, .kstack = kstack,
	};

	add(c, &r, sizeof(r), PC_REC_LOCK, 0, ts);
}

void ev_mutex(struct event_capture *c, uint64_t ts, uint64_t duration, uint32_t pid,
	      uint32_t tid, uint64_t addr, uint32_t ustack)
{
	struct pc_rec_mutex r = {
		.ts = ts, .duration = duration, .pid = pid, .tid = tid, .addr = addr,
		.ustack = ustack,
	};

	add(c, &r, sizeof(r), PC_REC_MUTEX, 0, ts);
}

void ev_fault(struct event_capture *c, uint64_t ts, uint32_t pid, uint32_t tid,
	      uint64_t addr, uint64_t ip, uint32_t weight)
{
	struct pc_rec_fault r = {
		.ts = ts, .pid = pid, .tid = tid, .addr = addr, .ip = ip,
		.error_code = 4, .weight = weight,
	};

	add(c, &r, sizeof(r), PC_REC_FAULT, 0, ts);
}

void ev_usdt_probe(struct event_capture *c, unsigned id, const char *file, const char *name,
		   uint64_t hits)
{
	char key[64], spec[256];

	snprintf(spec, sizeof(spec), "usdt:%s:%s", file, name);
	snprintf(key, sizeof(key), "probe.%u.spec", id);
	pc_buf_add_kv(&c->meta, key, spec);
	snprintf(key, sizeof(key), "probe.%u.kind", id);
	pc_buf_add_kv(&c->meta, key, "usdt");
	snprintf(key, sizeof(key), "probe.%u.file", id);
	pc_buf_add_kv(&c->meta, key, file);
	snprintf(key, sizeof(key), "probe.%u.name", id);
	pc_buf_add_kv(&c->meta, key, name);
	snprintf(key, sizeof(key), "probe.%u.args", id);
	pc_buf_add_kv(&c->meta, key, "usdt");
	snprintf(key, sizeof(key), "probe.%u.hits", id);
	pc_buf_add_kv_u64(&c->stats, key, hits);
}

void ev_entry_probe(struct event_capture *c, unsigned id, const char *file, const char *name,
		    uint64_t hits, int late)
{
	struct pc_buf *desc = late ? &c->stats : &c->meta;
	char key[64], spec[256];

	snprintf(spec, sizeof(spec), "uprobe:%s:%s", file, name);
	snprintf(key, sizeof(key), "probe.%u.spec", id);
	pc_buf_add_kv(desc, key, spec);
	snprintf(key, sizeof(key), "probe.%u.kind", id);
	pc_buf_add_kv(desc, key, "entry");
	snprintf(key, sizeof(key), "probe.%u.file", id);
	pc_buf_add_kv(desc, key, file);
	snprintf(key, sizeof(key), "probe.%u.name", id);
	pc_buf_add_kv(desc, key, name);
	snprintf(key, sizeof(key), "probe.%u.origin", id);
	pc_buf_add_kv(desc, key, "gc:go");
	snprintf(key, sizeof(key), "probe.%u.hits", id);
	pc_buf_add_kv_u64(&c->stats, key, hits);
}

void ev_probe_call(struct event_capture *c, uint64_t ts, uint64_t duration, uint32_t pid,
		   uint32_t tid, unsigned id)
{
	struct pc_rec_probe r = {
		.h.flags = PC_PROBE_F_TIMED, .ts = ts, .duration = duration, .pid = pid,
		.tid = tid, .probe = id, .ustack = PC_STACK_NONE,
	};

	add(c, &r, sizeof(r), PC_REC_PROBE, PC_PROBE_F_TIMED, ts);
}

void ev_probe_hit(struct event_capture *c, uint64_t ts, uint32_t pid, uint32_t tid,
		  unsigned id, uint64_t arg0)
{
	struct pc_rec_probe r = {
		.ts = ts, .pid = pid, .tid = tid, .probe = id, .ustack = PC_STACK_NONE,
		.nargs = 1, .args = { arg0 },
	};

	add(c, &r, sizeof(r), PC_REC_PROBE, 0, ts);
}

void ev_sample(struct event_capture *c, uint64_t ts, uint32_t pid, uint32_t tid)
{
	struct pc_rec_sample r = {
		.ts = ts, .pid = pid, .tid = tid, .ustack = PC_STACK_NONE,
		.kstack = PC_STACK_NONE,
	};

	add(c, &r, sizeof(r), PC_REC_SAMPLE, 0, ts);
}

void ev_sample_stack(struct event_capture *c, uint64_t ts, uint32_t pid, uint32_t tid,
		     uint32_t ustack, uint32_t kstack)
{
	struct pc_rec_sample r = {
		.ts = ts, .pid = pid, .tid = tid, .ustack = ustack, .kstack = kstack,
	};

	add(c, &r, sizeof(r), PC_REC_SAMPLE, 0, ts);
}
