/* test_wake_chains.c - the wakeup graph on a database written by hand:
 * the waker kinds of wakeup_edges (one per rule of docs/schema.md), the
 * edges and windows of wakeup_graph and wakeup_graph_windows, and the
 * chains of query/wake_chains.c: A waits for B, B waits for C, C waits
 * for the disk gives root "device" at C two hops from A; a waker with no
 * wait of its own is "running"; a chain longer than WAKE_CHAIN_HOPS stops
 * at "depth". */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "db/db.h"
#include "db/schema.h"
#include "query/wake_chains.h"

static sqlite3 *db;
static struct report_options opts = { .top = 20 };
static struct report_scope scope = { .capture_start = 0, .capture_end = 100000, .from = 0,
				     .to = 100001, .opts = &opts };

/* One blocked offcpu row: [start, end), woken by ctx (-1: none seen). */
static void wait_row(int64_t start, int64_t end, int pid, int tid, const char *cls, int ctx,
		     int softirq, int waker_pid, int waker_tid)
{
	char sql[512];

	snprintf(sql, sizeof(sql), "INSERT INTO offcpu (ts, duration, pid, tid, state, waker_tid,"
		 " wait_class, waker_pid, waker_context) VALUES (%lld, %lld, %d, %d, 1, %d, '%s',"
		 " %d, %s)", (long long)end, (long long)(end - start), pid, tid,
		 ctx == 0 ? waker_tid : 0, cls, ctx == 0 ? waker_pid : 0,
		 ctx < 0 ? "NULL" : ctx == 0 ? "0" : ctx == 1 ? "1" : "2");
	cr_assert_eq(db_exec(db, sql), 0, "%s", sql);
	if (ctx >= 1) {         /* the interrupted task; for a softirq its vector */
		char vec[16];

		snprintf(vec, sizeof(vec), "%d", softirq);
		snprintf(sql, sizeof(sql), "UPDATE offcpu SET waker_softirq = %s, irq_pid = %d,"
			 " irq_tid = %d WHERE offcpu_id = last_insert_rowid()",
			 ctx == 2 ? vec : "NULL", ctx == 2 ? waker_pid : 7, ctx == 2 ? waker_tid : 7);
		cr_assert_eq(db_exec(db, sql), 0);
	}
}

static void setup(void)
{
	cr_assert_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	cr_assert_eq(schema_create_tables(db), 0);
	cr_assert_eq(db_exec(db, "INSERT INTO meta VALUES ('record.start_ns', '0');"
			     "INSERT INTO threads VALUES (0, 3, 30, 'disk-c'), (0, 2, 20, 'b'),"
			     " (0, 1, 10, 'a')"), 0);
	/* the chain: C waits for the disk, B (another process) for C, A for B */
	wait_row(100, 200, 3, 30, "block_io", 1, 0, 0, 0);
	wait_row(50, 210, 2, 20, "futex", 0, 0, 3, 30);
	wait_row(40, 220, 1, 10, "poll", 0, 0, 2, 20);
	/* D waits for thread 12 of its process, which never waits */
	wait_row(300, 400, 1, 11, "futex", 0, 0, 1, 12);
	/* a packet sent by process 5 over loopback, a timer softirq, none */
	wait_row(500, 600, 1, 13, "net", 2, 3, 5, 50);
	wait_row(500, 600, 1, 14, "sleep", 2, 1, 6, 60);
	wait_row(500, 600, 1, 15, "unknown", -1, 0, 0, 0);
	/* a chain of 10 threads 100..109, each waiting for the next (other
	 * processes), the last for a timer, in the second window */
	for (int k = 0; k < 10; k++)
		wait_row(1000000000 + k, 1000002000 - k, 100 + k, 100 + k, "futex",
			 k < 9 ? 0 : 1, 0, 101 + k, 101 + k);
	scope.capture_end = 2000000000;
	scope.to = 2000000001;
}

static void teardown(void)
{
	sqlite3_close(db);
}

TestSuite(wake_chains, .init = setup, .fini = teardown);

static const char *kind_of(int tid)
{
	static char kind[32];
	char sql[128];
	sqlite3_stmt *st;

	snprintf(sql, sizeof(sql), "SELECT waker_kind || ' ' || waker_pid || ' ' || waker_tid"
		 " FROM wakeup_edges WHERE tid = %d", tid);
	st = db_prepare(db, sql);
	cr_assert_not_null(st);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "no edge for %d", tid);
	snprintf(kind, sizeof(kind), "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return kind;
}

Test(wake_chains, waker_kinds)
{
	cr_expect_str_eq(kind_of(30), "device 0 0");
	cr_expect_str_eq(kind_of(20), "process 3 30");
	cr_expect_str_eq(kind_of(11), "thread 1 12");
	cr_expect_str_eq(kind_of(13), "softirq:NET_RX 5 50");
	cr_expect_str_eq(kind_of(14), "timer 0 0");
	cr_expect_str_eq(kind_of(15), "unknown 0 0");
	cr_expect_str_eq(kind_of(109), "timer 0 0");   /* hard irq, not block_io */
}

/* format 1.11: a soft interrupt the recorder did not name (vector 15) is a
 * device's completion for an I/O wait, else unknown; never the task it
 * happened to interrupt */
Test(wake_chains, unnamed_softirq)
{
	wait_row(700, 800, 1, 16, "block_io", 2, 15, 8, 80);
	wait_row(700, 800, 1, 17, "poll", 2, 15, 8, 80);
	cr_expect_str_eq(kind_of(16), "device 0 0");
	cr_expect_str_eq(kind_of(17), "softirq:? 0 0");
}

Test(wake_chains, graph_and_windows)
{
	cr_expect_eq(db_query_int(db, "SELECT count(*) FROM wakeup_graph", -1), 17);
	cr_expect_eq(db_query_int(db, "SELECT total_ns FROM wakeup_graph WHERE tid = 20", -1), 160);
	cr_expect_eq(db_query_int(db, "SELECT count(*) FROM wakeup_graph WHERE waker_comm = 'disk-c'"
				  " AND comm = 'b'", -1), 1);
	cr_expect_eq(db_query_int(db, "SELECT count(DISTINCT window_start) FROM"
				  " wakeup_graph_windows", -1), 2);
	cr_expect_eq(db_query_int(db, "SELECT count(*) FROM wakeup_graph_windows"
				  " WHERE window_start = 1000000000", -1), 10);
}

static const struct wake_edge *edge(const struct wake_graph *g, uint32_t tid)
{
	for (size_t i = 0; i < g->len; i++)
		if (g->edges[i].tid == tid)
			return &g->edges[i];
	cr_assert_fail("no edge for tid %u", tid);
	return NULL;
}

Test(wake_chains, chains_to_their_roots)
{
	struct wake_graph g;
	const struct wake_edge *e;

	cr_assert_eq(wake_graph_load(db, &scope, 20, &g), 0);
	cr_expect_eq(g.len, 17);
	cr_expect_eq(g.blocked_waits, 17);
	e = edge(&g, 10);                      /* A -> B -> C -> disk */
	cr_expect_str_eq(e->waker_kind, "process");
	cr_expect_eq(e->nroots, 1);
	cr_expect_str_eq(e->roots[0].kind, "device");
	cr_expect_eq(e->roots[0].tid, 30);
	cr_expect_str_eq(e->roots[0].wait_class, "block_io");
	cr_expect_eq(e->roots[0].ns, 180);
	cr_expect_eq(e->hops, 2);
	e = edge(&g, 20);
	cr_expect_str_eq(e->roots[0].kind, "device");
	cr_expect_eq(e->hops, 1);
	e = edge(&g, 30);                      /* its own root */
	cr_expect_str_eq(e->roots[0].kind, "device");
	cr_expect_eq(e->roots[0].tid, 30);
	cr_expect_eq(e->hops, 0);
	e = edge(&g, 11);                      /* the waker never waited */
	cr_expect_str_eq(e->roots[0].kind, "running");
	cr_expect_eq(e->roots[0].tid, 12);
	cr_expect_str_eq(e->roots[0].wait_class, "");
	e = edge(&g, 100);                     /* 9 hops to the timer: too deep */
	cr_expect_str_eq(e->roots[0].kind, "depth");
	cr_expect_eq(e->hops, WAKE_CHAIN_HOPS);
	e = edge(&g, 101);                     /* exactly 8 hops */
	cr_expect_str_eq(e->roots[0].kind, "timer");
	cr_expect_eq(e->roots[0].tid, 109);
	cr_expect_eq(e->hops, WAKE_CHAIN_HOPS);
	wake_graph_free(&g);
}

Test(wake_chains, scope_window_and_top)
{
	struct wake_graph g;
	struct report_scope late = scope;

	/* the second window only: its chain is still followed in full */
	late.from = 1000000000;
	cr_assert_eq(wake_graph_load(db, &late, 3, &g), 0);
	cr_expect_eq(g.len, 3);
	cr_expect_eq(g.blocked_waits, 10);
	cr_expect_eq(g.edges[0].tid, 100);     /* the longest wait first */
	cr_expect_str_eq(g.edges[0].roots[0].kind, "depth");
	wake_graph_free(&g);
}
