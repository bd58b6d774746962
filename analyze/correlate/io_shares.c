/* io_shares.c - what system calls and block requests add to a thread's
 * time shares: syscalls and their time, futex waits and wakes (by futex
 * operation), poll-family calls, read/write time on files (vfs) and on
 * sockets (net), and the block requests the thread submitted. A call's time
 * is cut at window edges; counts go to the window the call started in, a
 * block request's to the window it completed in. */
#include <string.h>

#include "correlate_state.h"
#include "util/syscalls.h"

/* futex(2) operations, without FUTEX_PRIVATE_FLAG and FUTEX_CLOCK_REALTIME */
#define FUTEX_CMD_MASK 0x7fu

static int futex_op_waits(uint32_t op)
{
	switch (op & FUTEX_CMD_MASK) {
	case 0:  /* FUTEX_WAIT */
	case 6:  /* FUTEX_LOCK_PI */
	case 9:  /* FUTEX_WAIT_BITSET */
	case 11: /* FUTEX_WAIT_REQUEUE_PI */
	case 13: /* FUTEX_LOCK_PI2 */
		return 1;
	default:
		return 0;
	}
}

static int futex_op_wakes(uint32_t op)
{
	switch (op & FUTEX_CMD_MASK) {
	case 1:  /* FUTEX_WAKE */
	case 3:  /* FUTEX_REQUEUE */
	case 4:  /* FUTEX_CMP_REQUEUE */
	case 5:  /* FUTEX_WAKE_OP */
	case 7:  /* FUTEX_UNLOCK_PI */
	case 10: /* FUTEX_WAKE_BITSET */
	case 12: /* FUTEX_CMP_REQUEUE_PI */
		return 1;
	default:
		return 0;
	}
}

/* The column a futex call counts in, or -1. */
static int futex_column(const struct tl_event *ev, const struct syscall_info *info)
{
	if (info->family != SC_FUTEX)
		return -1;
	if (strcmp(info->name, "futex_waitv") == 0)
		return SH_FUTEX_WAITS;
	if (futex_op_waits(ev->u2))
		return SH_FUTEX_WAITS;
	return futex_op_wakes(ev->u2) ? SH_FUTEX_WAKES : -1;
}

/* The column of a call's time if it moves bytes, or -1. */
static int io_column(struct correlator *c, const struct tl_event *ev,
		     const struct syscall_info *info)
{
	int on_socket;

	if (!(info->flags & (SC_F_READ | SC_F_WRITE)))
		return -1;
	on_socket = info->family == SC_NET || socket_fd_known(c, ev->pid, syscall_fd(ev));
	if (info->flags & SC_F_READ)
		return on_socket ? SH_NET_RECV : SH_VFS_READ;
	return on_socket ? SH_NET_SEND : SH_VFS_WRITE;
}

/* The calls a call stands for, whole: a weight's fractions carried from
 * call to call (error diffusion), so that sums stay unbiased. */
static uint64_t weighted_count(struct correlator *c, double w)
{
	uint64_t n;

	c->weight_carry += w;
	n = (uint64_t)c->weight_carry;
	c->weight_carry -= (double)n;
	return n;
}

/* The time of a call, [start, end), spread over the windows it overlaps;
 * weighted, its length times the weight. */
static int add_call_time(struct time_shares *s, const struct tl_event *ev, double w,
			 enum share_column col)
{
	if (w == 1.0)
		return shares_add_time(s, ev->pid, ev->tid, ev->start, ev->key, col);
	return shares_add_spread(s, ev->pid, ev->tid, ev->start, ev->key, col,
				 (uint64_t)((double)(ev->key - ev->start) * w + 0.5));
}

/* A recorded call; above --syscall-rate (syscall windows) it stands for
 * ev->weight calls, and its counts and times are weighted. */
int shares_on_syscall(struct correlator *c, const struct tl_event *ev)
{
	struct time_shares *s = &c->shares;
	const struct syscall_info *info = syscall_info(ev->u1);
	int futex = futex_column(ev, info), io = io_column(c, ev, info);
	double w = ev->weight > 0 ? ev->weight : 1.0;
	uint64_t n;

	if (c->summed_syscalls)
		return 0; /* the agg source's sums fill these columns (metric_shares.c) */
	n = w == 1.0 ? 1 : weighted_count(c, w);
	if (shares_add_count(s, ev->pid, ev->tid, ev->start, SH_SYSCALLS, n) ||
	    add_call_time(s, ev, w, SH_SYSCALL_NS))
		return -1;
	if (futex >= 0 && shares_add_count(s, ev->pid, ev->tid, ev->start, futex, n))
		return -1;
	if (info->family == SC_POLL &&
	    shares_add_count(s, ev->pid, ev->tid, ev->start, SH_POLL_WAITS, n))
		return -1;
	if (io >= 0 && add_call_time(s, ev, w, io))
		return -1;
	return 0;
}

int shares_on_block(struct correlator *c, const struct tl_event *ev)
{
	struct time_shares *s = &c->shares;
	uint32_t pid = ev->pid, tid = ev->tid;
	uint64_t at = ev->key;

	if (tid == 0)
		return 0;
	if (shares_add_count(s, pid, tid, at, SH_BLOCK_REQUESTS, 1) ||
	    shares_add_count(s, pid, tid, at, SH_BLOCK_BYTES, ev->u1) ||
	    shares_add_count(s, pid, tid, at, SH_BLOCK_QUEUE, ev->arg) ||
	    shares_add_count(s, pid, tid, at, SH_BLOCK_SERVICE, (uint64_t)ev->ret))
		return -1;
	return 0;
}
