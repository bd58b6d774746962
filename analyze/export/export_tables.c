/* export_tables.c - export --format csv / ndjson: one file per table in
 * a directory (samples, stacks, thread_states, offcpu, syscalls,
 * requests, block_io, locks, probes), every row led by run_id and host so files
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
	const char *requires;    /* a table databases imported before it lack: skipped then */
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
	{ "probes", "SELECT * FROM (SELECT h.probe_id, p.kind, p.name, h.pid, h.tid,"
	  " h.ts AS start_ts, h.ts + h.duration AS end_ts, h.duration, h.arg0, h.arg1, h.arg2,"
	  " h.ustack_id FROM probe_hits h LEFT JOIN probes p ON p.probe_id = h.probe_id)",
	  "pid", "tid", "start_ts", "end_ts", NULL, "probe_hits" },
};

/* The writers hold the stream's lock for the whole table (flockfile in
 * write_rows) and use the unlocked stdio calls: a lock per character
 * was most of the cost of a large export. */
static void csv_field(FILE *fp, const char *text)
{
	if (!strpbrk(text, ",\"\r\n")) {
		fputs_unlocked(text, fp);
		return;
	}
	fputc_unlocked('"', fp);
	for (; *text; text++) {
		if (*text == '"')
			fputc_unlocked('"', fp);
		fputc_unlocked(*text, fp);
	}
	fputc_unlocked('"', fp);
}

#define MAX_COLUMNS 64

struct table_out {
	struct export_ctx *cx;
	FILE *fp;
	int ndjson;
	char *prefix;             /* the run_id and host fields, written once per row */
	char *keys[MAX_COLUMNS];  /* NDJSON: ',"column":' per column */
};

/* Text that json_write_string would write for s, malloc'd (NULL on OOM). */
static char *json_quoted(const char *s, const char *before, const char *after)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);

	if (!mem)
		return NULL;
	fputs(before, mem);
	json_write_string(mem, s);
	fputs(after, mem);
	if (fclose(mem) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The per-row constant text: CSV "run_id,host" fields, or NDJSON
 * '{"run_id":..,"host":..' and each column's key. 0 or -1. */
static int prepare_row_text(struct table_out *t, sqlite3_stmt *st)
{
	char *run, *host;

	if (sqlite3_column_count(st) > MAX_COLUMNS)
		return -1;
	if (t->ndjson) {
		run = json_quoted(t->cx->run_id, "{\"run_id\":", "");
		host = json_quoted(t->cx->host, ",\"host\":", "");
		for (int i = 0; i < sqlite3_column_count(st); i++)
			if (!(t->keys[i] = json_quoted(sqlite3_column_name(st, i), ",", ":")))
				return -1;
	} else {
		char *b1 = NULL, *b2 = NULL;
		size_t l1 = 0, l2 = 0;
		FILE *m1 = open_memstream(&b1, &l1), *m2 = open_memstream(&b2, &l2);

		if (m1) {
			csv_field(m1, t->cx->run_id);
			fclose(m1);
		}
		if (m2) {
			fputc(',', m2);
			csv_field(m2, t->cx->host);
			fclose(m2);
		}
		run = b1;
		host = b2;
	}
	if (run && host && asprintf(&t->prefix, "%s%s", run, host) < 0)
		t->prefix = NULL;
	free(run);
	free(host);
	return t->prefix ? 0 : -1;
}

static void free_row_text(struct table_out *t)
{
	free(t->prefix);
	for (int i = 0; i < MAX_COLUMNS; i++)
		free(t->keys[i]);
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
	fputs_unlocked(t->prefix, t->fp);
	for (int i = 0; i < sqlite3_column_count(st); i++) {
		const unsigned char *v = sqlite3_column_text(st, i);

		fputc_unlocked(',', t->fp);
		if (v)
			csv_field(t->fp, (const char *)v);
	}
	fputc_unlocked('\n', t->fp);
}

/* A decimal integer, without printf's parsing per value. */
static void put_int(FILE *fp, int64_t v)
{
	char buf[24], *p = buf + sizeof(buf);
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*--p = '-';
	fwrite_unlocked(p, 1, (size_t)(buf + sizeof(buf) - p), fp);
}

static void ndjson_value(FILE *fp, sqlite3_stmt *st, int i)
{
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_NULL: fputs_unlocked("null", fp); break;
	case SQLITE_INTEGER: put_int(fp, sqlite3_column_int64(st, i)); break;
	case SQLITE_FLOAT: fprintf(fp, "%.17g", sqlite3_column_double(st, i)); break;
	default: json_write_string(fp, (const char *)sqlite3_column_text(st, i)); break;
	}
}

static void ndjson_row(struct table_out *t, sqlite3_stmt *st)
{
	fputs_unlocked(t->prefix, t->fp);
	for (int i = 0; i < sqlite3_column_count(st); i++) {
		fputs_unlocked(t->keys[i], t->fp);
		ndjson_value(t->fp, st, i);
	}
	fputs_unlocked("}\n", t->fp);
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
	if (prepare_row_text(t, st) < 0) {
		sqlite3_finalize(st);
		free_row_text(t);
		fprintf(stderr, "perfcap-analyze: %s: out of memory\n", def->name);
		return -1;
	}
	if (!t->ndjson)
		csv_header(t, st);
	flockfile(t->fp);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		(t->ndjson ? ndjson_row : csv_row)(t, st);
	funlockfile(t->fp);
	if (rc != SQLITE_DONE)
		db_report_error(t->cx->db, def->name);
	sqlite3_finalize(st);
	free_row_text(t);
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
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		if (tables[i].requires &&
		    db_lookup_int(cx->db, "SELECT count(*) FROM sqlite_master WHERE name = ?1",
				  tables[i].requires, NULL, 0) == 0)
			continue;
		if (write_table(cx, dir, ndjson, &tables[i]) < 0)
			return -1;
	}
	return 0;
}
