/* diff_context.c - the context findings: per-thread time shares by
 * comm (Welch t on per-window or per-run shares) and event rates per
 * source (Poisson rate ratio). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff_internal.h"
#include "statistics.h"

static void collect_windows(const struct side *s, const char *key, double *vals,
			    size_t *n, double *means, size_t *nmeans)
{
	*n = *nmeans = 0;
	for (size_t i = 0; i < s->n; i++) {
		const struct dseries *row = diff_table_find(&s->runs[i].threads, key);
		double sum = 0;

		if (!row)
			continue;
		for (size_t k = 0; k < row->n && *n < 4096; k++) {
			vals[(*n)++] = (double)row->vals[k] / 1e6;
			sum += (double)row->vals[k] / 1e6;
		}
		if (row->n && *nmeans < 64)
			means[(*nmeans)++] = sum / (double)row->n;
	}
}

static void compare_thread(struct builder *b, const char *key, double *va, double *vb)
{
	double ma[64], mb[64], diff, lo, hi, base = 0, newv = 0, per_unit;
	size_t na, nb, nma, nmb;
	struct diff_finding *f;
	int per_run;

	collect_windows(&b->s[0], key, va, &na, ma, &nma);
	collect_windows(&b->s[1], key, vb, &nb, mb, &nmb);
	for (size_t i = 0; i < na; i++)
		base += va[i] / (double)na;
	for (size_t i = 0; i < nb; i++)
		newv += vb[i] / (double)nb;
	if (base == 0 && newv == 0)
		return;
	f = new_finding(b, "thread", key, 2, "share");
	if (!f)
		return;
	f->base = base;
	f->new_ = newv;
	f->delta = newv - base;
	/* ns per second, expressed per unit of exposure */
	per_unit = b->s[1].exposure > 0 ? b->res->seconds[1] / b->s[1].exposure : 1;
	f->impact = f->delta * 1e9 * per_unit;
	f->count_base = na;
	f->count_new = nb;
	per_run = nma >= 2 && nmb >= 2;
	f->p_value = per_run ? stats_welch(ma, nma, mb, nmb, &diff, &lo, &hi)
			     : stats_welch(va, na, vb, nb, &diff, &lo, &hi);
	f->test = per_run ? "Welch t on per-run shares" : "Welch t on per-window shares";
	f->appeared = base == 0;
	f->disappeared = newv == 0;
	relative(f, base, diff, lo, hi);
	f->noise_floor = base > 0 ? (hi - lo) / 2 / STATS_Z95 * 2.8016 / base : INFINITY;
}

void compare_threads(struct builder *b)
{
	struct dtable keys;
	double *va = malloc(4096 * sizeof(double)), *vb = malloc(4096 * sizeof(double));

	diff_table_init(&keys);
	if (!va || !vb)
		b->oom = 1;
	for (int side = 0; side < 2; side++)
		for (size_t i = 0; i < b->s[side].n; i++) {
			const struct dtable *t = &b->s[side].runs[i].threads;

			for (size_t k = 0; k < t->len; k++)
				if (!diff_table_get(&keys, t->rows[k].key))
					b->oom = 1;
		}
	for (size_t k = 0; k < keys.len && !b->oom; k++)
		compare_thread(b, keys.rows[k].key, va, vb);
	diff_table_free(&keys);
	free(va);
	free(vb);
}

void compare_rates(struct builder *b)
{
	struct dtable keys;

	diff_table_init(&keys);
	for (int side = 0; side < 2; side++)
		for (size_t i = 0; i < b->s[side].n; i++)
			for (size_t k = 0; k < b->s[side].runs[i].rates.len; k++)
				if (!diff_table_get(&keys, b->s[side].runs[i].rates.rows[k].key))
					b->oom = 1;
	for (size_t k = 0; k < keys.len && !b->oom; k++) {
		uint64_t c[2] = { 0, 0 };
		double ratio, lo, hi, per_run[2][64];
		size_t nruns[2] = { 0, 0 };
		struct diff_finding *f;

		for (int side = 0; side < 2; side++)
			for (size_t i = 0; i < b->s[side].n; i++) {
				const struct diff_run *r = &b->s[side].runs[i];
				const struct dseries *row =
					diff_table_find(&r->rates, keys.rows[k].key);
				uint64_t n = row ? row->count : 0;
				double e = run_exposure(r, b->res->norm);

				c[side] += n;
				if (nruns[side] < 64 && e > 0)
					per_run[side][nruns[side]++] = (double)n / e;
			}
		f = new_finding(b, "rate", keys.rows[k].key, 2,
				b->res->norm == DIFF_PER_REQUEST ? "events/request" : "events/s");
		if (!f)
			break;
		f->count_base = c[0];
		f->count_new = c[1];
		f->base = b->s[0].exposure > 0 ? (double)c[0] / b->s[0].exposure : 0;
		f->new_ = b->s[1].exposure > 0 ? (double)c[1] / b->s[1].exposure : 0;
		f->delta = f->new_ - f->base;
		f->p_value = stats_rate_ratio(c[0], b->s[0].exposure, c[1], b->s[1].exposure,
					      &ratio, &lo, &hi);
		if (c[0] > 0) {
			f->effect = ratio - 1;
			f->ci_low = lo - 1;
			f->ci_high = hi - 1;
		}
		f->appeared = c[0] == 0 && c[1] > 0;
		f->disappeared = c[0] > 0 && c[1] == 0;
		f->noise_floor = stats_rate_noise_floor(c[0], c[1]);
		f->test = "Poisson rate ratio";
		if (nruns[0] >= 2 && nruns[1] >= 2) {
			/* several runs a side: the run-to-run spread, not the
			 * pooled count, says whether the rate moved */
			double diff;

			f->p_value = stats_welch(per_run[0], nruns[0], per_run[1], nruns[1],
						 &diff, &lo, &hi);
			relative(f, f->base, diff, lo, hi);
			f->noise_floor = f->base > 0 ?
				(hi - lo) / 2 / STATS_Z95 * 2.8016 / f->base : INFINITY;
			f->test = "Welch t on per-run rates";
		}
	}
	diff_table_free(&keys);
}

