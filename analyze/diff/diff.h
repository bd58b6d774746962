/* diff.h - "perfcap-analyze diff": compares a baseline (one run or a
 * group of runs) with a new run or group.
 *
 * diff_load.c (and diff_load_locks.c) read each run's database into named
 * series (diff_table.c), aligned across runs and builds by name, never by
 * address; diff_compare.c turns the two sides into findings with a test,
 * an effect size, a confidence interval and an impact (diff_counts.c,
 * diff_latency.c, diff_context.c), and into warnings when the sides were
 * not recorded alike (diff_warnings.c); diff_text.c and diff_json.c print
 * text, JSON and folded pairs; diff_rules.c parses and evaluates --fail-on
 * rules. */
#ifndef ANALYZE_DIFF_H
#define ANALYZE_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sqlite3.h>

#include "util/hashmap.h"

struct diff_spill;            /* diff_spill.h */

/* Latency series of one run a side are compared by the medians of
 * DIFF_BLOCKS blocks of consecutive calls (diff_latency.c), when a block
 * has at least DIFF_BLOCK_MIN calls. */
#define DIFF_BLOCKS    10
#define DIFF_BLOCK_MIN 20

/* One named series of a run: a count (and a sum of ns), or a list of
 * values (latencies in ns, per-window shares), in the order they were
 * loaded. A run's latencies end sorted (diff_run_load), their block
 * medians in recorded order taken first when asked (want_blocks). */
struct dseries {
	char     *key;
	uint64_t  count;
	double    sum;
	uint64_t *vals;
	size_t    n, cap;
	double   *block_median;   /* [DIFF_BLOCKS], or NULL */
};

/* Series by name; rows in insertion order. */
struct dtable {
	struct dseries *rows;
	size_t len, cap;
	struct hmap index;        /* (hash, probe) -> row + 1 */
};

void diff_table_init(struct dtable *t);
void diff_table_free(struct dtable *t);
/* The series named key, created empty if absent; NULL on out-of-memory. */
struct dseries *diff_table_get(struct dtable *t, const char *key);
const struct dseries *diff_table_find(const struct dtable *t, const char *key);
/* The k-th smallest (0-based) of v[0..n), reordering v; n > k. */
uint64_t diff_select(uint64_t *v, size_t n, size_t k);
/* The position of row s in t (stable: rows are only appended). */
int64_t diff_table_index(const struct dtable *t, const struct dseries *s);
/* Appends a value to s->vals. 0 or -1. */
int diff_series_push(struct dseries *s, uint64_t value);

/* Latency series keys start with these prefixes. */
#define DIFF_SYSCALL "syscall:"   /* syscall:COMM:NAME, one per call (ns) */
#define DIFF_PEER_WAIT "wait:"    /* wait:COMM:NAME, calls waiting on a peer (sockets, poll) */
#define DIFF_REQUEST "request:"   /* request:COMM, request_spans.service_ns */
#define DIFF_LOCK    "lock:"      /* lock:futex:SITE, lock:mutex:SITE, lock:kernel:FUNC */
#define DIFF_DEVICE  "device:"    /* device:NAME, queue + service ns per request */
#define DIFF_PROBE   "probe:"     /* probe:FUNCTION, one per call of a uprobed function (ns) */
#define DIFF_GC      "gc:"        /* gc:PROCESS:RUNTIME, one per GC pause (gc_pauses, ns) */

struct diff_run {
	const char *path;
	double   seconds;         /* capture duration */
	double   freq_hz;         /* CPU sampling frequency (0: unknown) */
	uint64_t samples;         /* CPU samples */
	uint64_t requests;        /* request_spans rows */
	char    *kernel, *hashes, *filters, *sampling, *command;
	char    *damage;          /* quality file/damage, "" when intact */
	double   loss_rate;       /* lost / (imported + lost), all sources */
	double   unmatched_rate;  /* unmatched / imported, all sources */
	double   symbol_miss_rate;/* unresolved sampled frames / sampled frames */
	double   stolen_share;    /* host_cpu_measured_steal (query/host_cpu.h): NAN when
				   * not recorded, or under a second of CPU time */
	double   missed_ticks;    /* sampling ticks that did not run / ticks due (STATS
				   * cpu.ticks.*): NAN when not recorded */
	struct dtable self;       /* function -> self samples */
	struct dtable total;      /* function -> samples with it on the stack */
	struct dtable stacks;     /* folded stack -> samples */
	struct dtable latency;    /* latency series (prefixes above) */
	struct dtable threads;    /* COMM:STATE -> ns per window (vals, parts per million) */
	struct dtable rates;      /* source -> records */
	/* latency values kept in memory at most (set before diff_run_load;
	 * 0: no limit); past it they go to spill (diff_spill.h) */
	uint64_t latency_max;
	int      want_blocks;     /* block medians needed (one run a side); set before too */
	uint64_t latency_values;  /* in memory */
	struct diff_spill *spill; /* NULL: every value in memory */
};

/* Adds latency value v to series s of run: in memory, or in its spill
 * past run->latency_max values (moving those kept so far). 0 or -1. */
int diff_latency_push(struct diff_run *run, struct dseries *s, uint64_t v);

/* Loads a run from an opened database (run zeroed but for latency_max and
 * want_blocks). 0 or -1 (reported). */
int diff_run_load(struct diff_run *run, sqlite3 *db, const char *path);
void diff_run_free(struct diff_run *run);

enum diff_norm { DIFF_PER_SECOND, DIFF_PER_REQUEST };

struct diff_options {
	double alpha;             /* false discovery rate (BH), default 0.01 */
	double min_effect;        /* minimum practical relative effect, default 0.10 */
	double min_impact_share;  /* minimum impact as a share of the exposure, default 0.01 */
	int    top;               /* findings listed in text output */
	int    all;               /* list non-significant findings too */
};

struct diff_finding {
	const char *kind;         /* function, syscall, lock, request, device,
				   * function_total, stack, thread, rate */
	char   *name;
	int     tier;             /* 1: where the time went (causes); 2: context */
	const char *unit;         /* unit of base/new: "ns/request", "ns/s", "ns", "share", "events/s" */
	double  base, new_;       /* normalized metric on each side */
	double  effect;           /* new / base - 1 (NAN when base is 0: appeared) */
	double  ci_low, ci_high;  /* 95% interval of effect */
	double  delta;            /* new_ - base */
	double  impact;           /* time added (ns) per second or per request; signed */
	double  p_value, q_value; /* raw and Benjamini-Hochberg adjusted */
	double  noise_floor;      /* smallest relative effect the data could detect */
	const char *test;
	int     appeared, disappeared, significant;
	/* latency series only */
	int     is_latency;
	uint64_t count_base, count_new;
	uint64_t p50[2], p90[2], p99[2];
	double  mean[2];
	double  p99_ratio, p99_lo, p99_hi, ks_d, auc;
	uint64_t hist[2][64];     /* values with 2^(k-1) < v <= 2^k in [k] (series_walk.h) */
	uint64_t hist_min[2], hist_max[2];
	int     rank;             /* 1.. among significant findings, 0 otherwise */
};

struct diff_result {
	enum diff_norm norm;
	double exposure[2];       /* seconds or requests per side */
	double seconds[2];
	uint64_t requests[2];
	size_t nruns[2];
	struct diff_finding *findings;  /* significant first, ranked */
	size_t nfindings, nsignificant;
	char **warnings;
	size_t nwarnings;
	int conditional;          /* the sides differ in how they were recorded */
	char summary[1024];
	const char *verdict;      /* "regression", "improvement", "mixed", "no significant change" */
	struct dtable folded[2];  /* merged folded stacks per side */
	struct diff_options opts;
};

/* Whether a finding is a regression: it appeared or its effect is
 * positive (more time per call, per request or per second). */
int diff_finding_adds_time(const struct diff_finding *f);

/* Compares base runs with new runs. 0 or -1 (out of memory, reported). */
int diff_compare(const struct diff_run *base, size_t nbase, const struct diff_run *new_,
		 size_t nnew, const struct diff_options *opts, struct diff_result *res);
void diff_result_free(struct diff_result *res);


/* Outputs (diff_text.c, diff_json.c). diff_json writes the document described in
 * docs/diff-json.md to out; 0 or -1 on a write error. */
int diff_text(const struct diff_result *res, FILE *out);
int diff_json(const struct diff_result *res, FILE *out, int pretty);
int diff_folded(const struct diff_result *res, FILE *out);

/* --fail-on rules (diff_rules.c). */
enum diff_rule_kind { RULE_FUNC, RULE_P99_REQUEST, RULE_P99_SYSCALL, RULE_P99_PROBE, RULE_LOCK,
		      RULE_ANY_SIGNIFICANT };

struct diff_rule {
	const char *text;         /* as given */
	enum diff_rule_kind kind;
	char  name[256];          /* function, syscall or lock site ("" = any) */
	double threshold;         /* relative, 0.05 for +5% */
};

/* Parses one rule; 0, or -1 with why (a static string) set. */
int diff_rule_parse(const char *text, struct diff_rule *rule, const char **why);

/* Whether rule matches res; when it does, a one-line reason into why. */
int diff_rule_check(const struct diff_rule *rule, const struct diff_result *res,
		    char *why, size_t len);

#endif /* ANALYZE_DIFF_H */
