/* source_req.c - the req source (`-e req`, in the default set): requests on
 * the TCP connections of traced processes, inferred in the kernel
 * (bpf/req.bpf.c) from the socket layer's receive/send tracepoints, with
 * their readiness from sk_data_ready: no record per system call (`-e
 * syscall,net` still records those, and the analyzer then builds requests
 * from them instead), and consecutive requests of a connection go out
 * together, up to 8 in one REQUEST_BATCH record (about 50 bytes each
 * instead of 128: the recorder's CPU goes mostly to compressing bytes).
 *
 * The kernel closes a request when the next one starts, at the peer's FIN
 * or at the socket's close, and sends its connection's batch when full,
 * when the batch's first request is a second old, or at the connection's
 * end; at the recording's end the batches not yet sent and the requests
 * still open (written with flag AT_END) are read here through an iterator
 * over the socket storage.
 *
 * Above --req-rate requests a second (default 10,000), requests are
 * followed in time windows: win_tick moves the programs' phase (req.bpf.c
 * req_phase) each second, detaches the three that run at every TCP call
 * between windows, and writes a REQUEST_WINDOW per windowed second, which
 * says what each of its requests stands for.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "consume/consumer.h"      /* perfcap_bpf.h, which the skeleton needs */
#include "req.skel.h"
#include "session/percpu_counts.h"
#include "util/util.h"
#include "hot_links.h"
#include "source.h"

_Static_assert(PERFCAP_REQ_F_READY == PC_REQUEST_F_READY &&
	       PERFCAP_REQ_F_LOWER == PC_REQUEST_F_LOWER &&
	       PERFCAP_REQ_F_MORE_TIDS == PC_REQUEST_F_MORE_TIDS &&
	       PERFCAP_REQ_F_AT_EOF == PC_REQUEST_F_AT_EOF &&
	       PERFCAP_REQ_F_AT_CLOSE == PC_REQUEST_F_AT_CLOSE &&
	       PERFCAP_REQ_F_AT_END == PC_REQUEST_F_AT_END &&
	       PERFCAP_REQ_SEEN == PC_REQUEST_SEEN && PERFCAP_REQ_CONNECTED == PC_REQUEST_CONNECTED &&
	       PERFCAP_REQ_ACCEPTED == PC_REQUEST_ACCEPTED, "kernel and capture flags differ");

_Static_assert(sizeof(struct perfcap_req_entry) == sizeof(struct pc_request_entry) &&
	       offsetof(struct perfcap_req_entry, flags) == offsetof(struct pc_request_entry, flags) &&
	       offsetof(struct perfcap_req_entry, pickup_tid) ==
	       offsetof(struct pc_request_entry, pickup_tid) &&
	       PERFCAP_REQ_BATCH_MAX == PC_REQUEST_BATCH_MAX &&
	       PERFCAP_REQ_BATCH_HEADER_SIZE == offsetof(struct perfcap_request_batch, e),
	       "kernel and capture request entries differ");

static struct req_bpf *skel;
static struct bpf_link *dump_link;   /* the iterator over the socket storage */
static int dump_fd = -1;             /* its reader, read at the end */
static struct bpf_link *snap_link;   /* snap_streams: each period's start */
static uint64_t snaps_failed;        /* STATS req.windows.snaps_failed */
static int dump_err;                 /* why there is none: -errno */
static uint64_t at_end;              /* requests written from the map at the end */
static bool open_unread;             /* the iterator failed: open requests not read */
/* The three programs that run at every TCP receive, send and arrival on
 * the host, traced or not: between windows they are detached, so that
 * the calls cost nothing then rather than a program's entry and exit
 * (hot_links.h: if the kernel refuses to attach them again, they stay
 * attached throughout and return after one load between windows). */
static struct hot_links hot;

/* Windows: above `budget` requests a second, requests are followed when
 * their first read falls in an OPEN phase at the start of each period,
 * long enough for about budget a second (the last period's rate says how
 * long); then to their end through DRAIN (until none is open), then OFF
 * to the next period. Below it, OPEN throughout (a load that comes, or
 * grows past the budget, is followed whole to the end of its first
 * second: exact, where a window would extrapolate its start). The phases
 * change at their times, not at the next poll: each tick asks the loop
 * for the next one (consumer_tick_by). */
#define WIN_PERIOD_NS 1000000000ull
#define WIN_MIN_NS      50000000ull
/* How often a drain looks whether it is over (after DRAIN_QUIET_NS, every
 * DRAIN_QUIET_NS / 2: a request still unanswered can hold it to the next
 * period). */
#define DRAIN_POLL_NS    2000000ull
/* A drain ends, with requests still open, once every followed request got
 * an answer and none wrote for this long: the ones open then are mostly
 * idle keep-alive connections' last, which their next call completes
 * (req.bpf.c settle_earlier); a response still being written holds it. */
#define DRAIN_QUIET_NS  20000000ull

static struct {
	uint64_t budget;             /* --req-rate; 0: every request */
	uint64_t span_start;         /* the attach (0: not attached) */
	uint64_t period_start, open_start, open_len;
	uint64_t started_at_open;    /* STARTED when the OPEN phase began */
	uint64_t started_open;       /* ... and how many it started */
	uint64_t covered_ns;         /* OPEN time in all */
	uint64_t span_ns;
	uint64_t windows;            /* periods with a window shorter than the period */
	uint64_t attach_failed;      /* periods not followed: see hot_attach */
	uint64_t drain_start;        /* the last DRAIN began */
	uint64_t idle_ends;          /* drains ended with answered requests open */
	uint64_t attached_at;        /* the hot programs attached since (0: detached) */
	uint64_t attached_ns;        /* ... for this long in all, before */
	uint64_t gap_at[2];          /* GAP_CONNS, GAP_BYTES as the period began */
	uint32_t phase, epoch;
	uint32_t mark_epoch;         /* req_mark_epoch: moved each period */
	uint64_t snap_start;         /* the snapshot at this period's start (0: none) */
	bool windowed;               /* this period has a window */
} win;

/* The kernel's STARTED count into *started; false when unread. */
static bool read_started(uint64_t *started)
{
	uint64_t n[PERFCAP_REQ_CNT_NR];

	if (percpu_counts_read(skel->maps.req_counts, n, PERFCAP_REQ_CNT_NR))
		return false;
	*started = n[PERFCAP_REQ_CNT_STARTED];
	return true;
}

/* The hot programs stop counting as attached at t. */
static void attached_until(uint64_t t)
{
	if (win.attached_at && t > win.attached_at)
		win.attached_ns += t - win.attached_at;
	win.attached_at = 0;
}

/* The windows start at t, in a first period followed whole: its time is
 * covered from the attach, when the programs began to follow. */
static void win_begin(uint64_t t)
{
	win.span_start = win.period_start = win.open_start = win.attached_at = t;
	win.open_len = WIN_PERIOD_NS;
	win.started_at_open = 0;
	win.phase = PERFCAP_REQ_OPEN;
	skel->bss->req_mark_epoch = win.mark_epoch = 1;
	skel->bss->req_marking = false;   /* followed whole: nothing to weigh */
}

/* read(2) until len bytes or the end; what was read, or -1. */
static ssize_t read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return got ? (ssize_t)got : n;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

static int req_load(const struct source_env *env, char *why, size_t len)
{
	int err;

	skel = req_bpf__open();
	if (!skel)
		return source_open_failed(why, len);
	skel->rodata->pc_config = *env->config;
	win.budget = env->opts->req_rate;
	skel->rodata->req_windowed = win.budget > 0;
	/* the iterators are attached with the map (req_attach) */
	bpf_program__set_autoattach(skel->progs.dump_open, false);
	bpf_program__set_autoattach(skel->progs.snap_streams, false);
	err = source_reuse_shared_maps(env, skel->obj, why, len);
	if (!err)
		err = source_loaded(req_bpf__load(skel), "cannot load the BPF programs", why, len);
	return err;
}

/* The iterator that reads, at the end, what the programs still hold. It
 * is attached and its reader created now, with the programs, while the
 * recorder still holds the capabilities it gives up after attach
 * (session/privileges.c); an iterator walks the map when it is read, not
 * when it is created. */
static void attach_dump(void)
{
	DECLARE_LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info info = { .map.map_fd = bpf_map__fd(skel->maps.reqs) };

	opts.link_info = &info;
	opts.link_info_len = sizeof(info);
	dump_link = bpf_program__attach_iter(skel->progs.dump_open, &opts);
	if (!dump_link) {
		dump_err = -errno;
		return;
	}
	dump_fd = bpf_iter_create(bpf_link__fd(dump_link));
	if (dump_fd < 0)
		dump_err = -errno;
	/* windows: the snapshots' iterator, read at each period's start (a
	 * failure only leaves the windows to the marks of the calls) */
	if (win.budget)
		snap_link = bpf_program__attach_iter(skel->progs.snap_streams, &opts);
}

static int req_attach(const struct source_env *env, char *why, size_t len)
{
	int err = req_bpf__attach(skel);

	(void)env;
	if (err)
		source_explain(why, len, "cannot attach sock_recv_length/sock_send_length/"
			       "sk_data_ready/inet_sock_set_state", err);
	if (!err) {
		attach_dump();
		hot_links_add(&hot, skel->progs.on_data_ready, &skel->links.on_data_ready);
		hot_links_add(&hot, skel->progs.on_recv, &skel->links.on_recv);
		hot_links_add(&hot, skel->progs.on_send, &skel->links.on_send);
		/* on now that all are: see req_phase */
		skel->bss->req_phase = PERFCAP_REQ_OPEN;
		if (win.budget)  /* the first period, followed whole from here */
			win_begin(monotonic_ns());
	}
	return err;
}

static void req_detach(void)
{
	if (!skel)
		return;
	/* OFF first: the programs are detached one after another, and a
	 * receive not followed while the sends still were would merge
	 * requests (a recording that ends in a window: 7 answers in one) */
	skel->bss->req_phase = PERFCAP_REQ_OFF;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	req_bpf__detach(skel);
}

static void req_destroy(void)
{
	if (dump_fd >= 0)
		close(dump_fd);
	dump_fd = -1;
	bpf_link__destroy(dump_link);
	dump_link = NULL;
	bpf_link__destroy(snap_link);
	snap_link = NULL;
	req_bpf__destroy(skel);
	skel = NULL;
}

/* ---- records ------------------------------------------------------------ */

/* The capture's REQUEST: times around the request as offsets from its
 * start, which is also the record's own time. */
static void write_request(struct consumer *c, const struct perfcap_request *e, uint16_t flags)
{
	struct pc_rec_request rec = {
		.h.type = PC_REC_REQUEST,
		.h.flags = flags & (PC_REQUEST_F_READY | PC_REQUEST_F_LOWER | PC_REQUEST_F_MORE_TIDS |
				    PC_REQUEST_F_AT_EOF | PC_REQUEST_F_AT_CLOSE | PC_REQUEST_F_AT_END),
		.start_ts = e->start_ts,
		.end_ts = e->end_ts,
		.conn_ts = e->conn_ts,
		.cookie = e->cookie,
		.first_write_ns = e->first_write_ts - e->start_ts,
		.bytes_in = e->bytes_in,
		.bytes_out = e->bytes_out,
		.pid = e->pid,
		.pickup_tid = e->pickup_tid,
		.other_tid = e->other_tid,
		.fd = e->fd,
		.number = e->number,
		.reads = e->reads,
		.writes = e->writes,
		.family = e->family,
		.lport = e->lport,
		.origin = e->origin,
	};

	if ((flags & PERFCAP_REQ_F_READY) && e->ready_ts <= e->start_ts)
		rec.ready_ns = e->start_ts - e->ready_ts;
	else
		rec.h.flags &= ~PC_REQUEST_F_READY;
	if ((flags & PERFCAP_REQ_F_LOWER) && e->lower_ts <= e->start_ts)
		rec.lower_ns = e->start_ts - e->lower_ts;
	else
		rec.h.flags &= ~PC_REQUEST_F_LOWER;
	consumer_add_event(c, PERFCAP_SRC_REQ, &rec, sizeof(rec), e->start_ts);
}

/* The capture's REQUEST_BATCH: its header, then the kernel's entries as
 * they are, straight from the ring. */
static void write_batch(struct consumer *c, const struct perfcap_request_batch *b)
{
	struct pc_rec_request_batch h = {
		.h.type = PC_REC_REQUEST_BATCH,
		.base_ts = b->base_ts,
		.conn_ts = b->conn_ts,
		.cookie = b->cookie,
		.pid = b->pid,
		.fd = b->fd,
		.number = b->number,
		.family = b->family,
		.lport = b->lport,
		.origin = b->origin,
		.n = b->n,
	};

	consumer_add_events(c, PERFCAP_SRC_REQ, &h, sizeof(h), b->e, b->n * sizeof(b->e[0]),
			    b->base_ts, b->n);
}

/* A batch of n entries fits size bytes. */
static bool batch_fits(const struct perfcap_request_batch *b, size_t size)
{
	return size >= PERFCAP_REQ_BATCH_HEADER_SIZE && b->n && b->n <= PERFCAP_REQ_BATCH_MAX &&
	       size >= PERFCAP_REQ_BATCH_HEADER_SIZE + b->n * sizeof(b->e[0]);
}

static void write_mark(struct consumer *c, const struct perfcap_request_mark *m)
{
	struct pc_rec_request_mark rec = {
		.h.type = PC_REC_REQUEST_MARK,
		.ts = m->h.ts,
		.cookie = m->cookie,
		.conn_ts = m->conn_ts,
		.pid = m->pid,
		.copied = m->copied,
		.read = m->read,
		.kind = m->kind,
	};

	consumer_add_event(c, PERFCAP_SRC_REQ, &rec, sizeof(rec), rec.ts);
}

static void req_handle(struct consumer *c, const void *data, size_t size)
{
	const struct perfcap_event_header *h = data;

	if (size >= sizeof(struct perfcap_request_mark) && h->type == PERFCAP_EV_REQUEST_MARK)
		write_mark(c, data);
	else if (size >= sizeof(struct perfcap_request) && h->type == PERFCAP_EV_REQUEST)
		write_request(c, data, h->flags);
	else if (h->type == PERFCAP_EV_REQUEST_BATCH && batch_fits(data, size))
		write_batch(c, data);
	else if (h->type == PERFCAP_EV_REQUEST_BATCH && size >= PERFCAP_REQ_BATCH_HEADER_SIZE &&
		 ((const struct perfcap_request_batch *)data)->n <= PERFCAP_REQ_BATCH_MAX)
		/* a believable count, a short record: its requests are lost */
		consumer_drop_n(c, PERFCAP_SRC_REQ,
				((const struct perfcap_request_batch *)data)->n);
	else
		consumer_drop(c, PERFCAP_SRC_REQ);
}

/* The iterator's stream: batches not sent yet and open requests, each
 * starting with its event header. 1 when one was written, 0 at the end,
 * -1 when the stream is cut or unknown. */
static int read_open_one(struct consumer *c, int fd)
{
	union {
		struct perfcap_event_header h;
		struct perfcap_request r;
		struct perfcap_request_batch b;
		struct perfcap_request_mark m;
	} u;
	const size_t hs = sizeof(u.h);
	ssize_t got = read_full(fd, &u, hs);

	if (got == 0)
		return 0;
	if (got != (ssize_t)hs)
		return -1;
	if (u.h.type == PERFCAP_EV_REQUEST) {
		if (read_full(fd, (char *)&u + hs, sizeof(u.r) - hs) != (ssize_t)(sizeof(u.r) - hs))
			return -1;
		write_request(c, &u.r, u.r.h.flags | PC_REQUEST_F_AT_END);
		at_end++;
		return 1;
	}
	if (u.h.type == PERFCAP_EV_REQUEST_MARK) {
		if (read_full(fd, (char *)&u + hs, sizeof(u.m) - hs) != (ssize_t)(sizeof(u.m) - hs))
			return -1;
		write_mark(c, &u.m);
		return 1;
	}
	/* a batch comes whole, n of its entries used (see dump_open) */
	if (u.h.type != PERFCAP_EV_REQUEST_BATCH ||
	    read_full(fd, (char *)&u + hs, sizeof(u.b) - hs) != (ssize_t)(sizeof(u.b) - hs) ||
	    !u.b.n || u.b.n > PERFCAP_REQ_BATCH_MAX)
		return -1;
	write_batch(c, &u.b);
	return 1;
}

/* The hot programs (see `hot` above) detached between windows. */
static void hot_detach(void)
{
	if (hot.state == 1 && hot_links_detach(&hot))
		attached_until(monotonic_ns());
}

/* All three attached again, or none (false: this period is not followed;
 * the next one tries again). */
static bool hot_attach(void)
{
	if (hot.state != 0)
		return true;
	if (!hot_links_attach(&hot))
		return false;
	win.attached_at = monotonic_ns();
	return true;
}

static void win_set(uint32_t phase)
{
	skel->bss->req_epoch = win.epoch;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	skel->bss->req_phase = win.phase = phase;
}

/* The capture's REQUEST_WINDOW for the period that ends at end, when it
 * had a window (periods followed whole have none). */
static void win_write(struct consumer *c, uint64_t end, uint64_t snap_end)
{
	struct pc_rec_request_window rec = {
		.h.type = PC_REC_REQUEST_WINDOW,
		.ts = win.period_start,
		.open_ns = win.open_len,
		.period_ns = end - win.period_start,
		.started = win.started_open,
		.snap_start = win.snap_start,
		.snap_end = snap_end,
	};
	uint64_t n[PERFCAP_REQ_CNT_NR];

	/* the connections opened and closed between windows since the
	 * period began (unread counters: none said) */
	if (!percpu_counts_read(skel->maps.req_counts, n, PERFCAP_REQ_CNT_NR)) {
		rec.gap_conns = n[PERFCAP_REQ_CNT_GAP_CONNS] - win.gap_at[0];
		rec.gap_bytes = n[PERFCAP_REQ_CNT_GAP_BYTES] - win.gap_at[1];
		win.gap_at[0] = n[PERFCAP_REQ_CNT_GAP_CONNS];
		win.gap_at[1] = n[PERFCAP_REQ_CNT_GAP_BYTES];
	}
	if (!win.windowed)
		return;
	if (rec.open_ns > rec.period_ns)
		rec.open_ns = rec.period_ns;
	consumer_add_event(c, PERFCAP_SRC_REQ, &rec, sizeof(rec), rec.ts);
}

/* The last period's record, when it had a window; the next one from t,
 * open for open_len (its window's length, or the whole period). */
/* Every connection's stream that moved since the last snapshot, as a
 * REQUEST_MARK at t (snap_streams); false when it could not be read whole
 * (counted: the windows on either side of t keep the calls' marks). */
static bool snapshot(struct consumer *c, uint64_t t)
{
	struct perfcap_request_mark m[32];
	ssize_t n;
	int fd;

	if (!snap_link)
		return false;
	skel->bss->req_snap_ts = t;
	fd = bpf_iter_create(bpf_link__fd(snap_link));
	if (fd < 0) {
		snaps_failed++;
		return false;
	}
	/* a read returns whole marks (each bpf_seq_write is one) */
	while ((n = read(fd, m, sizeof(m))) > 0 || (n < 0 && errno == EINTR))
		for (ssize_t i = 0; n > 0 && i < n / (ssize_t)sizeof(m[0]); i++)
			write_mark(c, &m[i]);
	close(fd);
	if (n < 0)
		snaps_failed++;
	return n == 0;
}

static void next_period(struct consumer *c, uint64_t t, uint64_t open_len, uint64_t started)
{
	/* when this period or the last one has a window (the last one's
	 * window is weighed by where the streams are now): each connection's
	 * first call in the new period marks its stream, and where every one
	 * is now is read */
	bool marking = win.windowed || open_len < WIN_PERIOD_NS;
	uint64_t snap = marking && snapshot(c, t) ? t : 0;

	win_write(c, t, snap);
	win.snap_start = snap;
	skel->bss->req_mark_epoch = ++win.mark_epoch;
	skel->bss->req_marking = marking;
	win.period_start = win.open_start = t;
	win.open_len = open_len;
	win.started_at_open = started;
	win.started_open = 0;
}

/* Whether the drain is over: no followed request open, or every one
 * answered and none written for DRAIN_QUIET_NS (counted: idle_ends). */
static bool drained(const uint64_t *n, uint64_t now)
{
	uint64_t last = skel->bss->req_drain_write;

	if (n[PERFCAP_REQ_CNT_STARTED] <= n[PERFCAP_REQ_CNT_CLOSED])
		return true;
	if (last < win.drain_start)
		last = win.drain_start;
	if (now < last + DRAIN_QUIET_NS || n[PERFCAP_REQ_CNT_STARTED] > n[PERFCAP_REQ_CNT_DONE])
		return false;
	win.idle_ends++;
	return true;
}

/* OPEN -> DRAIN: the window ends now. */
static void win_drain(void)
{
	uint64_t started;

	win_set(PERFCAP_REQ_DRAIN);
	/* after the flip: every request followed started before */
	win.drain_start = monotonic_ns();
	win.open_len = win.drain_start - win.open_start;
	win.covered_ns += win.open_len;
	if (read_started(&started))
		win.started_open = started - win.started_at_open;
}

/* A new period from now: the window's length from the last one's rate,
 * the programs attached again, OPEN. */
static void win_next_period(struct consumer *c, uint64_t now, uint64_t started)
{
	uint64_t len, rate, w;
	bool windowed;

	if (win.phase == PERFCAP_REQ_OPEN) {   /* open the whole period */
		if (now < win.open_start)
			now = win.open_start;
		win.covered_ns += now - win.open_start;
		win.open_len = now - win.open_start;
		win.started_open = started - win.started_at_open;
	}
	len = win.open_len ? win.open_len : 1;
	rate = win.started_open * 1000000000ull / len;
	w = rate ? win.budget * WIN_PERIOD_NS / rate : WIN_PERIOD_NS;
	/* a new epoch only after a gap: a state from a period followed to
	 * its end is still right, and its requests in flight go on */
	if (win.phase != PERFCAP_REQ_OPEN)
		win.epoch++;
	windowed = w < WIN_PERIOD_NS;
	if (!windowed)
		w = WIN_PERIOD_NS;
	else if (w < WIN_MIN_NS)
		w = WIN_MIN_NS;
	if (!hot_attach()) {    /* still OFF: all three attached before any runs */
		next_period(c, now, 0, started);
		win.attach_failed++;
		win.windowed = true;   /* a window of nothing, so that it is said */
		return;
	}
	/* the period starts where it opens, after the attach (milliseconds),
	 * before the flip: every request followed starts after; the last
	 * period ends there */
	next_period(c, monotonic_ns(), w, started);
	if (win.phase != PERFCAP_REQ_OPEN)
		win_set(PERFCAP_REQ_OPEN);
	win.windowed = windowed;
	if (windowed)
		win.windows++;
}

/* One tick of the windows: the phase to be in now, and when to look
 * again. */
static void win_tick(struct consumer *c, uint64_t now)
{
	uint64_t n[PERFCAP_REQ_CNT_NR], started;

	if (!win.span_start || percpu_counts_read(skel->maps.req_counts, n, PERFCAP_REQ_CNT_NR))
		return;
	started = n[PERFCAP_REQ_CNT_STARTED];
	if (win.phase == PERFCAP_REQ_OPEN && win.windowed && now >= win.open_start + win.open_len)
		win_drain();
	if (win.phase == PERFCAP_REQ_DRAIN && drained(n, monotonic_ns())) {
		win_set(PERFCAP_REQ_OFF);
		hot_detach();
	}
	/* (now may be before a period started in this tick: sums, not
	 * differences) */
	if (now >= win.period_start + WIN_PERIOD_NS)
		win_next_period(c, now, started);
	if (win.phase == PERFCAP_REQ_DRAIN)   /* a drain that lasts: looked at less often */
		consumer_tick_by(c, now + (now < win.drain_start + DRAIN_QUIET_NS ? DRAIN_POLL_NS
										   : DRAIN_QUIET_NS / 2));
	if (win.phase == PERFCAP_REQ_OPEN && win.windowed)
		consumer_tick_by(c, win.open_start + win.open_len);
	consumer_tick_by(c, win.period_start + WIN_PERIOD_NS);
}

static void win_end(struct consumer *c, uint64_t now)
{
	uint64_t started;

	if (!win.span_start)
		return;
	if (win.phase == PERFCAP_REQ_OPEN) {
		win.covered_ns += now - win.open_start;
		win.open_len = now - win.open_start;
		if (read_started(&started))
			win.started_open = started - win.started_at_open;
	}
	win_write(c, now, 0);
	win.span_ns = now - win.span_start;
	attached_until(now);
}

/* Each tick: the windows' phase (with --req-rate). At the end: the
 * requests still open (answered at least once) and the batches not sent,
 * read through the iterator over the socket storage (dump_open), which
 * nothing writes any more (the programs are detached). */
static void req_tick(struct consumer *c, uint64_t now_ns, bool final)
{
	int fd, rc;

	if (!skel)
		return;
	if (win.budget && !final)
		win_tick(c, now_ns);
	if (!final)
		return;
	if (win.budget)
		win_end(c, now_ns);
	fd = dump_fd;
	if (fd < 0) {
		open_unread = true;
		return;
	}
	while ((rc = read_open_one(c, fd)) > 0)
		;
	if (rc < 0)
		open_unread = true;
	close(fd);
	dump_fd = -1;
}

/* ---- metadata and counters ----------------------------------------------- */

/* ": why" when the iterator could not be made (dump_err), else "". */
static const char *dump_why(char *buf, size_t len)
{
	if (!dump_err)
		return "";
	snprintf(buf, len, ": %s", strerror(-dump_err));
	return buf;
}

static int req_meta(struct chunk_buffer *kv, const struct source_env *env)
{
	int err = 0;

	(void)env;
	err |= chunk_buffer_add_kv(kv, "req.rule", "a read after a write starts a request; "
				   "readiness from sk_data_ready; TCP only");
	if (win.budget)
		err |= chunk_buffer_add_kv_u64(kv, "req.windows.budget", win.budget);
	return err ? -ENOMEM : 0;
}

static int req_stats(struct chunk_buffer *kv, const struct consumer *c)
{
	uint64_t n[PERFCAP_REQ_CNT_NR];
	int err = 0;

	(void)c;
	if (!skel)
		return 0;
	if (percpu_counts_read(skel->maps.req_counts, n, PERFCAP_REQ_CNT_NR))
		err |= chunk_buffer_add_kv(kv, "req.counts.failed", "the counters could not be read");
	err |= chunk_buffer_add_kv_u64(kv, "req.sent", n[PERFCAP_REQ_CNT_SENT]);
	err |= chunk_buffer_add_kv_u64(kv, "req.unanswered", n[PERFCAP_REQ_CNT_UNANSWERED]);
	err |= chunk_buffer_add_kv_u64(kv, "req.fd_unknown", n[PERFCAP_REQ_CNT_FD_UNKNOWN]);
	err |= chunk_buffer_add_kv_u64(kv, "req.open_at_end", at_end);
	if (win.budget) {
		err |= chunk_buffer_add_kv_u64(kv, "req.windows.count", win.windows);
		err |= chunk_buffer_add_kv_u64(kv, "req.windows.covered_ns", win.covered_ns);
		err |= chunk_buffer_add_kv_u64(kv, "req.windows.span_ns", win.span_ns);
		err |= chunk_buffer_add_kv_u64(kv, "req.windows.attached_ns", win.attached_ns);
		err |= chunk_buffer_add_kv_u64(kv, "req.started", n[PERFCAP_REQ_CNT_STARTED]);
		err |= chunk_buffer_add_kv_u64(kv, "req.closed", n[PERFCAP_REQ_CNT_CLOSED]);
		err |= chunk_buffer_add_kv_u64(kv, "req.cut", n[PERFCAP_REQ_CNT_CUT]);
		err |= chunk_buffer_add_kv_u64(kv, "req.gap_conns", n[PERFCAP_REQ_CNT_GAP_CONNS]);
		err |= chunk_buffer_add_kv_u64(kv, "req.gap_bytes", n[PERFCAP_REQ_CNT_GAP_BYTES]);
		err |= chunk_buffer_add_kv_u64(kv, "req.windows.snaps_failed", snaps_failed);
		err |= chunk_buffer_add_kv_u64(kv, "req.windows.attach_failed", win.attach_failed);
		err |= chunk_buffer_add_kv_u64(kv, "req.windows.idle_ends", win.idle_ends);
		if (hot.err)
			err |= chunk_buffer_add_kv(kv, "req.windows.detach", hot.state < 0 ?
						   "refused: attached throughout" :
						   "attach failed: periods not followed");
		if (hot.err)
			err |= chunk_buffer_add_kv(kv, "req.windows.detach_error", strerror(-hot.err));
	}
	if (open_unread) {
		char why[160], e[64];

		snprintf(why, sizeof(why), "the socket storage iterator could not be read whole%s",
			 dump_why(e, sizeof(e)));
		err |= chunk_buffer_add_kv(kv, "req.open_at_end.failed", why);
	}
	return err ? -ENOMEM : 0;
}

/* What the summary must say: requests followed in windows only, and the
 * requests still held by the kernel at the end (each connection's batch
 * not yet sent, its open request) when the iterator could not be read. */
static void req_summary_note(char *buf, size_t len)
{
	char e[64];
	int n = 0;

	buf[0] = '\0';
	if (win.windows && win.span_ns)
		n = snprintf(buf, len, "followed in %llu time windows, %.1f%% of the recording, "
			     "its programs attached %.1f%% (--req-rate %llu): each stands for its "
			     "second over its window (REQUEST_WINDOW); the report's requests row "
			     "weighs them, its other request lines count those followed (STATS "
			     "req.windows.*)%s", (unsigned long long)win.windows,
			     100.0 * (double)win.covered_ns / (double)win.span_ns,
			     100.0 * (double)win.attached_ns / (double)win.span_ns,
			     (unsigned long long)win.budget, snaps_failed || open_unread ? "; " : "");
	if (snaps_failed && n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, "%llu snapshots of the connections' "
			      "streams could not be read: their windows are weighed by the calls' "
			      "marks alone (STATS req.windows.snaps_failed)%s",
			      (unsigned long long)snaps_failed, open_unread ? "; " : "");
	if (open_unread && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, "the requests the kernel still held at the end "
			 "(up to %d a connection) could not be read%s (STATS "
			 "req.open_at_end.failed)", PERFCAP_REQ_BATCH_MAX, dump_why(e, sizeof(e)));
}

static const uint16_t req_event_types[] = { PERFCAP_EV_REQUEST, PERFCAP_EV_REQUEST_BATCH,
					     PERFCAP_EV_REQUEST_MARK, 0 };

const struct source req_source = {
	.summary = "requests on TCP connections (first read after a write to its last "
		   "write), bytes, threads, arrival (sk_data_ready); inferred in the kernel, "
		   "no record per system call, up to 8 requests of a connection per record; "
		   "above --req-rate a second, in time windows",
	.id = PERFCAP_SRC_REQ,
	.default_on = true,
	.event_types = req_event_types,
	.load = req_load,
	.attach = req_attach,
	.detach = req_detach,
	.destroy = req_destroy,
	.handle = req_handle,
	.meta = req_meta,
	.stats = req_stats,
	.summary_note = req_summary_note,
	.tick = req_tick,
};
