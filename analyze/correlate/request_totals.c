/* request_totals.c - per-process queueing sums and first pickups of the
 * requests with a readiness, as the request passes write them (see
 * request_totals.h). Memory: a row per process and per pickup thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "request_totals.h"
#include "util/grow.h"

void request_totals_init(struct request_totals *t)
{
	memset(t, 0, sizeof(*t));
	hmap_init(&t->pids);
	hmap_init(&t->workers);
}

void request_totals_free(struct request_totals *t)
{
	free(t->p);
	free(t->w);
	hmap_free(&t->pids);
	hmap_free(&t->workers);
	memset(t, 0, sizeof(*t));
}

static struct request_total *total_of(struct request_totals *t, int64_t pid)
{
	int created;
	uint64_t *at;

	if (t->has_last && t->p[t->last_p].pid == pid)
		return &t->p[t->last_p];
	at = hmap_upsert(&t->pids, (uint64_t)pid, 0, t->np, &created);
	if (!at)
		return NULL;
	if (created) {
		if (array_grow((void **)&t->p, &t->pcap, t->np, sizeof(*t->p), 8) < 0)
			return NULL;
		t->p[t->np++] = (struct request_total){ .pid = pid };
	}
	t->last_p = created ? t->np - 1 : (size_t)*at;
	return &t->p[t->last_p];
}

/* Earlier in the order the rule sorts workers by: start, fd, then the
 * table's order (seq, as rowid). */
static int pickup_before(const struct request_worker *a, const struct request_worker *b)
{
	if (a->start != b->start)
		return a->start < b->start;
	if (a->fd != b->fd)
		return a->fd < b->fd;
	return a->seq < b->seq;
}

/* Pickup threads repeat (an event loop picks up every request): only a
 * thread other than the last is looked up. */
static int note_worker(struct request_totals *t, const struct request_worker *row)
{
	struct request_worker *w = t->has_last ? &t->w[t->last_w] : NULL;
	int created;
	uint64_t *at;

	if (!w || w->pid != row->pid || w->tid != row->tid) {
		at = hmap_upsert(&t->workers, (uint64_t)row->pid, (uint64_t)row->tid, t->nw,
				 &created);
		if (!at)
			return -1;
		if (created) {
			if (array_grow((void **)&t->w, &t->wcap, t->nw, sizeof(*t->w), 64) < 0)
				return -1;
			t->w[t->nw++] = *row;
			t->last_w = t->nw - 1;
			return 0;
		}
		t->last_w = (size_t)*at;
		w = &t->w[t->last_w];
	}
	if (pickup_before(row, w))
		*w = *row;
	return 0;
}

int request_totals_add(struct request_totals *t, int64_t pid, int64_t fd, int64_t pickup_tid,
		       int64_t start, int64_t service_ns, int has_ready, int64_t ready,
		       int64_t queue_ns, int on_arrival)
{
	int64_t seq = ++t->seq;
	struct request_total *p;

	if (!has_ready || t->failed)
		return t->failed ? -1 : 0;
	p = total_of(t, pid);
	if (!p || note_worker(t, &(struct request_worker){ pid, pickup_tid, start, fd, seq }) < 0) {
		t->failed = 1;
		fprintf(stderr, "perfcap-analyze: import: out of memory (request totals)\n");
		return -1;
	}
	t->has_last = 1;
	if (!p->queued || ready < p->min_ready)
		p->min_ready = ready;
	if (!p->queued || ready > p->max_ready)
		p->max_ready = ready;
	p->queued++;
	p->queue_ns += queue_ns;
	p->service_ns += service_ns;
	p->services++;
	p->on_arrival += on_arrival != 0;
	return 0;
}

static int write_rows(sqlite3 *db, const char *sql, size_t n, const void *rows, size_t size,
		      int ncols)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);

	for (size_t i = 0; rc == SQLITE_OK && i < n; i++) {
		const int64_t *v = (const int64_t *)((const char *)rows + i * size);

		for (int c = 0; c < ncols; c++)
			sqlite3_bind_int64(st, c + 1, v[c]);
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_OK)
		db_report_error(db, "request_totals");
	return rc == SQLITE_OK ? 0 : -1;
}

int request_totals_write(sqlite3 *db, struct request_totals *t)
{
	if (t->failed)
		return -1;
	for (size_t i = 0; i < t->np; i++)
		t->p[i].requests_rows = t->seq;
	if (write_rows(db, "INSERT INTO request_totals (pid, queued, queue_ns, service_ns,"
		       " services, on_arrival, min_ready_ts, max_ready_ts, requests_rows)"
		       " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
		       t->np, t->p, sizeof(*t->p), 9) < 0)
		return -1;
	return write_rows(db, "INSERT INTO request_workers (pid, tid, first_start_ts, first_fd,"
			  " first_seq) VALUES (?1, ?2, ?3, ?4, ?5)",
			  t->nw, t->w, sizeof(*t->w), 5);
}
