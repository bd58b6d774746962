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

#include "db.h"
#include "fmt.h"
#include "report_sections.h"

struct lock_table {
	const char *json_name;
	const char *title;
	const char *source;
	const char *sql;          /* %s: scope condition; %d: limit */
	const char *start, *end;
};

static const struct lock_table tables[] = {
	{ "futex", "Futex waits per address (FUTEX_WAIT = mutex; WAIT_BITSET = condition"
	  " variable or semaphore)", "syscall",
	  "SELECT pid, printf('0x%%x', addr), CASE WHEN op = 0 THEN 'mutex' ELSE 'condition' END,"
	  " count(DISTINCT tid), count(*), sum(min(end_ts, :to) - max(start_ts, :from)),"
	  " max(duration) FROM futex_calls WHERE kind = 'wait' AND %s"
	  " GROUP BY pid, addr, op = 0 ORDER BY 6 DESC LIMIT %d", "start_ts", "end_ts" },
	{ "mutexes", "User mutexes (uprobes)", "lock",
	  "SELECT pid, printf('0x%%x', addr), 'mutex', count(DISTINCT tid), count(*),"
	  " sum(min(ts, :to) - max(ts - duration, :from)), max(duration) FROM user_mutexes"
	  " WHERE %s GROUP BY pid, addr ORDER BY 6 DESC LIMIT %d", "(ts - duration)", "ts" },
	{ "kernel_locks", "Kernel locks", "lock",
	  "SELECT min(pid), printf('0x%%x', lock_addr), 'kernel', count(DISTINCT tid), count(*),"
	  " sum(min(ts, :to) - max(ts - duration, :from)), max(duration) FROM kernel_locks"
	  " WHERE %s GROUP BY lock_addr ORDER BY 6 DESC LIMIT %d", "(ts - duration)", "ts" },
};

static int lock_table(const struct report_context *ctx, const struct lock_table *t)
{
	char where[1024], sql[2048], a[FMT_BUF], b[FMT_BUF];
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
		if (w) {
			json_begin_object(w, NULL);
			json_int(w, "pid", sqlite3_column_int64(st, 0));
			json_string(w, "address", (const char *)sqlite3_column_text(st, 1));
			json_string(w, "type", (const char *)sqlite3_column_text(st, 2));
			json_int(w, "waiters", sqlite3_column_int64(st, 3));
			json_int(w, "waits", sqlite3_column_int64(st, 4));
			json_int(w, "wait_ns", sqlite3_column_int64(st, 5));
			json_int(w, "wait_max_ns", sqlite3_column_int64(st, 6));
			json_end_object(w);
			continue;
		}
		if (n++ == 0)
			fprintf(ctx->out, "  %7s %-18s %-9s %7s %8s %10s %10s\n", "pid", "address",
				"type", "waiters", "waits", "total", "longest");
		fprintf(ctx->out, "  %7lld %-18s %-9s %7lld %8lld %10s %10s\n",
			(long long)sqlite3_column_int64(st, 0), sqlite3_column_text(st, 1),
			sqlite3_column_text(st, 2), (long long)sqlite3_column_int64(st, 3),
			(long long)sqlite3_column_int64(st, 4),
			fmt_duration_ns(a, sizeof(a), (uint64_t)sqlite3_column_int64(st, 5)),
			fmt_duration_ns(b, sizeof(b), (uint64_t)sqlite3_column_int64(st, 6)));
	}
	sqlite3_finalize(st);
	if (w)
		json_end_array(w);
	else if (n == 0)
		report_none(ctx, "waits", t->source);
	return 0;
}

static int runq(const struct report_context *ctx)
{
	char where[1024], sql[2048], a[FMT_BUF], b[FMT_BUF], comm[64];
	struct json_writer *w = ctx->json;
	sqlite3_stmt *st;
	int n = 0;

	snprintf(sql, sizeof(sql), "SELECT pid, tid, count(*), sum(min(switch_in_ts, :to) -"
		 " max(ready_ts, :from)), max(latency) FROM runq_latency WHERE %s"
		 " GROUP BY pid, tid ORDER BY 4 DESC LIMIT %d",
		 report_scope_sql(where, sizeof(where), "pid", "tid", "ready_ts", "switch_in_ts"),
		 ctx->opts->top);
	st = report_prepare(ctx, sql);
	if (!st)
		return -1;
	if (w)
		json_begin_array(w, "runq");
	else
		fprintf(ctx->out, "  Run-queue latency per thread (runnable until switched in):\n");
	while (sqlite3_step(st) == SQLITE_ROW) {
		uint32_t pid = (uint32_t)sqlite3_column_int64(st, 0);
		uint32_t tid = (uint32_t)sqlite3_column_int64(st, 1);
		const char *name = names_thread(ctx->names, pid, tid);
		snprintf(comm, sizeof(comm), "%s", name ? name : "?");
		if (w) {
			json_begin_object(w, NULL);
			json_int(w, "pid", pid);
			json_int(w, "tid", tid);
			json_string(w, "comm", comm);
			json_int(w, "waits", sqlite3_column_int64(st, 2));
			json_int(w, "total_ns", sqlite3_column_int64(st, 3));
			json_int(w, "max_ns", sqlite3_column_int64(st, 4));
			json_end_object(w);
			continue;
		}
		if (n++ == 0)
			fprintf(ctx->out, "  %7s %7s %-16s %8s %10s %10s\n", "pid", "tid", "comm", "waits",
				"total", "longest");
		fprintf(ctx->out, "  %7u %7u %-16s %8lld %10s %10s\n", pid, tid, comm,
			(long long)sqlite3_column_int64(st, 2),
			fmt_duration_ns(a, sizeof(a), (uint64_t)sqlite3_column_int64(st, 3)),
			fmt_duration_ns(b, sizeof(b), (uint64_t)sqlite3_column_int64(st, 4)));
	}
	sqlite3_finalize(st);
	if (w)
		json_end_array(w);
	else if (n == 0)
		report_none(ctx, "run-queue waits", "sched");
	return 0;
}

int report_section_contention(const struct report_context *ctx)
{
	int rc = 0;

	if (ctx->json)
		json_begin_object(ctx->json, "contention");
	else
		fprintf(ctx->out, "\nContention and scheduling\n");
	for (size_t i = 0; rc == 0 && i < sizeof(tables) / sizeof(tables[0]); i++)
		rc = lock_table(ctx, &tables[i]);
	if (rc == 0)
		rc = runq(ctx);
	if (ctx->json)
		json_end_object(ctx->json);
	return rc;
}
