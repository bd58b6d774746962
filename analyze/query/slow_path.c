/* slow_path.c - the critical path of the slowest requests (see
 * slow_path.h): load the slow requests into a cover of their spans per
 * serving thread (util/span_cover.h), then one pass over the
 * thread_state_rows of the requests' time range, adding each row's
 * overlap with the slow requests of its thread.
 * Memory: the slow requests only (a tenth of the requests, at most
 * SLOW_PATH_MAX). When the report read every request of the scope already
 * (for the dominant component), it kept the slowest SLOW_PATH_MAX of them
 * in the statement's order (slow_candidate_order), and the slow ones are
 * picked from those instead of reading the table again (0.5 s of a report
 * of 2M requests). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "slow_path.h"
#include "util/span_cover.h"

struct slow_req {
	uint32_t tid;
	int64_t start, end;
};

/* The slowest cap requests have a service time of at least the cap-th
 * largest of all (floor_ns), when that is above 0 (then no NULL, read as
 * 0, is among the values at or above it); else no bound. */
static int64_t slow_floor(int64_t floor_ns)
{
	return floor_ns > 0 ? floor_ns : INT64_MIN;
}

/* How many requests are the slow ones: a tenth, at least one, at most
 * SLOW_PATH_MAX. */
size_t slow_path_count(uint64_t all)
{
	uint64_t cap = all / 10 ? all / 10 : 1;

	return cap > SLOW_PATH_MAX ? SLOW_PATH_MAX : (size_t)cap;
}

uint64_t slow_path_floor_pos(uint64_t all)
{
	return all ? all - slow_path_count(all) : 0;
}

static size_t slow_cap(const struct slow_path *out)
{
	return slow_path_count(out->all);
}

/* The order of load_requests' statement: service time descending, then
 * the view's order (start, pid, fd) and the table's (rowid). */
int slow_candidate_order(const struct slow_candidate *a, const struct slow_candidate *b)
{
	if (a->service != b->service)
		return a->service > b->service ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->conn != b->conn)
		return a->conn < b->conn ? -1 : 1;
	return (a->row > b->row) - (a->row < b->row);
}

static int by_slowness(const void *pa, const void *pb)
{
	return slow_candidate_order(*(const struct slow_candidate *const *)pa,
				    *(const struct slow_candidate *const *)pb);
}

/* load_requests from the caller's rows: those at or above the floor, in
 * the statement's order, the first cap of them. 0 or -1. */
static int pick_requests(const struct slow_candidate *c, size_t nc, int64_t floor_ns,
			 struct slow_path *out, struct slow_req **reqs, size_t *n)
{
	size_t cap = slow_cap(out), m = 0;
	int64_t floor = slow_floor(floor_ns);
	const struct slow_candidate **sel = malloc((nc ? nc : 1) * sizeof(*sel));

	*reqs = calloc(cap, sizeof(**reqs));
	if (!sel || !*reqs) {
		free(sel);
		return -1;
	}
	for (size_t i = 0; i < nc; i++)
		if (c[i].service_set && c[i].service >= floor)
			sel[m++] = &c[i];
	qsort(sel, m, sizeof(*sel), by_slowness);
	for (size_t i = 0; i < m && *n < cap; i++) {
		struct slow_req *r = &(*reqs)[(*n)++];
		r->tid = (uint32_t)sel[i]->tid;
		r->start = sel[i]->start;
		r->end = sel[i]->end;
		out->span_ns += (uint64_t)sel[i]->service;
		out->threshold_ns = sel[i]->service;
	}
	free(sel);
	out->requests = *n;
	return 0;
}

static int load_requests(sqlite3 *db, const struct report_scope *scope, int64_t floor_ns,
			 struct slow_path *out, struct slow_req **reqs, size_t *n)
{
	char where[1024], sql[2048];
	sqlite3_stmt *st;
	size_t cap = slow_cap(out);
	int step;

	report_scope_sql(where, sizeof(where), "pid", "CAST(tids AS INTEGER)", "start_ts", "end_ts");
	if (out->all == 0)
		return 0;
	/* the whole capture: the table in storage order (the view's index
	 * order cost a rowid lookup per row); ties on service_ns are broken
	 * in the view's order, so the same requests are the slowest. Only
	 * those at or above the floor reach the sort (it was 0.5 s of a
	 * report of 938k requests when all did). */
	snprintf(sql, sizeof(sql), "SELECT CAST(tids AS INTEGER), start_ts, end_ts, service_ns"
		 " FROM %s WHERE %s AND service_ns IS NOT NULL AND service_ns >= %lld"
		 " ORDER BY service_ns DESC, start_ts, pid, fd LIMIT %zu",
		 report_requests_from(scope, "request_spans"), where,
		 (long long)slow_floor(floor_ns), cap);
	st = db_prepare(db, sql);
	*reqs = calloc(cap, sizeof(**reqs));
	if (!st || !*reqs) {
		sqlite3_finalize(st);
		return -1;
	}
	report_scope_bind(st, scope);
	while ((step = sqlite3_step(st)) == SQLITE_ROW && *n < cap) {
		struct slow_req *r = &(*reqs)[(*n)++];
		r->tid = (uint32_t)sqlite3_column_int64(st, 0);
		r->start = sqlite3_column_int64(st, 1);
		r->end = sqlite3_column_int64(st, 2);
		out->span_ns += (uint64_t)sqlite3_column_int64(st, 3);
		out->threshold_ns = sqlite3_column_int64(st, 3);
	}
	sqlite3_finalize(st);
	if (step != SQLITE_ROW && step != SQLITE_DONE) {
		db_report_error(db, "request_spans");
		return -1;
	}
	out->requests = *n;
	return 0;
}

/* The slow requests being walked: their spans per thread (span_cover.h),
 * [from, to) the time they cover. The walk used to visit, for each state
 * row, every slow request started less than the longest one's length
 * before it: one 8 s request among 800k made a report 6.5 times slower
 * (7.3 against 1.1 s), and the cost grew with the square of the requests.
 * The cover answers the same sum in two binary searches. */
struct slow_walk {
	struct slow_path *out;
	struct slow_req *r;
	size_t n;
	struct span_cover *cover;
	int64_t from, to;
};

/* Adds one state row's overlap with the slow requests of its thread. */
void slow_path_add_state(struct slow_walk *w, const struct slow_state_row *row)
{
	struct slow_path *out = w->out;
	uint64_t ns = span_cover_overlap(w->cover, row->tid, row->start,
					 row->start + row->duration);

	if (ns) {
		out->covered += ns;
		if (row->state == 0) {
			out->running += ns;
		} else if (row->state == 1) {
			out->runnable += ns;
		} else {
			out->blocked += ns;
			out->by_class[row->cls >= 0 && row->cls < SLOW_PATH_CLASSES ? row->cls : 6] += ns;
			out->woken_by[!row->has_waker ? SW_NONE : row->waker_tid == 0 ? SW_INTERRUPT :
				      row->waker_pid == row->pid ? SW_THREAD : SW_PROCESS] += ns;
		}
	}
}

void slow_path_state_of(sqlite3_stmt *st, int col, struct slow_state_row *row)
{
	row->tid = sqlite3_column_int64(st, col);
	row->start = sqlite3_column_int64(st, col + 1);
	row->duration = sqlite3_column_int64(st, col + 2);
	row->state = sqlite3_column_int64(st, col + 3);
	row->cls = sqlite3_column_int64(st, col + 4);
	row->has_waker = sqlite3_column_type(st, col + 5) != SQLITE_NULL;
	row->waker_tid = sqlite3_column_int64(st, col + 5);
	row->waker_pid = sqlite3_column_int64(st, col + 6);
	row->pid = sqlite3_column_int64(st, col + 7);
}

/* The rows of the slow requests' time range, from the table. */
int slow_path_walk(struct slow_walk *w, sqlite3 *db)
{
	struct slow_state_row row;
	sqlite3_stmt *st = db_prepare(db, "SELECT " SLOW_PATH_STATE_COLUMNS
				      " FROM thread_state_rows"
				      " WHERE start_ts < ?2 AND start_ts + duration > ?1");
	int step;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, w->from);
	sqlite3_bind_int64(st, 2, w->to);
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		slow_path_state_of(st, 0, &row);
		slow_path_add_state(w, &row);
	}
	sqlite3_finalize(st);
	if (step != SQLITE_DONE) {
		db_report_error(db, "thread_state_rows");
		return -1;
	}
	return 0;
}

static int index_requests(struct slow_walk *w)
{
	w->from = INT64_MAX;
	if (!(w->cover = span_cover_new()))
		return -1;
	for (size_t i = 0; i < w->n; i++) {
		const struct slow_req *r = &w->r[i];
		if (span_cover_add(w->cover, r->tid, r->start, r->end) < 0)
			return -1;
		w->from = r->start < w->from ? r->start : w->from;
		w->to = r->end > w->to ? r->end : w->to;
	}
	free(w->r);                          /* the cover has them */
	w->r = NULL;
	return span_cover_build(w->cover);
}

/* The names of the wait class codes, as the import wrote them. */
static void load_class_names(sqlite3 *db, struct slow_path *out)
{
	sqlite3_stmt *st = report_has_object(db, "wait_classes") ?
			   db_prepare(db, "SELECT code, name FROM wait_classes") : NULL;

	while (st && sqlite3_step(st) == SQLITE_ROW) {
		int code = sqlite3_column_int(st, 0);
		const unsigned char *name = sqlite3_column_text(st, 1);
		if (code >= 0 && code < SLOW_PATH_CLASSES && name)
			snprintf(out->class_names[code], sizeof(out->class_names[code]), "%s",
				 (const char *)name);
	}
	sqlite3_finalize(st);
}

void slow_path_end(struct slow_walk *w)
{
	if (!w)
		return;
	span_cover_free(w->cover);
	free(w->r);
	free(w);
}

int slow_path_begin(sqlite3 *db, const struct report_scope *scope, uint64_t requests,
		    int64_t floor_ns, const struct slow_candidate *cands, size_t ncands,
		    struct slow_path *out, struct slow_walk **walk)
{
	struct slow_walk *w;
	int rc;

	*walk = NULL;
	memset(out, 0, sizeof(*out));
	out->all = requests;
	load_class_names(db, out);
	if (!report_has_object(db, "request_spans"))
		return 0;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -1;
	w->out = out;
	if (cands && requests > 0)
		rc = pick_requests(cands, ncands, floor_ns, out, &w->r, &w->n);
	else
		rc = load_requests(db, scope, floor_ns, out, &w->r, &w->n);
	if (rc == 0)
		rc = index_requests(w);
	if (rc < 0 || w->n == 0) {
		slow_path_end(w);
		return rc;
	}
	*walk = w;
	return 0;
}

int slow_path_load(sqlite3 *db, const struct report_scope *scope, uint64_t requests,
		   int64_t floor_ns, const struct slow_candidate *cands, size_t ncands,
		   struct slow_path *out)
{
	struct slow_walk *w;
	int rc = slow_path_begin(db, scope, requests, floor_ns, cands, ncands, out, &w);

	if (rc == 0 && w)
		rc = slow_path_walk(w, db);
	slow_path_end(w);
	return rc;
}

const char *slow_path_class_name(const struct slow_path *s, int code)
{
	return code >= 0 && code < SLOW_PATH_CLASSES && s->class_names[code][0] ?
	       s->class_names[code] : "other";
}

