/* block_check.c - dumps what the block tests check in a capture, one fact
 * per line, for awk (reads the file with the format library only, so the
 * recorder's tests do not depend on the analyzer):
 *
 *   block PID TID DEV OP SECTOR BYTES QUEUE_NS SERVICE_NS ERROR  per BLOCK
 *   meta KEY VALUE                                               per META pair
 *   stats KEY VALUE                                              per STATS pair
 *
 * Usage: block_check CAPTURE
 */
#include <inttypes.h>
#include <stdio.h>

#include "perfcap_format.h"

static void dump_block(const struct pc_rec *rec)
{
	struct pc_rec_block b;
	size_t tail;

	pc_rec_copy(rec, &b, sizeof(b), &tail);
	printf("block %u %u %u %u %" PRIu64 " %u %" PRIu64 " %" PRIu64 " %d\n", b.pid, b.tid,
	       b.dev, b.op, b.sector, b.bytes, b.queue_ns, b.service_ns, b.error);
}

static void dump_events(const struct pc_chunk *c)
{
	struct pc_rec_iter it;
	const struct pc_rec *rec;

	pc_rec_iter_init(&it, c->data, c->size);
	while (pc_rec_next(&it, &rec) == 1) {
		if (rec->type == PC_REC_BLOCK)
			dump_block(rec);
	}
}

static void dump_kv(const struct pc_chunk *c, const char *what)
{
	struct pc_kv_iter it;
	const char *key, *value;

	pc_kv_iter_init(&it, c->data, c->size);
	while (pc_kv_next(&it, &key, &value) == 1)
		printf("%s %s %s\n", what, key, value);
}

int main(int argc, char **argv)
{
	struct pc_reader *r;
	struct pc_chunk c;
	char err[256];

	if (argc != 2) {
		fprintf(stderr, "usage: block_check CAPTURE\n");
		return 2;
	}
	if (pc_reader_open(&r, argv[1], err, sizeof(err))) {
		fprintf(stderr, "block_check: %s\n", err);
		return 1;
	}
	while (pc_reader_next(r, &c) == 1) {
		if (c.hdr.type == PC_CHUNK_EVENTS)
			dump_events(&c);
		else if (c.hdr.type == PC_CHUNK_META)
			dump_kv(&c, "meta");
		else if (c.hdr.type == PC_CHUNK_STATS)
			dump_kv(&c, "stats");
	}
	pc_reader_close(r);
	return 0;
}
