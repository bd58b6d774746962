/* statistics.h - the statistics behind "perfcap-analyze diff": tests that fit
 * each kind of profile data, effect sizes with confidence intervals, and
 * control of multiple comparisons. Pure functions of their inputs (no I/O,
 * no randomness), unit tested in tests/analyze/test_stats.c.
 *
 * Conventions: p-values are two-sided; a test that has no data to decide
 * returns p = 1 (never "significant by default"); confidence intervals are
 * 95% (z = 1.959964) unless a function says otherwise. */
#ifndef ANALYZE_DIFF_STATISTICS_H
#define ANALYZE_DIFF_STATISTICS_H

#include <stddef.h>
#include <stdint.h>

#define STATS_Z95 1.959963984540054

/* Standard normal cumulative distribution. */
double stats_normal_cdf(double z);

/* Two-sided p-value of a standard normal statistic. */
double stats_normal_p(double z);

/* Two-proportion z-test (pooled): x1 of n1 against x2 of n2. Returns the
 * p-value; *z gets the statistic (positive when x2/n2 > x1/n1; may be
 * NULL). p = 1 when either n is 0 or the pooled proportion is 0 or 1. */
double stats_two_proportion_z(uint64_t x1, uint64_t n1, uint64_t x2, uint64_t n2,
			      double *z);

/* Comparison of two Poisson counts with different exposures (seconds,
 * requests): c1 events in exposure e1 against c2 in e2. The test is the
 * conditional one (c2 given c1 + c2 is binomial with p0 = e2 / (e1 + e2)),
 * with the normal approximation and a continuity correction. *ratio gets
 * (c2/e2) / (c1/e1) and [lo, hi] its 95% interval from the log rate ratio
 * (0.5 added to each count when one is 0, so the interval stays finite).
 * Returns the p-value. */
double stats_rate_ratio(uint64_t c1, double e1, uint64_t c2, double e2,
			double *ratio, double *lo, double *hi);

/* Mann-Whitney U test of a against b (each sorted ascending), normal
 * approximation with tie correction. Returns the p-value; *auc gets
 * P(b > a) + P(b = a) / 2 (0.5: no shift; above: b larger). */
double stats_mann_whitney(const uint64_t *a, size_t na, const uint64_t *b, size_t nb,
			  double *auc);

/* The same, a group of equal values at a time, for callers that walk
 * their own sorted streams: stats_mw_group with the group's count on each
 * side (in ascending order of value), then stats_mw_finish. */
struct stats_mw {
	double r_b, tie_sum;
	size_t i, j;              /* values seen on each side */
};
void stats_mw_group(struct stats_mw *mw, size_t ca, size_t cb);
double stats_mw_finish(const struct stats_mw *mw, double *auc);

/* Two-sample Kolmogorov-Smirnov of sorted a and b: returns D, the largest
 * distance between the two empirical distributions; *p (may be NULL) its
 * asymptotic p-value. */
double stats_ks(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, double *p);
/* The asymptotic p-value of D for samples of na and nb. */
double stats_ks_p(double d, size_t na, size_t nb);

/* Welch's t-test of two small samples (per-run values). Returns the
 * p-value (1 if either side has fewer than 2 values or both variances are
 * 0 with equal means; 0 if both variances are 0 and the means differ).
 * *diff gets mean(b) - mean(a) and [lo, hi] its 95% interval. */
double stats_welch(const double *a, size_t na, const double *b, size_t nb,
		   double *diff, double *lo, double *hi);

/* Student t distribution: two-sided p-value of t with df degrees of
 * freedom, and the two-sided 95% quantile. */
double stats_t_p(double t, double df);
double stats_t_quantile95(double df);

/* Benjamini-Hochberg: q[i] gets the adjusted p-value of p[i] (the false
 * discovery rate at which p[i] would be rejected). */
void stats_bh_adjust(const double *p, double *q, size_t n);

/* Nearest-rank quantile of sorted v (q in 0..1): v[ceil(q n) - 1]; 0 for
 * an empty array. Same rule as the schema's percentiles. */
uint64_t stats_quantile(const uint64_t *v, size_t n, double q);
/* Its 1-based rank, ceil(q n) within 1..n (0 when n is 0). */
size_t stats_quantile_rank(size_t n, double q);

/* Distribution-free 95% interval of the q-quantile of sorted v, from the
 * binomial distribution of ranks (normal approximation). */
void stats_quantile_ci(const uint64_t *v, size_t n, double q, uint64_t *lo, uint64_t *hi);
/* The 1-based ranks of that interval's ends (0 when n is 0). */
void stats_quantile_ci_ranks(size_t n, double q, size_t *lo, size_t *hi);

/* 95% interval of the ratio of two quantiles (new over base), each taken
 * at its own interval's ends: [lo_new / hi_base, hi_new / lo_base]. A
 * conservative, analytic interval. */
void stats_quantile_ratio_ci(const uint64_t *base, size_t nb, const uint64_t *new_,
			     size_t nn, double q, double *ratio, double *lo, double *hi);
/* The same from the quantiles (b, n) and interval ends already found;
 * both: neither side is empty. */
void stats_quantile_ratio(uint64_t b, uint64_t blo, uint64_t bhi, uint64_t n, uint64_t nlo,
			  uint64_t nhi, int both, double *ratio, double *lo, double *hi);

/* Smallest relative change of a Poisson rate that a test at the 5% level
 * detects with 80% power given c1 and c2 events (the noise floor of a
 * count comparison): (1.96 + 0.84) * sqrt(1/c1 + 1/c2), as a fraction;
 * +infinity when either count is 0. */
double stats_rate_noise_floor(uint64_t c1, uint64_t c2);

/* The same for a difference of means with standard errors se1 and se2,
 * relative to mean1: (1.96 + 0.84) * sqrt(se1^2 + se2^2) / mean1. */
double stats_mean_noise_floor(double mean1, double se1, double se2);

#endif /* ANALYZE_DIFF_STATISTICS_H */
