/* writer_thread.h - compresses and writes chunks on a thread of its own, so
 * the consumer of the ring buffer never waits for zstd or the disk. Filled
 * buffers travel through a bounded queue in file order; when the queue is
 * full the consumer waits (counted as backpressure), nothing is dropped. */
#ifndef RECORD_WRITER_THREAD_H
#define RECORD_WRITER_THREAD_H

#include <stdbool.h>
#include <stdint.h>

#include "chunk_buffer.h"
#include "perfcap_format.h"

struct writer_thread;

/* What reaches the file (see writer_thread.c); zeros: everything. */
struct writer_policy {
	uint64_t max_size;    /* --max-size: bytes the file may reach, 0: none */
	uint64_t flight_size; /* --flight-recorder: compressed EVENTS bytes kept, 0: off */
};

/* Starts the thread writing to w (which stays owned by the caller).
 * policy may be NULL. */
int writer_thread_start(struct writer_thread **out, struct pc_writer *w,
			const struct writer_policy *policy);

/* --max-size: a data chunk did not fit; recording should stop. */
bool writer_thread_limit_hit(struct writer_thread *wt);

/* Queues cb's payload as one chunk of the given type and leaves cb empty
 * (with a recycled buffer). An empty cb is not written. Blocks while the
 * queue is full. Returns 0, or the first write error once writing failed
 * (later payloads are then discarded). */
int writer_thread_submit(struct writer_thread *wt, uint16_t type, uint16_t version,
			 struct chunk_buffer *cb);

/* The emptied buffers of one chunk type, kept for the consumer's stream of
 * that type (writer_thread.c). put keeps the buffer (emptied) when there is
 * room or it is bigger than the smallest kept, which is then handed back
 * in *buf to be freed; take hands out the biggest. */
#define SPARE_TYPES 8          /* chunk types (PC_CHUNK_*) with a pool */
#define SPARES_PER_TYPE 3
#define SPARE_FRESH_MIN (256u << 10) /* a stream that used more starts at its size */

struct spare_pool {
	struct pc_buf buf[SPARES_PER_TYPE];
	unsigned n;
};

void spare_pool_put(struct spare_pool *p, struct pc_buf *buf);
bool spare_pool_take(struct spare_pool *p, struct pc_buf *out);

/* How many times submit had to wait for a free queue slot. */
uint64_t writer_thread_backpressure_waits(struct writer_thread *wt);

/* Writes what is queued, joins the thread and frees it. Returns the first
 * write error or 0. Afterwards the caller may use the pc_writer again. */
/* Events dropped on purpose: by --max-size (they did not fit) and by the
 * flight recorder (older than its window). */
struct writer_drops {
	uint64_t max_size_events;
	uint64_t flight_events;
};

/* writer_thread_stop that also says what was dropped (drops may be NULL). */
int writer_thread_stop_counted(struct writer_thread *wt, struct writer_drops *drops);

int writer_thread_stop(struct writer_thread *wt);

#endif /* RECORD_WRITER_THREAD_H */
