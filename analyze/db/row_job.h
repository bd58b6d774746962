/* row_job.h - one row for a prepared statement, kept as values and run on
 * the INSERT thread (sql_writer.h) in queue order, or at once without
 * one. For the few records the loader stores with statements of their own
 * (processes, threads, maps, modules: long texts a batch cannot hold):
 * binding and stepping on the loading thread would need the INSERT thread
 * idle first, and that wait, several milliseconds each time a PROCS chunk
 * comes while a chunk's rows are queued, stopped the loader in the middle
 * of the import. A job owns copies of its texts. */
#ifndef ANALYZE_ROW_JOB_H
#define ANALYZE_ROW_JOB_H

#include <stdint.h>
#include <sqlite3.h>

#define ROW_JOB_MAX_COLS 16

struct sql_writer;
struct row_job;

/* A row of ncols (<= ROW_JOB_MAX_COLS) values for st, all NULL; NULL when
 * out of memory. A failed step sets *failed to 1 (on the INSERT thread:
 * read it once that thread is drained or stopped). */
struct row_job *row_job_new(sqlite3_stmt *st, int ncols, int *failed);

/* Column col (1-based, as sqlite3_bind_*) of the row. */
void row_job_int(struct row_job *j, int col, int64_t value);

/* Copies text; NULL stays NULL. -1 when out of memory (the job then fails
 * when run). */
int row_job_text(struct row_job *j, int col, const char *text);

/* Frees a job that will not be run. NULL is accepted. */
void row_job_free(struct row_job *j);

/* Runs the row on w after the jobs queued before it, or now when w is
 * NULL, and frees it. A NULL job (out of memory) sets *failed of the
 * caller instead: pass the same pointer. */
void row_job_run(struct sql_writer *w, struct row_job *j, int *failed);

#endif /* ANALYZE_ROW_JOB_H */
