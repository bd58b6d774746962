/* test_diff_parts.c - parts of diff tested on data built in memory (no
 * capture needed): the warnings that the sides served different request
 * loads and that their samplers missed different shares of ticks, whose
 * thresholds are --min-effect; diff_select, which takes the
 * block medians; and the sorted walk of a series, against the array
 * functions of statistics.c it must agree with to the last bit. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff/diff.h"
#include "diff/series_walk.h"
#include "diff/statistics.h"

static struct diff_run run(const char *path, double seconds, uint64_t requests)
{
	struct diff_run r = {
		.path = path, .seconds = seconds, .freq_hz = 100, .requests = requests,
		.kernel = strdup(""), .hashes = strdup(""), .filters = strdup(""),
		.sampling = strdup(""), .command = strdup(""), .damage = strdup(""),
		.stolen_share = NAN, .missed_ticks = NAN,
	};

	diff_table_init(&r.self);
	diff_table_init(&r.total);
	diff_table_init(&r.stacks);
	diff_table_init(&r.latency);
	diff_table_init(&r.threads);
	diff_table_init(&r.rates);
	return r;
}

/* Whether diff_compare of a and b (one run a side, freed here) warns with
 * text in it, under min_effect; *conditional: the comparison was. */
static int warns(struct diff_run a, struct diff_run b, double min_effect, const char *text,
		 int *conditional)
{
	struct diff_options opts = { .alpha = 0.01, .min_effect = min_effect };
	struct diff_result res;
	int found = 0;

	cr_assert_eq(diff_compare(&a, 1, &b, 1, &opts, &res), 0);
	for (size_t i = 0; i < res.nwarnings; i++)
		found |= strstr(res.warnings[i], text) != NULL;
	*conditional = res.conditional;
	diff_result_free(&res);
	diff_run_free(&a);
	diff_run_free(&b);
	return found;
}

/* Whether diff_compare of one run a side warns about the request load. */
static int load_warning(uint64_t base_requests, uint64_t new_requests, double min_effect,
			int *conditional)
{
	return warns(run("a", 2.0, base_requests), run("b", 2.0, new_requests), min_effect,
		     "served requests at different rates", conditional);
}

Test(diff_warnings, request_rates_apart_by_more_than_min_effect)
{
	int conditional;

	cr_expect(!load_warning(10000, 10500, 0.10, &conditional), "5%% apart: same load");
	cr_expect(!conditional);
	cr_expect(load_warning(10000, 5800, 0.10, &conditional), "72%% apart");
	cr_expect(conditional, "a different load makes the comparison conditional");
	cr_expect(load_warning(10000, 11500, 0.10, &conditional), "15%% apart, min-effect 10%%");
	cr_expect(!load_warning(10000, 11500, 0.20, &conditional), "15%% apart, min-effect 20%%");
	/* too few requests to normalize per request: per second, no check */
	cr_expect(!load_warning(10, 5, 0.10, &conditional));
}

/* Whether diff_compare warns about missed sampling ticks, with these
 * shares (NAN: not recorded) and min-effect 10%. */
static int ticks_warning(double base_missed, double new_missed, int *conditional)
{
	struct diff_run a = run("a", 2.0, 10000), b = run("b", 2.0, 10000);

	a.missed_ticks = base_missed;
	b.missed_ticks = new_missed;
	return warns(a, b, 0.10, "sampling ticks did not run", conditional);
}

/* The case met: 22% of one run's busy ticks against 3.5% of the other's
 * (CPU times 24% apart by the shares alone; diff read +99% for identical
 * code). Shares whose CPU times stay within
 * min-effect of each other, and captures without the counts, say
 * nothing. */
Test(diff_warnings, missed_ticks_that_move_cpu_time_by_more_than_min_effect)
{
	int conditional;

	cr_expect(ticks_warning(0.22, 0.035, &conditional), "22%% against 3.5%%");
	cr_expect(conditional, "the comparison is conditional");
	cr_expect(ticks_warning(0.02, 0.20, &conditional), "either side");
	cr_expect(!ticks_warning(0.03, 0.08, &conditional), "CPU times 5%% apart");
	cr_expect(!conditional);
	cr_expect(!ticks_warning(0.30, 0.30, &conditional), "the same share on both");
	cr_expect(!ticks_warning(NAN, 0.50, &conditional), "not recorded on one side");
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* diff_select against a sort: every rank of arrays with many ties, few
 * ties, sorted and reversed input. */
Test(diff_table, select_is_the_sorted_rank)
{
	enum { N = 257 };
	uint64_t v[N], sorted[N], work[N];
	unsigned seed = 7;

	for (int shape = 0; shape < 4; shape++) {
		for (size_t i = 0; i < N; i++) {
			seed = seed * 1103515245u + 12345u;
			v[i] = shape == 0 ? seed % 5 : shape == 1 ? seed : shape == 2 ? i : N - i;
		}
		memcpy(sorted, v, sizeof(v));
		qsort(sorted, N, sizeof(uint64_t), by_value);
		for (size_t k = 0; k < N; k++) {
			memcpy(work, v, sizeof(v));
			cr_expect_eq(diff_select(work, N, k), sorted[k], "shape %d rank %zu", shape, k);
		}
	}
	cr_expect_eq(diff_select((uint64_t[]){ 42 }, 1, 0), 42);
}

/* Both sides of values with ties, each cut into runs of unequal sizes
 * (sorted each, as a loaded run is): the walk's Mann-Whitney, KS, mean,
 * quantiles with their intervals, histogram and per-run medians equal
 * what the array functions give on the pooled values. */
Test(series_walk, agrees_with_the_array_functions)
{
	enum { NA = 1000, NB = 700, RUNS = 3 };
	static uint64_t a[NA], b[NB], pa[NA], pb[NB];
	const size_t cuts[2][RUNS + 1] = { { 0, 100, 650, NA }, { 0, 400, 401, NB } };
	struct vsource src[2][RUNS];
	struct walk_side ws[2] = { { .runs = src[0], .nruns = RUNS },
				   { .runs = src[1], .nruns = RUNS } };
	struct walk_result wr;
	uint64_t *v[2] = { a, b }, *pool[2] = { pa, pb };
	size_t n[2] = { NA, NB };
	unsigned seed = 11;
	double auc, mean;

	for (size_t i = 0; i < NA; i++) {
		seed = seed * 1103515245u + 12345u;
		a[i] = 1000 + (seed >> 8) % 500;
	}
	for (size_t i = 0; i < NB; i++) {
		seed = seed * 1103515245u + 12345u;
		b[i] = 1100 + (seed >> 8) % 300;
	}
	for (int side = 0; side < 2; side++) {
		memcpy(pool[side], v[side], n[side] * sizeof(uint64_t));
		qsort(pool[side], n[side], sizeof(uint64_t), by_value);
		for (int r = 0; r < RUNS; r++) {
			size_t from = cuts[side][r], len = cuts[side][r + 1] - from;

			qsort(v[side] + from, len, sizeof(uint64_t), by_value);
			src[side][r] = (struct vsource){ .n = len, .vals = v[side] + from };
		}
		ws[side].rank[0] = stats_quantile_rank(n[side], 0.99);
		stats_quantile_ci_ranks(n[side], 0.99, &ws[side].rank[1], &ws[side].rank[2]);
	}
	cr_assert_eq(series_walk(ws, &wr), 0);
	cr_expect_eq(wr.mw_p, stats_mann_whitney(pa, NA, pb, NB, &auc));
	cr_expect_eq(wr.auc, auc);
	cr_expect_eq(wr.ks_d, stats_ks(pa, NA, pb, NB, NULL));
	for (int side = 0; side < 2; side++) {
		uint64_t lo, hi, h[64] = { 0 };

		mean = 0;
		for (size_t i = 0; i < n[side]; i++) {
			mean += (double)pool[side][i];
			h[walk_bucket(pool[side][i])]++;
		}
		cr_expect_eq(ws[side].n, n[side]);
		cr_expect_eq(ws[side].sum, mean);
		cr_expect_eq(ws[side].at[0], stats_quantile(pool[side], n[side], 0.99));
		stats_quantile_ci(pool[side], n[side], 0.99, &lo, &hi);
		cr_expect_eq(ws[side].at[1], lo);
		cr_expect_eq(ws[side].at[2], hi);
		cr_expect_eq(ws[side].min, pool[side][0]);
		cr_expect_eq(ws[side].max, pool[side][n[side] - 1]);
		cr_expect_arr_eq(ws[side].hist, h, sizeof(h));
		for (int r = 0; r < RUNS; r++) {
			size_t from = cuts[side][r], len = cuts[side][r + 1] - from;

			cr_expect_eq(src[side][r].median, stats_quantile(v[side] + from, len, 0.5),
				     "side %d run %d", side, r);
		}
	}
	cr_expect_eq(walk_bucket(0), 0);
	cr_expect_eq(walk_bucket(1), 0);
	cr_expect_eq(walk_bucket(2), 1);
	cr_expect_eq(walk_bucket(3), 2);
	cr_expect_eq(walk_bucket(1024), 10);
	cr_expect_eq(walk_bucket(1025), 11);
	cr_expect_eq(walk_bucket(UINT64_MAX), 63);
}
