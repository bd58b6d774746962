/* consumer.h - turns ring buffer records into capture records: samples
 * refer to deduplicated stacks, processes are described on first sight,
 * exec and exit events are kept. Three chunk buffers (STACKS, PROCS,
 * EVENTS) are handed to the writer thread in that order at each flush, so
 * every EVENTS chunk comes after the stacks and processes it refers to. */
#ifndef RECORD_CONSUMER_H
#define RECORD_CONSUMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "chunk_buffer.h"
#include "processes.h"
#include "stackdedup.h"
#include "writer_thread.h"

#define FLUSH_INTERVAL_NS (1000ull * 1000 * 1000) /* 1 s */
#define FLUSH_EVENT_BYTES (4u << 20)              /* 4 MiB of events */
#define FLUSH_OTHER_BYTES (64u << 20)             /* or of stacks + procs */

struct consumer_stats {
	uint64_t samples;            /* SAMPLE records written */
	uint64_t execs;
	uint64_t exits;
	uint64_t lost_user;          /* events dropped in user space */
	uint64_t ustack_errors;      /* samples whose user stack failed */
	uint64_t kstack_errors;
	uint64_t ustack_truncated;   /* samples whose user stack hit the depth limit */
	uint64_t kstack_truncated;
};

typedef void (*consumer_exit_fn)(void *ctx, uint32_t pid, uint64_t ts);

struct consumer {
	struct chunk_buffer stacks;
	struct chunk_buffer procs;
	struct chunk_buffer events;
	struct stack_table stack_table;
	struct process_table processes;
	struct writer_thread *writer;
	bool read_proc_at_exec;      /* filtering: every exec is a target's */
	consumer_exit_fn on_exit;    /* a process exited (may be NULL) */
	void *on_exit_ctx;
	uint64_t last_flush_ns;
	int write_error;             /* first error from the writer thread */
	struct consumer_stats stats;
};

void consumer_init(struct consumer *c, struct writer_thread *writer, bool read_proc_at_exec);

/* ring_buffer_sample_fn: handles one record from the kernel. */
int consumer_handle(void *ctx, void *data, size_t size);

/* Hands the filled buffers to the writer thread (STACKS, PROCS, EVENTS).
 * Returns 0 or the writer's first error. */
int consumer_flush(struct consumer *c);

/* Flushes if FLUSH_INTERVAL_NS passed since the last flush. */
int consumer_tick(struct consumer *c, uint64_t now_ns);

void consumer_free(struct consumer *c);

#endif /* RECORD_CONSUMER_H */
