/* test_stats.c - unit tests of analyze/diff/statistics.c against values computed by
 * hand (or with a statistics package) for small inputs. */
#include <criterion/criterion.h>
#include <math.h>

#include "diff/statistics.h"

#define near(x, want, tol) cr_expect(fabs((x) - (want)) <= (tol), \
	"%s = %.6g, expected %.6g (+- %g)", #x, (double)(x), (double)(want), (double)(tol))

Test(stats, normal)
{
	near(stats_normal_p(1.959964), 0.05, 1e-6);
	near(stats_normal_p(0), 1.0, 1e-12);
	near(stats_normal_cdf(0), 0.5, 1e-12);
	near(stats_normal_cdf(-1.0), 0.158655, 1e-6);
}

Test(stats, two_proportion)
{
	double z;

	near(stats_two_proportion_z(50, 100, 50, 100, &z), 1.0, 1e-12);
	near(z, 0, 1e-12);
	/* pooled 0.2, se = sqrt(0.2 * 0.8 * 0.02) */
	near(stats_two_proportion_z(10, 100, 30, 100, &z), 0.000407, 2e-6);
	near(z, 3.535534, 1e-5);
	stats_two_proportion_z(30, 100, 10, 100, &z);
	cr_expect(z < 0, "direction follows the second sample");
	near(stats_two_proportion_z(0, 0, 3, 10, NULL), 1.0, 0);
	near(stats_two_proportion_z(0, 10, 0, 10, NULL), 1.0, 0);
}

Test(stats, rate_ratio)
{
	double r, lo, hi, p;

	p = stats_rate_ratio(100, 1.0, 200, 1.0, &r, &lo, &hi);
	near(r, 2.0, 1e-12);
	near(lo, 2.0 * exp(-1.959964 * sqrt(0.015)), 1e-4);
	near(hi, 2.0 * exp(1.959964 * sqrt(0.015)), 1e-4);
	cr_expect(p < 1e-6, "p = %g", p);
	/* the same rate with twice the exposure is no change */
	p = stats_rate_ratio(100, 1.0, 200, 2.0, &r, &lo, &hi);
	near(r, 1.0, 1e-12);
	cr_expect(p > 0.9, "p = %g", p);
	cr_expect(lo < 1 && hi > 1);
	/* appeared: infinite ratio, finite interval */
	p = stats_rate_ratio(0, 1.0, 50, 1.0, &r, &lo, &hi);
	cr_expect(isinf(r) && isfinite(hi) && lo > 1, "r %g lo %g hi %g", r, lo, hi);
	cr_expect(p < 1e-6);
	near(stats_rate_ratio(5, 0, 5, 1, &r, &lo, &hi), 1.0, 0);
}

Test(stats, mann_whitney)
{
	uint64_t a[] = { 1, 2, 3, 4, 5, 6, 7, 8 }, b[] = { 11, 12, 13, 14, 15, 16, 17, 18 };
	uint64_t ties[] = { 5, 5, 5, 5 };
	double auc, p;

	p = stats_mann_whitney(a, 8, b, 8, &auc);
	near(auc, 1.0, 1e-12);
	/* U = 64, mu = 32, sigma = sqrt(64 * 17 / 12) */
	near(p, stats_normal_p(32 / sqrt(64.0 * 17 / 12)), 1e-9);
	p = stats_mann_whitney(b, 8, a, 8, &auc);
	near(auc, 0.0, 1e-12);
	p = stats_mann_whitney(a, 8, a, 8, &auc);
	near(auc, 0.5, 1e-12);
	near(p, 1.0, 1e-9);
	p = stats_mann_whitney(ties, 4, ties, 4, &auc);
	near(auc, 0.5, 1e-12);
	near(p, 1.0, 0);
	near(stats_mann_whitney(a, 0, b, 8, &auc), 1.0, 0);
}

Test(stats, ks)
{
	uint64_t a[] = { 1, 2, 3, 4 }, b[] = { 3, 4, 5, 6 }, c[] = { 10, 20, 30, 40 };
	double p;

	near(stats_ks(a, 4, b, 4, &p), 0.5, 1e-12);
	near(stats_ks(a, 4, c, 4, &p), 1.0, 1e-12);
	near(stats_ks(a, 4, a, 4, &p), 0.0, 1e-12);
	near(p, 1.0, 1e-12);
}

Test(stats, student_t)
{
	near(stats_t_p(2.228139, 10), 0.05, 1e-5);
	near(stats_t_quantile95(10), 2.228139, 1e-4);
	near(stats_t_quantile95(2), 4.302653, 1e-4);
	near(stats_t_p(0, 5), 1.0, 1e-9);
}

Test(stats, welch)
{
	double a[] = { 1, 2, 3 }, b[] = { 4, 5, 6 }, d, lo, hi, p;

	/* t = 3 / sqrt(2/3) = 3.674, df = 4 */
	p = stats_welch(a, 3, b, 3, &d, &lo, &hi);
	near(d, 3.0, 1e-12);
	near(p, 0.02131, 1e-4);
	near(hi - d, 2.776445 * sqrt(2.0 / 3), 1e-3);
	p = stats_welch(a, 3, a, 3, &d, &lo, &hi);
	near(p, 1.0, 1e-9);
	near(stats_welch(a, 1, b, 3, &d, &lo, &hi), 1.0, 0);
}

Test(stats, benjamini_hochberg)
{
	double p[] = { 0.01, 0.04, 0.03, 0.005 }, q[4];

	stats_bh_adjust(p, q, 4);
	near(q[0], 0.02, 1e-12);
	near(q[1], 0.04, 1e-12);
	near(q[2], 0.04, 1e-12);
	near(q[3], 0.02, 1e-12);
}

Test(stats, quantiles)
{
	uint64_t v[100], lo, hi;
	double r, rlo, rhi;

	for (int i = 0; i < 100; i++)
		v[i] = (uint64_t)i + 1;
	cr_expect_eq(stats_quantile(v, 4, 0.5), 2);
	cr_expect_eq(stats_quantile(v, 100, 0.99), 99);
	cr_expect_eq(stats_quantile(v, 10, 0.99), 10);
	stats_quantile_ci(v, 100, 0.5, &lo, &hi);
	cr_expect(lo < 50 && hi > 50 && lo >= 38 && hi <= 62, "[%lu, %lu]",
		  (unsigned long)lo, (unsigned long)hi);
	stats_quantile_ratio_ci(v, 100, v, 100, 0.5, &r, &rlo, &rhi);
	near(r, 1.0, 1e-12);
	cr_expect(rlo < 1 && rhi > 1);
}

Test(stats, noise_floor)
{
	near(stats_rate_noise_floor(10000, 10000), 2.8016 * sqrt(2e-4), 1e-3);
	cr_expect(isinf(stats_rate_noise_floor(0, 5)));
	near(stats_mean_noise_floor(100, 3, 4), 2.8016 * 5 / 100, 1e-3);
}
