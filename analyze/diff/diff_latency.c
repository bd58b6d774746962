/* diff_latency.c - latency distributions compared per system call,
 * peer wait, request series, lock, device, uprobed function and GC
 * pauses: percentiles, the median shift, its test, KS distance, the p99
 * ratio, and the time added per unit of exposure.
 *
 * The test: with several runs a side, Welch t on the per-run medians.
 * With one run a side, the calls of a run are not independent draws: a
 * server's requests come in phases (an event loop serving ten clients a
 * round, then three), so hundreds of thousands of requests make any
 * difference between two runs of the same load "significant" to a test
 * that counts each call. So a run's calls are cut, in the order they were
 * recorded, into DIFF_BLOCKS consecutive blocks (stretches of time, or of
 * connections), and Welch t compares the block medians: a change counts
 * only if it is larger than how much a run drifts within itself. Series
 * too short for blocks (fewer than DIFF_BLOCK_MIN calls a block) keep
 * Mann-Whitney U on the calls.
 *
 * Every statistic of a series but the block medians comes from one walk of
 * its values in ascending order on both sides (series_walk.c): from the
 * runs' sorted arrays, or from the temporary database of a run whose
 * values did not fit in memory (diff_spill.c), with the same answers. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff_internal.h"
#include "series_walk.h"
#include "statistics.h"

/* The one run of side, or NULL. */
static const struct diff_run *only_run(struct builder *b, int side)
{
	return b->s[side].n == 1 ? &b->s[side].runs[0] : NULL;
}

/* The medians of DIFF_BLOCKS consecutive blocks of run's values of key
 * (in recorded order) into out: taken at load for a run in memory, read
 * from the spill for the others. 0 when too few values or on a read
 * error. */
static size_t block_medians(struct builder *b, const struct diff_run *run, const char *key,
			    double *out)
{
	const struct dseries *row = run ? diff_table_find(&run->latency, key) : NULL;
	size_t per = row ? row->count / DIFF_BLOCKS : 0, rank = stats_quantile_rank(per, 0.5);
	uint64_t v;

	if (per < DIFF_BLOCK_MIN)
		return 0;
	if (!run->spill) {
		if (!row->block_median)
			return 0;
		memcpy(out, row->block_median, DIFF_BLOCKS * sizeof(double));
		return DIFF_BLOCKS;
	}
	for (size_t k = 0; k < DIFF_BLOCKS; k++) {
		if (diff_spill_block_rank(run->spill,
					  diff_table_index(&run->latency, row), k * per,
					  (k + 1) * per, rank, &v) < 0) {
			b->failed = 1;
			return 0;
		}
		out[k] = (double)v;
	}
	return DIFF_BLOCKS;
}

/* One run a side with enough calls: Welch t on block medians (see the
 * top). 1 when done. */
static int compare_blocks(struct builder *b, const char *key, struct diff_finding *f)
{
	double m[2][DIFF_BLOCKS], diff, lo, hi, mb = 0;

	if (block_medians(b, only_run(b, 0), key, m[0]) != DIFF_BLOCKS ||
	    block_medians(b, only_run(b, 1), key, m[1]) != DIFF_BLOCKS)
		return 0;
	for (size_t k = 0; k < DIFF_BLOCKS; k++)
		mb += m[0][k] / DIFF_BLOCKS;
	f->p_value = stats_welch(m[0], DIFF_BLOCKS, m[1], DIFF_BLOCKS, &diff, &lo, &hi);
	relative(f, mb, diff, lo, hi);
	f->noise_floor = mb > 0 ? (hi - lo) / 2 / STATS_Z95 * 2.8016 / mb : INFINITY;
	f->test = "Welch t on the medians of 10 consecutive blocks of each run";
	return 1;
}

/* ---- the sorted walk --------------------------------------------------- */

enum { R_P50, R_P90, R_P99, R_P99_LO, R_P99_HI, R_P50_LO, R_P50_HI };

/* The sources of key's values on side, in ws: one per run that has the
 * series (an in-memory run's sorted values, a spilled run's index), with
 * the ranks the walk must take; per_run gets each run's time per unit of
 * exposure, total_ns the sum of all. 0, or -1 out of memory. */
static int side_sources(struct builder *b, int side, const char *key, struct walk_side *ws,
			double *per_run, size_t *nruns, double *total_ns)
{
	struct vsource *src = calloc(b->s[side].n + 1, sizeof(*src));
	uint64_t n = 0;

	*nruns = 0;
	*total_ns = 0;
	ws->runs = src;
	ws->nruns = 0;
	if (!src) {
		b->oom = 1;
		return -1;
	}
	for (size_t i = 0; i < b->s[side].n; i++) {
		const struct diff_run *run = &b->s[side].runs[i];
		const struct dseries *row = diff_table_find(&run->latency, key);
		double e = run_exposure(run, b->res->norm);
		struct vsource *v = &src[ws->nruns];

		if (*nruns < 64 && e > 0)
			per_run[(*nruns)++] = row ? row->sum / e : 0;
		if (!row || !row->count)
			continue;
		*total_ns += row->sum;
		v->n = row->count;
		if (run->spill) {
			v->spill = run->spill;
			v->key_id = diff_table_index(&run->latency, row);
		} else {
			v->vals = row->vals;    /* sorted at load */
		}
		n += v->n;
		ws->nruns++;
	}
	ws->rank[R_P50] = stats_quantile_rank(n, 0.50);
	ws->rank[R_P90] = stats_quantile_rank(n, 0.90);
	ws->rank[R_P99] = stats_quantile_rank(n, 0.99);
	stats_quantile_ci_ranks(n, 0.99, &ws->rank[R_P99_LO], &ws->rank[R_P99_HI]);
	stats_quantile_ci_ranks(n, 0.50, &ws->rank[R_P50_LO], &ws->rank[R_P50_HI]);
	return 0;
}

static void free_sources(struct walk_side *ws)
{
	free(ws->runs);
	ws->runs = NULL;
}

/* The ratio of the q-quantiles (new over base) and its interval, from the
 * values the walk took at their ranks. */
static void quantile_ratio(const struct walk_side ws[2], int at, int lo, int hi,
			   double *ratio, double *rlo, double *rhi)
{
	stats_quantile_ratio(ws[0].at[at], ws[0].at[lo], ws[0].at[hi], ws[1].at[at],
			     ws[1].at[lo], ws[1].at[hi], ws[0].n && ws[1].n, ratio, rlo, rhi);
}

static const char *latency_kind(const char *key)
{
	if (strncmp(key, DIFF_SYSCALL, strlen(DIFF_SYSCALL)) == 0)
		return "syscall";
	if (strncmp(key, DIFF_REQUEST, strlen(DIFF_REQUEST)) == 0)
		return "request";
	if (strncmp(key, DIFF_LOCK, strlen(DIFF_LOCK)) == 0)
		return "lock";
	if (strncmp(key, DIFF_PEER_WAIT, strlen(DIFF_PEER_WAIT)) == 0)
		return "wait";
	if (strncmp(key, DIFF_PROBE, strlen(DIFF_PROBE)) == 0)
		return "probe";
	if (strncmp(key, DIFF_GC, strlen(DIFF_GC)) == 0)
		return "gc_pause";
	return "device";
}

static void compare_latency(struct builder *b, const char *key)
{
	const char *kind = latency_kind(key);
	int tier = strcmp(kind, "syscall") == 0 || strcmp(kind, "lock") == 0 ||
		   strcmp(kind, "probe") == 0 || strcmp(kind, "gc_pause") == 0 ? 1 : 2;
	double medians[2][64], per_run[2][64], total[2];
	size_t nmedians[2] = { 0, 0 }, nruns[2];
	struct walk_side ws[2] = { 0 };
	struct walk_result wr;
	struct diff_finding *f;

	for (int side = 0; side < 2; side++)
		if (side_sources(b, side, key, &ws[side], per_run[side], &nruns[side],
				 &total[side]) < 0)
			goto out;
	if (series_walk(ws, &wr) < 0) {
		b->failed = 1;
		goto out;
	}
	for (int side = 0; side < 2; side++)
		for (size_t i = 0; i < ws[side].nruns && nmedians[side] < 64; i++)
			medians[side][nmedians[side]++] = (double)ws[side].runs[i].median;
	f = new_finding(b, kind, strchr(key, ':') + 1, tier, "ns");
	if (!f)
		goto out;
	f->is_latency = 1;
	f->count_base = ws[0].n;
	f->count_new = ws[1].n;
	for (int side = 0; side < 2; side++) {
		f->mean[side] = ws[side].n ? ws[side].sum / (double)ws[side].n : 0;
		f->p50[side] = ws[side].at[R_P50];
		f->p90[side] = ws[side].at[R_P90];
		f->p99[side] = ws[side].at[R_P99];
		f->hist_min[side] = ws[side].min;
		f->hist_max[side] = ws[side].max;
		memcpy(f->hist[side], ws[side].hist, sizeof(f->hist[side]));
	}
	if (strcmp(kind, "request") == 0) {
		b->request_ns += ws[0].sum;
		b->request_calls += ws[0].n;
	}
	f->base = (double)f->p50[0];
	f->new_ = (double)f->p50[1];
	f->delta = f->new_ - f->base;
	/* time added per unit of exposure: calls per unit times time per call */
	f->impact = (b->s[1].exposure > 0 ? total[1] / b->s[1].exposure : 0) -
		    (b->s[0].exposure > 0 ? total[0] / b->s[0].exposure : 0);
	f->appeared = ws[0].n == 0 && ws[1].n > 0;
	f->disappeared = ws[0].n > 0 && ws[1].n == 0;
	quantile_ratio(ws, R_P99, R_P99_LO, R_P99_HI, &f->p99_ratio, &f->p99_lo, &f->p99_hi);
	f->ks_d = wr.ks_d;
	f->auc = wr.auc;
	if ((f->appeared || f->disappeared) && nruns[0] >= 2 && nruns[1] >= 2) {
		double diff, lo, hi;

		/* several runs a side: present in every run of one side, or in
		 * one run by chance? The per-run time says. */
		f->p_value = stats_welch(per_run[0], nruns[0], per_run[1], nruns[1], &diff,
					 &lo, &hi);
		f->noise_floor = NAN;   /* present on one side only: no floor to clear */
		f->test = "Welch t on per-run time (present on one side only)";
		if (f->disappeared)
			relative(f, f->base, -f->base, -f->base, -f->base);
	} else if (f->appeared || f->disappeared) {
		double r, lo, hi;

		f->p_value = stats_rate_ratio(ws[0].n, b->s[0].exposure, ws[1].n,
					      b->s[1].exposure, &r, &lo, &hi);
		f->noise_floor = NAN;   /* present on one side only: no floor to clear */
		f->test = "Poisson rate ratio of calls";
		if (f->disappeared)
			relative(f, f->base, -f->base, -f->base, -f->base);
	} else if (nmedians[0] >= 2 && nmedians[1] >= 2) {
		double diff, lo, hi, mb = 0;

		for (size_t i = 0; i < nmedians[0]; i++)
			mb += medians[0][i] / (double)nmedians[0];
		f->p_value = stats_welch(medians[0], nmedians[0], medians[1], nmedians[1], &diff,
					 &lo, &hi);
		relative(f, mb, diff, lo, hi);
		f->noise_floor = mb > 0 ? (hi - lo) / 2 / STATS_Z95 * 2.8016 / mb : INFINITY;
		f->test = "Welch t on per-run medians";
	} else if (!compare_blocks(b, key, f)) {
		double ratio, lo, hi;

		f->p_value = wr.mw_p;
		quantile_ratio(ws, R_P50, R_P50_LO, R_P50_HI, &ratio, &lo, &hi);
		f->effect = ratio - 1;
		f->ci_low = lo - 1;
		f->ci_high = isinf(hi) ? INFINITY : hi - 1;
		f->noise_floor = (hi - lo) / 2 / STATS_Z95 * 2.8016;
		f->test = "Mann-Whitney U; median ratio with rank interval";
	}
out:
	free_sources(&ws[0]);
	free_sources(&ws[1]);
}

void compare_latencies(struct builder *b)
{
	struct dtable keys;

	diff_table_init(&keys);
	for (int side = 0; side < 2; side++)
		for (size_t i = 0; i < b->s[side].n; i++) {
			const struct dtable *t = &b->s[side].runs[i].latency;

			for (size_t k = 0; k < t->len; k++)
				if (!diff_table_get(&keys, t->rows[k].key))
					b->oom = 1;
		}
	for (size_t k = 0; k < keys.len && !b->oom; k++)
		compare_latency(b, keys.rows[k].key);
	diff_table_free(&keys);
}

