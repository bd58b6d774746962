// SPDX-License-Identifier: GPL-2.0-only
/* net.bpf.c - kernel side of the net source: the connection tuple behind
 * socket fds (SOCKET), TCP state changes (TCP_STATE) and retransmits
 * (TCP_RETRANS). The socket syscalls themselves (durations, bytes) are the
 * syscall source's SYSCALL records; the net source only says which
 * connection an fd is.
 *
 * SOCKET records are made at system call exits by the syscall object's
 * sys_exit program, which runs this source's part (net_calls.bpf.h:
 * accept, connect, the first read or write of an fd not classified yet)
 * when the net source is selected; this object keeps the TCP programs,
 * which share that part's maps (user space makes them one).
 *
 * TCP_STATE / TCP_RETRANS: without a filter, every TCP socket. With one,
 * state changes often run in softirq context where `current` is unrelated,
 * so they are keyed by socket: the sockets in `socks` (TCP sockets a traced
 * process owns) are followed. A socket gets there when a SOCKET record is
 * written for it, when a traced task connects it (CLOSE -> SYN_SENT, which
 * runs inside connect(), before its SOCKET record) or listens on it, and,
 * for a passive open, when the child socket appears (LISTEN -> SYN_RECV,
 * in softirq) on a port that a traced process listens on (`ports`: learned
 * at listen and accept). A socket is forgotten at its change to CLOSE (a
 * listener's port too).
 *
 * Only tp_btf programs: no tracefs, kprobes or trampolines.
 */
#include "net_calls.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* ---- TCP state changes and retransmits ----------------------------------------- */

static __always_inline void emit_tcp(__u16 type, const struct sock *sk, int oldstate,
				     int newstate, __u64 now)
{
	struct task_struct *task = bpf_get_current_task_btf();
	void *ring = pc_ring(PERFCAP_SRC_NET);
	struct perfcap_tcp_event *r;
	struct tuple t;

	if (!ring)
		return;
	r = pc_reserve(ring, PERFCAP_SRC_NET, sizeof(*r));
	if (!r)
		return;
	read_tuple(sk, &t);
	pc_header(&r->h, type, now);
	r->pid = task->tgid;
	r->tid = task->pid;
	r->cookie = (__u64)sk;
	r->family = t.family;
	r->oldstate = oldstate;
	r->newstate = newstate;
	r->reserved = 0;
	r->sport = t.sport;
	r->dport = t.dport;
	__builtin_memcpy(r->saddr, t.saddr, 16);
	__builtin_memcpy(r->daddr, t.daddr, 16);
	r->reserved2 = 0;
	pc_submit(ring, r);
}

/* A socket closed: forgotten, and a listener's port with it. */
static __always_inline void forget_sock(const struct sock *sk, int oldstate)
{
	__u64 key = (__u64)sk;
	__u16 port;

	bpf_map_delete_elem(&socks, &key);
	if (oldstate != TCP_LISTEN)
		return;
	port = local_port(sk);
	bpf_map_delete_elem(&ports, &port);
}

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(on_set_state, const struct sock *sk, const int oldstate, const int newstate)
{
	__u64 now;

	if (BPF_CORE_READ(sk, sk_protocol) != IPPROTO_TCP)
		return 0;
	if (!sock_followed(sk, newstate)) {
		net_count(PERFCAP_NET_CNT_STATE_SKIPPED);
		return 0;
	}
	now = bpf_ktime_get_ns();
	if (pc_admit_unsampled(PERFCAP_SRC_NET, now))
		emit_tcp(PERFCAP_EV_TCP_STATE, sk, oldstate, newstate, now);
	if (newstate == TCP_CLOSE && filtering())
		forget_sock(sk, oldstate);
	return 0;
}

SEC("tp_btf/tcp_retransmit_skb")
int BPF_PROG(on_retransmit, const struct sock *sk)
{
	__u64 now;

	if (!sock_followed(sk, -1)) {
		net_count(PERFCAP_NET_CNT_RETRANS_SKIPPED);
		return 0;
	}
	now = bpf_ktime_get_ns();
	if (pc_admit_unsampled(PERFCAP_SRC_NET, now))
		emit_tcp(PERFCAP_EV_TCP_RETRANS, sk, 0, BPF_CORE_READ(sk, __sk_common.skc_state), now);
	return 0;
}
