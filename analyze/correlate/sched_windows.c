/* sched_windows.c - the sched source's windows (format 1.12).
 *
 * Above --sched-rate context switches a second, the recorder attaches the
 * sched programs only in a window at the start of each second. Between
 * two windows is a gap (SCHED_GAP), where no switch, wakeup or wait was
 * seen; at its end, before the programs were attached again, each traced
 * thread was written out with what it was doing (SCHED_TASK).
 *
 * The thread states follow: at a gap's start every thread's interval ends
 * there (partial); at its end a SCHED_TASK says what each thread is doing,
 * from there (partial: since when is not known), and a thread without one
 * is unknown until its next event, as at the capture's start.
 *
 * The time shares then hold, for each (thread, window), what was seen in
 * the part of the window the programs were attached: the windowed columns
 * are scaled by the window's length over that part, as the requests of a
 * REQUEST_WINDOW stand for their second. Which columns are windowed
 * depends on where they came from: the states' always; futex and poll
 * waits when they came from the states or from the waits' sums (which the
 * sched programs make, in the windows only), and the file and socket
 * times when they came from the waits' sums; the agg source's sums and
 * the syscall records' times are exact, not scaled. */
#include <errno.h>
#include <stdlib.h>

#include "correlate_state.h"
#include "perfcap_format.h"
#include "util/grow.h"
#include "wait_class.h"

int sched_task_state_code(uint16_t where, uint32_t state)
{
	if (where == PC_SCHED_TASK_ON_CPU)
		return ST_RUNNING;
	if (where == PC_SCHED_TASK_QUEUED)
		return ST_RUNNABLE;
	return task_state_kind(state);
}

static int keep_gap(struct correlator *c, uint64_t start, uint64_t end)
{
	if (array_grow((void **)&c->gaps, &c->gaps_cap, c->ngaps, sizeof(*c->gaps), 64) < 0)
		return -1;
	c->gaps[c->ngaps].start = (int64_t)start;
	c->gaps[c->ngaps].end = (int64_t)end;
	c->ngaps++;
	return 0;
}

int windows_on_gap(struct correlator *c, const struct tl_event *ev)
{
	if (keep_gap(c, ev->key, ev->arg) < 0)
		return -1;
	if (ev->flags & TL_F_LATE)   /* later events were placed already */
		return 0;
	if (ev->arg > c->resumed_at)
		c->resumed_at = ev->arg;
	return sched_close_at(c, ev->key);
}

int windows_on_task(struct correlator *c, const struct tl_event *ev)
{
	return sched_enter_known(c, ev->pid, ev->tid, (int)ev->u2, ev->key,
				 ev->u1 < CORRELATE_MAX_CPUS ? (int64_t)ev->u1 : -1);
}

/* The columns seen only in the windows (see above). */
static uint32_t windowed_columns(const struct correlator *c)
{
	uint32_t m = 1u << SH_RUNNING | 1u << SH_RUNNABLE | 1u << SH_IO_WAIT | 1u << SH_SLEEP |
		     1u << SH_OTHER_WAIT;

	if (c->summed_calls)
		return m;
	m |= 1u << SH_FUTEX_WAIT | 1u << SH_POLL_WAIT;
	if (c->summed_syscalls)
		m |= 1u << SH_FUTEX_WAITS | 1u << SH_FUTEX_WAKES | 1u << SH_POLL_WAITS |
		     1u << SH_VFS_READ | 1u << SH_VFS_WRITE | 1u << SH_NET_RECV |
		     1u << SH_NET_SEND;
	return m;
}

static int by_start(const void *a, const void *b)
{
	const struct time_gap *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

void windows_scale_shares(struct correlator *c)
{
	struct time_shares *s = &c->shares;
	uint64_t first = correlator_start(c), last = c->end_ns;
	uint32_t mask;

	if (!c->ngaps)
		return;
	qsort(c->gaps, c->ngaps, sizeof(*c->gaps), by_start);
	mask = windowed_columns(c);
	for (uint64_t i = 0; i < s->len; i++) {
		struct share_row *r = &s->rows[i];
		uint64_t from = s->origin + (uint64_t)r->window * s->window_ns;
		uint64_t to = from + s->window_ns, gap, seen;
		double f;

		if (from < first)
			from = first;
		if (last && to > last)
			to = last;
		if (to <= from)
			continue;
		gap = time_gaps_overlap(c->gaps, c->ngaps, (int64_t)from, (int64_t)to);
		seen = to - from - (gap < to - from ? gap : to - from);
		if (!gap || !seen)   /* followed whole, or not at all: as it is */
			continue;
		f = (double)(to - from) / (double)seen;
		for (int col = 0; col < SH_NCOLUMNS; col++)
			if (mask & 1u << col)
				r->v[col] = (uint64_t)((double)r->v[col] * f + 0.5);
	}
}
