/* test_offcpu_copies.c - unit tests of the OFFCPU events held for a user
 * stack copy that comes after them (analyze/import/offcpu_copies.c): a
 * copy releases its event once, with its stack and the event's kernel
 * stack; an event whose copy does not come within OFFCPU_COPY_WAIT_NS is
 * released with its own stack and counted missing; a copy after that
 * releases nothing; events stay exact across the array's compaction;
 * several events waiting for one earlier copy (format 1.9, COPY_SAME) are
 * all released by it, each once, and each expires on its own. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "import/offcpu_copies.h"
#include "perfcap_format.h"

#define MAX_SEEN 6000

struct seen {
	struct tl_event ev[MAX_SEEN];
	size_t n;
};

static int keep(void *ctx, const struct tl_event *ev)
{
	struct seen *s = ctx;

	cr_assert_lt(s->n, MAX_SEEN);
	s->ev[s->n++] = *ev;
	return 0;
}

/* An OFFCPU event of tid switched out at out, switched in 2 ms later,
 * with its own user stack own and kernel stack 5. */
static struct tl_event offcpu(uint32_t tid, uint64_t out, uint32_t own, uint64_t id)
{
	return (struct tl_event){ .type = TL_OFFCPU, .tid = tid, .pid = tid, .start = out,
				  .key = out + 2000000, .id = id,
				  .arg = (uint64_t)own << 32 | 5 };
}

Test(offcpu_copies, copy_releases_its_event_once)
{
	struct offcpu_copies *w = offcpu_copies_new();
	static struct seen s;
	uint64_t paired, missing;

	struct tl_event a = offcpu(7, 1000, PC_STACK_NONE, 1), b = offcpu(8, 1000, PC_STACK_NONE, 2);

	s.n = 0;
	cr_assert_eq(offcpu_copies_hold(w, &a, a.start), 0);
	cr_assert_eq(offcpu_copies_hold(w, &b, b.start), 0);
	cr_assert_eq(offcpu_copies_arrived(w, 8, 999, 41, keep, &s), 0);   /* another interval */
	cr_assert_eq(s.n, 0);
	cr_assert_eq(offcpu_copies_arrived(w, 8, 1000, 42, keep, &s), 0);
	cr_assert_eq(s.n, 1);
	cr_assert_eq(s.ev[0].id, 2);
	cr_assert_eq(s.ev[0].arg >> 32, 42, "the copy's stack");
	cr_assert_eq(s.ev[0].arg & 0xffffffffu, 5, "the kernel stack kept");
	cr_assert_eq(offcpu_copies_arrived(w, 8, 1000, 43, keep, &s), 0);
	cr_assert_eq(s.n, 1, "a second copy of the interval releases nothing");
	offcpu_copies_counts(w, &paired, &missing);
	cr_assert_eq(paired, 1);
	cr_assert_eq(missing, 0);
	offcpu_copies_free(w);
}

Test(offcpu_copies, overdue_event_released_missing)
{
	struct offcpu_copies *w = offcpu_copies_new();
	static struct seen s;
	uint64_t paired, missing, key;

	struct tl_event a = offcpu(7, 1000, 9, 1), b = offcpu(7, 5000000, 9, 2);

	s.n = 0;
	cr_assert_eq(offcpu_copies_hold(w, &a, a.start), 0);
	cr_assert_eq(offcpu_copies_hold(w, &b, b.start), 0);
	key = 1000 + 2000000;
	cr_assert_eq(offcpu_copies_expire(w, key + OFFCPU_COPY_WAIT_NS, keep, &s), 0);
	cr_assert_eq(s.n, 0, "not overdue yet");
	cr_assert_eq(offcpu_copies_expire(w, key + OFFCPU_COPY_WAIT_NS + 1, keep, &s), 0);
	cr_assert_eq(s.n, 1);
	cr_assert_eq(s.ev[0].id, 1);
	cr_assert_eq(s.ev[0].arg >> 32, 9, "its own stack");
	cr_assert_eq(offcpu_copies_arrived(w, 7, 1000, 42, keep, &s), 0);
	cr_assert_eq(s.n, 1, "a copy after the wait releases nothing");
	cr_assert_eq(offcpu_copies_expire(w, UINT64_MAX, keep, &s), 0);
	cr_assert_eq(s.n, 2, "all released at the end");
	cr_assert_eq(s.ev[1].id, 2);
	offcpu_copies_counts(w, &paired, &missing);
	cr_assert_eq(paired, 0);
	cr_assert_eq(missing, 2);
	offcpu_copies_free(w);
}

Test(offcpu_copies, many_events_across_compaction)
{
	struct offcpu_copies *w = offcpu_copies_new();
	static struct seen s;
	static uint8_t released[MAX_SEEN];
	uint64_t paired, missing;
	const uint32_t n = 5000;

	s.n = 0;
	srand(3);
	for (uint32_t i = 0; i < n; i++) {
		struct tl_event ev = offcpu(100 + i % 50, 1000000ull * i, PC_STACK_NONE, i);

		cr_assert_eq(offcpu_copies_hold(w, &ev, ev.start), 0);
		/* the copy of an event 0-3 events back comes, except every 7th */
		uint32_t back = (uint32_t)rand() % 4;
		if (i >= back && (i - back) % 7 != 0)
			offcpu_copies_arrived(w, 100 + (i - back) % 50, 1000000ull * (i - back),
					      1000 + i - back, keep, &s);
		if (i % 100 == 99)
			offcpu_copies_expire(w, ev.key, keep, &s);
	}
	offcpu_copies_expire(w, UINT64_MAX, keep, &s);
	cr_assert_eq(s.n, n, "every event released");
	for (size_t i = 0; i < s.n; i++) {
		uint64_t id = s.ev[i].id;

		cr_assert_eq(released[id], 0, "event %llu released twice", (unsigned long long)id);
		released[id] = 1;
		if ((s.ev[i].arg >> 32) != PC_STACK_NONE)
			cr_assert_eq(s.ev[i].arg >> 32, 1000 + id, "event %llu got another's copy",
				     (unsigned long long)id);
	}
	offcpu_copies_counts(w, &paired, &missing);
	cr_assert_eq(paired + missing, n);
	cr_assert_geq(missing, n / 7);
	offcpu_copies_free(w);
}

/* Intervals 2 and 3 of thread 7 stand on the copy of interval 1 (switched
 * out at 1000), which interval 1 waits for too; thread 8's waiter for
 * the same timestamp is not theirs. */
Test(offcpu_copies, one_copy_releases_all_its_waiters)
{
	struct offcpu_copies *w = offcpu_copies_new();
	static struct seen s;
	uint64_t paired, missing;
	struct tl_event own = offcpu(7, 1000, PC_STACK_NONE, 1);
	struct tl_event later1 = offcpu(7, 5000000, PC_STACK_NONE, 2);
	struct tl_event other = offcpu(8, 1000, PC_STACK_NONE, 3);
	struct tl_event later2 = offcpu(7, 9000000, PC_STACK_NONE, 4);

	s.n = 0;
	cr_assert_eq(offcpu_copies_hold(w, &own, 1000), 0);
	cr_assert_eq(offcpu_copies_hold(w, &later1, 1000), 0);
	cr_assert_eq(offcpu_copies_hold(w, &other, 1000), 0);
	cr_assert_eq(offcpu_copies_hold(w, &later2, 1000), 0);
	cr_assert_eq(offcpu_copies_arrived(w, 7, 1000, 42, keep, &s), 0);
	cr_assert_eq(s.n, 3, "the copy releases its three waiters");
	for (size_t i = 0; i < s.n; i++) {
		cr_assert_neq(s.ev[i].id, 3, "thread 8's waiter released by thread 7's copy");
		cr_assert_eq(s.ev[i].arg >> 32, 42);
	}
	cr_assert_eq(offcpu_copies_arrived(w, 7, 1000, 43, keep, &s), 0);
	cr_assert_eq(s.n, 3, "a second copy releases nothing");
	cr_assert_eq(offcpu_copies_expire(w, UINT64_MAX, keep, &s), 0);
	cr_assert_eq(s.n, 4);
	cr_assert_eq(s.ev[3].id, 3);
	cr_assert_eq(s.ev[3].arg >> 32, PC_STACK_NONE, "thread 8's copy never came");
	offcpu_copies_counts(w, &paired, &missing);
	cr_assert_eq(paired, 1, "interval 1, with its own copy");
	cr_assert_eq(missing, 1, "thread 8's");
	offcpu_copies_same_counts(w, &paired, &missing);
	cr_assert_eq(paired, 2, "intervals 2 and 3, with the earlier copy");
	cr_assert_eq(missing, 0);
	offcpu_copies_free(w);
}

/* Waiters of one copy expire one by one, in the order they were held; the
 * copy coming after the first expired releases the others. */
Test(offcpu_copies, waiters_expire_apart)
{
	struct offcpu_copies *w = offcpu_copies_new();
	static struct seen s;
	uint64_t paired, missing;
	struct tl_event a = offcpu(7, 1000, PC_STACK_NONE, 1);
	struct tl_event b = offcpu(7, 1000 + 3 * OFFCPU_COPY_WAIT_NS, PC_STACK_NONE, 2);

	s.n = 0;
	cr_assert_eq(offcpu_copies_hold(w, &a, 1000), 0);
	cr_assert_eq(offcpu_copies_hold(w, &b, 1000), 0);
	cr_assert_eq(offcpu_copies_expire(w, a.key + OFFCPU_COPY_WAIT_NS + 1, keep, &s), 0);
	cr_assert_eq(s.n, 1);
	cr_assert_eq(s.ev[0].id, 1);
	cr_assert_eq(s.ev[0].arg >> 32, PC_STACK_NONE);
	cr_assert_eq(offcpu_copies_arrived(w, 7, 1000, 42, keep, &s), 0);
	cr_assert_eq(s.n, 2, "the later waiter still gets the copy");
	cr_assert_eq(s.ev[1].id, 2);
	cr_assert_eq(s.ev[1].arg >> 32, 42);
	offcpu_copies_counts(w, &paired, &missing);
	cr_assert_eq(paired, 0);
	cr_assert_eq(missing, 1);
	offcpu_copies_same_counts(w, &paired, &missing);
	cr_assert_eq(paired, 1);
	cr_assert_eq(missing, 0);
	offcpu_copies_free(w);
}
