/* stack_quality.c - completeness of user stacks and how they were obtained
 * (see stack_quality.h). Each stack is classified once in SQL (METHOD_SQL):
 * no stack, unwound to the end (dwarf), unwound and stopped (partial), or a
 * frame-pointer walk that does or does not reach an entry point (the
 * loader's probably_truncated); the rest is grouping. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "stack_quality.h"

/* m: 0..3 = enum sq_method, 4 = no user stack. */
#define METHOD_SQL \
	"CASE WHEN x.ustack_id IS NULL OR s.stack_id IS NULL OR (s.flags & 2) != 0 THEN 4" \
	" WHEN u.stack_id IS NOT NULL THEN (CASE WHEN u.stop = 'end' THEN 0 ELSE 1 END)" \
	" WHEN (s.flags & 1) = 0 AND s.probably_truncated = 0 THEN 2 ELSE 3 END"

/* The classified rows (pid, ustack_id, count, m) of a source. */
#define CLASSIFIED(source) \
	"WITH c AS (SELECT x.pid, x.ustack_id, x.count, " METHOD_SQL " AS m FROM " source \
	" x LEFT JOIN stacks s ON s.stack_id = x.ustack_id" \
	" LEFT JOIN user_stack_unwinds u ON u.stack_id = x.ustack_id) "

#define CPU_ROWS "sample_counts"
#define OFFCPU_ROWS "(SELECT pid, ustack_id, 1 AS count FROM offcpu WHERE state != 0)"

/* Sums of count per m, as columns 0..4 after the first `lead` ones. */
#define BY_M \
	"SUM(CASE WHEN m = 0 THEN count ELSE 0 END), SUM(CASE WHEN m = 1 THEN count ELSE 0 END)," \
	" SUM(CASE WHEN m = 2 THEN count ELSE 0 END), SUM(CASE WHEN m = 3 THEN count ELSE 0 END)," \
	" SUM(CASE WHEN m = 4 THEN count ELSE 0 END)"

static const char *const method_names[SQ_METHOD_COUNT] = {
	"dwarf", "partial", "fp", "fp_incomplete",
};

const char *sq_method_name(enum sq_method m)
{
	return m < SQ_METHOD_COUNT ? method_names[m] : "?";
}

uint64_t sq_complete(const struct sq_counts *c)
{
	return c->by_method[SQ_DWARF] + c->by_method[SQ_FP];
}

uint64_t sq_total(const struct sq_counts *c)
{
	uint64_t n = 0;

	for (int m = 0; m < SQ_METHOD_COUNT; m++)
		n += c->by_method[m];
	return n;
}

static void read_counts(sqlite3_stmt *st, int first, struct sq_counts *c)
{
	for (int m = 0; m < SQ_METHOD_COUNT; m++)
		c->by_method[m] = (uint64_t)sqlite3_column_int64(st, first + m);
	c->none = (uint64_t)sqlite3_column_int64(st, first + SQ_METHOD_COUNT);
}

static int read_totals(sqlite3 *db, const char *sql, struct sq_counts *c)
{
	sqlite3_stmt *st = db_prepare(db, sql);
	int rc = st ? 0 : -1;

	if (st && sqlite3_step(st) == SQLITE_ROW)
		read_counts(st, 0, c);
	sqlite3_finalize(st);
	return rc;
}

/* Rows of (key, name, m sums), most stacks first; at most SQ_ROWS_MAX
 * kept, the others counted in *more. */
static int read_rows(sqlite3 *db, const char *sql, struct sq_row *rows, int *n, uint64_t *more)
{
	sqlite3_stmt *st = db_prepare(db, sql);
	const unsigned char *name;

	if (!st)
		return -1;
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (*n == SQ_ROWS_MAX) {
			(*more)++;
			continue;
		}
		name = sqlite3_column_text(st, 1);
		rows[*n].pid = sqlite3_column_int64(st, 0);
		rows[*n].name = strdup(name ? (const char *)name : "?");
		read_counts(st, 2, &rows[*n].n);
		(*n)++;
	}
	sqlite3_finalize(st);
	return 0;
}

static int read_stops(sqlite3 *db, struct stack_quality *q)
{
	sqlite3_stmt *st = db_prepare(db,
		"SELECT u.stop, SUM(sc.count) AS n FROM sample_counts sc"
		" JOIN user_stack_unwinds u ON u.stack_id = sc.ustack_id"
		" GROUP BY u.stop ORDER BY n DESC, u.stop");

	if (!st)
		return -1;
	while (sqlite3_step(st) == SQLITE_ROW && q->nstops < 16) {
		q->stops[q->nstops] = strdup((const char *)sqlite3_column_text(st, 0));
		q->stop_samples[q->nstops++] = (uint64_t)sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	return 0;
}

/* A count of unwind_counts (the import's) or stats (the recorder's), 0
 * when absent (older captures and databases). */
static uint64_t count_of(sqlite3 *db, const char *table_sql, const char *key)
{
	int64_t v = db_lookup_int(db, table_sql, key, NULL, 0);

	return v > 0 ? (uint64_t)v : 0;
}

static void read_reuse(sqlite3 *db, struct sq_reuse *r)
{
	static const char unwind_sql[] = "SELECT value FROM unwind_counts WHERE key = ?1";
	static const char stats_sql[] = "SELECT sum(value) FROM stats WHERE key = ?1";

	r->same = count_of(db, unwind_sql, "copies.offcpu_same");
	r->paired = count_of(db, unwind_sql, "copies.offcpu_same_paired");
	r->agreed = count_of(db, unwind_sql, "copies.refresh_agreed");
	r->differed = count_of(db, unwind_sql, "copies.refresh_differed");
	r->unverified = count_of(db, unwind_sql, "copies.refresh_unverified");
	r->kernel = count_of(db, stats_sql, "sched.kstack.reused");
	r->kernel_agreed = count_of(db, stats_sql, "sched.kstack.agreed");
	r->kernel_differed = count_of(db, stats_sql, "sched.kstack.differed");
}

int stack_quality_read(sqlite3 *db, struct stack_quality *q)
{
	int rc = 0;

	memset(q, 0, sizeof(*q));
	if (db_query_int(db, "SELECT COUNT(*) FROM sqlite_master"
			 " WHERE name = 'user_stack_unwinds'", 0) <= 0)
		return 0;
	q->present = 1;
	rc |= read_totals(db, CLASSIFIED(CPU_ROWS) "SELECT " BY_M " FROM c", &q->cpu);
	if (db_query_int(db, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'offcpu'", 0) > 0)
		rc |= read_totals(db, CLASSIFIED(OFFCPU_ROWS) "SELECT " BY_M " FROM c", &q->offcpu);
	rc |= read_rows(db, CLASSIFIED(CPU_ROWS)
		"SELECT c.pid, (SELECT comm FROM processes p WHERE p.pid = c.pid"
		" ORDER BY ts DESC LIMIT 1), " BY_M ", SUM(CASE WHEN m != 4 THEN count ELSE 0 END)"
		" AS n FROM c GROUP BY c.pid HAVING n > 0 ORDER BY n DESC, c.pid",
		q->procs, &q->nprocs, &q->procs_more);
	rc |= read_rows(db, CLASSIFIED(CPU_ROWS)
		"SELECT -1, f.module, " BY_M ", SUM(count) AS n FROM c"
		" JOIN stack_frames sf ON sf.stack_id = c.ustack_id AND sf.position = 0"
		" JOIN frames f ON f.frame_id = sf.frame_id WHERE c.m != 4"
		" GROUP BY f.module ORDER BY n DESC, f.module", q->mods, &q->nmods, &q->mods_more);
	rc |= read_stops(db, q);
	read_reuse(db, &q->reuse);
	return rc ? -1 : 0;
}

void stack_quality_free(struct stack_quality *q)
{
	for (int i = 0; i < q->nprocs; i++)
		free(q->procs[i].name);
	for (int i = 0; i < q->nmods; i++)
		free(q->mods[i].name);
	for (int i = 0; i < q->nstops; i++)
		free(q->stops[i]);
	memset(q, 0, sizeof(*q));
}
