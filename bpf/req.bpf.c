// SPDX-License-Identifier: GPL-2.0-only
/* req.bpf.c - kernel side of the req source: requests on the TCP
 * connections of traced processes, inferred in the kernel, one record per
 * request instead of three or four system call records.
 *
 * The socket layer's own tracepoints say, for every receive and send on a
 * socket, which socket and how many bytes (sock_recv_length,
 * sock_send_length: read, recv*, write, send*, writev, sendfile and
 * splice all pass there). Per socket (`reqs`, socket storage; the struct
 * sock address is the request's cookie, as the SOCKET records') a small
 * state machine applies the rule the analyzer applies to system call records
 * (docs/schema.md, requests): a read that returns data and follows a
 * write, or is the connection's first, starts a request on the reading
 * thread; the writes that follow answer it. The previous request is
 * closed then, when it got at least one write. A read of 0 bytes (the
 * peer's FIN) or the socket's close (inet_sock_set_state to TCP_CLOSE)
 * ends the open request and, at close, forgets the socket.
 *
 * Batches: a closed request becomes a 44-byte entry of its socket's batch
 * (struct perfcap_request_batch, in the socket storage), sent as one
 * record when it holds 8, when its first request is a second old at the
 * next one, and at the connection's end; a request a value of which does
 * not fit an entry goes alone (struct perfcap_request). A third of the
 * bytes and an eighth of the ring's reservations: the recorder's CPU per
 * request is halved. Batches not yet sent and requests still open when
 * the recording ends are read by user space through an iterator
 * (dump_open).
 *
 * Readiness: sk_data_ready fires when data is queued on a TCP socket (in
 * softirq). The first arrival after a request's last read is the next
 * request's arrival: its ready_ts, so its queueing (arrival to pickup) is
 * known without recording epoll at all.
 *
 * Cost per call: a protocol test, the pid filter, a socket storage lookup
 * and a few stores; an entry per request, a ring record per 8. sk_data_ready and TCP
 * state changes of sockets without a state (untraced processes') cost one
 * load of the socket's storage pointer.
 *
 * Only tp_btf programs: no tracefs, kprobes or trampolines.
 */
#include "perfcap_common.bpf.h"
#include "linux_abi.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* The state of one socket (`reqs`). */
struct perfcap_req_state {
	__u64 pending_ready;       /* first data arrival since the last read, 0: none */
	__u64 prev_end;            /* the last sent request's end, 0: none yet */
	__u8  prev_io;             /* 0: no call yet, 'r', 'w', '?': not known (windows) */
	__u8  open;                /* a request is open (r holds it) */
	__u8  closed;              /* EOF seen: no more requests */
	__u8  no_lower;            /* prev_end not known: the next request has no lower bound */
	__u8  seqs_known;          /* seq_copied and seq_write were noted */
	__u32 epoch;               /* the window it was last followed in (req_epoch) */
	__u32 seq_copied;          /* windows: the reader's and writer's TCP positions */
	__u32 seq_write;           /* after the last call followed */
	__u8  followed;            /* windows: a call of it was made in a window */
	__u8  reserved[3];
	__u32 mark_epoch;          /* the period of its last mark (req_mark_epoch) */
	__u64 snap_read;           /* its read count at the last snapshot it moved in */
	struct perfcap_request r;  /* the open request (and the connection's ids) */
	struct perfcap_request_batch b; /* sent requests not yet in the ring */
};

/* Socket storage: found from the socket itself, freed with it; a socket
 * with none (every socket of an untraced process) costs one load. */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct perfcap_req_state);
} reqs SEC(".maps");

/* Local ports on which traced processes answered requests. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PERFCAP_REQ_PORTS);
	__type(key, __u16);
	__type(value, __u8);
} req_ports SEC(".maps");

/* Counters read by user space (STATS req.*); SENT is bumped for every
 * request (per CPU: a shared one bounced between the server's CPUs). */
PC_COUNTERS(req_counts, PERFCAP_REQ_CNT_NR);

static __always_inline void req_count(__u32 counter)
{
	pc_counter_add(&req_counts, counter, 1);
}

/* Windows (record/sources/source_req.c): with req_windowed, user space
 * moves req_phase OPEN -> DRAIN -> OFF each period and starts each OPEN
 * with a new req_epoch. Without, the phase stays OPEN and the epoch 0.
 * The phase is OFF until every program is attached: a receive followed
 * while the sends were not yet would merge requests. */
const volatile bool req_windowed = false;
volatile __u32 req_phase = PERFCAP_REQ_OFF;
volatile __u32 req_epoch;
/* Moved by user space at each period's start (windows only): a state's
 * first call in a window of a period writes a REQUEST_MARK, when
 * req_marking (the period or the one before has a window: between two
 * periods followed whole no mark is of use). */
volatile __u32 req_mark_epoch;
volatile bool req_marking;
/* The period start a snapshot (snap_streams) stands at. */
volatile __u64 req_snap_ts;
/* The last write of a followed request during DRAIN (user space ends a
 * drain that went quiet, see source_req.c drained()). */
volatile __u64 req_drain_write;

/* The reader's and the writer's positions in sk's byte streams. */
static __always_inline bool tcp_seqs(struct sock *sk, __u32 *copied, __u32 *written,
				     __u32 *data_segs_out)
{
	struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);

	if (!tp)
		return false;
	*copied = tp->copied_seq;
	*written = tp->write_seq;
	*data_segs_out = tp->data_segs_out;
	return true;
}

/* After a followed call: where the streams are (windows only). */
static __always_inline void note_seqs(struct perfcap_req_state *st, struct sock *sk)
{
	__u32 segs;

	if (req_windowed)
		st->seqs_known = tcp_seqs(sk, &st->seq_copied, &st->seq_write, &segs);
}

static __always_inline void settle_earlier(struct perfcap_req_state *st, bool known,
					   bool copied_moved, bool written_moved, __u16 why);

/* Where sk's reader is in its byte stream, d_copied bytes (the call being
 * made) before now: the bytes read since the open (bytes_received less
 * what is queued unread) and copied_seq. */
static __always_inline bool stream_at(const struct sock *sk, __u32 d_copied, __u64 *read,
				      __u32 *copied)
{
	struct tcp_sock *tp = bpf_skc_to_tcp_sock((void *)sk);

	if (!tp)
		return false;
	*copied = tp->copied_seq - d_copied;
	*read = tp->bytes_received - (__u32)(tp->rcv_nxt - tp->copied_seq) - d_copied;
	return true;
}

/* A mark of st's connection (its header, ids and kind; the stream's
 * counts are the caller's: stream_at). */
static __always_inline void mark_of(struct perfcap_request_mark *m,
				    const struct perfcap_req_state *st, __u32 kind, __u64 ts)
{
	pc_header(&m->h, PERFCAP_EV_REQUEST_MARK, ts);
	m->cookie = st->r.cookie;
	m->conn_ts = st->r.conn_ts;
	m->pid = st->r.pid;
	m->kind = kind;
	m->reserved = 0;
}

/* Where st's byte stream is (struct perfcap_request_mark). A lost mark
 * only costs the connection its pace in that period (the analyzer weighs
 * its requests by time). */
static __always_inline void send_mark(const struct perfcap_req_state *st, const struct sock *sk,
				      __u32 d_copied, __u32 kind)
{
	void *ring = pc_ring(PERFCAP_SRC_REQ);
	struct perfcap_request_mark *m;
	__u64 read;
	__u32 copied;

	if (!ring || !stream_at(sk, d_copied, &read, &copied))
		return;
	m = pc_reserve(ring, PERFCAP_SRC_REQ, sizeof(*m));
	if (!m)
		return;
	mark_of(m, st, kind, bpf_ktime_get_ns());
	m->copied = copied;
	m->read = read;
	pc_submit(ring, m);
}

/* Windows: a call on st in a window; its first in the period marks where
 * its stream is. */
static __always_inline void note_window_call(struct perfcap_req_state *st, const struct sock *sk,
					     __u32 d_copied)
{
	__u32 mark_epoch = req_mark_epoch;

	st->followed = 1;
	if (!req_marking || st->mark_epoch == mark_epoch)
		return;
	st->mark_epoch = mark_epoch;
	send_mark(st, sk, d_copied, PERFCAP_MARK_PERIOD);
}

/* Is st followed in the current window? A state from an earlier one is
 * brought in during OPEN: its open request is settled (settle_earlier),
 * and what it knew of the conversation (the last call, the previous
 * request's end, a pending arrival) is kept only if nothing moved on the
 * socket since it was last followed (the call being made, d_copied or
 * d_written bytes, aside). */
static __always_inline bool in_window(struct perfcap_req_state *st, struct sock *sk, __u32 phase,
				      __u32 d_copied, __u32 d_written)
{
	__u32 epoch = req_epoch, copied, written, segs;
	bool same;

	if (req_windowed && phase == PERFCAP_REQ_OPEN)
		note_window_call(st, sk, d_copied);
	if (st->epoch == epoch)
		return true;
	if (phase != PERFCAP_REQ_OPEN)
		return false;
	same = tcp_seqs(sk, &copied, &written, &segs);
	if (same && st->seqs_known) { /* the socket as it was last followed? */
		bool cm = copied - d_copied != st->seq_copied;
		bool wm = written - d_written != st->seq_write;

		settle_earlier(st, true, cm, wm, 0);
		same = !cm && !wm;
	} else {
		settle_earlier(st, false, false, false, 0);
		if (same)           /* never followed a call: nothing answered yet? */
			same = !st->prev_io && !segs;
	}
	if (!same) {
		st->prev_io = '?';
		st->prev_end = 0;
		st->no_lower = 1;
		st->pending_ready = 0;
	}
	st->epoch = epoch;
	return true;
}

static __always_inline bool tcp_inet(const struct sock *sk)
{
	__u16 family = sk->__sk_common.skc_family;

	return sk->sk_protocol == IPPROTO_TCP && (family == AF_INET || family == AF_INET6);
}

/* The socket's fd from the system call the current task is in, -1 when
 * the call is none of those taking it first (io_uring, kernel senders). */
static __always_inline __s32 current_fd(struct task_struct *task)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	long nr = regs->orig_ax;   /* direct loads: no helper call each */

	switch (nr) {
	case NR_read: case NR_write: case NR_readv: case NR_writev: case NR_sendfile:
	case NR_sendto: case NR_recvfrom: case NR_sendmsg: case NR_recvmsg:
	case NR_recvmmsg: case NR_sendmmsg:
		return (__s32)regs->di;
	}
	req_count(PERFCAP_REQ_CNT_FD_UNKNOWN);
	return -1;
}

/* sk's state, NULL when it has none. A socket with no BPF storage at all
 * (every socket of an untraced process, unless another tool stores some)
 * is told by one load, without the helper call. */
static __always_inline struct perfcap_req_state *state_of(const struct sock *sk)
{
	if (!sk->sk_bpf_storage)
		return NULL;
	return bpf_sk_storage_get(&reqs, (void *)sk, NULL, 0);
}

/* A fresh state for sk (replacing any), first used by task now (origin:
 * PERFCAP_REQ_*); NULL (counted) when the kernel had no memory for it. */
static __always_inline struct perfcap_req_state *new_state(const struct sock *sk, struct task_struct *task,
						   __u8 origin, __s32 fd, __u64 now)
{
	struct perfcap_req_state *st;

	st = bpf_sk_storage_get(&reqs, (void *)sk, NULL, BPF_SK_STORAGE_GET_F_CREATE);
	if (!st) {
		pc_count(PERFCAP_SRC_REQ, PERFCAP_LOSS_MAP_FULL);
		return NULL;
	}
	__builtin_memset(st, 0, sizeof(*st));
	st->r.h.type = PERFCAP_EV_REQUEST; /* what dump_open's reader sees */
	st->r.cookie = (__u64)sk;
	st->r.conn_ts = now;
	st->r.pid = task ? task->tgid : 0;
	st->r.fd = fd;
	st->r.family = sk->__sk_common.skc_family;
	st->r.lport = sk->__sk_common.skc_num;
	st->r.origin = origin;
	st->epoch = req_epoch;
	/* made at its open: nothing read before, no mark needed this period */
	if (origin != PERFCAP_REQ_SEEN)
		st->mark_epoch = req_mark_epoch;
	return st;
}

/* The state of sk for a call of task: NULL when task is not
 * traced. With the pid filter, a task of a process not followed is told
 * first, by its bit (an inlined array load: the calls of a load generator
 * on the same host, of every other process); a socket already followed
 * for task's process needs no other filter (its state names the process:
 * the comm or cgroup filter is a string compare or a walk); else the
 * filters decide and a traced task's socket gets its state on first sight
 * (or its owner, when it was made at a passive open). */
static __always_inline struct perfcap_req_state *state_for_call(const struct sock *sk,
							struct task_struct *task, __u32 phase)
{
	struct perfcap_req_state *st;

	if (!pc_task_maybe_traced(task))
		return NULL;
	st = state_of(sk);

	if (st && st->r.pid == task->tgid && st->r.fd >= 0)
		return st;
	if (!pc_task_traced(task))
		return NULL;
	if (!st && phase != PERFCAP_REQ_OPEN) /* draining: nothing new */
		return NULL;
	if (!st)
		return new_state(sk, task, PERFCAP_REQ_SEEN, current_fd(task), bpf_ktime_get_ns());
	if (!st->r.pid) {           /* made at a passive open: the server is known now */
		st->r.pid = task->tgid;
		st->r.fd = current_fd(task);
	} else if (st->r.fd < 0) {  /* made at connect: the fd comes with the first call */
		st->r.fd = current_fd(task);
	}
	return st;
}

/* Sends the batch, if it holds any request. */
static __always_inline void flush_batch(struct perfcap_req_state *st, __u64 now)
{
	struct perfcap_request_batch *b = &st->b;
	__u32 n = b->n;
	void *ring;

	if (!n || n > PERFCAP_REQ_BATCH_MAX)
		return;
	b->n = 0;
	ring = pc_ring(PERFCAP_SRC_REQ);
	if (!ring) {                /* pc_ring counted one */
		pc_count_n(PERFCAP_SRC_REQ, PERFCAP_LOSS_NO_RING, n - 1);
		return;
	}
	b->n = n;
	b->h.ts = now;
	if (bpf_ringbuf_output(ring, b, PERFCAP_REQ_BATCH_HEADER_SIZE + n * sizeof(b->e[0]),
			       pc_wakeup_flag(ring)))
		pc_count_n(PERFCAP_SRC_REQ, PERFCAP_LOSS_RINGBUF, n);
	b->n = 0;
}

/* Sends the open request alone (a value of it does not fit an entry). */
static __always_inline void send_alone(struct perfcap_req_state *st, __u16 flags, __u64 now)
{
	void *ring = pc_ring(PERFCAP_SRC_REQ);
	struct perfcap_request *e;

	if (!ring)
		return;
	e = pc_reserve(ring, PERFCAP_SRC_REQ, sizeof(*e));
	if (!e)
		return;
	*e = st->r;
	pc_header(&e->h, PERFCAP_EV_REQUEST, now);
	e->h.flags = flags;
	pc_submit(ring, e);
}

#define U32_FITS(x) ((x) <= 0xffffffffull)

/* The open request as an entry of the batch; false when a value of it
 * does not fit one. The batch is sent first when the request cannot
 * follow its entries (a number skipped by an unanswered request, another
 * owner, more than 4 s after the first). */
static __always_inline bool batch_add(struct perfcap_req_state *st, __u16 flags, __u64 now)
{
	struct perfcap_request *r = &st->r;
	struct perfcap_request_batch *b = &st->b;
	struct perfcap_req_entry *e;
	__u64 ready_ns = 0, lower_ns = 0;
	__u32 n;

	if ((flags & PERFCAP_REQ_F_READY) && r->ready_ts <= r->start_ts)
		ready_ns = r->start_ts - r->ready_ts;
	else
		flags &= ~PERFCAP_REQ_F_READY;
	if ((flags & PERFCAP_REQ_F_LOWER) && r->lower_ts <= r->start_ts)
		lower_ns = r->start_ts - r->lower_ts;
	else
		flags &= ~PERFCAP_REQ_F_LOWER;
	if (!U32_FITS(r->end_ts - r->start_ts) || !U32_FITS(ready_ns) || !U32_FITS(lower_ns) ||
	    !U32_FITS(r->bytes_in) || !U32_FITS(r->bytes_out) ||
	    r->reads > 0xffff || r->writes > 0xffff)
		return false;
	n = b->n;
	if (n && (r->start_ts - b->base_ts > 0xffffffffull || r->number != b->number + n ||
		  r->pid != b->pid || r->fd != b->fd)) {
		flush_batch(st, now);
		n = 0;
	}
	if (n >= PERFCAP_REQ_BATCH_MAX)
		return false;
	if (!n) {
		pc_header(&b->h, PERFCAP_EV_REQUEST_BATCH, 0);
		b->cookie = r->cookie;
		b->conn_ts = r->conn_ts;
		b->base_ts = r->start_ts;
		b->pid = r->pid;
		b->fd = r->fd;
		b->number = r->number;
		b->family = r->family;
		b->lport = r->lport;
		b->origin = r->origin;
	}
	e = &b->e[n];
	e->start_off = r->start_ts - b->base_ts;
	e->first_write_ns = r->first_write_ts - r->start_ts;
	e->end_ns = r->end_ts - r->start_ts;
	e->ready_ns = ready_ns;
	e->lower_ns = lower_ns;
	e->bytes_in = r->bytes_in;
	e->bytes_out = r->bytes_out;
	e->pickup_tid = r->pickup_tid;
	e->other_tid = r->other_tid;
	e->reads = r->reads;
	e->writes = r->writes;
	e->flags = flags;
	e->reserved = 0;
	b->n = n + 1;
	if (b->n == PERFCAP_REQ_BATCH_MAX || now - b->base_ts >= PERFCAP_REQ_BATCH_AGE_NS)
		flush_batch(st, now);
	return true;
}

/* Sends the open request, if it got an answer, and closes it: into the
 * batch, or alone. A request that ends its connection (why: AT_EOF,
 * AT_CLOSE) sends the batch too. */
static __always_inline void send_request(struct perfcap_req_state *st, __u16 why, __u64 now)
{
	__u16 flags;

	if (!st->open)
		return;
	st->open = 0;
	if (req_windowed)
		req_count(PERFCAP_REQ_CNT_CLOSED);
	if (!st->r.writes) {        /* never answered: not a request */
		req_count(PERFCAP_REQ_CNT_UNANSWERED);
		if (req_windowed)
			req_count(PERFCAP_REQ_CNT_DONE);
		return;
	}
	st->prev_end = st->r.end_ts;
	if (!pc_admit_unsampled(PERFCAP_SRC_REQ, now))
		return;
	req_count(PERFCAP_REQ_CNT_SENT);
	flags = st->r.h.flags | why;
	if (!batch_add(st, flags, now)) {
		flush_batch(st, now);
		send_alone(st, flags, now);
	}
}

/* The open request of a window gone by, at its socket's first call in
 * this one, or at its close, by what moved on the socket since it was
 * last followed (known: the positions were noted and read):
 *   answered, and nothing moved, or the peer's next request was read
 *     (copied_moved): complete, its end its last write (a keep-alive
 *     connection that went idle after it); sent;
 *   unanswered and nothing moved: still waiting for its answer, followed
 *     on;
 *   else (its answer went on unseen, or the positions are unknown): cut,
 *     dropped and counted. */
static __always_inline void settle_earlier(struct perfcap_req_state *st, bool known,
					   bool copied_moved, bool written_moved, __u16 why)
{
	if (!st->open)
		return;
	if (known && st->r.writes && (copied_moved || !written_moved)) {
		send_request(st, copied_moved ? 0 : why, bpf_ktime_get_ns());
		return;
	}
	if (known && !st->r.writes && !copied_moved && !written_moved)
		return;
	st->open = 0;
	if (!st->r.writes)
		req_count(PERFCAP_REQ_CNT_DONE);
	req_count(PERFCAP_REQ_CNT_CUT);
	req_count(PERFCAP_REQ_CNT_CLOSED);
}

/* settle_earlier at sk's close. */
static __always_inline void settle_at_close(struct perfcap_req_state *st, struct sock *sk)
{
	__u32 copied, written, segs;
	bool known = st->seqs_known && tcp_seqs(sk, &copied, &written, &segs);

	settle_earlier(st, known, known && copied != st->seq_copied,
		       known && written != st->seq_write, PERFCAP_REQ_F_AT_CLOSE);
}

static __always_inline void note_tid(struct perfcap_request *r, __u32 tid)
{
	if (tid == r->pickup_tid || tid == r->other_tid)
		return;
	if (!r->other_tid)
		r->other_tid = tid;
	else
		r->h.flags |= PERFCAP_REQ_F_MORE_TIDS;
}

/* A read of a new request: the previous one is sent, this one opens. */
static __always_inline void start_request(struct perfcap_req_state *st, __u32 tid, __u64 now)
{
	struct perfcap_request *r = &st->r;
	__u64 lower;

	send_request(st, 0, now);
	lower = st->prev_end ? st->prev_end : r->conn_ts;
	r->h.flags = st->no_lower ? 0 : PERFCAP_REQ_F_LOWER;
	st->no_lower = 0;
	r->lower_ts = lower;
	r->ready_ts = 0;
	if (st->pending_ready && r->origin != PERFCAP_REQ_CONNECTED) {
		/* data queued before the previous response ended: the
		 * request was ready as soon as the server could take it */
		r->ready_ts = st->pending_ready > lower ? st->pending_ready : lower;
		r->h.flags |= PERFCAP_REQ_F_READY;
	}
	r->number++;
	r->start_ts = now;
	r->first_write_ts = r->end_ts = 0;
	r->bytes_in = r->bytes_out = 0;
	r->reads = r->writes = 0;
	r->pickup_tid = tid;
	r->other_tid = 0;
	st->open = 1;
	if (req_windowed)
		req_count(PERFCAP_REQ_CNT_STARTED);
}

/* A port traced processes serve: its next passive opens get a state. */
static __always_inline void learn_port(__u16 port)
{
	__u8 one = 1;

	if (!bpf_map_lookup_elem(&req_ports, &port))
		bpf_map_update_elem(&req_ports, &port, &one, BPF_ANY);
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(on_recv, struct sock *sk, int ret, int flags)
{
	__u32 phase = req_phase;
	struct task_struct *task;
	struct perfcap_req_state *st;
	__u64 now;
	__u32 tid;

	if (phase == PERFCAP_REQ_OFF || ret < 0 || (flags & MSG_PEEK) || !tcp_inet(sk))
		return 0;
	task = bpf_get_current_task_btf();
	st = state_for_call(sk, task, phase);
	if (!st || st->closed || !in_window(st, sk, phase, ret, 0))
		return 0;
	now = bpf_ktime_get_ns();
	if (ret == 0) {             /* EOF: the peer is done */
		send_request(st, PERFCAP_REQ_F_AT_EOF, now);
		flush_batch(st, now);
		st->closed = 1;
		return 0;
	}
	tid = task->pid;
	if (st->prev_io != 'r' && st->prev_io != '?') {
		if (phase == PERFCAP_REQ_OPEN)
			start_request(st, tid, now);
		else                    /* draining: the next one is not followed */
			send_request(st, 0, now);
	}
	st->prev_io = 'r';
	st->pending_ready = 0;      /* what had arrived is read */
	st->r.reads++;
	st->r.bytes_in += ret;
	note_tid(&st->r, tid);
	note_seqs(st, sk);
	return 0;
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(on_send, struct sock *sk, int ret, int flags)
{
	__u32 phase = req_phase;
	struct task_struct *task;
	struct perfcap_req_state *st;
	__u64 now;

	if (phase == PERFCAP_REQ_OFF || ret <= 0 || !tcp_inet(sk))
		return 0;
	task = bpf_get_current_task_btf();
	st = state_for_call(sk, task, phase);
	if (!st || !in_window(st, sk, phase, 0, ret))
		return 0;
	now = bpf_ktime_get_ns();
	st->prev_io = 'w';
	note_seqs(st, sk);
	if (!st->open)              /* a write before the connection's first read */
		return 0;
	if (!st->r.writes) {
		st->r.first_write_ts = now;
		if (st->r.number == 1 && st->r.origin != PERFCAP_REQ_CONNECTED)
			learn_port(st->r.lport);
		if (req_windowed)
			req_count(PERFCAP_REQ_CNT_DONE);
	}
	st->r.writes++;
	st->r.bytes_out += ret;
	st->r.end_ts = now;
	note_tid(&st->r, task->pid);
	if (phase == PERFCAP_REQ_DRAIN)
		req_drain_write = now;
	return 0;
}

SEC("tp_btf/sk_data_ready")
int BPF_PROG(on_data_ready, struct sock *sk)
{
	struct perfcap_req_state *st;

	if (req_phase != PERFCAP_REQ_OPEN)
		return 0;
	st = state_of(sk);
	if (st && in_window(st, sk, PERFCAP_REQ_OPEN, 0, 0) && !st->pending_ready)
		st->pending_ready = bpf_ktime_get_ns();
	return 0;
}

/* Windows: where a closing connection's stream ended, when it was followed
 * in a window; else (opened and closed between windows) what it read is
 * only counted, the period's share of its connections (REQUEST_WINDOW
 * gap_conns, gap_bytes). */
static __always_inline void mark_close(const struct perfcap_req_state *st, const struct sock *sk)
{
	__u64 read;
	__u32 copied;

	if (st->followed) {
		if (req_marking)
			send_mark(st, sk, 0, PERFCAP_MARK_CLOSE);
	} else if (stream_at(sk, 0, &read, &copied)) {
		/* what no snapshot has said yet */
		req_count(PERFCAP_REQ_CNT_GAP_CONNS);
		pc_counter_add(&req_counts, PERFCAP_REQ_CNT_GAP_BYTES,
			       read > st->snap_read ? read - st->snap_read : 0);
	}
}

/* A traced task's connect makes a client connection's state (no
 * readiness: it sends requests, it does not serve them); a passive open
 * on a served port (LISTEN -> SYN_RECV of the child socket, in softirq,
 * its owner not known yet) makes one so that its first request's arrival
 * is seen; a close sends the open request and forgets the socket. */
SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(on_state, const struct sock *sk, const int oldstate, const int newstate)
{
	struct task_struct *task;
	struct perfcap_req_state *st;
	__u64 now;

	if (newstate == TCP_SYN_SENT) {
		task = bpf_get_current_task_btf();
		if (tcp_inet(sk) && pc_task_traced(task))
			new_state(sk, task, PERFCAP_REQ_CONNECTED, -1, bpf_ktime_get_ns());
		return 0;
	}
	if (newstate == TCP_SYN_RECV) {
		__u16 port = sk->__sk_common.skc_num;

		if (tcp_inet(sk) && bpf_map_lookup_elem(&req_ports, &port))
			new_state(sk, NULL, PERFCAP_REQ_ACCEPTED, -1, bpf_ktime_get_ns());
		return 0;
	}
	if (newstate != TCP_CLOSE)
		return 0;
	st = state_of(sk);
	if (!st)
		return 0;
	/* a request not followed to here (a window gone by, or OFF now) */
	if (st->open && (st->epoch != req_epoch || req_phase == PERFCAP_REQ_OFF))
		settle_at_close(st, (struct sock *)sk);
	now = bpf_ktime_get_ns();
	send_request(st, PERFCAP_REQ_F_AT_CLOSE, now);
	flush_batch(st, now);
	if (req_windowed)
		mark_close(st, sk);
	bpf_sk_storage_delete(&reqs, (void *)sk);
	return 0;
}

/* Windows, at the recording's end: where each connection's stream is. */
static __always_inline void dump_mark(struct seq_file *seq, const struct perfcap_req_state *st,
				      const struct sock *sk)
{
	struct perfcap_request_mark m;

	if (!stream_at(sk, 0, &m.read, &m.copied))
		return;
	mark_of(&m, st, PERFCAP_MARK_END, bpf_ktime_get_ns());
	bpf_seq_write(seq, &m, sizeof(m));
}

/* At each period's start, with windows, user space reads through this
 * iterator over `reqs` where each connection's stream is, for those that
 * moved since the last snapshot (the others are where their last mark
 * says): a REQUEST_MARK of kind SNAP at req_snap_ts. So every connection
 * alive has both ends of every period, the quiet ones too. */
SEC("iter/bpf_sk_storage_map")
int snap_streams(struct bpf_iter__bpf_sk_storage_map *ctx)
{
	struct perfcap_req_state *st = ctx->value;
	struct sock *sk = ctx->sk;
	struct perfcap_request_mark m;

	if (!sk || !st || !stream_at(sk, 0, &m.read, &m.copied) || m.read == st->snap_read)
		return 0;
	st->snap_read = m.read;
	mark_of(&m, st, PERFCAP_MARK_SNAP, req_snap_ts);
	bpf_seq_write(ctx->meta->seq, &m, sizeof(m));
	return 0;
}

/* At the recording's end, user space reads through this iterator over
 * `reqs` each socket's batch not yet sent (a whole struct
 * perfcap_request_batch, n entries used, h.ts 0) and its request still open,
 * when answered at least once (a struct perfcap_request). */
SEC("iter/bpf_sk_storage_map")
int dump_open(struct bpf_iter__bpf_sk_storage_map *ctx)
{
	struct perfcap_req_state *st = ctx->value;
	struct sock *sk = ctx->sk;
	__u32 n;

	if (!sk || !st)
		return 0;
	/* The whole batch, n entries used: the verifier checks a variable
	 * size here against no bound (it does not know the value's size), and
	 * the attach refuses the program (EACCES) when the largest size it
	 * could prove exceeds the value. */
	n = st->b.n;
	if (n && n <= PERFCAP_REQ_BATCH_MAX)
		bpf_seq_write(ctx->meta->seq, &st->b, sizeof(st->b));
	if (st->open && st->r.writes && st->epoch == req_epoch)
		bpf_seq_write(ctx->meta->seq, &st->r, sizeof(st->r));
	if (req_windowed)
		dump_mark(ctx->meta->seq, st, sk);
	return 0;
}
