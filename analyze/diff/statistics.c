/* statistics.c - significance tests, intervals and multiple-comparison control
 * for diff (see statistics.h). Normal approximations throughout: diff compares
 * profiles with tens to millions of observations per side; where counts are
 * small the tests return large p-values rather than overclaim. */
#include <math.h>
#include <stdlib.h>

#include "statistics.h"

#define Z80 0.8416212335729143   /* one-sided 80% power */

double stats_normal_cdf(double z)
{
	return 0.5 * erfc(-z / sqrt(2.0));
}

double stats_normal_p(double z)
{
	if (isnan(z))
		return 1.0;
	return erfc(fabs(z) / sqrt(2.0));
}

double stats_two_proportion_z(uint64_t x1, uint64_t n1, uint64_t x2, uint64_t n2,
			      double *z)
{
	double p1, p2, pool, se, stat;

	if (z)
		*z = 0;
	if (n1 == 0 || n2 == 0)
		return 1.0;
	p1 = (double)x1 / (double)n1;
	p2 = (double)x2 / (double)n2;
	pool = (double)(x1 + x2) / (double)(n1 + n2);
	if (pool <= 0 || pool >= 1)
		return 1.0;
	se = sqrt(pool * (1 - pool) * (1.0 / (double)n1 + 1.0 / (double)n2));
	stat = (p2 - p1) / se;
	if (z)
		*z = stat;
	return stats_normal_p(stat);
}

double stats_rate_ratio(uint64_t c1, double e1, uint64_t c2, double e2,
			double *ratio, double *lo, double *hi)
{
	double n = (double)c1 + (double)c2, p0, expect, sd, dev, a, b, se;

	*ratio = *lo = *hi = NAN;
	if (e1 <= 0 || e2 <= 0)
		return 1.0;
	a = c1 ? (double)c1 : 0.5;
	b = c2 ? (double)c2 : 0.5;
	*ratio = c1 ? ((double)c2 / e2) / ((double)c1 / e1) : INFINITY;
	se = sqrt(1.0 / a + 1.0 / b);
	*lo = (b / e2) / (a / e1) * exp(-STATS_Z95 * se);
	*hi = (b / e2) / (a / e1) * exp(STATS_Z95 * se);
	if (n == 0)
		return 1.0;
	p0 = e2 / (e1 + e2);
	expect = n * p0;
	sd = sqrt(n * p0 * (1 - p0));
	dev = fabs((double)c2 - expect) - 0.5;
	if (dev < 0)
		dev = 0;
	return stats_normal_p(dev / sd);
}

void stats_mw_group(struct stats_mw *mw, size_t ca, size_t cb)
{
	double first, mid, t;

	first = (double)(mw->i + mw->j) + 1;
	t = (double)(ca + cb);
	mid = first + (t - 1) / 2;
	mw->r_b += mid * (double)cb;
	mw->tie_sum += t * t * t - t;
	mw->i += ca;
	mw->j += cb;
}

double stats_mw_finish(const struct stats_mw *mw, double *auc)
{
	double na = (double)mw->i, nb = (double)mw->j, n = na + nb, u, mu, var;

	*auc = 0.5;
	if (mw->i == 0 || mw->j == 0)
		return 1.0;
	u = mw->r_b - nb * (nb + 1) / 2;
	*auc = u / (na * nb);
	mu = na * nb / 2;
	var = na * nb / 12 * ((n + 1) - mw->tie_sum / (n * (n - 1)));
	if (var <= 0)
		return 1.0;
	return stats_normal_p((u - mu) / sqrt(var));
}

double stats_mann_whitney(const uint64_t *a, size_t na, const uint64_t *b, size_t nb,
			  double *auc)
{
	struct stats_mw mw = { 0 };
	size_t i = 0, j = 0;

	*auc = 0.5;
	if (na == 0 || nb == 0)
		return 1.0;
	/* walk both sorted arrays, giving each run of equal values its mid rank */
	while (i < na || j < nb) {
		uint64_t v = (j >= nb || (i < na && a[i] <= b[j])) ? a[i] : b[j];
		size_t ca = 0, cb = 0;

		while (i < na && a[i] == v) {
			i++;
			ca++;
		}
		while (j < nb && b[j] == v) {
			j++;
			cb++;
		}
		stats_mw_group(&mw, ca, cb);
	}
	return stats_mw_finish(&mw, auc);
}

static double ks_q(double lambda)
{
	double sum = 0;

	if (lambda < 0.2)
		return 1.0;
	for (int k = 1; k <= 100; k++) {
		double term = exp(-2.0 * k * k * lambda * lambda);

		sum += (k % 2 ? 2 : -2) * term;
		if (term < 1e-12)
			break;
	}
	return sum < 0 ? 0 : sum > 1 ? 1 : sum;
}

double stats_ks(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, double *p)
{
	size_t i = 0, j = 0;
	double d = 0;

	if (p)
		*p = 1.0;
	if (na == 0 || nb == 0)
		return 0;
	while (i < na && j < nb) {
		uint64_t v = a[i] < b[j] ? a[i] : b[j];
		double gap;

		while (i < na && a[i] == v)
			i++;
		while (j < nb && b[j] == v)
			j++;
		gap = fabs((double)i / (double)na - (double)j / (double)nb);
		if (gap > d)
			d = gap;
	}
	if (p)
		*p = stats_ks_p(d, na, nb);
	return d;
}

double stats_ks_p(double d, size_t na, size_t nb)
{
	double ne;

	if (na == 0 || nb == 0)
		return 1.0;
	ne = (double)na * (double)nb / ((double)na + (double)nb);
	return ks_q((sqrt(ne) + 0.12 + 0.11 / sqrt(ne)) * d);
}

/* Continued fraction of the regularized incomplete beta function
 * (modified Lentz's method). */
static double beta_cf(double a, double b, double x)
{
	const double tiny = 1e-300;
	double c = 1, d = 1 - (a + b) * x / (a + 1), h;

	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	h = d;
	for (int m = 1; m <= 300; m++) {
		double m2 = 2.0 * m, num, delta;

		num = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
		d = 1 + num * d;
		c = 1 + num / c;
		d = fabs(d) < tiny ? 1 / tiny : 1 / d;
		c = fabs(c) < tiny ? tiny : c;
		h *= d * c;
		num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
		d = 1 + num * d;
		c = 1 + num / c;
		d = fabs(d) < tiny ? 1 / tiny : 1 / d;
		c = fabs(c) < tiny ? tiny : c;
		delta = d * c;
		h *= delta;
		if (fabs(delta - 1) < 1e-14)
			break;
	}
	return h;
}

static double incomplete_beta(double a, double b, double x)
{
	double front;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log(1 - x));
	if (x < (a + 1) / (a + b + 2))
		return front * beta_cf(a, b, x) / a;
	return 1 - front * beta_cf(b, a, 1 - x) / b;
}

double stats_t_p(double t, double df)
{
	if (isnan(t) || df <= 0)
		return 1.0;
	if (isinf(t))
		return 0.0;
	return incomplete_beta(df / 2, 0.5, df / (df + t * t));
}

double stats_t_quantile95(double df)
{
	double lo = 0, hi = 1000;

	if (df <= 0)
		return INFINITY;
	for (int i = 0; i < 200; i++) {
		double mid = (lo + hi) / 2;

		if (stats_t_p(mid, df) > 0.05)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

static void mean_var(const double *v, size_t n, double *mean, double *var)
{
	double sum = 0, ss = 0;

	for (size_t i = 0; i < n; i++)
		sum += v[i];
	*mean = n ? sum / (double)n : 0;
	for (size_t i = 0; i < n; i++)
		ss += (v[i] - *mean) * (v[i] - *mean);
	*var = n > 1 ? ss / (double)(n - 1) : 0;
}

double stats_welch(const double *a, size_t na, const double *b, size_t nb,
		   double *diff, double *lo, double *hi)
{
	double ma, va, mb, vb, sa, sb, se, df, t, q;

	mean_var(a, na, &ma, &va);
	mean_var(b, nb, &mb, &vb);
	*diff = mb - ma;
	*lo = -INFINITY;
	*hi = INFINITY;
	if (na < 2 || nb < 2)
		return 1.0;
	sa = va / (double)na;
	sb = vb / (double)nb;
	se = sqrt(sa + sb);
	if (se == 0) {
		*lo = *hi = *diff;
		return *diff == 0 ? 1.0 : 0.0;
	}
	df = (sa + sb) * (sa + sb) /
	     (sa * sa / (double)(na - 1) + sb * sb / (double)(nb - 1));
	t = *diff / se;
	q = stats_t_quantile95(df);
	*lo = *diff - q * se;
	*hi = *diff + q * se;
	return stats_t_p(t, df);
}

struct ranked {
	double p;
	size_t index;
};

static int by_p(const void *x, const void *y)
{
	const struct ranked *a = x, *b = y;

	if (a->p != b->p)
		return a->p < b->p ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

void stats_bh_adjust(const double *p, double *q, size_t n)
{
	struct ranked *r = malloc(n * sizeof(*r));
	double running = 1.0;

	if (!r) {   /* no memory: Bonferroni, stricter than BH */
		for (size_t i = 0; i < n; i++)
			q[i] = fmin(1.0, p[i] * (double)n);
		return;
	}
	for (size_t i = 0; i < n; i++)
		r[i] = (struct ranked){ isnan(p[i]) ? 1.0 : p[i], i };
	qsort(r, n, sizeof(*r), by_p);
	for (size_t k = n; k-- > 0;) {
		double adj = r[k].p * (double)n / (double)(k + 1);

		if (adj < running)
			running = adj;
		q[r[k].index] = running > 1 ? 1 : running;
	}
	free(r);
}

size_t stats_quantile_rank(size_t n, double q)
{
	size_t rank;

	if (n == 0)
		return 0;
	rank = (size_t)ceil(q * (double)n);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return rank;
}

uint64_t stats_quantile(const uint64_t *v, size_t n, double q)
{
	return n ? v[stats_quantile_rank(n, q) - 1] : 0;
}

static size_t clamp_rank(double r, size_t n)
{
	if (r < 1)
		return 1;
	if (r > (double)n)
		return n;
	return (size_t)r;
}

void stats_quantile_ci_ranks(size_t n, double q, size_t *lo, size_t *hi)
{
	double half, center;

	*lo = *hi = 0;
	if (n == 0)
		return;
	center = q * (double)n;
	half = STATS_Z95 * sqrt((double)n * q * (1 - q));
	*lo = clamp_rank(floor(center - half), n);
	*hi = clamp_rank(ceil(center + half) + 1, n);
}

void stats_quantile_ci(const uint64_t *v, size_t n, double q, uint64_t *lo, uint64_t *hi)
{
	size_t rlo, rhi;

	*lo = *hi = 0;
	if (n == 0)
		return;
	stats_quantile_ci_ranks(n, q, &rlo, &rhi);
	*lo = v[rlo - 1];
	*hi = v[rhi - 1];
}

void stats_quantile_ratio_ci(const uint64_t *base, size_t nb, const uint64_t *new_,
			     size_t nn, double q, double *ratio, double *lo, double *hi)
{
	uint64_t blo, bhi, nlo, nhi;

	stats_quantile_ci(base, nb, q, &blo, &bhi);
	stats_quantile_ci(new_, nn, q, &nlo, &nhi);
	stats_quantile_ratio(stats_quantile(base, nb, q), blo, bhi, stats_quantile(new_, nn, q),
			     nlo, nhi, nb && nn, ratio, lo, hi);
}

void stats_quantile_ratio(uint64_t b, uint64_t blo, uint64_t bhi, uint64_t n, uint64_t nlo,
			  uint64_t nhi, int both, double *ratio, double *lo, double *hi)
{
	*ratio = b ? (double)n / (double)b : NAN;
	*lo = bhi ? (double)nlo / (double)bhi : NAN;
	*hi = blo ? (double)nhi / (double)blo : INFINITY;
	if (!both)
		*ratio = *lo = *hi = NAN;
}

double stats_rate_noise_floor(uint64_t c1, uint64_t c2)
{
	if (c1 == 0 || c2 == 0)
		return INFINITY;
	return (STATS_Z95 + Z80) * sqrt(1.0 / (double)c1 + 1.0 / (double)c2);
}

double stats_mean_noise_floor(double mean1, double se1, double se2)
{
	if (mean1 <= 0)
		return INFINITY;
	return (STATS_Z95 + Z80) * sqrt(se1 * se1 + se2 * se2) / mean1;
}
