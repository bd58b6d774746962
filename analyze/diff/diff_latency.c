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
 * recorded, into BLOCKS consecutive blocks (stretches of time, or of
 * connections), and Welch t compares the block medians: a change counts
 * only if it is larger than how much a run drifts within itself. Series
 * too short for blocks (fewer than BLOCK_MIN calls a block) keep
 * Mann-Whitney U on the calls. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff_internal.h"
#include "statistics.h"

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Pools a series over a side's runs into hist (sorted; the runs' own
 * values are left in the order they were recorded). Per-run medians
 * into medians, each run's time in the series per unit of its exposure
 * into per_run (0 for a run without it), the sum of all values into
 * total_ns. */
static struct dseries *pool_side(struct builder *b, int side, const char *key,
				 double *medians, size_t *nmedians, double *per_run,
				 size_t *nruns, double *total_ns)
{
	struct dseries *pool = diff_table_get(&b->res->hist[side], key);

	*nmedians = 0;
	*nruns = 0;
	*total_ns = 0;
	if (!pool) {
		b->oom = 1;
		return NULL;
	}
	for (size_t i = 0; i < b->s[side].n; i++) {
		const struct dseries *row = diff_table_find(&b->s[side].runs[i].latency, key);
		double e = run_exposure(&b->s[side].runs[i], b->res->norm);

		if (*nruns < 64 && e > 0)
			per_run[(*nruns)++] = row ? row->sum / e : 0;
		if (!row)
			continue;
		for (size_t k = 0; k < row->n; k++)
			if (diff_series_push(pool, row->vals[k]) < 0) {
				b->oom = 1;
				return NULL;
			}
		*total_ns += row->sum;
		/* the run's values, sorted where they were copied to: its median
		 * (row->vals stay in recorded order for the blocks) */
		qsort(pool->vals + pool->n - row->n, row->n, sizeof(uint64_t), by_u64);
		if (row->n && *nmedians < 64)
			medians[(*nmedians)++] =
				(double)stats_quantile(pool->vals + pool->n - row->n, row->n, 0.5);
	}
	if (pool->n > 1)
		qsort(pool->vals, pool->n, sizeof(uint64_t), by_u64);
	pool->count = pool->n;
	return pool;
}

#define BLOCKS    10
#define BLOCK_MIN 20

/* The one run's series of key on side, or NULL. */
static const struct dseries *only_run(struct builder *b, int side, const char *key)
{
	if (b->s[side].n != 1)
		return NULL;
	return diff_table_find(&b->s[side].runs[0].latency, key);
}

/* The medians of BLOCKS consecutive blocks of row's values (in recorded
 * order) into out; 0 when too few values or out of memory. */
static size_t block_medians(struct builder *b, const struct dseries *row, double *out)
{
	size_t per = row ? row->n / BLOCKS : 0;
	uint64_t *tmp;

	if (per < BLOCK_MIN)
		return 0;
	tmp = malloc(per * sizeof(*tmp));
	if (!tmp) {
		b->oom = 1;
		return 0;
	}
	for (size_t k = 0; k < BLOCKS; k++) {
		memcpy(tmp, row->vals + k * per, per * sizeof(*tmp));
		qsort(tmp, per, sizeof(*tmp), by_u64);
		out[k] = (double)stats_quantile(tmp, per, 0.5);
	}
	free(tmp);
	return BLOCKS;
}

/* One run a side with enough calls: Welch t on block medians (see the
 * top). 1 when done. */
static int compare_blocks(struct builder *b, const char *key, struct diff_finding *f)
{
	double m[2][BLOCKS], diff, lo, hi, mb = 0;

	if (block_medians(b, only_run(b, 0, key), m[0]) != BLOCKS ||
	    block_medians(b, only_run(b, 1, key), m[1]) != BLOCKS)
		return 0;
	for (size_t k = 0; k < BLOCKS; k++)
		mb += m[0][k] / BLOCKS;
	f->p_value = stats_welch(m[0], BLOCKS, m[1], BLOCKS, &diff, &lo, &hi);
	relative(f, mb, diff, lo, hi);
	f->noise_floor = mb > 0 ? (hi - lo) / 2 / STATS_Z95 * 2.8016 / mb : INFINITY;
	f->test = "Welch t on the medians of 10 consecutive blocks of each run";
	return 1;
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
	double medians[2][64], per_run[2][64], total[2], se[2];
	size_t nmedians[2], nruns[2];
	struct dseries *pool[2];
	struct diff_finding *f;

	for (int side = 0; side < 2; side++) {
		pool[side] = pool_side(b, side, key, medians[side], &nmedians[side],
				       per_run[side], &nruns[side], &total[side]);
		if (!pool[side])
			return;
	}
	f = new_finding(b, kind, strchr(key, ':') + 1, tier, "ns");
	if (!f)
		return;
	f->is_latency = 1;
	f->count_base = pool[0]->n;
	f->count_new = pool[1]->n;
	for (int side = 0; side < 2; side++) {
		const uint64_t *v = pool[side]->vals;
		size_t n = pool[side]->n;

		stats_mean_se(v, n, &f->mean[side], &se[side]);
		f->p50[side] = stats_quantile(v, n, 0.50);
		f->p90[side] = stats_quantile(v, n, 0.90);
		f->p99[side] = stats_quantile(v, n, 0.99);
	}
	f->base = (double)f->p50[0];
	f->new_ = (double)f->p50[1];
	f->delta = f->new_ - f->base;
	/* time added per unit of exposure: calls per unit times time per call */
	f->impact = (b->s[1].exposure > 0 ? total[1] / b->s[1].exposure : 0) -
		    (b->s[0].exposure > 0 ? total[0] / b->s[0].exposure : 0);
	f->appeared = pool[0]->n == 0 && pool[1]->n > 0;
	f->disappeared = pool[0]->n > 0 && pool[1]->n == 0;
	stats_quantile_ratio_ci(pool[0]->vals, pool[0]->n, pool[1]->vals, pool[1]->n, 0.99,
				&f->p99_ratio, &f->p99_lo, &f->p99_hi);
	f->ks_d = stats_ks(pool[0]->vals, pool[0]->n, pool[1]->vals, pool[1]->n, NULL);
	stats_mann_whitney(pool[0]->vals, pool[0]->n, pool[1]->vals, pool[1]->n, &f->auc);
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

		f->p_value = stats_rate_ratio(pool[0]->n, b->s[0].exposure, pool[1]->n,
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

		f->p_value = stats_mann_whitney(pool[0]->vals, pool[0]->n, pool[1]->vals,
						pool[1]->n, &f->auc);
		stats_quantile_ratio_ci(pool[0]->vals, pool[0]->n, pool[1]->vals, pool[1]->n,
					0.5, &ratio, &lo, &hi);
		f->effect = ratio - 1;
		f->ci_low = lo - 1;
		f->ci_high = isinf(hi) ? INFINITY : hi - 1;
		f->noise_floor = (hi - lo) / 2 / STATS_Z95 * 2.8016;
		f->test = "Mann-Whitney U; median ratio with rank interval";
	}
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

