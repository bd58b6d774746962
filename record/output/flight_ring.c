/* flight_ring.c - the flight recorder's window of recent EVENTS chunks.
 *
 * A FIFO list of compressed payloads. Compression here only bounds the
 * memory held (the window size counts compressed bytes); the payload is
 * decompressed again and handed to pc_writer_add_chunk, which produces the
 * bytes of the file, so the format library stays the only writer of them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "flight_ring.h"

struct flight_chunk {
	struct flight_chunk *next;
	uint64_t raw_size, count, t_start, t_end;
	size_t size;                /* compressed bytes in data */
	uint8_t data[];
};

int flight_ring_init(struct flight_ring *r, uint64_t capacity)
{
	memset(r, 0, sizeof(*r));
	r->capacity = capacity;
	r->cctx = ZSTD_createCCtx();
	r->dctx = ZSTD_createDCtx();
	return r->cctx && r->dctx ? 0 : -ENOMEM;
}

static void drop_oldest(struct flight_ring *r)
{
	struct flight_chunk *c = r->oldest;

	r->oldest = c->next;
	if (!r->oldest)
		r->newest = NULL;
	r->bytes -= c->size;
	r->chunks_kept--;
	r->chunks_dropped++;
	r->events_dropped += c->count;
	free(c);
}

static struct flight_chunk *compress_chunk(struct flight_ring *r, const void *raw,
					   size_t raw_size)
{
	size_t bound = ZSTD_compressBound(raw_size);
	struct flight_chunk *c = malloc(sizeof(*c) + bound), *shrunk;
	size_t n;

	if (!c)
		return NULL;
	n = ZSTD_compressCCtx(r->cctx, c->data, bound, raw, raw_size, PC_ZSTD_LEVEL);
	if (ZSTD_isError(n)) {
		free(c);
		return NULL;
	}
	c->size = n;
	shrunk = realloc(c, sizeof(*c) + n);
	return shrunk ? shrunk : c;
}

int flight_ring_push(struct flight_ring *r, const void *raw, size_t raw_size, uint64_t count,
		     uint64_t t_start, uint64_t t_end)
{
	struct flight_chunk *c = compress_chunk(r, raw, raw_size);

	if (!c)
		return -ENOMEM;
	c->next = NULL;
	c->raw_size = raw_size;
	c->count = count;
	c->t_start = t_start;
	c->t_end = t_end;
	if (r->newest)
		r->newest->next = c;
	else
		r->oldest = c;
	r->newest = c;
	r->bytes += c->size;
	r->chunks_kept++;
	while (r->bytes > r->capacity && r->oldest != r->newest)
		drop_oldest(r);
	return 0;
}

uint64_t flight_ring_window_start(const struct flight_ring *r)
{
	uint64_t start = 0;

	for (const struct flight_chunk *c = r->oldest; c; c = c->next) {
		if (c->t_start && (!start || c->t_start < start))
			start = c->t_start;
	}
	return start;
}

uint64_t flight_ring_window_end(const struct flight_ring *r)
{
	uint64_t end = 0;

	for (const struct flight_chunk *c = r->oldest; c; c = c->next) {
		if (c->t_end > end)
			end = c->t_end;
	}
	return end;
}

static int write_chunk(struct flight_ring *r, struct pc_writer *w, const struct flight_chunk *c)
{
	size_t n;

	if (r->scratch.cap < c->raw_size) {
		uint8_t *p = realloc(r->scratch.data, c->raw_size);

		if (!p)
			return -ENOMEM;
		r->scratch.data = p;
		r->scratch.cap = c->raw_size;
	}
	n = ZSTD_decompressDCtx(r->dctx, r->scratch.data, c->raw_size, c->data, c->size);
	if (ZSTD_isError(n) || n != c->raw_size)
		return -EIO;
	return pc_writer_add_chunk(w, PC_CHUNK_EVENTS, PC_EVENTS_VERSION, r->scratch.data,
				   c->raw_size, c->count, c->t_start, c->t_end);
}

int flight_ring_write(struct flight_ring *r, struct pc_writer *w)
{
	int err = 0;

	while (r->oldest) {
		struct flight_chunk *c = r->oldest;

		if (!err)
			err = write_chunk(r, w, c);
		r->oldest = c->next;
		r->bytes -= c->size;
		free(c);
	}
	r->newest = NULL;
	return err;
}

void flight_ring_free(struct flight_ring *r)
{
	while (r->oldest) {
		struct flight_chunk *c = r->oldest;

		r->oldest = c->next;
		free(c);
	}
	r->newest = NULL;
	ZSTD_freeCCtx(r->cctx);
	ZSTD_freeDCtx(r->dctx);
	pc_buf_free(&r->scratch);
}
