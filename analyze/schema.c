/* schema.c - DDL of the perfcap SQLite schema, version 1.
 * docs/schema.md describes every table; keep the two in step. Times are
 * nanoseconds (CLOCK_MONOTONIC unless noted); addresses are stored as
 * signed 64-bit integers (kernel addresses read negative). */
#include <stdio.h>

#include "db.h"
#include "schema.h"

static const char create_tables_sql[] =
	"CREATE TABLE schema_info (key TEXT PRIMARY KEY, value);"
	"CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);"
	"CREATE TABLE stats (chunk TEXT, key TEXT, value NUMERIC,"
	"  PRIMARY KEY (chunk, key));"
	"CREATE TABLE chunks (chunk_id INTEGER PRIMARY KEY, seq INTEGER,"
	"  offset INTEGER, type INTEGER, type_name TEXT, version INTEGER,"
	"  payload_size INTEGER, raw_size INTEGER, count INTEGER,"
	"  t_start INTEGER, t_end INTEGER);"
	"CREATE TABLE processes (ts INTEGER, pid INTEGER, ppid INTEGER,"
	"  start_ns INTEGER, comm TEXT, exe TEXT, cmdline TEXT);"
	"CREATE TABLE threads (ts INTEGER, pid INTEGER, tid INTEGER, comm TEXT);"
	"CREATE TABLE process_events (ts INTEGER, kind TEXT, pid INTEGER,"
	"  tid INTEGER, comm TEXT);"
	"CREATE TABLE maps (map_id INTEGER PRIMARY KEY, ts INTEGER, pid INTEGER,"
	"  start_addr INTEGER, end_addr INTEGER, pgoff INTEGER, prot INTEGER,"
	"  inode INTEGER, dev_major INTEGER, dev_minor INTEGER, build_id TEXT,"
	"  path TEXT);"
	"CREATE TABLE modules (module_id INTEGER PRIMARY KEY, kind TEXT,"
	"  path TEXT, build_id TEXT, e_type INTEGER, nsegs INTEGER, nsyms INTEGER);"
	"CREATE TABLE stacks (stack_id INTEGER PRIMARY KEY, kind TEXT,"
	"  pid INTEGER, depth INTEGER, flags INTEGER, nframes INTEGER,"
	"  probably_truncated INTEGER);"
	"CREATE TABLE frames (frame_id INTEGER PRIMARY KEY, kind TEXT,"
	"  module TEXT, module_offset INTEGER, address INTEGER, function TEXT,"
	"  sym_offset INTEGER, file TEXT, line INTEGER, inlined INTEGER,"
	"  source TEXT, mode TEXT, name TEXT NOT NULL);"
	"CREATE TABLE stack_frames (stack_id INTEGER, position INTEGER,"
	"  frame_id INTEGER, PRIMARY KEY (stack_id, position)) WITHOUT ROWID;"
	"CREATE TABLE samples (ts INTEGER, pid INTEGER, tid INTEGER,"
	"  cpu INTEGER, ustack_id INTEGER, kstack_id INTEGER);"
	"CREATE TABLE sample_counts (pid INTEGER, tid INTEGER,"
	"  ustack_id INTEGER, kstack_id INTEGER, count INTEGER);"
	"CREATE TABLE quality (source TEXT, key TEXT, value,"
	"  PRIMARY KEY (source, key));";

/* Only indexes the reports need, on the small tables: every index on a big
 * table (samples, frames) costs import time; docs/schema.md suggests the
 * ones to add for ad-hoc queries. stack_frames needs none: it is clustered
 * by (stack_id, position) and filled in that order. */
static const char create_indexes_sql[] =
	"CREATE INDEX maps_by_pid ON maps (pid, start_addr);"
	"CREATE INDEX processes_by_pid ON processes (pid, ts);"
	"CREATE INDEX threads_by_tid ON threads (tid, ts);";

int schema_create_tables(sqlite3 *db)
{
	char version_sql[64];

	snprintf(version_sql, sizeof(version_sql), "PRAGMA user_version=%d;",
		 SCHEMA_VERSION);
	if (db_exec(db, create_tables_sql) < 0 || db_exec(db, version_sql) < 0)
		return -1;
	return 0;
}

int schema_create_indexes(sqlite3 *db)
{
	return db_exec(db, create_indexes_sql);
}

int schema_check(sqlite3 *db, char *errbuf, size_t errlen)
{
	int64_t version = db_query_int(db, "PRAGMA user_version", -1);
	int64_t tables = db_query_int(db,
		"SELECT count(*) FROM sqlite_master WHERE type='table'"
		" AND name='schema_info'", 0);

	if (tables != 1 || version <= 0) {
		snprintf(errbuf, errlen, "not a perfcap database");
		return -1;
	}
	if (version != SCHEMA_VERSION) {
		snprintf(errbuf, errlen,
			 "database schema version %lld is not supported (this is %d)",
			 (long long)version, SCHEMA_VERSION);
		return -1;
	}
	return 0;
}
