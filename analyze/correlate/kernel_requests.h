/* kernel_requests.h - the requests table from REQUEST and REQUEST_BATCH
 * records (formats 1.7 and 1.8, the req source: requests inferred in the
 * kernel per TCP socket), for the
 * captures that have no socket system calls to build them from, or for
 * the processes whose calls built none (requests.c builds from calls).
 *
 * The kernel applies the rule requests.h states for calls (a read that
 * returns data after a write starts a request, a request is kept when it
 * has a write); what differs is where the times come from: a read's or
 * write's return in the socket layer, not the system call's entry and
 * exit, and the readiness from the data's arrival (sk_data_ready,
 * ready_source 'data_ready') instead of a poll return. docs/schema.md,
 * requests. */
#ifndef ANALYZE_KERNEL_REQUESTS_H
#define ANALYZE_KERNEL_REQUESTS_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

#include "perfcap_format.h"

/* A request of a REQUEST_BATCH, as kept: its batch and its entry. */
struct kreq_entry {
	uint32_t batch;             /* index in kernel_requests.batches */
	uint32_t i;                 /* its place in the batch (number = batch number + i) */
	struct pc_request_entry e;
};

#define KREQ_SINGLE 0x80000000u /* order[]: an index in singles, not entries */

/* The requests of a capture's REQUEST and REQUEST_BATCH records, as
 * decoded, in arrival order. A batch's requests stay as its entries (52
 * bytes each, and its header once): a REQUEST record is 128 bytes, and a
 * default recording of a busy server holds millions of requests. */
struct kernel_requests {
	uint32_t *order;            /* entry index, or KREQ_SINGLE | single index */
	size_t n, cap;              /* requests (n stays after release) */
	struct pc_rec_request_batch *batches;
	size_t nbatches, batches_cap;
	struct kreq_entry *entries;
	size_t nentries, entries_cap;
	struct pc_rec_request *singles;
	size_t nsingles, singles_cap;
	uint64_t skipped;    /* left out: their process's requests came from calls */
};

/* Keeps one REQUEST. 0 or -1 (out of memory, reported). */
int kernel_requests_add(struct kernel_requests *k, const struct pc_rec_request *r);

/* Keeps the b->n requests of a REQUEST_BATCH (checked by the caller:
 * 1..PC_REQUEST_BATCH_MAX entries at `entries`, unaligned). 0 or -1. */
int kernel_requests_add_batch(struct kernel_requests *k, const struct pc_rec_request_batch *b,
			      const uint8_t *entries);

/* The i-th request in arrival order, as its REQUEST record would be. */
void kernel_requests_get(const struct kernel_requests *k, size_t i, struct pc_rec_request *r);

/* Writes requests rows and pool_utilisation windows for the kept records:
 * all of them (skip_pids_with_rows 0), or those of processes without
 * requests rows yet (1; the others are counted in k->skipped). Requests
 * are numbered per (pid, fd) connection as requests.c numbers them. 0 or
 * -1 (reported). */
int kernel_requests_build(sqlite3 *db, struct kernel_requests *k, int skip_pids_with_rows);

/* Frees the records, keeping the counts n and skipped (for the quality
 * table, after the requests are built). */
void kernel_requests_release(struct kernel_requests *k);

void kernel_requests_free(struct kernel_requests *k);

#endif /* ANALYZE_KERNEL_REQUESTS_H */
