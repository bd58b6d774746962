/* diagnose_threads.c - the scope's threads and where their time went, in
 * one aggregate pass over thread_states (clipped to the window) plus the
 * CPU samples: the denominators and wait totals the rules share. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "diagnose.h"

static int thread_index(struct diag_input *in, size_t *cap, uint32_t pid, uint32_t tid)
{
	int created = 0;
	uint64_t *slot = hmap_upsert(&in->thread_by_tid, tid, 0, in->nthreads, &created);

	if (!slot)
		return -1;
	if (!created)
		return (int)*slot;
	if (in->nthreads == *cap) {
		size_t n = *cap ? *cap * 2 : 64;
		struct diag_thread *grown = realloc(in->threads, n * sizeof(*grown));
		if (!grown)
			return -1;
		in->threads = grown;
		*cap = n;
	}
	memset(&in->threads[in->nthreads], 0, sizeof(in->threads[0]));
	in->threads[in->nthreads].pid = pid;
	in->threads[in->nthreads].tid = tid;
	return (int)in->nthreads++;
}

static enum diag_class class_of(const char *wait_class, int64_t syscall_nr)
{
	static const char *names[] = { "block_io", "futex", "poll", "sleep", "net" };

	if (!wait_class)
		return DC_OTHER;
	if (strcmp(wait_class, "net") == 0 && (syscall_nr == 43 || syscall_nr == 288))
		return DC_ACCEPT;
	for (int i = 0; i < 5; i++)
		if (strcmp(wait_class, names[i]) == 0)
			return (enum diag_class)i;
	return DC_OTHER;
}

static void add_state(struct diag_thread *t, const char *state, const char *wait_class,
		      int64_t syscall_nr, uint64_t ns)
{
	if (strcmp(state, "running") == 0) {
		t->running += ns;
	} else if (strcmp(state, "runnable") == 0) {
		t->runnable += ns;
	} else {
		t->blocked += ns;
		t->wait[class_of(wait_class, syscall_nr)] += ns;
	}
}

static int load_states(struct diag_input *in, size_t *cap)
{
	char where[1024], sql[2048];
	sqlite3_stmt *st;
	int rc = 0, step;

	snprintf(sql, sizeof(sql),
		 "SELECT pid, tid, state, wait_class, CASE WHEN wait_class = 'net'"
		 " AND syscall_nr IN (43, 288) THEN syscall_nr END AS nr,"
		 " sum(min(end_ts, :to) - max(start_ts, :from)) FROM thread_states"
		 " WHERE tid <> 0 AND %s GROUP BY pid, tid, state, wait_class, nr ORDER BY pid, tid",
		 report_scope_sql(where, sizeof(where), "pid", "tid", "start_ts", "end_ts"));
	st = diag_prepare(in, sql);
	if (!st)
		return -1;
	while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
		int i = thread_index(in, cap, (uint32_t)sqlite3_column_int64(st, 0),
				     (uint32_t)sqlite3_column_int64(st, 1));
		const char *state = (const char *)sqlite3_column_text(st, 2);
		int64_t ns = sqlite3_column_int64(st, 5);
		if (i < 0)
			rc = -1;
		else if (state && ns > 0)
			add_state(&in->threads[i], state, (const char *)sqlite3_column_text(st, 3),
				  sqlite3_column_type(st, 4) == SQLITE_NULL ? -1 :
				  sqlite3_column_int64(st, 4), (uint64_t)ns);
	}
	if (rc == 0 && step != SQLITE_DONE) {
		db_report_error(in->db, "thread_states");
		rc = -1;
	}
	sqlite3_finalize(st);
	return rc;
}

static int add_samples(struct diag_input *in, size_t *cap, const struct selection *sel)
{
	for (size_t g = 0; g < sel->len; g++) {
		int i = thread_index(in, cap, sel->groups[g].pid, sel->groups[g].tid);
		if (i < 0)
			return -1;
		in->threads[i].samples += sel->groups[g].count;
	}
	return 0;
}

int diag_threads_load(struct diag_input *in, const struct selection *sel)
{
	size_t cap = 0;
	uint64_t window = diag_scope_ns(in);
	if ((in->has_sched && load_states(in, &cap) < 0) || add_samples(in, &cap, sel) < 0)
		return -1;
	for (size_t i = 0; i < in->nthreads; i++) {
		struct diag_thread *t = &in->threads[i];
		t->observed = t->running + t->runnable + t->blocked;
		if (t->observed == 0)
			t->observed = window;
	}
	return 0;
}

const struct diag_thread *diag_thread_find(const struct diag_input *in, uint32_t tid)
{
	uint64_t *slot = hmap_find(&in->thread_by_tid, tid, 0);

	return slot ? &in->threads[*slot] : NULL;
}

uint64_t diag_scope_ns(const struct diag_input *in)
{
	const struct report_scope *s = in->scope;
	uint64_t to = s->to > s->capture_end ? s->capture_end : s->to;

	return to > s->from ? to - s->from : 0;
}

int diag_material(const struct diag_input *in, uint64_t ns)
{
	return ns >= 1000000 && (double)ns >= 0.05 * (double)diag_scope_ns(in);
}

uint64_t diag_observed_ns(const struct diag_input *in, uint32_t tid)
{
	const struct diag_thread *t = diag_thread_find(in, tid);

	return t ? t->observed : diag_scope_ns(in);
}

const char *diag_comm(const struct diag_input *in, uint32_t pid, uint32_t tid, char *buf,
		      size_t len)
{
	const char *name = names_thread(in->names, pid, tid);

	snprintf(buf, len, "%s", name ? name : "?");
	return buf;
}
