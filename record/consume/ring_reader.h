/* ring_reader.h - one consumer for all the sharded ring buffers: a libbpf
 * ring_buffer with every ring added (ring_buffer__add), polled with a short
 * timeout because the BPF side wakes it only in batches. */
#ifndef RECORD_RING_READER_H
#define RECORD_RING_READER_H

#include <bpf/libbpf.h>

#include "session/shared_maps.h"

struct ring_reader {
	struct ring_buffer *rb;
};

/* fn is called for each record of any ring, with ctx. Prints one error
 * line and returns -errno on failure. */
int ring_reader_open(struct ring_reader *r, const struct shared_maps *m,
		     ring_buffer_sample_fn fn, void *ctx);

/* Waits up to timeout_ms for a wakeup, then consumes every ring. */
int ring_reader_poll(struct ring_reader *r, int timeout_ms);

/* Consumes everything left in every ring. */
int ring_reader_drain(struct ring_reader *r);

void ring_reader_close(struct ring_reader *r);

#endif /* RECORD_RING_READER_H */
