/* size_limit.c - --max-size: admits a chunk only if the file stays within
 * its budget (the rule is in size_limit.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "size_limit.h"

int size_limit_init(struct size_limit *s, uint64_t max)
{
	memset(s, 0, sizeof(*s));
	s->max = max;
	s->cctx = ZSTD_createCCtx();
	return s->cctx ? 0 : -ENOMEM;
}

uint64_t size_limit_data_bytes(uint64_t max)
{
	return max - SIZE_LIMIT_CLOSE_RESERVE - max / 8;
}

/* Bytes the chunk will take in the file: header + payload. */
static uint64_t chunk_bytes(struct size_limit *s, const void *raw, size_t raw_size)
{
	size_t bound = ZSTD_compressBound(raw_size), n;

	if (s->scratch.cap < bound) {
		uint8_t *p = realloc(s->scratch.data, bound);

		if (!p)
			return PC_CHUNK_HEADER_SIZE + raw_size; /* the upper bound */
		s->scratch.data = p;
		s->scratch.cap = bound;
	}
	/* the writer's level: the same bytes, so the same size */
	n = ZSTD_compressCCtx(s->cctx, s->scratch.data, bound, raw, raw_size, PC_ZSTD_LEVEL);
	if (ZSTD_isError(n) || n > raw_size)
		n = raw_size;
	return PC_CHUNK_HEADER_SIZE + n;
}

static uint64_t budget(const struct size_limit *s, uint16_t type)
{
	if (type == PC_CHUNK_STATS)
		return s->max - SIZE_LIMIT_END_RESERVE;
	if (type == PC_CHUNK_SYMBOLS)
		return s->max - SIZE_LIMIT_CLOSE_RESERVE;
	return size_limit_data_bytes(s->max);
}

static bool is_data(uint16_t type)
{
	return type != PC_CHUNK_STATS && type != PC_CHUNK_SYMBOLS;
}

bool size_limit_admit(struct size_limit *s, uint64_t written, uint16_t type, const void *raw,
		      size_t raw_size, uint64_t count)
{
	bool data = is_data(type);
	uint64_t need;

	if (!(data && s->hit)) {
		need = type == PC_CHUNK_STATS ? PC_CHUNK_HEADER_SIZE + raw_size
					      : chunk_bytes(s, raw, raw_size);
		if (written + need <= budget(s, type))
			return true;
	}
	if (data) {
		s->hit = true;
		s->chunks_dropped++;
		if (type == PC_CHUNK_EVENTS)
			s->events_dropped += count;
	} else if (type == PC_CHUNK_SYMBOLS) {
		s->symbols_dropped++;
	}
	return false;
}

void size_limit_free(struct size_limit *s)
{
	ZSTD_freeCCtx(s->cctx);
	pc_buf_free(&s->scratch);
}
