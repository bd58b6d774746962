/* report_io.c - "I/O": block devices (every process's requests in the
 * window: a competing process is often the cause) with queue (insert to
 * issue) vs service (issue to completion) time, block I/O per thread of
 * the scope, and the scope's time in file vs socket calls and in
 * uninterruptible waits (thread_time_shares, whole windows). In JSON: "io". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "util/fmt.h"
#include "report_sections.h"

static const char device_sql[] =
	"WITH b AS (SELECT * FROM block_io WHERE ts >= :from AND ts < :to),"
	" r AS (SELECT dev, dev_name, op, bytes, queue_ns, service_ns,"
	"  row_number() OVER (PARTITION BY dev ORDER BY queue_ns) AS rq,"
	"  row_number() OVER (PARTITION BY dev ORDER BY service_ns) AS rs,"
	"  count(*) OVER (PARTITION BY dev) AS n FROM b)"
	" SELECT min(dev_name), count(*), sum(op & 255 = 0), sum(op & 255 = 1), sum(bytes),"
	"  sum(queue_ns), max(CASE WHEN rq = (n * 50 + 99) / 100 THEN queue_ns END),"
	"  max(CASE WHEN rq = (n * 99 + 99) / 100 THEN queue_ns END),"
	"  sum(service_ns), max(CASE WHEN rs = (n * 50 + 99) / 100 THEN service_ns END),"
	"  max(CASE WHEN rs = (n * 99 + 99) / 100 THEN service_ns END)"
	" FROM r GROUP BY dev ORDER BY sum(queue_ns) + sum(service_ns) DESC";

static int devices(const struct report_context *ctx)
{
	sqlite3_stmt *st = report_prepare(ctx, device_sql);
	struct json_writer *w = ctx->json;
	char s[8][FMT_BUF];
	int n = 0;

	if (!st)
		return -1;
	if (w)
		json_begin_array(w, "devices");
	while (sqlite3_step(st) == SQLITE_ROW) {
		int64_t v[11];
		for (int i = 1; i < 11; i++)
			v[i] = sqlite3_column_int64(st, i);
		if (w) {
			static const char *names[] = { "device", "requests", "reads", "writes", "bytes",
				"queue_ns", "queue_p50_ns", "queue_p99_ns", "service_ns",
				"service_p50_ns", "service_p99_ns" };
			json_begin_object(w, NULL);
			json_string(w, names[0], (const char *)sqlite3_column_text(st, 0));
			for (int i = 1; i < 11; i++)
				json_int(w, names[i], v[i]);
			json_end_object(w);
			continue;
		}
		if (n++ == 0)
			fprintf(ctx->out, "  Block devices (all processes in the window):\n"
				"  %-8s %9s %7s %7s %10s %22s %22s\n", "device", "requests", "reads",
				"writes", "bytes", "queue total (p50/p99)", "service total (p50/p99)");
		fprintf(ctx->out, "  %-8s %9s %7lld %7lld %10s %10s (%s/%s) %10s (%s/%s)\n",
			sqlite3_column_text(st, 0), fmt_count(s[0], sizeof(s[0]), (uint64_t)v[1]),
			(long long)v[2], (long long)v[3], fmt_count(s[1], sizeof(s[1]), (uint64_t)v[4]),
			fmt_duration_ns(s[2], sizeof(s[2]), (uint64_t)v[5]),
			fmt_duration_ns(s[3], sizeof(s[3]), (uint64_t)v[6]),
			fmt_duration_ns(s[4], sizeof(s[4]), (uint64_t)v[7]),
			fmt_duration_ns(s[5], sizeof(s[5]), (uint64_t)v[8]),
			fmt_duration_ns(s[6], sizeof(s[6]), (uint64_t)v[9]),
			fmt_duration_ns(s[7], sizeof(s[7]), (uint64_t)v[10]));
	}
	sqlite3_finalize(st);
	if (w)
		json_end_array(w);
	else if (n == 0)
		report_none(ctx, "block I/O", "block");
	return 0;
}

static int threads(const struct report_context *ctx)
{
	char where[1024], sql[2048], comm[64], a[FMT_BUF], b[FMT_BUF], c[FMT_BUF];
	struct json_writer *w = ctx->json;
	sqlite3_stmt *st;
	int n = 0;

	snprintf(sql, sizeof(sql), "SELECT pid, tid, dev_name, count(*), sum(bytes), sum(queue_ns),"
		 " sum(service_ns) FROM block_io WHERE %s GROUP BY pid, tid, dev"
		 " ORDER BY sum(queue_ns) + sum(service_ns) DESC LIMIT %d",
		 report_scope_sql(where, sizeof(where), "pid", "tid", "ts", "ts"), ctx->opts->top);
	st = report_prepare(ctx, sql);
	if (!st)
		return -1;
	if (w)
		json_begin_array(w, "threads");
	while (sqlite3_step(st) == SQLITE_ROW) {
		uint32_t pid = (uint32_t)sqlite3_column_int64(st, 0);
		uint32_t tid = (uint32_t)sqlite3_column_int64(st, 1);
		const char *name = names_thread(ctx->names, pid, tid);
		snprintf(comm, sizeof(comm), "%s", name ? name : (tid ? "?" : "(unknown submitter)"));
		if (w) {
			json_begin_object(w, NULL);
			json_int(w, "pid", pid);
			json_int(w, "tid", tid);
			json_string(w, "comm", comm);
			json_string(w, "device", (const char *)sqlite3_column_text(st, 2));
			json_int(w, "requests", sqlite3_column_int64(st, 3));
			json_int(w, "bytes", sqlite3_column_int64(st, 4));
			json_int(w, "queue_ns", sqlite3_column_int64(st, 5));
			json_int(w, "service_ns", sqlite3_column_int64(st, 6));
			json_end_object(w);
			continue;
		}
		if (n++ == 0)
			fprintf(ctx->out, "  Block I/O by submitting thread (scope):\n"
				"  %7s %7s %-16s %-8s %9s %10s %10s %10s\n", "pid", "tid", "comm",
				"device", "requests", "bytes", "queue", "service");
		fprintf(ctx->out, "  %7u %7u %-16s %-8s %9lld %10s %10s %10s\n", pid, tid, comm,
			sqlite3_column_text(st, 2), (long long)sqlite3_column_int64(st, 3),
			fmt_count(a, sizeof(a), (uint64_t)sqlite3_column_int64(st, 4)),
			fmt_duration_ns(b, sizeof(b), (uint64_t)sqlite3_column_int64(st, 5)),
			fmt_duration_ns(c, sizeof(c), (uint64_t)sqlite3_column_int64(st, 6)));
	}
	sqlite3_finalize(st);
	if (w)
		json_end_array(w);
	return 0;
}

static int time_split(const struct report_context *ctx)
{
	static const char *names[] = { "file_read_ns", "file_write_ns", "socket_recv_ns",
		"socket_send_ns", "io_wait_ns" };
	char where[1024], sql[2048], s[5][FMT_BUF];
	struct json_writer *w = ctx->json;
	sqlite3_stmt *st;
	int64_t v[5] = { 0 };

	snprintf(sql, sizeof(sql), "SELECT sum(vfs_read_ns), sum(vfs_write_ns), sum(net_recv_ns),"
		 " sum(net_send_ns), sum(io_wait_ns) FROM thread_time_shares WHERE %s",
		 report_scope_sql(where, sizeof(where), "pid", "tid", "window_start", "window_end"));
	st = report_prepare(ctx, sql);
	if (!st)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		for (int i = 0; i < 5; i++)
			v[i] = sqlite3_column_int64(st, i);
	sqlite3_finalize(st);
	if (w) {
		json_begin_object(w, "time");
		for (int i = 0; i < 5; i++)
			json_int(w, names[i], v[i]);
		json_end_object(w);
		return 0;
	}
	if (!report_source_on(ctx, "syscall") && v[4] == 0) {
		report_none(ctx, "file or socket calls", "syscall");
		return 0;
	}
	fprintf(ctx->out, "  Time in calls (scope): files read %s, write %s; sockets recv %s,"
		" send %s; uninterruptible waits %s\n",
		fmt_duration_ns(s[0], sizeof(s[0]), (uint64_t)v[0]),
		fmt_duration_ns(s[1], sizeof(s[1]), (uint64_t)v[1]),
		fmt_duration_ns(s[2], sizeof(s[2]), (uint64_t)v[2]),
		fmt_duration_ns(s[3], sizeof(s[3]), (uint64_t)v[3]),
		fmt_duration_ns(s[4], sizeof(s[4]), (uint64_t)v[4]));
	return 0;
}

int report_section_io(const struct report_context *ctx)
{
	int rc;

	if (ctx->json)
		json_begin_object(ctx->json, "io");
	else
		fprintf(ctx->out, "\nI/O\n");
	rc = devices(ctx);
	if (rc == 0)
		rc = threads(ctx);
	if (rc == 0)
		rc = time_split(ctx);
	if (ctx->json)
		json_end_object(ctx->json);
	return rc;
}
