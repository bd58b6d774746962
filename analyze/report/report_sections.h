/* report_sections.h - the sections of the report, each in its own file,
 * and what they share. A section writes text to ctx->out, or, when
 * ctx->json is set, its member of the JSON report (docs/report-json.md).
 * Used by report_run.c and report_json.c. */
#ifndef ANALYZE_REPORT_SECTIONS_H
#define ANALYZE_REPORT_SECTIONS_H

#include <stdint.h>
#include <stdio.h>
#include <sqlite3.h>

#include "diagnose/diagnose.h"
#include "query/calls.h"
#include "query/callchains.h"
#include "query/folded.h"
#include "query/names.h"
#include "util/json_writer.h"
#include "util/log2_bucket.h"
#include "report.h"

struct report_context {
	sqlite3 *db;
	const struct report_options *opts;
	const struct report_scope *scope;
	FILE *out;
	struct json_writer *json;     /* NULL: text */
	const struct callchains *cc;  /* every stack as functions */
	const struct names *names;
	const struct selection *sel;  /* the selected sample groups */
	const struct diagnosis *diag;
	const struct calls *calls;    /* the scope's system calls, read once */
	const struct latency *latency; /* the latency section's model, or NULL */
	struct request_preload *reqs;  /* the requests read before the diagnosis, or NULL */
	uint64_t samples;         /* samples selected */
	double freq_hz;           /* sampling frequency, 0 if unknown */
	char *sources;            /* META sources, or NULL */
	char capture_sha256[65];  /* hex, "" if the capture could not be read */
};

/* Runs every section on the model (report_run.c); json NULL for text.
 * 0 or -1. */
int report_model_render(const struct report_model *m, FILE *out, struct json_writer *json);

/* The latency section's numbers (report_latency.c), computed once per
 * model after the diagnosis; NULL on failure (reported). */
struct latency *report_latency_load(const struct report_context *ctx);
void report_latency_free(struct latency *l);

/* Estimated CPU time of n samples ("-" if the frequency is unknown). */
const char *report_cpu_time(const struct report_context *ctx, char *buf, size_t len,
			    uint64_t n);

/* 1 if META sources names the source (or its table has rows). */
int report_source_on(const struct report_context *ctx, const char *source);

/* Prints the one-line "no data" note of a text section. */
void report_none(const struct report_context *ctx, const char *what, const char *source);

/* Prepares sql (with report_scope_sql conditions) and binds the scope. */
sqlite3_stmt *report_prepare(const struct report_context *ctx, const char *sql);

/* A META value (malloc'd) or NULL. */
char *report_meta(const struct report_context *ctx, const char *key);

int report_section_summary(const struct report_context *ctx);    /* report_summary.c */
int report_section_method(const struct report_context *ctx);     /* report_method.c */
int report_section_latency(const struct report_context *ctx);    /* report_latency.c */
int report_section_cpu(const struct report_context *ctx);        /* report_functions.c */
int report_section_stacks(const struct report_context *ctx);     /* report_stacks.c */
int report_stacks_json(const struct report_context *ctx);        /* report_stacks.c */
int report_section_io(const struct report_context *ctx);         /* report_io.c */
int report_section_contention(const struct report_context *ctx); /* report_contention.c */
int report_section_probes(const struct report_context *ctx);     /* report_probes.c */
int report_section_runtimes(const struct report_context *ctx);   /* report_runtimes.c */
int report_section_threads(const struct report_context *ctx);    /* report_threads.c */
int report_section_wakeups(const struct report_context *ctx);    /* report_wakeups.c */
int report_section_evidence(const struct report_context *ctx);   /* report_summary.c */
int report_section_quality(const struct report_context *ctx);    /* report_quality.c */
/* The user stacks part of the data quality, for captures with stack
 * copies: text lines, or the JSON member "user_stacks" (report_unwind.c). */
int report_quality_user_stacks(const struct report_context *ctx);
int report_section_reproduce(const struct report_context *ctx);  /* report_reproduce.c */

/* Sets ctx->capture_sha256: of the input if it is a capture, else of the
 * database's source capture if it is still there, same size (report_reproduce.c). */
void report_capture_hash(struct report_context *ctx);

/* The requests' JSON histogram (util/log2_bucket.h): report_hist_add adds
 * count values of d and widens [*lo, *hi], the buckets in use
 * (report_latency.c). */
void report_hist_add(uint64_t *buckets, int *lo, int *hi, int64_t d, uint64_t count);

/* The spans of the requests read, for report_request_dominant, and the
 * slow path's candidates (free with report_requests_read_free). */
struct request_read;
void report_requests_read_free(struct request_read *r);

/* The report's one read of the scope's requests, made before the
 * diagnosis (a scan of the requests table is 0.7-1.4 s for the 4.8M of a
 * 60 s default recording). Of the requests overlapping the scope's
 * window: their count, total and histogram of service times (NULL as 0),
 * the service times themselves for the percentiles (ns), and, with
 * want_spans, their spans and the slowest SLOW_PATH_MAX of them in the
 * slow path's order; and the requests started in each window of windows
 * (its base, width and n set by the caller; n 0: none), which the spike
 * rule sums.
 *
 * Memory is bounded by report_requests_memory(): service times and spans
 * beyond it are not kept; the percentiles and the dominant component then
 * read the table again (rank_select.h; the spans sorted by thread, merged
 * with thread_state_rows sorted the same way). 0 or -1 (free p with
 * report_requests_preload_free either way). */
struct rank_select;
struct request_weight;
struct request_preload {
	int valid;
	uint64_t n;                       /* requests overlapping the window */
	int64_t total;                    /* their service time */
	/* Requests followed in the req source's windows (request_windows,
	 * format 1.10): each weighs its window's period over its length. */
	struct request_weight *weights;   /* by window start; NULL: none */
	size_t nweights;
	double wcount, wtotal;            /* the weighted count and service time */
	struct weighted_ns *wns;          /* each request's service time and weight */
	size_t nwns, capwns;
	int wns_over;                     /* past the memory: weighted percentiles unknown */
	uint64_t hist[LOG2_BUCKETS];
	int hist_lo, hist_hi;
	struct rank_select *ns;
	struct request_read *spans;       /* with want_spans */
	struct request_windows windows;
};
int report_requests_preload(const struct report_context *ctx, int want_spans,
			    struct request_preload *p);
void report_requests_preload_free(struct request_preload *p);

/* Bytes the report may hold of the requests: 256 MiB, or the environment's
 * PERFCAP_REPORT_REQUEST_BYTES. */
size_t report_requests_memory(void);

/* The values at 0-based positions pos[0..k) (k <= 8) of p's service times
 * in ascending order, into out; the table is read again when p did not
 * keep them all. 0 or -1 (reported). */
int report_requests_ranks(const struct report_context *ctx, struct request_preload *p,
			  const uint64_t *pos, size_t k, int64_t *out);

/* With p->weights: the weighted percentiles pct[0..k) (the least service
 * time whose requests, with the faster ones, weigh at least pct% of all)
 * into out. 0, or -1 when p did not keep them all (p->wns_over) or out of
 * memory. */
int report_requests_weighted_ranks(struct request_preload *p, const int *pct, size_t k,
				   int64_t *out);

/* The slow path's candidates (any order), for slow_path_begin; NULL and 0
 * without spans. */
struct slow_candidate;
const struct slow_candidate *report_requests_candidates(const struct request_read *r, size_t *n);

/* The dominant component of the requests read into spans into buf, e.g.
 * "socket wait 85% (unattributed 3%)"; total_ns: their service time. The
 * rows it reads go to the slow path's walk too (NULL: none); *walked says
 * whether they did. -1 if unknown (no spans: no sched source), -2 on a
 * database error (reported). */
struct slow_walk;
int report_request_dominant(const struct report_context *ctx, struct request_read *spans,
			    int64_t total_ns, struct slow_walk *walk, int *walked,
			    char *buf, size_t len);

#endif /* ANALYZE_REPORT_SECTIONS_H */
