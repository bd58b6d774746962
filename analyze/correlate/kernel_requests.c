/* kernel_requests.c - requests rows from the req source's REQUEST and
 * REQUEST_BATCH records (see kernel_requests.h). The records arrive in the
 * order the kernel sent them (a request when the next one starts, a batch
 * when full or at its connection's end) and each request carries its lower
 * bound, so no request needs its neighbours: the connections (a few per
 * thousand requests) are collected and numbered per (pid, fd) in time
 * order as requests.c numbers them, the records are grouped by process
 * (a counting sort of their indexes, arrival order kept within a
 * process), and each request becomes one row and, for served
 * connections, a part of its process's pool windows (pool.h); rows go
 * to SQLite on a second thread. Memory: per request its batch entry and
 * a 4-byte place in the arrival order (56 bytes, its batch's header
 * shared; a REQUEST record is kept whole, 128), a 4-byte index, and the
 * pool's 16 bytes per request of one process.
 * The readiness rules, in the order they apply (ready_source):
 *   data_ready         the kernel saw the request's data arrive (flag READY);
 *   previous_response  else, for a keep-alive request, the previous
 *                      request's end (its data arrived while that one was
 *                      being answered);
 *   accept             else, for the first request of a connection the
 *                      kernel saw open, the open;
 * client (connected) connections have none. A connection the kernel first
 * saw at a read or write (discovered: open before the recording) is a
 * client one when the recorder's /proc snapshots (the connections table)
 * show its process, and no recorded process listening on its local port
 * (a pre-forking server's child serves on the port its parent listens
 * on; see import/connections.c). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/batch_insert.h"
#include "db/db.h"
#include "kernel_requests.h"
#include "pool.h"
#include "requests.h"
#include "db/sql_writer.h"
#include "util/grow.h"
#include "util/hashmap.h"

static int oom(void)
{
	fprintf(stderr, "perfcap-analyze: out of memory\n");
	return -1;
}

/* Room for element n of *v. 0 or -1 (out of memory, reported). */
static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	return array_grow(v, cap, n, size, 1024) < 0 ? oom() : 0;
}

static int add_order(struct kernel_requests *k, uint32_t ref)
{
	if (k->n >= KREQ_SINGLE - 1) {
		fprintf(stderr, "perfcap-analyze: more than 2^31 kernel requests\n");
		return -1;
	}
	if (grow((void **)&k->order, &k->cap, k->n, sizeof(*k->order)) < 0)
		return -1;
	k->order[k->n++] = ref;
	return 0;
}

int kernel_requests_add(struct kernel_requests *k, const struct pc_rec_request *r)
{
	if (grow((void **)&k->singles, &k->singles_cap, k->nsingles, sizeof(*r)) < 0 ||
	    add_order(k, KREQ_SINGLE | (uint32_t)k->nsingles) < 0)
		return -1;
	k->singles[k->nsingles++] = *r;
	return 0;
}

int kernel_requests_add_batch(struct kernel_requests *k, const struct pc_rec_request_batch *b,
			      const uint8_t *entries)
{
	struct kreq_entry *e;

	if (grow((void **)&k->batches, &k->batches_cap, k->nbatches, sizeof(*b)) < 0)
		return -1;
	k->batches[k->nbatches] = *b;
	for (uint32_t i = 0; i < b->n; i++) {
		if (grow((void **)&k->entries, &k->entries_cap, k->nentries, sizeof(*e)) < 0 ||
		    add_order(k, (uint32_t)k->nentries) < 0)
			return -1;
		e = &k->entries[k->nentries++];
		e->batch = (uint32_t)k->nbatches;
		e->i = i;
		memcpy(&e->e, entries + i * sizeof(e->e), sizeof(e->e));
	}
	k->nbatches++;
	return 0;
}

/* A batch's i-th request as the REQUEST record it stands for. */
static void batch_entry(const struct pc_rec_request_batch *b, const struct pc_request_entry *e,
			uint32_t i, struct pc_rec_request *r)
{
	memset(r, 0, sizeof(*r));
	r->h.type = PC_REC_REQUEST;
	r->h.flags = e->flags;
	r->h.size = sizeof(*r);
	r->start_ts = b->base_ts + e->start_off;
	r->end_ts = r->start_ts + e->end_ns;
	r->conn_ts = b->conn_ts;
	r->cookie = b->cookie;
	r->first_write_ns = e->first_write_ns;
	r->ready_ns = e->ready_ns;
	r->lower_ns = e->lower_ns;
	r->bytes_in = e->bytes_in;
	r->bytes_out = e->bytes_out;
	r->pid = b->pid;
	r->pickup_tid = e->pickup_tid;
	r->other_tid = e->other_tid;
	r->fd = b->fd;
	r->number = b->number + i;
	r->reads = e->reads;
	r->writes = e->writes;
	r->family = b->family;
	r->lport = b->lport;
	r->origin = b->origin;
}

void kernel_requests_get(const struct kernel_requests *k, size_t i, struct pc_rec_request *r)
{
	uint32_t ref = k->order[i];
	const struct kreq_entry *e;

	if (ref & KREQ_SINGLE) {
		*r = k->singles[ref & ~KREQ_SINGLE];
		return;
	}
	e = &k->entries[ref];
	batch_entry(&k->batches[e->batch], &e->e, e->i, r);
}

/* The connections of the records: (conn_ts, cookie) names one (a socket
 * address is reused only after its connection closed). */
struct conn {
	int64_t pid, fd, conn_ts, cookie;
};

/* The connection of the i-th request, from its batch's header without
 * building the request (the pass reads millions of them). */
static struct conn conn_at(const struct kernel_requests *k, size_t i)
{
	uint32_t ref = k->order[i];
	const struct pc_rec_request *r;
	const struct pc_rec_request_batch *b;

	if (ref & KREQ_SINGLE) {
		r = &k->singles[ref & ~KREQ_SINGLE];
		return (struct conn){ r->pid, r->fd, (int64_t)r->conn_ts, (int64_t)r->cookie };
	}
	b = &k->batches[k->entries[ref].batch];
	return (struct conn){ b->pid, b->fd, (int64_t)b->conn_ts, (int64_t)b->cookie };
}

static void free_records(struct kernel_requests *k)
{
	free(k->order);
	free(k->batches);
	free(k->entries);
	free(k->singles);
	k->order = NULL;
	k->batches = NULL;
	k->entries = NULL;
	k->singles = NULL;
	k->cap = k->batches_cap = k->entries_cap = k->singles_cap = 0;
	k->nbatches = k->nentries = k->nsingles = 0;
}

void kernel_requests_release(struct kernel_requests *k)
{
	free_records(k);
}

void kernel_requests_free(struct kernel_requests *k)
{
	free_records(k);
	k->n = 0;
}

static const char *origin_name(uint8_t origin)
{
	switch (origin) {
	case PC_REQUEST_CONNECTED: return "connected";
	case PC_REQUEST_ACCEPTED:  return "accepted";
	default:                   return "discovered";
	}
}

/* The local ports of listening TCP sockets in the snapshots (any
 * process), and the pids the snapshots saw, as sorted keys. */
struct listeners {
	int64_t *ports, *pids;
	size_t nports, npids;
};

/* The integers sql selects, in its order, into *v (malloc'd) and *n. 0 or
 * -1 (reported). */
static int load_keys(sqlite3 *db, const char *sql, int64_t **v, size_t *n)
{
	sqlite3_stmt *st = db_prepare(db, sql);
	size_t cap = 0;
	int rc = 0;

	*v = NULL;
	*n = 0;
	if (!st)
		return -1;
	while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
		if (*n == cap) {
			int64_t *w = realloc(*v, (cap = cap ? cap * 2 : 16) * sizeof(*w));

			if (!w) {
				rc = oom();
				break;
			}
			*v = w;
		}
		(*v)[(*n)++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	return rc;
}

static int cmp_i64(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return (a > b) - (a < b);
}

static int load_listeners(sqlite3 *db, struct listeners *l)
{
	return load_keys(db, "SELECT DISTINCT lport FROM connections"
			 " WHERE protocol = 6 AND state = 10 ORDER BY 1", &l->ports, &l->nports) |
	       load_keys(db, "SELECT DISTINCT pid FROM connections ORDER BY 1", &l->pids, &l->npids);
}

static int has_key(const int64_t *v, size_t n, int64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo] == key;
}

/* A discovered connection its process did not accept (see the top). */
static int outbound(const struct listeners *l, const struct pc_rec_request *r)
{
	return r->origin == PC_REQUEST_SEEN && has_key(l->pids, l->npids, r->pid) &&
	       !has_key(l->ports, l->nports, (int64_t)r->lport);
}

/* Readiness of r, whose lower bound is lower (the previous request's
 * end, or the connection's start): ready_ts (0 and *source NULL when
 * none). */
static int64_t readiness(const struct pc_rec_request *r, int64_t lower, const char **source)
{
	*source = NULL;
	if (r->origin == PC_REQUEST_CONNECTED)
		return 0;
	if (r->h.flags & PC_REQUEST_F_READY) {
		*source = "data_ready";
		return (int64_t)(r->start_ts - r->ready_ns);
	}
	if (r->number > 1) {
		*source = "previous_response";
		return lower;
	}
	if (r->origin == PC_REQUEST_ACCEPTED) {
		*source = "accept";
		return lower;
	}
	return 0;
}

/* Writes the decimal digits of v at buf, returns the end. */
static char *put_u32(char *buf, uint32_t v)
{
	char digits[10];
	int n = 0;

	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n > 0)
		*buf++ = digits[--n];
	return buf;
}

/* "tid" or "low,high", as "%u" and "%u,%u" print them (snprintf was 5%
 * of the import of a default recording); buf holds 22 bytes. */
static void tids_text(const struct pc_rec_request *r, char *buf)
{
	uint32_t a = r->pickup_tid, b = r->other_tid;
	char *end;

	if (!b) {
		end = put_u32(buf, a);
	} else {
		end = put_u32(buf, a < b ? a : b);
		*end++ = ',';
		end = put_u32(end, a < b ? b : a);
	}
	*end = '\0';
}

static int insert_row(struct batch_insert *rows, const struct pc_rec_request *r, int64_t conn,
		      int64_t lower, int64_t ready, const char *source)
{
	uint8_t *kind;
	int64_t *row = batch_row(rows, &kind);
	int64_t start = (int64_t)r->start_ts, end = (int64_t)r->end_ts;
	char tids[32];

	if (!row)
		return -1;
	tids_text(r, tids);
	row[0] = r->pid;
	row[1] = r->fd;
	row[2] = conn;
	row[3] = (int64_t)r->cookie;
	batch_text(row, kind, 4, origin_name(r->origin));
	row[5] = (int64_t)r->conn_ts;
	row[6] = r->number;
	batch_text_copy(rows, row, kind, 7, tids);
	row[8] = r->pickup_tid;
	row[9] = start;
	row[10] = start + (int64_t)r->first_write_ns;
	row[11] = end;
	row[12] = end - start;
	row[13] = (int64_t)r->bytes_in;
	row[14] = (int64_t)r->bytes_out;
	row[15] = r->reads;
	row[16] = r->writes;
	row[17] = lower;
	row[18] = ready;
	batch_text(row, kind, 19, source);
	row[20] = start - ready > 0 ? start - ready : 0;
	row[21] = end - ready;
	if (!source)
		kind[18] = kind[20] = kind[21] = BATCH_NULL;
	return batch_commit_row(rows);
}

/* One request: its row, and its pool events when it was served here. */
static int add_request(struct batch_insert *rows, struct pool *pool,
		       const struct pc_rec_request *r, int64_t conn)
{
	int64_t lower = r->h.flags & PC_REQUEST_F_LOWER ? (int64_t)(r->start_ts - r->lower_ns)
							: (int64_t)r->conn_ts;
	const char *source;
	int64_t ready = readiness(r, lower, &source), start = (int64_t)r->start_ts;
	int64_t queue = source && start - ready > 0 ? start - ready : 0;

	if (insert_row(rows, r, conn, lower, ready, source) < 0)
		return -1;
	if (r->origin == PC_REQUEST_CONNECTED)
		return 0;
	return pool_add(pool, r->pid, r->pickup_tid, source && ready < start ? ready : start,
			start, (int64_t)r->end_ts, source != NULL, queue);
}


static int conn_cmp(const void *pa, const void *pb)
{
	const struct conn *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->fd != b->fd)
		return a->fd < b->fd ? -1 : 1;
	if (a->conn_ts != b->conn_ts)
		return a->conn_ts < b->conn_ts ? -1 : 1;
	return a->cookie < b->cookie ? -1 : a->cookie > b->cookie;
}

/* numbers: (conn_ts, cookie) -> the connection's number on its (pid, fd),
 * 1, 2 ... in time order. 0 or -1 (out of memory, reported). */
static int number_connections(const struct kernel_requests *k, struct hmap *numbers)
{
	struct conn *v = NULL;
	size_t n = 0, cap = 0;
	int created, rc = -1;

	for (size_t i = 0; i < k->n; i++) {
		struct conn c = conn_at(k, i);

		if (!hmap_upsert(numbers, (uint64_t)c.conn_ts, (uint64_t)c.cookie, 0, &created))
			goto out;
		if (!created)
			continue;
		if (array_grow((void **)&v, &cap, n, sizeof(*v), 256) < 0)
			goto out;
		v[n++] = c;
	}
	qsort(v, n, sizeof(*v), conn_cmp);
	for (size_t i = 0, number = 0; i < n; i++) {
		number = i && v[i].pid == v[i - 1].pid && v[i].fd == v[i - 1].fd ? number + 1 : 1;
		*hmap_find(numbers, (uint64_t)v[i].conn_ts, (uint64_t)v[i].cookie) = number;
	}
	rc = 0;
out:
	free(v);
	return rc < 0 ? oom() : 0;
}

/* The records' indexes grouped by pid (ascending), arrival order kept
 * within a pid: a counting sort. NULL when out of memory. */
static uint32_t *by_process(const struct kernel_requests *k)
{
	struct hmap groups;              /* pid -> its first index in the result */
	int64_t *pids = NULL;
	size_t npids = 0, cap = 0;
	uint32_t *idx = malloc(k->n * sizeof(*idx));
	int created;

	hmap_init(&groups);
	for (size_t i = 0; idx && i < k->n; i++) {
		uint64_t *count = hmap_upsert(&groups, (uint64_t)conn_at(k, i).pid, 0, 0, &created);

		if (!count)
			goto fail;
		if (created) {
			if (npids == cap) {
				int64_t *w = realloc(pids, (cap = cap ? cap * 2 : 16) * sizeof(*w));

				if (!w)
					goto fail;
				pids = w;
			}
			pids[npids++] = (uint64_t)conn_at(k, i).pid;
		}
		(*count)++;
	}
	if (!idx)
		goto fail;
	qsort(pids, npids, sizeof(*pids), cmp_i64);
	for (size_t i = 0, at = 0; i < npids; i++) {      /* counts -> first indexes */
		uint64_t *slot = hmap_find(&groups, (uint64_t)pids[i], 0), count = *slot;

		*slot = at;
		at += count;
	}
	for (size_t i = 0; i < k->n; i++)
		idx[(*hmap_find(&groups, (uint64_t)conn_at(k, i).pid, 0))++] = (uint32_t)i;
	hmap_free(&groups);
	free(pids);
	return idx;
fail:
	hmap_free(&groups);
	free(pids);
	free(idx);
	return NULL;
}

static int build_rows(sqlite3 *db, struct kernel_requests *k, const uint32_t *idx,
		      const struct hmap *numbers, const int64_t *skip, size_t nskip,
		      const struct listeners *l)
{
	struct sql_writer *writer = sql_writer_start();
	struct batch_insert rows = { 0 };
	struct pool pool;
	int rc = -1;

	if (pool_init(&pool, db, writer) < 0)
		goto out;
	if (batch_init(&rows, db, REQUEST_COLUMNS, REQUEST_NCOLS) < 0)
		goto out;
	if (writer)
		batch_use_writer(&rows, writer, BATCH_RING_STEADY);
	for (size_t i = 0; i < k->n; i++) {
		struct pc_rec_request req, *r = &req;

		kernel_requests_get(k, idx[i], r);
		if (nskip && has_key(skip, nskip, r->pid)) {
			k->skipped++;
			continue;
		}
		if (outbound(l, r))
			r->origin = PC_REQUEST_CONNECTED;
		if (add_request(&rows, &pool, r,
				(int64_t)*hmap_find(numbers, r->conn_ts, r->cookie)) < 0)
			goto out;
	}
	if (batch_flush(&rows) == 0 && pool_flush(&pool) == 0)
		rc = 0;
out:
	batch_free(&rows);
	sql_writer_stop(writer);
	pool_free(&pool);
	return rc;
}

int kernel_requests_build(sqlite3 *db, struct kernel_requests *k, int skip_pids_with_rows)
{
	struct listeners l = { 0 };
	struct hmap numbers;
	int64_t *skip = NULL;
	size_t nskip = 0;
	uint32_t *idx = NULL;
	int rc = -1;

	if (!k->n)
		return 0;
	if (k->n > UINT32_MAX) {
		fprintf(stderr, "perfcap-analyze: %zu REQUEST records: more than this version handles\n",
			k->n);
		return -1;
	}
	hmap_init(&numbers);
	if ((skip_pids_with_rows &&
	     load_keys(db, "SELECT DISTINCT pid FROM requests ORDER BY 1", &skip, &nskip) < 0) ||
	    load_listeners(db, &l) < 0 || number_connections(k, &numbers) < 0)
		goto out;
	idx = by_process(k);
	if (!idx) {
		oom();
		goto out;
	}
	rc = build_rows(db, k, idx, &numbers, skip, nskip, &l);
out:
	hmap_free(&numbers);
	free(idx);
	free(skip);
	free(l.ports);
	free(l.pids);
	return rc;
}
