/* state_codes.c - fills the lookup tables that decode the codes of
 * thread_state_rows (state_kinds, runnable_reasons, wait_classes) from
 * the enums of correlate_state.h and wait_class.h, so the correlator that
 * writes the codes and the view thread_states that reads them
 * (db/views/thread_states.sql) share one definition. */
#include "correlate.h"
#include "correlate_state.h"
#include "db/db.h"
#include "wait_class.h"

/* ST_DEAD has no interval, so no name: the view reads unknown codes as
 * "blocked". */
static const char *const state_names[] = {
	[ST_RUNNING] = "running", [ST_RUNNABLE] = "runnable", [ST_IO] = "io",
	[ST_SLEEP] = "sleep", [ST_BLOCKED] = "blocked",
};

/* RR_NONE is stored as NULL. */
static const char *const reason_names[] = {
	[RR_WAKEUP] = "wakeup", [RR_PREEMPTED] = "preempted", [RR_NEW] = "new",
};

/* Inserts (code, name) for every named code of names into table. */
static int store_names(sqlite3 *db, const char *insert_sql, const char *const *names,
		       int n)
{
	sqlite3_stmt *st = db_prepare(db, insert_sql);
	int rc = st ? 0 : -1;

	for (int code = 0; rc == 0 && code < n; code++) {
		if (!names[code])
			continue;
		sqlite3_bind_int(st, 1, code);
		db_bind_text(st, 2, names[code]);
		rc = db_run(st);
	}
	sqlite3_finalize(st);
	return rc;
}

int state_codes_store(sqlite3 *db)
{
	const char *wait_names[WC_N];

	for (int wc = WC_PREEMPTED; wc < WC_N; wc++)
		wait_names[wc] = wait_class_name((enum wait_class)wc);
	if (store_names(db, "INSERT INTO state_kinds (code, name) VALUES (?, ?)", state_names,
			(int)(sizeof(state_names) / sizeof(state_names[0]))) < 0 ||
	    store_names(db, "INSERT INTO runnable_reasons (code, name) VALUES (?, ?)",
			reason_names, (int)(sizeof(reason_names) / sizeof(reason_names[0]))) < 0 ||
	    store_names(db, "INSERT INTO wait_classes (code, name) VALUES (?, ?)", wait_names,
			WC_N) < 0)
		return -1;
	return 0;
}
