/* diff_compare.c - turns two sides (lists of runs) into findings: sets
 * up the exposure (requests or seconds), runs each kind of comparison
 * (diff_counts.c, diff_latency.c, diff_context.c) and the warnings
 * (diff_warnings.c), then Benjamini-Hochberg across all tests, the
 * significance rules, ranking and the verdict (docs/perfcap-analyze.md,
 * diff). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff_internal.h"
#include "util/fmt.h"
#include "statistics.h"

double run_exposure(const struct diff_run *r, enum diff_norm norm)
{
	return norm == DIFF_PER_REQUEST ? (double)r->requests : r->seconds;
}

double run_freq(const struct diff_run *r)
{
	return r->freq_hz > 0 ? r->freq_hz : 1.0;
}

struct diff_finding *new_finding(struct builder *b, const char *kind, const char *name,
				 int tier, const char *unit)
{
	struct diff_result *res = b->res;
	struct diff_finding *f;

	if (res->nfindings == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		struct diff_finding *fs = realloc(res->findings, cap * sizeof(*fs));

		if (!fs) {
			b->oom = 1;
			return NULL;
		}
		res->findings = fs;
		b->cap = cap;
	}
	f = &res->findings[res->nfindings];
	memset(f, 0, sizeof(*f));
	f->name = strdup(name);
	if (!f->name) {
		b->oom = 1;
		return NULL;
	}
	res->nfindings++;
	f->kind = kind;
	f->tier = tier;
	f->unit = unit;
	f->effect = f->ci_low = f->ci_high = NAN;
	f->p_value = 1.0;
	return f;
}

/* Relative effect and interval from a difference of means with its
 * interval, relative to the base mean. */
void relative(struct diff_finding *f, double base, double diff, double lo, double hi)
{
	if (base > 0) {
		f->effect = diff / base;
		f->ci_low = lo / base;
		f->ci_high = hi / base;
	}
}

/* The smallest impact worth reporting (--min-impact, default 1%): that
 * share of the exposure unit (10 ms per second), or per request that share
 * of the base's mean request latency (at least 1 us). */
static double min_impact(const struct builder *b)
{
	const struct diff_result *res = b->res;
	double mean;

	if (res->norm == DIFF_PER_SECOND)
		return res->opts.min_impact_share * 1e9;
	mean = b->request_calls ? b->request_ns / (double)b->request_calls : 0;
	return fmax(1000.0, res->opts.min_impact_share * mean);
}

static void decide(struct builder *b)
{
	struct diff_result *res = b->res;
	double *p = malloc((res->nfindings + 1) * sizeof(double));
	double *q = malloc((res->nfindings + 1) * sizeof(double));
	double floor_impact = min_impact(b), events_base = 0;

	if (!p || !q) {
		b->oom = 1;
		free(p);
		free(q);
		return;
	}
	for (size_t i = 0; i < res->nfindings; i++) {
		p[i] = res->findings[i].p_value;
		if (strcmp(res->findings[i].kind, "rate") == 0)
			events_base += res->findings[i].base;
	}
	stats_bh_adjust(p, q, res->nfindings);
	for (size_t i = 0; i < res->nfindings; i++) {
		struct diff_finding *f = &res->findings[i];
		int big_enough, ci_clear, impact_ok;

		f->q_value = q[i];
		if (f->appeared || f->disappeared) {
			big_enough = ci_clear = 1;
		} else {
			big_enough = fabs(f->effect) >= res->opts.min_effect &&
				     (isnan(f->noise_floor) || fabs(f->effect) >= f->noise_floor);
			ci_clear = f->ci_low > 0 || f->ci_high < 0;
		}
		/* event rates add no time: their practical minimum is a change of
		 * min_impact_share of all the events per unit of exposure */
		if (strcmp(f->kind, "rate") == 0)
			impact_ok = fabs(f->delta) >= res->opts.min_impact_share * events_base;
		else
			impact_ok = fabs(f->impact) >= floor_impact;
		f->significant = f->q_value < res->opts.alpha && big_enough && ci_clear &&
				 impact_ok;
	}
	free(p);
	free(q);
}

static int by_rank(const void *x, const void *y)
{
	const struct diff_finding *a = x, *b = y;
	double ia = fabs(a->impact), ib = fabs(b->impact);

	if (a->significant != b->significant)
		return b->significant - a->significant;
	if (!a->significant) {
		if (a->q_value != b->q_value)
			return a->q_value < b->q_value ? -1 : 1;
	} else {
		if (a->tier != b->tier)
			return a->tier - b->tier;
		if (ia != ib)
			return ia > ib ? -1 : 1;
		if (fabs(a->effect) != fabs(b->effect))
			return fabs(a->effect) > fabs(b->effect) ? -1 : 1;
	}
	if (strcmp(a->kind, b->kind) != 0)
		return strcmp(a->kind, b->kind);
	return strcmp(a->name, b->name);
}

int diff_finding_adds_time(const struct diff_finding *f)
{
	return f->appeared || (!f->disappeared && f->effect > 0);
}

static void rank_and_verdict(struct builder *b)
{
	struct diff_result *res = b->res;
	int up = 0, down = 0;
	char unit[32], buf[FMT_BUF];

	if (res->nfindings)   /* qsort of a NULL array is undefined, even empty */
		qsort(res->findings, res->nfindings, sizeof(*res->findings), by_rank);
	for (size_t i = 0; i < res->nfindings; i++) {
		struct diff_finding *f = &res->findings[i];

		if (!f->significant)
			continue;
		f->rank = (int)++res->nsignificant;
		if (strcmp(f->kind, "rate") == 0)
			continue;
		if (diff_finding_adds_time(f))
			up++;
		else
			down++;
	}
	res->verdict = up && down ? "mixed" : up ? "regression" : down ? "improvement"
		       : "no significant change";
	snprintf(unit, sizeof(unit), "%s", res->norm == DIFF_PER_REQUEST ? "request" : "second");
	if (res->nsignificant == 0) {
		snprintf(res->summary, sizeof(res->summary),
			 "No significant change between base (%zu run%s, %.1f s) and new (%zu "
			 "run%s, %.1f s), normalized per %s.", res->nruns[0],
			 res->nruns[0] > 1 ? "s" : "", res->seconds[0], res->nruns[1],
			 res->nruns[1] > 1 ? "s" : "", res->seconds[1], unit);
	} else {
		const struct diff_finding *top = &res->findings[0];
		char effect[64];

		if (isnan(top->effect))
			snprintf(effect, sizeof(effect), "%s", top->appeared ? "appeared" : "gone");
		else
			snprintf(effect, sizeof(effect), "%+.0f%%", 100 * top->effect);
		snprintf(res->summary, sizeof(res->summary),
			 "%s: %zu significant finding%s (%d adding time, %d removing time), "
			 "normalized per %s. Top: %s %s %s, %s%s per %s.",
			 res->verdict, res->nsignificant, res->nsignificant > 1 ? "s" : "", up,
			 down, unit, top->kind, top->name, effect, top->impact < 0 ? "-" : "+",
			 fmt_duration_ns(buf, sizeof(buf), (uint64_t)fabs(top->impact)), unit);
	}
	if (res->conditional) {
		size_t len = strlen(res->summary);

		snprintf(res->summary + len, sizeof(res->summary) - len,
			 " Conditional: the sides were not recorded alike (see warnings).");
	}
}

static void setup_sides(struct builder *b, const struct diff_run *base, size_t nbase,
			const struct diff_run *new_, size_t nnew)
{
	struct diff_result *res = b->res;
	int per_request = 1;

	b->s[0] = (struct side){ .runs = base, .n = nbase };
	b->s[1] = (struct side){ .runs = new_, .n = nnew };
	for (int side = 0; side < 2; side++)
		for (size_t i = 0; i < b->s[side].n; i++)
			if (b->s[side].runs[i].requests < MIN_REQUESTS)
				per_request = 0;
	res->norm = per_request ? DIFF_PER_REQUEST : DIFF_PER_SECOND;
	for (int side = 0; side < 2; side++) {
		res->nruns[side] = b->s[side].n;
		for (size_t i = 0; i < b->s[side].n; i++) {
			const struct diff_run *r = &b->s[side].runs[i];

			res->seconds[side] += r->seconds;
			res->requests[side] += r->requests;
			b->s[side].exposure += run_exposure(r, res->norm);
			b->s[side].cpu_exposure += run_exposure(r, res->norm) * run_freq(r);
		}
		res->exposure[side] = b->s[side].exposure;
	}
}

int diff_compare(const struct diff_run *base, size_t nbase, const struct diff_run *new_,
		 size_t nnew, const struct diff_options *opts, struct diff_result *res)
{
	struct builder b = { .res = res };

	memset(res, 0, sizeof(*res));
	res->opts = *opts;
	diff_table_init(&res->folded[0]);
	diff_table_init(&res->folded[1]);
	setup_sides(&b, base, nbase, new_, nnew);
	check_sides(&b);
	if (res->norm == DIFF_PER_SECOND)
		warn(&b, 0, "normalized per second of capture: a side has fewer than %d "
		     "requests per run (request_spans)", MIN_REQUESTS);
	for (int side = 0; side < 2; side++)
		for (size_t i = 0; i < b.s[side].n; i++) {
			const struct dtable *t = &b.s[side].runs[i].stacks;

			for (size_t k = 0; k < t->len; k++) {
				struct dseries *s = diff_table_get(&res->folded[side], t->rows[k].key);

				if (!s)
					b.oom = 1;
				else
					s->count += t->rows[k].count;
			}
		}
	compare_count_table(&b, "function", 1, offsetof(struct diff_run, self), 1);
	compare_count_table(&b, "function_total", 2, offsetof(struct diff_run, total), 1);
	compare_count_table(&b, "stack", 2, offsetof(struct diff_run, stacks), 0);
	compare_latencies(&b);
	compare_threads(&b);
	compare_rates(&b);
	if (!b.oom && !b.failed)
		decide(&b);
	if (!b.oom && !b.failed)
		rank_and_verdict(&b);
	if (b.oom)
		fprintf(stderr, "perfcap-analyze: diff: out of memory\n");
	return b.oom || b.failed ? -1 : 0;
}

void diff_result_free(struct diff_result *res)
{
	for (size_t i = 0; i < res->nfindings; i++)
		free(res->findings[i].name);
	free(res->findings);
	for (size_t i = 0; i < res->nwarnings; i++)
		free(res->warnings[i]);
	free(res->warnings);
	for (int side = 0; side < 2; side++)
		diff_table_free(&res->folded[side]);
	memset(res, 0, sizeof(*res));
}

