/* poll_index.c - poll returns as grouped, ascending times (see
 * poll_index.h): sorted once by time, then by process (and thread) with
 * stable radix sorts, the times copied out group by group. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poll_index.h"
#include "util/grow.h"
#include "util/radix_sort.h"

static int oom(void)
{
	fprintf(stderr, "perfcap-analyze: out of memory\n");
	return -1;
}

static int sort_by(struct poll_ret *v, size_t n, size_t key_offset)
{
	return radix_sort_i64(v, n, sizeof(*v), key_offset);
}

/* The times of v (sorted by group) into t, a group per run of equal pid
 * (and tid, with_tid). 0 or -1. */
static int take_groups(struct poll_times *t, const struct poll_ret *v, size_t n, int with_tid)
{
	size_t cap = 0;

	t->ts = malloc((n ? n : 1) * sizeof(*t->ts));
	if (!t->ts)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int64_t tid = with_tid ? v[i].tid : 0;
		struct poll_group *g = t->ngroups ? &t->groups[t->ngroups - 1] : NULL;

		t->ts[i] = v[i].ts;
		if (g && g->pid == v[i].pid && g->tid == tid) {
			g->to = i + 1;
			continue;
		}
		if (array_grow((void **)&t->groups, &cap, t->ngroups, sizeof(*t->groups), 16) < 0)
			return -1;
		t->groups[t->ngroups++] = (struct poll_group){ v[i].pid, tid, i, i + 1 };
	}
	return 0;
}

int poll_index_build(struct poll_index *x, struct poll_ret *polls, size_t n)
{
	struct poll_ret *by_tid = NULL;
	int rc = -1;

	memset(x, 0, sizeof(*x));
	if (!n) {
		free(polls);
		return 0;
	}
	/* stable sorts, least significant key first */
	if (sort_by(polls, n, offsetof(struct poll_ret, ts)) < 0 ||
	    !(by_tid = malloc(n * sizeof(*by_tid))))
		goto out;
	memcpy(by_tid, polls, n * sizeof(*by_tid));
	if (sort_by(polls, n, offsetof(struct poll_ret, pid)) < 0 ||
	    take_groups(&x->by_pid, polls, n, 0) < 0)
		goto out;
	free(polls);
	polls = NULL;
	if (sort_by(by_tid, n, offsetof(struct poll_ret, tid)) < 0 ||
	    sort_by(by_tid, n, offsetof(struct poll_ret, pid)) < 0 ||
	    take_groups(&x->by_tid, by_tid, n, 1) < 0)
		goto out;
	rc = 0;
out:
	free(polls);
	free(by_tid);
	if (rc < 0) {
		poll_index_free(x);
		return oom();
	}
	return 0;
}

void poll_index_free(struct poll_index *x)
{
	free(x->by_pid.ts);
	free(x->by_pid.groups);
	free(x->by_tid.ts);
	free(x->by_tid.groups);
	memset(x, 0, sizeof(*x));
}

/* The group of (pid, tid), or NULL: the last question's first, else a
 * binary search of the groups (in (pid, tid) order). */
static const struct poll_group *group_of(struct poll_times *t, int64_t pid, int64_t tid)
{
	size_t lo = 0, hi = t->ngroups;
	const struct poll_group *g;

	if (!t->ngroups)
		return NULL;
	g = &t->groups[t->group_hint];
	if (g->pid == pid && g->tid == tid)
		return g;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		g = &t->groups[mid];
		if (g->pid < pid || (g->pid == pid && g->tid < tid))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == t->ngroups || t->groups[lo].pid != pid || t->groups[lo].tid != tid)
		return NULL;
	t->group_hint = lo;
	t->hint = t->groups[lo].from;
	return &t->groups[lo];
}

/* x is before the answer: below key, or (after) at most key. */
static inline int before(int64_t x, int64_t key, int after)
{
	return after ? x <= key : x < key;
}

/* The first index in g whose time is not before key: galloping from the
 * last answer when the answer is not before it (the questions of one
 * connection move forward by small steps), else a binary search of the
 * part before it. The answer is the same either way. */
static size_t search(struct poll_times *t, const struct poll_group *g, int64_t key, int after)
{
	const int64_t *a = t->ts;
	size_t lo = t->hint, hi = g->to, step = 1;

	if (lo < g->from || lo > g->to)
		lo = g->from;
	if (lo > g->from && !before(a[lo - 1], key, after)) {
		hi = lo;        /* the answer is before the hint */
		lo = g->from;
	} else {
		for (;;) {      /* every element before lo is before key */
			size_t probe = lo + step - 1;

			if (probe >= g->to || !before(a[probe], key, after)) {
				hi = probe < g->to ? probe : g->to;
				break;
			}
			lo = probe + 1;
			step *= 2;
		}
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (before(a[mid], key, after))
			lo = mid + 1;
		else
			hi = mid;
	}
	t->hint = lo;
	return lo;
}

int64_t poll_index_last_of_thread(struct poll_index *x, int64_t pid, int64_t tid, int64_t ts,
				  int *found)
{
	const struct poll_group *g = group_of(&x->by_tid, pid, tid);
	size_t i;

	*found = 0;
	if (!g)
		return 0;
	i = search(&x->by_tid, g, ts, 1);
	if (i == g->from)
		return 0;
	*found = 1;
	return x->by_tid.ts[i - 1];
}

int64_t poll_index_first_of_process(struct poll_index *x, int64_t pid, int64_t ts, int *found)
{
	const struct poll_group *g = group_of(&x->by_pid, pid, 0);
	size_t i;

	*found = 0;
	if (!g)
		return 0;
	i = search(&x->by_pid, g, ts, 0);
	if (i == g->to)
		return 0;
	*found = 1;
	return x->by_pid.ts[i];
}
