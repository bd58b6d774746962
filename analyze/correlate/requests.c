/* requests.c - the requests table (see requests.h): the socket calls of
 * every (pid, fd) that ever held a socket, gathered while decoding
 * (request_feed.h) and read once in (pid, fd, time) order, run through a
 * small state machine per (pid, fd): connections open and close, requests
 * start at a read after a write; each finished request gets its readiness
 * from the poll returns (poll_index.h) and goes to the table and to the
 * pool's windows. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/batch_insert.h"
#include "db/db.h"
#include "db/sql_writer.h"
#include "poll_index.h"
#include "pool.h"
#include "request_totals.h"
#include "requests.h"
#include "util/grow.h"

/* A NULL-able integer column. */
struct opt {
	int64_t v;
	int set;
};

struct request {
	int64_t number, pickup_tid, start_ts, end_ts;
	struct opt first_write;
	int64_t bytes_in, bytes_out, reads, writes;
	int64_t *tids;            /* distinct, ascending */
	size_t ntids, tids_cap;
	int open;
};

/* The (pid, fd) being read and its current connection. */
struct stream {
	int64_t pid, fd;
	int64_t conn, conn_ts;
	struct opt cookie, closed, prev_end;
	const char *origin;       /* static: "accepted", "connected", ... or NULL */
	int prev_io;              /* 0 none, 'r', 'w': the connection's last kept call */
	struct request req;
};

struct requests_pass {
	sqlite3 *db;
	struct poll_index polls;
	struct batch_insert rows;
	struct pool pool;
	struct stream s;
	struct request_totals *totals;
	struct request_pids *pids;
	int started;
};

static int oom(void)
{
	fprintf(stderr, "perfcap-analyze: out of memory\n");
	return -1;
}

/* Takes the feed's poll returns (those of processes with sockets). */
static int load_polls(struct request_feed *f, struct poll_index *p)
{
	struct poll_ret *polls = f->polls;
	size_t n = f->npolls;

	f->polls = NULL;
	f->npolls = f->polls_cap = 0;
	return poll_index_build(p, polls, n);
}

/* The pickup thread's last poll return at or before ts. */
static struct opt own_poll(struct poll_index *p, int64_t pid, int64_t tid, int64_t ts)
{
	struct opt o = { 0 };

	if (ts == INT64_MAX)
		return o;
	o.v = poll_index_last_of_thread(p, pid, tid, ts, &o.set);
	return o;
}

/* The process's first poll return at or after ts. */
static struct opt next_poll(struct poll_index *p, int64_t pid, int64_t ts)
{
	struct opt o = { 0 };

	o.v = poll_index_first_of_process(p, pid, ts, &o.set);
	return o;
}

/* The readiness of a finished request (requests.h): its ready_ts and
 * where it came from. */
struct readiness {
	struct opt lower, ready;
	const char *source;
};

static int is_origin(const char *origin, const char *what)
{
	return origin && strcmp(origin, what) == 0;
}

static struct readiness readiness(struct requests_pass *P, const struct request *r)
{
	const struct stream *s = &P->s;
	struct readiness q = { 0 };
	struct opt own, any = { 0 };

	q.lower = r->number == 1 ? (struct opt){ s->conn_ts, 1 } : s->prev_end;
	if (is_origin(s->origin, "connected"))
		return q;
	own = own_poll(&P->polls, s->pid, r->pickup_tid, r->start_ts);
	if (!(own.set && q.lower.set && own.v >= q.lower.v))
		own.set = 0;
	if (q.lower.set) {
		any = next_poll(&P->polls, s->pid, q.lower.v);
		if (!(any.set && any.v <= r->start_ts))
			any.set = 0;
	}
	if (own.set) {
		q.ready = own;
		q.source = "poll";
	} else if (any.set) {
		q.ready = any;
		q.source = "poll_other";
	} else if (r->number > 1) {
		q.ready = q.lower;
		q.source = "previous_response";
	} else if (is_origin(s->origin, "accepted")) {
		q.ready = q.lower;
		q.source = "accept";
	}
	return q;
}

/* Appends the decimal digits of v to buf at *used, keeping room for the
 * NUL within len. */
static void put_int(char *buf, size_t len, size_t *used, int64_t v)
{
	char digits[24];
	int n = 0;
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

	do {
		digits[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		digits[n++] = '-';
	while (n > 0 && *used + 1 < len)
		buf[(*used)++] = digits[--n];
}

/* "1,2,3": the request's threads, as SQLite's group_concat wrote them,
 * cut to len - 1 characters as snprintf would (it was snprintf, 0.6% of
 * an import with half a million requests). */
static void format_tids(const struct request *r, char *buf, size_t len)
{
	size_t used = 0;

	for (size_t i = 0; i < r->ntids && used + 1 < len; i++) {
		if (i)
			buf[used++] = ',';
		put_int(buf, len, &used, r->tids[i]);
	}
	buf[used] = '\0';
}

static void set_opt(int64_t *row, uint8_t *kind, int col, struct opt v)
{
	row[col] = v.v;
	if (!v.set)
		kind[col] = BATCH_NULL;
}

/* pid got a row: kept in the list when it is not its last entry (the
 * calls come a stream at a time; sorted and made distinct at the end). */
static int note_pid(struct request_pids *p, int64_t pid)
{
	if (p->n && p->v[p->n - 1] == pid)
		return 0;
	if (array_grow((void **)&p->v, &p->cap, p->n, sizeof(*p->v), 16) < 0)
		return oom();
	p->v[p->n++] = pid;
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static void distinct_pids(struct request_pids *p)
{
	size_t k = 0;

	if (p->n < 2)          /* none (v NULL) or one */
		return;
	qsort(p->v, p->n, sizeof(*p->v), cmp_i64);
	for (size_t i = 0; i < p->n; i++)
		if (!k || p->v[k - 1] != p->v[i])
			p->v[k++] = p->v[i];
	p->n = k;
}

static int insert_request(struct requests_pass *P, const struct request *r,
			  const struct readiness *q)
{
	const struct stream *s = &P->s;
	char tids[BATCH_TEXT_PER_ROW];
	uint8_t *kind;
	int64_t *row = batch_row(&P->rows, &kind);
	struct opt queue = { 0 }, sojourn = { 0 };

	if (!row)
		return -1;
	if (q->ready.set) {
		queue = (struct opt){ r->start_ts - q->ready.v > 0 ? r->start_ts - q->ready.v : 0, 1 };
		sojourn = (struct opt){ r->end_ts - q->ready.v, 1 };
	}
	format_tids(r, tids, sizeof(tids));
	row[0] = s->pid;
	row[1] = s->fd;
	row[2] = s->conn;
	set_opt(row, kind, 3, s->cookie);
	batch_text(row, kind, 4, s->origin);
	row[5] = s->conn_ts;
	row[6] = r->number;
	batch_text_copy(&P->rows, row, kind, 7, tids);
	row[8] = r->pickup_tid;
	row[9] = r->start_ts;
	set_opt(row, kind, 10, r->first_write);
	row[11] = r->end_ts;
	row[12] = r->end_ts - r->start_ts;
	row[13] = r->bytes_in;
	row[14] = r->bytes_out;
	row[15] = r->reads;
	row[16] = r->writes;
	set_opt(row, kind, 17, q->lower);
	set_opt(row, kind, 18, q->ready);
	batch_text(row, kind, 19, q->source);
	set_opt(row, kind, 20, queue);
	set_opt(row, kind, 21, sojourn);
	kind[22] = BATCH_NULL;   /* window_ts: every call is seen */
	if (batch_commit_row(&P->rows) < 0 || note_pid(P->pids, s->pid) < 0)
		return -1;
	return request_totals_add(P->totals, s->pid, s->fd, r->pickup_tid, r->start_ts,
				  r->end_ts - r->start_ts, q->ready.set, q->ready.v, queue.v,
				  q->source && strcmp(q->source, "data_ready") == 0);
}

/* A request is kept when it wrote a response (a request with no write
 * is one the capture did not see answered). */
static int finish_request(struct requests_pass *P)
{
	struct stream *s = &P->s;
	struct request *r = &s->req;
	struct readiness q;
	int64_t ready;

	if (!r->open)
		return 0;
	r->open = 0;
	if (!r->writes)
		return 0;
	q = readiness(P, r);
	s->prev_end = (struct opt){ r->end_ts, 1 };
	if (insert_request(P, r, &q) < 0)
		return -1;
	if (is_origin(s->origin, "connected"))
		return 0;
	ready = q.ready.set && q.ready.v < r->start_ts ? q.ready.v : r->start_ts;
	return pool_add(&P->pool, s->pid, r->pickup_tid, ready, r->start_ts, r->end_ts,
			q.ready.set, q.ready.set ? (r->start_ts - q.ready.v > 0 ?
						   r->start_ts - q.ready.v : 0) : 0);
}

static int add_tid(struct request *r, int64_t tid)
{
	size_t i = 0;

	while (i < r->ntids && r->tids[i] < tid)
		i++;
	if (i < r->ntids && r->tids[i] == tid)
		return 0;
	if (r->ntids == r->tids_cap) {
		size_t cap = r->tids_cap ? r->tids_cap * 2 : 8;
		int64_t *t = realloc(r->tids, cap * sizeof(*t));

		if (!t)
			return oom();
		r->tids = t;
		r->tids_cap = cap;
	}
	memmove(&r->tids[i + 1], &r->tids[i], (r->ntids - i) * sizeof(*r->tids));
	r->tids[i] = tid;
	r->ntids++;
	return 0;
}

static void start_request(struct stream *s, int64_t tid)
{
	struct request *r = &s->req;

	r->number++;
	r->open = 1;
	r->pickup_tid = tid;
	r->start_ts = INT64_MAX;
	r->end_ts = INT64_MIN;
	r->first_write = (struct opt){ 0 };
	r->bytes_in = r->bytes_out = r->reads = r->writes = 0;
	r->ntids = 0;
}

/* A read or write on the stream's live connection. */
static int add_call(struct requests_pass *P, int64_t ts, int64_t tid, int64_t end_ts,
		    int is_read, int64_t bytes)
{
	struct stream *s = &P->s;
	struct request *r = &s->req;
	int starts = is_read && s->prev_io != 'r';

	s->prev_io = is_read ? 'r' : 'w';
	if (starts) {
		if (finish_request(P) < 0)
			return -1;
		start_request(s, tid);
	}
	if (!r->open)
		return 0;          /* a write before the connection's first read */
	if (ts < r->start_ts)
		r->start_ts = ts;
	if (end_ts > r->end_ts)
		r->end_ts = end_ts;
	if (is_read) {
		r->reads++;
		r->bytes_in += bytes;
	} else {
		if (!r->first_write.set)
			r->first_write = (struct opt){ ts, 1 };
		r->writes++;
		r->bytes_out += bytes;
	}
	return add_tid(r, tid);
}

static void open_connection(struct stream *s, const struct request_call *c)
{
	s->conn++;
	s->conn_ts = c->ts;
	s->cookie = (struct opt){ c->value, 1 };
	s->origin = request_origins[c->origin];
	s->prev_io = 0;
	s->prev_end = (struct opt){ 0 };
	s->req.number = 0;
}

/* The stream moves to another (pid, fd): a fresh state, the tids buffer
 * kept. */
static void next_stream(struct stream *s, int64_t pid, int64_t fd)
{
	struct request req = { .tids = s->req.tids, .tids_cap = s->req.tids_cap };

	*s = (struct stream){ .pid = pid, .fd = fd, .req = req };
}

static int step(struct requests_pass *P, const struct request_call *c)
{
	struct stream *s = &P->s;

	if (!P->started || c->pid != s->pid || c->fd != s->fd) {
		if (P->started && finish_request(P) < 0)
			return -1;
		next_stream(s, c->pid, c->fd);
		P->started = 1;
	}
	if (c->ord == 0) {
		if (finish_request(P) < 0)
			return -1;
		open_connection(s, c);
		return 0;
	}
	if (c->ord == 1) {
		if (!s->closed.set || c->ts > s->closed.v)
			s->closed = (struct opt){ c->ts, 1 };
		return 0;
	}
	if (s->conn == 0 || (s->closed.set && s->closed.v >= s->conn_ts))
		return 0;
	return add_call(P, c->ts, c->tid, c->end_ts, c->is_read, c->value);
}

static int run_calls(struct requests_pass *P, struct request_feed *f)
{
	struct request_call c;
	int rc;

	while ((rc = request_feed_next(f, &c)) == 1)
		if (step(P, &c) < 0)
			return -1;
	if (rc == 0 && P->started)
		rc = finish_request(P);
	return rc;
}

int requests_build(sqlite3 *db, struct request_feed *f, struct request_totals *totals,
		   struct request_pids *pids)
{
	struct requests_pass P = { .db = db, .totals = totals, .pids = pids };
	struct sql_writer *writer = NULL;
	int rc = -1;

	/* nothing to do without sockets */
	if (f->nsockets == 0)
		return 0;
	if (request_feed_finish(f) < 0)   /* reported */
		goto out;
	/* the rows are written on a second thread while this one goes on
	 * (without one, inline) */
	writer = sql_writer_start();
	if (load_polls(f, &P.polls) < 0 || pool_init(&P.pool, db, writer) < 0 ||
	    batch_init(&P.rows, db, REQUEST_COLUMNS, REQUEST_NCOLS) < 0)
		goto out;
	if (writer)
		batch_encode_here(&P.rows, writer);
	if (run_calls(&P, f) == 0 && batch_flush(&P.rows) == 0 && pool_flush(&P.pool) == 0)
		rc = 0;
	distinct_pids(pids);
out:
	batch_free(&P.rows);
	sql_writer_stop(writer);
	pool_free(&P.pool);
	poll_index_free(&P.polls);
	free(P.s.req.tids);
	return rc;
}
