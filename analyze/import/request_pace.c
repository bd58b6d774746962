/* request_pace.c - how much more each req window's connections carried
 * over their second than the window's requests (request_windows.pace,
 * format 1.16).
 *
 * A request followed in a window stands for its second over its window
 * (period_ns / open_ns): that assumes the server answered as fast inside
 * the window as in the rest of the second. It did not: inside, the req
 * programs run at every socket call, and a load can stop, start or change
 * connections within the second. On Debian's redis under redis-benchmark
 * the windows saw the requests redis counted in them within 2%, but redis
 * ran at 0.76-0.90 of its second's rate there, and the weighted count came
 * out up to 12% low (36% on e2e-req-windows-idle).
 *
 * The kernel counts the bytes a TCP connection's reader has taken from it
 * whether anything follows the socket or not, and the req programs write
 * that count (REQUEST_MARK `read`, since the connection's open) at each
 * connection's first call in each period's window, at the close of one
 * that made a call in a window, and for every connection at the
 * recording's end; and user space reads, through an iterator over the
 * sockets' states, where every connection that moved since the last time
 * is at each period's start (kind snapshot, REQUEST_WINDOW snap_start and
 * snap_end). With both snapshots a connection's bytes over the period run
 * from where it was at the first to where it was at the second (its last
 * mark by then: a connection that did not move has none since), so a
 * connection that goes quiet has both ends too; the window's connections
 * are those with requests in it or a mark between the two. Without (the
 * iterator failed, the last period), from the calls' marks: for a
 * window's period [s, e) and a connection:
 *   r0  its first `period` mark in [s, e); 0 when it was established in
 *       the period and has none (its state was made at its open, so it
 *       read nothing before: no mark is written then);
 *   r1  its first mark after: `period` from e on, or `close` / `end` from
 *       s on, before e plus a period;
 *   A = r1 - r0, its bytes over the period. With n followed requests of B
 * bytes in the window it stands for n * A / B requests (a ratio
 * estimator, exact for requests of one size, not a sample of time at
 * all); without both ends, or A < B (a lost mark), n * period / open as
 * before; opened in the period with no request in the window, A over its
 * requests' bytes a request in the next window, or the window's. The
 * connections opened and closed between windows are only counted by the
 * kernel (REQUEST_WINDOW gap_bytes): the window's bytes a request make them
 * requests. The window's pace (NULL when none of its connections with
 * requests had both ends) is the sum over the time weights' sum; its
 * weight is multiplied by it, so the report, the export and the quality
 * table weigh its requests by their connections' own count (each request
 * of a window weighs the same: its window's average). 1.15 marks, at a
 * window's first call only and without `read`, are not used.
 */
#include "db/db.h"
#include "request_pace.h"

/* The marks of 1.16 (1.15's have no read count), found by connection. */
static const char marks_sql[] =
	"CREATE TEMP TABLE req_marks AS SELECT ts, cookie, conn_ts, read, kind"
	"  FROM request_marks WHERE read IS NOT NULL"
	"    AND kind IN ('period', 'close', 'end', 'snapshot');"
	"CREATE INDEX temp.req_marks_conn ON req_marks (cookie, conn_ts, ts);";

/* Per window: w its period [s, e), tw its time weight; r each connection's
 * followed requests (n, their bytes b); c the window's connections (with
 * requests in it, or opened in its period and marked) and where each
 * one's stream was as the period began (r0) and ended (r1); q the bytes a
 * request of the window's. */
static const char pace_sql[] =
	"CREATE TEMP TABLE req_pace AS"
	" WITH w AS (SELECT start_ts AS s, start_ts + period_ns AS e, period_ns AS p,"
	"     weight AS tw, coalesce(gap_bytes, 0) AS gb, snap_start AS s0, snap_end AS s1"
	"   FROM request_windows WHERE weight IS NOT NULL),"
	" r AS (SELECT window_ts AS s, cookie, conn_ts, count(*) AS n, total(bytes_in) AS b"
	"   FROM requests WHERE window_ts IS NOT NULL GROUP BY window_ts, cookie, conn_ts),"
	" c0 AS (SELECT s, cookie, conn_ts FROM r"
	"   UNION SELECT w.s, k.cookie, k.conn_ts FROM temp.req_marks k JOIN w"
	"     ON k.conn_ts >= w.s AND k.conn_ts < w.e"
	"   UNION SELECT w.s, k.cookie, k.conn_ts FROM temp.req_marks k JOIN w"
	"     ON w.s1 IS NOT NULL AND k.ts > w.s0 AND k.ts <= w.s1),"
	" c AS (SELECT c0.s, c0.cookie, c0.conn_ts, w.tw, w.e, coalesce(r.n, 0) AS n,"
	"     coalesce(r.b, 0) AS b,"
	/* with the snapshots: where the stream was at each end (its last mark
	 * by then: it did not move since); opened in the period, 0, or its
	 * first call's mark when its state was made there (not at its open) */
	"     CASE WHEN w.s1 IS NOT NULL THEN coalesce("
	"       (SELECT k.read FROM temp.req_marks k WHERE k.cookie = c0.cookie"
	"         AND k.conn_ts = c0.conn_ts AND k.ts <= w.s0 AND k.kind <> 'end'"
	"         ORDER BY k.ts DESC LIMIT 1),"
	"       (SELECT k.read FROM temp.req_marks k WHERE k.cookie = c0.cookie"
	"         AND k.conn_ts = c0.conn_ts AND c0.conn_ts > w.s0 AND k.ts > w.s0"
	"         AND k.ts < w.s1 AND k.kind = 'period' ORDER BY k.ts LIMIT 1), 0)"
	/* without: its first call's mark in the period, or 0 when opened in it */
	"     ELSE coalesce((SELECT k.read FROM temp.req_marks k WHERE k.cookie = c0.cookie"
	"         AND k.conn_ts = c0.conn_ts AND k.ts >= w.s AND k.ts < w.e AND k.kind = 'period'"
	"         ORDER BY k.ts LIMIT 1),"
	"       CASE WHEN c0.conn_ts >= w.s THEN 0 END) END AS r0,"
	"     CASE WHEN w.s1 IS NOT NULL THEN"
	"       (SELECT k.read FROM temp.req_marks k WHERE k.cookie = c0.cookie"
	"         AND k.conn_ts = c0.conn_ts AND k.ts <= w.s1 AND k.kind <> 'end'"
	"         ORDER BY k.ts DESC LIMIT 1)"
	/* without: its first mark after: a call's in the next period, its
	 * close or the recording's end */
	"     ELSE (SELECT k.read FROM temp.req_marks k WHERE k.cookie = c0.cookie"
	"         AND k.conn_ts = c0.conn_ts AND k.ts >= w.s AND k.ts < w.e + w.p"
	"         AND ((k.kind = 'period' AND k.ts >= w.e) OR k.kind IN ('close', 'end'))"
	"         ORDER BY k.ts LIMIT 1) END AS r1"
	"   FROM c0 JOIN w ON w.s = c0.s"
	"   LEFT JOIN r ON r.s = c0.s AND r.cookie = c0.cookie AND r.conn_ts = c0.conn_ts),"
	" a AS (SELECT c.*, CASE WHEN r1 >= r0 THEN r1 - r0 END AS a,"
	"     (SELECT r2.n / r2.b FROM r r2 WHERE r2.s = c.e AND r2.cookie = c.cookie"
	"       AND r2.conn_ts = c.conn_ts AND r2.b > 0) AS own_q FROM c),"
	" q AS (SELECT s, total(n) / total(b) AS q FROM a WHERE n > 0 AND b > 0 GROUP BY s)"
	" SELECT a.s AS wts, total(n * a.tw) AS timed,"
	"   max(n > 0 AND a >= b AND b > 0) AS any_paced,"
	"   total(CASE WHEN n > 0 AND a >= b AND b > 0 THEN n * a / b"
	"     WHEN n > 0 THEN n * a.tw"
	"     ELSE coalesce(a * coalesce(own_q, q.q), 0) END)"
	"   + coalesce(w.gb * q.q, 0) AS paced"
	" FROM a JOIN w ON w.s = a.s LEFT JOIN q ON q.s = a.s GROUP BY a.s;"
	"UPDATE request_windows SET pace = p.paced / p.timed, weight = weight * p.paced / p.timed"
	" FROM temp.req_pace p WHERE p.wts = request_windows.start_ts AND p.timed > 0"
	"   AND p.any_paced;"
	"DROP TABLE temp.req_pace;"
	"DROP TABLE temp.req_marks;";

int request_pace_build(sqlite3 *db)
{
	if (db_query_int(db, "SELECT count(*) FROM request_marks WHERE read IS NOT NULL", 0) <= 0)
		return 0;
	return db_exec(db, marks_sql) || db_exec(db, pace_sql) ? -1 : 0;
}
