/* test_units.c - unit tests of the analyzer's small building blocks:
 * number formatting, printable text, the hash table, the radix sort, the
 * growable arrays. */
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/fmt.h"
#include "util/grow.h"
#include "util/hashmap.h"
#include "util/radix_sort.h"
#include "util/text.h"

Test(fmt, thousands_separators)
{
	char buf[FMT_BUF];

	cr_expect_str_eq(fmt_count(buf, sizeof(buf), 0), "0");
	cr_expect_str_eq(fmt_count(buf, sizeof(buf), 999), "999");
	cr_expect_str_eq(fmt_count(buf, sizeof(buf), 1000), "1,000");
	cr_expect_str_eq(fmt_count(buf, sizeof(buf), 1234567), "1,234,567");
	cr_expect_str_eq(fmt_count(buf, sizeof(buf), UINT64_MAX), "18,446,744,073,709,551,615");
}

Test(fmt, percent_and_time)
{
	char buf[FMT_BUF];

	cr_expect_str_eq(fmt_percent(buf, sizeof(buf), 3, 4), "75.0%");
	cr_expect_str_eq(fmt_percent(buf, sizeof(buf), 1, 3), "33.3%");
	cr_expect_str_eq(fmt_percent(buf, sizeof(buf), 1, 0), "-");
	cr_expect_str_eq(fmt_seconds(buf, sizeof(buf), 3.0), "3.00 s");
	cr_expect_str_eq(fmt_seconds(buf, sizeof(buf), 0.15), "150.0 ms");
	cr_expect_str_eq(fmt_seconds(buf, sizeof(buf), 62.5), "1m 02.5s");
	cr_expect_str_eq(fmt_ratio(buf, sizeof(buf), 300, 100), "3.0x");
}

Test(text, printable_copies)
{
	char buf[8];

	cr_expect_str_eq(text_copy_printable(buf, sizeof(buf), "ab\ncd", 5), "ab?cd");
	cr_expect_str_eq(text_copy_printable(buf, sizeof(buf), "abcdefghijk", 11), "abcdefg");
	cr_expect_str_eq(text_copy_printable(buf, sizeof(buf), "ab\0cd", 5), "ab");
	char *argv = text_dup_printable("./app\0--fast\0", 13, ' ');
	cr_expect_str_eq(argv, "./app --fast");
	free(argv);
	cr_expect_str_eq(text_basename("/usr/lib/libc.so.6"), "libc.so.6");
	cr_expect_str_eq(text_basename("[kernel]"), "[kernel]");
	cr_expect_str_eq(text_module_label(buf, sizeof(buf), "/bin/ls"), "[ls]");
}

Test(hashmap, insert_find_grow)
{
	struct hmap m;
	const struct hmap_slot *slot;
	size_t seen = 0;

	hmap_init(&m);
	cr_expect_null(hmap_find(&m, 1, 2));
	for (uint64_t i = 0; i < 10000; i++)
		*hmap_upsert(&m, i, i * 7, 0, NULL) = i + 1;
	for (uint64_t i = 0; i < 10000; i++) {
		uint64_t *v = hmap_find(&m, i, i * 7);
		cr_assert_not_null(v);
		cr_assert_eq(*v, i + 1);
	}
	cr_expect_null(hmap_find(&m, 5, 5));
	for (size_t pos = 0; hmap_next(&m, &pos, &slot);)
		seen++;
	cr_expect_eq(seen, 10000);
	hmap_free(&m);
}

struct keyed {
	uint32_t order;           /* position before the sort */
	int64_t key;
	char pad[4];
};

static int cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->order > y->order) - (x->order < y->order);
}

/* Against qsort by (key, position): the same order, so the sort is right
 * and stable; negative keys, the extremes, many repeats, one byte only. */
Test(radix_sort, matches_a_stable_comparison_sort)
{
	enum { N = 20000 };
	struct keyed *v = malloc(N * sizeof(*v)), *w = malloc(N * sizeof(*w));
	uint64_t x = 88172645463325252ull;

	cr_assert(v && w);
	for (int round = 0; round < 3; round++) {
		for (uint32_t i = 0; i < N; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			v[i].order = i;
			v[i].key = round == 0 ? (int64_t)x : round == 1 ? (int64_t)(x % 50) - 25
				   : (int64_t)(x & 0xff);
		}
		v[0].key = INT64_MIN;
		v[1].key = INT64_MAX;
		memcpy(w, v, N * sizeof(*v));
		qsort(w, N, sizeof(*w), cmp_keyed);
		cr_assert_eq(radix_sort_i64(v, N, sizeof(*v), offsetof(struct keyed, key)), 0);
		for (uint32_t i = 0; i < N; i++) {
			cr_assert_eq(v[i].key, w[i].key, "round %d at %u", round, i);
			cr_assert_eq(v[i].order, w[i].order, "round %d at %u", round, i);
		}
	}
	cr_expect_eq(radix_sort_i64(v, 0, sizeof(*v), 0), 0);
	free(v);
	free(w);
}

/* Doubling from first, to max at most; at max, -1 and nothing changed. */
Test(grow, doubles_up_to_max)
{
	int *v = NULL;
	size_t cap = 0, n = 0;

	for (; n < 100; n++) {
		cr_assert_eq(array_grow_max((void **)&v, &cap, n, sizeof(*v), 16, 100), 0);
		v[n] = (int)n;
	}
	cr_assert_eq(cap, 100, "16, 32, 64, then 100 (not 128): %zu", cap);
	cr_assert_eq(array_grow_max((void **)&v, &cap, n, sizeof(*v), 16, 100), -1);
	cr_assert_eq(cap, 100);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(v[i], (int)i);
	free(v);
	v = NULL;
	cap = 0;
	cr_assert_eq(array_grow((void **)&v, &cap, 0, sizeof(*v), 16), 0);
	cr_assert_eq(cap, 16);
	cr_assert_eq(array_grow((void **)&v, &cap, 16, sizeof(*v), 16), 0);
	cr_assert_eq(cap, 32);
	free(v);
}
