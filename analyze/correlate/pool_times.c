/* pool_times.c - readiness and pickup times in sorted runs on disk past a
 * bound, read back merged (see pool_times.h). A run is the ready times of
 * its pairs sorted, then their pickup times sorted, at its offset of one
 * unlinked temporary file; reading merges each stream over the runs, a
 * small buffer of each at a time, by a linear look at the runs' heads (a
 * run per 4M requests of one process: a few, so a heap would not pay).
 * The times are plain integers, so any merge gives the one sorted
 * sequence. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pool_times.h"
#include "util/grow.h"
#include "util/radix_sort.h"
#include "util/temp_file.h"

static int fail(const char *what)
{
	return temp_file_fail("pool times", what);
}

static int oom(void)
{
	errno = ENOMEM;
	return fail("keeping them");
}

void pool_times_init(struct pool_times *t)
{
	memset(t, 0, sizeof(*t));
	t->run_max = temp_file_run_size("PERFCAP_POOL_RUN_TIMES", POOL_TIMES_RUN);
}

static int sort_times(struct pool_times *t)
{
	return radix_sort_i64(t->ready, t->n, sizeof(int64_t), 0) < 0 ||
	       radix_sort_i64(t->pickup, t->n, sizeof(int64_t), 0) < 0 ? oom() : 0;
}

/* The pairs in memory, sorted, as a new run; memory is then empty. */
static int spill(struct pool_times *t)
{
	size_t bytes = t->n * sizeof(int64_t);

	if (!t->file && !(t->file = temp_file_open("perfcap-pool")))
		return fail("temporary file");
	if (sort_times(t) < 0)
		return -1;
	if (array_grow((void **)&t->runs, &t->runs_cap, t->nruns, sizeof(*t->runs), 8) < 0)
		return oom();
	errno = 0;
	if (fwrite(t->ready, 1, bytes, t->file) != bytes ||
	    fwrite(t->pickup, 1, bytes, t->file) != bytes || fflush(t->file) != 0)
		return fail("writing a temporary file");
	t->runs[t->nruns++] = (struct pool_times_run){ t->size, t->n };
	t->size += 2 * (off_t)bytes;
	t->n = 0;
	return 0;
}

static int grow_times(struct pool_times *t)
{
	size_t cap = t->cap ? t->cap * 2 : 4096;
	int64_t *r, *p;

	if (cap > t->run_max)
		cap = t->run_max;
	r = realloc(t->ready, cap * sizeof(*r));
	if (!r)
		return oom();
	t->ready = r;
	p = realloc(t->pickup, cap * sizeof(*p));
	if (!p)
		return oom();
	t->pickup = p;
	t->cap = cap;
	return 0;
}

int pool_times_add(struct pool_times *t, int64_t ready, int64_t pickup)
{
	if (t->n >= t->run_max && spill(t) < 0)
		return -1;
	if (t->n == t->cap && grow_times(t) < 0)
		return -1;
	t->ready[t->n] = ready;
	t->pickup[t->n++] = pickup;
	return 0;
}

/* Refills c from the file when its buffer is used up. */
static int refill(FILE *file, struct pool_times_cursor *c)
{
	size_t got;

	if (c->pos < c->len || c->next == c->end)
		return 0;
	if (temp_file_read(file, c->buf, sizeof(c->buf), &c->next, c->end, &got) < 0)
		return fail("reading a temporary file");
	c->pos = 0;
	c->len = got / sizeof(int64_t);
	return 0;
}

int pool_times_start(struct pool_times *t, struct pool_times_read r[2])
{
	memset(r, 0, 2 * sizeof(*r));
	r[0].t = r[1].t = t;
	r[1].which = 1;
	if (!t->nruns)
		return sort_times(t);
	if (t->n && spill(t) < 0)
		return -1;
	for (int w = 0; w < 2; w++) {
		if (!(r[w].c = calloc(t->nruns, sizeof(*r[w].c))))
			return oom();
		for (size_t i = 0; i < t->nruns; i++) {
			off_t bytes = (off_t)(t->runs[i].n * sizeof(int64_t));

			r[w].c[i].next = t->runs[i].at + (w ? bytes : 0);
			r[w].c[i].end = r[w].c[i].next + bytes;
			if (refill(t->file, &r[w].c[i]) < 0)
				return -1;
		}
	}
	return 0;
}

int pool_times_next(struct pool_times_read *r, int64_t *v)
{
	struct pool_times *t = r->t;
	struct pool_times_cursor *best = NULL;

	if (!r->c) {
		if (r->at == t->n)
			return 0;
		*v = (r->which ? t->pickup : t->ready)[r->at++];
		return 1;
	}
	for (size_t i = 0; i < t->nruns; i++) {
		struct pool_times_cursor *c = &r->c[i];

		if (c->pos < c->len && (!best || c->buf[c->pos] < best->buf[best->pos]))
			best = c;
	}
	if (!best)
		return 0;
	*v = best->buf[best->pos++];
	return refill(t->file, best) < 0 ? -1 : 1;
}

void pool_times_read_end(struct pool_times_read r[2])
{
	free(r[0].c);
	free(r[1].c);
	r[0].c = r[1].c = NULL;
}

void pool_times_reset(struct pool_times *t)
{
	t->n = 0;
	t->nruns = 0;
	t->size = 0;       /* the next process's runs overwrite this one's */
	if (t->file)
		fseeko(t->file, 0, SEEK_SET);
}

void pool_times_free(struct pool_times *t)
{
	free(t->ready);
	free(t->pickup);
	free(t->runs);
	if (t->file)
		fclose(t->file);
	memset(t, 0, sizeof(*t));
}
