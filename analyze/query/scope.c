/* scope.c - what a report looks at: the time window (--from,
 * --to) resolved against the capture's start and end, and the pid, tid
 * and comm filters, turned into one SQL condition every section uses so
 * all sections describe the same threads over the same time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "scope.h"
#include "util/parse.h"

static const char meta_sql[] = "SELECT value FROM meta WHERE key = ?1";
static const char stat_sql[] = "SELECT value FROM stats WHERE chunk = ?1 AND key = ?2";

int report_parse_time_bound(const char *text, struct time_bound *out)
{
	unsigned long long value;
	size_t digits = text ? strspn(text, "0123456789") : 0;

	memset(out, 0, sizeof(*out));
	if (digits > 0 && text[digits] == '\0') {
		if (parse_number(text, 0, INT64_MAX, &value) < 0)
			return -1;
		out->absolute = 1;
	} else if (parse_duration(text, 0, 366ull * 86400 * 1000000000ull, &value) < 0) {
		return -1;
	}
	out->given = 1;
	out->value = value;
	return 0;
}

int report_has_object(sqlite3 *db, const char *name)
{
	return db_lookup_int(db, "SELECT 1 FROM sqlite_master WHERE name = ?1", name, NULL,
			     0) == 1;
}

int report_syscall_windows(sqlite3 *db)
{
	return report_has_object(db, "syscall_windows") &&
	       db_query_int(db, "SELECT EXISTS (SELECT 1 FROM syscall_windows)", 0) > 0;
}

int report_sched_gap_runs(sqlite3 *db)
{
	return report_has_object(db, "sched_gap_runs") &&
	       db_query_int(db, "SELECT count(*) FROM (SELECT 1 FROM sched_tasks"
			    " WHERE edge = 'close' LIMIT 1)", 0) > 0;
}

uint64_t report_sched_gap_ns(sqlite3 *db, uint64_t from, uint64_t to)
{
	sqlite3_stmt *st;
	uint64_t gap = 0;

	if (to <= from || !report_has_object(db, "sched_gaps"))
		return 0;
	st = db_prepare(db, "SELECT CAST(total(min(end_ts, ?2) - max(start_ts, ?1)) AS INTEGER)"
			" FROM sched_gaps WHERE start_ts < ?2 AND end_ts > ?1");
	if (!st)
		return 0;
	sqlite3_bind_int64(st, 1, from > INT64_MAX ? INT64_MAX : (int64_t)from);
	sqlite3_bind_int64(st, 2, to > INT64_MAX ? INT64_MAX : (int64_t)to);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0)
		gap = (uint64_t)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return gap;
}

static uint64_t capture_start(sqlite3 *db)
{
	char *text = db_lookup_text(db, meta_sql, "record.start_ns", NULL);
	long long start = text ? atoll(text) : 0;

	free(text);
	if (start > 0)
		return (uint64_t)start;
	start = db_query_int(db, "SELECT min(t_start) FROM chunks WHERE t_start > 0", 0);
	return start > 0 ? (uint64_t)start : 0;
}

static uint64_t capture_end(sqlite3 *db, uint64_t start)
{
	int64_t end = db_lookup_int(db, stat_sql, "stats", "record.end_ns",
				    db_lookup_int(db, stat_sql, "end", "record.end_ns", -1));
	int64_t last = db_query_int(db, "SELECT max(t_end) FROM chunks", 0);

	if (end <= 0 || (uint64_t)end < start)
		end = last;
	if (end <= 0 || (uint64_t)end < start)
		return start;
	return (uint64_t)end;
}

static uint64_t bound_to_ns(const struct time_bound *b, uint64_t start)
{
	return b->absolute ? b->value : start + b->value;
}

int report_scope_resolve(sqlite3 *db, const struct report_options *opts,
			 struct report_scope *scope)
{
	memset(scope, 0, sizeof(*scope));
	scope->opts = opts;
	scope->capture_start = capture_start(db);
	scope->capture_end = capture_end(db, scope->capture_start);
	scope->from = scope->capture_start;
	scope->to = scope->capture_end + 1;       /* events at the end are in */
	scope->filtered = opts->has_pid || opts->has_tid || opts->comm != NULL;
	if (opts->from.given)
		scope->from = bound_to_ns(&opts->from, scope->capture_start);
	if (opts->to.given)
		scope->to = bound_to_ns(&opts->to, scope->capture_start);
	scope->windowed = opts->from.given || opts->to.given;
	if (scope->windowed && (scope->from >= scope->to || scope->from > scope->capture_end ||
				scope->to <= scope->capture_start)) {
		fprintf(stderr, "perfcap-analyze: --from/--to: window [%llu, %llu) ns is empty"
			" or outside the capture [%llu, %llu] (offsets such as 2s count from"
			" its start)\n", (unsigned long long)scope->from,
			(unsigned long long)scope->to, (unsigned long long)scope->capture_start,
			(unsigned long long)scope->capture_end);
		return -1;
	}
	return 0;
}

const char *report_requests_from(const struct report_scope *scope, const char *view)
{
	return scope->windowed ? view : "requests NOT INDEXED";
}

const char *report_scope_sql(char *buf, size_t len, const char *pid_col,
			     const char *tid_col, const char *start_col, const char *end_col)
{
	char time_cond[256];

	if (strcmp(start_col, end_col) == 0)
		snprintf(time_cond, sizeof(time_cond), "%s >= :from AND %s < :to", start_col,
			 start_col);
	else
		snprintf(time_cond, sizeof(time_cond), "%s < :to AND %s > :from", start_col,
			 end_col);
	snprintf(buf, len,
		 "(%s) AND (:pid IS NULL OR %s = :pid) AND (:tid IS NULL OR %s = :tid)"
		 " AND (:comm IS NULL OR %s IN (SELECT pid FROM processes WHERE comm = :comm)"
		 " OR %s IN (SELECT tid FROM threads WHERE comm = :comm))",
		 time_cond, pid_col, tid_col, pid_col, tid_col);
	return buf;
}

static void bind_named_int(sqlite3_stmt *st, const char *name, int has, int64_t value)
{
	int idx = sqlite3_bind_parameter_index(st, name);

	if (idx <= 0)
		return;
	if (has)
		sqlite3_bind_int64(st, idx, value);
	else
		sqlite3_bind_null(st, idx);
}

void report_scope_bind(sqlite3_stmt *st, const struct report_scope *scope)
{
	const struct report_options *o = scope->opts;
	int comm = sqlite3_bind_parameter_index(st, ":comm");

	bind_named_int(st, ":from", 1, (int64_t)scope->from);
	bind_named_int(st, ":to", 1, (int64_t)(scope->to > INT64_MAX ? INT64_MAX : scope->to));
	bind_named_int(st, ":capture_start", 1, (int64_t)scope->capture_start);
	bind_named_int(st, ":capture_end", 1, (int64_t)scope->capture_end);
	bind_named_int(st, ":pid", o->has_pid, o->pid);
	bind_named_int(st, ":tid", o->has_tid, o->tid);
	if (comm > 0)
		db_bind_text(st, comm, o->comm);
}
