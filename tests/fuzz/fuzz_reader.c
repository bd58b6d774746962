/* fuzz_reader.c - libFuzzer target: the format library's reader on any
 * bytes: every chunk, every record and key/value iterated, every record
 * copied as the analyzer does. */
#include <stdlib.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "perfcap_format.h"

static void walk_records(const struct pc_chunk *c)
{
	struct pc_rec_iter it;
	const struct pc_rec *rec;
	uint8_t copy[256];
	size_t tail;

	pc_rec_iter_init(&it, c->data, c->size);
	while (pc_rec_next(&it, &rec) == 1)
		(void)pc_rec_copy(rec, copy, sizeof(copy), &tail);
}

static void walk_kv(const struct pc_chunk *c)
{
	struct pc_kv_iter it;
	const char *k, *v;

	pc_kv_iter_init(&it, c->data, c->size);
	while (pc_kv_next(&it, &k, &v) == 1)
		;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pc_reader *r;
	struct pc_chunk c;
	char path[64], why[256];
	fuzz_memfile(0, data, size, path);

	if (pc_reader_open(&r, path, why, sizeof(why)) == 0) {
		while (pc_reader_next(r, &c) == 1) {
			if (c.hdr.type == PC_CHUNK_META || c.hdr.type == PC_CHUNK_STATS ||
			    c.hdr.type == PC_CHUNK_END)
				walk_kv(&c);
			else
				walk_records(&c);
		}
		pc_reader_close(r);
	}
	return 0;
}
