/* request_feed.h - what the request pass (requests.h) reads, gathered
 * while the records are decoded instead of read back from SQLite after
 * the import.
 *
 * The pass needs the socket calls of every (pid, fd) that ever held a
 * socket (successful reads, writes and closes, with fd = args[0]), the
 * connection opens (the sockets rows) and the poll-family returns of the
 * processes that have sockets. It used to select them from the syscalls
 * and sockets tables once the import had written them: on a real server
 * capture (redis under redis-benchmark, 1.3M system calls) that one
 * statement took 0.8 s and the sort of its rows another 0.3 s, a third
 * of the whole import. The decoder hands each row to the feed as it
 * stores it; which (pid, fd) and which processes held a socket is known
 * only at the end, so the feed keeps every candidate call (48 bytes) and
 * every poll return (24 bytes), and request_feed_finish keeps those of
 * the streams that held a socket and orders them: a counting sort of the
 * calls by stream into a new array (for a moment both exist), then a
 * check (and, when needed, a sort) of each stream's calls by time. The order is total, so the pass reads exactly
 * the sequence the SQL ORDER gave (ties between opens of one (pid, fd)
 * at one time fall to the sockets row order, as the stable sort of the
 * rows in table order did).
 *
 * Memory is bounded: past REQUEST_FEED_RUN_CALLS calls the buffer is
 * sorted and written to a temporary file as a run (request_runs.c), and
 * the runs are merged at the end; the poll returns (24 bytes each) stay in
 * memory. */
#ifndef ANALYZE_REQUEST_FEED_H
#define ANALYZE_REQUEST_FEED_H

#include <stddef.h>
#include <stdint.h>

#include "util/hashmap.h"

/* Ranks of a stream's entries at one time: opens, closes, then reads
 * and writes. */
enum request_ord { REQ_OPEN = 0, REQ_CLOSE = 1, REQ_IO = 2 };

/* One connection open or socket call of a (pid, fd). */
struct request_call {
	int64_t ts;
	int64_t end_ts;           /* a call's return (ts + duration) */
	int64_t value;            /* a read or write: bytes moved; an open: the cookie */
	int64_t seq;              /* a call: its syscall_id; an open: its sockets row */
	uint32_t pid, tid;        /* tid: 0 for an open */
	int32_t fd;
	int8_t ord;               /* enum request_ord */
	int8_t is_read;
	uint8_t origin;           /* an open: index in request_origins */
};

/* A poll-family return (ret > 0): when, by which thread of which process. */
struct poll_ret {
	int64_t pid, tid, ts;
};

/* The socket origins a sockets row can carry, as the table stores them;
 * request_origins[0] is NULL (no origin). */
extern const char *const request_origins[];

/* Kinds (request_feed.c) of the system call numbers below this, looked
 * up once. */
#define REQUEST_FEED_KINDS 1024

/* Calls the feed keeps in memory before it sorts them and writes them to
 * a temporary file as a run (48 bytes each: 192 MiB, twice that for a
 * moment when they are ordered in memory). */
#define REQUEST_FEED_RUN_CALLS (4u << 20)

struct request_runs;

struct request_feed {
	uint8_t kinds[REQUEST_FEED_KINDS];
	struct request_call *calls; /* after finish, in memory: the kept ones, in order */
	size_t ncalls, calls_cap;
	size_t run_calls;         /* calls per run on disk; 0: never spill */
	struct request_runs *runs; /* the spilled runs, or NULL */
	size_t next;              /* request_feed_next's position in calls */
	struct poll_ret *polls;
	size_t npolls, polls_cap;
	int64_t nsockets;         /* sockets rows so far */
	struct hmap held;         /* (pid, fd) that held a socket -> its rank at finish */
	struct hmap pids;         /* processes that held one */
	size_t nstreams;          /* after finish: held's size */
};

/* run_calls: calls kept in memory before a run goes to disk (0: never;
 * the loader passes REQUEST_FEED_RUN_CALLS). */
void request_feed_init(struct request_feed *f, size_t run_calls);
void request_feed_free(struct request_feed *f);

/* A syscalls row (syscall_id its rowid): kept when it is a successful
 * read, write or close of a descriptor, or a poll-family return. 0 or -1
 * (out of memory, or a temporary file failed). */
int request_feed_syscall(struct request_feed *f, int64_t syscall_id, uint64_t ts,
			 uint64_t duration, uint32_t pid, uint32_t tid, uint32_t nr,
			 int64_t ret, uint64_t arg0);

/* A sockets row (origin: the text its origin column holds, or NULL). */
int request_feed_socket(struct request_feed *f, uint64_t ts, uint32_t pid, int32_t fd,
			uint64_t cookie, const char *origin);

/* After the last row: orders the calls of the (pid, fd) that held a
 * socket in (pid, fd, ts, ord, seq) order (request_feed_next reads them)
 * and keeps the poll returns of the processes that held one. 0 or -1. */
int request_feed_finish(struct request_feed *f);

/* The next call in that order into *c: 1, 0 after the last, -1 (a
 * temporary file could not be read; reported). */
int request_feed_next(struct request_feed *f, struct request_call *c);

#endif /* ANALYZE_REQUEST_FEED_H */
