/* series_walk.c - one sorted pass over a latency series on both sides (see
 * series_walk.h). Each side is a merge of its runs: the smallest head
 * among them next (a linear scan: a side has a few runs). */
#include <math.h>

#include "series_walk.h"
#include "statistics.h"

int walk_bucket(uint64_t v)
{
	int k;

	if (v <= 1)
		return 0;
	k = 64 - __builtin_clzll(v - 1);        /* 2^(k-1) < v <= 2^k */
	return k > 63 ? 63 : k;
}

/* Loads src's next value into its head. 0, or -1 on a read error. */
static int fill(struct vsource *src)
{
	int rc;

	src->has_head = 0;
	if (src->taken >= src->n)
		return 0;
	if (src->vals) {
		src->head = src->vals[src->taken];
		src->has_head = 1;
		return 0;
	}
	rc = diff_spill_next(src->spill, &src->head);
	if (rc < 0)
		return -1;
	src->has_head = rc;
	return 0;
}

static int side_begin(struct walk_side *s)
{
	s->n = 0;
	s->sum = 0;
	s->min = UINT64_MAX;
	s->max = 0;
	for (int k = 0; k < 64; k++)
		s->hist[k] = 0;
	for (int r = 0; r < WALK_RANKS; r++)
		s->at[r] = 0;
	for (size_t i = 0; i < s->nruns; i++) {
		struct vsource *src = &s->runs[i];

		src->taken = 0;
		src->median = 0;
		if (!src->vals && src->n && diff_spill_rewind(src->spill, src->key_id) < 0)
			return -1;
		if (fill(src) < 0)
			return -1;
	}
	return 0;
}

/* The run holding the side's smallest head, or NULL when it is done. */
static struct vsource *side_peek(struct walk_side *s)
{
	struct vsource *best = NULL;

	for (size_t i = 0; i < s->nruns; i++) {
		struct vsource *src = &s->runs[i];

		if (src->has_head && (!best || src->head < best->head))
			best = src;
	}
	return best;
}

/* Takes the side's next value (from src, its smallest head). */
static int side_take(struct walk_side *s, struct vsource *src)
{
	uint64_t v = src->head;

	src->taken++;
	if (src->taken == stats_quantile_rank(src->n, 0.5))
		src->median = v;
	s->n++;
	for (int r = 0; r < WALK_RANKS; r++)
		if (s->rank[r] == s->n)
			s->at[r] = v;
	s->sum += (double)v;
	if (v < s->min)
		s->min = v;
	if (v > s->max)
		s->max = v;
	s->hist[walk_bucket(v)]++;
	return fill(src);
}

/* Takes every value equal to v from the side: their count in *count. */
static int side_take_equal(struct walk_side *s, uint64_t v, size_t *count)
{
	struct vsource *src;

	*count = 0;
	while ((src = side_peek(s)) && src->head == v) {
		if (side_take(s, src) < 0)
			return -1;
		(*count)++;
	}
	return 0;
}

int series_walk(struct walk_side side[2], struct walk_result *out)
{
	struct stats_mw mw = { 0 };
	uint64_t na = 0, nb = 0;
	double d = 0;

	for (int k = 0; k < 2; k++)
		if (side_begin(&side[k]) < 0)
			return -1;
	for (size_t i = 0; i < side[0].nruns; i++)
		na += side[0].runs[i].n;
	for (size_t i = 0; i < side[1].nruns; i++)
		nb += side[1].runs[i].n;
	for (;;) {
		struct vsource *a = side_peek(&side[0]), *b = side_peek(&side[1]);
		int both = a && b;
		size_t ca, cb;
		uint64_t v;

		if (!a && !b)
			break;
		v = (!b || (a && a->head <= b->head)) ? a->head : b->head;
		if (side_take_equal(&side[0], v, &ca) < 0 || side_take_equal(&side[1], v, &cb) < 0)
			return -1;
		stats_mw_group(&mw, ca, cb);
		/* KS: while both sides have values, as stats_ks */
		if (both) {
			double gap = fabs((double)mw.i / (double)na - (double)mw.j / (double)nb);

			if (gap > d)
				d = gap;
		}
	}
	out->mw_p = stats_mw_finish(&mw, &out->auc);
	out->ks_d = na && nb ? d : 0;
	return 0;
}
