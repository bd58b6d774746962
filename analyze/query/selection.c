/* selection.c - the samples a report looks at: the rows of sample_counts
 * matching --pid, --tid and --comm (a process's or a thread's name), or,
 * with a time window, the samples inside it grouped the same way; read
 * once into memory so every section works on the same rows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "selection.h"

static const char counts_filter_sql[] =
	"SELECT pid, tid, ustack_id, kstack_id, count FROM sample_counts"
	" WHERE (:pid IS NULL OR pid = :pid) AND (:tid IS NULL OR tid = :tid)"
	"   AND (:comm IS NULL"
	"        OR pid IN (SELECT pid FROM processes WHERE comm = :comm)"
	"        OR tid IN (SELECT tid FROM threads WHERE comm = :comm))";

static sqlite3_stmt *prepare_select(sqlite3 *db, const struct report_scope *scope)
{
	char where[1024], sql[1400];

	if (!scope->windowed)
		return db_prepare(db, counts_filter_sql);
	snprintf(sql, sizeof(sql),
		 "SELECT pid, tid, ustack_id, kstack_id, count(*) FROM samples WHERE %s"
		 " GROUP BY pid, tid, ustack_id, kstack_id",
		 report_scope_sql(where, sizeof(where), "pid", "tid", "ts", "ts"));
	return db_prepare(db, sql);
}

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

int selection_load(sqlite3 *db, const struct report_scope *scope, struct selection *sel)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc = 0, step = SQLITE_DONE;

	memset(sel, 0, sizeof(*sel));
	st = prepare_select(db, scope);
	if (!st)
		return -1;
	report_scope_bind(st, scope);
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
