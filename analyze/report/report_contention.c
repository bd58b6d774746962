/* report_contention.c - "Contention and scheduling", the lock part:
 * futex addresses waited on (futex_calls, split into FUTEX_WAIT: mutexes,
 * and the other wait ops: condition variables, semaphores), user mutexes
 * (uprobes) and kernel locks, each with waiters, waits, total and
 * longest wait; and run-queue latency per thread. All clipped to the
 * scope. In JSON: "contention". Per-thread time shares follow in
 * report_threads.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "util/fmt.h"
#include "report_sections.h"

struct lock_table {
	const char *json_name;
	const char *title;
	const char *source;
	const char *sql;          /* %s: scope condition; %d: limit */
	const char *start, *end;
};

static const struct lock_table tables[] = {
	{ "mutexes", "User mutexes (uprobes)", "lock",
	  "SELECT pid, printf('0x%%x', addr), 'mutex', count(DISTINCT tid), count(*),"
	  " sum(min(ts, :to) - max(ts - duration, :from)), max(duration) FROM user_mutexes"
	  " WHERE %s GROUP BY pid, addr ORDER BY 6 DESC LIMIT %d", "(ts - duration)", "ts" },
	{ "kernel_locks", "Kernel locks", "lock",
	  "SELECT min(pid), printf('0x%%x', lock_addr), 'kernel', count(DISTINCT tid), count(*),"
	  " sum(min(ts, :to) - max(ts - duration, :from)), max(duration) FROM kernel_locks"
	  " WHERE %s GROUP BY lock_addr ORDER BY 6 DESC LIMIT %d", "(ts - duration)", "ts" },
};

static void lock_row_json(struct json_writer *w, int64_t pid, const char *address,
			  const char *type, int64_t waiters, int64_t waits, int64_t wait_ns,
			  int64_t max_ns)
{
	json_begin_object(w, NULL);
	json_int(w, "pid", pid);
	json_string(w, "address", address);
	json_string(w, "type", type);
	json_int(w, "waiters", waiters);
	json_int(w, "waits", waits);
	json_int(w, "wait_ns", wait_ns);
	json_int(w, "wait_max_ns", max_ns);
	json_end_object(w);
}

static void lock_row_text(FILE *out, int *n, int64_t pid, const char *address,
			  const char *type, int64_t waiters, int64_t waits, int64_t wait_ns,
			  int64_t max_ns)
{
	char a[FMT_BUF], b[FMT_BUF];

	if ((*n)++ == 0)
		fprintf(out, "  %7s %-18s %-9s %7s %8s %10s %10s\n", "pid", "address", "type",
			"waiters", "waits", "total", "longest");
	fprintf(out, "  %7lld %-18s %-9s %7lld %8lld %10s %10s\n", (long long)pid, address, type,
		(long long)waiters, (long long)waits,
		fmt_duration_ns(a, sizeof(a), (uint64_t)wait_ns),
		fmt_duration_ns(b, sizeof(b), (uint64_t)max_ns));
}

/* Futex addresses, from the report's one pass over the system calls. */
static void futex_table(const struct report_context *ctx)
{
	struct json_writer *w = ctx->json;
	int n = 0;

	if (w)
		json_begin_array(w, "futex");
	else
		fprintf(ctx->out, "  Futex waits per address (FUTEX_WAIT = mutex; WAIT_BITSET ="
			" condition variable or semaphore):\n");
	for (size_t i = 0; i < ctx->calls->nfutex && i < (size_t)ctx->opts->top; i++) {
		const struct futex_waits *f = &ctx->calls->futex[i];
		char address[32];
		snprintf(address, sizeof(address), "0x%llx", (unsigned long long)f->addr);
		if (w)
			lock_row_json(w, f->pid, address, f->mutex ? "mutex" : "condition",
				      f->waiters, (int64_t)f->waits, (int64_t)f->wait_ns,
				      (int64_t)f->max_ns);
		else
			lock_row_text(ctx->out, &n, f->pid, address, f->mutex ? "mutex" : "condition",
				      f->waiters, (int64_t)f->waits, (int64_t)f->wait_ns,
				      (int64_t)f->max_ns);
	}
	if (w)
		json_end_array(w);
	else if (n == 0)
		report_none(ctx, "futex waits", "syscall");
}

static int lock_table(const struct report_context *ctx, const struct lock_table *t)
{
	char where[1024], sql[2048];
	struct json_writer *w = ctx->json;
	sqlite3_stmt *st;
	int n = 0;

	snprintf(sql, sizeof(sql), t->sql,
		 report_scope_sql(where, sizeof(where), "pid", "tid", t->start, t->end),
		 ctx->opts->top);
	st = report_prepare(ctx, sql);
	if (!st)
		return -1;
	if (w)
		json_begin_array(w, t->json_name);
	else
		fprintf(ctx->out, "  %s:\n", t->title);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *address = (const char *)sqlite3_column_text(st, 1);
		const char *type = (const char *)sqlite3_column_text(st, 2);
		int64_t v[4] = { sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4),
				 sqlite3_column_int64(st, 5), sqlite3_column_int64(st, 6) };
		if (w)
			lock_row_json(w, sqlite3_column_int64(st, 0), address, type, v[0], v[1], v[2],
				      v[3]);
		else
			lock_row_text(ctx->out, &n, sqlite3_column_int64(st, 0), address, type, v[0],
				      v[1], v[2], v[3]);
	}
	sqlite3_finalize(st);
	if (w)
		json_end_array(w);
	else if (n == 0)
		report_none(ctx, "waits", t->source);
	return 0;
}

static int by_runnable(const void *pa, const void *pb)
{
	const struct diag_thread *a = *(const struct diag_thread *const *)pa;
	const struct diag_thread *b = *(const struct diag_thread *const *)pb;

	if (a->runnable != b->runnable)
		return a->runnable > b->runnable ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

/* Run-queue waits per thread, from the diagnosis' pass over the states. */
static int runq(const struct report_context *ctx)
{
	const struct diag_thread **v = malloc((ctx->diag->nthreads + 1) * sizeof(*v));
	struct json_writer *w = ctx->json;
	char a[FMT_BUF], b[FMT_BUF];
	size_t n = 0;

	if (!v)
		return -1;
	for (size_t i = 0; i < ctx->diag->nthreads; i++)
		if (ctx->diag->threads[i].runnable > 0)
			v[n++] = &ctx->diag->threads[i];
	if (n > 0)
		qsort(v, n, sizeof(*v), by_runnable);
	if (w)
		json_begin_array(w, "runq");
	else
		fprintf(ctx->out, "  Run-queue latency per thread (runnable until switched in):\n");
	for (size_t i = 0; i < n && i < (size_t)ctx->opts->top; i++) {
		const char *name = names_thread(ctx->names, v[i]->pid, v[i]->tid);
		if (w) {
			json_begin_object(w, NULL);
			json_int(w, "pid", v[i]->pid);
			json_int(w, "tid", v[i]->tid);
			json_string(w, "comm", name ? name : "?");
			json_uint(w, "waits", v[i]->runq_waits);
			json_uint(w, "total_ns", v[i]->runnable);
			json_uint(w, "max_ns", v[i]->runq_max);
			json_end_object(w);
			continue;
		}
		if (i == 0)
			fprintf(ctx->out, "  %7s %7s %-16s %8s %10s %10s\n", "pid", "tid", "comm",
				"waits", "total", "longest");
		fprintf(ctx->out, "  %7u %7u %-16s %8llu %10s %10s\n", v[i]->pid, v[i]->tid,
			name ? name : "?", (unsigned long long)v[i]->runq_waits,
			fmt_duration_ns(a, sizeof(a), v[i]->runnable),
			fmt_duration_ns(b, sizeof(b), v[i]->runq_max));
	}
	if (w)
		json_end_array(w);
	else if (n == 0)
		report_none(ctx, "run-queue waits", "sched");
	free(v);
	return 0;
}

int report_section_contention(const struct report_context *ctx)
{
	int rc = 0;

	if (ctx->json)
		json_begin_object(ctx->json, "contention");
	else
		fprintf(ctx->out, "\nContention and scheduling\n");
	futex_table(ctx);
	for (size_t i = 0; rc == 0 && i < sizeof(tables) / sizeof(tables[0]); i++)
		rc = lock_table(ctx, &tables[i]);
	if (rc == 0)
		rc = runq(ctx);
	if (ctx->json)
		json_end_object(ctx->json);
	return rc;
}
