/* request_pace.c - how much more each req window's connections carried
 * over their second than the window's requests (request_windows.pace,
 * format 1.15).
 *
 * A request followed in a window stands for its second over its window
 * (period_ns / open_ns): that assumes the server answered as fast inside
 * the window as in the rest of the second. It did not: inside, the req
 * programs run at every socket call, and a load can stop or start within
 * the second. On Debian's redis under redis-benchmark, the windows saw
 * the requests redis counted in them within 2%, but redis ran at 0.84-0.90
 * of its second's rate there, and the weighted count came out 11-13% low
 * (e2e-req-real, e2e-req-windows-idle: up to 36% low).
 *
 * The kernel counts the bytes a TCP connection's reader has taken from it
 * (copied_seq) whether anything follows the socket or not, and the
 * recorder writes that count as each connection is first seen in each
 * window (REQUEST_MARK). For a connection c and a window whose next window
 * follows at once: A, the bytes between its mark there and its mark in the
 * next window (its whole period), and B, the bytes of the requests
 * followed in the window (their bytes_in). Its n followed requests stand
 * for n * A / B requests over the period (scaled by the period over the
 * marks' distance; a connection is its cookie and conn_ts, as a socket's
 * address is reused): a ratio estimator, exact for requests of one size, and
 * not a sample of time at all. A connection without both marks, or whose
 * bytes do not add up (B = 0, A < B: a reused socket, a lost mark), stands
 * for n * period / open as before. The window's pace (NULL when none of
 * its connections had both marks) is the sum of its
 * connections' estimates over the time weights' sum; its weight is
 * multiplied by it, so the report, the export and the quality table weigh
 * its requests by the connections' own count (each request of a window
 * weighs the same: its window's average).
 */
#include "db/db.h"
#include "request_pace.h"

static const char pace_sql[] =
	"CREATE TEMP TABLE req_pace AS"
	" WITH w AS (SELECT start_ts, open_ns, period_ns, weight,"
	"     lead(start_ts) OVER (ORDER BY start_ts) AS next_ts"
	"   FROM request_windows),"
	" m AS (SELECT w.start_ts AS wts, k.cookie, k.conn_ts, min(k.ts) AS ts, k.copied"
	"   FROM request_marks k JOIN w ON k.ts >= w.start_ts"
	"     AND k.ts < w.start_ts + w.period_ns"
	"   GROUP BY w.start_ts, k.cookie, k.conn_ts),"
	" r AS (SELECT window_ts AS wts, cookie, conn_ts, count(*) AS n, total(bytes_in) AS b"
	"   FROM requests WHERE window_ts IS NOT NULL GROUP BY window_ts, cookie, conn_ts),"
	" c AS (SELECT r.wts, r.n, w.weight AS tw, w.period_ns AS period,"
	"     (m1.copied - m0.copied) & 4294967295 AS a, r.b, m1.ts - m0.ts AS span"
	"   FROM r JOIN w ON w.start_ts = r.wts"
	"   LEFT JOIN m m0 ON m0.wts = r.wts AND m0.cookie = r.cookie AND m0.conn_ts = r.conn_ts"
	"   LEFT JOIN m m1 ON m1.wts = w.next_ts AND m1.cookie = r.cookie"
	"     AND m1.conn_ts = r.conn_ts"
	"     AND w.next_ts = w.start_ts + w.period_ns)"
	" SELECT wts, total(n * tw) AS timed,"
	"   max(a IS NOT NULL AND b > 0 AND a >= b AND span > 0) AS any_paced,"
	"   total(CASE WHEN a IS NOT NULL AND b > 0 AND a >= b AND span > 0"
	"     THEN n * a / b * period / span ELSE n * tw END) AS paced"
	" FROM c WHERE tw IS NOT NULL GROUP BY wts;"
	"UPDATE request_windows SET pace = p.paced / p.timed, weight = weight * p.paced / p.timed"
	" FROM temp.req_pace p WHERE p.wts = request_windows.start_ts AND p.timed > 0"
	"   AND p.any_paced;"
	"DROP TABLE temp.req_pace;";

int request_pace_build(sqlite3 *db)
{
	if (db_query_int(db, "SELECT count(*) FROM request_marks", 0) <= 0)
		return 0;
	return db_exec(db, pace_sql) ? -1 : 0;
}
