/* state_rows.c - writes finished thread_states rows and sums each into the
 * thread's time shares: running, runnable, io_wait, sleep or other_wait by
 * its state, and futex_wait or poll_wait too when it was blocked inside a
 * futex or poll-family system call. */
#include "correlate_state.h"
#include "util/syscalls.h"

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
	if (c->summed_syscalls)
		return 0; /* futex and poll wait time come from the sums (metric_shares.c) */
	if (family == SC_FUTEX)
		return shares_add_time(s, iv->pid, iv->tid, iv->start, iv->end, SH_FUTEX_WAIT);
	if (family == SC_POLL)
		return shares_add_time(s, iv->pid, iv->tid, iv->start, iv->end, SH_POLL_WAIT);
	return 0;
}

/* Columns: tid, pid, state_code, start_ts, duration, cpu, reason_code,
 * waker_tid, waker_pid, wait_class_code, syscall_nr, syscall_id, partial. */
int state_row_write(struct correlator *c, const struct state_interval *iv,
		    int wait_class, int64_t syscall_nr, int64_t syscall_id)
{
	uint8_t *kind;
	int64_t *row = batch_row(&c->state_rows, &kind);

	row[0] = iv->tid;
	row[1] = iv->pid;
	row[2] = iv->state;
	row[3] = (int64_t)iv->start;
	row[4] = (int64_t)(iv->end - iv->start);
	row[5] = iv->cpu;
	kind[5] = iv->cpu < 0 ? BATCH_NULL : BATCH_INT;
	row[6] = iv->reason;
	kind[6] = iv->reason == RR_NONE ? BATCH_NULL : BATCH_INT;
	row[7] = iv->waker_tid;
	row[8] = iv->waker_pid;
	kind[7] = kind[8] = iv->has_waker ? BATCH_INT : BATCH_NULL;
	row[9] = wait_class;
	kind[9] = wait_class < 0 ? BATCH_NULL : BATCH_INT;
	row[10] = syscall_nr;
	row[11] = syscall_id;
	kind[10] = kind[11] = syscall_nr < 0 ? BATCH_NULL : BATCH_INT;
	row[12] = iv->partial;
	c->counts.intervals++;
	c->counts.intervals_partial += iv->partial != 0;
	if (batch_commit_row(&c->state_rows) < 0)
		return -1;
	return add_shares(c, iv, syscall_nr);
}
