/* selection.c - the samples a report looks at: the rows of sample_counts
 * matching --pid and --comm (a process's or a thread's name), read once
 * into memory so every section works on the same rows. */
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "report.h"

static const char select_sql[] =
	"SELECT pid, tid, ustack_id, kstack_id, count FROM sample_counts"
	" WHERE (?1 IS NULL OR pid = ?1)"
	"   AND (?2 IS NULL"
	"        OR pid IN (SELECT pid FROM processes WHERE comm = ?2)"
	"        OR tid IN (SELECT tid FROM threads WHERE comm = ?2))";

static int64_t column_stack_id(sqlite3_stmt *st, int col)
{
	return sqlite3_column_type(st, col) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, col);
}

static int append_group(struct selection *sel, size_t *cap, sqlite3_stmt *st)
{
	struct selected_group *g;
	int64_t count = sqlite3_column_int64(st, 4);

	if (sel->len == *cap) {
		*cap = *cap ? *cap * 2 : 4096;
		struct selected_group *grown = realloc(sel->groups, *cap * sizeof(*grown));
		if (!grown)
			return -1;
		sel->groups = grown;
	}
	g = &sel->groups[sel->len++];
	g->pid = (uint32_t)sqlite3_column_int64(st, 0);
	g->tid = (uint32_t)sqlite3_column_int64(st, 1);
	g->ustack = column_stack_id(st, 2);
	g->kstack = column_stack_id(st, 3);
	g->count = count > 0 ? (uint64_t)count : 0;
	sel->samples += g->count;
	return 0;
}

int selection_load(sqlite3 *db, const struct report_options *opts, struct selection *sel)
{
	sqlite3_stmt *st = db_prepare(db, select_sql);
	size_t cap = 0;
	int rc = 0, step;

	memset(sel, 0, sizeof(*sel));
	if (!st)
		return -1;
	if (opts->has_pid)
		sqlite3_bind_int64(st, 1, opts->pid);
	db_bind_text(st, 2, opts->comm);
	while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW)
		rc = append_group(sel, &cap, st);
	if (rc == 0 && step != SQLITE_DONE) {
		db_report_error(db, "sample_counts");
		rc = -1;
	}
	sqlite3_finalize(st);
	return rc;
}

void selection_free(struct selection *sel)
{
	free(sel->groups);
	memset(sel, 0, sizeof(*sel));
}
