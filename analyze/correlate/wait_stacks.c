/* wait_stacks.c - the second look at off-CPU waits, once stacks have
 * names: a wait the correlator could only classify by task state (no
 * recorded system call contained it) is classified by the kernel stack it
 * slept in, when that stack says what it waited for (wait_class.c's
 * table: futex_wait* is a user lock, ep_poll an epoll wait, sk_wait_data a
 * socket, io_schedule the disk ...). The offcpu row gets the class with
 * class_source 'kstack', and the blocked thread_state_rows interval that
 * began at the same switch-out gets the same class, so the thread shares
 * and the diagnosis see it.
 *
 * Finding that interval: the correlator paired each such row with its
 * OFFCPU record as it wrote them (waits.c: the row's rowid and the
 * record's kernel stack), so each row is updated by its rowid, its tid and
 * start checked. Joining instead, on (tid, start_ts) over every row of
 * the table, made SQLite build an index of all of them first: 0.6 s of a
 * 1.2 s import of a 20 s postgres recording. The join remains for what
 * the pairs do not account for (any row of the join the pairs missed, or
 * no pairs at all): both update the same rows to the same class.
 *
 * Cost: one lookup per distinct kernel stack (a few hundred on a busy
 * server), one rowid update per classified wait, one UPDATE ... FROM pass
 * over the offcpu rows concerned. */
#include <stdlib.h>
#include <string.h>

#include "correlate_state.h"
#include "db/db.h"
#include "util/hashmap.h"
#include "wait_class.h"

#define MAX_FRAMES 64

/* The class of one kernel stack by its frames' names, WC_N if none tells. */
static enum wait_class classify_stack(sqlite3_stmt *frames, int64_t stack_id)
{
	const char *names[MAX_FRAMES];
	char *owned[MAX_FRAMES];
	enum wait_class wc;
	int n = 0;

	sqlite3_bind_int64(frames, 1, stack_id);
	while (n < MAX_FRAMES && sqlite3_step(frames) == SQLITE_ROW) {
		const unsigned char *name = sqlite3_column_text(frames, 0);
		owned[n] = name ? strdup((const char *)name) : NULL;
		names[n] = owned[n];
		n++;
	}
	sqlite3_reset(frames);
	wc = wait_class_of_kernel_stack(names, n);
	for (int i = 0; i < n; i++)
		free(owned[i]);
	return wc;
}

/* temp.kstack_classes and classes (kernel stack id -> class code): the
 * stacks of the waits to classify that tell a class. */
static int build_stack_classes(sqlite3 *db, struct hmap *classes)
{
	sqlite3_stmt *ids = db_prepare(db, "SELECT DISTINCT kstack_id FROM offcpu"
				       " WHERE class_source = 'state' AND kstack_id IS NOT NULL");
	sqlite3_stmt *frames = db_prepare(db, "SELECT f.name FROM stack_frames sf"
					  " JOIN frames f USING (frame_id)"
					  " WHERE sf.stack_id = ? ORDER BY sf.position");
	sqlite3_stmt *put = db_prepare(db, "INSERT INTO temp.kstack_classes VALUES (?, ?, ?)");
	int rc = ids && frames && put ? 0 : -1, step = SQLITE_DONE;

	while (rc == 0 && (step = sqlite3_step(ids)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(ids, 0);
		enum wait_class wc = classify_stack(frames, id);
		if (wc == WC_N)
			continue;
		sqlite3_bind_int64(put, 1, id);
		sqlite3_bind_int(put, 2, (int)wc);
		db_bind_text(put, 3, wait_class_name(wc));
		rc = db_run(put);
		if (rc == 0 && !hmap_upsert(classes, (uint64_t)id, 0, (uint64_t)wc, NULL))
			rc = -1;
	}
	if (rc == 0 && step != SQLITE_DONE) {
		db_report_error(db, "offcpu kernel stacks");
		rc = -1;
	}
	sqlite3_finalize(ids);
	sqlite3_finalize(frames);
	sqlite3_finalize(put);
	return rc;
}

/* Classifies the correlator's paired rows by rowid. 1 when they are all
 * the join would classify, 0 when the join must run too, -1 on error. */
static int classify_pairs(sqlite3 *db, const struct correlator *c, const struct hmap *classes)
{
	sqlite3_stmt *up;
	int64_t expected, done = 0;
	int rc = 0;

	if (!c || c->links_lost)
		return 0;
	expected = db_query_int(db, "SELECT count(*) FROM offcpu o"
				" JOIN temp.kstack_classes k USING (kstack_id)"
				" WHERE o.class_source = 'state'", -1);
	if (expected <= 0)
		return expected < 0 ? -1 : 1;
	up = db_prepare(db, "UPDATE thread_state_rows SET wait_class_code = ?"
			" WHERE rowid = ? AND tid = ? AND start_ts = ?"
			" AND state_code >= 2 AND syscall_nr IS NULL");
	if (!up)
		return -1;
	for (size_t i = 0; rc == 0 && i < c->nlinks; i++) {
		const struct wait_link *l = &c->links[i];
		const uint64_t *wc = hmap_find(classes, l->kstack, 0);

		if (!wc)
			continue;
		sqlite3_bind_int64(up, 1, (int64_t)*wc);
		sqlite3_bind_int64(up, 2, l->rowid);
		sqlite3_bind_int64(up, 3, l->tid);
		sqlite3_bind_int64(up, 4, (int64_t)l->start);
		rc = db_run(up);
		done += sqlite3_changes(db);
	}
	sqlite3_finalize(up);
	return rc < 0 ? -1 : done == expected;
}

int wait_stacks_classify(sqlite3 *db, const struct correlator *c)
{
	struct hmap classes;
	int paired = -1;

	hmap_init(&classes);
	if (db_exec(db, "CREATE TEMP TABLE kstack_classes (kstack_id INTEGER PRIMARY KEY,"
			" code INTEGER, name TEXT)") < 0 ||
	    build_stack_classes(db, &classes) < 0 ||
	    (paired = classify_pairs(db, c, &classes)) < 0)
		goto out;
	if (!paired &&
	    db_exec(db, "UPDATE thread_state_rows SET wait_class_code = m.code"
			" FROM (SELECT o.tid, o.ts - o.duration AS start, k.code"
			"       FROM offcpu o JOIN temp.kstack_classes k USING (kstack_id)"
			"       WHERE o.class_source = 'state') m"
			" WHERE thread_state_rows.tid = m.tid"
			"   AND thread_state_rows.start_ts = m.start"
			"   AND thread_state_rows.state_code >= 2"
			"   AND thread_state_rows.syscall_nr IS NULL") < 0) {
		paired = -1;
		goto out;
	}
	if (db_exec(db, "UPDATE offcpu SET wait_class = k.name, class_source = 'kstack'"
			" FROM temp.kstack_classes k"
			" WHERE offcpu.kstack_id = k.kstack_id AND offcpu.class_source = 'state'") < 0)
		paired = -1;
out:
	hmap_free(&classes);
	if (paired < 0)
		return -1;
	return db_exec(db, "DROP TABLE temp.kstack_classes");
}
