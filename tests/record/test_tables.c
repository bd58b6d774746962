/* test_tables.c - the recorder's tables as eviction uses them (issue 16,
 * defect 9): u64_table_filter drops exactly the entries it is told to and
 * keeps the others findable; forgotten stacks leave the dedup index (the
 * same ips in the same address space slot make a new stack, not the old
 * id) while the others keep their ids and ips, with or without moving the
 * arena. */
#include <criterion/criterion.h>

#include "consume/stack_table.h"
#include "perfcap_format.h"
#include "util/u64_table.h"

static bool keep_even(uint64_t key, uint32_t value, void *ctx)
{
	(void)value;
	(void)ctx;
	return key % 2 == 0;
}

Test(u64_table, filter_keeps_what_it_is_told)
{
	struct u64_table t = { 0 };

	for (uint64_t k = 0; k < 5000; k++)
		cr_assert_eq(u64_table_put(&t, k * 7919, (uint32_t)k), 0);
	cr_assert_eq(u64_table_filter(&t, keep_even, NULL), 0);
	cr_expect_eq(t.used, 2500);
	for (uint64_t k = 0; k < 5000; k++) {
		uint32_t v = u64_table_get(&t, k * 7919);

		if ((k * 7919) % 2 == 0)
			cr_assert_eq(v, k, "key %lu lost", (unsigned long)(k * 7919));
		else
			cr_assert_eq(v, U64_TABLE_EMPTY, "key %lu kept", (unsigned long)(k * 7919));
	}
	u64_table_free(&t);
}

static uint32_t intern(struct stack_table *t, uint32_t aspace, uint64_t base, bool *is_new)
{
	uint64_t ips[4] = { base, base + 1, base + 2, base + 3 };

	return stack_table_intern(t, PC_STACK_USER, aspace, 100 + aspace, 0, ips, 4, is_new);
}

static void forget_aspace(struct stack_table *t, uint32_t aspace, bool move)
{
	for (uint32_t id = 0; id < t->n; id++)
		if (t->entries[id].aspace == aspace)
			t->entries[id].aspace = STACK_ASPACE_FORGOTTEN;
	stack_table_compact(t, move);
}

static void check_forgetting(bool move)
{
	struct stack_table t = { 0 };
	uint32_t keep[300], gone[300];
	bool is_new;

	for (uint32_t i = 0; i < 300; i++) {
		keep[i] = intern(&t, 1, 1000 * i, &is_new);
		gone[i] = intern(&t, 2, 1000 * i, &is_new);
		cr_assert(is_new);
	}
	forget_aspace(&t, 2, move);
	for (uint32_t i = 0; i < 300; i++) {
		const uint64_t *ips = stack_table_ips(&t, keep[i]);

		cr_assert_eq(intern(&t, 1, 1000 * i, &is_new), keep[i]);
		cr_assert(!is_new, "a kept stack was added again");
		cr_assert_eq(ips[0], 1000 * i);
		cr_assert_eq(ips[3], 1000 * i + 3);
		cr_assert_eq(t.entries[gone[i]].nr, 0);
	}
	for (uint32_t i = 0; i < 300; i++) { /* the slot reused by a new image */
		uint32_t id = intern(&t, 2, 1000 * i, &is_new);

		cr_assert(is_new, "a forgotten stack was matched");
		cr_assert_neq(id, gone[i]);
	}
	if (move)
		cr_expect_eq(t.nips, 4 * 600, "the arena holds only live stacks' ips");
	stack_table_free(&t);
}

Test(stack_table, forgotten_stacks_leave_the_index)
{
	check_forgetting(true);
}

Test(stack_table, forgotten_stacks_without_moving_the_arena)
{
	check_forgetting(false);
}
