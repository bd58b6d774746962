/* test_timeline.c - unit tests of the reorder buffer (timeline.c) and of
 * duration parsing: events come out in key order whatever small reversals
 * they arrived with, ties keep their arrival order (a heap merge of a
 * chunk's ascending runs, or the merge sort past its limit), nothing is
 * lost, and events later than the window are handed over flagged. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "util/parse.h"
#include "correlate/timeline.h"

struct seen {
	uint64_t last_key;
	uint64_t last_id;
	uint64_t n, late, disorder;
};

static int check_order(void *ctx, const struct tl_event *ev)
{
	struct seen *s = ctx;

	if (ev->flags & TL_F_LATE) {
		s->late++;
		return 0;
	}
	if (s->n && (ev->key < s->last_key || (ev->key == s->last_key && ev->id < s->last_id)))
		s->disorder++;
	s->last_key = ev->key;
	s->last_id = ev->id;
	s->n++;
	return 0;
}

Test(timeline, releases_in_key_order)
{
	struct timeline t;
	struct seen s = { 0 };
	uint64_t id = 0;

	timeline_init(&t);
	srand(7);
	for (int chunk = 0; chunk < 50; chunk++) {
		for (int i = 0; i < 2000; i++) {
			uint64_t base = 1000000000ull + (uint64_t)(chunk * 2000 + i) * 100000;
			struct tl_event ev = {
				.key = base - (uint64_t)(rand() % 4) * 300000 + (i % 7 == 0 ? 0 : 1),
				.id = ++id,
			};
			if (rand() % 50 == 0)      /* a far reversal: ~30 ms back */
				ev.key -= 30000000;
			cr_assert_eq(timeline_add(&t, &ev, check_order, &s), 0);
		}
		cr_assert_eq(timeline_advance(&t, check_order, &s), 0);
	}
	cr_assert_eq(timeline_finish(&t, check_order, &s), 0);
	cr_expect_eq(s.n, id, "every event released once");
	cr_expect_eq(s.disorder, 0);
	cr_expect_eq(s.late, 0);
	cr_expect_lt(t.peak, 60000, "bounded by the window: %zu", t.peak);
	timeline_free(&t);
}

Test(timeline, late_events_are_flagged)
{
	struct timeline t;
	struct seen s = { 0 };
	struct tl_event a = { .key = 1000000000ull, .id = 1 };
	struct tl_event b = { .key = 5000000000ull, .id = 2 };
	struct tl_event late = { .key = 2000000000ull, .id = 3 };

	timeline_init(&t);
	timeline_add(&t, &a, check_order, &s);
	timeline_add(&t, &b, check_order, &s);
	timeline_advance(&t, check_order, &s);   /* releases a (older than 5 s - 2 s) */
	cr_expect_eq(s.n, 1);
	timeline_add(&t, &late, check_order, &s); /* after a: not late */
	cr_expect_eq(s.late, 0);
	timeline_advance(&t, check_order, &s);
	timeline_add(&t, &(struct tl_event){ .key = 9000000000ull, .id = 4 }, check_order, &s);
	timeline_advance(&t, check_order, &s);   /* releases late, b */
	timeline_add(&t, &(struct tl_event){ .key = 3000000000ull, .id = 5 }, check_order, &s);
	cr_expect_eq(s.late, 1, "older than what was released");
	timeline_finish(&t, check_order, &s);
	cr_expect_eq(s.n, 4);
	cr_expect_eq(t.late, 1);
	timeline_free(&t);
}

Test(durations, units_and_bounds)
{
	unsigned long long ns;

	cr_expect_eq(parse_window("1", &ns), 0);
	cr_expect_eq(ns, 1000000000ull);
	cr_expect_eq(parse_window("0.5", &ns), 0);
	cr_expect_eq(ns, 500000000ull);
	cr_expect_eq(parse_window("250ms", &ns), 0);
	cr_expect_eq(ns, 250000000ull);
	cr_expect_eq(parse_window("1500us", &ns), 0);
	cr_expect_eq(ns, 1500000ull);
	cr_expect_eq(parse_window("2000000ns", &ns), 0);
	cr_expect_eq(ns, 2000000ull);
	cr_expect_eq(parse_window("10us", &ns), -1, "below 1 ms");
	cr_expect_eq(parse_window("2d", &ns), -1);
	cr_expect_eq(parse_window("-1", &ns), -1);
	cr_expect_eq(parse_window("", &ns), -1);
	cr_expect_eq(parse_window("86401", &ns), -1, "above 1 day");
}

/* A chunk as the recorder writes it: one ascending run per ring, the runs
 * one after the other, with keys tied across runs. Events come out in key
 * order, ties in arrival order, for few runs (the heap merge) and for more
 * than the heap takes (the merge sort). */
static void runs_in_order(int runs)
{
	struct timeline t;
	struct seen s = { 0 };
	uint64_t id = 0;

	timeline_init(&t);
	for (int chunk = 0; chunk < 6; chunk++) {
		uint64_t base = 1000000000ull + (uint64_t)chunk * 50000000ull;

		for (int r = 0; r < runs; r++)
			for (int j = 0; j < 300; j++) {
				struct tl_event ev = {
					/* every third key tied across runs */
					.key = base + (uint64_t)j * 100000 + (j % 3 ? (uint64_t)r : 0),
					.id = ++id,
				};
				cr_assert_eq(timeline_add(&t, &ev, check_order, &s), 0);
			}
		cr_assert_eq(timeline_advance(&t, check_order, &s), 0);
	}
	cr_assert_eq(timeline_finish(&t, check_order, &s), 0);
	cr_expect_eq(s.n, id, "every event released once");
	cr_expect_eq(s.disorder, 0, "%d runs: %llu out of order", runs,
		     (unsigned long long)s.disorder);
	cr_expect_eq(s.late, 0);
	timeline_free(&t);
}

Test(timeline, runs_merged_one) { runs_in_order(1); }
Test(timeline, runs_merged_two) { runs_in_order(2); }
Test(timeline, runs_merged_seventeen) { runs_in_order(17); }
Test(timeline, runs_merged_at_heap_limit) { runs_in_order(65); }  /* 64 wait */
Test(timeline, runs_merged_past_heap_limit) { runs_in_order(66); }
Test(timeline, runs_merged_many) { runs_in_order(300); }
