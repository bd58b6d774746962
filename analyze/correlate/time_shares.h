/* time_shares.h - per-thread sums per time window (thread_time_shares):
 * nanoseconds in each state, in futex and poll waits, in syscalls by kind,
 * block requests and CPU samples. Intervals are cut at window edges, each
 * part summed into its own window. Windows are [origin + k*W, origin +
 * (k+1)*W): origin is the recording start (META record.start_ns), or 0 of
 * the monotonic clock when the capture does not say. */
#ifndef ANALYZE_TIME_SHARES_H
#define ANALYZE_TIME_SHARES_H

#include <stdint.h>
#include <sqlite3.h>

#include "util/hashmap.h"

/* The columns of thread_time_shares after (window_start, window_end, pid,
 * tid), in table order. */
enum share_column {
	SH_RUNNING = 0, SH_RUNNABLE, SH_IO_WAIT, SH_SLEEP, SH_OTHER_WAIT,
	SH_FUTEX_WAIT, SH_POLL_WAIT, SH_FUTEX_WAITS, SH_FUTEX_WAKES, SH_POLL_WAITS,
	SH_SYSCALLS, SH_SYSCALL_NS, SH_VFS_READ, SH_VFS_WRITE, SH_NET_RECV,
	SH_NET_SEND, SH_BLOCK_REQUESTS, SH_BLOCK_BYTES, SH_BLOCK_QUEUE,
	SH_BLOCK_SERVICE, SH_CPU_SAMPLES,
	SH_NCOLUMNS,
};

struct share_row {
	int64_t  window;          /* index from origin */
	uint32_t pid, tid;
	uint64_t v[SH_NCOLUMNS];
};

/* Rows kept at most (about 0.8 GB); contributions to further rows are
 * dropped and counted. Bounds memory and work on hostile timestamps. */
#define SHARES_MAX_ROWS (1u << 22)

struct time_shares {
	uint64_t dropped;         /* contributions that found no row */
	uint64_t origin;
	uint64_t window_ns;
	struct share_row *rows;
	uint64_t len, cap;
	struct hmap index;        /* (tid, window) -> index in rows */
};

void shares_init(struct time_shares *s, uint64_t window_ns);
void shares_free(struct time_shares *s);
void shares_set_origin(struct time_shares *s, uint64_t origin);

/* Adds [start, end) of thread tid to column col, cut at window edges.
 * 0 or -ENOMEM. Past SHARES_MAX_ROWS, the rest is dropped and counted. */
int shares_add_time(struct time_shares *s, uint32_t pid, uint32_t tid, uint64_t start,
		    uint64_t end, enum share_column col);

/* Adds n to column col in the window of ts. 0 or -ENOMEM. */
int shares_add_count(struct time_shares *s, uint32_t pid, uint32_t tid, uint64_t ts,
		     enum share_column col, uint64_t n);

/* Adds total to column col of thread tid, spread over [start, end) in
 * proportion to each window's part of it. 0 or -ENOMEM. */
int shares_add_spread(struct time_shares *s, uint32_t pid, uint32_t tid, uint64_t start,
		      uint64_t end, enum share_column col, uint64_t total);

/* The row of (tid, window), or NULL. */
const struct share_row *shares_find(const struct time_shares *s, uint32_t tid, int64_t window);

/* Writes the rows, ordered by window then tid. 0 or -1 (reported). */
int shares_store(struct time_shares *s, sqlite3 *db);

#endif /* ANALYZE_TIME_SHARES_H */
