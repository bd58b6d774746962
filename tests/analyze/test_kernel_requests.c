/* test_kernel_requests.c - the requests table from REQUEST records (the
 * req source, analyze/correlate/kernel_requests.c): connections numbered
 * per (pid, fd) in time order whatever order the records came in (a
 * socket address reused by a later connection on the same fd included),
 * lower bounds and the readiness rules (data_ready, previous_response,
 * accept, none for client connections), a discovered connection its
 * process does not listen for taken as a client one, the pool sweep
 * leaving clients out, and --requests-from choosing between the records
 * and the socket calls (what is left out counted in the quality table;
 * auto per process);
 * a REQUEST_BATCH reads as the REQUESTs it stands for, and one that lies
 * about its length is skipped and counted; records (and the pool's times)
 * kept in sorted runs on disk give the rows memory gives, and runs that
 * cannot be written fail the import with the reason. */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture_builder.h"
#include "db_check.h"
#include "event_builder.h"
#include "run_tool.h"

#define T(ms) (SEC + (uint64_t)(ms) * MS)
enum { SERVER = 100, SERVER_TID = 101, CLIENT = 200, PROXY = 300, LISTEN = 10 };

/* SERVER (fd 5): connection A (cookie 0xa, first seen at T(1)) with three
 * requests, its records out of order; connection B on the same fd and the
 * same socket address after A closed, opened at T(50) on a served port,
 * one request without an arrival. CLIENT: a connection it made, one
 * "request" (a response read, then its next request written). PROXY:
 * listens on 80 (snapshot), holds a discovered connection from port 40000
 * (its own, to an upstream) and one on port 80. */
static void requests_of_a(struct event_capture *ev, bool batched)
{
	struct ev_request a = { .cookie = 0xa, .conn_ts = T(1), .pid = SERVER, .tid = SERVER_TID,
				.fd = 5, .origin = PC_REQUEST_SEEN, .lport = 8080 };
	struct ev_request q[3] = { a, a, a };

	q[0].number = 1, q[0].start = T(10), q[0].end = T(12), q[0].lower_ns = 9 * MS;
	q[1].number = 2, q[1].start = T(20), q[1].end = T(25), q[1].ready_ns = 3 * MS,
		q[1].lower_ns = 8 * MS;                            /* previous end T(12) */
	q[2].number = 3, q[2].start = T(30), q[2].end = T(31), q[2].lower_ns = 5 * MS;
	if (batched) {
		ev_request_batch(ev, q, 3, 3);
		return;
	}
	ev_request(ev, &q[1]);
	ev_request(ev, &q[0]);
	ev_request(ev, &q[2]);
}

/* batched: connection A's requests in one REQUEST_BATCH instead of three
 * REQUESTs out of order. */
static void requests(struct event_capture *ev, bool batched)
{
	struct ev_request a = { .cookie = 0xa, .conn_ts = T(1), .pid = SERVER, .tid = SERVER_TID,
				.fd = 5, .origin = PC_REQUEST_SEEN, .lport = 8080 };
	struct ev_request q;

	requests_of_a(ev, batched);
	q = a, q.conn_ts = T(50), q.origin = PC_REQUEST_ACCEPTED, q.number = 1, q.start = T(52),
		q.end = T(53), q.lower_ns = 2 * MS;                /* no arrival seen */
	ev_request(ev, &q);
	q = (struct ev_request){ .cookie = 0xc, .conn_ts = T(2), .pid = CLIENT, .tid = CLIENT,
				 .fd = 3, .origin = PC_REQUEST_CONNECTED, .number = 1,
				 .start = T(40), .end = T(41), .lower_ns = 38 * MS, .lport = 40001 };
	ev_request(ev, &q);
	q = (struct ev_request){ .cookie = 0xd, .conn_ts = T(3), .pid = PROXY, .tid = PROXY,
				 .fd = 7, .origin = PC_REQUEST_SEEN, .number = 2, .start = T(60),
				 .end = T(61), .ready_ns = 1 * MS, .lower_ns = 20 * MS,
				 .lport = 40000 };
	ev_request(ev, &q);
	q.cookie = 0xe, q.fd = 8, q.lport = 80;
	ev_request(ev, &q);
	ev_socket_snapshot(ev, T(0), PROXY, 3, PC_SOCK_F_SNAPSHOT, "127.0.0.1", 80, "0.0.0.0", 0,
			   LISTEN, 31);
}

static sqlite3 *import_requests_as(const char *name, const char *from, bool batched)
{
	static struct event_capture ev;
	char *dir = scratch_dir();
	sqlite3 *db;

	ev_init(&ev, T(0), T(100), "cpu,sched,block,waits,req");
	requests(&ev, batched);
	db = import_events(dir, name, &ev, from ? "--requests-from" : NULL, from, NULL);
	ev_free(&ev);
	scratch_remove(dir);	/* the open database stays readable */
	return db;
}

static sqlite3 *import_requests(const char *name, const char *from)
{
	return import_requests_as(name, from, false);
}

Test(kernel_requests, connections_numbered_in_time_order)
{
	sqlite3 *db = import_requests("conns", NULL);

	expect_text(db, "SELECT group_concat(conn || '.' || request || '@' || ((start_ts - 1000000000)"
		    " / 1000000), ' ') FROM (SELECT * FROM requests WHERE pid = 100"
		    " ORDER BY start_ts)", "1.1@10 1.2@20 1.3@30 2.1@52");
	/* grouped by pid, ascending */
	expect_text(db, "SELECT group_concat(pid, ',') FROM (SELECT DISTINCT pid FROM requests"
		    " ORDER BY rowid)", "100,200,300");
	expect_int(db, "SELECT count(*) FROM requests", 7);
	sqlite3_close(db);
}

Test(kernel_requests, lower_bounds_and_readiness)
{
	sqlite3 *db = import_requests("ready", NULL);

	/* request 1: lower = the connection's first sight; no arrival: none */
	expect_text(db, "SELECT ((lower_ts - 1000000000) / 1000000) || ' ' ||"
		    " coalesce(ready_source, 'null') FROM requests WHERE pid = 100 AND conn = 1"
		    " AND request = 1", "1 null");
	/* request 2: its data arrived 3 ms before pickup; lower = request 1's end */
	expect_text(db, "SELECT ((lower_ts - 1000000000) / 1000000) || ' ' || ready_source || ' ' ||"
		    " queue_ns || ' ' || sojourn_ns FROM requests WHERE pid = 100 AND conn = 1"
		    " AND request = 2", "12 data_ready 3000000 8000000");
	/* request 3: arrived while request 2 was answered */
	expect_text(db, "SELECT ready_source || ' ' || ((ready_ts - 1000000000) / 1000000) || ' ' ||"
		    " queue_ns FROM requests WHERE pid = 100 AND conn = 1 AND request = 3",
		    "previous_response 25 5000000");
	/* the accepted connection's first request: ready at the open */
	expect_text(db, "SELECT origin || ' ' || ready_source || ' ' || queue_ns FROM requests"
		    " WHERE pid = 100 AND conn = 2", "accepted accept 2000000");
	/* the client's own connection: no readiness */
	expect_text(db, "SELECT origin || ' ' || coalesce(ready_ts, 'null') FROM requests"
		    " WHERE pid = 200", "connected null");
	expect_int(db, "SELECT first_write_ts - start_ts FROM requests WHERE pid = 200", 1);
	sqlite3_close(db);
}

Test(kernel_requests, discovered_outbound_is_a_client)
{
	sqlite3 *db = import_requests("outbound", NULL);

	expect_text(db, "SELECT group_concat(fd || ':' || origin || ':' ||"
		    " coalesce(ready_source, 'null'), ' ') FROM (SELECT * FROM requests"
		    " WHERE pid = 300 ORDER BY fd)", "7:connected:null 8:discovered:data_ready");
	sqlite3_close(db);
}

/* A pre-forking server (postgres): the parent (POSTMASTER) listens on
 * 5432, a child (BACKEND) serves a connection it inherited on port 5432
 * with no listening socket of its own, and makes one connection out. The
 * served one is a request served, the other a client's. */
enum { POSTMASTER = 500, BACKEND = 501 };

static sqlite3 *import_prefork(void)
{
	static struct event_capture ev;
	struct ev_request q = { .cookie = 0xf, .conn_ts = T(3), .pid = BACKEND, .tid = BACKEND,
				.fd = 9, .origin = PC_REQUEST_SEEN, .number = 2, .start = T(60),
				.end = T(61), .ready_ns = 1 * MS, .lower_ns = 20 * MS,
				.lport = 5432 };
	char *dir = scratch_dir();
	sqlite3 *db;

	ev_init(&ev, T(0), T(100), "cpu,sched,block,waits,req");
	ev_request(&ev, &q);
	q.cookie = 0x10, q.fd = 10, q.lport = 45000;
	ev_request(&ev, &q);
	ev_socket_snapshot(&ev, T(0), POSTMASTER, 5, PC_SOCK_F_SNAPSHOT, "0.0.0.0", 5432,
			   "0.0.0.0", 0, LISTEN, 41);
	ev_socket_snapshot(&ev, T(0), BACKEND, 9, PC_SOCK_F_SNAPSHOT, "127.0.0.1", 5432,
			   "127.0.0.1", 41000, 1, 42);
	ev_socket_snapshot(&ev, T(0), BACKEND, 10, PC_SOCK_F_SNAPSHOT, "127.0.0.1", 45000,
			   "127.0.0.1", 6379, 1, 43);
	db = import_events(dir, "prefork", &ev, NULL);
	ev_free(&ev);
	scratch_remove(dir);	/* the open database stays readable */
	return db;
}

Test(kernel_requests, prefork_child_serves_its_parents_port)
{
	sqlite3 *db = import_prefork();

	expect_text(db, "SELECT group_concat(fd || ':' || origin, ' ') FROM (SELECT * FROM"
		    " requests WHERE pid = 501 ORDER BY fd)", "9:discovered 10:connected");
	expect_text(db, "SELECT group_concat(fd || ':' || role, ' ') FROM (SELECT * FROM"
		    " connections WHERE pid = 501 ORDER BY fd)", "9:inbound 10:outbound");
	sqlite3_close(db);
}

Test(kernel_requests, pool_leaves_clients_out)
{
	sqlite3 *db = import_requests("pool", NULL);

	expect_int(db, "SELECT sum(requests) FROM pool_utilisation WHERE pid = 100", 4);
	expect_int(db, "SELECT count(*) FROM pool_utilisation WHERE pid = 200", 0);
	expect_int(db, "SELECT max(workers) FROM pool_utilisation WHERE pid = 100", 1);
	sqlite3_close(db);
}

Test(kernel_requests, requests_from_chooses_and_counts)
{
	sqlite3 *db = import_requests("calls", "calls");

	expect_int(db, "SELECT count(*) FROM requests", 0);
	expect_int(db, "SELECT value FROM quality WHERE source = 'req' AND"
		   " key = 'requests.left_to_calls'", 7);
	expect_int(db, "SELECT value FROM quality WHERE source = 'req' AND key = 'requests.rows'",
		   0);
	sqlite3_close(db);
	db = import_requests("kernel", "kernel");
	expect_int(db, "SELECT count(*) FROM requests", 7);
	expect_int(db, "SELECT value FROM quality WHERE source = 'req' AND key = 'requests.rows'",
		   7);
	sqlite3_close(db);
}

/* auto with both kinds in one capture: SERVER's socket calls make its
 * requests (one, on fd 9), so its four REQUESTs are left out and counted;
 * CLIENT's and PROXY's come from their records. */
Test(kernel_requests, auto_takes_calls_per_process)
{
	static struct event_capture ev;
	char *dir = scratch_dir();
	sqlite3 *db;

	ev_init(&ev, T(0), T(100), "cpu,sched,syscall,net,block,waits,req");
	requests(&ev, false);
	ev_socket_v4(&ev, T(4), SERVER, SERVER_TID, 9, PC_SOCK_F_ACCEPTED, "127.0.0.1", 8080,
		     "127.0.0.1", 50000, 0x9);
	ev_syscall(&ev, T(70), 1000, SERVER, SERVER_TID, 0 /* read */, 100, 9, 0, 4096);
	ev_syscall(&ev, T(71), 1000, SERVER, SERVER_TID, 1 /* write */, 50, 9, 0, 50);
	db = import_events(dir, "auto", &ev, NULL);
	ev_free(&ev);
	scratch_remove(dir);
	expect_int(db, "SELECT count(*) FROM requests WHERE pid = 100", 1);
	expect_int(db, "SELECT fd FROM requests WHERE pid = 100", 9);
	expect_int(db, "SELECT count(*) FROM requests WHERE pid <> 100", 3);
	expect_int(db, "SELECT value FROM quality WHERE source = 'req' AND"
		   " key = 'requests.left_to_calls'", 4);
	sqlite3_close(db);
}

/* Every column of every row, in (pid, conn, request) order. */
#define ALL_ROWS "SELECT group_concat(r, '|') FROM (SELECT pid || ',' || fd || ',' ||" \
	" cookie || ',' || conn_ts || ',' || conn || ',' || request || ',' || origin || ',' ||" \
	" tids || ',' || start_ts || ',' || first_write_ts || ',' || end_ts || ',' ||" \
	" coalesce(ready_ts, '-') || ',' || coalesce(ready_source, '-') || ',' ||" \
	" coalesce(lower_ts, '-') || ',' || bytes_in || ',' || bytes_out || ',' || reads ||" \
	" ',' || writes AS r FROM requests ORDER BY pid, conn, request)"

Test(kernel_requests, a_batch_reads_as_its_requests)
{
	sqlite3 *one = import_requests_as("single", NULL, false);
	sqlite3 *batch = import_requests_as("batched", NULL, true);
	char *want = query_text(one, ALL_ROWS);

	cr_assert(want && strlen(want) > 100);
	expect_text(batch, ALL_ROWS, want);
	/* counted in requests, as the recorder counts req events */
	expect_int(batch, "SELECT value FROM quality WHERE source = 'req' AND"
		   " key = 'records.request_batch'", 3);
	expect_int(batch, "SELECT value FROM quality WHERE source = 'req' AND key = 'records'", 7);
	expect_int(batch, "SELECT imported FROM data_quality WHERE source = 'req'", 7);
	free(want);
	sqlite3_close(one);
	sqlite3_close(batch);
}

/* A batch whose header claims more entries than it holds, or more than 8,
 * is skipped whole and counted; the rest of the capture imports. */
Test(kernel_requests, a_lying_batch_is_skipped_and_counted)
{
	static struct event_capture ev;
	struct ev_request q[2] = {
		{ .cookie = 0xf, .conn_ts = T(1), .pid = SERVER, .tid = SERVER_TID, .fd = 9,
		  .number = 1, .start = T(70), .end = T(71), .lport = 8080 },
		{ .cookie = 0xf, .conn_ts = T(1), .pid = SERVER, .tid = SERVER_TID, .fd = 9,
		  .number = 2, .start = T(72), .end = T(73), .lport = 8080 },
	};
	char *dir = scratch_dir();
	sqlite3 *db;

	ev_init(&ev, T(0), T(100), "cpu,sched,block,waits,req");
	requests(&ev, true);
	ev_request_batch(&ev, q, 2, 5);   /* claims 5, holds 2 */
	ev_request_batch(&ev, q, 2, 9);   /* more than 8 */
	ev_request_batch(&ev, q, 2, 0);   /* none */
	db = import_events(dir, "lying", &ev, NULL);
	expect_int(db, "SELECT count(*) FROM requests", 7);
	expect_int(db, "SELECT count(*) FROM requests WHERE fd = 9", 0);
	expect_int(db, "SELECT value FROM quality WHERE source = 'format' AND"
		   " key = 'records.malformed'", 3);
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

/* The tids column: the pickup thread, or both threads in ascending order
 * ("%u" and "%u,%u"), at the bounds of a 32-bit tid; and the pool's
 * workers, the distinct pickup threads, when they take turns. */
static sqlite3 *import_turns(const char *name, bool batched)
{
	static struct event_capture ev;
	const uint32_t pickup[5] = { 7, 4294967295u, 50, 7, 1000000 };
	const uint32_t other[5] = { 0, 12, 9, 0, 1000001 };
	struct ev_request q[5];
	char *dir = scratch_dir();
	sqlite3 *db;

	for (int i = 0; i < 5; i++)
		q[i] = (struct ev_request){ .cookie = 0x5, .conn_ts = T(1), .pid = SERVER,
					    .tid = pickup[i], .other_tid = other[i], .fd = 4,
					    .origin = PC_REQUEST_ACCEPTED, .number = (uint32_t)i + 1,
					    .start = T(10 + 10 * i), .end = T(15 + 10 * i),
					    .lower_ns = 1 * MS, .lport = 8080 };
	ev_init(&ev, T(0), T(100), "cpu,sched,block,waits,req");
	if (batched) {
		ev_request_batch(&ev, q, 5, 5);
	} else {
		for (int i = 0; i < 5; i++)
			ev_request(&ev, &q[i]);
	}
	db = import_events(dir, name, &ev, NULL);
	ev_free(&ev);
	scratch_remove(dir);	/* the open database stays readable */
	return db;
}

Test(kernel_requests, tids_text_and_workers_taking_turns)
{
	const char *want = "7|12,4294967295|9,50|7|1000000,1000001";

	for (int batched = 0; batched < 2; batched++) {
		sqlite3 *db = import_turns(batched ? "turns_batched" : "turns", batched);

		expect_text(db, "SELECT group_concat(tids, '|') FROM (SELECT tids FROM requests"
			    " ORDER BY request)", want);
		expect_int(db, "SELECT max(workers) FROM pool_utilisation", 4);
		sqlite3_close(db);
	}
}

/* The pool is summed per window as the requests come, in their arrival
 * order: a request earlier than every one before it adds windows in
 * front. 10 ms windows; requests at 50-58 (ready 50), 12-15 (ready 11)
 * and 33-34 (ready 30) ms arrive in that order. */
Test(kernel_requests, pool_windows_added_in_front)
{
	static struct event_capture ev;
	const uint64_t start[3] = { 55, 12, 33 }, end[3] = { 58, 15, 34 }, ready[3] = { 5, 1, 3 };
	const uint32_t number[3] = { 3, 1, 2 };
	char *dir = scratch_dir();
	sqlite3 *db;

	ev_init(&ev, T(0), T(100), "cpu,sched,block,waits,req");
	for (int i = 0; i < 3; i++)
		ev_request(&ev, &(struct ev_request){ .cookie = 0x6, .conn_ts = T(1), .pid = SERVER,
						      .tid = SERVER_TID, .fd = 6,
						      .origin = PC_REQUEST_ACCEPTED,
						      .number = number[i], .start = T(start[i]),
						      .end = T(end[i]), .ready_ns = ready[i] * MS,
						      .lower_ns = 1 * MS, .lport = 8080 });
	db = import_events(dir, "front", &ev, "--window", "10ms", NULL);
	expect_text(db, "SELECT group_concat(((window_start - 1000000000) / 1000000) || ':' ||"
		    " requests || ':' || busy_avg || ':' || queue_depth_avg || ':' ||"
		    " queue_depth_max, ' ') FROM (SELECT * FROM pool_utilisation ORDER BY"
		    " window_start)", "10:1:0.3:0.1:1 20:0:0.0:0.0:0 30:1:0.1:0.3:1 40:0:0.0:0.0:0"
		    " 50:1:0.3:0.5:1");
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

/* Three servers' requests interleaved as the kernel would send them: on
 * each of 12 connections, 3 REQUEST_BATCHes of 1..8 requests and a
 * REQUEST, the connections' records mixed, and a connection on a reused
 * fd. */
static void interleaved(struct event_capture *ev)
{
	static const uint32_t pids[3] = { 700, 300, 500 };

	for (int round = 0; round < 4; round++)
		for (int c = 0; c < 12; c++) {
			uint32_t pid = pids[c % 3], n = round < 3 ? 1 + (c + round * 5) % 8 : 1;
			struct ev_request q[8];

			for (uint32_t i = 0; i < n; i++)
				q[i] = (struct ev_request){
					.cookie = 0x100u + (unsigned)c, .conn_ts = T(1 + c),
					.pid = pid, .tid = pid + 1 + (unsigned)(c + i) % 3,
					.fd = 10 + c / 6, .origin = c % 2 ? PC_REQUEST_ACCEPTED
									  : PC_REQUEST_SEEN,
					.number = (uint32_t)round * 8 + 1 + i,
					.start = T(100 * round + 8 * c + i), .end = T(100 * round + 8 * c + i) + 300000,
					.ready_ns = i % 2 ? 30 * MS : 0, .lower_ns = 2 * MS,
					.lport = 8080 };
			if (round < 3)
				ev_request_batch(ev, q, (uint8_t)n, (uint8_t)n);
			else
				ev_request(ev, q);
		}
}

/* The rows in the order they were written, every column, and the pool. */
static char *rows_of(sqlite3 *db)
{
	char *rows = query_text(db, "SELECT group_concat(r, char(10)) FROM (SELECT"
				" quote(pid) || quote(fd) || quote(conn) || quote(tids) || quote(request)"
				" || quote(pickup_tid) || quote(start_ts) || quote(end_ts) || quote(lower_ts)"
				" || quote(ready_ts) || quote(origin) || quote(ready_source) || quote(queue_ns)"
				" AS r FROM requests ORDER BY rowid)");
	char *pool = query_text(db, "SELECT group_concat(quote(pid) || quote(window_start) ||"
				" quote(requests) || quote(busy_avg) || quote(queue_depth_max), ' ')"
				" FROM (SELECT * FROM pool_utilisation ORDER BY rowid)");
	char *both = NULL;

	cr_assert(rows && pool && asprintf(&both, "%s\n%s", rows, pool) > 0);
	free(rows);
	free(pool);
	return both;
}

/* Past its memory the import sorts the records by process into runs on
 * disk and merges them, and the pool its readiness and pickup times: the
 * rows come out as from memory, in the same order, and the quality table
 * says how many runs there were. */
Test(kernel_requests, runs_on_disk_merge_as_memory_does)
{
	static struct event_capture ev;
	char *dir = scratch_dir(), *mem, *runs;
	sqlite3 *a, *b;

	ev_init(&ev, T(0), T(1000), "cpu,sched,block,waits,req");
	interleaved(&ev);
	a = import_events(dir, "memory", &ev, "--window", "100ms", NULL);
	setenv("PERFCAP_KREQ_RUN_BYTES", "600", 1);     /* one or two records a run */
	setenv("PERFCAP_POOL_RUN_TIMES", "8", 1);       /* the pool's times too */
	b = import_events(dir, "runs", &ev, "--window", "100ms", NULL);
	unsetenv("PERFCAP_KREQ_RUN_BYTES");
	unsetenv("PERFCAP_POOL_RUN_TIMES");
	expect_int(a, "SELECT count(*) FROM requests", 170);
	expect_int(b, "SELECT count(*) FROM requests", 170);
	expect_int(a, "SELECT value FROM quality WHERE key = 'requests.runs_on_disk'", 0);
	cr_expect_gt(query_int(b, "SELECT value FROM quality WHERE key = 'requests.runs_on_disk'"),
		     10);
	mem = rows_of(a);
	runs = rows_of(b);
	cr_expect_str_eq(runs, mem);
	cr_expect_gt(count_lines_with(mem, "'data_ready'"), 10);
	/* requests queue behind each other: the deepest queue needs the order */
	cr_expect_gt(query_int(a, "SELECT max(queue_depth_max) FROM pool_utilisation"), 1);
	free(mem);
	free(runs);
	sqlite3_close(a);
	sqlite3_close(b);
	ev_free(&ev);
	scratch_remove(dir);
}

/* Runs that cannot be written (no temporary directory) fail the import
 * with the reason, and leave no database behind. */
Test(kernel_requests, runs_that_cannot_be_written_fail_the_import)
{
	static struct event_capture ev;
	char *dir = scratch_dir();
	char *cap = scratch_path(dir, "runs.perfcap"), *db = scratch_path(dir, "runs.db");
	struct tool_result r;

	ev_init(&ev, T(0), T(1000), "cpu,sched,block,waits,req");
	interleaved(&ev);
	cr_assert_eq(build_event_capture(cap, &ev), 0);
	setenv("PERFCAP_KREQ_RUN_BYTES", "600", 1);
	setenv("TMPDIR", "/nonexistent/perfcap", 1);
	run_analyze(&r, "import", "--no-local-files", cap, "-o", db, NULL);
	unsetenv("TMPDIR");
	unsetenv("PERFCAP_KREQ_RUN_BYTES");
	cr_expect_neq(r.status, 0, "the import succeeded without its runs");
	cr_expect(strstr(r.err, "kernel requests: temporary file: No such file or directory"),
		  "stderr: %s", r.err);
	cr_expect_neq(access(db, F_OK), 0, "a database was left behind");
	tool_result_free(&r);
	ev_free(&ev);
	free(cap);
	free(db);
	scratch_remove(dir);
}

/* Requests followed in req windows (format 1.10) weigh their window's
 * period over its length, times the window's pace (1.16): what its
 * connections read over the period (their REQUEST_MARKs' read counts), in
 * requests of the sizes followed. Two 100-ms windows at 1 s and 2 s, the
 * recording ending at 3 s; requests of 100 bytes.
 *   First window (time weight 10):
 *   A  10 requests; read 1,000 at its first call, 21,000 at its first in
 *      the next window: 20,000 bytes, 200 requests;
 *   B  10 requests, no later mark (the connection at its socket's address
 *      later, D, is another): 10 x 10 by time;
 *   C  10 requests, its stream moved less than their bytes: 10 x 10 by
 *      time (1.15's marks, without a read count, are not used);
 *   E  opened in the window, 4 requests, closed in it having read 400: 4;
 *   D  opened between the windows, none followed in the first; 3,000
 *      bytes read at its first call in the second, whose requests of D
 *      are 200 bytes each: 15;
 *   2 connections opened and closed between windows read 3,000 bytes: at
 *      the window's 100 bytes a request, 30.
 *   (200 + 100 + 100 + 4 + 15 + 30) / 340 requests by time: pace 1.3206.
 *   Second (the last): A's 5 requests and no later mark (10 x 5 by time),
 *   D's 5 of 200 bytes and 1,000 read by the recording's end (5): pace
 *   55 / 100. */
Test(kernel_requests, the_connections_byte_streams_pace_the_windows)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	struct ev_request q = { .conn_ts = T(1), .pid = SERVER, .tid = SERVER_TID, .fd = 5,
				.origin = PC_REQUEST_SEEN, .lport = 8080 };
	sqlite3 *db;

	ev_init(&ev, T(0), T(3000), "req");
	ev_request_window(&ev, T(1000), 100 * MS, SEC, 34, 2, 3000, 0, 0);
	ev_request_mark(&ev, T(1001), 0xa, T(1), SERVER, 1000, PC_MARK_PERIOD);
	ev_request_mark(&ev, T(1001), 0xb, T(1), SERVER, 500, PC_MARK_PERIOD);
	ev_request_mark(&ev, T(1001), 0xc, T(1), SERVER, 5000, PC_MARK_PERIOD);
	ev_request_mark(&ev, T(1001), 0xa, T(1), SERVER, 1000, 0);   /* a 1.15 mark */
	for (uint32_t i = 0; i < 10; i++) {
		for (uint64_t cookie = 0xa; cookie <= 0xc; cookie++) {
			q.cookie = cookie, q.fd = 5 + (int32_t)(cookie - 0xa), q.number = 1 + i;
			q.start = T(1002 + 5 * i), q.end = q.start + MS;
			ev_request(&ev, &q);
		}
	}
	for (uint32_t i = 0; i < 4; i++) {
		struct ev_request e = q;

		e.cookie = 0xe, e.conn_ts = T(1010), e.fd = 9, e.number = 1 + i;
		e.origin = PC_REQUEST_ACCEPTED, e.start = T(1011 + 5 * i), e.end = e.start + MS;
		ev_request(&ev, &e);
	}
	ev_request_mark(&ev, T(1050), 0xe, T(1010), SERVER, 400, PC_MARK_CLOSE);
	ev_request_window(&ev, T(2000), 100 * MS, SEC, 10, 0, 0, 0, 0);
	ev_request_mark(&ev, T(2001), 0xa, T(1), SERVER, 21000, PC_MARK_PERIOD);
	ev_request_mark(&ev, T(2001), 0xc, T(1), SERVER, 5500, PC_MARK_PERIOD);
	/* D, at B's address, opened at 1.5 s */
	ev_request_mark(&ev, T(2001), 0xb, T(1500), SERVER, 3000, PC_MARK_PERIOD);
	ev_request_mark(&ev, T(3000), 0xb, T(1500), SERVER, 4000, PC_MARK_END);
	for (uint32_t i = 0; i < 5; i++) {
		struct ev_request d = q;

		q.cookie = 0xa, q.fd = 5, q.number = 11 + i;
		q.start = T(2002 + 5 * i), q.end = q.start + MS;
		ev_request(&ev, &q);
		d.cookie = 0xb, d.conn_ts = T(1500), d.fd = 6, d.number = 1 + i, d.bytes_in = 200;
		d.origin = PC_REQUEST_ACCEPTED, d.start = T(2003 + 5 * i), d.end = d.start + MS;
		ev_request(&ev, &d);
	}
	db = import_events(dir, "pace", &ev, NULL);
	expect_text(db, "SELECT group_concat(printf('%.4f', weight) || ' ' ||"
		    " CASE WHEN pace IS NULL THEN 'none' ELSE printf('%.4f', pace) END, '|')"
		    " FROM (SELECT * FROM request_windows ORDER BY start_ts)",
		    "13.2059 1.3206|5.5000 0.5500");
	expect_int(db, "SELECT round(total(w.weight)) FROM requests r JOIN request_windows w"
		   " ON w.start_ts = r.window_ts", 449 + 55);
	expect_int(db, "SELECT count(*) FROM request_marks", 9);
	expect_int(db, "SELECT count(*) FROM request_marks WHERE read IS NULL AND kind IS NULL", 1);
	expect_text(db, "SELECT group_concat(gap_conns || ' ' || gap_bytes, '|') FROM"
		    " (SELECT * FROM request_windows ORDER BY start_ts)", "2 3000|0 0");
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

/* With the streams' snapshots at the period's start and end (format
 * 1.16, REQUEST_MARK kind snapshot, written for the connections that moved
 * since the last one), each connection's bytes over the period run from
 * where it was at the start to where it was at the end, quiet ones
 * included. One 100-ms window at 1 s (time weight 10), requests of 100
 * bytes:
 *   A  10 requests; 1,000 at the start, 6,000 at the end: 50;
 *   Q  10 requests, then quiet (no call in the next second, open): 500 at
 *      the start, 1,500 at the end: its 10 (by its calls' marks it would
 *      have had no end, and time would have counted 100);
 *   G  opened at 1.5 s, no request followed, 2,000 at the end: 20 at the
 *      window's 100 bytes a request.
 *   (50 + 10 + 20) / 200 by time: pace 0.4. */
Test(kernel_requests, the_streams_snapshots_bound_quiet_connections)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	struct ev_request q = { .conn_ts = T(1), .pid = SERVER, .tid = SERVER_TID, .fd = 5,
				.origin = PC_REQUEST_SEEN, .lport = 8080 };
	sqlite3 *db;

	ev_init(&ev, T(0), T(2500), "req");
	ev_request_window(&ev, T(1000), 100 * MS, SEC, 20, 0, 0, T(1000), T(2000));
	ev_request_mark(&ev, T(1000), 0xa, T(1), SERVER, 1000, PC_MARK_SNAP);
	ev_request_mark(&ev, T(1000), 0xb, T(1), SERVER, 500, PC_MARK_SNAP);
	for (uint32_t i = 0; i < 10; i++) {
		for (uint64_t cookie = 0xa; cookie <= 0xb; cookie++) {
			q.cookie = cookie, q.fd = 5 + (int32_t)(cookie - 0xa), q.number = 1 + i;
			q.start = T(1002 + 5 * i), q.end = q.start + MS;
			ev_request(&ev, &q);
		}
	}
	ev_request_mark(&ev, T(2000), 0xa, T(1), SERVER, 6000, PC_MARK_SNAP);
	ev_request_mark(&ev, T(2000), 0xb, T(1), SERVER, 1500, PC_MARK_SNAP);
	ev_request_mark(&ev, T(2000), 0xc, T(1500), SERVER, 2000, PC_MARK_SNAP);
	db = import_events(dir, "snaps", &ev, NULL);
	expect_text(db, "SELECT printf('%.4f %.4f', weight, pace) FROM request_windows", "4.0000 0.4000");
	expect_int(db, "SELECT count(*) FROM request_marks WHERE kind = 'snapshot'", 5);
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}
