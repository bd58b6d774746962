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
 * the part of the window the programs were attached. Its time on a CPU
 * in the gaps is known exactly (format 1.13): each traced thread was
 * also written out as the programs were detached (SCHED_TASK_CLOSE), and
 * the difference of its run time counters across a gap is its run time
 * in it (struct gap_run), and so is its time waiting in a run queue
 * (the run_delay counter, brought up to date as it gets a CPU: to one
 * wait at each edge). So the running column gets the gaps' run time
 * added, the runnable column their run queue time, and the rest of the
 * gaps' time (off CPU, blocked) is split among the blocked states (I/O,
 * sleep, other) as the windows saw them split; a thread the windows saw
 * only on a CPU or runnable gets it as other_wait (blocked, kind
 * unknown). The windows' own split of runnable and blocked would carry
 * the programs' cost: they run at every switch there. Without the counters (format 1.12, or a
 * thread made or gone in the gap) the windowed columns are scaled by the
 * window's length over the part seen, as the requests of a
 * REQUEST_WINDOW stand for their second. Which columns are windowed
 * depends on where they came from: the states' always; futex and poll
 * waits when they came from the states or from the waits' sums (which the
 * sched programs make, in the windows only), and the file and socket
 * times when they came from the waits' sums; the agg source's sums and
 * the syscall records' times are exact, not scaled. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "correlate_state.h"
#include "perfcap_format.h"
#include "threads.h"
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

int windows_on_task_close(struct correlator *c, const struct tl_event *ev)
{
	struct thread *t = threads_get(&c->threads, ev->tid);

	if (!t)
		return -1;
	t->closed_ts = ev->key;
	t->closed_runtime = ev->arg;
	t->closed_run_delay = (uint64_t)ev->ret;
	if (ev->ret > 0)
		c->run_delay_seen = true;
	return 0;
}

/* The end of the gap that starts at start and holds ts (one of the
 * latest: it ended at ts, or has not ended before it), 0: none. */
static uint64_t gap_end(const struct correlator *c, uint64_t start, uint64_t ts)
{
	for (size_t i = c->ngaps, seen = 0; i > 0 && seen < 8; i--, seen++)
		if (c->gaps[i - 1].start == (int64_t)start && c->gaps[i - 1].end >= (int64_t)ts)
			return (uint64_t)c->gaps[i - 1].end;
	return 0;
}

/* Thread t, written out at the start of a gap and at ev (its end, or the
 * thread's exit before it, at end): its run time in the gap (to a tick: a
 * running thread's counter is brought up to date at its ticks and
 * switches, so at most the time between). */
static int keep_gap_run(struct correlator *c, struct thread *t, const struct tl_event *ev,
			uint64_t end)
{
	uint64_t span = ev->key - t->closed_ts;
	uint64_t ran = ev->arg > t->closed_runtime ? ev->arg - t->closed_runtime : 0;
	uint64_t queued = (uint64_t)ev->ret > t->closed_run_delay ?
			  (uint64_t)ev->ret - t->closed_run_delay : 0;
	struct gap_run *r;

	if (array_grow((void **)&c->gap_runs, &c->runs_cap, c->nruns, sizeof(*c->gap_runs),
		       256) < 0)
		return -1;
	r = &c->gap_runs[c->nruns++];
	r->start = t->closed_ts;
	r->end = ev->key;
	r->gap_end = end;
	r->running = ran < span ? ran : span;
	r->queued = queued < span - r->running ? queued : span - r->running;
	r->pid = ev->pid;
	r->tid = ev->tid;
	return 0;
}

/* Its states ended at the gap's start; nothing follows its exit. */
int windows_on_task_exit(struct correlator *c, const struct tl_event *ev)
{
	struct thread *t = threads_get(&c->threads, ev->tid);
	uint64_t end;

	if (!t)
		return -1;
	if (t->closed_ts && t->closed_ts < ev->key) {
		end = gap_end(c, t->closed_ts, ev->key);
		if (end && keep_gap_run(c, t, ev, end) < 0)
			return -1;
	}
	t->closed_ts = 0;
	return 0;
}

int windows_on_task(struct correlator *c, const struct tl_event *ev)
{
	struct thread *t = threads_get(&c->threads, ev->tid);

	if (!t)
		return -1;
	if (t->closed_ts && t->closed_ts < ev->key &&
	    gap_end(c, t->closed_ts, ev->key) == ev->key && keep_gap_run(c, t, ev, ev->key) < 0)
		return -1;
	t->closed_ts = 0;
	return sched_enter_known(c, ev->pid, ev->tid, (int)ev->u2, ev->key,
				 ev->u1 < CORRELATE_MAX_CPUS ? (int64_t)ev->u1 : -1);
}

/* The thread states' columns: running and the off-CPU ones. */
#define STATE_COLUMNS (1u << SH_RUNNING | 1u << SH_RUNNABLE | 1u << SH_IO_WAIT | \
		       1u << SH_SLEEP | 1u << SH_OTHER_WAIT)

/* The columns seen only in the windows (see above). */
static uint32_t windowed_columns(const struct correlator *c)
{
	uint32_t m = STATE_COLUMNS;

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

/* The gaps' run time per (thread, window), in a time_shares of its own:
 * v[RUN_NS] the run time, v[RUN_QUEUED] the run queue time, v[RUN_SPAN]
 * the gap time they cover, v[RUN_GONE] the gap time after the thread's
 * exit (not its time: neither scaled nor given a state). */
#define RUN_NS     SH_RUNNING
#define RUN_SPAN   SH_RUNNABLE
#define RUN_GONE   SH_IO_WAIT
#define RUN_QUEUED SH_SLEEP

static int runs_by_window(const struct correlator *c, struct time_shares *runs)
{
	shares_init(runs, c->shares.window_ns);
	shares_set_origin(runs, c->shares.origin);
	for (size_t i = 0; i < c->nruns; i++) {
		const struct gap_run *g = &c->gap_runs[i];
		/* a gap's end is not bounded as events are: at most the capture's */
		uint64_t gone = c->end_ns && g->gap_end > c->end_ns ? c->end_ns : g->gap_end;

		if (shares_add_spread(runs, g->pid, g->tid, g->start, g->end, RUN_NS,
				      g->running) < 0 ||
		    shares_add_spread(runs, g->pid, g->tid, g->start, g->end, RUN_QUEUED,
				      g->queued) < 0 ||
		    shares_add_time(runs, g->pid, g->tid, g->start, g->end, RUN_SPAN) < 0 ||
		    shares_add_time(runs, g->pid, g->tid, g->end, gone, RUN_GONE) < 0)
			return -1;
	}
	return 0;
}

static const int off_cpu[] = { SH_RUNNABLE, SH_IO_WAIT, SH_SLEEP, SH_OTHER_WAIT };
#define NOFF (sizeof(off_cpu) / sizeof(off_cpu[0]))
/* off_cpu[1..]: blocked */
#define FIRST_BLOCKED 1


static uint64_t times(uint64_t v, double f)
{
	return (uint64_t)((double)v * f + 0.5);
}

/* Row r of a window [from, from + len) of which gap ns were not seen;
 * run: the thread's run time in those gaps, where known (NULL: none), and
 * its run queue time when queue_known (else runnable is split as the
 * windows saw it). */
static void scale_row(struct share_row *r, uint32_t mask, uint64_t len, uint64_t gap,
		      const struct share_row *run, bool queue_known)
{
	const size_t first = queue_known ? FIRST_BLOCKED : 0;
	uint64_t seen = len - gap, covered = run ? run->v[RUN_SPAN] : 0, ran, blocked = 0;
	uint64_t gone = run ? run->v[RUN_GONE] : 0, old_sleep = r->v[SH_SLEEP];
	double f, fu;
	uint64_t added, queued;

	covered = covered < gap ? covered : gap;
	gone = gone < gap - covered ? gone : gap - covered;
	f = (double)(len - gone) / (double)seen;   /* the counts */
	ran = run && run->v[RUN_NS] < covered ? run->v[RUN_NS] : covered;
	/* the gap time without counters (nor exit): scaled from the part seen */
	fu = (double)(len - covered - gone) / (double)seen;
	for (size_t i = first; i < NOFF; i++)
		blocked += r->v[off_cpu[i]];
	added = covered - ran;   /* off CPU in the gaps with counters */
	queued = !queue_known ? 0 : run && run->v[RUN_QUEUED] < added ? run->v[RUN_QUEUED] : added;
	added -= queued;         /* blocked there (or off CPU: !queue_known) */
	r->v[SH_RUNNING] = times(r->v[SH_RUNNING], fu) + ran;
	if (queue_known)
		r->v[SH_RUNNABLE] = times(r->v[SH_RUNNABLE], fu) + queued;
	for (size_t i = first; i < NOFF; i++) {
		uint64_t v = r->v[off_cpu[i]];

		r->v[off_cpu[i]] = times(v, fu) +
				   (blocked ? times(added, (double)v / (double)blocked) : 0);
	}
	if (!blocked)
		r->v[SH_OTHER_WAIT] += added;
	for (int col = 0; col < SH_NCOLUMNS; col++) {
		double g = f;

		if (!(mask & 1u << col) || STATE_COLUMNS & 1u << col)
			continue;
		/* the kinds of sleep, as sleep itself */
		if ((col == SH_FUTEX_WAIT || col == SH_POLL_WAIT) && old_sleep)
			g = (double)r->v[SH_SLEEP] / (double)old_sleep;
		r->v[col] = times(r->v[col], g);
	}
}

int windows_scale_shares(struct correlator *c)
{
	struct time_shares *s = &c->shares, runs;
	uint64_t first = correlator_start(c), last = c->end_ns;
	uint64_t len0 = s->len;
	uint32_t mask;
	int err = 0;

	if (!c->ngaps)
		return 0;
	qsort(c->gaps, c->ngaps, sizeof(*c->gaps), by_start);
	mask = windowed_columns(c);
	if (runs_by_window(c, &runs) < 0) {
		shares_free(&runs);
		return -1;
	}
	for (uint64_t i = 0; i < len0; i++) {
		struct share_row *r = &s->rows[i];
		uint64_t from = s->origin + (uint64_t)r->window * s->window_ns;
		uint64_t to = from + s->window_ns, gap;

		if (from < first)
			from = first;
		if (last && to > last)
			to = last;
		if (to <= from)
			continue;
		gap = time_gaps_overlap(c->gaps, c->ngaps, (int64_t)from, (int64_t)to);
		gap = gap < to - from ? gap : to - from;
		if (gap && gap < to - from)   /* else followed whole, or not at all */
			scale_row(r, mask, to - from, gap, shares_find(&runs, r->tid, r->window),
				  c->run_delay_seen);
	}
	/* a thread the windows did not see in a window it ran in */
	for (uint64_t i = 0; !err && i < runs.len; i++) {
		const struct share_row *g = &runs.rows[i];

		if (g->v[RUN_NS] && !shares_find(s, g->tid, g->window))
			err = shares_add_count(s, g->pid, g->tid,
					       s->origin + (uint64_t)g->window * s->window_ns,
					       SH_RUNNING, g->v[RUN_NS]);
	}
	shares_free(&runs);
	return err < 0 ? -1 : 0;
}
