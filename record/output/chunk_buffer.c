/* chunk_buffer.c - the payload of one chunk being filled: a pc_buf plus the
 * record count and time range that go into the chunk header. */
#include "chunk_buffer.h"

void chunk_buffer_count(struct chunk_buffer *cb, uint64_t ts)
{
	cb->count++;
	if (!ts)
		return;
	if (!cb->t_start || ts < cb->t_start)
		cb->t_start = ts;
	if (ts > cb->t_end)
		cb->t_end = ts;
}

int chunk_buffer_add_rec(struct chunk_buffer *cb, void *fixed, size_t fixed_len,
			 const void *var1, size_t len1, const void *var2, size_t len2,
			 uint64_t ts)
{
	int err = pc_buf_add_rec(&cb->buf, fixed, fixed_len, var1, len1, var2, len2);

	if (!err)
		chunk_buffer_count(cb, ts);
	return err;
}

int chunk_buffer_add_kv(struct chunk_buffer *cb, const char *key, const char *value)
{
	int err = pc_buf_add_kv(&cb->buf, key, value);

	if (!err)
		cb->count++;
	return err;
}

int chunk_buffer_add_kv_u64(struct chunk_buffer *cb, const char *key, uint64_t value)
{
	int err = pc_buf_add_kv_u64(&cb->buf, key, value);

	if (!err)
		cb->count++;
	return err;
}

void chunk_buffer_free(struct chunk_buffer *cb)
{
	pc_buf_free(&cb->buf);
	cb->count = 0;
	cb->t_start = cb->t_end = 0;
}
