/* sched_states.c - thread states from context switches and wakeups.
 *
 * Each thread is running (switch-in -> switch-out), runnable (wakeup or a
 * preempted switch-out -> switch-in) or blocked (a switch-out in a sleeping
 * state -> wakeup), blocked being io, sleep or blocked by the task state.
 * An interval is written when it ends; running and runnable ones at once,
 * blocked ones through waits.c, which first learns the system call they
 * happened in. What a thread did before its first event is known only in
 * two cases: a switch-out (it was running) and a wakeup that is not a new
 * task's (it was blocked); those intervals start at the capture start and
 * are partial, as are the ones still open at the capture end. Events that
 * contradict the state (a switch-in of a running thread...) are counted.
 *
 * A wakeup can come before the switch-out it ends: sched_waking fires in
 * the waker (on another CPU) as soon as the sleeper has declared its sleep
 * (its task state), and the waker then waits for the sleeper to get off
 * its CPU, whose sched_switch still says it blocked. Its wait ended before
 * it began: the thread is runnable from that switch-out (early_runnable),
 * not blocked until its switch-in with its wakeup "missing" (which made
 * run-queue time sleep: a third of redis's on a contended CPU). A wakeup
 * seen while running that the thread did not block after (it found its
 * event and ran on) is the next switch-out's only if that one blocks; if
 * a wakeup then comes while it is runnable, it was blocked after all, up
 * to that wakeup, which is what the state is made. */
#include <string.h>

#include "correlate_state.h"
#include "perfcap_format.h"
#include "wait_class.h"

/* Writes t's current state as an interval ending at end. switch_cpu >= 0:
 * the CPU a runnable thread was switched in on. */
static int close_state(struct correlator *c, struct thread *t, uint64_t end,
		       int partial_end, int64_t switch_cpu)
{
	struct state_interval iv = {
		.tid = t->tid, .pid = t->pid, .start = t->since, .end = end, .cpu = t->cpu,
		.partial = t->partial_start || partial_end, .has_waker = t->has_waker,
		.waker_tid = t->waker_tid, .waker_pid = t->waker_pid,
	};

	switch (t->state) {
	case TH_RUNNING:
		iv.state = ST_RUNNING;
		iv.has_waker = 0;
		break;
	case TH_RUNNABLE:
		iv.state = ST_RUNNABLE;
		iv.reason = t->reason;
		if (switch_cpu >= 0)
			iv.cpu = switch_cpu;
		break;
	case TH_BLOCKED:
		iv.state = t->blocked_kind;
		break;
	default:
		return 0;
	}
	if (end < iv.start || (partial_end && end == iv.start))
		return 0;
	if (iv.state == ST_RUNNING || iv.state == ST_RUNNABLE)
		return state_row_write(c, &iv, -1, -1, -1);
	return waits_add_state(c, t, &iv);
}

static void enter_state(struct thread *t, uint8_t state, uint64_t ts, int64_t cpu)
{
	t->state = state;
	t->since = ts;
	t->cpu = cpu;
	t->partial_start = 0;
	t->has_waker = 0;
	t->reason = RR_NONE;
	t->early_runnable = 0;
}

/* t was seen first doing something that proves it was in state since the
 * capture start, or since the last gap between the sched windows. 0 if
 * that was at or after ts. */
static int assume_since_start(struct correlator *c, struct thread *t, uint8_t state,
			      uint64_t ts, int64_t cpu)
{
	uint64_t start = correlator_start(c);

	if (c->resumed_at > start)
		start = c->resumed_at;

	if (ts <= start)
		return 0;
	enter_state(t, state, start, cpu);
	t->partial_start = 1;
	t->blocked_kind = ST_BLOCKED;   /* if blocked: how is not known */
	return 1;
}

static int switch_out(struct correlator *c, const struct tl_event *ev)
{
	struct thread *t = threads_get(&c->threads, ev->tid);
	int kind = task_state_kind(ev->u2);
	int rc = 0;

	if (!t)
		return -1;
	t->pid = ev->pid;
	if (t->state == TH_RUNNING ||
	    (t->state == TH_UNKNOWN &&
	     assume_since_start(c, t, TH_RUNNING, ev->key, ev->u1)))
		rc = close_state(c, t, ev->key, 0, -1);
	else if (t->state != TH_UNKNOWN && t->state != TH_LOST)
		c->counts.switch_out_unmatched++;
	if (kind == ST_RUNNABLE) {
		enter_state(t, TH_RUNNABLE, ev->key, ev->u1);
		t->reason = RR_PREEMPTED;
	} else if (kind == ST_DEAD) {
		enter_state(t, TH_DEAD, ev->key, ev->u1);
		if (rc == 0)
			rc = waits_flush_thread(c, t);
	} else if (t->woken_running) {   /* woken before it got off the CPU */
		enter_state(t, TH_RUNNABLE, ev->key, ev->u1);
		t->blocked_kind = (uint8_t)kind;
		t->reason = RR_WAKEUP;
		t->early_runnable = 1;
		t->has_waker = 1;
		t->waker_tid = t->early_waker_tid;
		t->waker_pid = t->early_waker_pid;
	} else {
		enter_state(t, TH_BLOCKED, ev->key, ev->u1);
		t->blocked_kind = (uint8_t)kind;
	}
	t->woken_running = 0;
	return rc;
}

static int switch_in(struct correlator *c, const struct tl_event *ev)
{
	struct thread *t = threads_get(&c->threads, ev->tid2);
	int rc = 0;

	if (!t)
		return -1;
	t->pid = ev->pid2;
	switch (t->state) {
	case TH_RUNNABLE:
		rc = close_state(c, t, ev->key, 0, ev->u1);
		break;
	case TH_BLOCKED:          /* its wakeup is missing */
		c->counts.wakeup_unmatched++;
		rc = close_state(c, t, ev->key, 0, -1);
		break;
	case TH_RUNNING:          /* its switch-out is missing */
		c->counts.switch_in_unmatched++;
		break;
	default:                  /* first seen, or a new thread with a reused tid */
		break;
	}
	enter_state(t, TH_RUNNING, ev->key, ev->u1);
	t->woken_running = 0;
	return rc;
}

/* A switch on a CPU whose traced running thread is not traced leaving:
 * either another task leaves (the thread left unseen: its switch-out was
 * lost, or it stopped passing the filters, e.g. renamed out of --comm;
 * when it left is unknown, so that time is left out and counted), or the
 * thread leaves but no longer passes the filters (its interval ends here,
 * exactly). Then it is lost until seen again, instead of running until the
 * capture ends. */
static int check_cpu_owner(struct correlator *c, const struct tl_event *ev, int prev_traced)
{
	uint32_t owner;
	struct thread *t;
	int unseen;

	if (ev->u1 >= CORRELATE_MAX_CPUS)
		return 0;
	owner = c->cpu_running[ev->u1];
	if (owner == 0 || (owner == ev->tid && prev_traced))
		return 0;
	unseen = owner != ev->tid;
	c->cpu_running[ev->u1] = 0;
	t = threads_get(&c->threads, owner);
	if (!t)
		return -1;
	if (t->state != TH_RUNNING || t->cpu != (int64_t)ev->u1)
		return 0;
	if (unseen)
		c->counts.switch_out_missing++;
	else if (close_state(c, t, ev->key, 0, -1) < 0)
		return -1;
	enter_state(t, TH_LOST, ev->key, -1);
	return 0;
}

/* Only the sides the recorder traced get states: an untraced task seen on
 * the other side of a switch has no stream of its own (flags 0: older
 * captures, both sides traced). */
int sched_on_switch(struct correlator *c, const struct tl_event *ev)
{
	int prev_traced = !ev->flags || (ev->flags & PC_SWITCH_F_PREV_TRACED);
	int next_traced = !ev->flags || (ev->flags & PC_SWITCH_F_NEXT_TRACED);

	if (check_cpu_owner(c, ev, prev_traced) < 0)
		return -1;
	if (ev->tid && prev_traced && switch_out(c, ev) < 0)
		return -1;
	if (ev->tid2 && next_traced && switch_in(c, ev) < 0)
		return -1;
	if (ev->u1 < CORRELATE_MAX_CPUS)
		c->cpu_running[ev->u1] = next_traced ? ev->tid2 : 0;
	return 0;
}

static void set_waker(struct thread *t, const struct tl_event *ev)
{
	t->has_waker = 1;
	t->waker_tid = ev->tid2;
	t->waker_pid = ev->pid2;
}

int sched_on_wakeup(struct correlator *c, const struct tl_event *ev)
{
	struct thread *t = threads_get(&c->threads, ev->tid);
	int is_new = (ev->flags & TL_F_NEW) != 0;
	int rc = 0;

	if (!t)
		return -1;
	t->pid = ev->pid;
	if (t->state == TH_RUNNING) {   /* woken before it got off the CPU */
		t->woken_running = 1;
		t->early_waker_tid = ev->tid2;
		t->early_waker_pid = ev->pid2;
		return 0;
	}
	if (t->state == TH_RUNNABLE && !t->early_runnable)
		return 0;
	if (t->state == TH_RUNNABLE)    /* it did block, up to this wakeup */
		t->state = TH_BLOCKED;
	if (t->state == TH_BLOCKED ||
	    (t->state == TH_UNKNOWN && !is_new &&
	     assume_since_start(c, t, TH_BLOCKED, ev->key, -1))) {
		set_waker(t, ev);
		rc = close_state(c, t, ev->key, 0, -1);
	}
	enter_state(t, TH_RUNNABLE, ev->key, ev->u1);
	t->reason = is_new ? RR_NEW : RR_WAKEUP;
	set_waker(t, ev);
	return rc;
}

int sched_close_at(struct correlator *c, uint64_t t)
{
	for (uint32_t i = 0; i < c->threads.len; i++) {
		struct thread *th = c->threads.v[i];

		if (th->state == TH_DEAD)
			continue;
		if (t > th->since && close_state(c, th, t, 1, -1) < 0)
			return -1;
		th->state = TH_UNKNOWN;
		th->woken_running = 0;
	}
	memset(c->cpu_running, 0, sizeof(c->cpu_running));
	return 0;
}

int sched_enter_known(struct correlator *c, uint32_t pid, uint32_t tid, int state,
		      uint64_t ts, int64_t cpu)
{
	struct thread *t = threads_get(&c->threads, tid);

	if (!t)
		return -1;
	if (t->state != TH_UNKNOWN && t->state != TH_LOST)
		return 0;   /* seen since: what it did is known */
	t->pid = pid;
	switch (state) {
	case ST_RUNNING:
		enter_state(t, TH_RUNNING, ts, cpu);
		if (cpu >= 0 && cpu < CORRELATE_MAX_CPUS)
			c->cpu_running[cpu] = tid;
		break;
	case ST_RUNNABLE:
		enter_state(t, TH_RUNNABLE, ts, -1);
		break;
	case ST_DEAD:
		return 0;
	default:
		enter_state(t, TH_BLOCKED, ts, -1);
		t->blocked_kind = (uint8_t)state;
		break;
	}
	t->partial_start = 1;   /* since when is not known */
	return 0;
}

int sched_close_all(struct correlator *c)
{
	uint64_t end = c->end_ns;

	for (uint32_t i = 0; i < c->threads.len; i++) {
		struct thread *t = c->threads.v[i];
		if (end > t->since && close_state(c, t, end, 1, -1) < 0)
			return -1;
		if (waits_flush_thread(c, t) < 0)
			return -1;
	}
	return 0;
}
