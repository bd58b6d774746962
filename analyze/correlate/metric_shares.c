/* metric_shares.c - what the recorder's kernel sums (THREAD_METRIC
 * records) add to a thread's time shares.
 *
 * agg (calls): every class adds its calls and ns to syscalls / syscall_ns;
 * futex waits add futex_waits and futex_wait_ns (the calls' whole
 * duration), futex wakes futex_wakes, poll-family calls poll_waits and
 * poll_wait_ns, socket and file transfers net_recv / net_send / vfs_read /
 * vfs_write ns.
 * waits (flag WAIT, blocked intervals): the same columns but syscalls and
 * syscall_ns, with the blocked time (switch-out to wakeup) and the number
 * of blocking waits; futex_wakes counts the waiters woken.
 * With both in one capture the agg sums fill the shares and the waits sums
 * are only stored. A sum goes whole to the analysis window that holds the
 * middle of its recorder window (both start at record.start_ns, so with
 * the default 1 s windows they are the same). */
#include "correlate_state.h"
#include "perfcap_format.h"

static int add(struct correlator *c, const struct metric_sum *m, uint64_t at,
	       enum share_column col, uint64_t n)
{
	return n ? shares_add_count(&c->shares, m->pid, m->tid, at, col, n) : 0;
}

int correlator_add_metric(struct correlator *c, const struct metric_sum *m)
{
	uint64_t at = m->window_start + m->window_ns / 2;
	int err = 0;

	c->summed_syscalls = 1;
	if (!m->wait)
		c->summed_calls = 1;
	else if (c->summed_calls)
		return 0;
	if (!m->wait) {
		err |= add(c, m, at, SH_SYSCALLS, m->count);
		err |= add(c, m, at, SH_SYSCALL_NS, m->total_ns);
	}
	switch (m->klass) {
	case PC_METRIC_FUTEX_WAIT:
		err |= add(c, m, at, SH_FUTEX_WAITS, m->count);
		err |= add(c, m, at, SH_FUTEX_WAIT, m->total_ns);
		break;
	case PC_METRIC_FUTEX_WAKE:
		err |= add(c, m, at, SH_FUTEX_WAKES, m->count);
		break;
	case PC_METRIC_POLL:
		err |= add(c, m, at, SH_POLL_WAITS, m->count);
		err |= add(c, m, at, SH_POLL_WAIT, m->total_ns);
		break;
	case PC_METRIC_NET_RECV:
		err |= add(c, m, at, SH_NET_RECV, m->total_ns);
		break;
	case PC_METRIC_NET_SEND:
		err |= add(c, m, at, SH_NET_SEND, m->total_ns);
		break;
	case PC_METRIC_VFS_READ:
		err |= add(c, m, at, SH_VFS_READ, m->total_ns);
		break;
	case PC_METRIC_VFS_WRITE:
		err |= add(c, m, at, SH_VFS_WRITE, m->total_ns);
		break;
	default:
		break;
	}
	return err ? -1 : 0;
}
