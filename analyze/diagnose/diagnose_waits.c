/* diagnose_waits.c - causes read from where the scope's threads were
 * blocked (thread_states wait classes, clipped to the window):
 *   disk_io       blocked on block I/O (wait class block_io: reads, writes,
 *                 fsync, page faults in uninterruptible sleep), with the
 *                 device's queue vs service time and who loaded it;
 *   network_wait  blocked on sockets (wait class net, except accept(),
 *                 which is a server waiting for clients), with the peers;
 *   sleep         voluntary sleeps and timers: not a resource problem,
 *                 ranked after the others.
 * Each key number is the blocked time summed over the threads that had
 * it; the score divides it by those threads' observed time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "diagnose.h"
#include "util/fmt.h"

#define MIN_SCORE 0.05
#define MIN_WAIT_NS 1000000

struct wait_total {
	uint64_t ns, observed;
	int threads;
};

static struct wait_total total_of(const struct diag_input *in, enum diag_class k)
{
	struct wait_total w = { 0 };

	for (size_t i = 0; i < in->nthreads; i++) {
		if (in->threads[i].wait[k] == 0)
			continue;
		w.ns += in->threads[i].wait[k];
		w.observed += in->threads[i].observed;
		w.threads++;
	}
	return w;
}

/* The top threads by wait of class k, as rows of the subject's list. */
static void top_threads(const struct diag_input *in, struct diag_cause *c,
			enum diag_class k, const char *col)
{
	int used[DIAG_MAX_ROWS];
	char comm[64];

	for (int r = 0; r < 5; r++) {
		int best = -1;
		for (size_t i = 0; i < in->nthreads; i++) {
			int taken = 0;
			for (int j = 0; j < r; j++)
				taken |= used[j] == (int)i;
			if (!taken && in->threads[i].wait[k] > 0 &&
			    (best < 0 || in->threads[i].wait[k] > in->threads[best].wait[k]))
				best = (int)i;
		}
		if (best < 0)
			return;
		used[r] = best;
		diag_row(&c->subject, "threads");
		diag_row_int(&c->subject, "pid", in->threads[best].pid);
		diag_row_int(&c->subject, "tid", in->threads[best].tid);
		diag_row_text(&c->subject, "comm", diag_comm(in, in->threads[best].pid,
							     in->threads[best].tid, comm, sizeof(comm)));
		diag_row_int(&c->subject, col, (int64_t)in->threads[best].wait[k]);
	}
}

static struct diag_cause *claim(const struct diag_input *in, struct diagnosis *d,
				const char *kind, const char *key, struct wait_total *w)
{
	struct diag_cause *c;

	if (w->ns < MIN_WAIT_NS || w->observed == 0 || !diag_material(in, w->ns) ||
	    (double)w->ns / (double)w->observed < MIN_SCORE)
		return NULL;
	c = diag_add_cause(d, kind);
	if (!c)
		return NULL;
	c->score = (double)w->ns / (double)w->observed;
	if (c->score > 1)
		c->score = 1;
	c->key_name = key;
	c->key_value = (double)w->ns;
	c->key_unit = "ns";
	c->sources = "sched";
	return c;
}

/* The device with the most service time in the window, and the process
 * that submitted most of its bytes (not filtered: a competing process
 * is often the cause). */
static void describe_device(const struct diag_input *in, struct diag_cause *c)
{
	static const char dev_sql[] =
		"SELECT dev_name, count(*), sum(queue_ns), sum(service_ns), sum(bytes),"
		" max(queue_ns + service_ns) FROM block_io WHERE ts >= :from AND ts < :to"
		" GROUP BY dev ORDER BY sum(service_ns) + sum(queue_ns) DESC LIMIT 1";
	static const char submitter_sql[] =
		"SELECT pid, sum(bytes), count(*), (SELECT sum(bytes) FROM block_io WHERE ts >= :from"
		" AND ts < :to) FROM block_io WHERE ts >= :from AND ts < :to AND pid <> 0"
		" GROUP BY pid ORDER BY 2 DESC LIMIT 1";
	sqlite3_stmt *st = diag_prepare(in, dev_sql);
	char a[FMT_BUF], b[FMT_BUF], m[FMT_BUF], comm[64], pct[FMT_BUF];

	if (st && sqlite3_step(st) == SQLITE_ROW) {
		int64_t n = sqlite3_column_int64(st, 1);
		int64_t q = sqlite3_column_int64(st, 2), s = sqlite3_column_int64(st, 3);
		diag_text(&c->subject, "device", (const char *)sqlite3_column_text(st, 0));
		diag_int(&c->subject, "requests", n);
		diag_int(&c->subject, "queue_ns", q);
		diag_int(&c->subject, "service_ns", s);
		diag_int(&c->subject, "bytes", sqlite3_column_int64(st, 4));
		diag_evidence(c, "device %s: %lld requests, queue %s vs service %s in total"
			      " (mean %s + %s), slowest %s; %s", sqlite3_column_text(st, 0),
			      (long long)n, fmt_duration_ns(a, sizeof(a), (uint64_t)q),
			      fmt_duration_ns(b, sizeof(b), (uint64_t)s),
			      fmt_duration_ns(m, sizeof(m), n ? (uint64_t)(q / n) : 0),
			      fmt_duration_ns(pct, sizeof(pct), n ? (uint64_t)(s / n) : 0),
			      fmt_duration_ns(comm, sizeof(comm),
					      (uint64_t)sqlite3_column_int64(st, 5)),
			      q > s ? "requests wait in the queue longer than the device takes"
				    : "the device itself is slow (service dominates)");
	} else if (!in->has_block) {
		diag_evidence(c, "no block requests recorded (source 'block' not enabled:"
			      " perfcap-record -e block)");
	}
	sqlite3_finalize(st);
	st = diag_prepare(in, submitter_sql);
	if (st && sqlite3_step(st) == SQLITE_ROW) {
		uint32_t pid = (uint32_t)sqlite3_column_int64(st, 0);
		diag_int(&c->subject, "top_submitter_pid", pid);
		diag_evidence(c, "pid %u (%s) submitted %s of the bytes (%lld requests)", pid,
			      diag_comm(in, pid, pid, comm, sizeof(comm)),
			      fmt_percent(pct, sizeof(pct), (uint64_t)sqlite3_column_int64(st, 1),
					  (uint64_t)sqlite3_column_int64(st, 3)),
			      (long long)sqlite3_column_int64(st, 2));
	}
	sqlite3_finalize(st);
}

static void describe_peers(const struct diag_input *in, struct diag_cause *c)
{
	char where[1024], sql[2048], a[FMT_BUF];
	sqlite3_stmt *st;
	int n = 0;

	snprintf(sql, sizeof(sql),
		 "SELECT (SELECT COALESCE(so.daddr || ':' || so.dport, 'fd ' || so.fd)"
		 "  FROM sockets so WHERE so.pid = si.pid AND so.fd = si.fd AND so.ts <= si.start_ts"
		 "  ORDER BY so.ts DESC LIMIT 1) AS peer, si.name,"
		 " sum(min(t.end_ts, :to) - max(t.start_ts, :from)) FROM thread_states t"
		 " JOIN syscall_intervals si ON si.syscall_id = t.syscall_id"
		 " WHERE t.wait_class = 'net' AND t.syscall_nr NOT IN (43, 288) AND %s"
		 " GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 3",
		 report_scope_sql(where, sizeof(where), "t.pid", "t.tid", "t.start_ts", "t.end_ts"));
	st = diag_prepare(in, sql);
	while (st && sqlite3_step(st) == SQLITE_ROW && n++ < 3) {
		const char *peer = (const char *)sqlite3_column_text(st, 0);
		diag_evidence(c, "%s in %s() waiting on %s", fmt_duration_ns(a, sizeof(a),
			      (uint64_t)sqlite3_column_int64(st, 2)),
			      (const char *)sqlite3_column_text(st, 1),
			      peer ? peer : "a socket not seen opening");
		if (n == 1)
			diag_text(&c->subject, "peer", peer ? peer : "unknown");
	}
	sqlite3_finalize(st);
}

int diagnose_waits(const struct diag_input *in, struct diagnosis *d)
{
	struct wait_total disk = total_of(in, DC_BLOCK_IO);
	struct wait_total net = total_of(in, DC_NET);
	struct wait_total sleep = total_of(in, DC_SLEEP);
	struct diag_cause *c;
	char a[FMT_BUF], pct[FMT_BUF];

	if (!in->has_sched)
		return 0;
	if ((c = claim(in, d, "disk_io", "io_wait_total", &disk))) {
		snprintf(c->title, sizeof(c->title), "disk I/O: %d thread(s) blocked %s on block"
			 " I/O (%s of their time)", disk.threads,
			 fmt_duration_ns(a, sizeof(a), disk.ns),
			 fmt_percent(pct, sizeof(pct), disk.ns, disk.observed));
		c->sources = in->has_block ? "sched,syscall,block" : "sched,syscall";
		describe_device(in, c);
		top_threads(in, c, DC_BLOCK_IO, "io_ns");
	}
	if ((c = claim(in, d, "network_wait", "wait_total", &net))) {
		snprintf(c->title, sizeof(c->title), "network: %d thread(s) blocked %s on sockets"
			 " (%s of their time)", net.threads, fmt_duration_ns(a, sizeof(a), net.ns),
			 fmt_percent(pct, sizeof(pct), net.ns, net.observed));
		c->sources = "sched,syscall,net";
		describe_peers(in, c);
		top_threads(in, c, DC_NET, "wait_ns");
	}
	if ((c = claim(in, d, "sleep", "sleep_total", &sleep))) {
		snprintf(c->title, sizeof(c->title), "voluntary sleep: %d thread(s) slept %s"
			 " (%s of their time; timers, not a resource)", sleep.threads,
			 fmt_duration_ns(a, sizeof(a), sleep.ns),
			 fmt_percent(pct, sizeof(pct), sleep.ns, sleep.observed));
		c->rank_last = 1;
		top_threads(in, c, DC_SLEEP, "sleep_ns");
	}
	return 0;
}
