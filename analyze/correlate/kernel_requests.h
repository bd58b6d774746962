/* kernel_requests.h - the requests table from REQUEST records (format 1.7,
 * the req source: requests inferred in the kernel per TCP socket), for the
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

/* The REQUEST records of a capture, as decoded. */
struct kernel_requests {
	struct pc_rec_request *v;
	size_t n, cap;
	uint64_t skipped;    /* left out: their process's requests came from calls */
};

/* Keeps one record. 0 or -1 (out of memory, reported). */
int kernel_requests_add(struct kernel_requests *k, const struct pc_rec_request *r);

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
