/* flight_ring.h - the flight recorder's window: the most recent EVENTS
 * chunks, kept zstd-compressed in memory instead of being written. When the
 * compressed bytes exceed the capacity the oldest chunks are dropped (and
 * counted); at the end the kept chunks are written in order. Used only by
 * the writer thread. */
#ifndef RECORD_FLIGHT_RING_H
#define RECORD_FLIGHT_RING_H

#include <stdint.h>

#include "perfcap_format.h"

struct flight_chunk;

struct flight_ring {
	uint64_t capacity;          /* compressed bytes kept at most (>= 1 chunk) */
	uint64_t bytes;             /* compressed bytes held */
	struct flight_chunk *oldest, *newest;
	uint64_t chunks_kept;
	uint64_t chunks_dropped;    /* EVENTS chunks dropped as too old */
	uint64_t events_dropped;    /* records in them */
	void *cctx, *dctx;          /* ZSTD_CCtx / ZSTD_DCtx */
	struct pc_buf scratch;      /* a decompressed chunk while writing */
};

int flight_ring_init(struct flight_ring *r, uint64_t capacity);

/* Compresses one EVENTS payload into the ring, then drops the oldest
 * chunks until the ring fits its capacity (the newest is always kept).
 * 0 or -ENOMEM. */
int flight_ring_push(struct flight_ring *r, const void *raw, size_t raw_size, uint64_t count,
		     uint64_t t_start, uint64_t t_end);

/* The earliest t_start of the kept chunks (0 if none). */
uint64_t flight_ring_window_start(const struct flight_ring *r);
uint64_t flight_ring_window_end(const struct flight_ring *r);

/* Writes every kept chunk, oldest first, as EVENTS chunks, emptying the
 * ring. Returns 0 or the first error. */
int flight_ring_write(struct flight_ring *r, struct pc_writer *w);

void flight_ring_free(struct flight_ring *r);

#endif /* RECORD_FLIGHT_RING_H */
