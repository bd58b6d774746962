/* export_openmetrics.c - export --format openmetrics (and prometheus):
 * the per-window metrics with timestamps, so promtool tsdb
 * create-blocks-from openmetrics backfills a recording and dashboards see
 * it like a scrape. Named by Prometheus/OpenMetrics conventions: base
 * units in the name (_seconds, _bytes), counters ending in _total,
 * "# UNIT" and "# EOF" in OpenMetrics. Counters are cumulative over the
 * windows of thread_time_shares (a point at each window's end, wall
 * clock); histograms of request, syscall and block I/O latency are
 * cumulative per window too. --format prometheus writes the same points
 * in the Prometheus text format (ms timestamps, no UNIT/EOF) for
 * promtool check metrics and scrapers' tooling. Every family is one SQL
 * query ordered by series then time, streamed. */
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "export_internal.h"
#include "query/names.h"

struct om {
	struct export_ctx *cx;
	FILE *out;
	int prom;                 /* Prometheus text format instead of OpenMetrics */
	struct names names;
	char common[640];         /* host="...",run_id="..." */
	int req_windows;          /* requests followed in windows (request_windows) */
	int syscall_windows;      /* calls paired in windows (syscall_windows) */
};

static void escape_label(char *buf, size_t len, const char *text)
{
	size_t n = 0;

	for (; text && *text && n + 3 < len; text++) {
		if (*text == '\\' || *text == '"' || *text == '\n') {
			buf[n++] = '\\';
			buf[n++] = *text == '\n' ? 'n' : *text;
		} else {
			buf[n++] = *text;
		}
	}
	buf[n] = '\0';
}

/* The family's header lines. type: counter, gauge, histogram. */
static void family(struct om *m, const char *name, const char *type, const char *unit,
		   const char *help)
{
	const char *suffix = m->prom && strcmp(type, "counter") == 0 ? "_total" : "";

	fprintf(m->out, "# TYPE %s%s %s\n", name, suffix, type);
	if (!m->prom && unit)
		fprintf(m->out, "# UNIT %s %s\n", name, unit);
	fprintf(m->out, "# HELP %s%s %s\n", name, suffix, help);
}

static void point(struct om *m, const char *name, const char *suffix, const char *labels,
		  double value, uint64_t mono_ns)
{
	uint64_t wall = export_wall_ns(m->cx, mono_ns);

	fprintf(m->out, "%s%s{%s%s%s} %.15g ", name, suffix, labels, labels[0] ? "," : "",
		m->common, value);
	if (m->prom)
		fprintf(m->out, "%llu\n", (unsigned long long)(wall / 1000000));
	else
		fprintf(m->out, "%llu.%03llu\n", (unsigned long long)(wall / 1000000000),
			(unsigned long long)(wall / 1000000 % 1000));
}

static void thread_labels(struct om *m, uint32_t pid, uint32_t tid, char *buf, size_t len)
{
	char comm[128];

	escape_label(comm, sizeof(comm), names_thread(&m->names, pid, tid));
	snprintf(buf, len, "pid=\"%u\",tid=\"%u\",comm=\"%s\"", pid, tid, comm);
}

/* One counter series set from thread_time_shares. */
struct share_metric {
	const char *family;
	const char *help;
	const char *unit;         /* "seconds", "bytes" or NULL (a count) */
	const char *column;
	const char *label;        /* extra label name=value, or NULL */
};

static const struct share_metric share_metrics[] = {
	{ "perfcap_thread_state_seconds", "Time threads spent per scheduler state.",
	  "seconds", "running_ns", "state=\"running\"" },
	{ "perfcap_thread_state_seconds", NULL, "seconds", "runnable_ns", "state=\"runnable\"" },
	{ "perfcap_thread_state_seconds", NULL, "seconds", "io_wait_ns", "state=\"io_wait\"" },
	{ "perfcap_thread_state_seconds", NULL, "seconds", "sleep_ns", "state=\"sleep\"" },
	{ "perfcap_thread_state_seconds", NULL, "seconds", "other_wait_ns", "state=\"other_wait\"" },
	{ "perfcap_thread_blocked_seconds", "Blocked time inside futex or poll calls.",
	  "seconds", "futex_wait_ns", "call=\"futex\"" },
	{ "perfcap_thread_blocked_seconds", NULL, "seconds", "poll_wait_ns", "call=\"poll\"" },
	{ "perfcap_thread_futex_waits", "Futex calls that wait.", NULL, "futex_waits", NULL },
	{ "perfcap_thread_futex_wakes", "Futex calls that wake.", NULL, "futex_wakes", NULL },
	{ "perfcap_thread_syscalls", "Recorded system calls.", NULL, "syscalls", NULL },
	{ "perfcap_thread_syscall_seconds", "Time inside recorded system calls.", "seconds",
	  "syscall_ns", NULL },
	{ "perfcap_thread_io_seconds", "Time in reads and writes of files and sockets.",
	  "seconds", "vfs_read_ns", "kind=\"vfs_read\"" },
	{ "perfcap_thread_io_seconds", NULL, "seconds", "vfs_write_ns", "kind=\"vfs_write\"" },
	{ "perfcap_thread_io_seconds", NULL, "seconds", "net_recv_ns", "kind=\"net_recv\"" },
	{ "perfcap_thread_io_seconds", NULL, "seconds", "net_send_ns", "kind=\"net_send\"" },
	{ "perfcap_thread_block_io_requests", "Block I/O requests submitted.", NULL,
	  "block_requests", NULL },
	{ "perfcap_thread_block_io_bytes", "Bytes of block I/O requests submitted.", "bytes",
	  "block_bytes", NULL },
	{ "perfcap_thread_block_io_queue_seconds", "Queue time of submitted block requests.",
	  "seconds", "block_queue_ns", NULL },
	{ "perfcap_thread_block_io_service_seconds", "Service time of submitted block requests.",
	  "seconds", "block_service_ns", NULL },
	{ "perfcap_thread_cpu_samples", "CPU samples taken.", NULL, "cpu_samples", NULL },
};

static int share_series(struct om *m, const struct share_metric *sm)
{
	char cond[1024], sql[2048], labels[512], tl[400];
	sqlite3_stmt *st;
	int rc;
	double scale = sm->unit && strcmp(sm->unit, "seconds") == 0 ? 1e-9 : 1;

	snprintf(sql, sizeof(sql), "SELECT pid, tid, window_end, sum(%s) OVER (PARTITION BY"
		 " pid, tid ORDER BY window_start) FROM thread_time_shares WHERE %s"
		 " ORDER BY pid, tid, window_start", sm->column,
		 export_scope_sql(m->cx, cond, sizeof(cond), "pid", "tid", "window_start",
				  "window_end"));
	st = export_prepare(m->cx, sql);
	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		thread_labels(m, (uint32_t)sqlite3_column_int64(st, 0),
			      (uint32_t)sqlite3_column_int64(st, 1), tl, sizeof(tl));
		snprintf(labels, sizeof(labels), "%s%s%s", tl, sm->label ? "," : "",
			 sm->label ? sm->label : "");
		point(m, sm->family, "_total", labels,
		      (double)sqlite3_column_int64(st, 3) * scale,
		      (uint64_t)sqlite3_column_int64(st, 2));
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

static int share_metrics_write(struct om *m)
{
	if (!report_has_object(m->cx->db, "thread_time_shares"))
		return 0;
	for (size_t i = 0; i < sizeof(share_metrics) / sizeof(share_metrics[0]); i++) {
		const struct share_metric *sm = &share_metrics[i];

		if (sm->help)
			family(m, sm->family, "counter", sm->unit, sm->help);
		if (share_series(m, sm) < 0)
			return -1;
	}
	return 0;
}

/* Latency histograms: bucket bounds in ns. */
static const uint64_t bounds_ns[] = {
	10000, 100000, 1000000, 5000000, 10000000, 25000000, 50000000, 100000000,
	250000000, 500000000, 1000000000, 2500000000ull, 10000000000ull,
};
#define NBOUNDS (sizeof(bounds_ns) / sizeof(bounds_ns[0]))

struct histogram_def {
	const char *family;
	const char *help;
	const char *from;         /* FROM ... (a table or view) */
	const char *series;       /* the two series key columns: SQL expressions */
	const char *label0;       /* label names of the key columns (label1 NULL: none) */
	const char *label1;
	const char *value;        /* the duration column, ns */
	const char *end;          /* the time the value is known */
	const char *pid, *tid, *start;
	int weighted;             /* each row counts its window's weight: HW_* */
};

enum { HW_NONE, HW_REQUESTS, HW_SYSCALLS };

/* The requests with their weight: a request followed in the req source's
 * windows (format 1.10) stands for its window's period over its length. */
static const char weighted_requests[] = "(SELECT r.*, ifnull(w.weight, 1) AS weight"
	" FROM requests r LEFT JOIN request_windows w ON w.start_ts = r.window_ts)";

static const struct histogram_def histograms[] = {
	{ "perfcap_request_service_seconds", "Request service time, first read to last write.",
	  "requests", "pid, ''", "pid", NULL, "service_ns", "end_ts",
	  "pid", "pickup_tid", "start_ts", HW_REQUESTS },
	{ "perfcap_request_queue_seconds", "Request queueing, ready to picked up.",
	  "requests", "pid, ''", "pid", NULL, "queue_ns", "start_ts",
	  "pid", "pickup_tid", "ready_ts", HW_REQUESTS },
	{ "perfcap_syscall_duration_seconds", "System call latency, entry to exit.",
	  "syscall_intervals", "pid, name", "pid", "syscall", "duration", "end_ts",
	  "pid", "tid", "start_ts", HW_SYSCALLS },
	{ "perfcap_block_io_service_seconds", "Block I/O service time, issue to completion.",
	  "block_io", "dev_name, op_name", "dev", "op", "service_ns", "ts",
	  "pid", "tid", "ts" },
	{ "perfcap_futex_wait_seconds", "Futex wait calls' duration, entry to exit.",
	  "futex_calls", "pid, ''", "pid", NULL, "duration", "end_ts",
	  "pid", "tid", "start_ts", HW_SYSCALLS },
};

struct hist_state {
	char key[2][128];
	uint64_t buckets[NBOUNDS + 1];
	double sum;
	int used;
};

/* The series' labels: label0="key0"[,label1="key1"]. */
static void hist_labels(const struct histogram_def *h, const struct hist_state *s,
			char *buf, size_t len)
{
	char key0[128], key1[128];

	escape_label(key0, sizeof(key0), s->key[0]);
	escape_label(key1, sizeof(key1), s->key[1]);
	if (h->label1)
		snprintf(buf, len, "%s=\"%s\",%s=\"%s\"", h->label0, key0, h->label1, key1);
	else
		snprintf(buf, len, "%s=\"%s\"", h->label0, key0);
}

static void hist_points(struct om *m, const struct histogram_def *h, struct hist_state *s,
			uint64_t ts)
{
	char labels[512], bucket[600], le[64];

	hist_labels(h, s, labels, sizeof(labels));
	for (size_t i = 0; i <= NBOUNDS; i++) {
		if (i < NBOUNDS)
			snprintf(le, sizeof(le), "%g", (double)bounds_ns[i] / 1e9);
		snprintf(bucket, sizeof(bucket), "%s,le=\"%s\"", labels, i < NBOUNDS ? le : "+Inf");
		point(m, h->family, "_bucket", bucket, (double)s->buckets[i], ts);
	}
	point(m, h->family, "_count", labels, (double)s->buckets[NBOUNDS], ts);
	point(m, h->family, "_sum", labels, s->sum / 1e9, ts);
}

/* The SQL of a histogram: per series and window, the counts at or below
 * each bound, the count and the sum; of requests or calls followed in
 * windows, each counted by its weight (the counts rounded). */
static void hist_sql(struct om *m, const struct histogram_def *h, char *sql, size_t len)
{
	int weighted = (h->weighted == HW_REQUESTS && m->req_windows) ||
		       (h->weighted == HW_SYSCALLS && m->syscall_windows);
	char cond[1024];
	size_t n;

	n = (size_t)snprintf(sql, len, "SELECT %s, (%s - :from) / %llu AS w", h->series, h->end,
			     (unsigned long long)m->cx->window_ns);
	for (size_t i = 0; i < NBOUNDS; i++)
		n += (size_t)snprintf(sql + n, len - n, weighted ?
				      ", CAST(round(total((%s <= %llu) * weight)) AS INTEGER)" :
				      ", sum(%s <= %llu)", h->value,
				      (unsigned long long)bounds_ns[i]);
	if (weighted)
		n += (size_t)snprintf(sql + n, len - n, ", CAST(round(total(weight)) AS INTEGER),"
				      " total(%s * weight)", h->value);
	else
		n += (size_t)snprintf(sql + n, len - n, ", count(*), sum(%s)", h->value);
	snprintf(sql + n, len - n, " FROM %s WHERE %s IS NOT NULL AND %s AND %s >= :from"
		 " GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
		 weighted && h->weighted == HW_REQUESTS ? weighted_requests : h->from,
		 h->value, export_scope_sql(m->cx, cond, sizeof(cond), h->pid, h->tid, h->start,
					    h->end), h->end);
}

static int hist_write(struct om *m, const struct histogram_def *h)
{
	struct hist_state s = { .used = 0 };
	char sql[4096];
	sqlite3_stmt *st;
	int rc;

	hist_sql(m, h, sql, sizeof(sql));
	st = export_prepare(m->cx, sql);
	if (!st)
		return -1;
	family(m, h->family, "histogram", "seconds", h->help);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *k0 = (const char *)sqlite3_column_text(st, 0);
		const char *k1 = (const char *)sqlite3_column_text(st, 1);
		uint64_t w = (uint64_t)sqlite3_column_int64(st, 2);

		if (!s.used || strcmp(s.key[0], k0 ? k0 : "") || strcmp(s.key[1], k1 ? k1 : "")) {
			memset(&s, 0, sizeof(s));
			snprintf(s.key[0], sizeof(s.key[0]), "%s", k0 ? k0 : "");
			snprintf(s.key[1], sizeof(s.key[1]), "%s", k1 ? k1 : "");
			s.used = 1;
		}
		for (size_t i = 0; i < NBOUNDS; i++)
			s.buckets[i] += (uint64_t)sqlite3_column_int64(st, 3 + (int)i);
		s.buckets[NBOUNDS] += (uint64_t)sqlite3_column_int64(st, 3 + NBOUNDS);
		s.sum += sqlite3_column_double(st, 4 + NBOUNDS);
		hist_points(m, h, &s, m->cx->scope.from + (w + 1) * m->cx->window_ns);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Losses per source, one point at the capture's end. */
static int losses_write(struct om *m)
{
	static const char *const columns[][2] = {
		{ "lost_kernel", "where=\"kernel\"" }, { "lost_user", "where=\"user\"" },
	};
	char labels[256];
	sqlite3_stmt *st;
	int rc = SQLITE_DONE;

	family(m, "perfcap_events_lost", "counter", NULL,
	       "Events lost in the kernel ring buffer or in the recorder, per source.");
	for (int i = 0; i < 2 && rc == SQLITE_DONE; i++) {
		char sql[256];

		snprintf(sql, sizeof(sql), "SELECT source, COALESCE(%s, 0) FROM data_quality"
			 " ORDER BY source", columns[i][0]);
		st = export_prepare(m->cx, sql);
		if (!st)
			return -1;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			snprintf(labels, sizeof(labels), "source=\"%s\",%s",
				 (const char *)sqlite3_column_text(st, 0), columns[i][1]);
			point(m, "perfcap_events_lost", "_total", labels,
			      (double)sqlite3_column_int64(st, 1), m->cx->scope.capture_end);
		}
		sqlite3_finalize(st);
	}
	return rc == SQLITE_DONE ? 0 : -1;
}

static int om_write(struct om *m)
{
	if (share_metrics_write(m) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(histograms) / sizeof(histograms[0]); i++)
		if (report_has_object(m->cx->db, histograms[i].from) && hist_write(m, &histograms[i]) < 0)
			return -1;
	if (losses_write(m) < 0)
		return -1;
	if (!m->prom)
		fputs("# EOF\n", m->out);
	return 0;
}

int export_openmetrics(struct export_ctx *cx, FILE *out, int prometheus)
{
	struct om m = { .cx = cx, .out = out, .prom = prometheus };
	char host[300], run[300];
	int rc;

	escape_label(host, sizeof(host), cx->host);
	escape_label(run, sizeof(run), cx->run_id);
	snprintf(m.common, sizeof(m.common), "host=\"%s\",run_id=\"%s\"", host, run);
	if (names_load(&m.names, cx->db) < 0)
		return -1;
	m.req_windows = report_has_object(cx->db, "request_windows") &&
			db_query_int(cx->db, "SELECT count(*) > 0 FROM request_windows", 0);
	m.syscall_windows = report_syscall_windows(cx->db);
	rc = om_write(&m);
	if (rc < 0)
		db_report_error(cx->db, "openmetrics");
	names_free(&m.names);
	return rc;
}
