/* calls.h - one streaming pass over the system calls of a report's
 * scope, feeding everything that needs them: per-call-number durations
 * (latency percentiles and histograms), futex waits per address (lock
 * contention), and I/O calls per time window (the spike window). SQLite
 * would sort millions of rows for each GROUP BY; this reads them once,
 * and again only when the durations do not fit the memory given
 * (calls_memory). */
#ifndef ANALYZE_QUERY_CALLS_H
#define ANALYZE_QUERY_CALLS_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

#include "util/hashmap.h"
#include "util/log2_bucket.h"
#include "scope.h"

#define CALLS_MAX_NR      1024    /* numbers at or above are not per-number */
#define FUTEX_TOP         4       /* stacks and wakers kept per address */
#define FUTEX_TIDS_TEXT   512

/* Durations of one system call number: count, total, nearest-rank
 * percentiles (rank ceil(p * len / 100)) and the JSON histogram
 * (util/log2_bucket.h). Above --syscall-rate (syscall_windows) each
 * recorded call stands for `weight` calls: calls and total are weighted
 * (estimates of the whole recording), len, the percentiles and the
 * histogram are those of the calls recorded. */
struct call_durations {
	int64_t nr;
	uint64_t len;             /* calls recorded */
	double calls;             /* calls they stand for (len without windows) */
	int64_t total;            /* ns, weighted */
	int64_t recorded_total;   /* ns of the calls recorded */
	int64_t p50, p90, p99;
	uint64_t hist[LOG2_BUCKETS];
	int hist_lo, hist_hi;     /* the buckets in use (lo > hi: none) */
	struct rank_select *sel;  /* while calls_load reads them */
};

struct top_count {
	int64_t key;
	uint64_t n;
};

/* Futex waits on one (pid, address), split by kind: mutex = FUTEX_WAIT
 * (op 0), condition = the other wait ops (WAIT_BITSET ...). */
struct futex_waits {
	uint32_t pid;
	uint64_t addr;
	int mutex;
	double waits, wait_ns;                /* weighted (see call_durations) */
	uint64_t max_ns;
	uint32_t waiters;                     /* distinct threads */
	char tids[FUTEX_TIDS_TEXT];           /* their tids, comma-separated (cut) */
	struct top_count stacks[FUTEX_TOP];   /* most frequent user stacks of the waits */
	struct top_count wakers[FUTEX_TOP];   /* threads that called WAKE on it */
};

struct call_windows {
	uint64_t base, width;                 /* window k is [base + k*width, ...) */
	size_t n;
	double *io_calls, *io_ns;             /* I/O calls (rw, sync, net) started in it */
};

struct calls {
	struct call_durations *by_nr;         /* sorted by total, most first */
	size_t nnr;
	struct futex_waits *futex;            /* sorted by wait_ns, most first */
	size_t nfutex;
	struct call_windows windows;
	uint64_t count;                       /* calls recorded */
	int weighted;                         /* the capture has syscall windows */
};

/* Reads the scope's system calls. window_base/window_ns: the spike's
 * windows (window_ns 0: none). 0 or -1 (reported). */
int calls_load(sqlite3 *db, const struct report_scope *scope, uint64_t window_base,
	       uint64_t window_ns, struct calls *c);
void calls_free(struct calls *c);

/* Bytes calls_load may hold of the durations: 256 MiB, or the
 * environment's PERFCAP_REPORT_CALL_BYTES. Past it the numbers with the
 * most are dropped for histograms, and the syscalls table is read again
 * for their percentiles (util/rank_select.h). */
size_t calls_memory(void);

/* Adds one to key's count in a small heavy-hitter list of FUTEX_TOP. */
void top_count_add(struct top_count *top, int64_t key);

#endif /* ANALYZE_QUERY_CALLS_H */
