/* pool_times.h - the readiness and pickup times of one process's requests,
 * which pool.c needs in time order to find the deepest queue of each
 * window. Kept in memory up to run_max pairs; past that both arrays are
 * sorted and written to an unlinked temporary file as a run, and they are
 * read back merged: two ascending streams, one of readiness times and one
 * of pickups, the sequences a sort of every time in memory gives. So a
 * process's requests cost bounded memory whatever the recording's length.
 * Private to correlate/. */
#ifndef ANALYZE_POOL_TIMES_H
#define ANALYZE_POOL_TIMES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Pairs in memory before a run goes to disk (64 MiB), unless the
 * environment's PERFCAP_POOL_RUN_TIMES says otherwise (the tests' runs of
 * a few pairs). */
#define POOL_TIMES_RUN ((size_t)4 << 20)

struct pool_times_run {
	off_t at;                  /* its ready times, then as many pickups */
	size_t n;
};

struct pool_times {
	int64_t *ready, *pickup;   /* the pairs since the last run */
	size_t n, cap, run_max;
	FILE *file;                /* the runs, one after another */
	off_t size;
	struct pool_times_run *runs;
	size_t nruns, runs_cap;
};

#define POOL_TIMES_BUF 1024        /* times read from a run at a time */

/* One stream's place in each run, while reading back. */
struct pool_times_cursor {
	off_t next, end;
	int64_t buf[POOL_TIMES_BUF];
	size_t pos, len;
};

struct pool_times_read {
	struct pool_times *t;
	int which;                 /* 0: ready, 1: pickup */
	size_t at;                 /* in memory: the next index */
	struct pool_times_cursor *c;   /* on disk: one per run */
};

void pool_times_init(struct pool_times *t);

/* 0 or -1 (reported). */
int pool_times_add(struct pool_times *t, int64_t ready, int64_t pickup);

/* The pairs added, as two ascending streams r[0] (ready) and r[1]
 * (pickup). 0 or -1 (reported). */
int pool_times_start(struct pool_times *t, struct pool_times_read r[2]);

/* The stream's next time: 1, 0 at its end, -1 on a read error (reported). */
int pool_times_next(struct pool_times_read *r, int64_t *v);

void pool_times_read_end(struct pool_times_read r[2]);

/* Empties the set for the next process (the file is reused). */
void pool_times_reset(struct pool_times *t);

void pool_times_free(struct pool_times *t);

#endif /* ANALYZE_POOL_TIMES_H */
