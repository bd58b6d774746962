/* kernel_request_store.c - keeping the req source's records until the
 * requests pass, in bounded memory (see kernel_requests.h and
 * kernel_request_store.h).
 *
 * Records are appended to one buffer as they are decoded, each after a
 * head that names its process. The pass wants them grouped by process,
 * lowest pid first, and in arrival order within a process (a process's
 * connections are numbered and its pool windows summed in that order).
 * While the buffer stays under run_bytes, the pass sorts the records'
 * places by (pid, place) and reads them where they are. Past run_bytes
 * the buffer is sorted the same way and written to an unlinked temporary
 * file as a run, and the buffer starts again; at the pass the last part
 * becomes a run too and the runs are merged, 64 KiB of each in memory
 * at a time, by (pid, run): a run holds later records than the runs
 * before it, so this is the order a sort of every record in memory
 * would give. A merge looks at every run's head (a run per 64 MiB of
 * records: a few for a long recording, so a heap would not pay).
 *
 * The connections are noted as the records come (a record is one
 * connection's), each once: the pass numbers them per (pid, fd) in time
 * order before it reads a request. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "kernel_request_store.h"
#include "util/grow.h"
#include "util/temp_file.h"

#define PAD8(n) (((n) + 7u) & ~(size_t)7u)
#define BATCH_BYTES(n) (sizeof(struct pc_rec_request_batch) + \
			(size_t)(n) * sizeof(struct pc_request_entry))
/* The largest record with its head, and what a run's reader holds. */
#define ITEM_MAX (sizeof(struct kreq_head) + PAD8(BATCH_BYTES(PC_REQUEST_BATCH_MAX) > \
						  sizeof(struct pc_rec_request) ? \
						  BATCH_BYTES(PC_REQUEST_BATCH_MAX) : \
						  sizeof(struct pc_rec_request)))
#define RUN_READ ((size_t)64 << 10)

struct kreq_ref {
	uint32_t pid;
	size_t off;                /* of its head in the buffer */
};

struct kreq_run {
	off_t next, end;           /* bytes of the file not read yet */
	unsigned char *buf;        /* RUN_READ bytes, while merging */
	size_t len, pos;
};

struct kreq_runs {
	FILE *file;                /* every run, one after another */
	off_t size;
	struct kreq_run *v;
	size_t n, cap;
};

static int fail(const char *what)
{
	return temp_file_fail("kernel requests", what);
}

static int oom(void)
{
	errno = ENOMEM;
	return fail("keeping them");
}

size_t kreq_record_size(const struct kreq_head *h)
{
	return PAD8(h->n ? BATCH_BYTES(h->n) : sizeof(struct pc_rec_request));
}

void kernel_requests_init(struct kernel_requests *k, size_t run_bytes)
{
	memset(k, 0, sizeof(*k));
	k->run_bytes = run_bytes;
	hmap_init(&k->conn_ids);
}

static int by_pid_then_place(const void *pa, const void *pb)
{
	const struct kreq_ref *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return (a->off > b->off) - (a->off < b->off);
}

/* The buffer's records' places in (pid, place) order: *refs (malloc'd),
 * *n. 0 or -1 (out of memory). */
static int sorted_refs(const struct kernel_requests *k, struct kreq_ref **refs, size_t *n)
{
	size_t cap = 0;

	*refs = NULL;
	*n = 0;
	for (size_t off = 0; off < k->len;) {
		const struct kreq_head *h = (const void *)(k->buf + off);

		if (array_grow((void **)refs, &cap, *n, sizeof(**refs), 1024) < 0) {
			free(*refs);
			*refs = NULL;
			return -1;
		}
		(*refs)[(*n)++] = (struct kreq_ref){ h->pid, off };
		off += sizeof(*h) + kreq_record_size(h);
	}
	qsort(*refs, *n, sizeof(**refs), by_pid_then_place);
	return 0;
}

static int add_run(struct kreq_runs *R, off_t start, off_t end)
{
	if (array_grow((void **)&R->v, &R->cap, R->n, sizeof(*R->v), 8) < 0)
		return oom();
	R->v[R->n++] = (struct kreq_run){ .next = start, .end = end };
	return 0;
}

/* The buffer, sorted, as a new run; the buffer is then empty. 0 or -1
 * (reported). */
static int spill(struct kernel_requests *k)
{
	struct kreq_runs *R = k->runs;
	struct kreq_ref *refs;
	size_t n;
	off_t start;
	int bad = 0;

	if (!R && !(R = k->runs = calloc(1, sizeof(*R))))
		return oom();
	if (!R->file && !(R->file = temp_file_open("perfcap-kreqs")))
		return fail("temporary file");
	if (sorted_refs(k, &refs, &n) < 0)
		return oom();
	start = R->size;
	errno = 0;
	for (size_t i = 0; i < n && !bad; i++) {
		const struct kreq_head *h = (const void *)(k->buf + refs[i].off);
		size_t bytes = sizeof(*h) + kreq_record_size(h);

		bad = fwrite(h, 1, bytes, R->file) != bytes;
		R->size += (off_t)bytes;
	}
	free(refs);
	if (bad || fflush(R->file) != 0)
		return fail("writing a temporary file");
	k->len = 0;
	k->nruns++;
	return add_run(R, start, R->size);
}

/* Room for bytes more at the buffer's end, after a run when the buffer
 * is full: the place, or NULL (reported). */
static unsigned char *reserve(struct kernel_requests *k, size_t bytes)
{
	size_t need, cap;
	unsigned char *grown;

	if (k->run_bytes && k->len && k->len + bytes > k->run_bytes && spill(k) < 0)
		return NULL;
	need = k->len + bytes;
	if (need > k->cap) {
		cap = k->cap ? k->cap * 2 : (size_t)64 << 10;
		if (k->run_bytes && cap > k->run_bytes)
			cap = k->run_bytes;
		if (cap < need)
			cap = need;
		grown = realloc(k->buf, cap);
		if (!grown) {
			oom();
			return NULL;
		}
		k->buf = grown;
		k->cap = cap;
	}
	k->len = need;
	return k->buf + need - bytes;
}

/* Notes the connection of a record, once. 0 or -1 (reported). */
static int note_connection(struct kernel_requests *k, struct kreq_conn c)
{
	int created;

	if (!hmap_upsert(&k->conn_ids, (uint64_t)c.conn_ts, (uint64_t)c.cookie,
			 k->nconns + 1, &created))
		return oom();
	if (!created)
		return 0;
	if (array_grow((void **)&k->conns, &k->conns_cap, k->nconns, sizeof(c), 256) < 0)
		return oom();
	k->conns[k->nconns++] = c;
	return 0;
}

/* One record after its head; n: 0 for a REQUEST, else the batch's. */
static int keep(struct kernel_requests *k, uint32_t pid, uint32_t n, const void *rec,
		size_t rec_bytes, const void *tail, size_t tail_bytes)
{
	struct kreq_head h = { pid, n };
	size_t bytes = kreq_record_size(&h);
	unsigned char *at = reserve(k, sizeof(h) + bytes);

	if (!at)
		return -1;
	memcpy(at, &h, sizeof(h));
	memcpy(at + sizeof(h), rec, rec_bytes);
	if (tail_bytes)
		memcpy(at + sizeof(h) + rec_bytes, tail, tail_bytes);
	memset(at + sizeof(h) + rec_bytes + tail_bytes, 0, bytes - rec_bytes - tail_bytes);
	k->n += n ? n : 1;
	return 0;
}

int kernel_requests_add(struct kernel_requests *k, const struct pc_rec_request *r)
{
	if (note_connection(k, (struct kreq_conn){ r->pid, r->fd, (int64_t)r->conn_ts,
						   (int64_t)r->cookie }) < 0)
		return -1;
	return keep(k, r->pid, 0, r, sizeof(*r), NULL, 0);
}

int kernel_requests_add_batch(struct kernel_requests *k, const struct pc_rec_request_batch *b,
			      const uint8_t *entries)
{
	if (note_connection(k, (struct kreq_conn){ b->pid, b->fd, (int64_t)b->conn_ts,
						   (int64_t)b->cookie }) < 0)
		return -1;
	return keep(k, b->pid, b->n, b, sizeof(*b), entries,
		    (size_t)b->n * sizeof(struct pc_request_entry));
}

/* Tops r's buffer up from the file when less than a whole record is left
 * in it. 0 or -1 (reported). */
static int refill(struct kreq_runs *R, struct kreq_run *r)
{
	size_t keep = r->len - r->pos, got;

	if (keep >= ITEM_MAX || r->next == r->end)
		return 0;
	memmove(r->buf, r->buf + r->pos, keep);
	r->pos = 0;
	r->len = keep;
	if (temp_file_read(R->file, r->buf + keep, RUN_READ - keep, &r->next, r->end, &got) < 0)
		return fail("reading a temporary file");
	r->len += got;
	return 0;
}

/* The head at r's place when a whole record is there: NULL at the run's
 * end; a partial record (a damaged temporary file) ends it too, reported
 * by *bad. */
static const struct kreq_head *run_head(const struct kreq_run *r, int *bad)
{
	const struct kreq_head *h = (const void *)(r->buf + r->pos);
	size_t left = r->len - r->pos;

	if (!left)
		return NULL;
	if (left < sizeof(*h) || h->n > PC_REQUEST_BATCH_MAX ||
	    left < sizeof(*h) + kreq_record_size(h)) {
		*bad = 1;
		return NULL;
	}
	return h;
}

int kreq_cursor_start(struct kreq_cursor *c, struct kernel_requests *k)
{
	struct kreq_runs *R = k->runs;

	memset(c, 0, sizeof(*c));
	c->k = k;
	if (!R)
		return sorted_refs(k, &c->refs, &c->nrefs) < 0 ? oom() : 0;
	if (k->len && spill(k) < 0)
		return -1;
	free(k->buf);          /* everything is on disk now */
	k->buf = NULL;
	k->len = k->cap = 0;
	for (size_t i = 0; i < R->n; i++) {
		if (!(R->v[i].buf = malloc(RUN_READ)))
			return oom();
		if (refill(R, &R->v[i]) < 0)
			return -1;
	}
	return 0;
}

static int next_from_runs(struct kreq_cursor *c, const struct kreq_head **out)
{
	struct kreq_runs *R = c->k->runs;
	struct kreq_run *best = NULL;
	const struct kreq_head *best_head = NULL;
	int bad = 0;

	for (size_t i = 0; i < R->n; i++) {
		struct kreq_run *r = &R->v[i];
		const struct kreq_head *h;

		if (refill(R, r) < 0)
			return -1;
		h = run_head(r, &bad);
		if (h && (!best_head || h->pid < best_head->pid)) {
			best = r;
			best_head = h;
		}
	}
	if (bad) {
		errno = 0;
		return fail("a damaged temporary file");
	}
	if (!best)
		return 0;
	best->pos += sizeof(*best_head) + kreq_record_size(best_head);
	*out = best_head;
	return 1;
}

int kreq_cursor_next(struct kreq_cursor *c, const struct kreq_head **head)
{
	if (c->k->runs)
		return next_from_runs(c, head);
	if (c->at == c->nrefs)
		return 0;
	*head = (const void *)(c->k->buf + c->refs[c->at++].off);
	return 1;
}

void kreq_cursor_end(struct kreq_cursor *c)
{
	free(c->refs);
	memset(c, 0, sizeof(*c));
}

static void free_runs(struct kreq_runs *R)
{
	if (!R)
		return;
	if (R->file)
		fclose(R->file);
	for (size_t i = 0; i < R->n; i++)
		free(R->v[i].buf);
	free(R->v);
	free(R);
}

int kernel_requests_add_window(struct kernel_requests *k, const struct pc_rec_request_window *w)
{
	if (array_grow((void **)&k->windows, &k->windows_cap, k->nwindows, sizeof(*k->windows),
		       64) < 0) {
		fprintf(stderr, "perfcap-analyze: import: out of memory (request windows)\n");
		return -1;
	}
	k->windows[k->nwindows++] = (struct kreq_window){
		.ts = (int64_t)w->ts, .open_ns = (int64_t)w->open_ns,
		.period_ns = (int64_t)w->period_ns, .started = (int64_t)w->started,
		.gap_conns = w->gap_conns > INT64_MAX ? INT64_MAX : (int64_t)w->gap_conns,
		.gap_bytes = w->gap_bytes > INT64_MAX ? INT64_MAX : (int64_t)w->gap_bytes,
		.snap_start = w->snap_start > INT64_MAX ? 0 : (int64_t)w->snap_start,
		.snap_end = w->snap_end > INT64_MAX ? 0 : (int64_t)w->snap_end,
	};
	return 0;
}

void kernel_requests_release(struct kernel_requests *k)
{
	free(k->windows);
	k->windows = NULL;
	k->nwindows = k->windows_cap = 0;
	free(k->buf);
	free_runs(k->runs);
	free(k->conns);
	hmap_free(&k->conn_ids);
	k->buf = NULL;
	k->runs = NULL;
	k->conns = NULL;
	k->len = k->cap = k->nconns = k->conns_cap = 0;
}

void kernel_requests_free(struct kernel_requests *k)
{
	kernel_requests_release(k);
	k->n = k->nruns = 0;
}
