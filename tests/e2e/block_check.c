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

#include "dump_main.h"

static void dump_block(const struct pc_rec *rec)
{
	struct pc_rec_block b;
	size_t tail;

	pc_rec_copy(rec, &b, sizeof(b), &tail);
	printf("block %u %u %u %u %" PRIu64 " %u %" PRIu64 " %" PRIu64 " %d\n", b.pid, b.tid,
	       b.dev, b.op, b.sector, b.bytes, b.queue_ns, b.service_ns, b.error);
}

static void dump_record(const struct pc_rec *rec)
{
	if (rec->type == PC_REC_BLOCK)
		dump_block(rec);
}

int main(int argc, char **argv)
{
	return dump_main(argc, argv, "block_check", dump_record);
}
