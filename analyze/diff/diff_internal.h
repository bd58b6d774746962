/* diff_internal.h - what the parts of diff_compare share: the two sides
 * being compared, the findings under construction, and one entry point
 * per kind of data (diff_counts.c, diff_latency.c, diff_context.c) and for
 * the warnings (diff_warnings.c). Not part of the public contract
 * (diff.h). */
#ifndef ANALYZE_DIFF_INTERNAL_H
#define ANALYZE_DIFF_INTERNAL_H

#include <stddef.h>

#include "diff.h"

#define MIN_REQUESTS 20      /* per run, to normalize per request */

struct side {
	const struct diff_run *runs;
	size_t n;
	double exposure;          /* requests or seconds */
	double cpu_exposure;      /* sum of exposure * freq: samples per unit */
};

struct builder {
	struct diff_result *res;
	struct side s[2];
	size_t cap;
	int oom;
	int failed;               /* a spilled series could not be read (reported) */
	double request_ns;        /* the base side's request latencies, summed */
	uint64_t request_calls;   /* ... and counted (min_impact) */
};

double run_exposure(const struct diff_run *r, enum diff_norm norm);
double run_freq(const struct diff_run *r);

/* A new finding, appended to b->res (NULL and b->oom set on failure). */
struct diff_finding *new_finding(struct builder *b, const char *kind, const char *name,
				 int tier, const char *unit);

/* Relative effect and interval from a difference of means (or medians)
 * with its interval, relative to base; left NAN when base is 0. */
void relative(struct diff_finding *f, double base, double diff, double lo, double hi);

/* Appends a warning; conditional marks the comparison conditional. */
void warn(struct builder *b, int conditional, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

void compare_count_table(struct builder *b, const char *kind, int tier,
			 size_t table_offset, int by_function);   /* diff_counts.c */
void compare_latencies(struct builder *b);                        /* diff_latency.c */
void compare_threads(struct builder *b);                          /* diff_context.c */
void compare_rates(struct builder *b);                            /* diff_context.c */
void check_sides(struct builder *b);                              /* diff_warnings.c */

#endif /* ANALYZE_DIFF_INTERNAL_H */
