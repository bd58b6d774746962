/* records.c - iterating the records and key/value pairs of a payload, and
 * copying records into fixed structs across layout versions. */
#include <string.h>

#include "perfcap_format.h"

void pc_rec_iter_init(struct pc_rec_iter *it, const void *data, size_t size)
{
	it->p = data;
	it->end = data ? it->p + size : it->p; /* NULL + 0 is undefined */
	it->bad = 0;
}

int pc_rec_next(struct pc_rec_iter *it, const struct pc_rec **rec)
{
	size_t left = (size_t)(it->end - it->p);
	struct pc_rec h;

	if (left == 0)
		return 0;
	if (left < sizeof(h))
		goto malformed;
	memcpy(&h, it->p, sizeof(h));
	if (h.size < sizeof(h) || (h.size & 7) || h.size > left)
		goto malformed;
	*rec = (const struct pc_rec *)it->p;
	it->p += h.size;
	return 1;
malformed:
	it->bad++;
	it->p = it->end;
	return -1;
}

const uint8_t *pc_rec_copy(const struct pc_rec *rec, void *out, size_t out_size,
			   size_t *tail_len)
{
	size_t n = rec->size < out_size ? rec->size : out_size;

	memcpy(out, rec, n);
	if (n < out_size)
		memset((uint8_t *)out + n, 0, out_size - n);
	*tail_len = rec->size - n;
	return (const uint8_t *)rec + n;
}

void pc_kv_iter_init(struct pc_kv_iter *it, const void *data, size_t size)
{
	it->p = data;
	it->end = data ? it->p + size : it->p; /* NULL + 0 is undefined */
}

int pc_kv_next(struct pc_kv_iter *it, const char **key, const char **value)
{
	const char *k = it->p, *kend, *v, *vend;

	if (k >= it->end)
		return 0;
	kend = memchr(k, 0, (size_t)(it->end - k));
	if (!kend)
		goto malformed;
	v = kend + 1;
	vend = v < it->end ? memchr(v, 0, (size_t)(it->end - v)) : NULL;
	if (!vend)
		goto malformed;
	*key = k;
	*value = v;
	it->p = vend + 1;
	return 1;
malformed:
	it->p = it->end;
	return -1;
}

const char *pc_chunk_type_name(uint16_t type)
{
	static const char *const names[] = {
		[PC_CHUNK_META] = "meta",       [PC_CHUNK_EVENTS] = "events",
		[PC_CHUNK_PROCS] = "procs",     [PC_CHUNK_SYMBOLS] = "symbols",
		[PC_CHUNK_STATS] = "stats",     [PC_CHUNK_STACKS] = "stacks",
		[PC_CHUNK_END] = "end",
	};

	if (type < sizeof(names) / sizeof(names[0]) && names[type])
		return names[type];
	return "unknown";
}
