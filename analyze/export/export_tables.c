/* export_tables.c - export --format csv / ndjson: one file per table in
 * a directory (samples, stacks, thread_states, offcpu, syscalls,
 * requests, block_io, locks), every row led by run_id and host so files
 * of many runs and hosts load into one table (ClickHouse, DuckDB, Spark;
 * docs/export.md gives the CREATE TABLE statements). Each table is one
 * SELECT streamed row by row: CSV with a header (RFC 4180 quoting, NULL
 * as an empty field) or NDJSON (one JSON object a line, NULL as null). */
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "export_internal.h"
#include "util/json_writer.h"
#include "util/messages.h"

struct table_def {
	const char *name;
	const char *select;      /* columns and FROM, without WHERE */
	const char *pid, *tid;   /* scope columns */
	const char *start, *end; /* time columns; NULL: not scoped by time */
	const char *order;       /* ORDER BY, or NULL */
};

static const struct table_def tables[] = {
	{ "samples", "SELECT ts, pid, tid, cpu, ustack_id, kstack_id FROM samples",
	  "pid", "tid", "ts", "ts", NULL },
	{ "stacks", "SELECT sf.stack_id, s.kind, s.pid, sf.position, f.frame_id,"
	  " f.name AS function, f.module, f.module_offset, f.address, f.file, f.line,"
	  " f.inlined FROM stack_frames sf LEFT JOIN stacks s ON s.stack_id = sf.stack_id"
	  " JOIN frames f ON f.frame_id = sf.frame_id",
	  NULL, NULL, NULL, NULL, "sf.stack_id, sf.position" },
	{ "thread_states", "SELECT tid, pid, state, start_ts, end_ts, duration, cpu, reason,"
	  " waker_tid, waker_pid, wait_class, syscall_nr, syscall_id, partial"
	  " FROM thread_states", "pid", "tid", "start_ts", "end_ts", NULL },
	{ "offcpu", "SELECT offcpu_id, pid, tid, start_ts, end_ts, duration, state,"
	  " wait_class, class_source, syscall, syscall_id, waker_tid, ustack_id, kstack_id"
	  " FROM offcpu_intervals", "pid", "tid", "start_ts", "end_ts", NULL },
	{ "syscalls", "SELECT syscall_id, pid, tid, name, nr, start_ts, end_ts, duration,"
	  " ret, fd, io, bytes_requested, bytes_transferred, errno, ustack_id"
	  " FROM syscall_intervals", "pid", "tid", "start_ts", "end_ts", NULL },
	{ "requests", "SELECT pid, fd, conn, request, cookie, origin, conn_ts, tids,"
	  " pickup_tid, ready_ts, ready_source, start_ts, first_write_ts, end_ts, queue_ns,"
	  " service_ns, sojourn_ns, bytes_in, bytes_out, reads, writes FROM requests",
	  "pid", "pickup_tid", "start_ts", "end_ts", NULL },
	{ "block_io", "SELECT ts - service_ns - queue_ns AS insert_ts, ts, pid, tid,"
	  " dev_name AS dev, op_name AS op, sector, bytes, queue_ns, service_ns, error"
	  " FROM block_io", "pid", "tid", "ts", "ts", NULL },
	{ "locks", "SELECT * FROM (SELECT 'futex' AS kind, pid, tid, start_ts, end_ts,"
	  " duration, addr, ret, ustack_id AS stack_id FROM futex_calls WHERE kind = 'wait'"
	  " UNION ALL SELECT 'user_mutex', pid, tid, ts - duration, ts, duration, addr, NULL,"
	  " ustack_id FROM user_mutexes UNION ALL SELECT 'kernel_lock', pid, tid, ts - duration,"
	  " ts, duration, lock_addr, ret, kstack_id FROM kernel_locks)",
	  "pid", "tid", "start_ts", "end_ts", NULL },
};

struct table_out {
	struct export_ctx *cx;
	FILE *fp;
	int ndjson;
};

static void csv_field(FILE *fp, const char *text)
{
	if (!strpbrk(text, ",\"\r\n")) {
		fputs(text, fp);
		return;
	}
	fputc('"', fp);
	for (; *text; text++) {
		if (*text == '"')
			fputc('"', fp);
		fputc(*text, fp);
	}
	fputc('"', fp);
}

static void csv_header(struct table_out *t, sqlite3_stmt *st)
{
	fputs("run_id,host", t->fp);
	for (int i = 0; i < sqlite3_column_count(st); i++) {
		fputc(',', t->fp);
		csv_field(t->fp, sqlite3_column_name(st, i));
	}
	fputc('\n', t->fp);
}

static void csv_row(struct table_out *t, sqlite3_stmt *st)
{
	csv_field(t->fp, t->cx->run_id);
	fputc(',', t->fp);
	csv_field(t->fp, t->cx->host);
	for (int i = 0; i < sqlite3_column_count(st); i++) {
		const unsigned char *v = sqlite3_column_text(st, i);

		fputc(',', t->fp);
		if (v)
			csv_field(t->fp, (const char *)v);
	}
	fputc('\n', t->fp);
}

static void ndjson_value(FILE *fp, sqlite3_stmt *st, int i)
{
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_NULL: fputs("null", fp); break;
	case SQLITE_INTEGER: fprintf(fp, "%lld", sqlite3_column_int64(st, i)); break;
	case SQLITE_FLOAT: fprintf(fp, "%.17g", sqlite3_column_double(st, i)); break;
	default: json_write_string(fp, (const char *)sqlite3_column_text(st, i)); break;
	}
}

static void ndjson_row(struct table_out *t, sqlite3_stmt *st)
{
	fputs("{\"run_id\":", t->fp);
	json_write_string(t->fp, t->cx->run_id);
	fputs(",\"host\":", t->fp);
	json_write_string(t->fp, t->cx->host);
	for (int i = 0; i < sqlite3_column_count(st); i++) {
		fputc(',', t->fp);
		json_write_string(t->fp, sqlite3_column_name(st, i));
		fputc(':', t->fp);
		ndjson_value(t->fp, st, i);
	}
	fputs("}\n", t->fp);
}

static int write_rows(struct table_out *t, const struct table_def *def)
{
	char cond[1024], sql[4096];
	sqlite3_stmt *st;
	int rc;

	if (def->pid)
		export_scope_sql(t->cx, cond, sizeof(cond), def->pid, def->tid, def->start,
				 def->end);
	snprintf(sql, sizeof(sql), "%s%s%s%s%s", def->select, def->pid ? " WHERE " : "",
		 def->pid ? cond : "", def->order ? " ORDER BY " : "",
		 def->order ? def->order : "");
	st = export_prepare(t->cx, sql);
	if (!st)
		return -1;
	if (!t->ndjson)
		csv_header(t, st);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		(t->ndjson ? ndjson_row : csv_row)(t, st);
	if (rc != SQLITE_DONE)
		db_report_error(t->cx->db, def->name);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

static int write_table(struct export_ctx *cx, const char *dir, int ndjson,
		       const struct table_def *def)
{
	struct table_out t = { .cx = cx, .ndjson = ndjson };
	struct export_out out;
	char path[4096];
	int rc;

	snprintf(path, sizeof(path), "%s/%s.%s", dir, def->name, ndjson ? "ndjson" : "csv");
	if (export_out_open(&out, path) != 0)
		return -1;
	t.fp = out.fp;
	rc = write_rows(&t, def);
	return export_out_commit(&out, rc == 0) == 0 ? 0 : -1;
}

int export_tables(struct export_ctx *cx, const char *dir, int ndjson)
{
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		if (write_table(cx, dir, ndjson, &tables[i]) < 0)
			return -1;
	return 0;
}
