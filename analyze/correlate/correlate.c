/* correlate.c - the correlator's entry points (see correlate.h): events go
 * into the timeline, come out in time order and are dispatched to the
 * state machine (sched_states.c), the wait attribution (waits.c) and the
 * time shares (state_rows.c, io_shares.c). Late events (past the reorder
 * window) still count where order does not matter and are otherwise
 * skipped and counted per source. */
#include <stdlib.h>
#include <string.h>

#include "common/event_sources.h"
#include "correlate_state.h"
#include "util/syscalls.h"

void correlator_set_format_minor(struct correlator *c, unsigned minor)
{
	c->format_minor = minor;
}

struct correlator *correlator_new(sqlite3 *db, uint64_t window_ns)
{
	struct correlator *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->db = db;
	c->wait_for_syscalls = 1;
	c->max_span = CORRELATE_MAX_SPAN_NS;
	timeline_init(&c->timeline);
	threads_init(&c->threads);
	shares_init(&c->shares, window_ns ? window_ns : CORRELATE_DEFAULT_WINDOW_NS);
	hmap_init(&c->socket_fds);
	if (batch_init(&c->state_rows, db, "thread_state_rows (tid, pid, state_code, start_ts,"
		       " duration, cpu, reason_code, waker_tid, waker_pid, wait_class_code,"
		       " syscall_nr, syscall_id, partial)", 13) < 0 ||
	    batch_init(&c->offcpu_rows, db, "offcpu (offcpu_id, ts, duration, pid, tid,"
		       " state, ustack_id, kstack_id, waker_tid, wait_class, class_source,"
		       " syscall_id, syscall_nr, waker_pid, waker_context, waker_softirq,"
		       " irq_pid, irq_tid)", 18) < 0) {
		correlator_free(c);
		return NULL;
	}
	return c;
}

void correlator_free(struct correlator *c)
{
	if (!c)
		return;
	timeline_free(&c->timeline);
	threads_free(&c->threads);
	shares_free(&c->shares);
	hmap_free(&c->socket_fds);
	batch_free(&c->state_rows);
	batch_free(&c->offcpu_rows);
	free(c->links);
	free(c->gaps);
	free(c->gap_runs);
	free(c);
}

void correlator_use_writer(struct correlator *c, struct sql_writer *w)
{
	batch_use_writer(&c->state_rows, w, BATCH_RING_CHUNK);
	batch_use_writer(&c->offcpu_rows, w, BATCH_RING_CHUNK);
}

void correlator_set_start(struct correlator *c, uint64_t ns)
{
	c->start_ns = ns;
	c->has_start = 1;
	shares_set_origin(&c->shares, ns);
}

void correlator_set_duration_limit(struct correlator *c, uint64_t ns)
{
	uint64_t hour = 3600ull * 1000000000ull;

	if (ns < UINT64_MAX - hour && ns + hour > c->max_span)
		c->max_span = ns + hour;
}

void correlator_set_end(struct correlator *c, uint64_t ns)
{
	c->end_ns = ns;
	c->has_end = 1;
}

void correlator_set_sources(struct correlator *c, const char *sources)
{
	char *copy = strdup(sources), *save = NULL;

	c->wait_for_syscalls = copy == NULL;   /* out of memory: assume so */
	for (char *s = copy ? strtok_r(copy, ", ", &save) : NULL; s;
	     s = strtok_r(NULL, ", ", &save)) {
		c->wait_for_syscalls |= event_source_writes_syscalls(s);
		c->summed_syscalls |= strcmp(s, "agg") == 0 || strcmp(s, "waits") == 0;
		c->summed_calls |= strcmp(s, "agg") == 0;
	}
	free(copy);
}

uint64_t correlator_start(const struct correlator *c)
{
	if (c->has_start && (!c->released_any || c->start_ns <= c->first_key))
		return c->start_ns;
	return c->first_key;
}

int socket_fd_known(const struct correlator *c, uint32_t pid, int64_t fd)
{
	uint64_t *known = hmap_find(&c->socket_fds, pid, (uint64_t)fd);

	return known && *known;
}

static int set_socket_fd(struct correlator *c, uint32_t pid, int64_t fd, uint64_t known)
{
	uint64_t *slot = hmap_upsert(&c->socket_fds, pid, (uint64_t)fd, known, NULL);

	if (!slot)
		return -1;
	*slot = known;
	return 0;
}

static int on_syscall(struct correlator *c, const struct tl_event *ev)
{
	const struct syscall_info *info = syscall_info(ev->u1);

	if (!(ev->flags & TL_F_LATE) && waits_on_syscall(c, ev) < 0)
		return -1;
	if (shares_on_syscall(c, ev) < 0)
		return -1;
	if ((info->flags & SC_F_CLOSE) && ev->ret == 0 &&
	    socket_fd_known(c, ev->pid, syscall_fd(ev)))
		return set_socket_fd(c, ev->pid, syscall_fd(ev), 0);
	return 0;
}

static int on_block(struct correlator *c, const struct tl_event *ev)
{
	struct thread *t;

	if (ev->tid == 0)
		return 0;
	t = threads_get(&c->threads, ev->tid);
	if (!t)
		return -1;
	if (!t->has_block || ev->key > t->last_block_done)
		t->last_block_done = ev->key;
	t->has_block = 1;
	return shares_on_block(c, ev);
}

static int on_late(struct correlator *c, const struct tl_event *ev)
{
	switch (ev->type) {
	case TL_SWITCH:
	case TL_WAKEUP:
		c->counts.late_sched++;
		return 0;
	case TL_OFFCPU:
		c->counts.late_sched++;
		return waits_add_offcpu(c, ev);
	case TL_SYSCALL:
		c->counts.late_syscall++;
		return on_syscall(c, ev);
	case TL_BLOCK:
		c->counts.late_block++;
		return on_block(c, ev);
	case TL_GAP:     /* still cuts the shares; the states go on unknown */
	case TL_TASK:
	case TL_TASK_CLOSE:
	case TL_TASK_EXIT:
		c->counts.late_sched++;
		return ev->type == TL_GAP ? windows_on_gap(c, ev) : 0;
	default:
		c->counts.late_net++;
		return 0;
	}
}

/* The timeline's sink: one event, in time order (or late). */
static int dispatch(void *ctx, const struct tl_event *ev)
{
	struct correlator *c = ctx;

	if (ev->flags & TL_F_LATE)
		return on_late(c, ev);
	if (!c->released_any) {
		c->first_key = ev->key;
		c->released_any = 1;
	}
	c->last_key = ev->key;
	switch (ev->type) {
	case TL_SWITCH:  return sched_on_switch(c, ev);
	case TL_WAKEUP:  return sched_on_wakeup(c, ev);
	case TL_OFFCPU:  return waits_add_offcpu(c, ev);
	case TL_SYSCALL: return on_syscall(c, ev);
	case TL_BLOCK:   return on_block(c, ev);
	case TL_SOCKET:  return ev->u1 <= INT32_MAX ? set_socket_fd(c, ev->pid, ev->u1, 1) : 0;
	case TL_GAP:     return windows_on_gap(c, ev);
	case TL_TASK:    return windows_on_task(c, ev);
	case TL_TASK_CLOSE: return windows_on_task_close(c, ev);
	case TL_TASK_EXIT: return windows_on_task_exit(c, ev);
	default:         return 0;
	}
}

static int in_range(struct correlator *c, const struct tl_event *ev)
{
	if (!c->has_origin) {
		c->origin = c->has_start ? c->start_ns : ev->start;
		c->has_origin = 1;
	}
	if ((c->origin > c->max_span && ev->start < c->origin - c->max_span) ||
	    (c->origin < UINT64_MAX - c->max_span && ev->key > c->origin + c->max_span)) {
		c->counts.out_of_range++;
		return 0;
	}
	return 1;
}

int correlator_add(struct correlator *c, const struct tl_event *ev)
{
	if (!in_range(c, ev))
		return 0;
	if (timeline_add(&c->timeline, ev, dispatch, c) < 0)
		c->failed = 1;
	return c->failed ? -1 : 0;
}

int correlator_add_sample(struct correlator *c, uint32_t pid, uint32_t tid, uint64_t ts)
{
	struct tl_event ev = { .key = ts, .start = ts };

	if (!in_range(c, &ev))
		return 0;
	if (shares_add_count(&c->shares, pid, tid, ts, SH_CPU_SAMPLES, 1) < 0)
		c->failed = 1;
	return c->failed ? -1 : 0;
}

int correlator_chunk_done(struct correlator *c)
{
	if (!c->failed && timeline_advance(&c->timeline, dispatch, c) < 0)
		c->failed = 1;
	return c->failed ? -1 : 0;
}

int correlator_release_all(struct correlator *c)
{
	if (c->failed || timeline_finish(&c->timeline, dispatch, c) < 0)
		return -1;
	if (!c->has_end || c->end_ns < c->last_key)
		c->end_ns = c->last_key;
	if (sched_close_all(c) < 0) {
		c->failed = 1;
		return -1;
	}
	return 0;
}

int correlator_finish(struct correlator *c)
{
	if (windows_scale_shares(c) < 0)
		c->failed = 1;
	if (c->failed || batch_flush(&c->state_rows) < 0 ||
	    batch_flush(&c->offcpu_rows) < 0 || shares_store(&c->shares, c->db) < 0) {
		c->failed = 1;
		return -1;
	}
	c->counts.timeline_peak = c->timeline.peak;
	c->counts.shares_dropped = c->shares.dropped;
	return 0;
}

const struct correlate_counts *correlator_counts(const struct correlator *c)
{
	return &c->counts;
}
