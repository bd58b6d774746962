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
#include "util/hashmap.h"

struct kreq_runs;           /* kernel_request_store.c: the records on disk */

/* A connection of the records: (conn_ts, cookie) names one (a socket
 * address is reused only after its connection closed). */
struct kreq_conn {
	int64_t pid, fd, conn_ts, cookie;
};

/* The requests of a capture's REQUEST and REQUEST_BATCH records, kept as
 * decoded (kernel_request_store.c): each record once, after an 8-byte
 * head, so a batch's requests cost their entries (52 bytes each) and
 * their header once; a REQUEST record is 128 bytes. A default recording
 * of a busy server holds millions of requests: past run_bytes the
 * buffer is sorted by process and written to an unlinked temporary file
 * as a run, and the runs are merged when the pass reads them back, so
 * memory does not grow with the recording's length. The connections
 * stay in memory (32 bytes and a hash slot each). */
struct request_totals;

/* A REQUEST_WINDOW (format 1.10): requests whose start falls in [ts, ts +
 * period_ns) were followed only when it fell in [ts, ts + open_ns); each
 * stands for period_ns / open_ns of them. */
struct kreq_window {
	int64_t ts, open_ns, period_ns, started, followed;
	int64_t gap_conns, gap_bytes;  /* (1.16) connections never in a window */
	int64_t snap_start, snap_end;  /* (1.16) the streams' snapshots, 0: none */
};

struct kernel_requests {
	unsigned char *buf;         /* the records since the last run */
	size_t len, cap;
	size_t run_bytes;           /* a run past this many bytes; 0: never */
	struct kreq_runs *runs;     /* NULL until the first run */
	struct hmap conn_ids;       /* (conn_ts, cookie) -> its place in conns + 1 */
	struct kreq_conn *conns;    /* each connection once, as first seen */
	size_t nconns, conns_cap;
	size_t n;                   /* requests (n stays after release) */
	size_t nruns;               /* runs written to disk (stays too) */
	uint64_t skipped;    /* left out: their process's requests came from calls */
	struct request_totals *totals; /* kernel_requests_build's: each row added */
	struct kreq_window *windows;   /* as decoded; sorted and checked by the build */
	size_t nwindows, windows_cap;
	uint64_t windows_overlapping;  /* left out: overlapping an earlier one */
};

/* The loader's run size: 64 MiB of records, about 1.2M requests. */
#define KREQ_RUN_BYTES ((size_t)64 << 20)

/* An empty set; run_bytes as in struct kernel_requests. */
void kernel_requests_init(struct kernel_requests *k, size_t run_bytes);

/* Keeps one REQUEST. 0 or -1 (out of memory or a write error, reported). */
int kernel_requests_add(struct kernel_requests *k, const struct pc_rec_request *r);

/* Keeps the b->n requests of a REQUEST_BATCH (checked by the caller:
 * 1..PC_REQUEST_BATCH_MAX entries at `entries`, unaligned). 0 or -1. */
int kernel_requests_add_batch(struct kernel_requests *k, const struct pc_rec_request_batch *b,
			      const uint8_t *entries);

/* Keeps one REQUEST_WINDOW (checked by the caller: 0 < period_ns, open_ns
 * <= period_ns, ts + period_ns within int64). 0 or -1 (out of memory). */
int kernel_requests_add_window(struct kernel_requests *k, const struct pc_rec_request_window *w);

/* Writes requests rows and pool_utilisation windows for the kept records
 * but those of the nskip processes in skip (ascending: the processes
 * whose rows came from their calls; theirs are counted in k->skipped).
 * Requests are numbered per (pid, fd) connection as requests.c numbers
 * them. Each row is also added to totals (request_totals.h). A request
 * that started in a window's period names it (window_ts); the windows are
 * written to request_windows, each with the requests it followed. 0 or -1
 * (reported). */
int kernel_requests_build(sqlite3 *db, struct kernel_requests *k, const int64_t *skip,
			  size_t nskip, struct request_totals *totals);

/* Frees the records, keeping the counts n, nruns and skipped (for the
 * quality table, after the requests are built). */
void kernel_requests_release(struct kernel_requests *k);

void kernel_requests_free(struct kernel_requests *k);

#endif /* ANALYZE_KERNEL_REQUESTS_H */
