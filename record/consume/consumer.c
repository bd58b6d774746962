/* consumer.c - the one consumer of all rings.
 *
 * consumer_handle() reads the common header of each kernel record and hands
 * the record to the source registered for its type (consumer_route). The
 * source writes capture records through consumer_add_event(); processes
 * and stacks it refers to are described through the helpers below, which
 * append PROC/THREAD/MAP and STACK records to their own chunk buffers.
 * Buffers grow in place, so the hot path does not allocate once the
 * buffers and tables have reached their working size.
 */
#include <errno.h>
#include <string.h>

#include "consumer.h"
#include "evict.h"
#include "util/util.h"

void consumer_init(struct consumer *c, int stacks_map_fd, bool read_proc_at_exec)
{
	memset(c, 0, sizeof(*c));
	c->read_proc_at_exec = read_proc_at_exec;
	c->last_flush_ns = monotonic_ns();
	c->last_evict_ns = c->last_flush_ns;
	c->flush_event_bytes = FLUSH_EVENT_BYTES;
	c->stackmap.stacks_fd = stacks_map_fd;
	processes_init(&c->processes, &c->procs);
}

void consumer_set_writer(struct consumer *c, struct writer_thread *writer)
{
	c->writer = writer;
}

void consumer_route(struct consumer *c, const uint16_t *types, consumer_handler_fn handle)
{
	for (const uint16_t *t = types; *t; t++) {
		if (*t < PERFCAP_EV_MAX)
			c->handlers[*t] = handle;
	}
}

/* ---- records ------------------------------------------------------------ */

int consumer_add_events(struct consumer *c, int source, void *rec, size_t len,
			const void *tail, size_t tail_len, uint64_t ts, uint64_t n)
{
	if (chunk_buffer_add_rec(&c->events, rec, len, tail, tail_len, NULL, 0, ts)) {
		c->lost_user[source] += n;
		return -ENOMEM;
	}
	c->written[source] += n;
	return 0;
}

int consumer_add_event(struct consumer *c, int source, void *rec, size_t len, uint64_t ts)
{
	return consumer_add_events(c, source, rec, len, NULL, 0, ts, 1);
}

void consumer_drop(struct consumer *c, int source)
{
	c->lost_user[source]++;
}

void consumer_drop_n(struct consumer *c, int source, uint64_t n)
{
	c->lost_user[source] += n;
}

static void copy_comm(char out[17], const char in[16])
{
	memcpy(out, in, 16);
	out[16] = '\0';
}

uint32_t consumer_process(struct consumer *c, uint32_t pid, uint32_t tid,
			  const char comm[16], uint64_t ts)
{
	char name[17];

	copy_comm(name, comm);
	return processes_on_sample(&c->processes, pid, tid, name, ts);
}

void consumer_thread_name(struct consumer *c, uint32_t pid, uint32_t tid,
			  const char comm[16], uint64_t ts)
{
	struct consumer_name_seen *seen = &c->names_seen[tid % CONSUMER_NAME_SLOTS];
	char name[17];

	if (tid && seen->tid == tid && seen->pid == pid && !memcmp(seen->comm, comm, 16))
		return; /* noted already, and the process table kept it */
	copy_comm(name, comm);
	processes_on_thread(&c->processes, pid, tid, name, ts);
	seen->pid = pid;
	seen->tid = tid;
	memcpy(seen->comm, comm, 16);
}

/* ---- stacks -------------------------------------------------------------- */

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
		c->stats.stack_records_failed++;
}

uint32_t consumer_raw_stack(struct consumer *c, uint16_t kind, uint32_t aspace, uint32_t pid,
			    bool error, const uint64_t *ips, uint32_t nr, uint64_t ts)
{
	bool is_new = false;
	uint32_t id;

	if (!error && nr == 0)
		return PC_STACK_NONE;
	if (kind == PC_STACK_KERNEL)
		aspace = pid = 0;
	id = stack_table_intern(&c->stack_table, kind, aspace, pid, stack_flags(error, nr),
				ips, nr, &is_new);
	if (!is_new)
		return id;
	emit_stack(c, id);
	if (kind == PC_STACK_USER) /* a library mapped since the last /proc read? */
		processes_check_user_ips(&c->processes, aspace, ips, nr, ts);
	return id;
}

/* ---- dispatch and flushing ---------------------------------------------- */

int consumer_handle(void *ctx, void *data, size_t size)
{
	struct consumer *c = ctx;
	const struct perfcap_event_header *h = data;
	consumer_handler_fn handle = NULL;

	if (size >= sizeof(*h) && h->type < PERFCAP_EV_MAX)
		handle = c->handlers[h->type];
	if (handle)
		handle(c, data, size);
	else
		c->stats.unknown_records++;

	if (c->events.buf.len >= c->flush_event_bytes ||
	    c->stacks.buf.len + c->procs.buf.len >= FLUSH_OTHER_BYTES)
		consumer_flush(c);
	return 0;
}

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
	/* once a second: forget exited processes. Not tied to the flush: a
	 * busy recording flushes full buffers more often than that, which
	 * would keep the flush clock from ever reaching a second. */
	if (now_ns - c->last_evict_ns >= FLUSH_INTERVAL_NS) {
		c->last_evict_ns = now_ns;
		evict_pass(c, now_ns);
		/* threads may have been forgotten: note them again when seen */
		memset(c->names_seen, 0, sizeof(c->names_seen));
	}
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
	stackmap_ids_free(&c->stackmap);
	processes_free(&c->processes);
}
