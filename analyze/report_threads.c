/* report_threads.c - per-thread time shares (end of "Contention and
 * scheduling"): where each thread of the scope spent the window —
 * running, runnable, and blocked by wait class — from thread_states
 * clipped to the window, as shares of the time the scheduler events
 * cover. In JSON: "threads" and "timeline" (each top thread's state
 * spans, adjacent spans of one state merged, at most MAX_SPANS each). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "fmt.h"
#include "report_sections.h"

#define MAX_TIMELINE_THREADS 32
#define MAX_SPANS 4000

enum { T_RUNNING, T_RUNNABLE, T_IO, T_FUTEX, T_POLL, T_SLEEP, T_NET, T_OTHER, T_N };

static const char *const state_names[T_N] = { "running", "runnable", "io", "futex", "poll",
					      "sleep", "net", "other" };

/* Maps a thread_states row to a timeline state (SQL, used twice). */
#define STATE_CASE \
	"CASE WHEN state IN ('running', 'runnable') THEN state" \
	" WHEN wait_class = 'block_io' THEN 'io' WHEN wait_class IN ('futex', 'poll', 'sleep'," \
	" 'net') THEN wait_class ELSE 'other' END"

struct thread_row {
	uint32_t pid, tid;
	int64_t ns[T_N];
	int64_t observed;
};

static int state_index(const char *name)
{
	for (int i = 0; name && i < T_N; i++)
		if (strcmp(name, state_names[i]) == 0)
			return i;
	return T_OTHER;
}

/* The scope's threads, most observed time first. *n rows. */
static struct thread_row *load_threads(const struct report_context *ctx, size_t *n)
{
	char where[1024], sql[2048];
	struct thread_row *rows = NULL;
	size_t cap = 0;
	sqlite3_stmt *st;

	*n = 0;
	snprintf(sql, sizeof(sql), "SELECT pid, tid, " STATE_CASE ", sum(min(end_ts, :to) -"
		 " max(start_ts, :from)) FROM thread_states WHERE tid <> 0 AND %s"
		 " GROUP BY pid, tid, 3 ORDER BY pid, tid",
		 report_scope_sql(where, sizeof(where), "pid", "tid", "start_ts", "end_ts"));
	st = report_prepare(ctx, sql);
	if (!st)
		return NULL;
	while (sqlite3_step(st) == SQLITE_ROW) {
		uint32_t pid = (uint32_t)sqlite3_column_int64(st, 0);
		uint32_t tid = (uint32_t)sqlite3_column_int64(st, 1);
		int64_t ns = sqlite3_column_int64(st, 3);
		if (*n == 0 || rows[*n - 1].tid != tid || rows[*n - 1].pid != pid) {
			if (*n == cap) {
				size_t c = cap ? cap * 2 : 64;
				struct thread_row *grown = realloc(rows, c * sizeof(*grown));
				if (!grown)
					break;
				rows = grown;
				cap = c;
			}
			memset(&rows[*n], 0, sizeof(rows[0]));
			rows[*n].pid = pid;
			rows[(*n)++].tid = tid;
		}
		rows[*n - 1].ns[state_index((const char *)sqlite3_column_text(st, 2))] += ns;
		rows[*n - 1].observed += ns;
	}
	sqlite3_finalize(st);
	return rows;
}

static int by_observed(const void *pa, const void *pb)
{
	const struct thread_row *a = pa, *b = pb;

	if (a->observed != b->observed)
		return a->observed > b->observed ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

static const char *comm_of(const struct report_context *ctx, const struct thread_row *r)
{
	const char *name = names_thread(ctx->names, r->pid, r->tid);

	return name ? name : "?";
}

static void thread_json(const struct report_context *ctx, const struct thread_row *r)
{
	struct json_writer *w = ctx->json;

	json_begin_object(w, NULL);
	json_int(w, "pid", r->pid);
	json_int(w, "tid", r->tid);
	json_string(w, "comm", comm_of(ctx, r));
	json_int(w, "observed_ns", r->observed);
	json_int(w, "running_ns", r->ns[T_RUNNING]);
	json_int(w, "runnable_ns", r->ns[T_RUNNABLE]);
	json_int(w, "io_ns", r->ns[T_IO]);
	json_int(w, "futex_ns", r->ns[T_FUTEX]);
	json_int(w, "poll_ns", r->ns[T_POLL]);
	json_int(w, "sleep_ns", r->ns[T_SLEEP]);
	json_int(w, "net_ns", r->ns[T_NET]);
	json_int(w, "other_ns", r->ns[T_OTHER]);
	json_end_object(w);
}

static void spans_json(const struct report_context *ctx, const struct thread_row *r)
{
	char where[1024], sql[2048];
	struct json_writer *w = ctx->json;
	int64_t cur_start = 0, cur_end = 0;
	const char *cur = NULL;
	char cur_state[16] = "";
	int spans = 0, dropped = 0;
	sqlite3_stmt *st;

	snprintf(sql, sizeof(sql), "SELECT max(start_ts, :from), min(end_ts, :to), " STATE_CASE
		 " FROM thread_states WHERE tid = %u AND %s ORDER BY start_ts", r->tid,
		 report_scope_sql(where, sizeof(where), "pid", "tid", "start_ts", "end_ts"));
	st = report_prepare(ctx, sql);
	json_begin_object(w, NULL);
	json_int(w, "pid", r->pid);
	json_int(w, "tid", r->tid);
	json_string(w, "comm", comm_of(ctx, r));
	json_begin_array(w, "spans");
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		int64_t s = sqlite3_column_int64(st, 0), e = sqlite3_column_int64(st, 1);
		const char *state = (const char *)sqlite3_column_text(st, 2);
		if (cur && state && strcmp(state, cur_state) == 0 && s <= cur_end) {
			cur_end = e > cur_end ? e : cur_end;
			continue;
		}
		if (cur && spans < MAX_SPANS) {
			json_begin_array(w, NULL);
			json_int(w, NULL, cur_start);
			json_int(w, NULL, cur_end);
			json_string(w, NULL, cur_state);
			json_end_array(w);
			spans++;
		} else if (cur) {
			dropped++;
		}
		snprintf(cur_state, sizeof(cur_state), "%s", state ? state : "other");
		cur = cur_state;
		cur_start = s;
		cur_end = e;
	}
	if (cur && spans < MAX_SPANS) {
		json_begin_array(w, NULL);
		json_int(w, NULL, cur_start);
		json_int(w, NULL, cur_end);
		json_string(w, NULL, cur_state);
		json_end_array(w);
	} else if (cur) {
		dropped++;
	}
	sqlite3_finalize(st);
	json_end_array(w);
	json_int(w, "spans_dropped", dropped);
	json_end_object(w);
}

static void write_json(const struct report_context *ctx, struct thread_row *rows, size_t n)
{
	struct json_writer *w = ctx->json;
	const struct report_scope *s = ctx->scope;

	json_begin_array(w, "threads");
	for (size_t i = 0; i < n; i++)
		thread_json(ctx, &rows[i]);
	json_end_array(w);
	json_begin_object(w, "timeline");
	json_uint(w, "start_ns", s->from);
	json_uint(w, "end_ns", s->to > s->capture_end ? s->capture_end : s->to);
	json_begin_array(w, "threads");
	for (size_t i = 0; i < n && i < MAX_TIMELINE_THREADS; i++)
		spans_json(ctx, &rows[i]);
	json_end_array(w);
	json_end_object(w);
}

static void print_rows(const struct report_context *ctx, struct thread_row *rows, size_t n)
{
	char p[T_N][FMT_BUF], obs[FMT_BUF];

	fprintf(ctx->out, "  Time shares per thread (of the time its scheduler events cover):\n");
	fprintf(ctx->out, "  %7s %7s %-16s %9s %7s %7s %7s %7s %7s %7s %7s %7s\n", "pid", "tid",
		"comm", "observed", "running", "runq", "io", "futex", "poll", "sleep", "net",
		"other");
	for (size_t i = 0; i < n && i < (size_t)ctx->opts->top; i++) {
		for (int k = 0; k < T_N; k++)
			fmt_percent(p[k], sizeof(p[k]), (uint64_t)rows[i].ns[k],
				    (uint64_t)rows[i].observed);
		fprintf(ctx->out, "  %7u %7u %-16s %9s %7s %7s %7s %7s %7s %7s %7s %7s\n",
			rows[i].pid, rows[i].tid, comm_of(ctx, &rows[i]),
			fmt_duration_ns(obs, sizeof(obs), (uint64_t)rows[i].observed), p[0], p[1],
			p[2], p[3], p[4], p[5], p[6], p[7]);
	}
	if (n > (size_t)ctx->opts->top)
		fprintf(ctx->out, "  ... %zu more threads (--top)\n", n - (size_t)ctx->opts->top);
}

int report_section_threads(const struct report_context *ctx)
{
	size_t n = 0;
	struct thread_row *rows = load_threads(ctx, &n);

	if (n > 0)
		qsort(rows, n, sizeof(*rows), by_observed);
	if (ctx->json)
		write_json(ctx, rows, n);
	else if (n == 0)
		report_none(ctx, "thread states", "sched");
	else
		print_rows(ctx, rows, n);
	free(rows);
	return 0;
}
