/* wait_class.c - task state kinds and off-CPU wait classes (see
 * wait_class.h). Task state bits are read in both encodings a recorder may
 * pass on: the raw task->__state (tp_btf: TASK_IDLE is 0x402, TASK_DEAD
 * 0x80) and the sched_switch tracepoint's report bits (0x100 preempted,
 * 0x10/0x20 exit states). */
#include <string.h>

#include "correlate_state.h"
#include "util/syscalls.h"
#include "wait_class.h"

#define TASK_INTERRUPTIBLE   0x0001u
#define TASK_UNINTERRUPTIBLE 0x0002u
#define TASK_STOPPED_TRACED  0x000cu
#define TASK_EXITED          0x0030u  /* EXIT_DEAD, EXIT_ZOMBIE */
#define TASK_PARKED          0x0040u
#define TASK_DEAD            0x0080u
#define TASK_NOLOAD          0x0400u  /* with UNINTERRUPTIBLE: TASK_IDLE */

int task_state_kind(uint32_t bits)
{
	if ((bits & 0xffu) == 0 && !(bits & TASK_NOLOAD))
		return ST_RUNNABLE;   /* 0, or the tracepoint's "preempted" 0x100 */
	if (bits & (TASK_EXITED | TASK_DEAD))
		return ST_DEAD;
	if ((bits & TASK_NOLOAD) || (bits & TASK_INTERRUPTIBLE))
		return ST_SLEEP;      /* idle kernel threads sleep, they do not do I/O */
	if (bits & TASK_UNINTERRUPTIBLE)
		return ST_IO;
	return ST_BLOCKED;        /* stopped, traced, parked */
}

static enum wait_class by_state(int kind)
{
	switch (kind) {
	case ST_RUNNABLE: return WC_PREEMPTED;
	case ST_IO:       return WC_BLOCK_IO;
	case ST_SLEEP:    return WC_UNKNOWN; /* interruptible: could be anything */
	default:          return WC_OTHER;
	}
}

static enum wait_class by_rw_call(const struct wait_facts *f)
{
	if (f->fd_is_socket)
		return WC_NET;
	if (f->kind == ST_IO || f->block_io_done)
		return WC_BLOCK_IO;
	return WC_OTHER;
}

enum wait_class wait_classify(const struct wait_facts *f)
{
	int kind = f->kind;

	if (kind == ST_RUNNABLE)
		return WC_PREEMPTED;
	if (!f->in_syscall)
		return by_state(kind);
	switch (syscall_info(f->syscall_nr)->family) {
	case SC_FUTEX: return WC_FUTEX;
	case SC_POLL:  return WC_POLL;
	case SC_SLEEP: return WC_SLEEP;
	case SC_SYNC:  return WC_BLOCK_IO;
	case SC_NET:   return WC_NET;
	case SC_RW:    return by_rw_call(f);
	default:       return kind == ST_IO ? WC_BLOCK_IO : WC_OTHER;
	}
}

/* Kernel functions a task sleeps under, and what each says the task waits
 * for. Matched as a prefix of the frame's name; the innermost frame that
 * matches decides. Generic sleeping primitives (schedule, schedule_timeout,
 * schedule_hrtimeout_range, wait_woken) are absent on purpose: epoll and
 * sockets sleep through them too, so only their callers tell. */
static const struct {
	const char *prefix;
	enum wait_class wc;
} kernel_waits[] = {
	/* futex(2): glibc mutexes, condition variables, semaphores */
	{ "futex_wait", WC_FUTEX }, { "futex_do_wait", WC_FUTEX },
	{ "__futex_wait", WC_FUTEX }, { "futex_lock_pi", WC_FUTEX },
	/* waiting for any of many fds */
	{ "ep_poll", WC_POLL }, { "do_epoll_wait", WC_POLL }, { "do_select", WC_POLL },
	{ "core_sys_select", WC_POLL }, { "do_sys_poll", WC_POLL }, { "do_poll", WC_POLL },
	{ "io_cqring_wait", WC_POLL },
	/* a server waiting for a client */
	{ "inet_csk_accept", WC_ACCEPT }, { "inet_csk_wait_for_connect", WC_ACCEPT },
	{ "unix_accept", WC_ACCEPT },
	/* sockets: receive, send, connect */
	{ "sk_wait_data", WC_NET }, { "tcp_recvmsg", WC_NET }, { "udp_recvmsg", WC_NET },
	{ "unix_stream_read_generic", WC_NET }, { "unix_stream_data_wait", WC_NET },
	{ "unix_dgram_recvmsg", WC_NET }, { "__skb_wait_for_more_packets", WC_NET },
	{ "__skb_recv_datagram", WC_NET }, { "sk_stream_wait_memory", WC_NET },
	{ "sock_alloc_send_pskb", WC_NET }, { "inet_wait_for_connect", WC_NET },
	{ "__inet_stream_connect", WC_NET }, { "sk_stream_wait_connect", WC_NET },
	{ "tcp_sendmsg", WC_NET }, { "unix_wait_for_peer", WC_NET },
	/* disk and page cache */
	{ "io_schedule", WC_BLOCK_IO }, { "folio_wait", WC_BLOCK_IO },
	{ "__folio_lock", WC_BLOCK_IO }, { "wait_on_page", WC_BLOCK_IO },
	{ "__lock_page", WC_BLOCK_IO }, { "bit_wait_io", WC_BLOCK_IO },
	{ "blk_mq_get_tag", WC_BLOCK_IO }, { "submit_bio_wait", WC_BLOCK_IO },
	{ "wait_for_completion_io", WC_BLOCK_IO }, { "__wait_on_buffer", WC_BLOCK_IO },
	{ "jbd2_", WC_BLOCK_IO }, { "blkdev_issue_flush", WC_BLOCK_IO },
	{ "xlog_wait", WC_BLOCK_IO }, { "xfs_log_force", WC_BLOCK_IO },
	{ "btrfs_", WC_BLOCK_IO }, { "ext4_sync_file", WC_BLOCK_IO },
	{ "file_write_and_wait", WC_BLOCK_IO }, { "filemap_fdatawait", WC_BLOCK_IO },
	{ "__filemap_fdatawait", WC_BLOCK_IO },
	/* kernel locks */
	{ "rwsem_down_", WC_KERNEL_LOCK }, { "__mutex_lock", WC_KERNEL_LOCK },
	{ "mutex_lock", WC_KERNEL_LOCK }, { "percpu_rwsem_wait", WC_KERNEL_LOCK },
	{ "__rt_mutex", WC_KERNEL_LOCK }, { "rt_mutex_", WC_KERNEL_LOCK },
	/* pipes, FIFOs, terminals */
	{ "pipe_read", WC_PIPE }, { "pipe_write", WC_PIPE }, { "pipe_wait", WC_PIPE },
	{ "wait_for_partner", WC_PIPE }, { "n_tty_read", WC_PIPE }, { "n_tty_write", WC_PIPE },
	/* timers the thread asked for */
	{ "do_nanosleep", WC_SLEEP }, { "hrtimer_nanosleep", WC_SLEEP },
	{ "common_nsleep", WC_SLEEP }, { "msleep", WC_SLEEP }, { "usleep_range", WC_SLEEP },
	{ "__x64_sys_pause", WC_OTHER }, { "do_sigtimedwait", WC_OTHER },
	{ "sigsuspend", WC_OTHER }, { "__x64_sys_rt_sigsuspend", WC_OTHER },
	/* waiting for a child, ptrace stops */
	{ "do_wait", WC_OTHER }, { "kernel_wait4", WC_OTHER }, { "ptrace_stop", WC_OTHER },
	{ "do_signal_stop", WC_OTHER },
};

enum wait_class wait_class_of_kernel_function(const char *name)
{
	if (!name)
		return WC_N;
	for (size_t i = 0; i < sizeof(kernel_waits) / sizeof(kernel_waits[0]); i++) {
		const char *p = kernel_waits[i].prefix;
		if (strncmp(name, p, strlen(p)) == 0)
			return kernel_waits[i].wc;
	}
	return WC_N;
}

enum wait_class wait_class_of_kernel_stack(const char *const *names, int n)
{
	for (int i = 0; i < n; i++) {
		enum wait_class wc = wait_class_of_kernel_function(names[i]);
		if (wc != WC_N)
			return wc;
	}
	return WC_N;
}

const char *wait_class_name(enum wait_class wc)
{
	static const char *const names[] = {
		"preempted", "block_io", "futex", "poll", "sleep", "net", "other",
		"unknown", "accept", "kernel_lock", "pipe",
	};
	_Static_assert(sizeof(names) / sizeof(names[0]) == WC_N, "a name per class");

	return (unsigned)wc < WC_N ? names[wc] : "unknown";
}
