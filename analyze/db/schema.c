/* schema.c - DDL of the perfcap SQLite schema, version 2: the tables of
 * capture content, of event records and of correlations (the views are the
 * files of views/, embedded by schema_views.c). docs/schema.md describes every table; keep the two in
 * step. Times are nanoseconds (CLOCK_MONOTONIC unless noted); addresses are
 * stored as signed 64-bit integers (kernel addresses read negative). */
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

/* One table per event record type (format/SPEC.md 2.3), in capture order.
 * Derived columns are VIRTUAL: they cost nothing at import. */
static const char create_event_tables_sql[] =
	"CREATE TABLE switches (ts INTEGER, cpu INTEGER, prev_pid INTEGER,"
	"  prev_tid INTEGER, prev_state INTEGER, next_pid INTEGER, next_tid INTEGER,"
	"  prev_prio INTEGER, next_prio INTEGER);"
	"CREATE TABLE wakeups (ts INTEGER, pid INTEGER, tid INTEGER,"
	"  waker_pid INTEGER, waker_tid INTEGER, target_cpu INTEGER, new INTEGER,"
	"  context INTEGER, softirq INTEGER, irq_pid INTEGER, irq_tid INTEGER);"
	"CREATE TABLE forks (ts INTEGER, parent_pid INTEGER, parent_tid INTEGER,"
	"  child_pid INTEGER, child_tid INTEGER, is_thread INTEGER);"
	/* the sched source's gaps between windows (format 1.12) and the
	 * traced threads as each window opened (state_code as
	 * thread_state_rows') */
	"CREATE TABLE sched_gaps (start_ts INTEGER, end_ts INTEGER);"
	"CREATE TABLE sched_tasks (ts INTEGER, pid INTEGER, tid INTEGER, state_code INTEGER,"
	"  task_state INTEGER, cpu INTEGER, runtime_ns INTEGER, run_delay_ns INTEGER,"
	"  edge TEXT, nvcsw INTEGER);"
	"CREATE TABLE offcpu (offcpu_id INTEGER PRIMARY KEY, ts INTEGER,"
	"  duration INTEGER, pid INTEGER, tid INTEGER, state INTEGER,"
	"  ustack_id INTEGER, kstack_id INTEGER, waker_tid INTEGER,"
	"  wait_class TEXT, class_source TEXT, syscall_id INTEGER, syscall_nr INTEGER,"
	"  waker_pid INTEGER, waker_context INTEGER, waker_softirq INTEGER,"
	"  irq_pid INTEGER, irq_tid INTEGER);"
	/* syscalls: the rows are stored without an INTEGER PRIMARY KEY and
	 * the view names their rowid syscall_id. The staged copy into a
	 * table with one probes the b-tree for the key before each row
	 * (SQLite's transfer checks uniqueness when the table is not empty):
	 * 0.27 s of the INSERT thread for 1.3M rows, against 0.10 s for
	 * rowids it appends. Rows come in id order, so the appended rowid is
	 * the loader's syscall_id; lookups by syscall_id are rowid lookups. */
	"CREATE TABLE syscall_rows (ts INTEGER,"
	"  duration INTEGER, pid INTEGER, tid INTEGER, nr INTEGER, ret INTEGER,"
	"  arg0 INTEGER, arg1 INTEGER, arg2 INTEGER, ustack_id INTEGER, window_ts INTEGER,"
	"  io_calls INTEGER);"
	/* above --syscall-rate (format 1.14) calls are paired in windows;
	 * weight: how many calls of the whole recording one stands for
	 * (import/syscall_windows.c), times the thread's pace outside its
	 * window against inside (syscall_pace, import/syscall_pace.c). The
	 * joins are left out of a query that reads no weight (unique keys,
	 * no column used). */
	"CREATE TABLE syscall_windows (start_ts INTEGER PRIMARY KEY, open_ns INTEGER,"
	"  period_ns INTEGER, rate INTEGER);"
	"CREATE TABLE syscall_pace (window_ts INTEGER, tid INTEGER, pace REAL,"
	"  io_window INTEGER, io_period INTEGER, PRIMARY KEY (window_ts, tid)) WITHOUT ROWID;"
	"CREATE VIEW syscalls AS SELECT s.rowid AS syscall_id, s.ts, s.duration, s.pid,"
	"  s.tid, s.nr, s.ret, s.arg0, s.arg1, s.arg2, s.ustack_id,"
	"  CASE WHEN w.open_ns > 0 THEN CAST(w.period_ns AS REAL) /"
	"    max(w.open_ns - s.duration, w.open_ns / 4) * coalesce(p.pace, 1.0)"
	"    ELSE 1.0 END AS weight"
	"  FROM syscall_rows s LEFT JOIN syscall_windows w ON w.start_ts = s.window_ts"
	"  LEFT JOIN syscall_pace p ON p.window_ts = s.window_ts AND p.tid = s.tid;"
	"CREATE TABLE syscall_names (nr INTEGER PRIMARY KEY, name TEXT,"
	"  family TEXT, fd_arg INTEGER, count_arg INTEGER, io TEXT);"
	"CREATE TABLE block_io (ts INTEGER, pid INTEGER, tid INTEGER, dev INTEGER,"
	"  op INTEGER, sector INTEGER, bytes INTEGER, queue_ns INTEGER,"
	"  service_ns INTEGER, error INTEGER,"
	"  dev_major INTEGER GENERATED ALWAYS AS (dev >> 20) VIRTUAL,"
	"  dev_minor INTEGER GENERATED ALWAYS AS (dev & 1048575) VIRTUAL,"
	"  dev_name TEXT GENERATED ALWAYS AS ((dev >> 20) || ':' || (dev & 1048575)) VIRTUAL,"
	"  op_name TEXT GENERATED ALWAYS AS (CASE op & 255 WHEN 0 THEN 'read'"
	"    WHEN 1 THEN 'write' WHEN 2 THEN 'flush' WHEN 3 THEN 'discard'"
	"    WHEN 5 THEN 'secure_erase' WHEN 9 THEN 'write_zeroes' ELSE 'other' END) VIRTUAL);"
	"CREATE TABLE thread_metrics (window_start INTEGER, window_end INTEGER,"
	"  pid INTEGER, tid INTEGER, class TEXT, kind TEXT, key INTEGER, calls INTEGER,"
	"  errors INTEGER, total_ns INTEGER, bytes INTEGER,"
	"  h0 INTEGER, h1 INTEGER, h2 INTEGER, h3 INTEGER, h4 INTEGER, h5 INTEGER,"
	"  h6 INTEGER, h7 INTEGER, h8 INTEGER, h9 INTEGER, h10 INTEGER, h11 INTEGER,"
	"  h12 INTEGER, h13 INTEGER, h14 INTEGER, h15 INTEGER, h16 INTEGER, h17 INTEGER,"
	"  h18 INTEGER, h19 INTEGER, h20 INTEGER, h21 INTEGER, h22 INTEGER, h23 INTEGER,"
	"  h24 INTEGER, h25 INTEGER, h26 INTEGER, h27 INTEGER, h28 INTEGER, h29 INTEGER,"
	"  h30 INTEGER, h31 INTEGER, scale REAL, time_scale REAL);"
	"CREATE TABLE sockets (ts INTEGER, pid INTEGER, tid INTEGER, fd INTEGER,"
	"  origin TEXT, family INTEGER, protocol INTEGER, cookie INTEGER,"
	"  saddr TEXT, sport INTEGER, daddr TEXT, dport INTEGER);"
	/* SOCKET records with flag SNAPSHOT (format 1.4); role set by
	 * import/connections.c once every row is in */
	"CREATE TABLE connections (ts INTEGER, pid INTEGER, fd INTEGER, family INTEGER,"
	"  protocol INTEGER, laddr TEXT, lport INTEGER, raddr TEXT, rport INTEGER,"
	"  state INTEGER, peer INTEGER, inode INTEGER, role TEXT);"
	"CREATE TABLE tcp_states (ts INTEGER, pid INTEGER, tid INTEGER,"
	"  cookie INTEGER, family INTEGER, saddr TEXT, sport INTEGER, daddr TEXT,"
	"  dport INTEGER, oldstate INTEGER, newstate INTEGER);"
	"CREATE TABLE tcp_retransmits (ts INTEGER, pid INTEGER, tid INTEGER,"
	"  cookie INTEGER, family INTEGER, saddr TEXT, sport INTEGER, daddr TEXT,"
	"  dport INTEGER, state INTEGER);"
	"CREATE TABLE tcp_state_names (state INTEGER PRIMARY KEY, name TEXT);"
	"INSERT INTO tcp_state_names VALUES (1,'ESTABLISHED'),(2,'SYN_SENT'),"
	"  (3,'SYN_RECV'),(4,'FIN_WAIT1'),(5,'FIN_WAIT2'),(6,'TIME_WAIT'),(7,'CLOSE'),"
	"  (8,'CLOSE_WAIT'),(9,'LAST_ACK'),(10,'LISTEN'),(11,'CLOSING'),"
	"  (12,'NEW_SYN_RECV');"
	"CREATE TABLE kernel_locks (ts INTEGER, duration INTEGER, pid INTEGER,"
	"  tid INTEGER, lock_addr INTEGER, flags INTEGER, ret INTEGER, kstack_id INTEGER);"
	"CREATE TABLE user_mutexes (ts INTEGER, duration INTEGER, pid INTEGER,"
	"  tid INTEGER, addr INTEGER, ustack_id INTEGER);"
	"CREATE TABLE page_faults (ts INTEGER, pid INTEGER, tid INTEGER,"
	"  addr INTEGER, ip INTEGER, error_code INTEGER, weight INTEGER);"
	"CREATE TABLE probe_hits (ts INTEGER, duration INTEGER, pid INTEGER, tid INTEGER,"
	"  probe_id INTEGER, arg0 INTEGER, arg1 INTEGER, arg2 INTEGER, ustack_id INTEGER);"
	/* one row per user probe of the recording, from META probe.N.* and the
	 * kernel's exact counts in STATS probe.N.* (import/load_probes.c) */
	"CREATE TABLE probes (probe_id INTEGER PRIMARY KEY, kind TEXT, spec TEXT,"
	"  file TEXT, name TEXT, args TEXT, path TEXT, build_id TEXT, offset INTEGER,"
	"  attached TEXT, failed TEXT, hits INTEGER, calls INTEGER, total_ns INTEGER,"
	"  below_min INTEGER, unmatched INTEGER, too_deep INTEGER, hist TEXT,"
	"  records INTEGER);"
	/* the language runtime of each recognized process (import/load_runtimes.c) */
	"CREATE TABLE process_runtimes (pid INTEGER PRIMARY KEY, runtime TEXT,"
	"  version TEXT, confidence INTEGER, evidence TEXT, advice TEXT);";

/* Correlations computed at import (analyze/correlate/correlate.c and friends).
 * thread_state_rows stores small codes (enum state_kind, enum
 * runnable_reason, enum wait_class); the view thread_states
 * (views/thread_states.sql) decodes them through the lookup tables
 * state_kinds, runnable_reasons and wait_classes, which the importer fills
 * from those enums (correlate/state_codes.c): rows are smaller and cheaper
 * to write. */
static const char create_derived_tables_sql[] =
	"CREATE TABLE thread_state_rows (tid INTEGER, pid INTEGER, state_code INTEGER,"
	"  start_ts INTEGER, duration INTEGER, cpu INTEGER, reason_code INTEGER,"
	"  waker_tid INTEGER, waker_pid INTEGER, wait_class_code INTEGER,"
	"  syscall_nr INTEGER, syscall_id INTEGER, partial INTEGER);"
	"CREATE TABLE state_kinds (code INTEGER PRIMARY KEY, name TEXT);"
	"CREATE TABLE runnable_reasons (code INTEGER PRIMARY KEY, name TEXT);"
	"CREATE TABLE wait_classes (code INTEGER PRIMARY KEY, name TEXT);"
	"CREATE TABLE thread_time_shares (window_start INTEGER, window_end INTEGER,"
	"  pid INTEGER, tid INTEGER, running_ns INTEGER, runnable_ns INTEGER,"
	"  io_wait_ns INTEGER, sleep_ns INTEGER, other_wait_ns INTEGER,"
	"  futex_wait_ns INTEGER, poll_wait_ns INTEGER, futex_waits INTEGER,"
	"  futex_wakes INTEGER, poll_waits INTEGER, syscalls INTEGER,"
	"  syscall_ns INTEGER, vfs_read_ns INTEGER, vfs_write_ns INTEGER,"
	"  net_recv_ns INTEGER, net_send_ns INTEGER, block_requests INTEGER,"
	"  block_bytes INTEGER, block_queue_ns INTEGER, block_service_ns INTEGER,"
	"  cpu_samples INTEGER);"
	/* requests.c fills these two once the events are in (docs/schema.md) */
	"CREATE TABLE requests (pid INTEGER, fd INTEGER, conn INTEGER, cookie INTEGER,"
	"  origin TEXT, conn_ts INTEGER, request INTEGER, tids TEXT, pickup_tid INTEGER,"
	"  start_ts INTEGER, first_write_ts INTEGER, end_ts INTEGER, service_ns INTEGER,"
	"  bytes_in INTEGER, bytes_out INTEGER, reads INTEGER, writes INTEGER,"
	"  lower_ts INTEGER, ready_ts INTEGER, ready_source TEXT, queue_ns INTEGER,"
	"  sojourn_ns INTEGER, window_ts INTEGER);"
	/* the req source's windows (format 1.10, kernel_requests.h) */
	"CREATE TABLE request_windows (start_ts INTEGER PRIMARY KEY, open_ns INTEGER,"
	"  period_ns INTEGER, started INTEGER, followed INTEGER, weight REAL, pace REAL,"
	"  gap_conns INTEGER, gap_bytes INTEGER, snap_start INTEGER, snap_end INTEGER);"
	/* (format 1.15) where each connection's byte stream was as a req window
	 * opened (1.16: also at its close and the recording's end; kind NULL:
	 * a 1.15 mark) (import/request_pace.c) */
	"CREATE TABLE request_marks (ts INTEGER, cookie INTEGER, conn_ts INTEGER, pid INTEGER,"
	"  copied INTEGER, read INTEGER, kind TEXT);"
	/* the request passes' per-process sums (correlate/request_totals.h) */
	"CREATE TABLE request_totals (pid INTEGER, queued INTEGER, queue_ns INTEGER,"
	"  service_ns INTEGER, services INTEGER, on_arrival INTEGER, min_ready_ts INTEGER,"
	"  max_ready_ts INTEGER, requests_rows INTEGER);"
	"CREATE TABLE request_workers (pid INTEGER, tid INTEGER, first_start_ts INTEGER,"
	"  first_fd INTEGER, first_seq INTEGER);"
	/* pauses of runtimes' collectors from their GC begin/end probes
	 * (import/load_gc.c) */
	"CREATE TABLE gc_pauses (pid INTEGER, tid INTEGER, start_ts INTEGER, end_ts INTEGER,"
	"  duration INTEGER, runtime TEXT, source TEXT);"
	"CREATE TABLE pool_utilisation (pid INTEGER, window_start INTEGER,"
	"  window_end INTEGER, workers INTEGER, requests INTEGER, busy_avg REAL,"
	"  utilisation REAL, queue_depth_avg REAL, queue_depth_max INTEGER,"
	"  queue_mean_ns INTEGER);";

/* Only indexes the reports need, on the small tables: every index on a big
 * table (samples, frames) costs import time; docs/schema.md suggests the
 * ones to add for ad-hoc queries. stack_frames needs none: it is clustered
 * by (stack_id, position) and filled in that order. */
static const char create_indexes_sql[] =
	"CREATE INDEX maps_by_pid ON maps (pid, start_addr);"
	"CREATE INDEX processes_by_pid ON processes (pid, ts);"
	"CREATE INDEX threads_by_tid ON threads (tid, ts);"
	"CREATE INDEX sockets_by_fd ON sockets (pid, fd, ts);"
	"CREATE INDEX gc_pauses_by_pid ON gc_pauses (pid, start_ts);";
/* connections_by_pid (pid, lport) is made by import/connections.c, which
 * needs it to set the roles. requests has no index: one by start (built
 * by earlier imports) took the import 0.15 s for 543k requests and 1.9 s for a
 * 60 s default recording's 4.8M, and bought nothing the readers use.
 * Their aggregates scan the table; a --from/--to report's statements ran
 * faster scanning it than walking the index and looking each row up (0.66
 * against 0.80 s on the redis capture, 3.6 against 4.2 s on the 60 s
 * one); only a query of the request views in their start order pays a
 * sort instead (SELECT * FROM request_spans of 4.8M rows: 9.7 against
 * 7.8 s). docs/perfcap-analyze.md, PERFORMANCE. */

int schema_create_tables(sqlite3 *db)
{
	char version_sql[64];

	snprintf(version_sql, sizeof(version_sql), "PRAGMA user_version=%d;",
		 SCHEMA_VERSION);
	if (db_exec(db, create_tables_sql) < 0 || db_exec(db, create_event_tables_sql) < 0 ||
	    db_exec(db, create_derived_tables_sql) < 0 || schema_create_views(db) < 0 ||
	    db_exec(db, version_sql) < 0)
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
