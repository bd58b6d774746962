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
 * to SQLite on a second thread. Memory: the records are kept, and read
 * back grouped by process, by kernel_request_store.c (bounded: past 64
 * MiB they go to disk in sorted runs); the connections, and the pool's
 * 16 bytes per request of the process being summed.
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
#include "kernel_request_store.h"
#include "kernel_requests.h"
#include "pool.h"
#include "request_totals.h"
#include "requests.h"
#include "db/sql_writer.h"
#include "util/grow.h"
#include "util/hashmap.h"
#include "util/sorted_search.h"

static int oom(void)
{
	fprintf(stderr, "perfcap-analyze: out of memory\n");
	return -1;
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
		      int64_t lower, int64_t ready, const char *source,
		      const struct kreq_window *window)
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
	if (window)
		row[22] = window->ts;
	else
		kind[22] = BATCH_NULL;
	return batch_commit_row(rows);
}

/* ---- windows ------------------------------------------------------------ */

static int window_cmp(const void *pa, const void *pb)
{
	const struct kreq_window *a = pa, *b = pb;

	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

/* The windows in time order, each once: one overlapping an earlier one is
 * left out (counted). */
static void sort_windows(struct kernel_requests *k)
{
	size_t n = 0;

	if (k->nwindows < 2)
		return;
	qsort(k->windows, k->nwindows, sizeof(*k->windows), window_cmp);
	for (size_t i = 0; i < k->nwindows; i++) {
		if (n && k->windows[i].ts < k->windows[n - 1].ts + k->windows[n - 1].period_ns) {
			k->windows_overlapping++;
			continue;
		}
		k->windows[n++] = k->windows[i];
	}
	k->nwindows = n;
}

/* The window whose period holds ts, or NULL. */
static struct kreq_window *window_of(struct kernel_requests *k, int64_t ts)
{
	size_t next = sorted_first_above(k->windows, k->nwindows, sizeof(*k->windows),
					 offsetof(struct kreq_window, ts), ts);

	if (!next || ts - k->windows[next - 1].ts >= k->windows[next - 1].period_ns)
		return NULL;
	return &k->windows[next - 1];
}

static int write_windows(sqlite3 *db, const struct kernel_requests *k)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db, "INSERT INTO request_windows (start_ts, open_ns, period_ns,"
				    " started, followed, weight, gap_conns, gap_bytes, snap_start,"
				    " snap_end) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
				    -1, &st, NULL);

	for (size_t i = 0; rc == SQLITE_OK && i < k->nwindows; i++) {
		const struct kreq_window *w = &k->windows[i];

		sqlite3_bind_int64(st, 1, w->ts);
		sqlite3_bind_int64(st, 2, w->open_ns);
		sqlite3_bind_int64(st, 3, w->period_ns);
		sqlite3_bind_int64(st, 4, w->started);
		sqlite3_bind_int64(st, 5, w->followed);
		if (w->open_ns)
			sqlite3_bind_double(st, 6, (double)w->period_ns / (double)w->open_ns);
		else
			sqlite3_bind_null(st, 6);
		sqlite3_bind_int64(st, 7, w->gap_conns);
		sqlite3_bind_int64(st, 8, w->gap_bytes);
		if (w->snap_start && w->snap_end) {   /* both, or neither is of use */
			sqlite3_bind_int64(st, 9, w->snap_start);
			sqlite3_bind_int64(st, 10, w->snap_end);
		} else {
			sqlite3_bind_null(st, 9);
			sqlite3_bind_null(st, 10);
		}
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_OK)
		db_report_error(db, "request_windows");
	return rc == SQLITE_OK ? 0 : -1;
}

/* The time no request was followed in, each window's period after its
 * window, for the pool's averages (pool.h). 0 or -1. */
static int window_gaps(const struct kernel_requests *k, struct pool_gap **gaps, struct pool *pool)
{
	size_t n = 0;

	if (!k->nwindows)
		return 0;
	*gaps = malloc(k->nwindows * sizeof(**gaps));
	if (!*gaps)
		return oom();
	for (size_t i = 0; i < k->nwindows; i++)
		if (k->windows[i].open_ns < k->windows[i].period_ns)
			(*gaps)[n++] = (struct pool_gap){ k->windows[i].ts + k->windows[i].open_ns,
							  k->windows[i].ts + k->windows[i].period_ns };
	pool->win.gaps = *gaps;
	pool->win.ngaps = n;
	return 0;
}

/* ---- rows ----------------------------------------------------------------- */

/* One request: its row, and its pool events when it was served here. */
static int add_request(struct batch_insert *rows, struct pool *pool, struct kernel_requests *k,
		       const struct pc_rec_request *r, int64_t conn)
{
	struct request_totals *totals = k->totals;
	struct kreq_window *window = k->nwindows ? window_of(k, (int64_t)r->start_ts) : NULL;
	int64_t lower = r->h.flags & PC_REQUEST_F_LOWER ? (int64_t)(r->start_ts - r->lower_ns)
							: (int64_t)r->conn_ts;
	const char *source;
	int64_t ready = readiness(r, lower, &source), start = (int64_t)r->start_ts;
	int64_t queue = source && start - ready > 0 ? start - ready : 0;

	if (window)
		window->followed++;
	if (insert_row(rows, r, conn, lower, ready, source, window) < 0 ||
	    request_totals_add(totals, r->pid, r->fd, r->pickup_tid, start,
			       (int64_t)r->end_ts - start, source != NULL, ready,
			       source && start - ready > 0 ? start - ready : 0,
			       source && strcmp(source, "data_ready") == 0) < 0)
		return -1;
	if (r->origin == PC_REQUEST_CONNECTED)
		return 0;
	return pool_add(pool, r->pid, r->pickup_tid, source && ready < start ? ready : start,
			start, (int64_t)r->end_ts, source != NULL, queue);
}


static int conn_cmp(const void *pa, const void *pb)
{
	const struct kreq_conn *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->fd != b->fd)
		return a->fd < b->fd ? -1 : 1;
	if (a->conn_ts != b->conn_ts)
		return a->conn_ts < b->conn_ts ? -1 : 1;
	return a->cookie < b->cookie ? -1 : a->cookie > b->cookie;
}

/* Each connection's number on its (pid, fd), 1, 2 ... in time order, as
 * the value of k->conn_ids. 0 or -1 (out of memory, reported). */
static int number_connections(struct kernel_requests *k)
{
	struct kreq_conn *v = malloc((k->nconns ? k->nconns : 1) * sizeof(*v));

	if (!v)
		return oom();
	memcpy(v, k->conns, k->nconns * sizeof(*v));
	qsort(v, k->nconns, sizeof(*v), conn_cmp);
	for (size_t i = 0, number = 0; i < k->nconns; i++) {
		number = i && v[i].pid == v[i - 1].pid && v[i].fd == v[i - 1].fd ? number + 1 : 1;
		*hmap_find(&k->conn_ids, (uint64_t)v[i].conn_ts, (uint64_t)v[i].cookie) = number;
	}
	free(v);
	return 0;
}

/* One request of a kept record: its row and pool events, unless its
 * process is skipped. */
static int one_request(struct batch_insert *rows, struct pool *pool, struct kernel_requests *k,
		       struct pc_rec_request *r, const struct listeners *l)
{
	if (outbound(l, r))
		r->origin = PC_REQUEST_CONNECTED;
	return add_request(rows, pool, k, r,
			   (int64_t)*hmap_find(&k->conn_ids, r->conn_ts, r->cookie));
}

/* The requests of one kept record, in their order. */
static int record_requests(struct batch_insert *rows, struct pool *pool,
			   struct kernel_requests *k, const struct kreq_head *h,
			   const struct listeners *l)
{
	const unsigned char *rec = (const unsigned char *)(h + 1);
	struct pc_rec_request r;
	struct pc_rec_request_batch b;
	struct pc_request_entry e;

	if (!h->n) {
		memcpy(&r, rec, sizeof(r));
		return one_request(rows, pool, k, &r, l);
	}
	memcpy(&b, rec, sizeof(b));
	for (uint32_t i = 0; i < h->n; i++) {
		memcpy(&e, rec + sizeof(b) + i * sizeof(e), sizeof(e));
		batch_entry(&b, &e, i, &r);
		if (one_request(rows, pool, k, &r, l) < 0)
			return -1;
	}
	return 0;
}

static int build_rows(sqlite3 *db, struct kernel_requests *k, const int64_t *skip,
		      size_t nskip, const struct listeners *l)
{
	struct sql_writer *writer = sql_writer_start();
	struct batch_insert rows = { 0 };
	struct kreq_cursor cursor = { 0 };
	const struct kreq_head *h;
	struct pool pool;
	struct pool_gap *gaps = NULL;
	int rc = -1, more;

	if (pool_init(&pool, db, writer) < 0 || window_gaps(k, &gaps, &pool) < 0)
		goto out;
	if (batch_init(&rows, db, REQUEST_COLUMNS, REQUEST_NCOLS) < 0)
		goto out;
	if (writer)
		batch_encode_here(&rows, writer);
	if (kreq_cursor_start(&cursor, k) < 0)
		goto out;
	while ((more = kreq_cursor_next(&cursor, &h)) > 0) {
		if (nskip && has_key(skip, nskip, h->pid))
			k->skipped += h->n ? h->n : 1;
		else if (record_requests(&rows, &pool, k, h, l) < 0)
			goto out;
	}
	if (more == 0 && batch_flush(&rows) == 0 && pool_flush(&pool) == 0)
		rc = 0;
out:
	kreq_cursor_end(&cursor);
	batch_free(&rows);
	sql_writer_stop(writer);
	pool_free(&pool);
	free(gaps);
	return rc;
}

int kernel_requests_build(sqlite3 *db, struct kernel_requests *k, const int64_t *skip,
			  size_t nskip, struct request_totals *totals)
{
	struct listeners l = { 0 };
	int rc = -1;

	k->totals = totals;
	sort_windows(k);
	if (!k->n)
		return write_windows(db, k);
	if (load_listeners(db, &l) < 0 || number_connections(k) < 0)
		goto out;
	rc = build_rows(db, k, skip, nskip, &l);
	if (rc == 0)
		rc = write_windows(db, k);
out:
	free(l.ports);
	free(l.pids);
	return rc;
}
