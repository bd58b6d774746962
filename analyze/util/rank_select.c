/* rank_select.c - exact order statistics of a replayable stream in bounded
 * memory (see rank_select.h for the method).
 *
 * Each asked position is a target: the value range [lo, hi] it is known to
 * lie in, how many values lie below lo, and how many inside. The first
 * pass's histogram gives every target its bucket; each further pass either
 * collects the values of that range (when they fit) or counts them in
 * 65,536 equal parts and keeps the part holding the position. */
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "radix_sort.h"
#include "rank_select.h"

#define SUB_BITS 8                     /* log-linear: 256 buckets per power of two */
#define SUB (1u << SUB_BITS)
#define NBUCKETS (1 + SUB + (62 - SUB_BITS + 1) * SUB)
#define SPLIT 65536

struct target {
	uint64_t pos;                  /* asked position */
	int64_t lo, hi;                /* the range it lies in */
	uint64_t below, inside;        /* values below lo; values in [lo, hi] */
	int found;
	int64_t value;
	/* the current pass: the values of the range, or their parts' counts */
	int64_t *vals;
	size_t nvals;
	uint64_t *parts;
	uint64_t width;
};

struct rank_select {
	size_t max_values;
	int64_t *kept;                 /* the first pass's values while they fit */
	size_t nkept, cap;
	uint64_t *hist;                /* once they did not (NBUCKETS) */
	uint64_t count, pass_count;
	int asked;
	struct target t[RANK_SELECT_MAX_ASK];
	size_t nt;
	unsigned passes;
};

static size_t bucket_of(int64_t v)
{
	unsigned e;

	if (v < 0)
		return 0;
	if (v < (int64_t)SUB)
		return 1 + (size_t)v;
	e = 63u - (unsigned)__builtin_clzll((unsigned long long)v);
	return 1 + SUB + (size_t)(e - SUB_BITS) * SUB +
	       (size_t)(((uint64_t)v >> (e - SUB_BITS)) & (SUB - 1));
}

/* The value range of bucket b. */
static void bucket_range(size_t b, int64_t *lo, int64_t *hi)
{
	size_t e, sub;
	uint64_t step;

	if (b == 0) {
		*lo = INT64_MIN;
		*hi = -1;
		return;
	}
	if (b < 1 + SUB) {
		*lo = *hi = (int64_t)(b - 1);
		return;
	}
	e = (b - 1 - SUB) / SUB + SUB_BITS;
	sub = (b - 1 - SUB) % SUB;
	step = 1ull << (e - SUB_BITS);
	*lo = (int64_t)((1ull << e) | (uint64_t)sub * step);
	*hi = (int64_t)((uint64_t)*lo + step - 1);
}

struct rank_select *rank_select_new(size_t max_values)
{
	struct rank_select *r = calloc(1, sizeof(*r));

	if (r)
		r->max_values = max_values ? max_values : 1;
	return r;
}

static void free_pass(struct rank_select *r)
{
	for (size_t i = 0; i < r->nt; i++) {
		free(r->t[i].vals);
		free(r->t[i].parts);
		r->t[i].vals = NULL;
		r->t[i].parts = NULL;
		r->t[i].nvals = 0;
	}
}

void rank_select_free(struct rank_select *r)
{
	if (!r)
		return;
	free_pass(r);
	free(r->kept);
	free(r->hist);
	free(r);
}

/* The kept values go into the histogram, and are dropped. 0 or -1. */
static int spill(struct rank_select *r)
{
	if (r->hist)
		return 0;
	r->hist = calloc(NBUCKETS, sizeof(*r->hist));
	if (!r->hist)
		return -1;
	for (size_t i = 0; i < r->nkept; i++)
		r->hist[bucket_of(r->kept[i])]++;
	free(r->kept);
	r->kept = NULL;
	r->nkept = r->cap = 0;
	return 0;
}

static int keep(struct rank_select *r, int64_t v)
{
	if (r->nkept >= r->max_values)
		return spill(r) < 0 ? -1 : (r->hist[bucket_of(v)]++, 0);
	if (array_grow_max((void **)&r->kept, &r->cap, r->nkept, sizeof(*r->kept), 1024,
			   r->max_values))
		return -1;
	r->kept[r->nkept++] = v;
	return 0;
}

/* A value of a later pass: into each open target whose range holds it. */
static void add_to_targets(struct rank_select *r, int64_t v)
{
	r->pass_count++;
	for (size_t i = 0; i < r->nt; i++) {
		struct target *t = &r->t[i];
		if (t->found || v < t->lo || v > t->hi)
			continue;
		if (t->parts)
			t->parts[((uint64_t)v - (uint64_t)t->lo) / t->width]++;
		else if (t->nvals < t->inside)
			t->vals[t->nvals++] = v;
		else
			t->nvals++;            /* more than the first pass saw: caught at the end */
	}
}

int rank_select_add(struct rank_select *r, int64_t v)
{
	if (r->asked) {
		add_to_targets(r, v);
		return 0;
	}
	r->count++;
	if (r->hist) {
		r->hist[bucket_of(v)]++;
		return 0;
	}
	return keep(r, v);
}

uint64_t rank_select_count(const struct rank_select *r)
{
	return r->count;
}

size_t rank_select_kept(const struct rank_select *r)
{
	return r->nkept;
}

int rank_select_spill(struct rank_select *r)
{
	return r->asked ? -1 : spill(r);
}

void rank_select_set_max(struct rank_select *r, size_t max_values)
{
	r->max_values = max_values ? max_values : 1;
}

/* Each target's bucket, from the histogram. */
static void targets_from_hist(struct rank_select *r)
{
	uint64_t below = 0;
	size_t b = 0;

	/* targets in ascending position order are not required: each walks */
	for (size_t i = 0; i < r->nt; i++) {
		struct target *t = &r->t[i];
		for (below = 0, b = 0; b < NBUCKETS && below + r->hist[b] <= t->pos; b++)
			below += r->hist[b];
		bucket_range(b, &t->lo, &t->hi);
		t->below = below;
		t->inside = r->hist[b];
		if (t->lo == t->hi) {
			t->found = 1;
			t->value = t->lo;
		}
	}
}

int rank_select_ask(struct rank_select *r, const uint64_t *pos, size_t k)
{
	if (r->asked || k > RANK_SELECT_MAX_ASK)
		return -1;
	for (size_t i = 0; i < k; i++)
		if (pos[i] >= r->count)
			return -1;
	r->asked = 1;
	r->nt = k;
	for (size_t i = 0; i < k; i++)
		r->t[i] = (struct target){ .pos = pos[i] };
	if (!r->hist) {                /* all kept: sorted, answered */
		if (radix_sort_i64(r->kept, r->nkept, sizeof(*r->kept), 0) < 0)
			return -1;
		for (size_t i = 0; i < k; i++) {
			r->t[i].found = 1;
			r->t[i].value = r->kept[pos[i]];
		}
		return 0;
	}
	targets_from_hist(r);
	free(r->hist);
	r->hist = NULL;
	return 0;
}

int rank_select_pending(const struct rank_select *r)
{
	for (size_t i = 0; i < r->nt; i++)
		if (!r->t[i].found)
			return 1;
	return 0;
}

int rank_select_begin_pass(struct rank_select *r)
{
	size_t open = 0;

	for (size_t i = 0; i < r->nt; i++)
		open += !r->t[i].found;
	r->pass_count = 0;
	for (size_t i = 0; i < r->nt; i++) {
		struct target *t = &r->t[i];
		if (t->found)
			continue;
		if (t->inside <= r->max_values / open) {
			t->vals = malloc((t->inside ? t->inside : 1) * sizeof(*t->vals));
			if (!t->vals)
				return -1;
		} else {
			t->width = ((uint64_t)t->hi - (uint64_t)t->lo) / SPLIT + 1;
			t->parts = calloc(SPLIT, sizeof(*t->parts));
			if (!t->parts)
				return -1;
		}
	}
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The part of t's range holding its position becomes its range. 0 or -1
 * (the parts do not add up to what the range held). */
static int narrow(struct target *t)
{
	uint64_t below = t->below, sum = 0;
	size_t j, found = SPLIT;

	for (j = 0; j < SPLIT; j++) {
		if (found == SPLIT && below + t->parts[j] > t->pos)
			found = j;
		else if (found == SPLIT)
			below += t->parts[j];
		sum += t->parts[j];
	}
	if (sum != t->inside || found == SPLIT)
		return -1;
	t->lo = (int64_t)((uint64_t)t->lo + found * t->width);
	if ((uint64_t)t->hi - (uint64_t)t->lo >= t->width)
		t->hi = (int64_t)((uint64_t)t->lo + t->width - 1);
	t->below = below;
	t->inside = t->parts[found];
	if (t->lo == t->hi) {
		t->found = 1;
		t->value = t->lo;
	}
	return 0;
}

int rank_select_end_pass(struct rank_select *r)
{
	int rc = r->pass_count == r->count ? 0 : -1;

	for (size_t i = 0; i < r->nt && rc == 0; i++) {
		struct target *t = &r->t[i];
		if (t->found)
			continue;
		if (t->parts) {
			rc = narrow(t);
		} else if (t->nvals != t->inside) {
			rc = -1;
		} else {
			qsort(t->vals, t->nvals, sizeof(*t->vals), cmp_i64);
			t->found = 1;
			t->value = t->vals[t->pos - t->below];
		}
	}
	free_pass(r);
	r->passes++;
	return rc;
}

int64_t rank_select_value(const struct rank_select *r, size_t i)
{
	return i < r->nt ? r->t[i].value : 0;
}

unsigned rank_select_passes(const struct rank_select *r)
{
	return r->passes;
}
