/* buf.c - a growable byte buffer and the helpers that append records and
 * key/value pairs to chunk payloads. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfcap_format.h"

void pc_buf_free(struct pc_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

void pc_buf_reset(struct pc_buf *b)
{
	b->len = 0;
}

static int pc_buf_reserve(struct pc_buf *b, size_t extra)
{
	size_t need = b->len + extra;
	size_t cap;
	uint8_t *p;

	if (need < b->len)
		return -ENOMEM; /* overflow */
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 4096;
	while (cap < need)
		cap *= 2;
	p = realloc(b->data, cap);
	if (!p)
		return -ENOMEM;
	b->data = p;
	b->cap = cap;
	return 0;
}

int pc_buf_append(struct pc_buf *b, const void *p, size_t n)
{
	if (pc_buf_reserve(b, n))
		return -ENOMEM;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

int pc_buf_add_rec(struct pc_buf *b, void *fixed, size_t fixed_len,
		   const void *var1, size_t len1, const void *var2, size_t len2)
{
	static const uint8_t zeros[8];
	struct pc_rec *h = fixed;
	size_t total = fixed_len + len1 + len2;
	size_t padded = (total + 7) & ~(size_t)7;

	if (fixed_len < sizeof(*h) || padded > UINT32_MAX)
		return -EINVAL;
	h->size = (uint32_t)padded;
	if (pc_buf_reserve(b, padded))
		return -ENOMEM;
	pc_buf_append(b, fixed, fixed_len);
	pc_buf_append(b, var1, len1);
	pc_buf_append(b, var2, len2);
	pc_buf_append(b, zeros, padded - total);
	return 0;
}

int pc_buf_add_kv(struct pc_buf *b, const char *key, const char *value)
{
	size_t klen = strlen(key) + 1, vlen = strlen(value) + 1;

	if (pc_buf_reserve(b, klen + vlen))
		return -ENOMEM;
	pc_buf_append(b, key, klen);
	pc_buf_append(b, value, vlen);
	return 0;
}

int pc_buf_add_kv_u64(struct pc_buf *b, const char *key, uint64_t value)
{
	char num[24];

	snprintf(num, sizeof(num), "%" PRIu64, value);
	return pc_buf_add_kv(b, key, num);
}
