/* offcpu_copies.c - OFFCPU events held until their user stack copy comes
 * (see offcpu_copies.h).
 *
 * Held events sit in an array in the order they were held; a hash from
 * (tid, the copy's switch-out) gives the sequence number (+ 1; 0 once
 * released) of the latest event waiting for that copy, and each event the
 * one held before it for the same copy (a chain, newest first). Released events are skipped from the front and the array is
 * compacted when the released front is most of it, so memory stays
 * bounded by what OFFCPU_COPY_WAIT_NS of capture holds.
 */
#include <stdlib.h>
#include <string.h>

#include "offcpu_copies.h"
#include "perfcap_format.h"
#include "util/hashmap.h"

#define COMPACT_MIN 1024

struct held {
	struct tl_event ev;
	uint64_t copy_ts;         /* the copy it waits for */
	uint64_t before;          /* sequence + 1 of the previous waiter for it, 0: none */
	int done;
};

struct offcpu_copies {
	struct held *held;
	size_t head, len, cap;    /* [head, len) may hold unreleased events */
	uint64_t base;            /* sequence number of held[0] */
	struct hmap by_key;       /* (tid, switch-out) -> sequence + 1, 0: released */
	uint64_t paired, missing;           /* events waiting for their own copy */
	uint64_t same_paired, same_missing; /* for an earlier interval's */
};

struct offcpu_copies *offcpu_copies_new(void)
{
	struct offcpu_copies *w = calloc(1, sizeof(*w));

	if (w)
		hmap_init(&w->by_key);
	return w;
}

void offcpu_copies_free(struct offcpu_copies *w)
{
	if (!w)
		return;
	hmap_free(&w->by_key);
	free(w->held);
	free(w);
}

static void compact(struct offcpu_copies *w)
{
	if (w->head < COMPACT_MIN || w->head * 2 < w->len)
		return;
	memmove(w->held, w->held + w->head, (w->len - w->head) * sizeof(*w->held));
	w->len -= w->head;
	w->base += w->head;
	w->head = 0;
}

static int grow(struct offcpu_copies *w)
{
	size_t cap = w->cap ? 2 * w->cap : 256;
	struct held *h;

	compact(w);
	if (w->len < w->cap)
		return 0;
	h = realloc(w->held, cap * sizeof(*h));
	if (!h)
		return -1;
	w->held = h;
	w->cap = cap;
	return 0;
}

int offcpu_copies_hold(struct offcpu_copies *w, const struct tl_event *ev, uint64_t copy_ts)
{
	uint64_t *seq;

	if (w->len == w->cap && grow(w) < 0)
		return -1;
	seq = hmap_upsert(&w->by_key, ev->tid, copy_ts, 0, NULL);
	if (!seq)
		return -1;
	w->held[w->len] = (struct held){ .ev = *ev, .copy_ts = copy_ts, .before = *seq };
	*seq = w->base + w->len + 1;
	w->len++;
	return 0;
}

/* The held event of sequence + 1 s, NULL when released and compacted away. */
static struct held *held_at(struct offcpu_copies *w, uint64_t s)
{
	return s && s - 1 >= w->base + w->head ? &w->held[s - 1 - w->base] : NULL;
}

/* Hands one held event on, with ustack as its user stack unless none. */
static int release_one(struct held *h, uint32_t ustack, offcpu_release_fn release, void *ctx)
{
	h->done = 1;
	if (ustack != PC_STACK_NONE)
		h->ev.arg = (uint64_t)ustack << 32 | (h->ev.arg & 0xffffffffu);
	return release(ctx, &h->ev);
}

int offcpu_copies_arrived(struct offcpu_copies *w, uint32_t tid, uint64_t out_ts,
			  uint32_t ustack, offcpu_release_fn release, void *ctx)
{
	uint64_t *seq = hmap_find(&w->by_key, tid, out_ts);
	struct held *h;
	int rc = 0;

	if (!seq)
		return 0;
	h = held_at(w, *seq);
	*seq = 0;
	for (; h && rc >= 0; h = held_at(w, h->before)) {
		if (h->done)
			continue;
		*(h->copy_ts == h->ev.start ? &w->paired : &w->same_paired) += 1;
		rc = release_one(h, ustack, release, ctx);
	}
	return rc < 0 ? rc : 0;
}

int offcpu_copies_expire(struct offcpu_copies *w, uint64_t newest, offcpu_release_fn release,
			 void *ctx)
{
	int all = newest == UINT64_MAX, rc = 0;

	while (w->head < w->len && rc >= 0) {
		struct held *h = &w->held[w->head];

		if (!h->done) {
			if (!all && h->ev.key + OFFCPU_COPY_WAIT_NS >= newest)
				break;
			uint64_t *seq = hmap_find(&w->by_key, h->ev.tid, h->copy_ts);

			/* the chain's newest expires last: all before it are done */
			if (seq && *seq == w->base + w->head + 1)
				*seq = 0;
			*(h->copy_ts == h->ev.start ? &w->missing : &w->same_missing) += 1;
			rc = release_one(h, PC_STACK_NONE, release, ctx);
		}
		w->head++;
	}
	compact(w);
	return rc < 0 ? rc : 0;
}

void offcpu_copies_counts(const struct offcpu_copies *w, uint64_t *paired, uint64_t *missing)
{
	*paired = w ? w->paired : 0;
	*missing = w ? w->missing : 0;
}

void offcpu_copies_same_counts(const struct offcpu_copies *w, uint64_t *paired,
			       uint64_t *missing)
{
	*paired = w ? w->same_paired : 0;
	*missing = w ? w->same_missing : 0;
}
