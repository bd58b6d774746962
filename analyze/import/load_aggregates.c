/* load_aggregates.c - the decoder of THREAD_METRIC records (format 1.3,
 * the recorder's agg and waits sources): one thread_metrics row per
 * record (kind 'calls' or 'waits' by its flag), and its
 * sums handed to the correlator, which fills the syscall columns of
 * thread_time_shares from them (correlate/metric_shares.c). Records of an
 * unknown class are stored with class NULL and not summed; records whose
 * window would wrap the clock are counted as malformed. */
#include "correlate/correlate.h"
#include "db/db.h"
#include "load_state.h"

static const char *const class_names[PC_METRIC_CLASSES] = {
	[PC_METRIC_FUTEX_WAIT] = "futex_wait", [PC_METRIC_FUTEX_WAKE] = "futex_wake",
	[PC_METRIC_POLL] = "poll", [PC_METRIC_NET_RECV] = "net_recv",
	[PC_METRIC_NET_SEND] = "net_send", [PC_METRIC_VFS_READ] = "vfs_read",
	[PC_METRIC_VFS_WRITE] = "vfs_write", [PC_METRIC_OTHER] = "other",
};

int decode_thread_metric(struct loader *L, const struct record_in *in)
{
	const struct pc_rec_thread_metric *m = in->body;
	const char *name = m->klass < PC_METRIC_CLASSES ? class_names[m->klass] : NULL;
	int64_t *row = in->row;

	if (m->window_start + m->window_ns < m->window_start || m->window_ns == 0) {
		L->counts.records_malformed++;
		return 0;
	}
	if (in->rec->flags & PC_METRIC_F_WAIT)
		L->counts.metrics_waits++;   /* the waits source's, not agg's */
	row[0] = (int64_t)m->window_start;
	row[1] = (int64_t)(m->window_start + m->window_ns);
	row[2] = m->pid;
	row[3] = m->tid;
	batch_text(row, in->kind, 4, name);
	batch_text(row, in->kind, 5, in->rec->flags & PC_METRIC_F_WAIT ? "waits" : "calls");
	row[6] = (int64_t)m->key;
	if (m->key == PC_METRIC_NO_KEY)
		in->kind[6] = BATCH_NULL;
	row[7] = (int64_t)m->count;
	row[8] = (int64_t)m->errors;
	row[9] = (int64_t)m->total_ns;
	row[10] = (int64_t)m->bytes;
	for (int b = 0; b < PC_METRIC_HIST; b++)
		row[11 + b] = m->hist[b];
	if (name && correlator_add_metric(L->corr, &(struct metric_sum){
			.window_start = m->window_start, .window_ns = m->window_ns,
			.pid = m->pid, .tid = m->tid, .klass = m->klass,
			.wait = (in->rec->flags & PC_METRIC_F_WAIT) != 0,
			.count = m->count, .total_ns = m->total_ns }) < 0)
		L->failed = 1;
	return 1;
}

/* The waits' sums of a second the sched source followed only in windows
 * (format 1.12) hold what was seen in them, and are scaled to the second;
 * `scale` keeps the counts' factor (and the histogram's), `time_scale`
 * the times' (NULL: as recorded). The windows are where the sched
 * programs run at every switch, so a thread switching often runs slower
 * there and waits less often than in the gaps: its waits counted by time
 * alone came out at 0.53-0.98 of the truth in the seconds of one run
 * (pingpong's main thread, 100,000-150,000 waits a second). So, where
 * the thread's counters were read at both edges of every gap in its
 * second (sched_gap_runs, format 1.16 for vcsw):
 *   counts  (seen + the gaps' voluntary switches) / seen: each voluntary
 *           switch is a blocking wait, each seen one is summed in some
 *           class;
 *   times   (seen + the gaps' blocked time) / seen: a gap's time less its
 *           run time and run queue time (exact counters), as the time
 *           shares have it (correlate/sched_windows.c).
 * Else (older captures, a thread made or gone in a gap) both by the
 * second's length over the part seen. agg's sums are exact: never
 * scaled. */
int waits_scale_pass(struct loader *L)
{
	static const char sql[] =
		"WITH w AS (SELECT tid, window_start AS ws, window_end AS we,"
		"   total(calls) AS calls, total(total_ns) AS ns,"
		"   (SELECT total(min(g.end_ts, m.window_end) - max(g.start_ts, m.window_start))"
		"     FROM sched_gaps g WHERE g.start_ts < m.window_end AND g.end_ts > m.window_start)"
		"     AS gap"
		"   FROM thread_metrics m WHERE kind = 'waits' GROUP BY tid, window_start, window_end),"
		" r AS (SELECT w.tid, w.ws, w.we,"
		"   total(min(r.end_ts, w.we) - max(r.start_ts, w.ws)) AS known,"
		"   total(r.vcsw * (min(r.end_ts, w.we) - max(r.start_ts, w.ws)) * 1.0 /"
		"     (r.end_ts - r.start_ts)) AS vcsw,"
		"   total(max(0, r.end_ts - r.start_ts - r.running_ns - r.run_delay_ns) *"
		"     (min(r.end_ts, w.we) - max(r.start_ts, w.ws)) * 1.0 / (r.end_ts - r.start_ts))"
		"     AS blocked"
		"   FROM w JOIN sched_gap_runs r ON r.tid = w.tid AND r.vcsw IS NOT NULL"
		"     AND r.exit_ts IS NULL AND r.start_ts < w.we AND r.end_ts > w.ws"
		"     AND r.end_ts > r.start_ts"
		"   GROUP BY w.tid, w.ws, w.we),"
		" f AS (SELECT w.tid, w.ws, w.we,"
		"   coalesce(CASE WHEN r.known >= w.gap * 0.99 AND w.calls > 0"
		"     THEN (w.calls + r.vcsw) / w.calls END, w.by_time) AS c,"
		"   coalesce(CASE WHEN r.known >= w.gap * 0.99 AND w.ns > 0"
		"     THEN (w.ns + r.blocked) / w.ns END, w.by_time) AS t"
		"   FROM (SELECT *, (we - ws) * 1.0 / ((we - ws) - gap) AS by_time FROM w) w"
		"   LEFT JOIN r ON r.tid = w.tid AND r.ws = w.ws AND r.we = w.we"
		"   WHERE w.gap > 0 AND w.gap < w.we - w.ws)"
		" UPDATE thread_metrics SET scale = f.c, time_scale = f.t,"
		"  calls = CAST(round(calls * f.c) AS INTEGER),"
		"  total_ns = CAST(round(total_ns * f.t) AS INTEGER),"
		"  h0 = CAST(round(h0 * f.c) AS INTEGER), h1 = CAST(round(h1 * f.c) AS INTEGER),"
		"  h2 = CAST(round(h2 * f.c) AS INTEGER), h3 = CAST(round(h3 * f.c) AS INTEGER),"
		"  h4 = CAST(round(h4 * f.c) AS INTEGER), h5 = CAST(round(h5 * f.c) AS INTEGER),"
		"  h6 = CAST(round(h6 * f.c) AS INTEGER), h7 = CAST(round(h7 * f.c) AS INTEGER),"
		"  h8 = CAST(round(h8 * f.c) AS INTEGER), h9 = CAST(round(h9 * f.c) AS INTEGER),"
		"  h10 = CAST(round(h10 * f.c) AS INTEGER), h11 = CAST(round(h11 * f.c) AS INTEGER),"
		"  h12 = CAST(round(h12 * f.c) AS INTEGER), h13 = CAST(round(h13 * f.c) AS INTEGER),"
		"  h14 = CAST(round(h14 * f.c) AS INTEGER), h15 = CAST(round(h15 * f.c) AS INTEGER),"
		"  h16 = CAST(round(h16 * f.c) AS INTEGER), h17 = CAST(round(h17 * f.c) AS INTEGER),"
		"  h18 = CAST(round(h18 * f.c) AS INTEGER), h19 = CAST(round(h19 * f.c) AS INTEGER),"
		"  h20 = CAST(round(h20 * f.c) AS INTEGER), h21 = CAST(round(h21 * f.c) AS INTEGER),"
		"  h22 = CAST(round(h22 * f.c) AS INTEGER), h23 = CAST(round(h23 * f.c) AS INTEGER),"
		"  h24 = CAST(round(h24 * f.c) AS INTEGER), h25 = CAST(round(h25 * f.c) AS INTEGER),"
		"  h26 = CAST(round(h26 * f.c) AS INTEGER), h27 = CAST(round(h27 * f.c) AS INTEGER),"
		"  h28 = CAST(round(h28 * f.c) AS INTEGER), h29 = CAST(round(h29 * f.c) AS INTEGER),"
		"  h30 = CAST(round(h30 * f.c) AS INTEGER), h31 = CAST(round(h31 * f.c) AS INTEGER)"
		" FROM f WHERE thread_metrics.kind = 'waits' AND thread_metrics.tid = f.tid"
		"  AND thread_metrics.window_start = f.ws AND thread_metrics.window_end = f.we";

	if (!L->counts.metrics_waits ||
	    !db_query_int(L->db, "SELECT count(*) > 0 FROM sched_gaps", 0))
		return 0;
	return db_exec(L->db, sql);
}
