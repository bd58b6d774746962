/* consumer.c - turns ring buffer records into capture records.
 *
 * For each sample: describe the process if new (processes.c), intern the
 * kernel and user stacks (a new stack becomes a STACK record), then append
 * a SAMPLE record that refers to the stack ids. Records are appended to
 * chunk buffers that grow in place, so the hot path does not allocate once
 * the buffers and tables have reached their working size.
 */
#include <errno.h>
#include <string.h>

#include "consumer.h"
#include "perfcap_bpf.h"
#include "util.h"

void consumer_init(struct consumer *c, struct writer_thread *writer, bool read_proc_at_exec)
{
	memset(c, 0, sizeof(*c));
	c->writer = writer;
	c->read_proc_at_exec = read_proc_at_exec;
	c->last_flush_ns = monotonic_ns();
	processes_init(&c->processes, &c->procs);
}

/* ---- stacks ----------------------------------------------------------- */

static uint16_t stack_flags(bool error, uint32_t nr)
{
	uint16_t flags = 0;

	if (error)
		flags |= PC_STACK_F_ERROR;
	if (nr >= PERFCAP_STACK_MAX_DEPTH)
		flags |= PC_STACK_F_TRUNCATED;
	return flags;
}

static void emit_stack(struct consumer *c, uint32_t id)
{
	const struct stack_entry *e = &c->stack_table.entries[id];
	struct pc_rec_stack rec = {
		.h.type = PC_REC_STACK,
		.h.flags = e->flags,
		.id = id,
		.pid = e->pid,
		.kind = e->kind,
		.nr = e->nr,
	};

	if (chunk_buffer_add_rec(&c->stacks, &rec, sizeof(rec), stack_table_ips(&c->stack_table, id),
				 e->nr * sizeof(uint64_t), NULL, 0, 0))
		c->stats.lost_user++;
}

/* The id of a stack, adding and emitting it when new. An empty stack
 * without error (a kernel stack of a sample in user mode, a user stack of
 * a kernel thread) is "no stack". */
static uint32_t intern_stack(struct consumer *c, uint16_t kind, uint32_t aspace, uint32_t pid,
			     bool error, const uint64_t *ips, uint32_t nr, bool *is_new)
{
	uint32_t id;

	*is_new = false;
	if (!error && nr == 0)
		return PC_STACK_NONE;
	id = stack_table_intern(&c->stack_table, kind, aspace, pid, stack_flags(error, nr),
				ips, nr, is_new);
	if (*is_new)
		emit_stack(c, id);
	return id;
}

/* The sample's ips as uint64_t (same size and representation as __u64,
 * which is unsigned long long where uint64_t is unsigned long). */
static const uint64_t *sample_ips(const struct perfcap_sample *s)
{
	return (const uint64_t *)(const void *)s->ips;
}

static uint32_t kernel_stack_of(struct consumer *c, const struct perfcap_sample *s)
{
	bool error = s->flags & PERFCAP_SAMPLE_F_KSTACK_ERR;
	bool is_new;

	if (error)
		c->stats.kstack_errors++;
	else if (s->kstack_nr >= PERFCAP_STACK_MAX_DEPTH)
		c->stats.kstack_truncated++;
	return intern_stack(c, PC_STACK_KERNEL, 0, 0, error, sample_ips(s), s->kstack_nr,
			    &is_new);
}

static uint32_t user_stack_of(struct consumer *c, const struct perfcap_sample *s, uint32_t aspace)
{
	const uint64_t *ips = sample_ips(s) + s->kstack_nr;
	bool error = s->flags & PERFCAP_SAMPLE_F_USTACK_ERR;
	bool is_new;
	uint32_t id;

	if (error)
		c->stats.ustack_errors++;
	else if (s->ustack_nr >= PERFCAP_STACK_MAX_DEPTH)
		c->stats.ustack_truncated++;
	id = intern_stack(c, PC_STACK_USER, aspace, s->pid, error, ips, s->ustack_nr, &is_new);
	if (is_new)
		processes_check_user_ips(&c->processes, aspace, ips, s->ustack_nr, s->ts);
	return id;
}

/* ---- events ----------------------------------------------------------- */

static bool sample_is_well_formed(const struct perfcap_sample *s, size_t size)
{
	return size >= PERFCAP_SAMPLE_HEADER_SIZE &&
	       s->kstack_nr <= PERFCAP_STACK_MAX_DEPTH &&
	       s->ustack_nr <= PERFCAP_STACK_MAX_DEPTH &&
	       size >= PERFCAP_SAMPLE_HEADER_SIZE +
		       ((size_t)s->kstack_nr + s->ustack_nr) * sizeof(uint64_t);
}

static void copy_comm(char out[17], const char in[16])
{
	memcpy(out, in, 16);
	out[16] = '\0';
}

static void handle_sample(struct consumer *c, const struct perfcap_sample *s, size_t size)
{
	struct pc_rec_sample rec = { .h.type = PC_REC_SAMPLE };
	char comm[17];
	uint32_t aspace;

	if (!sample_is_well_formed(s, size)) {
		c->stats.lost_user++;
		return;
	}
	copy_comm(comm, s->comm);
	aspace = processes_on_sample(&c->processes, s->pid, s->tid, comm, s->ts);
	rec.ts = s->ts;
	rec.pid = s->pid;
	rec.tid = s->tid;
	rec.cpu = s->cpu;
	rec.kstack = kernel_stack_of(c, s);
	rec.ustack = user_stack_of(c, s, aspace);
	if (chunk_buffer_add_rec(&c->events, &rec, sizeof(rec), NULL, 0, NULL, 0, s->ts))
		c->stats.lost_user++;
	else
		c->stats.samples++;
}

static void handle_exec(struct consumer *c, const struct perfcap_proc_event *e)
{
	struct pc_rec_exec rec = { .h.type = PC_REC_EXEC, .ts = e->ts, .pid = e->pid,
				   .tid = e->tid };
	char comm[17];

	copy_comm(comm, e->comm);
	memcpy(rec.comm, e->comm, sizeof(rec.comm));
	processes_on_exec(&c->processes, e->pid, e->tid, comm, e->ts, c->read_proc_at_exec);
	if (chunk_buffer_add_rec(&c->events, &rec, sizeof(rec), NULL, 0, NULL, 0, e->ts))
		c->stats.lost_user++;
	else
		c->stats.execs++;
}

static void handle_exit(struct consumer *c, const struct perfcap_proc_event *e)
{
	struct pc_rec_exit rec = { .h.type = PC_REC_EXIT, .ts = e->ts, .pid = e->pid,
				   .tid = e->tid };

	processes_on_exit(&c->processes, e->pid);
	if (chunk_buffer_add_rec(&c->events, &rec, sizeof(rec), NULL, 0, NULL, 0, e->ts))
		c->stats.lost_user++;
	else
		c->stats.exits++;
	if (c->on_exit)
		c->on_exit(c->on_exit_ctx, e->pid, e->ts);
}

int consumer_handle(void *ctx, void *data, size_t size)
{
	struct consumer *c = ctx;
	const struct perfcap_proc_event *e = data;
	uint16_t type = size >= sizeof(uint16_t) ? *(const uint16_t *)data : 0;

	if (type == PERFCAP_EV_SAMPLE)
		handle_sample(c, data, size);
	else if (type == PERFCAP_EV_EXEC && size >= sizeof(*e))
		handle_exec(c, e);
	else if (type == PERFCAP_EV_EXIT && size >= sizeof(*e))
		handle_exit(c, e);
	else
		c->stats.lost_user++;

	if (c->events.buf.len >= FLUSH_EVENT_BYTES ||
	    c->stacks.buf.len + c->procs.buf.len >= FLUSH_OTHER_BYTES)
		consumer_flush(c);
	return 0;
}

/* ---- flushing --------------------------------------------------------- */

static void note_write_error(struct consumer *c, int err)
{
	if (err && !c->write_error)
		c->write_error = err;
}

int consumer_flush(struct consumer *c)
{
	note_write_error(c, writer_thread_submit(c->writer, PC_CHUNK_STACKS, PC_STACKS_VERSION,
						 &c->stacks));
	note_write_error(c, writer_thread_submit(c->writer, PC_CHUNK_PROCS, PC_PROCS_VERSION,
						 &c->procs));
	note_write_error(c, writer_thread_submit(c->writer, PC_CHUNK_EVENTS, PC_EVENTS_VERSION,
						 &c->events));
	c->last_flush_ns = monotonic_ns();
	return c->write_error;
}

int consumer_tick(struct consumer *c, uint64_t now_ns)
{
	if (now_ns - c->last_flush_ns >= FLUSH_INTERVAL_NS)
		return consumer_flush(c);
	return c->write_error;
}

void consumer_free(struct consumer *c)
{
	chunk_buffer_free(&c->stacks);
	chunk_buffer_free(&c->procs);
	chunk_buffer_free(&c->events);
	stack_table_free(&c->stack_table);
	processes_free(&c->processes);
}
