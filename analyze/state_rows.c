/* state_rows.c - writes finished thread_states rows and sums each into the
 * thread's time shares: running, runnable, io_wait, sleep or other_wait by
 * its state, and futex_wait or poll_wait too when it was blocked inside a
 * futex or poll-family system call. */
#include "correlate_state.h"
#include "syscalls.h"

static const char *state_name(uint8_t state)
{
	static const char *const names[] = { "running", "runnable", "io", "sleep", "blocked" };

	return state < sizeof(names) / sizeof(names[0]) ? names[state] : "blocked";
}

static const char *reason_name(uint8_t reason)
{
	switch (reason) {
	case RR_WAKEUP:    return "wakeup";
	case RR_PREEMPTED: return "preempted";
	case RR_NEW:       return "new";
	default:           return NULL;
	}
}

static enum share_column state_column(uint8_t state)
{
	switch (state) {
	case ST_RUNNING:  return SH_RUNNING;
	case ST_RUNNABLE: return SH_RUNNABLE;
	case ST_IO:       return SH_IO_WAIT;
	case ST_SLEEP:    return SH_SLEEP;
	default:          return SH_OTHER_WAIT;
	}
}

static int add_shares(struct correlator *c, const struct state_interval *iv,
		      int64_t syscall_nr)
{
	struct time_shares *s = &c->shares;
	int family = syscall_nr >= 0 ? syscall_info((uint32_t)syscall_nr)->family : SC_OTHER;

	if (shares_add_time(s, iv->pid, iv->tid, iv->start, iv->end, state_column(iv->state)))
		return -1;
	if (family == SC_FUTEX)
		return shares_add_time(s, iv->pid, iv->tid, iv->start, iv->end, SH_FUTEX_WAIT);
	if (family == SC_POLL)
		return shares_add_time(s, iv->pid, iv->tid, iv->start, iv->end, SH_POLL_WAIT);
	return 0;
}

int state_row_write(struct correlator *c, const struct state_interval *iv,
		    const char *wait_class, int64_t syscall_nr, int64_t syscall_id)
{
	uint8_t *kind;
	int64_t *row = batch_row(&c->state_rows, &kind);

	row[0] = iv->tid;
	row[1] = iv->pid;
	batch_text(row, kind, 2, state_name(iv->state));
	row[3] = (int64_t)iv->start;
	row[4] = (int64_t)iv->end;
	row[5] = (int64_t)(iv->end - iv->start);
	row[6] = iv->cpu;
	kind[6] = iv->cpu < 0 ? BATCH_NULL : BATCH_INT;
	batch_text(row, kind, 7, reason_name(iv->reason));
	row[8] = iv->waker_tid;
	row[9] = iv->waker_pid;
	kind[8] = kind[9] = iv->has_waker ? BATCH_INT : BATCH_NULL;
	batch_text(row, kind, 10, wait_class);
	row[11] = syscall_nr;
	row[12] = syscall_id;
	kind[11] = kind[12] = syscall_nr < 0 ? BATCH_NULL : BATCH_INT;
	row[13] = iv->partial;
	c->counts.intervals++;
	c->counts.intervals_partial += iv->partial != 0;
	if (batch_commit_row(&c->state_rows) < 0)
		return -1;
	return add_shares(c, iv, syscall_nr);
}
