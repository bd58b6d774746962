/* diff_load.c - reads one run's database into the series diff compares
 * (diff.h). Everything is keyed by names: functions by name and source
 * file (when debug info gave one), stacks by their folded function names,
 * threads by comm, locks by the function that waited (the first frame of
 * the waiting stack outside libc), never by address, so two builds of a
 * program, or two runs with different address layouts, line up. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "diff.h"
#include "diff_sql.h"
#include "query/folded.h"
#include "query/host_cpu.h"
#include "common/units.h"
#include "diff_spill.h"
#include "statistics.h"

/* A request this program served (a row of requests s): its connection
 * was accepted (or was open before recording), not one it connected to a
 * server itself, whose spans are its outgoing calls. requests.origin is
 * the connection's sockets.origin, or the req source's own, so no search
 * of sockets is needed; the requests are read in storage order (NOT
 * INDEXED), since what is computed from them does not depend on order:
 * the view's index order cost a rowid lookup per row. */
#define SERVED_FROM "requests s NOT INDEXED"
#define SERVED "s.origin IS NOT 'connected'"
/* Each requests pid's process name, once per pid (it was two correlated
 * subqueries per request row: 1.9 s of the diff of a 12 s redis capture
 * with 938k requests). */
#define REQUEST_PROCESSES \
	"pc AS MATERIALIZED (SELECT x.pid, " PROCESS_COMM("x.pid") " AS comm" \
	" FROM (SELECT DISTINCT pid FROM requests) x)"

sqlite3_stmt *diff_try_prepare(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return NULL;
	}
	return st;
}

static double query_double(sqlite3 *db, const char *sql, double fallback)
{
	sqlite3_stmt *st = diff_try_prepare(db, sql);
	double v = fallback;

	if (st && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	return v;
}

static char *query_string(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = diff_try_prepare(db, sql);
	const unsigned char *text;
	char *s = NULL;

	if (st && sqlite3_step(st) == SQLITE_ROW && (text = sqlite3_column_text(st, 0)))
		s = strdup((const char *)text);
	sqlite3_finalize(st);
	return s ? s : strdup("");
}

/* "key=value key=value" of the META keys matching where, sorted. */
static char *meta_set(sqlite3 *db, const char *where)
{
	char sql[512];

	snprintf(sql, sizeof(sql), "SELECT group_concat(key || '=' || value, ' ') FROM "
		 "(SELECT key, value FROM meta WHERE %s ORDER BY key)", where);
	return query_string(db, sql);
}

static double run_seconds(sqlite3 *db)
{
	double ns = query_double(db, "SELECT value FROM stats WHERE chunk = 'stats' AND "
				 "key = 'record.duration_ns'", -1);

	if (ns <= 0)
		ns = query_double(db, "SELECT (SELECT value FROM stats WHERE key = 'record.end_ns'"
				  " ORDER BY chunk = 'stats' DESC LIMIT 1) - (SELECT CAST(value AS"
				  " INTEGER) FROM meta WHERE key = 'record.start_ns')", -1);
	if (ns <= 0)
		ns = query_double(db, "SELECT max(t_end) - min(t_start) FROM chunks"
				  " WHERE t_start > 0", -1);
	return ns > 0 ? ns / 1e9 : 0;
}

/* The requests served: those followed in the req source's windows
 * (format 1.10) each weigh their window's period over its length, so a
 * run recorded with windows and one without compare per request; a
 * database imported before has no request_windows: a count. */
static uint64_t served_requests(sqlite3 *db)
{
	double n = query_double(db, "SELECT total(ifnull(w.weight, 1)) FROM " SERVED_FROM
				" LEFT JOIN request_windows w ON w.start_ts = s.window_ts"
				" WHERE " SERVED, -1);

	if (n < 0)
		n = query_double(db, "SELECT count(*) FROM " SERVED_FROM " WHERE " SERVED, 0);
	return (uint64_t)(n + 0.5);
}

static void load_scalars(struct diff_run *run, sqlite3 *db)
{
	double imported, lost, unmatched, sampled, unresolved;
	struct host_cpu_time cpu;
	struct sampling_ticks ticks;

	run->seconds = run_seconds(db);
	run->freq_hz = query_double(db, "SELECT value FROM meta WHERE key = "
				    "'sampling.cpu.freq_hz'", 0);
	run->samples = (uint64_t)query_double(db, "SELECT sum(count) FROM sample_counts", 0);
	run->requests = served_requests(db);
	run->kernel = query_string(db, "SELECT value FROM meta WHERE key = 'host.kernel.release'");
	run->command = query_string(db, "SELECT value FROM meta WHERE key = 'target.command'");
	run->damage = query_string(db, "SELECT value FROM quality WHERE source = 'file' AND "
				   "key = 'damage'");
	run->hashes = meta_set(db, "key LIKE 'bpf.sha256.%'");
	run->filters = meta_set(db, "key IN ('filter.comm', 'filter.cgroup', "
				"'filter.follow_children', 'sources', 'target.mode')");
	run->sampling = meta_set(db, "key IN ('sampling.cpu.freq_hz', 'sampling.events.one_in',"
				 " 'sampling.events.rate_cap', 'sched.offcpu_min_ns', "
				 "'syscall.min_ns', 'syscall.set', 'stack.max_depth',"
				 /* time windows: calls, switches, requests sampled
				  * in time (a windowed side has fewer long calls) */
				 " 'syscall.windows.budget', 'sched.windows.budget',"
				 " 'req.windows.budget')");
	imported = query_double(db, "SELECT sum(imported) FROM data_quality", 0);
	lost = query_double(db, "SELECT sum(coalesce(lost_kernel, 0) + coalesce(lost_user, 0))"
			    " FROM data_quality", 0);
	unmatched = query_double(db, "SELECT sum(coalesce(unmatched, 0)) FROM data_quality", 0);
	sampled = query_double(db, "SELECT value FROM quality WHERE source = 'frames' AND "
			       "key = 'sampled'", 0);
	unresolved = query_double(db, "SELECT value FROM quality WHERE source = 'frames' AND "
				  "key = 'sampled.unresolved'", 0);
	run->loss_rate = imported + lost > 0 ? lost / (imported + lost) : 0;
	run->unmatched_rate = imported > 0 ? unmatched / imported : 0;
	run->symbol_miss_rate = sampled > 0 ? unresolved / sampled : 0;
	host_cpu_time_read(db, &cpu);
	run->stolen_share = host_cpu_measured_steal(&cpu);
	sampling_ticks_read(db, &ticks);
	run->missed_ticks = sampling_ticks_missed_share(&ticks);
}

/* Rows of (key TEXT, n INTEGER) summed into table counts. */
static int load_counts(sqlite3 *db, const char *sql, struct dtable *t)
{
	sqlite3_stmt *st = diff_try_prepare(db, sql);
	int rc;

	if (!st)
		return 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *key = (const char *)sqlite3_column_text(st, 0);
		struct dseries *s = diff_table_get(t, key ? key : "?");

		if (!s) {
			sqlite3_finalize(st);
			return -1;
		}
		s->count += (uint64_t)sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		db_report_error(db, "diff");
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Rows of (key TEXT, value INTEGER[, alternative INTEGER]) pushed as
 * values under prefix, or under alt_prefix when the third column is 1. */
static int load_values2(struct diff_run *run, sqlite3 *db, const char *sql,
			const char *prefix, const char *alt_prefix)
{
	struct dtable *t = &run->latency;
	sqlite3_stmt *st = diff_try_prepare(db, sql);
	char key[512];
	int rc;

	if (!st)
		return 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		int64_t v = sqlite3_column_int64(st, 1);
		int alt = alt_prefix && sqlite3_column_int(st, 2) == 1;
		struct dseries *s;

		snprintf(key, sizeof(key), "%s%s", alt ? alt_prefix : prefix, name ? name : "?");
		s = diff_table_get(t, key);
		if (!s || diff_latency_push(run, s, v > 0 ? (uint64_t)v : 0) < 0) {
			sqlite3_finalize(st);
			return -1;
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		db_report_error(db, "diff");
	return rc == SQLITE_DONE ? 0 : -1;
}

static int load_values(struct diff_run *run, sqlite3 *db, const char *sql, const char *prefix)
{
	return load_values2(run, db, sql, prefix, NULL);
}

static int load_functions(struct diff_run *run, sqlite3 *db)
{
	static const char self_sql[] =
		"WITH leaf AS (SELECT c.count AS n, COALESCE("
		" (SELECT frame_id FROM stack_frames WHERE stack_id = c.kstack_id AND position = 0),"
		" (SELECT frame_id FROM stack_frames WHERE stack_id = c.ustack_id AND position = 0))"
		" AS frame_id FROM sample_counts c)"
		" SELECT " FUNCTION_KEY ", sum(n) FROM leaf JOIN frames f USING (frame_id) GROUP BY 1";
	/* per sampled stack its distinct functions, then counts per stack: a
	 * function is on a sample's user or kernel stack, never both (kernel
	 * keys end in " [k]"), so summing over both stacks counts it once */
	static const char total_sql[] =
		"WITH sc AS MATERIALIZED (SELECT stack_id, sum(n) AS n FROM (SELECT ustack_id AS"
		" stack_id, count AS n FROM sample_counts UNION ALL SELECT kstack_id, count FROM"
		" sample_counts) WHERE stack_id IS NOT NULL GROUP BY stack_id),"
		" sk AS MATERIALIZED (SELECT DISTINCT sc.stack_id, " FUNCTION_KEY " AS key FROM sc"
		" JOIN stack_frames sf ON sf.stack_id = sc.stack_id"
		" JOIN frames f ON f.frame_id = sf.frame_id)"
		" SELECT sk.key, sum(sc.n) FROM sk JOIN sc ON sc.stack_id = sk.stack_id"
		" GROUP BY sk.key";

	if (load_counts(db, self_sql, &run->self) < 0)
		return -1;
	return load_counts(db, total_sql, &run->total);
}

/* Folded stacks of the whole run (the lines report --folded prints),
 * keyed by their text. */
static int load_stacks(struct diff_run *run, sqlite3 *db)
{
	struct report_options opts = { .top = 20 };
	struct folded_stack *lines = NULL;
	size_t n = 0;
	int rc = folded_stacks_load(db, &opts, &lines, &n);

	for (size_t i = 0; rc == 0 && i < n; i++) {
		struct dseries *s = diff_table_get(&run->stacks, lines[i].text);

		if (!s)
			rc = -1;
		else
			s->count += lines[i].count;
	}
	folded_stacks_free(lines, n);
	return rc;
}

/* A system call that waits for a peer rather than doing the program's
 * own work (third column 1): readiness waits (poll family), net calls, and
 * reads/writes on an fd that was a socket (a sockets row at or before the
 * call). */
static const char syscalls_sql[] =
	"WITH " THREAD_NAMES("syscalls") ", socks AS MATERIALIZED (SELECT pid, fd,"
	" min(ts) AS first_ts FROM sockets GROUP BY pid, fd)"
	" SELECT n.comm || ':' || s.name, s.duration, s.family IN ('poll', 'net') OR"
	" (s.io IS NOT NULL AND k.first_ts IS NOT NULL AND k.first_ts <= s.start_ts)"
	" FROM syscall_intervals s JOIN names n ON n.pid = s.pid AND n.tid = s.tid"
	" LEFT JOIN socks k ON k.pid = s.pid AND k.fd = s.fd"
	" WHERE s.family IS NOT 'futex'";

/* ---- latency values: in memory, or spilled ------------------------------ */

/* Moves the values kept in memory into a new spill, in recorded order. */
static int spill_all(struct diff_run *run)
{
	if (!(run->spill = diff_spill_open()))
		return -1;
	for (size_t i = 0; i < run->latency.len; i++) {
		struct dseries *s = &run->latency.rows[i];

		for (size_t k = 0; k < s->n; k++)
			if (diff_spill_add(run->spill, (int64_t)i, k, s->vals[k]) < 0)
				return -1;
		free(s->vals);
		s->vals = NULL;
		s->n = s->cap = 0;
	}
	run->latency_values = 0;
	return 0;
}

int diff_latency_push(struct diff_run *run, struct dseries *s, uint64_t v)
{
	if (!run->spill && run->latency_max && run->latency_values >= run->latency_max &&
	    spill_all(run) < 0)
		return -1;
	if (run->spill) {
		if (diff_spill_add(run->spill, diff_table_index(&run->latency, s), s->count, v) < 0)
			return -1;
	} else {
		if (diff_series_push(s, v) < 0)
			return -1;
		run->latency_values++;
	}
	s->count++;
	s->sum += (double)v;
	return 0;
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Each series in memory sorted, its block medians taken first (in place:
 * a block's values only move within the block until the sort). */
static int sort_latencies(struct diff_run *run)
{
	for (size_t i = 0; i < run->latency.len; i++) {
		struct dseries *s = &run->latency.rows[i];
		size_t per = s->n / DIFF_BLOCKS;

		if (run->want_blocks && per >= DIFF_BLOCK_MIN) {
			size_t rank = stats_quantile_rank(per, 0.5);

			s->block_median = malloc(DIFF_BLOCKS * sizeof(double));
			if (!s->block_median)
				return -1;
			for (size_t k = 0; k < DIFF_BLOCKS; k++)
				s->block_median[k] =
					(double)diff_select(s->vals + k * per, per, rank - 1);
		}
		if (s->n > 1)
			qsort(s->vals, s->n, sizeof(uint64_t), by_value);
	}
	return 0;
}

static int load_latencies(struct diff_run *run, sqlite3 *db, const char *path)
{
	char a[32], b[32];

	/* futex calls are compared as locks, not as system calls */
	if (load_values2(run, db, syscalls_sql, DIFF_SYSCALL, DIFF_PEER_WAIT) < 0 ||
	    load_values(run, db, "WITH " REQUEST_PROCESSES " SELECT pc.comm, s.service_ns FROM "
			SERVED_FROM " JOIN pc ON pc.pid = s.pid"
			" WHERE " SERVED, DIFF_REQUEST) < 0 ||
	    load_values(run, db, "SELECT dev_name, queue_ns + service_ns FROM block_io",
			DIFF_DEVICE) < 0 ||
	    /* uprobed functions by name (probe ids differ between runs) */
	    load_values(run, db, "SELECT p.name, h.duration FROM probe_hits h JOIN probes p"
			" ON p.probe_id = h.probe_id WHERE p.kind = 'uprobe'", DIFF_PROBE) < 0 ||
	    /* GC pauses per process name and runtime (gc_pauses: runtime probes) */
	    load_values(run, db, "SELECT " PROCESS_COMM("s.pid") " || ':' || s.runtime, s.duration"
			" FROM gc_pauses s", DIFF_GC) < 0 ||
	    diff_load_locks(run, db) < 0)
		return -1;
	if (!run->spill)
		return sort_latencies(run);
	if (diff_spill_finish(run->spill) < 0)
		return -1;
	fprintf(stderr, "perfcap-analyze: note: the %s latency values of %s exceed the diff's"
		" memory for them (%s bytes a run, PERFCAP_DIFF_LATENCY_BYTES): kept in a temporary"
		" database\n", fmt_count(a, sizeof(a), run->spill->rows), path,
		fmt_count(b, sizeof(b), run->latency_max * sizeof(uint64_t)));
	return 0;
}

/* Per comm and state, one value per whole window: the time the threads
 * of that name spent in the state, in parts per million of the window
 * (several threads can exceed 1,000,000). The first and last windows are
 * left out when there are more than two: the capture's edges cut them. */
static int load_threads(struct diff_run *run, sqlite3 *db)
{
	static const char *states[] = { "running", "runnable", "io_wait", "sleep",
					"futex_wait", "poll_wait" };
	static const char sql[] =
		"SELECT comm, window_start, window_len, sum(running_ns), sum(runnable_ns),"
		" sum(io_wait_ns), sum(sleep_ns), sum(futex_wait_ns), sum(poll_wait_ns),"
		" (SELECT min(window_start) FROM thread_time_shares),"
		" (SELECT max(window_start) FROM thread_time_shares),"
		" (SELECT count(DISTINCT window_start) FROM thread_time_shares)"
		" FROM (SELECT " COMM_OF("s.pid", "s.tid") " AS comm, window_start,"
		" window_end - window_start AS window_len, running_ns, runnable_ns, io_wait_ns,"
		" sleep_ns, futex_wait_ns, poll_wait_ns FROM thread_time_shares s)"
		" GROUP BY comm, window_start ORDER BY comm, window_start";
	sqlite3_stmt *st = diff_try_prepare(db, sql);
	char key[512];

	if (!st)
		return 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *comm = (const char *)sqlite3_column_text(st, 0);
		int64_t start = sqlite3_column_int64(st, 1), len = sqlite3_column_int64(st, 2);

		if (len <= 0 || (sqlite3_column_int64(st, 11) > 2 &&
				 (start == sqlite3_column_int64(st, 9) ||
				  start == sqlite3_column_int64(st, 10))))
			continue;
		for (int i = 0; i < 6; i++) {
			double ns = sqlite3_column_double(st, 3 + i);
			struct dseries *s;

			snprintf(key, sizeof(key), "%s:%s", comm ? comm : "?", states[i]);
			s = diff_table_get(&run->threads, key);
			if (!s || diff_series_push(s, (uint64_t)(ns / (double)len * 1e6)) < 0) {
				sqlite3_finalize(st);
				return -1;
			}
			s->count++;
			s->sum += ns;
		}
	}
	sqlite3_finalize(st);
	return 0;
}

int diff_run_load(struct diff_run *run, sqlite3 *db, const char *path)
{
	uint64_t latency_max = run->latency_max;
	int want_blocks = run->want_blocks;

	memset(run, 0, sizeof(*run));
	run->path = path;
	run->latency_max = latency_max;
	run->want_blocks = want_blocks;
	diff_table_init(&run->self);
	diff_table_init(&run->total);
	diff_table_init(&run->stacks);
	diff_table_init(&run->latency);
	diff_table_init(&run->threads);
	diff_table_init(&run->rates);
	load_scalars(run, db);
	if (load_functions(run, db) < 0 || load_stacks(run, db) < 0 ||
	    load_latencies(run, db, path) < 0 || load_threads(run, db) < 0 ||
	    load_counts(db, "SELECT source, imported FROM data_quality WHERE imported > 0",
			&run->rates) < 0 ||
	    /* USDT probes: the kernel's exact hits, as a rate per probe name */
	    load_counts(db, "SELECT 'usdt ' || name, hits FROM probes WHERE kind = 'usdt'"
			" AND hits > 0", &run->rates) < 0 ||
	    /* GC pauses per process name and runtime: how often the collector stops it */
	    load_counts(db, "SELECT 'gc_pauses ' || " PROCESS_COMM("s.pid") " || ':' ||"
			" s.runtime, count(*) FROM gc_pauses s GROUP BY 1", &run->rates) < 0) {
		fprintf(stderr, "perfcap-analyze: %s: could not read the run for diff\n", path);
		return -1;
	}
	return 0;
}

void diff_run_free(struct diff_run *run)
{
	free(run->kernel);
	free(run->hashes);
	free(run->filters);
	free(run->sampling);
	free(run->command);
	free(run->damage);
	diff_table_free(&run->self);
	diff_table_free(&run->total);
	diff_table_free(&run->stacks);
	diff_table_free(&run->latency);
	diff_spill_close(run->spill);
	diff_table_free(&run->threads);
	diff_table_free(&run->rates);
}
