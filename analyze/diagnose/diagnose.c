/* diagnose.c - runs the diagnosis rules on a report's scope, ranks the
 * causes, sets the confidence from data quality and writes the summary
 * (diagnose.h says how causes are scored and ranked). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/event_sources.h"
#include "db/db.h"
#include "diagnose.h"
#include "query/host_cpu.h"
#include "util/fmt.h"

#define LOST_MEDIUM 0.01
#define LOST_LOW    0.10

static int source_recorded(sqlite3 *db, const char *sources, const char *name)
{
	char list[512];

	if (sources) { /* the recorder's own list, when the capture has one */
		char needle[64];
		snprintf(list, sizeof(list), ",%s,", sources);
		snprintf(needle, sizeof(needle), ",%s,", name);
		return strstr(list, needle) != NULL;
	}
	return db_lookup_int(db, "SELECT value FROM quality WHERE source = ?1 AND key = 'records'",
			     name, NULL, 0) > 0;
}

static void set_sources(struct diag_input *in)
{
	char *sources = db_lookup_text(in->db, "SELECT value FROM meta WHERE key = ?1",
				       "sources", NULL);

	in->has_cpu = in->samples > 0 || source_recorded(in->db, sources, "cpu");
	in->has_sched = source_recorded(in->db, sources, "sched");
	in->has_syscall = 0;
	for (size_t i = 0; i < event_sources_len && !in->has_syscall; i++)
		in->has_syscall = event_sources[i].writes_syscalls &&
				  source_recorded(in->db, sources, event_sources[i].name);
	in->has_block = source_recorded(in->db, sources, "block");
	in->has_net = source_recorded(in->db, sources, "net");
	in->has_lock = source_recorded(in->db, sources, "lock");
	in->has_mem = source_recorded(in->db, sources, "mem");
	in->has_waits = source_recorded(in->db, sources, "waits");
	in->has_req = source_recorded(in->db, sources, "req");
	free(sources);
}

static double rank_score(const struct diag_cause *c)
{
	return c->rank_score > 0 ? c->rank_score : c->score;
}

static int cause_order(const void *pa, const void *pb)
{
	const struct diag_cause *a = pa, *b = pb;

	if (a->rank_first != b->rank_first)
		return b->rank_first - a->rank_first;
	if (a->rank_last != b->rank_last)
		return a->rank_last - b->rank_last;
	if (rank_score(a) != rank_score(b))
		return rank_score(a) > rank_score(b) ? -1 : 1;
	return strcmp(a->kind, b->kind);
}

/* Book 12.2: a thread that waits for a CPU about as long as it runs is
 * slowed by the competition, not by its code: CPU contention ranks above
 * compute-bound when its score is at least 0.8 times compute-bound's. */
static void contention_over_compute(struct diagnosis *d)
{
	struct diag_cause *bound = NULL, *contention = NULL;

	for (int i = 0; i < d->ncauses; i++) {
		if (strcmp(d->causes[i].kind, "cpu_bound") == 0)
			bound = &d->causes[i];
		else if (strcmp(d->causes[i].kind, "cpu_contention") == 0)
			contention = &d->causes[i];
	}
	/* only ever lowers cpu_bound: one far below the contention must not be
	 * lifted to just under it, above causes that explain more */
	if (bound && contention && contention->score >= 0.8 * bound->score &&
	    rank_score(bound) >= contention->score)
		bound->rank_score = contention->score * 0.99;   /* its score stays true */
}

/* Samples taken inside a process's GC pauses are the collector's work
 * (or the process stopped by it): when most of the process's samples
 * were, its hot function is the collector's and GC is the cause, so
 * gc_pauses ranks above a cpu_bound verdict on the same process. */
static void gc_over_compute(struct diagnosis *d)
{
	for (int i = 0; i < d->ncauses; i++) {
		struct diag_cause *bound = &d->causes[i];
		int64_t pid = -1;

		if (strcmp(bound->kind, "cpu_bound") != 0)
			continue;
		for (int f = 0; f < bound->subject.nfields; f++)
			if (strcmp(bound->subject.fields[f].name, "pid") == 0)
				pid = bound->subject.fields[f].i;
		for (int j = 0; j < d->ncauses; j++) {
			const struct diag_cause *gc = &d->causes[j];
			int64_t gc_pid = -2, inside = 0, samples = 0;

			if (strcmp(gc->kind, "gc_pauses") != 0)
				continue;
			for (int f = 0; f < gc->subject.nfields; f++) {
				if (strcmp(gc->subject.fields[f].name, "pid") == 0)
					gc_pid = gc->subject.fields[f].i;
				else if (strcmp(gc->subject.fields[f].name,
						"cpu_samples_in_pauses") == 0)
					inside = gc->subject.fields[f].i;
				else if (strcmp(gc->subject.fields[f].name, "cpu_samples") == 0)
					samples = gc->subject.fields[f].i;
			}
			if (gc_pid == pid && samples > 0 && 2 * inside >= samples &&
			    rank_score(bound) >= gc->score)
				bound->rank_score = gc->score * 0.99;   /* its score stays true */
		}
	}
}

static void not_checked(const struct diag_input *in, struct diagnosis *d)
{
	if (!in->has_sched)
		diag_caveat(d, "source 'sched' not recorded: run-queue, disk, network and sleep"
			    " waits not checked (perfcap-record -e sched)");
	if (!in->has_syscall && !in->has_req)
		diag_caveat(d, "no system call source recorded: futex locks and requests not"
			    " checked (perfcap-record -e syscall)");
	else if (!in->has_syscall && !in->has_waits)
		diag_caveat(d, "no system call source recorded: futex locks not checked"
			    " (perfcap-record -e waits or -e syscall)");
	if (!in->has_cpu)
		diag_caveat(d, "source 'cpu' not recorded: hot functions not checked");
}

/* Events the recorder dropped on purpose (--max-size, flight recorder). */
static void caveat_dropped(const struct diag_input *in, struct diagnosis *d)
{
	static const char sql[] = "SELECT value FROM quality WHERE source = 'record' AND key = ?1";
	int64_t max_size = db_lookup_int(in->db, sql, "max_size.events_dropped", NULL, 0);
	int64_t flight = db_lookup_int(in->db, sql, "flight.events_dropped", NULL, 0);

	if (max_size > 0)
		diag_caveat(d, "%lld events were dropped at --max-size (the file was full):"
			    " the end of the run is missing", (long long)max_size);
	if (flight > 0)
		diag_caveat(d, "%lld events older than the flight recorder's window were"
			    " dropped: totals cover the window only", (long long)flight);
}

/* Time a hypervisor gave to other guests while this machine had work
 * (STATS host.cpu.steal_ns): no event sees it, and it stretches what ran
 * then, so CPU time and waits for a CPU include it. Said when it is
 * measured (host_cpu_measured_steal) and notable (HOST_CPU_STEAL_NOTABLE,
 * the share below which causes are not reported either). Returns 1 when
 * the main cause is about CPU time. */
static int caveat_steal(const struct diag_input *in, struct diagnosis *d)
{
	struct host_cpu_time t;
	double share;
	const char *main_kind = d->ncauses ? d->causes[0].kind : "";

	host_cpu_time_read(in->db, &t);
	share = host_cpu_measured_steal(&t);
	if (isnan(share) || share < HOST_CPU_STEAL_NOTABLE)
		return 0;
	diag_caveat(d, "the hypervisor gave %.0f%% of this machine's CPU time to other guests"
		    " while it had work (steal): CPU times and waits for a CPU include it",
		    100 * share);
	return strcmp(main_kind, "cpu_bound") == 0 || strcmp(main_kind, "cpu_contention") == 0;
}

/* Busy CPU sampling ticks at which no sample was taken (STATS
 * cpu.ticks.missed of cpu.ticks.due; perfcap-record(1)): CPU times and
 * shares are short by about that share, unevenly. Said from the share at
 * which steal is (HOST_CPU_STEAL_NOTABLE: both hide CPU time the same
 * way). Returns 1 when the main cause is about CPU time. */
static int caveat_missed_ticks(const struct diag_input *in, struct diagnosis *d)
{
	const char *main_kind = d->ncauses ? d->causes[0].kind : "";
	struct sampling_ticks t;
	double share;

	sampling_ticks_read(in->db, &t);
	share = sampling_ticks_missed_share(&t);
	if (isnan(share) || share < HOST_CPU_STEAL_NOTABLE)
		return 0;
	diag_caveat(d, "%.0f%% of the CPU sampling ticks on busy CPUs took no sample (a virtual"
		    " CPU the host did not run, most likely): CPU times and shares are short,"
		    " not necessarily evenly", 100 * share);
	return strcmp(main_kind, "cpu_bound") == 0 || strcmp(main_kind, "cpu_contention") == 0;
}

/* Lowers the confidence for the losses and sampling of the sources the
 * main cause rests on; notes losses elsewhere as caveats. */
static void rate_quality(const struct diag_input *in, struct diagnosis *d)
{
	sqlite3_stmt *st = db_prepare(in->db, "SELECT source, COALESCE(lost_share, 0),"
				      " sampled_out + rate_capped, unmatched, expired FROM data_quality");
	const char *main_sources = d->ncauses ? d->causes[0].sources : "";
	int level = 0;                            /* 0 high, 1 medium, 2 low */

	while (st && sqlite3_step(st) == SQLITE_ROW) {
		const char *src = (const char *)sqlite3_column_text(st, 0);
		double lost = sqlite3_column_double(st, 1);
		int64_t skipped = sqlite3_column_int64(st, 2);
		int used = src && main_sources && strstr(main_sources, src) != NULL;
		if (!src)
			continue;
		if (lost > LOST_MEDIUM) {
			diag_caveat(d, "source '%s' lost %.1f%% of its events: its totals are low",
				    src, 100 * lost);
			if (used)
				level = level > (lost > LOST_LOW ? 2 : 1) ? level :
					(lost > LOST_LOW ? 2 : 1);
		}
		if (skipped > 0) {
			diag_caveat(d, "source '%s' left out %lld events by --sample/--rate-cap:"
				    " durations summed from it are lower bounds", src,
				    (long long)skipped);
			if (used && level < 1)
				level = 1;
		}
	}
	sqlite3_finalize(st);
	caveat_dropped(in, d);
	if (caveat_steal(in, d) && level < 1)
		level = 1;
	if (caveat_missed_ticks(in, d) && level < 1)
		level = 1;
	if (d->ncauses && strcmp(d->causes[0].kind, "cpu_bound") == 0 && in->samples < 200) {
		diag_caveat(d, "only %llu CPU samples: shares are approximate",
			    (unsigned long long)in->samples);
		if (level < 1)
			level = 1;
	}
	if (d->ncauses && d->causes[0].inferred && level < 1) {
		diag_caveat(d, "the main cause is inferred from a proxy (%s), not measured",
			    d->causes[0].sources);
		level = 1;
	}
	if (d->unexplained > level)
		level = d->unexplained;
	if (d->ncauses && d->causes[0].score < 0.2 && level < 1) {
		diag_caveat(d, "the main cause explains less than 20%% of its threads' time");
		level = 1;
	}
	d->confidence = level == 0 ? "high" : level == 1 ? "medium" : "low";
}

const char *diag_key_text(const struct diag_cause *c, char *buf, size_t len)
{
	if (strcmp(c->key_unit, "ns") == 0)
		return fmt_duration_ns(buf, len, (uint64_t)c->key_value);
	if (strcmp(c->key_unit, "percent") == 0)
		snprintf(buf, len, "%.1f%%", c->key_value);
	else
		snprintf(buf, len, "%.0f", c->key_value);
	return buf;
}

static void write_summary(const struct diag_input *in, struct diagnosis *d)
{
	char *p = d->summary, key[FMT_BUF], a[FMT_BUF];
	size_t left = sizeof(d->summary);
	int n;

	if (d->ncauses == 0) {
		uint64_t run = 0, runq = 0, blocked = 0, obs = 0;
		for (size_t i = 0; i < in->nthreads; i++) {
			run += in->threads[i].running;
			runq += in->threads[i].runnable;
			blocked += in->threads[i].blocked;
			obs += in->threads[i].observed;
		}
		n = snprintf(p, left, "No cause explains 5%% or more of the threads' time in scope"
			     " (%zu threads; running %.1f%%, runnable %.1f%%, blocked %.1f%% of"
			     " their observed time).", in->nthreads,
			     obs ? 100.0 * (double)run / (double)obs : 0,
			     obs ? 100.0 * (double)runq / (double)obs : 0,
			     obs ? 100.0 * (double)blocked / (double)obs : 0);
	} else {
		const struct diag_cause *c = &d->causes[0];
		n = snprintf(p, left, "Main cause: %s; it explains %.0f%% of the affected threads'"
			     " time (%s = %s).", c->title, 100 * c->score, c->key_name,
			     diag_key_text(c, key, sizeof(key)));
		if (n > 0 && (size_t)n < left && d->ncauses > 1) {
			p += n;
			left -= (size_t)n;
			n = snprintf(p, left, " Next: %s (%.0f%%).", d->causes[1].title,
				     100 * d->causes[1].score);
		}
	}
	if (n > 0 && (size_t)n < left && d->spike.found) {
		p += n;
		left -= (size_t)n;
		n = snprintf(p, left, " Worst window at +%s: %s %.1fx the window before;"
			     " I/O %.1fx, CPU %.1fx (verdict: %s).",
			     fmt_duration_ns(a, sizeof(a), d->spike.window_start -
					     in->scope->capture_start),
			     d->spike.latency_measure, d->spike.latency_ns /
			     (d->spike.baseline_latency_ns > 0 ? d->spike.baseline_latency_ns : 1),
			     d->spike.io_ratio, d->spike.cpu_ratio, d->spike.verdict);
	}
	if (n > 0 && (size_t)n < left && strcmp(d->confidence, "high") != 0) {
		p += n;
		left -= (size_t)n;
		snprintf(p, left, " Confidence %s: %s.", d->confidence,
			 d->ncaveats ? d->caveats[0] : "see data quality");
	}
}

int diagnose_run(sqlite3 *db, const struct report_scope *scope, double freq_hz,
		 const struct selection *sel, const struct callchains *cc,
		 const struct names *names, const struct calls *calls,
		 const struct request_windows *req_windows, struct diagnosis *d)
{
	struct diag_input in = { .db = db, .scope = scope, .freq_hz = freq_hz,
				 .samples = sel->samples, .sel = sel, .cc = cc, .names = names,
				 .calls = calls, .req_windows = req_windows };
	int (*const rules[])(const struct diag_input *, struct diagnosis *) = {
		diagnose_cpu_bound, diagnose_cpu_contention, diagnose_locks, diagnose_waits,
		diagnose_pool, diagnose_memory, diagnose_spike, diagnose_wakers, diagnose_gc,
	};
	int rc = 0;

	memset(d, 0, sizeof(*d));
	d->queued = -1;
	d->blocked_by_nr = calloc(CALLS_MAX_NR, sizeof(*d->blocked_by_nr));
	if (!d->blocked_by_nr)
		return -1;
	in.blocked_by_nr = d->blocked_by_nr;
	hmap_init(&in.thread_by_tid);
	set_sources(&in);
	in.window_ns = (uint64_t)db_query_int(db,
		"SELECT value FROM schema_info WHERE key = 'window_ns'", 1000000000);
	in.recorder_pid = (uint32_t)db_query_int(db, "SELECT CAST(value AS INTEGER) FROM meta"
						 " WHERE key = 'record.pid'", 0);
	if (diag_threads_load(&in, sel) < 0)
		rc = -1;
	for (size_t i = 0; rc == 0 && i < sizeof(rules) / sizeof(rules[0]); i++)
		rc = rules[i](&in, d);
	if (rc == 0) {
		contention_over_compute(d);
		gc_over_compute(d);
		qsort(d->causes, (size_t)d->ncauses, sizeof(d->causes[0]), cause_order);
		for (int i = 0; i < d->ncauses; i++)
			if (!d->causes[i].sources)
				d->causes[i].sources = "sched";
		rate_quality(&in, d);
		not_checked(&in, d);
		write_summary(&in, d);
	}
	hmap_free(&in.thread_by_tid);
	d->threads = in.threads;
	d->nthreads = in.nthreads;
	return rc;
}

void diagnose_free(struct diagnosis *d)
{
	free(d->blocked_by_nr);
	d->blocked_by_nr = NULL;
	free(d->threads);
	d->threads = NULL;
	d->nthreads = 0;
}
