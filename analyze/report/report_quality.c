/* report_quality.c - "Data quality": how far the numbers above can be
 * trusted. Losses, truncated and probably truncated stacks, stack errors,
 * unresolved frames, unknown or malformed content and file damage, all
 * read from the quality table the loader filled (whole capture, not only
 * the selected samples), then the data_quality view per event source:
 * recorded, imported, lost, sampled out, unmatched, expired, late.
 * In JSON: "data_quality", one {source, key, value, meaning} per number. */
#include <stdio.h>
#include <stdlib.h>

#include "db/db.h"
#include "perfcap_format.h"
#include "query/host_cpu.h"
#include "util/fmt.h"
#include "report_sections.h"

static const char quality_sql[] = "SELECT value FROM quality WHERE source = ?1 AND key = ?2";

static uint64_t q(const struct report_context *ctx, const char *source, const char *key)
{
	int64_t value = db_lookup_int(ctx->db, quality_sql, source, key, 0);

	return value > 0 ? (uint64_t)value : 0;
}

static void print_losses(const struct report_context *ctx)
{
	uint64_t samples = q(ctx, "cpu", "samples");
	uint64_t lost_kernel = q(ctx, "cpu", "lost.kernel");
	uint64_t lost_user = q(ctx, "cpu", "lost.user");
	uint64_t lost = lost_kernel + lost_user;
	char a[FMT_BUF], b[FMT_BUF], c[FMT_BUF], d[FMT_BUF], e[FMT_BUF];

	fprintf(ctx->out, "  %-20s lost %s of %s events (%s; kernel %s, user %s)\n",
		"Lost events:", fmt_count(a, sizeof(a), lost),
		fmt_count(b, sizeof(b), samples + lost),
		fmt_percent(c, sizeof(c), lost, samples + lost),
		fmt_count(d, sizeof(d), lost_kernel), fmt_count(e, sizeof(e), lost_user));
}

/* Dropped on purpose by the recorder's size policies, with the reason. */
static void print_dropped(const struct report_context *ctx)
{
	uint64_t max_size = q(ctx, "record", "max_size.events_dropped");
	uint64_t flight = q(ctx, "record", "flight.events_dropped");
	char a[FMT_BUF], b[FMT_BUF];

	if (max_size == 0 && flight == 0)
		return;
	fprintf(ctx->out, "  %-20s %s at --max-size (the file was full), %s older than "
		"the flight recorder's window\n", "Dropped events:",
		fmt_count(a, sizeof(a), max_size), fmt_count(b, sizeof(b), flight));
}

/* Counts said only when not 0: a STATS key, its label in the text, its
 * source and row in the JSON, and what it means. */
struct stat_note {
	const char *key, *label, *source, *row, *meaning;
};

static const struct stat_note unclosed_note = {
	"waits.unclosed", "Unclosed waits:", "waits", "unclosed",
	"waits not summed: the thread blocked again before either the switch-in or the "
	"wakeup that ended them was seen",
};

static const struct stat_note unseen_note = {
	"sched.switch_in_unseen", "Unseen switch-ins:", "sched", "switch_in_unseen",
	"switch-ins of traced threads the kernel did not deliver to the recorder (format "
	"1.17): each such off-CPU interval ends where the thread's run time says it came back "
	"on, exact, but has no kernel stack, and the switch is missing from the switches "
	"table (quality switch_out.unmatched)",
};

static int64_t stat_note_count(const struct report_context *ctx, const struct stat_note *n)
{
	static const char sql[] = "SELECT value FROM stats WHERE chunk = 'stats' AND key = ?1";

	return db_lookup_int(ctx->db, sql, n->key, NULL, 0);
}

static void print_stat_note(const struct report_context *ctx, const struct stat_note *n)
{
	int64_t count = stat_note_count(ctx, n);
	char a[FMT_BUF];

	if (count > 0)
		fprintf(ctx->out, "  %-20s %s %s\n", n->label,
			fmt_count(a, sizeof(a), (uint64_t)count), n->meaning);
}

static const char ticks_meaning[] = "CPU sampling ticks that did not run on busy CPUs (of "
	"those due): no sample was taken of what ran then, so CPU times from samples are short "
	"(a task's not necessarily by this share)";

/* Sampling ticks missed (only when some were: captures with the counts). */
static void print_missed_ticks(const struct report_context *ctx)
{
	struct sampling_ticks t;
	char a[FMT_BUF], b[FMT_BUF];

	sampling_ticks_read(ctx->db, &t);
	if (t.known && t.missed > t.slack)
		fprintf(ctx->out, "  %-20s %s of %s (%.1f%% beyond the %.0f the count cannot tell"
			" from none) %s\n", "Missed CPU ticks:",
			fmt_count(a, sizeof(a), (uint64_t)t.missed), fmt_count(b, sizeof(b), (uint64_t)t.due),
			100 * sampling_ticks_missed_share(&t), t.slack, ticks_meaning);
}

/* The kernel sums of agg and waits (format 1.3): what found their map full
 * (missing from thread_metrics and the time shares) and what came late.
 * Only for captures that have them. */
static void print_kernel_sums(const struct report_context *ctx)
{
	static const char sql[] = "SELECT sum(value) FROM stats WHERE chunk = 'stats' AND"
		" (key = ?1 || '.map_full.calls' OR key = ?2 || '.map_full.waits') HAVING count(*) > 0";
	static const char late_sql[] = "SELECT sum(value) FROM stats WHERE chunk = 'stats' AND"
		" key IN (?1 || '.late', ?2 || '.late')";
	static const char ns_sql[] = "SELECT sum(value) FROM stats WHERE chunk = 'stats' AND"
		" key IN (?1 || '.map_full.ns', ?2 || '.map_full.ns')";
	int64_t full = db_lookup_int(ctx->db, sql, "agg", "waits", -1);
	char a[FMT_BUF], b[FMT_BUF], c[FMT_BUF];

	if (full < 0)
		return;
	fprintf(ctx->out, "  %-20s %s calls/waits found the kernel's sums map full (%s ns: "
		"missing from the time shares); %s sums written late\n", "Kernel sums:",
		fmt_count(a, sizeof(a), (uint64_t)full),
		fmt_count(b, sizeof(b), (uint64_t)db_lookup_int(ctx->db, ns_sql, "agg", "waits", 0)),
		fmt_count(c, sizeof(c), (uint64_t)db_lookup_int(ctx->db, late_sql, "agg", "waits", 0)));
	print_stat_note(ctx, &unclosed_note);
}

/* The requests the kernel still held at the recording's end (each
 * connection's batch not yet sent, its open request), when the recorder
 * could not read them (STATS req.open_at_end.failed: why; NULL: read). */
static char *req_at_end_failed(const struct report_context *ctx)
{
	static const char sql[] = "SELECT value FROM stats WHERE chunk = 'stats' AND key = ?1";

	return db_lookup_text(ctx->db, sql, "req.open_at_end.failed", NULL);
}

static void print_req_at_end(const struct report_context *ctx)
{
	char *why = req_at_end_failed(ctx);

	if (why)
		fprintf(ctx->out, "  %-20s not read at the end (%s): each connection still open "
			"then lacks its last requests (up to %d) and its open one\n",
			"Requests held:", why, PC_REQUEST_BATCH_MAX);
	free(why);
}

/* Requests followed in time windows (perfcap-record --req-rate):
 * the share of the recording they cover (share < 0: no windows). */
struct req_windows {
	double share;
	int64_t count, cut;
	int64_t followed;           /* the requests table's rows (-1: not read) */
	double estimated;           /* ... each weighted by its window */
	int64_t weighed, paced;     /* windows with a weight; of which paced */
};

static const char windows_sql[] = "SELECT CAST(value AS INTEGER) FROM stats WHERE"
	" chunk = 'stats' AND key = ?1";

/* The requests of the whole recording and what they stand for: each one
 * followed in a window's period weighs period / window (request_windows),
 * the others 1. */
static void req_windows_estimate(const struct report_context *ctx, struct req_windows *r)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(ctx->db, "SELECT count(*), total(ifnull(w.weight, 1)) FROM"
			       " requests r LEFT JOIN request_windows w ON w.start_ts = r.window_ts",
			       -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
		r->followed = sqlite3_column_int64(st, 0);
		r->estimated = sqlite3_column_double(st, 1);
	}
	sqlite3_finalize(st);
	st = NULL;
	/* the windows weighed by their connections' bytes (pace), not time alone */
	if (sqlite3_prepare_v2(ctx->db, "SELECT count(*), count(pace) FROM request_windows"
			       " WHERE weight IS NOT NULL", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW) {
		r->weighed = sqlite3_column_int64(st, 0);
		r->paced = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
}

/* The share of the recording a source's windows covered (STATS
 * SOURCE.windows.covered_ns over .span_ns), and how many (*count); -1
 * when it had none. */
static double windows_share(const struct report_context *ctx, const char *source,
			    int64_t *count)
{
	char key[64];
	int64_t covered, span;

	snprintf(key, sizeof(key), "%s.windows.count", source);
	*count = db_lookup_int(ctx->db, windows_sql, key, NULL, 0);
	snprintf(key, sizeof(key), "%s.windows.covered_ns", source);
	covered = db_lookup_int(ctx->db, windows_sql, key, NULL, -1);
	snprintf(key, sizeof(key), "%s.windows.span_ns", source);
	span = db_lookup_int(ctx->db, windows_sql, key, NULL, -1);
	if (covered < 0 || span <= 0 || *count <= 0)
		return -1;
	return covered >= span ? 1.0 : (double)covered / (double)span;
}

static struct req_windows req_windows_read(const struct report_context *ctx)
{
	struct req_windows r = { .share = -1 };

	r.share = windows_share(ctx, "req", &r.count);
	if (r.share < 0)
		return r;
	r.cut = db_lookup_int(ctx->db, windows_sql, "req.cut", NULL, 0);
	r.followed = -1;
	if (report_has_object(ctx->db, "request_windows"))
		req_windows_estimate(ctx, &r);
	return r;
}

static const char windows_meaning[] = "requests were followed only when their first read "
	"fell in a time window (perfcap-record --req-rate), each standing for its window's "
	"period over its length (request_windows): the requests row of the latency "
	"breakdown (count, total, percentiles) weighs them so, the other request lines count "
	"those followed";

static void print_req_windows(const struct report_context *ctx)
{
	struct req_windows r = req_windows_read(ctx);
	char a[FMT_BUF], b[FMT_BUF];

	if (r.share < 0)
		return;
	fprintf(ctx->out, "  %-20s %.1f%% of the recording, in %s windows (%s cut at a window's "
		"change)", "Requests followed:", 100 * r.share,
		fmt_count(a, sizeof(a), (uint64_t)r.count), fmt_count(b, sizeof(b), (uint64_t)r.cut));
	if (r.followed >= 0)
		fprintf(ctx->out, "; the %s followed stand for about %s in the whole recording",
			fmt_count(a, sizeof(a), (uint64_t)r.followed),
			fmt_count(b, sizeof(b), (uint64_t)(r.estimated + 0.5)));
	if (r.followed >= 0 && r.weighed > 0)
		fprintf(ctx->out, " (%s of %s windows weighed by their connections' bytes over "
			"the second, the rest by time alone, which a server slowed in the "
			"window makes low)", fmt_count(a, sizeof(a), (uint64_t)r.paced),
			fmt_count(b, sizeof(b), (uint64_t)r.weighed));
	fprintf(ctx->out, ": %s\n", windows_meaning);
}

/* The recorder's memory bound: exited processes are forgotten once their
 * stacks are resolved (harmless, said for completeness); live ones over
 * the cap are described again if seen later; JIT ips past the cap lose
 * their names. */
static void print_evicted(const struct report_context *ctx)
{
	uint64_t exited = q(ctx, "record", "evicted.processes");
	uint64_t live = q(ctx, "record", "evicted.live_processes");
	uint64_t jit = q(ctx, "record", "evicted.jit_ips_dropped");
	char a[FMT_BUF], b[FMT_BUF], c[FMT_BUF];

	if (exited == 0 && live == 0 && jit == 0)
		return;
	fprintf(ctx->out, "  %-20s %s exited processes forgotten by the recorder after their "
		"stacks were resolved; %s live ones over its cap; %s JIT addresses unnamed "
		"past its cap\n", "Evicted processes:", fmt_count(a, sizeof(a), exited),
		fmt_count(b, sizeof(b), live), fmt_count(c, sizeof(c), jit));
}

static void print_stack_line(const struct report_context *ctx, const char *label,
			     uint64_t samples, uint64_t stacks, const char *what)
{
	uint64_t all = q(ctx, "cpu", "samples");
	char pct[FMT_BUF], n[FMT_BUF];

	fprintf(ctx->out, "  %-20s %s of samples (distinct stacks: %s; %s)\n", label,
		fmt_percent(pct, sizeof(pct), samples, all),
		fmt_count(n, sizeof(n), stacks), what);
}

static void print_stacks(const struct report_context *ctx)
{
	print_stack_line(ctx, "Truncated stacks:", q(ctx, "stacks", "samples.truncated"),
			 q(ctx, "stacks", "truncated"), "hit the depth limit");
	print_stack_line(ctx, "Probably truncated:",
			 q(ctx, "stacks", "samples.probably_truncated"),
			 q(ctx, "stacks", "probably_truncated"),
			 "user stack does not end in _start, clone, start_thread...");
	print_stack_line(ctx, "Stack errors:", q(ctx, "stacks", "samples.error"),
			 q(ctx, "stacks", "error"), "unwinding failed or empty");
	if (q(ctx, "stacks", "samples.missing") > 0)
		print_stack_line(ctx, "Missing stacks:", q(ctx, "stacks", "samples.missing"),
				 q(ctx, "stacks", "missing"), "ids never defined");
}

static void print_frames(const struct report_context *ctx)
{
	char pct[FMT_BUF], a[FMT_BUF], b[FMT_BUF];

	fprintf(ctx->out, "  %-20s %s of sampled frames (%s of %s distinct frames)\n",
		"Unresolved frames:",
		fmt_percent(pct, sizeof(pct), q(ctx, "frames", "sampled.unresolved"),
			    q(ctx, "frames", "sampled")),
		fmt_count(a, sizeof(a), q(ctx, "frames", "unique.unresolved")),
		fmt_count(b, sizeof(b), q(ctx, "frames", "unique")));
	if (q(ctx, "frames", "sampled.junk"))
		fprintf(ctx->out, "  %-20s %s sampled return addresses in no mapping, dropped from "
			"the stacks (junk of frame-pointer walks)\n", "Junk frames:",
			fmt_count(a, sizeof(a), q(ctx, "frames", "sampled.junk")));
}

static void print_format(const struct report_context *ctx)
{
	char a[FMT_BUF], b[FMT_BUF], c[FMT_BUF];

	fprintf(ctx->out, "  %-20s %s chunks, %s records skipped; %s malformed records\n",
		"Unknown content:",
		fmt_count(a, sizeof(a), q(ctx, "format", "chunks.unknown")),
		fmt_count(b, sizeof(b), q(ctx, "format", "records.unknown")),
		fmt_count(c, sizeof(c), q(ctx, "format", "records.malformed") +
			  q(ctx, "format", "kv.malformed")));
}

static void print_file(const struct report_context *ctx)
{
	char *damage = db_lookup_text(ctx->db, quality_sql, "file", "damage");

	fprintf(ctx->out, "  %-20s %s\n", "File:",
		damage ? damage : "intact, end marker present");
	free(damage);
}

static const struct {
	const char *column;
	const char *meaning;
} per_source[] = {
	{ "recorded", "records the recorder wrote (STATS <source>.events)" },
	{ "imported", "records imported" },
	{ "lost_kernel", "lost in the kernel ring buffer" },
	{ "lost_user", "lost in the recorder" },
	{ "sampled_out", "left out on purpose by --sample (scale counts by them)" },
	{ "rate_capped", "left out on purpose by --rate-cap" },
	{ "stack_errors", "stacks the recorder failed to take" },
	{ "unmatched", "events that contradicted the state (unmatched switches, wakeups...)" },
	{ "expired", "waits classified by state because their system call never came" },
	{ "late", "events that arrived too late for the correlations" },
	{ "lost_share", "lost / (imported + lost)" },
};

#define NCOLUMNS (sizeof(per_source) / sizeof(per_source[0]))

static sqlite3_stmt *per_source_rows(const struct report_context *ctx)
{
	return db_prepare(ctx->db, "SELECT source, recorded, imported, lost_kernel, lost_user,"
			  " sampled_out, rate_capped, stack_errors, unmatched, expired, late,"
			  " lost_share FROM data_quality ORDER BY source");
}

static void print_sources(const struct report_context *ctx)
{
	sqlite3_stmt *st = per_source_rows(ctx);
	char v[10][FMT_BUF];
	int n = 0;

	while (st && sqlite3_step(st) == SQLITE_ROW) {
		if (n++ == 0)
			fprintf(ctx->out, "  Per source:\n  %-8s %10s %10s %8s %8s %9s %9s %9s %8s %6s\n",
				"source", "recorded", "imported", "lost", "lost%", "sampled", "unmatched",
				"expired", "late", "stkerr");
		for (int i = 0; i < 9; i++)
			fmt_count(v[i], sizeof(v[i]), (uint64_t)sqlite3_column_int64(st, i + 2));
		fprintf(ctx->out, "  %-8s %10s %10s %8s %7.2f%% %9s %9s %9s %8s %6s\n",
			sqlite3_column_text(st, 0),
			sqlite3_column_type(st, 1) == SQLITE_NULL ? "-" :
			fmt_count(v[9], sizeof(v[9]), (uint64_t)sqlite3_column_int64(st, 1)),
			v[0], fmt_count(v[1], sizeof(v[1]), (uint64_t)(sqlite3_column_int64(st, 3) +
								  sqlite3_column_int64(st, 4))),
			100 * sqlite3_column_double(st, 11),
			fmt_count(v[2], sizeof(v[2]), (uint64_t)(sqlite3_column_int64(st, 5) +
								  sqlite3_column_int64(st, 6))),
			v[6], v[7], v[8], v[5]);
	}
	sqlite3_finalize(st);
}

static void json_row(struct json_writer *w, const char *source, const char *key, double value,
		     const char *meaning)
{
	json_begin_object(w, NULL);
	json_string(w, "source", source);
	json_string(w, "key", key);
	json_double(w, "value", value);
	json_string(w, "meaning", meaning);
	json_end_object(w);
}

/* Only when the recorder evicted anything (older captures have no key). */
static void write_json_evicted(const struct report_context *ctx)
{
	static const char *const rows[][2] = {
		{ "evicted.processes", "exited processes the recorder forgot after resolving "
				       "their stacks" },
		{ "evicted.live_processes", "live processes the recorder forgot over its cap "
					    "(described again when seen later)" },
		{ "evicted.jit_ips_dropped", "JIT addresses of forgotten processes left "
					     "unnamed past the recorder's cap" },
	};
	uint64_t any = 0;

	for (size_t i = 0; i < 3; i++)
		any += q(ctx, "record", rows[i][0]);
	for (size_t i = 0; any && i < 3; i++)
		json_row(ctx->json, "record", rows[i][0], (double)q(ctx, "record", rows[i][0]),
			 rows[i][1]);
}

/* The sched source in time windows (format 1.12, perfcap-record
 * --sched-rate): STATS sched.windows.*; share < 0 when it had none. */
struct sched_windows {
	double share;
	int64_t count, kept, ran;
};

static struct sched_windows sched_windows_read(const struct report_context *ctx)
{
	struct sched_windows s = { .share = -1 };

	s.share = windows_share(ctx, "sched", &s.count);
	if (s.share < 0)
		return s;
	s.kept = db_lookup_int(ctx->db, windows_sql, "sched.windows.gap_kept", NULL, 0);
	s.ran = db_lookup_int(ctx->db, windows_sql, "sched.windows.gap_ran", NULL, 0);
	return s;
}

static const char sched_windows_meaning[] = "context switches, wakeups and waits were seen "
	"only in a time window of each second (perfcap-record --sched-rate; sched_gaps): thread "
	"states resume after each gap from the threads as the next window opened (sched_tasks), "
	"the time shares, the waits' sums and the diagnosis's thread times are scaled to their "
	"seconds, but for each thread's running time in the gaps, exact from the kernel's "
	"run-time counters at both edges (sched_gap_runs; recordings since format 1.13) and "
	"its time waiting for a CPU there, from the run_delay counters, the rest of the gaps "
	"(blocked) split as the windows saw the thread's blocked time, and the waits' sums "
	"from its voluntary switches and blocked time in the gaps (format 1.16); an off-CPU "
	"interval across a gap is kept when its thread stayed off CPU throughout it, else not "
	"written";

static void print_sched_windows(const struct report_context *ctx)
{
	struct sched_windows s = sched_windows_read(ctx);
	char a[FMT_BUF], b[FMT_BUF], c[FMT_BUF];

	if (s.share < 0)
		return;
	fprintf(ctx->out, "  %-20s %.1f%% of the recording, in %s windows; off-CPU intervals "
		"across a gap: %s kept, %s not written (the thread ran in the gap): %s\n",
		"Sched followed:", 100 * s.share, fmt_count(a, sizeof(a), (uint64_t)s.count),
		fmt_count(b, sizeof(b), (uint64_t)s.kept), fmt_count(c, sizeof(c), (uint64_t)s.ran),
		sched_windows_meaning);
}

static void write_json_sched_windows(const struct report_context *ctx)
{
	struct sched_windows s = sched_windows_read(ctx);

	if (s.share < 0)
		return;
	json_row(ctx->json, "sched", "windows.followed_share", s.share, sched_windows_meaning);
	json_row(ctx->json, "sched", "windows.gap_kept", (double)s.kept,
		 "off-CPU intervals across a gap whose thread stayed off CPU throughout it");
	json_row(ctx->json, "sched", "windows.gap_ran", (double)s.ran,
		 "off-CPU intervals across a gap not written: the thread ran in the gap");
}

/* The syscall program in time windows (format 1.14, perfcap-record
 * --syscall-rate): STATS syscall.windows.*; share < 0 when it had none. */
struct syscall_windows {
	double share;
	int64_t count, cut;
};

static struct syscall_windows syscall_windows_read(const struct report_context *ctx)
{
	struct syscall_windows s = { .share = -1 };

	s.share = windows_share(ctx, "syscall", &s.count);
	if (s.share >= 0)
		s.cut = db_lookup_int(ctx->db, windows_sql, "syscall.windows.cut", NULL, 0);
	return s;
}

static const char syscall_windows_meaning[] = "system calls (sources syscall, mux, net, "
	"lock, mem) were paired only when they entered and exited inside a time window of "
	"each second (perfcap-record --syscall-rate; syscall_windows): each recorded call "
	"stands for its second over the part of its window a call of its length could start "
	"in (syscalls.weight); counts and times are weighted, percentiles and histograms are "
	"those of the calls recorded, so calls nearly as long as a window are fewer there "
	"than they were, and calls longer than a window are not seen; requests come from "
	"the req source only";

static void print_syscall_windows(const struct report_context *ctx)
{
	struct syscall_windows s = syscall_windows_read(ctx);
	char a[FMT_BUF], b[FMT_BUF];

	if (s.share < 0)
		return;
	fprintf(ctx->out, "  %-20s %.1f%% of the recording, in %s windows; calls across a "
		"window's edge, not paired: %s: %s\n", "Syscalls followed:", 100 * s.share,
		fmt_count(a, sizeof(a), (uint64_t)s.count), fmt_count(b, sizeof(b), (uint64_t)s.cut),
		syscall_windows_meaning);
}

static void write_json_syscall_windows(const struct report_context *ctx)
{
	struct syscall_windows s = syscall_windows_read(ctx);

	if (s.share < 0)
		return;
	json_row(ctx->json, "syscall", "windows.followed_share", s.share, syscall_windows_meaning);
	json_row(ctx->json, "syscall", "windows.cut", (double)s.cut,
		 "calls across a window's edge (entered before it opened or exited after it "
		 "closed): not paired, not recorded");
}

static void write_json_req_windows(const struct report_context *ctx)
{
	struct req_windows r = req_windows_read(ctx);

	if (r.share < 0)
		return;
	json_row(ctx->json, "req", "windows.followed_share", r.share, windows_meaning);
	if (r.followed >= 0) {
		json_row(ctx->json, "req", "windows.followed", (double)r.followed,
			 "requests followed (rows of requests), in the whole recording");
		json_row(ctx->json, "req", "windows.estimated", r.estimated,
			 "the requests they stand for, each weighted by its window's period over "
			 "its length (request_windows; 1 outside windows)");
		json_row(ctx->json, "req", "windows.paced", (double)r.paced,
			 "windows weighed by their connections' bytes over the second "
			 "(request_windows.pace)");
		json_row(ctx->json, "req", "windows.by_time", (double)(r.weighed - r.paced),
			 "windows weighed by time alone: none of their connections had a "
			 "REQUEST_MARK at both ends of the second (low when the server ran slower "
			 "in the window)");
	}
}

static void json_stat_note(const struct report_context *ctx, const struct stat_note *n)
{
	int64_t count = stat_note_count(ctx, n);

	if (count > 0)
		json_row(ctx->json, n->source, n->row, (double)count, n->meaning);
}

static void write_json(const struct report_context *ctx)
{
	struct json_writer *w = ctx->json;
	sqlite3_stmt *st = per_source_rows(ctx);
	struct sampling_ticks ticks;
	char *why, *damage = db_lookup_text(ctx->db, quality_sql, "file", "damage");

	json_begin_array(w, "data_quality");
	while (st && sqlite3_step(st) == SQLITE_ROW)
		for (size_t i = 0; i < NCOLUMNS; i++)
			if (sqlite3_column_type(st, (int)i + 1) != SQLITE_NULL)
				json_row(w, (const char *)sqlite3_column_text(st, 0), per_source[i].column,
					 sqlite3_column_double(st, (int)i + 1), per_source[i].meaning);
	sqlite3_finalize(st);
	json_row(w, "record", "max_size.events_dropped",
		 (double)q(ctx, "record", "max_size.events_dropped"),
		 "events dropped at --max-size: they did not fit in the file");
	json_row(w, "record", "flight.events_dropped",
		 (double)q(ctx, "record", "flight.events_dropped"),
		 "events dropped by the flight recorder: older than its window");
	write_json_evicted(ctx);
	why = req_at_end_failed(ctx);
	if (why) /* 1: the count of such failures there can be */
		json_row(w, "req", "open_at_end.failed", 1, why);
	free(why);
	write_json_req_windows(ctx);
	write_json_sched_windows(ctx);
	write_json_syscall_windows(ctx);
	json_stat_note(ctx, &unclosed_note);
	json_stat_note(ctx, &unseen_note);
	sampling_ticks_read(ctx->db, &ticks);
	if (ticks.known) {
		json_row(w, "cpu", "ticks.due", ticks.due, "CPU sampling ticks due on busy CPUs:"
			 " the CPUs' sampling clocks over the period, less the host's idle time");
		json_row(w, "cpu", "ticks.missed", ticks.missed, ticks_meaning);
		json_row(w, "cpu", "ticks.missed_slack", ticks.slack, "missed ticks the count cannot"
			 " tell from none (the host's idle time is read from /proc/stat in hundredths"
			 " of a second per CPU): only those beyond are taken as missed");
	}
	json_row(w, "stacks", "samples.truncated", (double)q(ctx, "stacks", "samples.truncated"),
		 "samples whose stack hit the depth limit");
	json_row(w, "stacks", "samples.probably_truncated",
		 (double)q(ctx, "stacks", "samples.probably_truncated"),
		 "samples whose user stack does not reach a thread entry point");
	json_row(w, "stacks", "samples.error", (double)q(ctx, "stacks", "samples.error"),
		 "samples whose stack failed or was empty");
	json_row(w, "frames", "sampled.unresolved", (double)q(ctx, "frames", "sampled.unresolved"),
		 "sampled frames without a symbol");
	json_row(w, "frames", "sampled", (double)q(ctx, "frames", "sampled"),
		 "frames summed over all samples");
	if (q(ctx, "frames", "sampled.junk"))
		json_row(w, "frames", "sampled.junk", (double)q(ctx, "frames", "sampled.junk"),
			 "sampled return addresses in no mapping, dropped from the stacks");
	json_row(w, "file", "damaged", damage ? 1 : 0,
		 damage ? damage : "intact, end marker present");
	json_end_array(w);
	free(damage);
	report_quality_user_stacks(ctx);
}

int report_section_quality(const struct report_context *ctx)
{
	if (ctx->json) {
		write_json(ctx);
		return 0;
	}
	fprintf(ctx->out, "\nData quality\n");
	print_losses(ctx);
	print_dropped(ctx);
	print_missed_ticks(ctx);
	print_kernel_sums(ctx);
	print_req_at_end(ctx);
	print_req_windows(ctx);
	print_sched_windows(ctx);
	print_stat_note(ctx, &unseen_note);
	print_syscall_windows(ctx);
	print_evicted(ctx);
	print_stacks(ctx);
	report_quality_user_stacks(ctx);
	print_frames(ctx);
	print_format(ctx);
	print_file(ctx);
	print_sources(ctx);
	return 0;
}
