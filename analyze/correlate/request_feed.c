/* request_feed.c - the request pass's input, gathered while decoding (see
 * request_feed.h).
 *
 * Which calls count is decided per system call number once (a table of
 * kinds built from util/syscalls.h, the same facts the syscall_names
 * table holds): a read or write with a descriptor in args[0] counts when
 * it moved bytes (read: ret > 0, write: ret >= 0), close when it
 * succeeded (ret = 0); a poll-family call when it returned ready
 * descriptors (ret > 0). Values are the ones the tables store: times as
 * signed 64-bit, the descriptor sign-extended from the low 32 bits of
 * args[0], a return time that overflows clamped as SQLite's arithmetic
 * clamps it.
 *
 * Ordering at the end: the (pid, fd) pairs that held a socket get ranks
 * in (pid, fd) order; a counting sort of the calls by rank into a new
 * array keeps each stream's calls in arrival (syscall_id) order, which is
 * nearly their time order, so most streams need only the check, and most
 * others an insertion sort of the few calls out of place; the rest (when
 * that would move more than four times the stream's calls) are sorted by
 * time (radix_sort.h), then each run of equal times by (ord, seq). The
 * order is total, so every way gives the same sequence. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "request_feed.h"
#include "request_runs_internal.h"
#include "util/grow.h"
#include "util/hashmap.h"
#include "util/radix_sort.h"
#include "util/syscalls.h"

const char *const request_origins[] = { NULL, "accepted", "connected", "discovered", "other" };
#define ORIGINS (sizeof(request_origins) / sizeof(request_origins[0]))

/* What a system call number is to the pass. */
enum call_kind { KIND_NONE = 0, KIND_READ = 1, KIND_WRITE = 2, KIND_CLOSE = 4, KIND_POLL = 8 };

static unsigned call_kind(uint32_t nr)
{
	const struct syscall_info *info = syscall_info(nr);
	unsigned k = KIND_NONE;

	if (!info->name)
		return KIND_NONE;
	if (info->family == SC_POLL)
		k |= KIND_POLL;
	if (!(info->flags & SC_F_FD))
		return k;
	/* syscall_names.io: read wins over write; close by name */
	if (info->flags & SC_F_READ)
		k |= KIND_READ;
	else if (info->flags & SC_F_WRITE)
		k |= KIND_WRITE;
	else if (strcmp(info->name, "close") == 0)
		k |= KIND_CLOSE;
	return k;
}

static unsigned kind_of(const struct request_feed *f, uint32_t nr)
{
	return nr < REQUEST_FEED_KINDS ? f->kinds[nr] : call_kind(nr);
}

void request_feed_init(struct request_feed *f, size_t run_calls)
{
	memset(f, 0, sizeof(*f));
	for (uint32_t nr = 0; nr < REQUEST_FEED_KINDS; nr++)
		f->kinds[nr] = (uint8_t)call_kind(nr);
	f->run_calls = run_calls;
	hmap_init(&f->held);
	hmap_init(&f->pids);
}

void request_feed_free(struct request_feed *f)
{
	free(f->calls);
	free(f->polls);
	if (f->runs)
		request_runs_free(f->runs);
	free(f->runs);
	hmap_free(&f->held);
	hmap_free(&f->pids);
	f->calls = NULL;
	f->polls = NULL;
	f->runs = NULL;
	f->ncalls = f->calls_cap = f->npolls = f->polls_cap = f->next = 0;
}


/* ts + duration as SQLite computes it on the stored (signed) values: an
 * overflow becomes a REAL, which reads back clamped to the int64 range. */
static int64_t end_of(uint64_t ts, uint64_t duration)
{
	int64_t end;

	if (__builtin_add_overflow((int64_t)ts, (int64_t)duration, &end))
		return (int64_t)duration < 0 ? INT64_MIN : INT64_MAX;
	return end;
}

static int push_poll(struct request_feed *f, uint32_t pid, uint32_t tid, int64_t ts)
{
	if (array_grow((void **)&f->polls, &f->polls_cap, f->npolls, sizeof(*f->polls), 4096) < 0)
		return -1;
	f->polls[f->npolls++] = (struct poll_ret){ pid, tid, ts };
	return 0;
}

/* Sorts the buffer and writes it to disk as a run; the buffer is empty
 * again (its memory kept for the next run). */
static int spill(struct request_feed *f)
{
	if (!f->runs) {
		f->runs = calloc(1, sizeof(*f->runs));
		if (!f->runs)
			return -1;
	}
	if (request_runs_write(f->runs, f->calls, f->ncalls) < 0)
		return -1;
	f->ncalls = 0;
	return 0;
}

static int push_call(struct request_feed *f, const struct request_call *c)
{
	if (f->run_calls && f->ncalls >= f->run_calls && spill(f) < 0)
		return -1;
	if (array_grow((void **)&f->calls, &f->calls_cap, f->ncalls, sizeof(*f->calls), 4096) < 0)
		return -1;
	f->calls[f->ncalls++] = *c;
	return 0;
}

static int counts(unsigned kind, int64_t ret)
{
	if (kind & KIND_READ)
		return ret > 0;
	if (kind & KIND_WRITE)
		return ret >= 0;
	return (kind & KIND_CLOSE) && ret == 0;
}

int request_feed_syscall(struct request_feed *f, int64_t syscall_id, uint64_t ts,
			 uint64_t duration, uint32_t pid, uint32_t tid, uint32_t nr,
			 int64_t ret, uint64_t arg0)
{
	unsigned kind = kind_of(f, nr);

	if (kind == KIND_NONE)
		return 0;
	if ((kind & KIND_POLL) && ret > 0 && push_poll(f, pid, tid, end_of(ts, duration)) < 0)
		return -1;
	if (!counts(kind, ret))
		return 0;
	return push_call(f, &(struct request_call){
		.ts = (int64_t)ts, .end_ts = end_of(ts, duration),
		.value = ret >= 0 ? ret : 0, .seq = syscall_id, .pid = pid, .tid = tid,
		.fd = (int32_t)(uint32_t)arg0, .ord = kind & KIND_CLOSE ? REQ_CLOSE : REQ_IO,
		.is_read = (kind & KIND_READ) != 0 });
}

static uint8_t origin_code(const char *origin)
{
	if (!origin)
		return 0;
	for (size_t i = 1; i + 1 < ORIGINS; i++)
		if (strcmp(origin, request_origins[i]) == 0)
			return (uint8_t)i;
	return ORIGINS - 1;
}

int request_feed_socket(struct request_feed *f, uint64_t ts, uint32_t pid, int32_t fd,
			uint64_t cookie, const char *origin)
{
	int created;

	if (!hmap_upsert(&f->held, pid, (uint32_t)fd, 0, &created) ||
	    !hmap_upsert(&f->pids, pid, 0, 0, &created))
		return -1;
	return push_call(f, &(struct request_call){
		.ts = (int64_t)ts, .value = (int64_t)cookie, .seq = ++f->nsockets, .pid = pid,
		.fd = fd, .ord = REQ_OPEN, .origin = origin_code(origin) });
}

struct stream_key {
	uint64_t pid, fd;         /* fd: the descriptor's 32 bits */
};

static int cmp_stream(const void *a, const void *b)
{
	const struct stream_key *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return ((int32_t)x->fd > (int32_t)y->fd) - ((int32_t)x->fd < (int32_t)y->fd);
}

/* Gives each stream that held a socket its rank in (pid, fd) order. */
static int rank_streams(struct request_feed *f)
{
	struct stream_key *v = malloc((f->held.len ? f->held.len : 1) * sizeof(*v));
	const struct hmap_slot *slot;
	size_t n = 0;

	if (!v)
		return -1;
	for (size_t pos = 0; hmap_next(&f->held, &pos, &slot);)
		v[n++] = (struct stream_key){ slot->a, slot->b };
	qsort(v, n, sizeof(*v), cmp_stream);
	for (size_t i = 0; i < n; i++)
		*hmap_find(&f->held, v[i].pid, v[i].fd) = i;
	f->nstreams = n;
	free(v);
	return 0;
}

/* The rank of c's stream, or SIZE_MAX when it held no socket; *last
 * caches the previous answer (calls of one stream come in runs). */
struct rank_cache {
	uint32_t pid;
	int32_t fd;
	size_t rank;
	int valid;
};

static size_t rank_of(const struct hmap *held, const struct request_call *c,
		      struct rank_cache *last)
{
	const uint64_t *v;

	if (last->valid && last->pid == c->pid && last->fd == c->fd)
		return last->rank;
	v = hmap_find(held, c->pid, (uint32_t)c->fd);
	*last = (struct rank_cache){ c->pid, c->fd, v ? (size_t)*v : SIZE_MAX, 1 };
	return last->rank;
}

static int cmp_in_stream(const struct request_call *x, const struct request_call *y)
{
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->ord != y->ord)
		return x->ord < y->ord ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static int cmp_call(const void *a, const void *b)
{
	return cmp_in_stream(a, b);
}

/* Sorts a run of calls at one time by (ord, seq): runs are short,
 * insertion does; a long one (a damaged clock) goes to qsort. */
static void order_run(struct request_call *v, size_t n)
{
	if (n > 16) {
		qsort(v, n, sizeof(*v), cmp_call);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		struct request_call c = v[i];
		size_t j = i;

		for (; j > 0 && cmp_in_stream(&v[j - 1], &c) > 0; j--)
			v[j] = v[j - 1];
		v[j] = c;
	}
}

/* Insertion sort from i on while it moves at most budget elements: 1
 * when the calls are in order, 0 when the budget ran out (they are then
 * still a permutation of the stream's calls). A stream's calls come in
 * capture order, which is time order but for the few calls read late
 * from another CPU's buffer (a thread that moved): in a 12 s redis
 * capture, 3-5 out of place per stream of 36k calls, none more than 34
 * places. */
static int insert_sorted(struct request_call *v, size_t n, size_t i, size_t budget)
{
	for (; i < n; i++) {
		struct request_call c;
		size_t j = i;

		if (cmp_in_stream(&v[i - 1], &v[i]) <= 0)
			continue;
		c = v[i];
		for (; j > 0 && cmp_in_stream(&v[j - 1], &c) > 0 && budget > 0; j--, budget--)
			v[j] = v[j - 1];
		v[j] = c;
		if (budget == 0)
			return 0;
	}
	return 1;
}

int request_order_stream(struct request_call *v, size_t n)
{
	size_t i = 1;

	while (i < n && cmp_in_stream(&v[i - 1], &v[i]) <= 0)
		i++;
	if (i >= n || insert_sorted(v, n, i, 4 * n + 64))
		return 0;
	if (radix_sort_i64(v, n, sizeof(*v), offsetof(struct request_call, ts)) < 0)
		return -1;
	for (size_t a = 0, b; a < n; a = b) {
		for (b = a + 1; b < n && v[b].ts == v[a].ts; b++)
			;
		if (b - a > 1)
			order_run(v + a, b - a);
	}
	return 0;
}

/* Counting sort of the kept calls by stream rank into a new array (the
 * copies go to one write position per stream, so this reads and writes
 * memory in order, and the pass then reads the calls in order too), then
 * each stream by time; the feed's array is replaced. */
static int order_calls(struct request_feed *f)
{
	size_t *start = calloc(f->nstreams + 1, sizeof(*start));
	struct rank_cache last = { 0 };
	struct request_call *sorted;
	size_t kept = 0;

	if (!start)
		return -1;
	for (size_t i = 0; i < f->ncalls; i++) {
		size_t r = rank_of(&f->held, &f->calls[i], &last);

		if (r != SIZE_MAX) {
			start[r + 1]++;
			kept++;
		}
	}
	for (size_t r = 0; r < f->nstreams; r++)
		start[r + 1] += start[r];
	sorted = malloc((kept ? kept : 1) * sizeof(*sorted));
	if (!sorted) {
		free(start);
		return -1;
	}
	last.valid = 0;
	for (size_t i = 0; i < f->ncalls; i++) {
		size_t r = rank_of(&f->held, &f->calls[i], &last);

		if (r != SIZE_MAX)
			sorted[start[r]++] = f->calls[i];
	}
	free(f->calls);
	f->calls = sorted;
	f->ncalls = f->calls_cap = kept;
	/* start[r] is now the end of stream r, the start of stream r + 1 */
	for (size_t r = 0; r < f->nstreams; r++) {
		size_t from = r ? start[r - 1] : 0;

		if (request_order_stream(f->calls + from, start[r] - from) < 0) {
			free(start);
			return -1;
		}
	}
	free(start);
	return 0;
}

/* Drops the poll returns of processes that held no socket. */
static void keep_polls(struct request_feed *f)
{
	size_t n = 0;

	for (size_t i = 0; i < f->npolls; i++)
		if (hmap_find(&f->pids, (uint64_t)f->polls[i].pid, 0))
			f->polls[n++] = f->polls[i];
	f->npolls = n;
}

/* With runs on disk: the rest goes to disk too, and the merge starts. */
static int finish_runs(struct request_feed *f)
{
	if (f->ncalls && spill(f) < 0)
		return -1;
	free(f->calls);
	f->calls = NULL;
	f->ncalls = f->calls_cap = 0;
	return request_runs_start(f->runs);
}

int request_feed_finish(struct request_feed *f)
{
	f->next = 0;
	keep_polls(f);
	if (f->runs)
		return finish_runs(f);
	if (rank_streams(f) < 0 || order_calls(f) < 0) {
		fprintf(stderr, "perfcap-analyze: out of memory\n");
		return -1;
	}
	return 0;
}

int request_feed_next(struct request_feed *f, struct request_call *c)
{
	int rc;

	if (!f->runs) {
		if (f->next >= f->ncalls)
			return 0;
		*c = f->calls[f->next++];
		return 1;
	}
	/* merged runs hold every candidate: skip the streams without a socket */
	while ((rc = request_runs_next(f->runs, c)) == 1)
		if (hmap_find(&f->held, c->pid, (uint32_t)c->fd))
			return 1;
	return rc;
}
