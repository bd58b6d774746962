/* waits.c - off-CPU intervals waiting for the system call they happened in.
 *
 * A blocked interval (thread_states) or an OFFCPU record ends before the
 * system call that contains it does (a SYSCALL record is written at the
 * call's exit). So each thread keeps its waits, oldest first, until its
 * next system call ends: the waits that began after that call's entry
 * happened in it, the earlier ones in no recorded call. Then each wait is
 * classified (wait_class.c) and written. A thread keeps at most
 * WAITS_MAX_PER_THREAD waits (a call that was not recorded never ends
 * them); the oldest are then written without a call and counted as
 * expired. When the capture has no syscall source, waits are written at
 * once. */
#include "correlate_state.h"
#include "perfcap_format.h"
#include "util/grow.h"
#include "util/syscalls.h"
#include "wait_class.h"

#define WAITS_MAX_PER_THREAD 256

/* The system call a wait happened in. */
struct wait_call {
	const struct tl_event *ev;
	int fd_is_socket;
	int block_io_done;
};

static void bind_stack(int64_t *row, uint8_t *kind, int col, uint32_t id)
{
	row[col] = id;
	if (id == PC_STACK_NONE)
		kind[col] = BATCH_NULL;
}

/* Columns col .. col + 4: the last waker's pid, the context it woke the
 * thread in (0 task, 1 hard interrupt, 2 soft interrupt; NULL for a
 * capture before format 1.4 or without a waker), the softirq vector and
 * the interrupted task. */
static void wake_context(const struct correlator *c, int64_t *row, uint8_t *kind, int col,
			 const struct pending_wait *w)
{
	uint16_t f = w->wake_flags;
	int irq = (f & (PC_WAKE_F_HARDIRQ | PC_WAKE_F_SOFTIRQ)) != 0;

	row[col] = w->waker_pid;
	row[col + 1] = f & PC_WAKE_F_SOFTIRQ ? 2 : irq ? 1 : 0;
	row[col + 2] = PC_WAKE_VEC(f);
	row[col + 3] = w->irq_pid;
	row[col + 4] = w->irq_tid;
	if (c->format_minor < 4) {
		kind[col] = kind[col + 1] = BATCH_NULL;
	} else if (!irq && w->waker_tid == 0 && w->waker_pid == 0) {
		/* no wakeup seen (the wake preceded the recording or was
		 * sampled away), or the idle task: context unknown */
		kind[col + 1] = BATCH_NULL;
	}
	if (!(f & PC_WAKE_F_SOFTIRQ))
		kind[col + 2] = BATCH_NULL;
	if (!irq)
		kind[col + 3] = kind[col + 4] = BATCH_NULL;
}

static int write_offcpu(struct correlator *c, const struct pending_wait *w,
			enum wait_class wc, const struct wait_call *call)
{
	uint8_t *kind;
	int64_t *row = batch_row(&c->offcpu_rows, &kind);

	row[0] = (int64_t)w->offcpu_id;
	row[1] = (int64_t)w->end;
	row[2] = (int64_t)(w->end - w->start);
	row[3] = w->pid;
	row[4] = w->tid;
	row[5] = w->task_state;
	bind_stack(row, kind, 6, (uint32_t)(w->stacks >> 32));
	bind_stack(row, kind, 7, (uint32_t)w->stacks);
	row[8] = w->waker_tid;
	batch_text(row, kind, 9, wait_class_name(wc));
	batch_text(row, kind, 10, call ? "syscall" : "state");
	row[11] = call ? (int64_t)call->ev->id : 0;
	row[12] = call ? (int64_t)call->ev->u1 : 0;
	if (!call)
		kind[11] = kind[12] = BATCH_NULL;
	wake_context(c, row, kind, 13, w);
	if (call)
		c->counts.offcpu_by_syscall++;
	else
		c->counts.offcpu_by_state++;
	return batch_commit_row(&c->offcpu_rows);
}

/* Pairs a blocked interval written without a system call (its rowid) with
 * the OFFCPU record of the same switch-out that no call classified (its
 * kernel stack): a thread's two come one after the other, in either
 * order. what: enum wait_what. */
static void pair_wait(struct correlator *c, struct thread *t, uint8_t what, uint64_t start,
		      uint64_t ref)
{
	struct wait_link *l;

	if (!t->unpaired || t->unpaired == what || t->unpaired_start != start) {
		t->unpaired = what;
		t->unpaired_start = start;
		t->unpaired_ref = ref;
		return;
	}
	t->unpaired = 0;
	if (array_grow((void **)&c->links, &c->links_cap, c->nlinks, sizeof(*c->links), 1024) < 0) {
		c->links_lost = 1;     /* wait_stacks.c joins instead */
		return;
	}
	l = &c->links[c->nlinks++];
	l->rowid = (int64_t)(what == WAIT_STATE ? ref : t->unpaired_ref);
	l->kstack = (uint32_t)(what == WAIT_STATE ? t->unpaired_ref : ref);
	l->start = start;
	l->tid = t->tid;
}

static int finish_wait(struct correlator *c, struct thread *t, const struct pending_wait *w,
		       const struct wait_call *call)
{
	struct wait_facts f = {
		.kind = w->what == WAIT_OFFCPU ? task_state_kind(w->task_state) : w->kind,
		.in_syscall = call != NULL,
		.syscall_nr = call ? call->ev->u1 : 0,
		.fd_is_socket = call ? call->fd_is_socket : 0,
		.block_io_done = call ? call->block_io_done : 0,
	};
	enum wait_class wc = wait_classify(&f);
	struct state_interval iv;

	if (w->what == WAIT_OFFCPU) {
		if (!call && (uint32_t)w->stacks != PC_STACK_NONE)
			pair_wait(c, t, WAIT_OFFCPU, w->start, (uint32_t)w->stacks);
		return write_offcpu(c, w, wc, call);
	}
	iv = (struct state_interval){
		.tid = w->tid, .pid = w->pid, .state = w->kind, .partial = w->partial,
		.has_waker = w->has_waker, .start = w->start, .end = w->end,
		.cpu = w->cpu, .waker_tid = w->waker_tid, .waker_pid = w->waker_pid,
	};
	if (state_row_write(c, &iv, (int)wc, call ? (int64_t)call->ev->u1 : -1,
			    call ? (int64_t)call->ev->id : -1) < 0)
		return -1;
	/* rows are numbered as written: this one's rowid is their count */
	if (!call && w->kind >= ST_IO)
		pair_wait(c, t, WAIT_STATE, w->start, c->counts.intervals);
	return 0;
}

static int add_wait(struct correlator *c, struct thread *t, const struct pending_wait *w)
{
	if (!c->wait_for_syscalls)
		return finish_wait(c, t, w, NULL);
	if (t->nwaits >= WAITS_MAX_PER_THREAD) {
		if (finish_wait(c, t, &t->waits[0], NULL) < 0)
			return -1;
		thread_drop_waits(t, 1);
		c->counts.waits_expired++;
	}
	return thread_push_wait(t, w) < 0 ? -1 : 0;
}

int waits_add_state(struct correlator *c, struct thread *t,
		    const struct state_interval *iv)
{
	struct pending_wait w = {
		.start = iv->start, .end = iv->end, .cpu = iv->cpu,
		.tid = iv->tid, .pid = iv->pid, .waker_tid = iv->waker_tid,
		.waker_pid = iv->waker_pid,
		.what = WAIT_STATE, .kind = iv->state, .partial = iv->partial,
		.has_waker = iv->has_waker,
	};

	return add_wait(c, t, &w);
}

int waits_add_offcpu(struct correlator *c, const struct tl_event *ev)
{
	struct thread *t = threads_get(&c->threads, ev->tid);
	struct pending_wait w = {
		.start = ev->start, .end = ev->key, .offcpu_id = ev->id, .stacks = ev->arg,
		.tid = ev->tid, .pid = ev->pid, .task_state = ev->u1,
		.waker_tid = ev->u2, .waker_pid = ev->pid2, .irq_tid = ev->tid2,
		.irq_pid = (uint32_t)ev->ret, .wake_flags = (uint16_t)((uint64_t)ev->ret >> 32),
		.what = WAIT_OFFCPU,
	};

	if (!t)
		return -1;
	if (ev->flags & TL_F_LATE)
		return finish_wait(c, t, &w, NULL);
	return add_wait(c, t, &w);
}

int waits_on_syscall(struct correlator *c, const struct tl_event *ev)
{
	struct thread *t = threads_get(&c->threads, ev->tid);
	const struct syscall_info *info = syscall_info(ev->u1);
	struct wait_call call = { .ev = ev };
	uint32_t n = 0;

	if (!t)
		return -1;
	if (t->nwaits == 0)
		return 0;
	call.fd_is_socket = (info->flags & SC_F_FD) &&
			    socket_fd_known(c, ev->pid, syscall_fd(ev));
	call.block_io_done = t->has_block && t->last_block_done >= ev->start &&
			     t->last_block_done <= ev->key;
	for (; n < t->nwaits && t->waits[n].end <= ev->key; n++) {
		const struct pending_wait *w = &t->waits[n];
		if (finish_wait(c, t, w, w->start >= ev->start ? &call : NULL) < 0)
			return -1;
	}
	thread_drop_waits(t, n);
	return 0;
}

int waits_flush_thread(struct correlator *c, struct thread *t)
{
	for (uint32_t i = 0; i < t->nwaits; i++)
		if (finish_wait(c, t, &t->waits[i], NULL) < 0)
			return -1;
	t->nwaits = 0;
	return 0;
}
