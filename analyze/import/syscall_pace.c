/* syscall_pace.c - how much faster each thread went outside its syscall
 * windows than inside them (table syscall_pace, format 1.15).
 *
 * A window's calls are weighed by time: a second over the part of the
 * window a call could start in (syscall_windows.c). That assumes the
 * thread went as fast inside the window as in the rest of its second. It
 * did not: inside, every system call on the host passes through the
 * programs, and a server and its clients slow down. On Debian's redis
 * under redis-benchmark on this project's 2-CPU machines, windows ran at
 * 0.76-0.87 of their second's rate, and the weighted reads came out
 * 12-15% below the commands redis counted.
 *
 * The kernel counts every task's read- and write-type calls whether traced
 * or not (task I/O accounting: /proc/PID/io syscr and syscw), and each
 * recorded call carries that count at its exit (SYSCALL io_calls). For a
 * thread and a window, the count's rate between its first and last call
 * in the window is the pace inside; its rate from that first call to the
 * thread's first call at least a period after the window's start (a
 * window's or a second followed whole) is the pace over the period. Their
 * ratio multiplies the window's weights: a ratio estimator, exact for the
 * read and write calls themselves and the best guess the kernel offers
 * for the thread's others. It also follows a load that stops or starts
 * within the second, which time alone cannot.
 *
 * A thread gets no pace, and keeps the time weights, when its count moved
 * fewer than PACE_MIN_IO times inside the window (its rate there would be
 * known to worse than about 10%), when it made no call in the next
 * period (the span would not be its second), or when the kernel has no
 * such accounting (io_calls 0, NULL in syscall_rows).
 */
#include "db/db.h"
#include "syscall_pace.h"

#define PACE_MIN_IO "100"

static const char pace_sql[] =
	"CREATE INDEX syscall_rows_pace ON syscall_rows (tid, ts) WHERE io_calls IS NOT NULL;"
	"INSERT INTO syscall_pace (window_ts, tid, pace, io_window, io_period)"
	" SELECT g.wts, g.tid,"
	"   ((e.io_calls - g.a_f) * 1.0 / (e.ts + e.duration - g.t_f)) /"
	"   ((g.a_l - g.a_f) * 1.0 / (g.t_l - g.t_f)),"
	"   g.a_l - g.a_f, e.io_calls - g.a_f"
	" FROM (SELECT s.window_ts AS wts, s.tid, w.period_ns AS period,"
	"         min(s.io_calls) AS a_f, max(s.io_calls) AS a_l,"
	"         min(s.ts + s.duration) AS t_f, max(s.ts + s.duration) AS t_l"
	"       FROM syscall_rows s JOIN syscall_windows w ON w.start_ts = s.window_ts"
	"       WHERE s.io_calls IS NOT NULL AND w.open_ns > 0"
	"       GROUP BY s.window_ts, s.tid) g"
	" JOIN syscall_rows e ON e.rowid = (SELECT x.rowid FROM syscall_rows x"
	"   WHERE x.tid = g.tid AND x.io_calls IS NOT NULL AND x.ts >= g.wts + g.period"
	"   ORDER BY x.ts LIMIT 1)"
	" WHERE g.a_l - g.a_f >= " PACE_MIN_IO " AND g.t_l > g.t_f"
	"   AND e.ts < g.wts + 2 * g.period AND e.io_calls >= g.a_l"
	"   AND e.ts + e.duration > g.t_f;"
	"DROP INDEX syscall_rows_pace;";

int syscall_pace_build(sqlite3 *db)
{
	if (db_query_int(db, "SELECT count(*) FROM syscall_windows WHERE open_ns > 0", 0) <= 0)
		return 0;
	return db_exec(db, pace_sql) ? -1 : 0;
}
