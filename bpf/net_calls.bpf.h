/* net_calls.bpf.h - the net source's look at socket system calls: which
 * connection an fd is (SOCKET records), and which TCP sockets and ports a
 * traced process owns (`socks`, `ports`, read by net.bpf.c's TCP
 * programs). Included by net.bpf.c (its TCP programs use the maps and the
 * tuple helpers) and by syscall.bpf.c, whose sys_exit program calls
 * net_sys_exit() when the net source is selected: one program per system
 * call exit on the host, not two (a program costs its dispatch and its
 * filter on every call of every process). Both objects declare these
 * maps; user space makes the net object use the syscall object's
 * (record/sources/source_net.c), so there is one `fds`, `socks`, `ports`
 * and `net_counts`.
 *
 * SOCKET, at the exit of the few calls below (a bit test on the syscall
 * number):
 *   accept/accept4 -> the new fd (ret), flag accepted; connect (0 or
 *   EINPROGRESS) -> fd arg0, flag connected; read, write, readv, writev,
 *   sendto, recvfrom, sendmsg, recvmsg, sendmmsg, recvmmsg, sendfile on an
 *   fd of a traced process not classified yet -> if it is a socket, flag
 *   discovered (keep-alive connections opened before the recording).
 *   `fds` remembers (tgid, fd) -> classified, so the common case costs one
 *   hash lookup. close forgets the fd; socket/dup/dup2/dup3/fcntl(F_DUPFD)
 *   forget the fd they return, so a reused fd number is classified afresh.
 *   fd -> socket: task->files->fdt->fd[fd] (bounds-checked against
 *   max_fds), a socket inode, file->private_data (struct socket) -> sk.
 */
#ifndef PERFCAP_NET_CALLS_BPF_H
#define PERFCAP_NET_CALLS_BPF_H

#include "perfcap_common.bpf.h"
#include <bpf/bpf_endian.h>
#include "linux_abi.bpf.h"

#define BIT(nr) (1ull << (nr))
/* The calls below 64 that matter: one bit test rejects all others. */
#define LOW_CALLS (BIT(NR_read) | BIT(NR_write) | BIT(NR_close) | BIT(NR_readv) |     \
		   BIT(NR_writev) | BIT(NR_dup) | BIT(NR_dup2) | BIT(NR_sendfile) |    \
		   BIT(NR_socket) | BIT(NR_connect) | BIT(NR_accept) | BIT(NR_sendto) | \
		   BIT(NR_recvfrom) | BIT(NR_sendmsg) | BIT(NR_recvmsg) | BIT(NR_listen))
#define IO_CALLS (BIT(NR_read) | BIT(NR_write) | BIT(NR_readv) | BIT(NR_writev) |      \
		  BIT(NR_sendfile) | BIT(NR_sendto) | BIT(NR_recvfrom) |               \
		  BIT(NR_sendmsg) | BIT(NR_recvmsg))

enum fd_kind { FD_SOCKET = 1, FD_OTHER = 2 };

struct fd_key {
	__u32 tgid;
	__s32 fd;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, PERFCAP_NET_FDS_MAX);
	__type(key, struct fd_key);
	__type(value, __u8);    /* enum fd_kind */
} fds SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, PERFCAP_NET_SOCKS_MAX);
	__type(key, __u64);     /* struct sock address */
	__type(value, __u32);   /* owner tgid */
} socks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, PERFCAP_NET_PORTS_MAX);
	__type(key, __u16);     /* local port of a listening socket */
	__type(value, __u32);   /* owner tgid */
} ports SEC(".maps");

PC_COUNTERS(net_counts, PERFCAP_NET_CNT_NR); /* enum perfcap_net_count */

static __always_inline void net_count(__u32 what)
{
	pc_counter_add(&net_counts, what, 1);
}

static __always_inline bool filtering(void)
{
	return pc_config.filter_pids || pc_config.filter_comm || pc_config.filter_cgroup;
}

/* ---- fd -> socket ------------------------------------------------------------ */

static __always_inline struct file *fd_file(struct task_struct *task, int fd)
{
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **array;
	struct file *file = NULL;

	if (!fdt || fd < 0 || (unsigned int)fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	array = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&file, sizeof(file), &array[fd]))
		return NULL;
	return file;
}

/* The sock behind file, or NULL if file is not a socket. */
static __always_inline struct sock *file_sock(struct file *file)
{
	struct socket *sock;

	if ((BPF_CORE_READ(file, f_inode, i_mode) & S_IFMT) != S_IFSOCK)
		return NULL;
	sock = BPF_CORE_READ(file, private_data);
	return sock ? BPF_CORE_READ(sock, sk) : NULL;
}

/* ---- tuples ------------------------------------------------------------------ */

struct tuple {
	__u16 family, protocol;
	__u16 sport, dport;     /* host order */
	__u8  saddr[16], daddr[16];
};

/* inet_sport, not skc_num: the latter is 0 once the port is released (the
 * change to CLOSE of an accepted socket). Only for AF_INET/AF_INET6. */
static __always_inline __u16 local_port(const struct sock *sk)
{
	return bpf_ntohs(BPF_CORE_READ((struct inet_sock *)sk, inet_sport));
}

static __always_inline void read_tuple(const struct sock *sk, struct tuple *t)
{
	__builtin_memset(t, 0, sizeof(*t));
	t->family = BPF_CORE_READ(sk, __sk_common.skc_family);
	t->protocol = BPF_CORE_READ(sk, sk_protocol);
	if (t->family != AF_INET && t->family != AF_INET6)
		return;
	t->sport = local_port(sk);
	t->dport = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
	if (t->family == AF_INET) {
		bpf_probe_read_kernel(t->saddr, 4, &sk->__sk_common.skc_rcv_saddr);
		bpf_probe_read_kernel(t->daddr, 4, &sk->__sk_common.skc_daddr);
	} else if (t->family == AF_INET6) {
		bpf_probe_read_kernel(t->saddr, 16, &sk->__sk_common.skc_v6_rcv_saddr);
		bpf_probe_read_kernel(t->daddr, 16, &sk->__sk_common.skc_v6_daddr);
	}
}

static __always_inline bool is_tcp(const struct tuple *t)
{
	return t->protocol == IPPROTO_TCP && (t->family == AF_INET || t->family == AF_INET6);
}

/* ---- ownership (only kept while filtering) ------------------------------------- */

static __always_inline void own_sock(const struct sock *sk, __u32 tgid)
{
	__u64 key = (__u64)sk;

	if (bpf_map_update_elem(&socks, &key, &tgid, BPF_ANY))
		pc_count(PERFCAP_SRC_NET, PERFCAP_LOSS_MAP_FULL);
}

static __always_inline void own_port(const struct sock *sk, __u32 tgid)
{
	__u16 port = local_port(sk);

	if (port && bpf_map_update_elem(&ports, &port, &tgid, BPF_ANY))
		pc_count(PERFCAP_SRC_NET, PERFCAP_LOSS_MAP_FULL);
}

/* A passive open: the child socket of a listener a traced process owns. */
static __always_inline bool owned_child(const struct sock *sk)
{
	__u16 port = local_port(sk);
	__u32 *owner = bpf_map_lookup_elem(&ports, &port);

	if (owner)
		own_sock(sk, *owner);
	return owner != NULL;
}

/* Is this TCP socket followed? Owned sockets are; a change to SYN_SENT
 * (connect) or LISTEN (listen) always runs in the task that asked for it,
 * so a traced task doing one takes the socket; a change to SYN_RECV is a
 * new child of a listener. Retransmits (newstate -1) only of owned ones. */
static __always_inline bool sock_followed(const struct sock *sk, int newstate)
{
	struct task_struct *task;
	__u64 key = (__u64)sk;

	if (!filtering() || bpf_map_lookup_elem(&socks, &key))
		return true;
	if (newstate == TCP_SYN_RECV)
		return owned_child(sk);
	if (newstate != TCP_SYN_SENT && newstate != TCP_LISTEN)
		return false;
	task = bpf_get_current_task_btf();
	if (!pc_task_traced(task))
		return false;
	own_sock(sk, task->tgid);
	if (newstate == TCP_LISTEN)
		own_port(sk, task->tgid);
	return true;
}

/* ---- SOCKET records -------------------------------------------------------------- */

static __always_inline void emit_socket(struct task_struct *task, const struct sock *sk,
					int fd, __u16 flags, __u64 now)
{
	void *ring = pc_ring(PERFCAP_SRC_NET);
	struct perfcap_socket *r;
	struct tuple t;

	read_tuple(sk, &t);
	if (filtering() && is_tcp(&t))
		own_sock(sk, task->tgid);
	if (!ring || !pc_admit_unsampled(PERFCAP_SRC_NET, now))
		return;
	r = pc_reserve(ring, PERFCAP_SRC_NET, sizeof(*r));
	if (!r)
		return;
	pc_header(&r->h, PERFCAP_EV_SOCKET, now);
	r->h.flags = flags;
	r->pid = task->tgid;
	r->tid = task->pid;
	r->fd = fd;
	r->family = t.family;
	r->protocol = t.protocol;
	r->cookie = (__u64)sk;
	__builtin_memcpy(r->saddr, t.saddr, 16);
	__builtin_memcpy(r->daddr, t.daddr, 16);
	r->sport = t.sport;
	r->dport = t.dport;
	r->reserved = 0;
	pc_copy_comm(r->comm, task->comm);
	pc_submit(ring, r);
}

static __always_inline void remember_fd(__u32 tgid, int fd, __u8 kind)
{
	struct fd_key key = { .tgid = tgid, .fd = fd };

	bpf_map_update_elem(&fds, &key, &kind, BPF_ANY);
}

static __always_inline void forget_fd(__u32 tgid, long fd)
{
	struct fd_key key = { .tgid = tgid, .fd = (int)fd };

	bpf_map_delete_elem(&fds, &key);
}

/* A SOCKET record for fd (accepted, connected or discovered). */
static __always_inline void describe_fd(struct task_struct *task, int fd, __u16 flags)
{
	struct file *file = fd_file(task, fd);
	struct sock *sk;

	if (!file) {
		net_count(PERFCAP_NET_CNT_NO_FILE);
		return;
	}
	sk = file_sock(file);
	if (!sk) {
		net_count(PERFCAP_NET_CNT_NOT_SOCKET);
		remember_fd(task->tgid, fd, FD_OTHER);
		return;
	}
	remember_fd(task->tgid, fd, FD_SOCKET);
	emit_socket(task, sk, fd, flags, bpf_ktime_get_ns());
}

/* First read/write/send/recv on an fd not classified yet. */
static __always_inline void discover_fd(struct task_struct *task, long fd)
{
	struct fd_key key = { .tgid = task->tgid, .fd = (int)fd };

	if (bpf_map_lookup_elem(&fds, &key))
		return; /* the common case */
	describe_fd(task, (int)fd, PERFCAP_SOCK_F_DISCOVERED);
}

/* A listening socket of a traced process (fd): owned, with its port. */
static __always_inline void learn_listener(struct task_struct *task, long fd)
{
	struct file *file;
	struct sock *sk;

	if (!filtering())
		return;
	file = fd_file(task, (int)fd);
	sk = file ? file_sock(file) : NULL;
	if (!sk || BPF_CORE_READ(sk, sk_protocol) != IPPROTO_TCP)
		return;
	own_sock(sk, task->tgid);
	own_port(sk, task->tgid);
}

static __always_inline bool net_interesting(long nr)
{
	if (nr >= 0 && nr < 64)
		return LOW_CALLS & BIT(nr);
	return nr == NR_fcntl || nr == NR_accept4 || nr == NR_dup3 || nr == NR_recvmmsg ||
	       nr == NR_sendmmsg;
}

static __always_inline bool is_io_call(long nr)
{
	if (nr >= 0 && nr < 64)
		return IO_CALLS & BIT(nr);
	return nr == NR_recvmmsg || nr == NR_sendmmsg;
}

/* A call that returns a new fd: forget what that number was before. */
static __always_inline bool returns_new_fd(long nr, struct pt_regs *regs)
{
	if (nr == NR_socket || nr == NR_dup || nr == NR_dup2 || nr == NR_dup3)
		return true;
	return nr == NR_fcntl && (regs->si == F_DUPFD || regs->si == F_DUPFD_CLOEXEC);
}

static __always_inline void net_on_call(struct task_struct *task, long nr, struct pt_regs *regs,
				    long ret)
{
	long arg0 = regs->di;

	if (is_io_call(nr))
		discover_fd(task, arg0);
	else if ((nr == NR_accept || nr == NR_accept4) && ret >= 0) {
		describe_fd(task, (int)ret, PERFCAP_SOCK_F_ACCEPTED);
		learn_listener(task, arg0);
	} else if (nr == NR_connect && (ret == 0 || ret == -EINPROGRESS))
		describe_fd(task, (int)arg0, PERFCAP_SOCK_F_CONNECTED);
	else if (nr == NR_listen && ret == 0)
		learn_listener(task, arg0);
	else if (nr == NR_close)
		forget_fd(task->tgid, arg0);
	else if (ret >= 0 && returns_new_fd(nr, regs))
		forget_fd(task->tgid, ret);
}

/* The exit of a system call of task, a traced task (the caller filters),
 * that returned ret: a SOCKET record when it tells which connection an fd
 * is, `fds` kept up to date. */
static __always_inline void net_sys_exit(struct task_struct *task, struct pt_regs *regs, long ret)
{
	long nr = regs->orig_ax; /* BTF pointer: a direct load */

	if (net_interesting(nr))
		net_on_call(task, nr, regs, ret);
}

#endif /* PERFCAP_NET_CALLS_BPF_H */
