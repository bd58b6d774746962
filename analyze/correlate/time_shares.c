/* time_shares.c - per-thread, per-window sums (see time_shares.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "db/batch_insert.h"
#include "time_shares.h"

void shares_init(struct time_shares *s, uint64_t window_ns)
{
	memset(s, 0, sizeof(*s));
	s->window_ns = window_ns;
	hmap_init(&s->index);
}

void shares_free(struct time_shares *s)
{
	free(s->rows);
	hmap_free(&s->index);
	memset(s, 0, sizeof(*s));
}

void shares_set_origin(struct time_shares *s, uint64_t origin)
{
	s->origin = origin;
}

/* Window index of ts (floor division: times before origin are negative). */
static int64_t window_of(const struct time_shares *s, uint64_t ts)
{
	if (ts >= s->origin)
		return (int64_t)((ts - s->origin) / s->window_ns);
	return -(int64_t)((s->origin - ts + s->window_ns - 1) / s->window_ns);
}

static uint64_t window_start(const struct time_shares *s, int64_t w)
{
	return s->origin + (uint64_t)w * s->window_ns;  /* wraps correctly for w < 0 */
}

/* The row of (tid, window w), created if new. NULL with *oom set on
 * out-of-memory, NULL alone past SHARES_MAX_ROWS. */
static struct share_row *row_for(struct time_shares *s, uint32_t pid, uint32_t tid,
				 int64_t w, int *oom)
{
	uint64_t *index = hmap_find(&s->index, tid, (uint64_t)w);
	struct share_row *r;

	if (index) {
		r = &s->rows[*index];
		if (pid)
			r->pid = pid;
		return r;
	}
	if (s->len >= SHARES_MAX_ROWS) {
		s->dropped++;
		return NULL;
	}
	if (s->len == s->cap) {
		uint64_t new_cap = s->cap ? s->cap * 2 : 1024;
		struct share_row *grown = realloc(s->rows, new_cap * sizeof(*grown));
		if (!grown) {
			*oom = 1;
			return NULL;
		}
		s->rows = grown;
		s->cap = new_cap;
	}
	if (!hmap_upsert(&s->index, tid, (uint64_t)w, s->len, NULL)) {
		*oom = 1;
		return NULL;
	}
	r = &s->rows[s->len++];
	memset(r, 0, sizeof(*r));
	r->window = w;
	r->pid = pid;
	r->tid = tid;
	return r;
}

/* Adds to column col of thread tid over [start, end), cut at window
 * edges: each part's length, or (spread) its part of total. */
static int add_parts(struct time_shares *s, uint32_t pid, uint32_t tid, uint64_t start,
		     uint64_t end, enum share_column col, int spread, uint64_t total)
{
	uint64_t len = end - start, left = total;
	int oom = 0;

	while (start < end) {
		int64_t w = window_of(s, start);
		uint64_t edge = window_start(s, w + 1);
		uint64_t part_end = end < edge || edge <= start ? end : edge;
		struct share_row *r = row_for(s, pid, tid, w, &oom);
		uint64_t part = part_end - start;

		if (!r)
			return oom ? -ENOMEM : 0;
		if (spread) {
			part = part_end == end ? left :
				(uint64_t)((double)total * (double)part / (double)len);
			part = part < left ? part : left;
			left -= part;
		}
		r->v[col] += part;
		start = part_end;
	}
	return 0;
}

int shares_add_time(struct time_shares *s, uint32_t pid, uint32_t tid, uint64_t start,
		    uint64_t end, enum share_column col)
{
	return add_parts(s, pid, tid, start, end, col, 0, 0);
}

int shares_add_count(struct time_shares *s, uint32_t pid, uint32_t tid, uint64_t ts,
		     enum share_column col, uint64_t n)
{
	int oom = 0;
	struct share_row *r = row_for(s, pid, tid, window_of(s, ts), &oom);

	if (!r)
		return oom ? -ENOMEM : 0;
	r->v[col] += n;
	return 0;
}

int shares_add_spread(struct time_shares *s, uint32_t pid, uint32_t tid, uint64_t start,
		      uint64_t end, enum share_column col, uint64_t total)
{
	return add_parts(s, pid, tid, start, end, col, 1, total);
}

const struct share_row *shares_find(const struct time_shares *s, uint32_t tid, int64_t window)
{
	uint64_t *index = hmap_find(&s->index, tid, (uint64_t)window);

	return index ? &s->rows[*index] : NULL;
}

static int compare_rows(const void *pa, const void *pb)
{
	const struct share_row *a = pa, *b = pb;

	if (a->window != b->window)
		return a->window < b->window ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

int shares_store(struct time_shares *s, sqlite3 *db)
{
	struct batch_insert rows;
	int rc = batch_init(&rows, db, "thread_time_shares (window_start, window_end,"
		" pid, tid, running_ns, runnable_ns, io_wait_ns, sleep_ns, other_wait_ns,"
		" futex_wait_ns, poll_wait_ns, futex_waits, futex_wakes, poll_waits,"
		" syscalls, syscall_ns, vfs_read_ns, vfs_write_ns, net_recv_ns,"
		" net_send_ns, block_requests, block_bytes, block_queue_ns,"
		" block_service_ns, cpu_samples)", 4 + SH_NCOLUMNS);

	if (s->len)
		qsort(s->rows, s->len, sizeof(*s->rows), compare_rows);
	for (uint64_t i = 0; rc == 0 && i < s->len; i++) {
		const struct share_row *r = &s->rows[i];
		uint8_t *kind;
		int64_t *row = batch_row(&rows, &kind);

		row[0] = (int64_t)window_start(s, r->window);
		row[1] = (int64_t)window_start(s, r->window + 1);
		row[2] = r->pid;
		row[3] = r->tid;
		for (int c = 0; c < SH_NCOLUMNS; c++)
			row[4 + c] = (int64_t)r->v[c];
		rc = batch_commit_row(&rows);
	}
	if (rc == 0)
		rc = batch_flush(&rows);
	batch_free(&rows);
	return rc;
}
