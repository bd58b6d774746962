/* diff_sql.h - SQL shared by the diff loaders (diff_load.c,
 * diff_load_locks.c): names of threads and processes, function identity,
 * and quiet preparation of queries on tables older schemas lack. */
#ifndef ANALYZE_DIFF_SQL_H
#define ANALYZE_DIFF_SQL_H

#include <sqlite3.h>

/* pid and tid must be qualified (s.pid): inside the subqueries a bare
 * name would mean the threads table's own column. */
/* The latest name of a thread, else of its process: the same rule as
 * names.h, in SQL so queries can group by it. */
#define COMM_OF(pid, tid) \
	"coalesce((SELECT comm FROM threads t WHERE t.tid = " tid " AND t.pid = " pid \
	" ORDER BY t.ts DESC, t.rowid DESC LIMIT 1), (SELECT comm FROM processes p WHERE " \
	"p.pid = " pid " ORDER BY p.ts DESC, p.rowid DESC LIMIT 1), '[pid ' || " pid " || ']')"

/* A process's name: the base name of its executable (stable across
 * runs; comm can be caught before exec), else its latest comm. */
#define PROCESS_COMM(pid) \
	"coalesce((SELECT replace(p.exe, rtrim(p.exe, replace(p.exe, '/', '')), '') FROM " \
	"processes p WHERE p.pid = " pid " AND p.exe <> '' ORDER BY p.ts DESC, p.rowid DESC " \
	"LIMIT 1), (SELECT comm FROM threads t WHERE t.tid = " pid " ORDER BY t.ts DESC, " \
	"t.rowid DESC LIMIT 1), '[pid ' || " pid " || ']')"

/* Each calling thread's name, computed once per thread, not per call. */
#define THREAD_NAMES(table) \
	"names AS MATERIALIZED (SELECT s.pid, s.tid, " COMM_OF("s.pid", "s.tid") " AS comm" \
	" FROM (SELECT DISTINCT pid, tid FROM " table ") s)"

/* Function identity: name, the source file's base name when known (a
 * static function of the same name in two files stays two functions),
 * " [k]" for kernel functions. */
#define FUNCTION_KEY \
	"f.name || CASE WHEN f.file IS NULL THEN '' ELSE ' (' || " \
	"substr(f.file, length(rtrim(f.file, replace(f.file, '/', ''))) + 1) || ')' END" \
	" || CASE WHEN f.kind = 'kernel' THEN ' [k]' ELSE '' END"

/* Prepares sql quietly: NULL when a table or view is missing (an older
 * schema), so that series is simply empty. */
sqlite3_stmt *diff_try_prepare(sqlite3 *db, const char *sql);

/* Lock waits (futex_calls, user_mutexes, kernel_locks) into run->latency,
 * keyed by the function that waited (diff_load_locks.c). 0 or -1. */
struct diff_run;
int diff_load_locks(struct diff_run *run, sqlite3 *db);

#endif /* ANALYZE_DIFF_SQL_H */
