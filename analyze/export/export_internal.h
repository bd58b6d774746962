/* export_internal.h - what the export writers share (private to
 * export/): the resolved scope with its SQL condition, capture facts
 * (clock, host, run id, sampling period), the output file opened safely
 * and renamed into place when complete, and one writer entry per format. */
#ifndef ANALYZE_EXPORT_INTERNAL_H
#define ANALYZE_EXPORT_INTERNAL_H

#include <stdint.h>
#include <stdio.h>
#include <sqlite3.h>

#include "export.h"
#include "query/scope.h"

struct export_ctx {
	sqlite3 *db;
	struct report_scope scope;
	uint64_t realtime_offset;   /* wall ns = monotonic ns + this (0 if unknown) */
	uint64_t period_ns;         /* ns per CPU sample (1e9 / sampling.cpu.freq_hz) */
	uint64_t window_ns;         /* thread_time_shares window */
	char host[256];             /* META host.hostname, or "" */
	char run_id[128];
};

/* An output being written: path's temporary sibling (mode 0600, never a
 * followed symlink), renamed over path by export_out_commit; or stdout. */
struct export_out {
	FILE *fp;
	char *tmp;                  /* NULL for stdout */
	char *path;
};

/* Opens path (NULL or "-": stdout). 0 or 1 (reported). */
int export_out_open(struct export_out *o, const char *path);
/* Flushes, closes and renames into place; with ok 0 removes the
 * temporary. 0 or 1 (reported). */
int export_out_commit(struct export_out *o, int ok);

/* Creates directory dir (0700) unless it is one already; a symlink or
 * another kind of file there is refused. 0 or 1 (reported). */
int export_out_directory(const char *dir);

/* SQL condition of the scope over a table with these columns (see
 * report_scope_sql); start_col NULL for a table without times (the time
 * window is then not applied). Writes into buf. */
const char *export_scope_sql(const struct export_ctx *cx, char *buf, size_t len,
			     const char *pid_col, const char *tid_col,
			     const char *start_col, const char *end_col);

/* Prepares sql and binds the scope's parameters. NULL (reported). */
sqlite3_stmt *export_prepare(const struct export_ctx *cx, const char *sql);

/* Wall-clock ns of a monotonic ns time (the monotonic time itself if the
 * capture has no clock pair). */
uint64_t export_wall_ns(const struct export_ctx *cx, uint64_t monotonic_ns);

/* The writers: 0 or -1 (reported). */
int export_pprof(struct export_ctx *cx, FILE *out);
int export_speedscope(struct export_ctx *cx, FILE *out);
int export_tables(struct export_ctx *cx, const char *dir, int ndjson);
int export_openmetrics(struct export_ctx *cx, FILE *out, int prometheus);
int export_perfetto(struct export_ctx *cx, FILE *out);

/* export_pprof.c or export_pprof_none.c: 1 if pprof and perfetto (both
 * need protobuf-c) can be written, else 0 with *why. */
int export_pprof_available(const char **why);

/* 64-bit hash of text with a seed (FNV-1a mixed): two seeds key
 * dictionaries by 128 bits without keeping the strings. */
uint64_t export_hash(const char *text, uint64_t seed);

#endif /* ANALYZE_EXPORT_INTERNAL_H */
