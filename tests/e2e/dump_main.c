/* dump_main.c - see dump_main.h. */
#include <stdio.h>

#include "dump_main.h"

static void dump_events(const struct pc_chunk *c, void (*dump_record)(const struct pc_rec *))
{
	struct pc_rec_iter it;
	const struct pc_rec *rec;

	pc_rec_iter_init(&it, c->data, c->size);
	while (pc_rec_next(&it, &rec) == 1)
		dump_record(rec);
}

static void dump_kv(const struct pc_chunk *c, const char *what)
{
	struct pc_kv_iter it;
	const char *key, *value;

	pc_kv_iter_init(&it, c->data, c->size);
	while (pc_kv_next(&it, &key, &value) == 1)
		printf("%s %s %s\n", what, key, value);
}

int dump_main(int argc, char **argv, const char *name,
	      void (*dump_record)(const struct pc_rec *rec))
{
	struct pc_reader *r;
	struct pc_chunk c;
	char err[256];

	if (argc != 2) {
		fprintf(stderr, "usage: %s CAPTURE\n", name);
		return 2;
	}
	if (pc_reader_open(&r, argv[1], err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", name, err);
		return 1;
	}
	while (pc_reader_next(r, &c) == 1) {
		if (c.hdr.type == PC_CHUNK_EVENTS)
			dump_events(&c, dump_record);
		else if (c.hdr.type == PC_CHUNK_META)
			dump_kv(&c, "meta");
		else if (c.hdr.type == PC_CHUNK_STATS)
			dump_kv(&c, "stats");
	}
	pc_reader_close(r);
	return 0;
}
