/* consumer.h - the one consumer of all rings: dispatches each kernel record
 * by type to the source that handles it, and gives the sources what they
 * share to build capture records: the chunk buffers, the process table,
 * stack deduplication (raw stacks and stack map ids) and per-source event
 * counts. Three chunk buffers (STACKS, PROCS, EVENTS) are handed to the
 * writer thread in that order at each flush, so every EVENTS chunk comes
 * after the stacks and processes it refers to. */
#ifndef RECORD_CONSUMER_H
#define RECORD_CONSUMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "output/chunk_buffer.h"
#include "perfcap_bpf.h"
#include "processes.h"
#include "stack_table.h"
#include "util/u64_table.h"
#include "output/writer_thread.h"

#define FLUSH_INTERVAL_NS (1000ull * 1000 * 1000) /* 1 s */
#define FLUSH_EVENT_BYTES (4u << 20)              /* 4 MiB of events */
#define FLUSH_OTHER_BYTES (64u << 20)             /* or of stacks + procs */

struct consumer_stats {
	uint64_t ustack_errors;      /* samples whose user stack failed */
	uint64_t kstack_errors;
	uint64_t ustack_truncated;   /* samples whose user stack hit the depth limit */
	uint64_t kstack_truncated;
	uint64_t unknown_records;    /* kernel records of no attached source */
	uint64_t stack_records_failed; /* STACK records lost to out-of-memory */
};

struct consumer;

/* A source's handler of one kernel record (size >= the header). */
typedef void (*consumer_handler_fn)(struct consumer *c, const void *rec, size_t size);

typedef void (*consumer_exit_fn)(void *ctx, uint32_t pid, uint64_t ts);

/* Kernel stack map ids already turned into capture stack ids. */
struct stackmap_ids {
	int stacks_fd;               /* the shared `stacks` map */
	struct u64_table kernel;     /* kernel stack id -> capture id */
	struct u64_table user;       /* aspace << 32 | user stack id -> capture id */
};

#define CONSUMER_EXECS_MAX 64

/* The thread names noted last, by tid (direct-mapped): most SWITCH and
 * WAKEUP records name the same few threads again and again. */
#define CONSUMER_NAME_SLOTS 256

struct consumer_name_seen {
	uint32_t pid, tid;
	char comm[16];            /* the kernel's 16 bytes, as they came */
};

struct consumer {
	struct chunk_buffer stacks;
	struct chunk_buffer procs;
	struct chunk_buffer events;
	struct stack_table stack_table;
	struct process_table processes;
	struct stackmap_ids stackmap;
	struct writer_thread *writer;
	consumer_handler_fn handlers[PERFCAP_EV_MAX]; /* by kernel record type */
	bool read_proc_at_exec;      /* filtering: every exec is a target's */
	consumer_exit_fn on_exit;    /* a process exited (may be NULL) */
	uint32_t exec_pids[CONSUMER_EXECS_MAX]; /* traced processes that exec'd since
					 * the last tick (the gc probes' planning) */
	size_t nexec_pids;
	uint64_t tick_by_ns;         /* a source wants its next tick by then (0: no wish);
				      * set in a tick, read by the loop's next poll */
	void *on_exit_ctx;
	uint64_t last_flush_ns;
	uint64_t last_evict_ns;   /* eviction runs on its own clock (evict.c) */
	size_t flush_event_bytes;    /* FLUSH_EVENT_BYTES, or less (--max-size, flight) */
	int write_error;             /* first error from the writer thread */
	struct consumer_stats stats;
	uint64_t written[PERFCAP_SRC_MAX];      /* capture records written */
	uint64_t lost_user[PERFCAP_SRC_MAX];    /* records dropped in user space */
	uint64_t stack_errors[PERFCAP_SRC_MAX]; /* stack ids that could not be read */
	struct consumer_name_seen names_seen[CONSUMER_NAME_SLOTS]; /* emptied at evictions */
};

void consumer_init(struct consumer *c, int stacks_map_fd, bool read_proc_at_exec);

/* The writer thread flushes go to (set before the first flush). */
void consumer_set_writer(struct consumer *c, struct writer_thread *writer);

/* Routes the kernel record types of a source (0-ended) to its handler. */
void consumer_route(struct consumer *c, const uint16_t *types, consumer_handler_fn handle);

/* ring_buffer_sample_fn: handles one kernel record. */
int consumer_handle(void *ctx, void *data, size_t size);

/* Hands the filled buffers to the writer thread (STACKS, PROCS, EVENTS).
 * Returns 0 or the writer's first error. */
int consumer_flush(struct consumer *c);

/* Flushes if FLUSH_INTERVAL_NS passed since the last flush. */
int consumer_tick(struct consumer *c, uint64_t now_ns);

/* From a source's tick: tick again by t (the loop polls at least that
 * soon; without a wish, it ticks after each poll of up to 50 ms). */
static inline void consumer_tick_by(struct consumer *c, uint64_t t)
{
	if (!c->tick_by_ns || t < c->tick_by_ns)
		c->tick_by_ns = t;
}

void consumer_free(struct consumer *c);

/* ---- for the sources' handlers ----------------------------------------- */

/* Appends one capture record (type set by the caller) to EVENTS and counts
 * it for source. Returns 0, or -ENOMEM (then counted as lost). */
int consumer_add_event(struct consumer *c, int source, void *rec, size_t len, uint64_t ts);
/* The same for a record of a fixed part and a tail (appended as they are,
 * no copy in between) that carries n events (REQUEST_BATCH): they count as
 * n written, or n lost. */
int consumer_add_events(struct consumer *c, int source, void *rec, size_t len,
			const void *tail, size_t tail_len, uint64_t ts, uint64_t n);

/* A kernel record of source that could not be used (malformed). */
void consumer_drop(struct consumer *c, int source);
/* The same for a record that carried n events (a batch whose count is
 * believable but whose size is not): n lost. */
void consumer_drop_n(struct consumer *c, int source, uint64_t n);

/* A task of a traced process seen at ts: the process is described on
 * first sight, the thread name noted. Returns its address space (for user
 * stacks). comm is the kernel's 16 bytes. */
uint32_t consumer_process(struct consumer *c, uint32_t pid, uint32_t tid,
			  const char comm[16], uint64_t ts);

/* A task of an untraced process: only its thread name is noted. */
void consumer_thread_name(struct consumer *c, uint32_t pid, uint32_t tid,
			  const char comm[16], uint64_t ts);

/* The capture id of a raw stack (CPU samples), adding it when new. An
 * empty stack without error is PC_STACK_NONE. */
uint32_t consumer_raw_stack(struct consumer *c, uint16_t kind, uint32_t aspace, uint32_t pid,
			    bool error, const uint64_t *ips, uint32_t nr, uint64_t ts);

/* stackmap_ids.c: the capture id of a stack in the shared stack map
 * (negative ids: PC_STACK_NONE). A user stack belongs to address space
 * aspace of pid. Unreadable ids count as stack errors of source. */
uint32_t consumer_kernel_stack_id(struct consumer *c, int source, int32_t id);
uint32_t consumer_user_stack_id(struct consumer *c, int source, int32_t id,
				uint32_t aspace, uint32_t pid, uint64_t ts);
void stackmap_ids_free(struct stackmap_ids *s);

#endif /* RECORD_CONSUMER_H */
