/* source_net.c - the net source (`-e net`): what the analyzer needs to
 * build connection lifetimes and request spans.
 *
 *   SOCKET       the tuple behind a socket fd (bpf/net_calls.bpf.h, run
 *                by the syscall program's sys_exit): at accept, connect,
 *                and at the first read/write/send/recv of an fd opened
 *                before the recording (discovered);
 *   TCP_STATE    TCP state changes, TCP_RETRANS retransmits (net.bpf.c),
 *                of the sockets traced tasks own when filtering;
 *   SYSCALL      the socket calls themselves (accept..sendfile, close,
 *                shutdown), from the syscall program this source shares
 *                (syscall_prog.h): its `net` set.
 * The source attaches only if both parts do. The syscall program is loaded
 * first: it makes the maps of the net part it runs, which this source's
 * object then uses too (syscall_prog_share_maps).
 */
#include <errno.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "consume/consumer.h"      /* perfcap_bpf.h, which the skeleton needs */
#include "net.skel.h"
#include "session/percpu_counts.h"
#include "source.h"
#include "syscall_prog.h"

static struct net_bpf *skel;
static bool filtering;
static uint64_t sockets[3];       /* accepted, connected, discovered */
static uint64_t tcp_states, retransmits;

/* ---- loading and attaching -------------------------------------------- */

static int load_own(const struct source_env *env, char *why, size_t len)
{
	int err;

	skel = net_bpf__open();
	if (!skel)
		return source_open_failed(why, len);
	skel->rodata->pc_config = *env->config;
	err = source_reuse_shared_maps(env, skel->obj, why, len);
	if (!err)
		err = syscall_prog_share_maps(PERFCAP_SRC_NET, skel->obj, why, len);
	if (!err)
		err = source_loaded(net_bpf__load(skel), "cannot load the BPF programs", why, len);
	return err;
}

static int net_load(const struct source_env *env, char *why, size_t len)
{
	const struct perfcap_config *c = env->config;
	int err;

	filtering = c->filter_pids || c->filter_comm || c->filter_cgroup;
	err = syscall_prog_load(PERFCAP_SRC_NET, env, why, len);
	return err ? err : load_own(env, why, len);
}

static int net_attach(const struct source_env *env, char *why, size_t len)
{
	int err = net_bpf__attach(skel);

	(void)env;
	if (err) {
		source_explain(why, len,
			       "cannot attach inet_sock_set_state/tcp_retransmit_skb", err);
		return err;
	}
	return syscall_prog_attach(PERFCAP_SRC_NET, why, len);
}

static void net_detach(void)
{
	if (skel)
		net_bpf__detach(skel);
	syscall_prog_detach(PERFCAP_SRC_NET); /* no-op unless net holds it */
}

static void net_destroy(void)
{
	net_bpf__destroy(skel);
	skel = NULL;
	syscall_prog_destroy(PERFCAP_SRC_NET);
}

/* ---- records ------------------------------------------------------------ */

static void count_socket(uint16_t flags)
{
	for (int i = 0; i < 3; i++) {
		if (flags & (1u << i))
			sockets[i]++;
	}
}

static void handle_socket(struct consumer *c, const struct perfcap_socket *e)
{
	struct pc_rec_socket rec = {
		.h.type = PC_REC_SOCKET,
		.h.flags = e->h.flags & (PC_SOCK_F_ACCEPTED | PC_SOCK_F_CONNECTED |
					 PC_SOCK_F_DISCOVERED),
		.ts = e->h.ts,
		.pid = e->pid,
		.tid = e->tid,
		.fd = e->fd,
		.family = e->family,
		.protocol = e->protocol,
		.cookie = e->cookie,
		.sport = e->sport,
		.dport = e->dport,
	};

	memcpy(rec.saddr, e->saddr, sizeof(rec.saddr));
	memcpy(rec.daddr, e->daddr, sizeof(rec.daddr));
	consumer_process(c, e->pid, e->tid, e->comm, e->h.ts);
	if (consumer_add_event(c, PERFCAP_SRC_NET, &rec, sizeof(rec), e->h.ts) == 0)
		count_socket(rec.h.flags);
}

static void handle_tcp_state(struct consumer *c, const struct perfcap_tcp_event *e)
{
	struct pc_rec_tcp_state rec = {
		.h.type = PC_REC_TCP_STATE,
		.ts = e->h.ts,
		.pid = e->pid,
		.tid = e->tid,
		.cookie = e->cookie,
		.family = e->family,
		.oldstate = e->oldstate,
		.newstate = e->newstate,
		.sport = e->sport,
		.dport = e->dport,
	};

	memcpy(rec.saddr, e->saddr, sizeof(rec.saddr));
	memcpy(rec.daddr, e->daddr, sizeof(rec.daddr));
	if (consumer_add_event(c, PERFCAP_SRC_NET, &rec, sizeof(rec), e->h.ts) == 0)
		tcp_states++;
}

static void handle_retrans(struct consumer *c, const struct perfcap_tcp_event *e)
{
	struct pc_rec_tcp_retrans rec = {
		.h.type = PC_REC_TCP_RETRANS,
		.ts = e->h.ts,
		.pid = e->pid,
		.tid = e->tid,
		.cookie = e->cookie,
		.family = e->family,
		.state = e->newstate,
		.sport = e->sport,
		.dport = e->dport,
	};

	memcpy(rec.saddr, e->saddr, sizeof(rec.saddr));
	memcpy(rec.daddr, e->daddr, sizeof(rec.daddr));
	if (consumer_add_event(c, PERFCAP_SRC_NET, &rec, sizeof(rec), e->h.ts) == 0)
		retransmits++;
}

static size_t size_of_type(uint16_t type)
{
	switch (type) {
	case PERFCAP_EV_SOCKET:      return sizeof(struct perfcap_socket);
	case PERFCAP_EV_TCP_STATE:   return sizeof(struct perfcap_tcp_event);
	case PERFCAP_EV_TCP_RETRANS: return sizeof(struct perfcap_tcp_event);
	default:                     return SIZE_MAX;
	}
}

static void net_handle(struct consumer *c, const void *rec, size_t size)
{
	const struct perfcap_event_header *h = rec;

	if (h->type == PERFCAP_EV_SYSCALL) {
		syscall_prog_handle(c, rec, size);
		return;
	}
	if (size < size_of_type(h->type)) {
		consumer_drop(c, PERFCAP_SRC_NET);
		return;
	}
	switch (h->type) {
	case PERFCAP_EV_SOCKET:      handle_socket(c, rec); break;
	case PERFCAP_EV_TCP_STATE:   handle_tcp_state(c, rec); break;
	case PERFCAP_EV_TCP_RETRANS: handle_retrans(c, rec); break;
	}
}

/* ---- metadata and counters ----------------------------------------------- */

static int net_meta(struct chunk_buffer *kv, const struct source_env *env)
{
	int err = syscall_prog_meta(PERFCAP_SRC_NET, kv);

	(void)env;
	err |= chunk_buffer_add_kv(kv, "net.tcp_sockets",
				   filtering ? "owned by traced processes" : "all");
	err |= chunk_buffer_add_kv_u64(kv, "net.sockets_max", PERFCAP_NET_SOCKS_MAX);
	err |= chunk_buffer_add_kv_u64(kv, "net.listen_ports_max", PERFCAP_NET_PORTS_MAX);
	err |= chunk_buffer_add_kv_u64(kv, "net.fds_max", PERFCAP_NET_FDS_MAX);
	return err ? -ENOMEM : 0;
}

static int add_kernel_counts(struct chunk_buffer *kv)
{
	static const char *const names[PERFCAP_NET_CNT_NR] = {
		[PERFCAP_NET_CNT_NOT_SOCKET]      = "net.fds.not_socket",
		[PERFCAP_NET_CNT_NO_FILE]         = "net.fds.not_open",
		[PERFCAP_NET_CNT_STATE_SKIPPED]   = "net.tcp_states.not_followed",
		[PERFCAP_NET_CNT_RETRANS_SKIPPED] = "net.retransmits.not_followed",
	};
	uint64_t v[PERFCAP_NET_CNT_NR];
	int err = 0;

	percpu_counts_read(skel->maps.net_counts, v, PERFCAP_NET_CNT_NR);
	for (int i = 0; i < PERFCAP_NET_CNT_NR; i++)
		err |= chunk_buffer_add_kv_u64(kv, names[i], v[i]);
	return err;
}

static int net_stats(struct chunk_buffer *kv, const struct consumer *c)
{
	int err = syscall_prog_stats(PERFCAP_SRC_NET, kv);

	(void)c;
	err |= chunk_buffer_add_kv_u64(kv, "net.sockets.accepted", sockets[0]);
	err |= chunk_buffer_add_kv_u64(kv, "net.sockets.connected", sockets[1]);
	err |= chunk_buffer_add_kv_u64(kv, "net.sockets.discovered", sockets[2]);
	err |= chunk_buffer_add_kv_u64(kv, "net.tcp_states", tcp_states);
	err |= chunk_buffer_add_kv_u64(kv, "net.retransmits", retransmits);
	if (skel)
		err |= add_kernel_counts(kv);
	return err ? -ENOMEM : 0;
}

/* The syscall program's windows (--syscall-rate): ticked and told by the
 * program's primary holder only (syscall_prog.c). */
static void net_tick(struct consumer *c, uint64_t now_ns, bool final)
{
	syscall_prog_tick(PERFCAP_SRC_NET, c, now_ns, final);
}

static void net_note(char *buf, size_t len)
{
	syscall_prog_note(PERFCAP_SRC_NET, buf, len);
}

static const uint16_t net_event_types[] = {
	PERFCAP_EV_SOCKET, PERFCAP_EV_TCP_STATE, PERFCAP_EV_TCP_RETRANS, PERFCAP_EV_SYSCALL, 0
};

const struct source net_source = {
	.summary = "socket tuples (accept/connect/first use), TCP state changes and "
		   "retransmits, socket syscalls",
	.id = PERFCAP_SRC_NET,
	.event_types = net_event_types,
	.load = net_load,
	.attach = net_attach,
	.detach = net_detach,
	.destroy = net_destroy,
	.handle = net_handle,
	.meta = net_meta,
	.stats = net_stats,
	.tick = net_tick,
	.summary_note = net_note,
};
