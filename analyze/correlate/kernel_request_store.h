/* kernel_request_store.h - how kernel_requests.c keeps the REQUEST and
 * REQUEST_BATCH records of a capture until the requests pass, and hands
 * them back grouped by process (see kernel_request_store.c). Private to
 * correlate/. */
#ifndef ANALYZE_KERNEL_REQUEST_STORE_H
#define ANALYZE_KERNEL_REQUEST_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "kernel_requests.h"

/* A kept record's head: its process, and what follows it: a REQUEST
 * record when n is 0, else a REQUEST_BATCH header and its n entries. The
 * record is padded to 8 bytes. */
struct kreq_head {
	uint32_t pid;
	uint32_t n;
};

/* Bytes of the record after a head (padding included). */
size_t kreq_record_size(const struct kreq_head *h);

/* Where the records are read back from: the memory buffer in (pid,
 * arrival) order, or the runs on disk merged into that order. */
struct kreq_cursor {
	struct kernel_requests *k;
	struct kreq_ref *refs;    /* in memory: the records' places, sorted */
	size_t nrefs, at;
};

/* Readies the records for reading back in order: every record of the
 * lowest pid first, each process's records in arrival order. 0 or -1
 * (reported). */
int kreq_cursor_start(struct kreq_cursor *c, struct kernel_requests *k);

/* The next record (its head; the record follows it, unaligned) in *head:
 * valid until the next call. 1, 0 after the last one, -1 on a read error
 * (reported). */
int kreq_cursor_next(struct kreq_cursor *c, const struct kreq_head **head);

void kreq_cursor_end(struct kreq_cursor *c);

#endif /* ANALYZE_KERNEL_REQUEST_STORE_H */
