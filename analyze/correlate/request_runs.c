/* request_runs.c - sorted runs of socket calls in a temporary file and
 * their merge (see request_runs_internal.h). A run is the raw structs in
 * order at its offset of the one file, read back RUN_BUFFER_CALLS at a
 * time with pread; the merge picks the smallest head by a linear look
 * over the runs (a few per ten million calls, so a heap would not pay).
 * The order is total, so the merge gives the one sequence an in-memory
 * sort of every call would. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "request_runs_internal.h"

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

static int cmp_call(const void *a, const void *b)
{
	return request_call_cmp(a, b);
}

static int fail(const char *what)
{
	fprintf(stderr, "perfcap-analyze: request calls: %s: %s\n", what,
		errno ? strerror(errno) : "short read");
	return -1;
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

/* An unlinked file in TMPDIR (else /tmp), as SQLite's temporary files. */
static FILE *temporary_file(void)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	FILE *file;
	int fd;

	snprintf(path, sizeof(path), "%s/perfcap-requests-XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	unlink(path);
	file = fdopen(fd, "w+b");
	if (!file)
		close(fd);
	return file;
}

int request_runs_write(struct request_runs *R, struct request_call *v, size_t n)
{
	off_t start = R->size;

	if (!R->file && !(R->file = temporary_file()))
		return fail("temporary file");
	qsort(v, n, sizeof(*v), cmp_call);
	if (fwrite(v, sizeof(*v), n, R->file) != n || fflush(R->file) != 0)
		return fail("writing a temporary file");
	R->size += (off_t)(n * sizeof(*v));
	return add_run(R, start, R->size);
}

/* Refills r's buffer from the file; r->len is 0 at the run's end. */
static int refill(struct request_runs *R, struct request_run *r)
{
	size_t want = (size_t)(r->end - r->next) / sizeof(*r->buf);
	ssize_t got;

	if (want > RUN_BUFFER_CALLS)
		want = RUN_BUFFER_CALLS;
	r->pos = r->len = 0;
	if (want == 0)
		return 0;
	errno = 0;
	got = pread(fileno(R->file), r->buf, want * sizeof(*r->buf), r->next);
	if (got != (ssize_t)(want * sizeof(*r->buf)))
		return fail("reading a temporary file");
	r->next += got;
	r->len = want;
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
