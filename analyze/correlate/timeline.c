/* timeline.c - reorder buffer releasing events in key order (see
 * timeline.h). Pending events are kept sorted: an event in order is
 * appended, one a little out of order is inserted by shifting at most
 * NEAR_SHIFT events. Others wait in "incoming" until the next advance,
 * which merges their ascending runs with a heap (or, past MERGE_RUNS_MAX
 * runs, sorts them with a stable merge sort that skips merges of already
 * ordered halves) and merges them in. Ties keep their capture order. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "timeline.h"

void timeline_init(struct timeline *t)
{
	memset(t, 0, sizeof(*t));
}

void timeline_free(struct timeline *t)
{
	free(t->pending);
	free(t->incoming);
	free(t->scratch);
	memset(t, 0, sizeof(*t));
}

static int reserve(struct tl_event **buf, size_t *cap, size_t need)
{
	size_t new_cap = *cap ? *cap : 4096;
	struct tl_event *grown;

	if (need <= *cap)
		return 0;
	while (new_cap < need)
		new_cap *= 2;
	grown = realloc(*buf, new_cap * sizeof(**buf));
	if (!grown)
		return -ENOMEM;
	*buf = grown;
	*cap = new_cap;
	return 0;
}

#define NEAR_SHIFT 64

/* Puts ev in pending if it is in order or nearly. 1 if done, 0 if not. */
static int add_near(struct timeline *t, const struct tl_event *ev)
{
	size_t floor = t->len - t->head > NEAR_SHIFT ? t->len - NEAR_SHIFT : t->head;
	size_t pos = t->len;

	if (t->in_len)    /* earlier events wait in incoming: keep the order */
		return 0;
	while (pos > floor && t->pending[pos - 1].key > ev->key)
		pos--;
	if (pos > t->head && pos == floor && t->pending[pos - 1].key > ev->key)
		return 0;
	if (reserve(&t->pending, &t->cap, t->len + 1) < 0)
		return -ENOMEM;
	memmove(t->pending + pos + 1, t->pending + pos, (t->len - pos) * sizeof(*ev));
	t->pending[pos] = *ev;
	t->len++;
	if (t->len - t->head > t->peak)
		t->peak = t->len - t->head;
	return 1;
}

int timeline_add(struct timeline *t, const struct tl_event *ev, tl_sink sink, void *ctx)
{
	int rc;

	if (t->released_any && ev->key < t->released_key) {
		struct tl_event late = *ev;

		late.flags |= TL_F_LATE;
		t->late++;
		return sink(ctx, &late);
	}
	if (ev->key > t->max_key)
		t->max_key = ev->key;
	rc = add_near(t, ev);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	if (reserve(&t->incoming, &t->in_cap, t->in_len + 1) < 0)
		return -ENOMEM;
	t->incoming[t->in_len++] = *ev;
	return 0;
}

/* Stable merge of a[0..na) and b[0..nb) into out. */
static void merge(struct tl_event *out, const struct tl_event *a, size_t na,
		  const struct tl_event *b, size_t nb)
{
	size_t i = 0, j = 0, k = 0;

	while (i < na && j < nb)
		out[k++] = b[j].key < a[i].key ? b[j++] : a[i++];
	memcpy(out + k, a + i, (na - i) * sizeof(*a));
	memcpy(out + k + (na - i), b + j, (nb - j) * sizeof(*b));
}

/* Stable merge of a[0..na) and b[0..nb) into a[0..na + nb), from the
 * back: a has room for nb more, and each event moves once (merging into
 * scratch and copying back moved the overlap twice; merge_incoming was 6%
 * of an import of a real capture, most of it copies). At equal keys a's
 * events stay first. */
static void merge_backward(struct tl_event *a, size_t na, const struct tl_event *b, size_t nb)
{
	size_t i = na, j = nb, k = na + nb;

	while (j > 0) {
		if (i > 0 && a[i - 1].key > b[j - 1].key)
			a[--k] = a[--i];
		else
			a[--k] = b[--j];
	}
}

/* Sorts v[0..n) by key, stable; tmp holds n events. */
static void sort_events(struct tl_event *v, size_t n, struct tl_event *tmp)
{
	size_t half = n / 2;

	if (n < 2)
		return;
	sort_events(v, half, tmp);
	sort_events(v + half, n - half, tmp);
	if (v[half - 1].key <= v[half].key)
		return;
	merge(tmp, v, half, v + half, n - half);
	memcpy(v, tmp, n * sizeof(*v));
}

/* ---- k-way merge of a chunk's runs ------------------------------------
 *
 * The events a chunk adds out of order come as a few ascending runs (the
 * recorder drains its rings one after the other: 15-20 runs of a few
 * thousand events each per chunk of a redis capture). Merging them with
 * a heap of the runs' heads moves each event once, where the merge sort
 * moved it at every level it merged (0.07 s of the loading thread for
 * the 1.45M events of that capture). More runs than MERGE_RUNS_MAX (a
 * shuffled capture) go to the merge sort. */
#define MERGE_RUNS_MAX 64

struct run {
	const struct tl_event *at, *end;
	uint32_t index;             /* run order: breaks ties, keeps capture order */
};

/* Whether run a's head goes before run b's. */
static int run_before(const struct run *a, const struct run *b)
{
	return a->at->key < b->at->key || (a->at->key == b->at->key && a->index < b->index);
}

static void sift_down(struct run *heap, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		struct run tmp;

		if (l < n && run_before(&heap[l], &heap[m]))
			m = l;
		if (r < n && run_before(&heap[r], &heap[m]))
			m = r;
		if (m == i)
			return;
		tmp = heap[i];
		heap[i] = heap[m];
		heap[m] = tmp;
		i = m;
	}
}

/* The ascending runs of v[0..n) into runs; their number, or 0 when there
 * are more than MERGE_RUNS_MAX. */
static size_t find_runs(const struct tl_event *v, size_t n, struct run *runs)
{
	size_t k = 0, from = 0;

	for (size_t i = 1; i <= n; i++) {
		if (i < n && v[i].key >= v[i - 1].key)
			continue;
		if (k == MERGE_RUNS_MAX)
			return 0;
		runs[k] = (struct run){ v + from, v + i, (uint32_t)k };
		k++;
		from = i;
	}
	return k;
}

/* Merges the k runs into out, stable. */
static void merge_runs(struct run *heap, size_t k, struct tl_event *out)
{
	for (size_t i = k / 2; i-- > 0;)
		sift_down(heap, k, i);
	while (k > 1) {
		*out++ = *heap[0].at++;
		if (heap[0].at == heap[0].end)
			heap[0] = heap[--k];
		sift_down(heap, k, 0);
	}
	memcpy(out, heap[0].at, (size_t)(heap[0].end - heap[0].at) * sizeof(*out));
}

/* incoming sorted by key, stable: incoming itself when it is one run,
 * else scratch (n events). */
static const struct tl_event *sorted_incoming(struct timeline *t, size_t n)
{
	struct run runs[MERGE_RUNS_MAX];
	size_t k = find_runs(t->incoming, n, runs);

	if (k == 1)
		return t->incoming;
	if (k == 0) {
		sort_events(t->incoming, n, t->scratch);
		return t->incoming;
	}
	merge_runs(runs, k, t->scratch);
	return t->scratch;
}

/* Drops the released events at the front once they are the larger half,
 * so each event is moved O(1) times on average. */
static void compact_pending(struct timeline *t)
{
	if (t->head == 0 || t->head < t->len - t->head)
		return;
	memmove(t->pending, t->pending + t->head, (t->len - t->head) * sizeof(*t->pending));
	t->len -= t->head;
	t->head = 0;
}

/* Moves the sorted incoming events into pending, keeping it sorted. */
static int merge_incoming(struct timeline *t)
{
	size_t n = t->in_len, split;
	const struct tl_event *in;

	if (reserve(&t->scratch, &t->scratch_cap, n) < 0)
		return -ENOMEM;
	in = sorted_incoming(t, n);
	compact_pending(t);
	if (reserve(&t->pending, &t->cap, t->len + n) < 0)
		return -ENOMEM;
	/* pending events after the first incoming key must be merged */
	split = t->len;
	while (split > t->head && t->pending[split - 1].key > in[0].key)
		split--;
	if (split < t->len) {
		merge_backward(t->pending + split, t->len - split, in, n);
	} else {
		memcpy(t->pending + t->len, in, n * sizeof(*t->pending));
	}
	t->len += n;
	t->in_len = 0;
	if (t->len - t->head > t->peak)
		t->peak = t->len - t->head;
	return 0;
}

static int release_until(struct timeline *t, uint64_t limit, int all, tl_sink sink,
			 void *ctx)
{
	while (t->head < t->len && (all || t->pending[t->head].key <= limit)) {
		const struct tl_event *ev = &t->pending[t->head++];
		int rc;

		t->released_key = ev->key;
		t->released_any = 1;
		rc = sink(ctx, ev);
		if (rc < 0)
			return rc;
	}
	if (t->head == t->len)
		t->head = t->len = 0;
	compact_pending(t);
	return 0;
}

int timeline_advance(struct timeline *t, tl_sink sink, void *ctx)
{
	int rc = t->in_len ? merge_incoming(t) : 0;

	if (rc < 0)
		return rc;
	if (t->max_key < TIMELINE_WINDOW_NS)
		return 0;
	return release_until(t, t->max_key - TIMELINE_WINDOW_NS, 0, sink, ctx);
}

int timeline_finish(struct timeline *t, tl_sink sink, void *ctx)
{
	int rc = t->in_len ? merge_incoming(t) : 0;

	return rc < 0 ? rc : release_until(t, 0, 1, sink, ctx);
}
