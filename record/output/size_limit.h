/* size_limit.h - --max-size: decides, chunk by chunk, whether the capture
 * may grow, so that it never exceeds SIZE and still ends cleanly.
 *
 * The rule (R = 16 KiB + SIZE/8, reserved for SYMBOLS, STATS and END):
 *   - a data chunk (META, STACKS, PROCS, EVENTS) is written only while
 *     bytes written + its header + its payload <= SIZE - R. The first one
 *     that does not fit "hits" the limit: it and every later data chunk are
 *     dropped (counted), and the recorder stops;
 *   - a SYMBOLS chunk is written if it fits in SIZE - 16 KiB, else dropped
 *     (counted: the capture then lacks those symbols);
 *   - STATS if it fits in SIZE - 512; END (main.c) if it fits in SIZE.
 * The payload size is the one the format library will write: zstd at its
 * level, measured here, or the raw size when that is smaller. */
#ifndef RECORD_SIZE_LIMIT_H
#define RECORD_SIZE_LIMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "perfcap_format.h"

#define SIZE_LIMIT_MIN           (64ull << 10) /* smallest --max-size accepted */
#define SIZE_LIMIT_CLOSE_RESERVE (16ull << 10) /* STATS + END */
#define SIZE_LIMIT_END_RESERVE   512ull        /* END */

struct size_limit {
	uint64_t max;               /* --max-size */
	bool hit;                   /* a data chunk did not fit */
	uint64_t chunks_dropped;    /* data chunks dropped once hit */
	uint64_t events_dropped;    /* records in the dropped EVENTS chunks */
	uint64_t symbols_dropped;   /* SYMBOLS chunks that did not fit */
	void *cctx;                 /* ZSTD_CCtx measuring payloads */
	struct pc_buf scratch;
};

int size_limit_init(struct size_limit *s, uint64_t max);

/* May a chunk of this type and raw payload be appended to a file of
 * `written` bytes? Counts what it refuses. */
bool size_limit_admit(struct size_limit *s, uint64_t written, uint16_t type, const void *raw,
		      size_t raw_size, uint64_t count);

/* The data limit SIZE - R of the rule above. */
uint64_t size_limit_data_bytes(uint64_t max);

void size_limit_free(struct size_limit *s);

#endif /* RECORD_SIZE_LIMIT_H */
