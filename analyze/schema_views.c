/* schema_views.c - the views of the perfcap schema: correlations that are
 * cheap to compute at query time from the tables the loader fills
 * (syscall_intervals, thread_states, runq_latency, offcpu_intervals) and
 * the per-source
 * data-quality summary (data_quality). docs/schema.md documents each. */
#include <stddef.h>

#include "db.h"
#include "schema.h"


static const char syscall_intervals_sql[] =
	"CREATE VIEW syscall_intervals AS"
	" SELECT s.syscall_id, s.ts AS start_ts, s.ts + s.duration AS end_ts,"
	"  s.duration, s.pid, s.tid, s.nr,"
	"  COALESCE(n.name, 'syscall_' || s.nr) AS name, n.family,"
	"  CASE WHEN n.fd_arg THEN (((s.arg0 & 4294967295) | -4294967296 *"
	"    ((s.arg0 >> 31) & 1))) END AS fd,"
	"  n.io,"
	"  CASE WHEN n.count_arg THEN s.arg2 END AS bytes_requested,"
	"  CASE WHEN n.io IS NOT NULL AND s.ret >= 0 THEN s.ret END AS bytes_transferred,"
	"  s.ret,"
	"  CASE WHEN s.ret BETWEEN -4095 AND -1 THEN -s.ret END AS errno,"
	"  s.arg0, s.arg1, s.arg2, s.ustack_id"
	" FROM syscalls s LEFT JOIN syscall_names n USING (nr);";

/* The codes are those of enum state_kind, enum runnable_reason and enum
 * wait_class (correlate_state.h, wait_class.h). */
static const char thread_states_sql[] =
	"CREATE VIEW thread_states AS"
	" SELECT tid, pid,"
	"  CASE state_code WHEN 0 THEN 'running' WHEN 1 THEN 'runnable' WHEN 2 THEN 'io'"
	"   WHEN 3 THEN 'sleep' ELSE 'blocked' END AS state,"
	"  start_ts, start_ts + duration AS end_ts, duration, cpu,"
	"  CASE reason_code WHEN 1 THEN 'wakeup' WHEN 2 THEN 'preempted'"
	"   WHEN 3 THEN 'new' END AS reason,"
	"  waker_tid, waker_pid,"
	"  CASE wait_class_code WHEN 0 THEN 'preempted' WHEN 1 THEN 'block_io'"
	"   WHEN 2 THEN 'futex' WHEN 3 THEN 'poll' WHEN 4 THEN 'sleep' WHEN 5 THEN 'net'"
	"   WHEN 6 THEN 'other' END AS wait_class,"
	"  syscall_nr, syscall_id, partial"
	" FROM thread_state_rows;";

static const char runq_latency_sql[] =
	"CREATE VIEW runq_latency AS"
	" SELECT tid, pid, start_ts AS ready_ts, end_ts AS switch_in_ts,"
	"  duration AS latency, cpu, reason, waker_tid, waker_pid"
	" FROM thread_states WHERE state = 'runnable' AND partial = 0;";

static const char offcpu_intervals_sql[] =
	"CREATE VIEW offcpu_intervals AS"
	" SELECT o.offcpu_id, o.ts - o.duration AS start_ts, o.ts AS end_ts,"
	"  o.duration, o.pid, o.tid, o.state, o.wait_class, o.class_source,"
	"  o.syscall_id, o.syscall_nr, n.name AS syscall, o.waker_tid,"
	"  o.ustack_id, o.kstack_id,"
	"  (SELECT f.name FROM stack_frames sf JOIN frames f USING (frame_id)"
	"   WHERE sf.stack_id = o.kstack_id AND sf.position = 0) AS kernel_function,"
	"  (SELECT f.name FROM stack_frames sf JOIN frames f USING (frame_id)"
	"   WHERE sf.stack_id = o.ustack_id AND sf.position = 0) AS user_function"
	" FROM offcpu o LEFT JOIN syscall_names n ON n.nr = o.syscall_nr;";

/* Recorder STATS "<source>.<what>" and loader quality rows side by side:
 * one row per event source. */
static const char data_quality_sql[] =
	"CREATE VIEW data_quality AS"
	" WITH kv AS ("
	"   SELECT substr(key, 1, instr(key, '.') - 1) AS source,"
	"          substr(key, instr(key, '.') + 1) AS k, value"
	"   FROM stats WHERE chunk = 'stats' AND instr(key, '.') > 1"
	"   UNION ALL SELECT source, 'imported.' || key, value FROM quality),"
	" src AS (SELECT DISTINCT source FROM kv WHERE k IN ('events', 'lost.kernel',"
	"   'lost.user', 'sampled_out', 'rate_capped', 'stack_errors', 'imported.records')),"
	" q AS (SELECT src.source,"
	"   (SELECT value FROM kv WHERE kv.source = src.source AND k = 'events') AS recorded,"
	"   COALESCE((SELECT value FROM kv WHERE kv.source = src.source"
	"     AND k = 'imported.records'), 0) AS imported,"
	"   COALESCE((SELECT value FROM kv WHERE kv.source = src.source"
	"     AND k = 'lost.kernel'), 0) AS lost_kernel,"
	"   COALESCE((SELECT value FROM kv WHERE kv.source = src.source"
	"     AND k = 'lost.user'), 0) AS lost_user,"
	"   COALESCE((SELECT value FROM kv WHERE kv.source = src.source"
	"     AND k = 'sampled_out'), 0) AS sampled_out,"
	"   COALESCE((SELECT value FROM kv WHERE kv.source = src.source"
	"     AND k = 'rate_capped'), 0) AS rate_capped,"
	"   COALESCE((SELECT value FROM kv WHERE kv.source = src.source"
	"     AND k = 'stack_errors'), 0) AS stack_errors,"
	"   COALESCE((SELECT sum(value) FROM kv WHERE kv.source = src.source"
	"     AND k LIKE 'imported.%unmatched%'), 0) AS unmatched,"
	"   COALESCE((SELECT sum(value) FROM kv WHERE kv.source = src.source"
	"     AND k LIKE 'imported.%expired%'), 0) AS expired,"
	"   COALESCE((SELECT value FROM kv WHERE kv.source = src.source"
	"     AND k = 'imported.late'), 0) AS late"
	"   FROM src)"
	" SELECT *, CASE WHEN imported + lost_kernel + lost_user > 0"
	"   THEN round(1.0 * (lost_kernel + lost_user) /"
	"     (imported + lost_kernel + lost_user), 6) END AS lost_share"
	" FROM q ORDER BY source;";

int schema_create_views(sqlite3 *db)
{
	const char *all[] = { syscall_intervals_sql, thread_states_sql, runq_latency_sql,
			      offcpu_intervals_sql, data_quality_sql };

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (db_exec(db, all[i]) < 0)
			return -1;
	return 0;
}
