/* chunk_buffer.h - the payload of one chunk being filled: a pc_buf plus the
 * record count and time range that go into the chunk header. */
#ifndef RECORD_CHUNK_BUFFER_H
#define RECORD_CHUNK_BUFFER_H

#include <stdint.h>

#include "perfcap_format.h"

struct chunk_buffer {
	struct pc_buf buf;
	uint64_t count;   /* records or key/value pairs */
	uint64_t t_start; /* 0 until a timestamped record is added */
	uint64_t t_end;
};

/* Appends a record (see pc_buf_add_rec); ts 0 means "no timestamp". */
int chunk_buffer_add_rec(struct chunk_buffer *cb, void *fixed, size_t fixed_len,
			 const void *var1, size_t len1, const void *var2, size_t len2,
			 uint64_t ts);
int chunk_buffer_add_kv(struct chunk_buffer *cb, const char *key, const char *value);
int chunk_buffer_add_kv_u64(struct chunk_buffer *cb, const char *key, uint64_t value);
/* Counts a record that the caller appended itself (pc_buf_add_module). */
void chunk_buffer_count(struct chunk_buffer *cb, uint64_t ts);
void chunk_buffer_free(struct chunk_buffer *cb);

#endif /* RECORD_CHUNK_BUFFER_H */
