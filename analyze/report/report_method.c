/* report_method.c - "Method and scope": what was recorded and what the
 * report looks at — host, command, event sources, the recorder's and the
 * report's filters, sampling, the time window and its duration, samples.
 * From the meta and stats tables. In JSON: "scope". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "query/host_cpu.h"
#include "util/fmt.h"
#include "report_sections.h"

static const char stat_sql[] = "SELECT value FROM stats WHERE chunk = ?1 AND key = ?2";

static uint64_t window_ns(const struct report_context *ctx)
{
	const struct report_scope *s = ctx->scope;
	uint64_t to = s->to > s->capture_end ? s->capture_end : s->to;
	int64_t recorded = db_lookup_int(ctx->db, stat_sql, "stats", "record.duration_ns", -1);

	if (!s->windowed && recorded > 0)
		return (uint64_t)recorded;
	return to > s->from ? to - s->from : 0;
}

static void print_meta(const struct report_context *ctx, const char *label, const char *key,
		       const char *fallback_key)
{
	char *value = report_meta(ctx, key);

	if (!value && fallback_key)
		value = report_meta(ctx, fallback_key);
	fprintf(ctx->out, "  %-11s %s\n", label, value ? value : "-");
	free(value);
}

static void print_filters(const struct report_context *ctx)
{
	const struct report_options *o = ctx->opts;
	char *pids = report_meta(ctx, "filter.pids"), *comm = report_meta(ctx, "filter.comm");
	char *cgroup = report_meta(ctx, "filter.cgroup");

	fprintf(ctx->out, "  %-11s recorder: pids %s, comm %s, cgroup %s\n", "filters",
		pids ? pids : "-", comm ? comm : "-", cgroup ? cgroup : "-");
	fprintf(ctx->out, "  %-11s report: ", "");
	if (!ctx->scope->filtered)
		fprintf(ctx->out, "none");
	if (o->has_pid)
		fprintf(ctx->out, "--pid %u ", o->pid);
	if (o->has_tid)
		fprintf(ctx->out, "--tid %u ", o->tid);
	if (o->comm)
		fprintf(ctx->out, "--comm %s", o->comm);
	fprintf(ctx->out, "\n");
	free(pids);
	free(comm);
	free(cgroup);
}

static void print_sampling(const struct report_context *ctx)
{
	char *one_in = report_meta(ctx, "sampling.events.one_in");
	char *cap = report_meta(ctx, "sampling.events.rate_cap");
	char *event = report_meta(ctx, "sampling.cpu.event");

	if (ctx->freq_hz > 0)
		fprintf(ctx->out, "  %-11s %g Hz per CPU\n", "frequency", ctx->freq_hz);
	else
		fprintf(ctx->out, "  %-11s unknown (CPU time not estimated)\n", "frequency");
	char *req_rate = report_meta(ctx, "req.windows.budget");

	fprintf(ctx->out, "  %-11s CPU %s; events 1 in %s; rate cap %s per s per CPU",
		"sampling", event ? event : "-", one_in ? one_in : "1",
		cap && strcmp(cap, "0") != 0 ? cap : "none");
	if (req_rate)   /* the req source's windows (Data quality: how many) */
		fprintf(ctx->out, "; requests in time windows above %s per s", req_rate);
	fprintf(ctx->out, "\n");
	free(one_in);
	free(cap);
	free(event);
	free(req_rate);
}

/* The sched source's windows (format 1.12): how much of the report's
 * window it followed. */
static void print_sched_windows(const struct report_context *ctx)
{
	const struct report_scope *s = ctx->scope;
	char *budget = report_meta(ctx, "sched.windows.budget");
	uint64_t to = s->to > s->capture_end ? s->capture_end : s->to;
	uint64_t gap = budget ? report_sched_gap_ns(ctx->db, s->from, to) : 0;

	if (gap && gap <= to - s->from)
		fprintf(ctx->out, "  %-11s in time windows above %s context switches per s: %.1f%%"
			" of the window followed; thread states, waits and wakeups are from the"
			" windows, their times scaled to the whole (time shares, waits, diagnosis)%s\n",
			"sched", budget, 100.0 * (double)(to - s->from - gap) / (double)(to - s->from),
			report_sched_gap_runs(ctx->db) ? ", but for each thread's running time in the"
			" gaps: exact, from the kernel's run-time counters (sched_gap_runs)" : "");
	free(budget);
}

/* The syscall program's windows (format 1.14): how much of the report's
 * window its calls were paired in (the periods followed whole, and the
 * windows of the others). */
static void print_syscall_windows(const struct report_context *ctx)
{
	const struct report_scope *s = ctx->scope;
	char *budget = report_meta(ctx, "syscall.windows.budget");
	uint64_t to = s->to > s->capture_end ? s->capture_end : s->to;
	sqlite3_stmt *st = NULL;
	double periods = 0, opens = 0, span = to > s->from ? (double)(to - s->from) : 0;

	if (budget && span > 0 && report_syscall_windows(ctx->db) &&
	    (st = db_prepare(ctx->db, "SELECT total(max(0, min(start_ts + period_ns, ?2) -"
			     " max(start_ts, ?1))), total(max(0, min(start_ts + open_ns, ?2) -"
			     " max(start_ts, ?1))) FROM syscall_windows"
			     " WHERE start_ts < ?2 AND start_ts + period_ns > ?1"))) {
		sqlite3_bind_int64(st, 1, (int64_t)s->from);
		sqlite3_bind_int64(st, 2, (int64_t)to);
		if (sqlite3_step(st) == SQLITE_ROW) {
			periods = sqlite3_column_double(st, 0);
			opens = sqlite3_column_double(st, 1);
		}
		sqlite3_finalize(st);
		if (periods > 0)
			fprintf(ctx->out, "  %-11s in time windows above %s calls per s: %.1f%% of the"
				" window followed; counts and times of calls are weighted to the whole,"
				" percentiles are of the calls recorded (Data quality)\n", "syscalls",
				budget, 100.0 * (span - periods + opens) / span);
	}
	free(budget);
}

static void print_window(const struct report_context *ctx)
{
	const struct report_scope *s = ctx->scope;
	uint64_t to = s->to > s->capture_end ? s->capture_end : s->to;
	char a[FMT_BUF], b[FMT_BUF];

	fprintf(ctx->out, "  %-11s +%s to +%s of the capture%s\n", "window",
		fmt_duration_ns(a, sizeof(a), s->from - s->capture_start),
		fmt_duration_ns(b, sizeof(b), to > s->capture_start ? to - s->capture_start : 0),
		s->windowed ? "" : " (all of it)");
	fprintf(ctx->out, "  %-11s %s\n", "duration", fmt_duration_ns(a, sizeof(a),
								     window_ns(ctx)));
}

static void print_samples(const struct report_context *ctx)
{
	int64_t all = db_query_int(ctx->db, "SELECT value FROM quality WHERE source = 'cpu'"
				   " AND key = 'samples'", 0);
	char a[FMT_BUF], b[FMT_BUF];

	fprintf(ctx->out, "  %-11s %s", "samples", fmt_count(a, sizeof(a), ctx->samples));
	if ((uint64_t)all != ctx->samples)
		fprintf(ctx->out, " selected of %s", fmt_count(b, sizeof(b), (uint64_t)all));
	fprintf(ctx->out, "\n");
}

/* The host's CPU over the whole recording (not the window): how busy, and
 * how much a hypervisor took for other guests (record/host_cpu.h). */
static void print_host_cpu(const struct report_context *ctx)
{
	struct host_cpu_time t;
	double all;

	host_cpu_time_read(ctx->db, &t);
	all = t.busy_ns + t.idle_ns + t.steal_ns;
	if (!t.known || all <= 0)
		return;
	fprintf(ctx->out, "  %-11s busy %.0f%%, idle %.0f%%, stolen by the hypervisor %.1f%%"
		" (%.1f%% of the time it had work)\n", "host CPU", 100 * t.busy_ns / all,
		100 * t.idle_ns / all, 100 * t.steal_ns / all, 100 * host_cpu_stolen_share(&t));
}

static void json_host_cpu(const struct report_context *ctx)
{
	struct host_cpu_time t;

	host_cpu_time_read(ctx->db, &t);
	if (!t.known) {
		json_null(ctx->json, "host_cpu");
		return;
	}
	json_begin_object(ctx->json, "host_cpu");
	json_double(ctx->json, "busy_ns", t.busy_ns);
	json_double(ctx->json, "idle_ns", t.idle_ns);
	json_double(ctx->json, "steal_ns", t.steal_ns);
	json_double(ctx->json, "stolen_share", host_cpu_stolen_share(&t));
	json_end_object(ctx->json);
}

static void json_meta(const struct report_context *ctx, const char *name, const char *key)
{
	char *value = report_meta(ctx, key);

	json_string(ctx->json, name, value);
	free(value);
}

static void write_json(const struct report_context *ctx)
{
	struct json_writer *w = ctx->json;
	const struct report_options *o = ctx->opts;
	const struct report_scope *s = ctx->scope;
	char *list = ctx->sources ? strdup(ctx->sources) : NULL;

	json_begin_object(w, "scope");
	json_meta(ctx, "host", "host.hostname");
	json_meta(ctx, "kernel", "host.kernel.release");
	json_meta(ctx, "command", "target.command");
	json_begin_array(w, "sources");
	for (char *save = NULL, *t = list ? strtok_r(list, ",", &save) : NULL; t;
	     t = strtok_r(NULL, ",", &save))
		json_string(w, NULL, t);
	json_end_array(w);
	json_begin_object(w, "filters");
	if (o->has_pid)
		json_int(w, "pid", o->pid);
	else
		json_null(w, "pid");
	if (o->has_tid)
		json_int(w, "tid", o->tid);
	else
		json_null(w, "tid");
	json_string(w, "comm", o->comm);
	json_meta(ctx, "recorder_pids", "filter.pids");
	json_meta(ctx, "recorder_comm", "filter.comm");
	json_meta(ctx, "recorder_cgroup", "filter.cgroup");
	json_end_object(w);
	json_begin_object(w, "sampling");
	json_meta(ctx, "cpu_event", "sampling.cpu.event");
	json_double(w, "cpu_freq_hz", ctx->freq_hz);
	json_meta(ctx, "events_one_in", "sampling.events.one_in");
	json_meta(ctx, "rate_cap", "sampling.events.rate_cap");
	json_meta(ctx, "offcpu_min_ns", "sched.offcpu_min_ns");
	json_meta(ctx, "syscall_min_ns", "syscall.min_ns");
	json_meta(ctx, "req_rate", "req.windows.budget");
	json_meta(ctx, "syscall_rate", "syscall.windows.budget");
	json_end_object(w);
	json_uint(w, "capture_start_ns", s->capture_start);
	json_uint(w, "capture_end_ns", s->capture_end);
	json_uint(w, "from_ns", s->from);
	json_uint(w, "to_ns", s->to > s->capture_end ? s->capture_end : s->to);
	json_uint(w, "duration_ns", window_ns(ctx));
	json_uint(w, "samples", ctx->samples);
	json_host_cpu(ctx);
	json_end_object(w);
	free(list);
}

int report_section_method(const struct report_context *ctx)
{
	if (ctx->json) {
		write_json(ctx);
		return 0;
	}
	fprintf(ctx->out, "\nMethod and scope\n");
	print_meta(ctx, "host", "host.hostname", NULL);
	print_meta(ctx, "kernel", "host.kernel.release", NULL);
	print_meta(ctx, "command", "target.command", "record.cmdline");
	print_meta(ctx, "sources", "sources", NULL);
	print_filters(ctx);
	print_sampling(ctx);
	print_sched_windows(ctx);
	print_syscall_windows(ctx);
	print_window(ctx);
	print_samples(ctx);
	print_host_cpu(ctx);
	return 0;
}
