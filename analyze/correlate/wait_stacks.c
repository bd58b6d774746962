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
 * Cost: one lookup per distinct kernel stack (a few hundred on a busy
 * server) and two UPDATE ... FROM passes over the rows concerned. */
#include <stdlib.h>
#include <string.h>

#include "correlate.h"
#include "db/db.h"
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

static int build_stack_classes(sqlite3 *db)
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

int wait_stacks_classify(sqlite3 *db)
{
	if (db_exec(db, "CREATE TEMP TABLE kstack_classes (kstack_id INTEGER PRIMARY KEY,"
			" code INTEGER, name TEXT)") < 0)
		return -1;
	if (build_stack_classes(db) < 0 ||
	    db_exec(db, "UPDATE thread_state_rows SET wait_class_code = m.code"
			" FROM (SELECT o.tid, o.ts - o.duration AS start, k.code"
			"       FROM offcpu o JOIN temp.kstack_classes k USING (kstack_id)"
			"       WHERE o.class_source = 'state') m"
			" WHERE thread_state_rows.tid = m.tid"
			"   AND thread_state_rows.start_ts = m.start"
			"   AND thread_state_rows.state_code >= 2"
			"   AND thread_state_rows.syscall_nr IS NULL") < 0 ||
	    db_exec(db, "UPDATE offcpu SET wait_class = k.name, class_source = 'kstack'"
			" FROM temp.kstack_classes k"
			" WHERE offcpu.kstack_id = k.kstack_id AND offcpu.class_source = 'state'") < 0)
		return -1;
	return db_exec(db, "DROP TABLE temp.kstack_classes");
}
