/* request_runs.c - sorted runs of socket calls in a temporary file and
 * their merge (see request_runs_internal.h). A run is the raw structs in
 * order at its offset of the one file, read back RUN_BUFFER_CALLS at a
 * time (temp_file_read); the merge picks the smallest head by a linear look
 * over the runs (a few per ten million calls, so a heap would not pay).
 * The order is total, so the merge gives the one sequence an in-memory
 * sort of every call would. A run is sorted by stream with a counting
 * sort, then each stream by time (request_order_stream), into a second
 * buffer while it is written (the memory qsort's merge sort took). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "request_runs_internal.h"
#include "util/hashmap.h"
#include "util/temp_file.h"

static int cmp_int64(int64_t x, int64_t y)
{
	return (x > y) - (x < y);
}

int request_call_cmp(const struct request_call *x, const struct request_call *y)
{
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->fd != y->fd)
		return x->fd < y->fd ? -1 : 1;
	if (x->ts != y->ts)
		return cmp_int64(x->ts, y->ts);
	if (x->ord != y->ord)
		return x->ord < y->ord ? -1 : 1;
	return cmp_int64(x->seq, y->seq);
}

/* A call's stream as one number whose unsigned order is (pid, fd). */
static uint64_t stream_key(const struct request_call *c)
{
	return (uint64_t)c->pid << 32 | ((uint32_t)c->fd ^ 0x80000000u);
}

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Counts each stream's calls into streams (key -> count). 0 or -1. */
static int count_streams(struct hmap *streams, const struct request_call *v, size_t n)
{
	uint64_t last = 0, *count = NULL;

	for (size_t i = 0; i < n; i++) {
		uint64_t key = stream_key(&v[i]);
		int created;

		if (!count || key != last) {   /* calls of a stream come in runs */
			count = hmap_upsert(streams, key, 0, 0, &created);
			if (!count)
				return -1;
			last = key;
		}
		(*count)++;
	}
	return 0;
}

/* Replaces each stream's count by its first position in (pid, fd)
 * order. 0 or -1. */
static int stream_starts(struct hmap *streams)
{
	uint64_t *keys = malloc((streams->len ? streams->len : 1) * sizeof(*keys)), at = 0;
	const struct hmap_slot *slot;
	size_t k = 0;

	if (!keys)
		return -1;
	for (size_t pos = 0; hmap_next(streams, &pos, &slot);)
		keys[k++] = slot->a;
	qsort(keys, k, sizeof(*keys), by_u64);
	for (size_t i = 0; i < k; i++) {
		uint64_t *start = hmap_find(streams, keys[i], 0), count = *start;

		*start = at;
		at += count;
	}
	free(keys);
	return 0;
}

/* Copies v into R->sorted by stream, keeping each stream's calls in
 * their order (a counting sort). 0 or -1. */
static int scatter(struct request_runs *R, struct hmap *streams, const struct request_call *v,
		   size_t n)
{
	uint64_t last = 0, *at = NULL;

	R->sorted = malloc((n ? n : 1) * sizeof(*R->sorted));
	if (!R->sorted)
		return -1;
	for (size_t i = 0; i < n; i++) {
		uint64_t key = stream_key(&v[i]);

		if (!at || key != last) {
			at = hmap_find(streams, key, 0);
			last = key;
		}
		R->sorted[(*at)++] = v[i];
	}
	return 0;
}

/* v[0..n) in the pass's order into R->sorted: by stream (pid, fd), then
 * each stream by (ts, ord, seq) as the in-memory path orders it. The
 * order is total, so this is the order qsort with request_call_cmp gave
 * (which, with its comparisons through a pointer and 48-byte moves, was
 * a fifth of the import of a 60 s redis capture). 0 or -1. */
static int sort_run(struct request_runs *R, const struct request_call *v, size_t n)
{
	struct hmap streams;
	int rc;

	hmap_init(&streams);
	rc = count_streams(&streams, v, n) < 0 || stream_starts(&streams) < 0 ||
	     scatter(R, &streams, v, n) < 0 ? -1 : 0;
	hmap_free(&streams);
	for (size_t a = 0, b; rc == 0 && a < n; a = b) {
		for (b = a + 1; b < n && stream_key(&R->sorted[b]) == stream_key(&R->sorted[a]); b++)
			;
		rc = request_order_stream(R->sorted + a, b - a);
	}
	return rc;
}

static int fail(const char *what)
{
	return temp_file_fail("request calls", what);
}

static int add_run(struct request_runs *R, off_t start, off_t end)
{
	if (R->n == R->cap) {
		size_t cap = R->cap ? R->cap * 2 : 8;
		struct request_run *grown = realloc(R->v, cap * sizeof(*grown));

		if (!grown)
			return fail("out of memory");
		R->v = grown;
		R->cap = cap;
	}
	R->v[R->n++] = (struct request_run){ .next = start, .end = end };
	return 0;
}

int request_runs_write(struct request_runs *R, struct request_call *v, size_t n)
{
	off_t start = R->size;
	int rc;

	if (!R->file && !(R->file = temp_file_open("perfcap-requests")))
		return fail("temporary file");
	if (sort_run(R, v, n) < 0) {
		free(R->sorted);
		R->sorted = NULL;
		errno = ENOMEM;
		return fail("sorting");
	}
	rc = fwrite(R->sorted, sizeof(*v), n, R->file) != n || fflush(R->file) != 0;
	free(R->sorted);       /* as much memory as the buffer: not kept */
	R->sorted = NULL;
	if (rc)
		return fail("writing a temporary file");
	R->size += (off_t)(n * sizeof(*v));
	return add_run(R, start, R->size);
}

/* Refills r's buffer from the file; r->len is 0 at the run's end. */
static int refill(struct request_runs *R, struct request_run *r)
{
	size_t got;

	r->pos = r->len = 0;
	if (temp_file_read(R->file, r->buf, RUN_BUFFER_CALLS * sizeof(*r->buf), &r->next, r->end,
			   &got) < 0)
		return fail("reading a temporary file");
	r->len = got / sizeof(*r->buf);
	return 0;
}

int request_runs_start(struct request_runs *R)
{
	for (size_t i = 0; i < R->n; i++) {
		size_t calls = (size_t)(R->v[i].end - R->v[i].next) / sizeof(*R->v[i].buf);

		if (calls > RUN_BUFFER_CALLS)
			calls = RUN_BUFFER_CALLS;
		R->v[i].buf = malloc((calls ? calls : 1) * sizeof(*R->v[i].buf));
		if (!R->v[i].buf)
			return fail("out of memory");
		if (refill(R, &R->v[i]) < 0)
			return -1;
	}
	return 0;
}

int request_runs_next(struct request_runs *R, struct request_call *out)
{
	struct request_run *best = NULL;

	for (size_t i = 0; i < R->n; i++) {
		struct request_run *r = &R->v[i];

		if (r->pos < r->len &&
		    (!best || request_call_cmp(&r->buf[r->pos], &best->buf[best->pos]) < 0))
			best = r;
	}
	if (!best)
		return 0;
	*out = best->buf[best->pos++];
	return best->pos == best->len && refill(R, best) < 0 ? -1 : 1;
}

void request_runs_free(struct request_runs *R)
{
	if (R->file)
		fclose(R->file);
	for (size_t i = 0; i < R->n; i++)
		free(R->v[i].buf);
	free(R->v);
	memset(R, 0, sizeof(*R));
}
