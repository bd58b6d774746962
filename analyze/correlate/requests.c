/* requests.c - the requests table (see requests.h): the socket calls of
 * every (pid, fd) that ever held a socket, read once in (pid, fd, time)
 * order, run through a small state machine per (pid, fd): connections
 * open and close, requests start at a read after a write; each finished
 * request gets its readiness from the poll returns (binary searches in
 * two sorted arrays) and goes to the table and to the pool sweep. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/batch_insert.h"
#include "db/db.h"
#include "pool.h"
#include "requests.h"

/* The calls, the connection opens (ord 0) and closes (ord 1) of each
 * (pid, fd) that held a socket, in the order the rules read them. One
 * scan of syscalls joined with the few call numbers that matter (what
 * syscall_intervals would give: fd sign-extended from arg0, bytes
 * transferred); sorted here, which costs a third of SQLite's sorter. */
static const char calls_sql[] =
	"WITH held AS (SELECT DISTINCT pid, fd FROM sockets),"
	" calls AS (SELECT nr, io FROM syscall_names WHERE fd_arg"
	"   AND (io IN ('read', 'write') OR name = 'close'))"
	" SELECT * FROM (SELECT pid, fd, ts, 0 AS ord, 0 AS syscall_id, NULL AS tid,"
	"  NULL AS end_ts, NULL AS io, NULL AS bytes, cookie, origin FROM sockets"
	" UNION ALL SELECT s.pid, (s.arg0 & 4294967295) | -4294967296 * ((s.arg0 >> 31) & 1),"
	"  s.ts, CASE WHEN c.io IS NULL THEN 1 ELSE 2 END, s.syscall_id, s.tid,"
	"  s.ts + s.duration, c.io, CASE WHEN s.ret >= 0 THEN s.ret END, NULL, NULL"
	"  FROM syscalls s JOIN calls c USING (nr)"
	"  WHERE CASE c.io WHEN 'read' THEN s.ret > 0 WHEN 'write' THEN s.ret >= 0"
	"   ELSE s.ret = 0 END)"
	" WHERE (pid, fd) IN held";

static const char polls_sql[] =
	"SELECT pid, tid, ts + duration FROM syscalls WHERE ret > 0"
	" AND nr IN (SELECT nr FROM syscall_names WHERE family = 'poll')"
	" AND pid IN (SELECT pid FROM sockets)";

#define REQUEST_COLUMNS \
	"requests (pid, fd, conn, cookie, origin, conn_ts, request, tids, pickup_tid," \
	" start_ts, first_write_ts, end_ts, service_ns, bytes_in, bytes_out, reads, writes," \
	" lower_ts, ready_ts, ready_source, queue_ns, sojourn_ns)"
#define REQUEST_NCOLS 22

/* One row of calls_sql. */
struct call {
	int64_t pid, fd, ts, syscall_id, tid, end_ts, bytes, cookie;
	const char *origin;       /* static, see static_origin() */
	int8_t ord;               /* 0 open, 1 close, 2 read or write */
	int8_t is_read, has_cookie;
};

/* The calls of the capture in (pid, fd, ts, ord, syscall_id) order. */
struct calls {
	struct call *v;
	size_t n, cap;
};

/* A poll-family return: when, by which thread of which process. */
struct poll_ret {
	int64_t pid, tid, ts;
};

struct polls {
	struct poll_ret *by_pid;   /* (pid, ts) order */
	struct poll_ret *by_tid;   /* (pid, tid, ts) order */
	size_t n;
};

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
	struct polls polls;
	struct batch_insert rows;
	struct pool pool;
	struct stream s;
	int started;
};

static int cmp_pid_ts(const void *a, const void *b)
{
	const struct poll_ret *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->ts > y->ts) - (x->ts < y->ts);
}

static int cmp_pid_tid_ts(const void *a, const void *b)
{
	const struct poll_ret *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->ts > y->ts) - (x->ts < y->ts);
}

static int oom(void)
{
	fprintf(stderr, "perfcap-analyze: out of memory\n");
	return -1;
}

static int load_polls(sqlite3 *db, struct polls *p)
{
	sqlite3_stmt *st = db_prepare(db, polls_sql);
	size_t cap = 0;
	int rc;

	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (p->n == cap) {
			struct poll_ret *n = realloc(p->by_pid, (cap = cap ? cap * 2 : 4096) *
						     sizeof(*n));
			if (!n) {
				sqlite3_finalize(st);
				return oom();
			}
			p->by_pid = n;
		}
		p->by_pid[p->n++] = (struct poll_ret){ sqlite3_column_int64(st, 0),
			sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2) };
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		db_report_error(db, "poll returns");
		return -1;
	}
	if (!p->n)
		return 0;
	p->by_tid = malloc(p->n * sizeof(*p->by_tid));
	if (!p->by_tid)
		return oom();
	memcpy(p->by_tid, p->by_pid, p->n * sizeof(*p->by_tid));
	qsort(p->by_pid, p->n, sizeof(*p->by_pid), cmp_pid_ts);
	qsort(p->by_tid, p->n, sizeof(*p->by_tid), cmp_pid_tid_ts);
	return 0;
}

/* The first index whose key is not below key (cmp as the array's order). */
static size_t lower_bound(const struct poll_ret *a, size_t n, const struct poll_ret *key,
			  int (*cmp)(const void *, const void *))
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp(&a[mid], key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The pickup thread's last poll return at or before ts. */
static struct opt own_poll(const struct polls *p, int64_t pid, int64_t tid, int64_t ts)
{
	struct poll_ret key = { pid, tid, ts };
	size_t i;

	if (!p->n || ts == INT64_MAX)
		return (struct opt){ 0 };
	key.ts = ts + 1;
	i = lower_bound(p->by_tid, p->n, &key, cmp_pid_tid_ts);
	if (i == 0 || p->by_tid[i - 1].pid != pid || p->by_tid[i - 1].tid != tid)
		return (struct opt){ 0 };
	return (struct opt){ p->by_tid[i - 1].ts, 1 };
}

/* The process's first poll return at or after ts. */
static struct opt next_poll(const struct polls *p, int64_t pid, int64_t ts)
{
	struct poll_ret key = { pid, 0, ts };
	size_t i = p->n ? lower_bound(p->by_pid, p->n, &key, cmp_pid_ts) : 0;

	if (i == p->n || p->by_pid[i].pid != pid)
		return (struct opt){ 0 };
	return (struct opt){ p->by_pid[i].ts, 1 };
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

static struct readiness readiness(const struct requests_pass *P, const struct request *r)
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

/* "1,2,3": the request's threads, as SQLite's group_concat wrote them. */
static void format_tids(const struct request *r, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < r->ntids && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%lld", i ? "," : "",
					 (long long)r->tids[i]);
}

static void set_opt(int64_t *row, uint8_t *kind, int col, struct opt v)
{
	row[col] = v.v;
	if (!v.set)
		kind[col] = BATCH_NULL;
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
	return batch_commit_row(&P->rows);
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

static const char *static_origin(const unsigned char *text)
{
	static const char *const known[] = { "accepted", "connected", "discovered" };

	if (!text)
		return NULL;
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp((const char *)text, known[i]) == 0)
			return known[i];
	return "other";
}

static void open_connection(struct stream *s, const struct call *c)
{
	s->conn++;
	s->conn_ts = c->ts;
	s->cookie = (struct opt){ c->cookie, c->has_cookie };
	s->origin = c->origin;
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

static int step(struct requests_pass *P, const struct call *c)
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
	return add_call(P, c->ts, c->tid, c->end_ts, c->is_read, c->bytes);
}

static int cmp_call(const void *a, const void *b)
{
	const struct call *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->fd != y->fd)
		return x->fd < y->fd ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->ord != y->ord)
		return x->ord < y->ord ? -1 : 1;
	return (x->syscall_id > y->syscall_id) - (x->syscall_id < y->syscall_id);
}

static int push_call(struct calls *cs, sqlite3_stmt *st)
{
	const unsigned char *io = sqlite3_column_text(st, 7);
	struct call *c;

	if (cs->n == cs->cap) {
		size_t cap = cs->cap ? cs->cap * 2 : 65536;
		struct call *v = realloc(cs->v, cap * sizeof(*v));

		if (!v)
			return oom();
		cs->v = v;
		cs->cap = cap;
	}
	c = &cs->v[cs->n++];
	*c = (struct call){
		.pid = sqlite3_column_int64(st, 0), .fd = sqlite3_column_int64(st, 1),
		.ts = sqlite3_column_int64(st, 2), .ord = (int8_t)sqlite3_column_int64(st, 3),
		.syscall_id = sqlite3_column_int64(st, 4), .tid = sqlite3_column_int64(st, 5),
		.end_ts = sqlite3_column_int64(st, 6), .is_read = io && io[0] == 'r',
		.bytes = sqlite3_column_int64(st, 8), .cookie = sqlite3_column_int64(st, 9),
		.has_cookie = sqlite3_column_type(st, 9) != SQLITE_NULL,
		.origin = static_origin(sqlite3_column_text(st, 10)),
	};
	return 0;
}

/* Room for every call at once: a large array that grows by realloc is
 * copied again and again (a tenth of a big import went to that); pages
 * never written are never backed, so reserving for every syscall costs
 * address space, not memory. */
static int reserve_calls(sqlite3 *db, struct calls *cs)
{
	int64_t n = db_query_int(db, "SELECT (SELECT COALESCE(max(syscall_id), 0) FROM syscalls)"
				 " + (SELECT count(*) FROM sockets)", 0);

	if (n <= 0)
		return 0;
	cs->v = malloc((size_t)n * sizeof(*cs->v));
	if (!cs->v)
		return 0;          /* grow as rows come, then */
	cs->cap = (size_t)n;
	return 0;
}

static int load_calls(sqlite3 *db, struct calls *cs)
{
	sqlite3_stmt *st = db_prepare(db, calls_sql);
	int rc;

	if (!st || reserve_calls(db, cs) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (push_call(cs, st) < 0) {
			sqlite3_finalize(st);
			return -1;
		}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		db_report_error(db, "request calls");
		return -1;
	}
	if (cs->n)   /* qsort of a NULL array is undefined, even empty */
		qsort(cs->v, cs->n, sizeof(*cs->v), cmp_call);
	return 0;
}

static int run_calls(struct requests_pass *P)
{
	struct calls cs = { 0 };
	int rc = load_calls(P->db, &cs);

	for (size_t i = 0; rc == 0 && i < cs.n; i++)
		rc = step(P, &cs.v[i]);
	free(cs.v);
	if (rc == 0 && P->started)
		rc = finish_request(P);
	return rc;
}

int requests_build(sqlite3 *db)
{
	struct requests_pass P = { .db = db };
	int rc = -1;

	/* nothing to do (and no scan of the calls) without sockets */
	if (db_query_int(db, "SELECT EXISTS (SELECT 1 FROM sockets)", 0) == 0)
		return 0;
	if (load_polls(db, &P.polls) < 0 || pool_init(&P.pool, db) < 0 ||
	    batch_init(&P.rows, db, REQUEST_COLUMNS, REQUEST_NCOLS) < 0)
		goto out;
	if (run_calls(&P) == 0 && batch_flush(&P.rows) == 0 && pool_flush(&P.pool) == 0)
		rc = 0;
out:
	batch_free(&P.rows);
	pool_free(&P.pool);
	free(P.polls.by_pid);
	free(P.polls.by_tid);
	free(P.s.req.tids);
	return rc;
}
