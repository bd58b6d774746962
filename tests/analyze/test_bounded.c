/* test_bounded.c - the report's bounded-memory building blocks against the
 * plain answers they replace: rank_select (exact order statistics of a
 * stream read again instead of kept) against a sorted copy, and
 * span_cover (the overlap of an interval with a thread's spans) against a
 * loop over every span, on overlapping spans as an event loop makes. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/rank_select.h"
#include "util/span_cover.h"

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Asks positions of v (n values) of a selector keeping at most max; the
 * stream is fed again while it asks. Returns the passes it made. */
static unsigned select_and_check(const int64_t *v, size_t n, size_t max)
{
	int64_t *sorted = malloc(n * sizeof(*sorted));
	uint64_t pos[6] = { 0, n / 2, n * 9 / 10, n * 99 / 100, n - 1, n / 3 };
	struct rank_select *r = rank_select_new(max);
	unsigned passes;

	cr_assert(sorted && r);
	memcpy(sorted, v, n * sizeof(*v));
	qsort(sorted, n, sizeof(*sorted), cmp_i64);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(rank_select_add(r, v[i]), 0);
	cr_assert_eq(rank_select_count(r), n);
	cr_assert_eq(rank_select_ask(r, pos, 6), 0);
	for (int guard = 0; rank_select_pending(r); guard++) {
		cr_assert_lt(guard, 6, "more passes than the method allows");
		cr_assert_eq(rank_select_begin_pass(r), 0);
		for (size_t i = n; i-- > 0;)        /* again, in another order */
			rank_select_add(r, v[i]);
		cr_assert_eq(rank_select_end_pass(r), 0);
	}
	for (size_t i = 0; i < 6; i++)
		cr_assert_eq(rank_select_value(r, i), sorted[pos[i]],
			     "position %llu of %zu (max %zu): %lld, sorted %lld",
			     (unsigned long long)pos[i], n, max,
			     (long long)rank_select_value(r, i), (long long)sorted[pos[i]]);
	passes = rank_select_passes(r);
	rank_select_free(r);
	free(sorted);
	return passes;
}

Test(rank_select, kept_values_need_no_pass)
{
	int64_t v[1000];

	for (size_t i = 0; i < 1000; i++)
		v[i] = (int64_t)(next() % 100000);
	cr_assert_eq(select_and_check(v, 1000, 1000), 0);
}

/* Service times of a server: log-normal-ish microseconds, wide tails. */
Test(rank_select, dropped_values_are_found_again)
{
	size_t n = 200000;
	int64_t *v = malloc(n * sizeof(*v));

	cr_assert(v);
	for (size_t i = 0; i < n; i++)
		v[i] = (int64_t)((next() % 50000) << (next() % 12));
	cr_assert_geq(select_and_check(v, n, 5000), 1);
	cr_assert_geq(select_and_check(v, n, 1), 1);    /* nothing fits: ranges cut down */
	free(v);
}

/* Ties, negatives (a wild value), the extremes of int64, one value. */
Test(rank_select, ties_negatives_and_extremes)
{
	size_t n = 50000;
	int64_t *v = malloc(n * sizeof(*v));

	cr_assert(v);
	for (size_t i = 0; i < n; i++)
		v[i] = 7;
	select_and_check(v, n, 100);
	for (size_t i = 0; i < n; i++)
		v[i] = i % 5 == 0 ? INT64_MIN + (int64_t)(next() % 3) :
		       i % 5 == 1 ? INT64_MAX - (int64_t)(next() % 3) :
		       i % 5 == 2 ? -(int64_t)(next() % 1000) : (int64_t)(next() >> 1);
	select_and_check(v, n, 1);
	select_and_check(v, n, 300);
	select_and_check(v, 1, 1);
	free(v);
}

/* A pass that does not see the first pass's values fails. */
Test(rank_select, a_changed_stream_fails)
{
	struct rank_select *r = rank_select_new(2);
	uint64_t pos = 1;

	for (int i = 0; i < 10; i++)
		rank_select_add(r, i * 1000000);
	cr_assert_eq(rank_select_ask(r, &pos, 1), 0);
	cr_assert(rank_select_pending(r));
	cr_assert_eq(rank_select_begin_pass(r), 0);
	for (int i = 0; i < 9; i++)
		rank_select_add(r, i * 1000000);
	cr_assert_eq(rank_select_end_pass(r), -1);
	rank_select_free(r);
	r = rank_select_new(2);
	rank_select_add(r, 1);
	cr_assert_eq(rank_select_ask(r, &pos, 1), -1, "a position past the count");
	rank_select_free(r);
}

struct span { int64_t key, start, end; };

static uint64_t brute(const struct span *s, size_t n, int64_t key, int64_t a, int64_t b)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++) {
		int64_t lo = a > s[i].start ? a : s[i].start, hi = b < s[i].end ? b : s[i].end;
		if (s[i].key == key && hi > lo)
			sum += (uint64_t)(hi - lo);
	}
	return sum;
}

/* Overlapping spans of a few threads (an event loop reads several clients
 * before it answers them), some empty or reversed, against the loop. */
Test(span_cover, overlaps_equal_the_sum_over_every_span)
{
	size_t n = 3000;
	struct span *s = malloc(n * sizeof(*s));
	struct span_cover *c = span_cover_new();

	cr_assert(s && c);
	for (int round = 0; round < 2; round++) {
		span_cover_reset(c);
		for (size_t i = 0; i < n; i++) {
			s[i].key = 100 + (int64_t)(next() % 4);
			s[i].start = 1000000000 + (int64_t)(next() % 1000000);
			s[i].end = s[i].start + (int64_t)(next() % (round ? 500000 : 3000)) -
				   (i % 50 == 0 ? 10 : 0);
			cr_assert_eq(span_cover_add(c, s[i].key, s[i].start, s[i].end), 0);
		}
		cr_assert_eq(span_cover_build(c), 0);
		for (int q = 0; q < 3000; q++) {
			int64_t key = 99 + (int64_t)(next() % 6);
			int64_t a = 999990000 + (int64_t)(next() % 1600000);
			int64_t b = a + (int64_t)(next() % 40000) - 100;
			cr_assert_eq(span_cover_overlap(c, key, a, b), brute(s, n, key, a, b),
				     "key %lld [%lld, %lld)", (long long)key, (long long)a,
				     (long long)b);
		}
	}
	span_cover_free(c);
	free(s);
}

/* The case a search over ends sorted by start misses: a long span that
 * starts first and ends last. */
Test(span_cover, a_long_span_around_short_ones)
{
	struct span_cover *c = span_cover_new();

	cr_assert(c);
	span_cover_add(c, 1, 0, 100);
	span_cover_add(c, 1, 2, 5);
	span_cover_add(c, 1, 3, 20);
	cr_assert_eq(span_cover_build(c), 0);
	cr_assert_eq(span_cover_overlap(c, 1, 6, 8), 4);     /* [0,100) and [3,20) */
	cr_assert_eq(span_cover_overlap(c, 1, 50, 200), 50);
	cr_assert_eq(span_cover_overlap(c, 1, 200, 300), 0);
	cr_assert_eq(span_cover_overlap(c, 2, 0, 100), 0);
	span_cover_free(c);
}
