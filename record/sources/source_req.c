/* source_req.c - the req source (`-e req`, in the default set): requests on
 * the TCP connections of traced processes, inferred in the kernel
 * (bpf/req.bpf.c) from the socket layer's receive/send tracepoints, with
 * their readiness from sk_data_ready: one REQUEST record per request, so a
 * default recording shows request counts, latency and queueing without
 * one record per system call (`-e syscall,net` still records those, and
 * the analyzer then builds requests from them instead).
 *
 * The kernel sends a request when the next one starts, at the peer's FIN
 * or at the socket's close; at the recording's end the requests still open
 * are read here through an iterator over the socket storage and written
 * with flag AT_END.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "consume/consumer.h"      /* perfcap_bpf.h, which the skeleton needs */
#include "req.skel.h"
#include "source.h"

_Static_assert(PERFCAP_REQ_F_READY == PC_REQUEST_F_READY &&
	       PERFCAP_REQ_F_LOWER == PC_REQUEST_F_LOWER &&
	       PERFCAP_REQ_F_MORE_TIDS == PC_REQUEST_F_MORE_TIDS &&
	       PERFCAP_REQ_F_AT_EOF == PC_REQUEST_F_AT_EOF &&
	       PERFCAP_REQ_F_AT_CLOSE == PC_REQUEST_F_AT_CLOSE &&
	       PERFCAP_REQ_F_AT_END == PC_REQUEST_F_AT_END &&
	       PERFCAP_REQ_SEEN == PC_REQUEST_SEEN && PERFCAP_REQ_CONNECTED == PC_REQUEST_CONNECTED &&
	       PERFCAP_REQ_ACCEPTED == PC_REQUEST_ACCEPTED, "kernel and capture flags differ");

static struct req_bpf *skel;
static uint64_t at_end;              /* requests written from the map at the end */
static bool open_unread;             /* the iterator failed: open requests not read */

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
	/* the iterator is attached at the end, with the map (req_tick) */
	bpf_program__set_autoattach(skel->progs.dump_open, false);
	err = source_reuse_shared_maps(env, skel->obj, why, len);
	if (!err)
		err = source_loaded(req_bpf__load(skel), "cannot load the BPF programs", why, len);
	return err;
}

static int req_attach(const struct source_env *env, char *why, size_t len)
{
	int err = req_bpf__attach(skel);

	(void)env;
	if (err)
		source_explain(why, len, "cannot attach sock_recv_length/sock_send_length/"
			       "sk_data_ready/inet_sock_set_state", err);
	return err;
}

static void req_detach(void)
{
	if (skel)
		req_bpf__detach(skel);
}

static void req_destroy(void)
{
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

static void req_handle(struct consumer *c, const void *data, size_t size)
{
	const struct perfcap_request *e = data;

	if (e->h.type != PERFCAP_EV_REQUEST || size < sizeof(*e)) {
		consumer_drop(c, PERFCAP_SRC_REQ);
		return;
	}
	write_request(c, e, e->h.flags);
}

/* At the end: the requests still open (answered at least once), read
 * through the iterator over the socket storage (dump_open), which nothing
 * writes any more (the programs are detached). */
static void req_tick(struct consumer *c, uint64_t now_ns, bool final)
{
	DECLARE_LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info info = { .map.map_fd = bpf_map__fd(skel->maps.reqs) };
	struct perfcap_request r;
	struct bpf_link *link;
	int fd;

	(void)now_ns;
	if (!final || !skel)
		return;
	opts.link_info = &info;
	opts.link_info_len = sizeof(info);
	link = bpf_program__attach_iter(skel->progs.dump_open, &opts);
	fd = link ? bpf_iter_create(bpf_link__fd(link)) : -1;
	if (fd < 0) {
		open_unread = true;
		bpf_link__destroy(link);
		return;
	}
	while (read_full(fd, &r, sizeof(r)) == (ssize_t)sizeof(r)) {
		write_request(c, &r, r.h.flags | PC_REQUEST_F_AT_END);
		at_end++;
	}
	close(fd);
	bpf_link__destroy(link);
}

/* ---- metadata and counters ----------------------------------------------- */

static int req_meta(struct chunk_buffer *kv, const struct source_env *env)
{
	int err = 0;

	(void)env;
	err |= chunk_buffer_add_kv(kv, "req.rule", "a read after a write starts a request; "
				   "readiness from sk_data_ready; TCP only");
	return err ? -ENOMEM : 0;
}

static int req_stats(struct chunk_buffer *kv, const struct consumer *c)
{
	int err = 0;

	(void)c;
	if (!skel)
		return 0;
	err |= chunk_buffer_add_kv_u64(kv, "req.sent", skel->bss->req_counts[PERFCAP_REQ_CNT_SENT]);
	err |= chunk_buffer_add_kv_u64(kv, "req.unanswered", skel->bss->req_counts[PERFCAP_REQ_CNT_UNANSWERED]);
	err |= chunk_buffer_add_kv_u64(kv, "req.fd_unknown", skel->bss->req_counts[PERFCAP_REQ_CNT_FD_UNKNOWN]);
	err |= chunk_buffer_add_kv_u64(kv, "req.open_at_end", at_end);
	if (open_unread)
		err |= chunk_buffer_add_kv(kv, "req.open_at_end.failed",
					   "the socket storage iterator could not be read");
	return err ? -ENOMEM : 0;
}

static const uint16_t req_event_types[] = { PERFCAP_EV_REQUEST, 0 };

const struct source req_source = {
	.summary = "requests on TCP connections: one record per request (first read after "
		   "a write to its last write), bytes, threads, arrival (sk_data_ready); "
		   "inferred in the kernel, no record per system call",
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
	.tick = req_tick,
};
