/* test_views.c - the aggregate views over event tables, each on a
 * synthetic capture with exact answers: futex waits per address and op
 * (futex_calls, futex_waits, futex_contention) and block I/O per device and
 * per submitting thread (block_io_by_device, block_io_by_thread), request
 * spans, their queueing and the pool's use per window (request_spans,
 * request_queueing, pool_utilisation) and what the threads serving the
 * slowest requests did (slow_request_samples).
 * Percentiles are nearest-rank: the value at rank ceil(p * n / 100). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture_builder.h"
#include "db_check.h"
#include "event_builder.h"
#include "run_tool.h"

#define T(ms) (SEC + (uint64_t)(ms) * MS)
enum { NR_READ = 0, NR_FUTEX = 202 };
enum { F_WAIT = 0, F_WAKE = 1, F_REQUEUE = 3, F_WAIT_BITSET = 9, F_WAKE_BITSET = 10,
       F_PRIVATE = 128 };
#define ADDR_A 0x7f0000001000ull
#define ADDR_B 0x7f0000002000ull
#define ADDR_C 0x7f0000003000ull

/* pid 200, address A: tids 201 (1..4 ms, STACK_A), 202 (5..8 ms, STACK_B),
 * 203 (9 and 100 ms, no stack) wait with private FUTEX_WAIT; 205 waits
 * 50 ms with FUTEX_WAIT_BITSET and times out; 204 wakes 1, 2, 0 with
 * private FUTEX_WAKE and 1 with FUTEX_WAKE_BITSET. Address B: 206 waits
 * 1 s. Address C: one FUTEX_REQUEUE. pid 300 waits 7 ms on address A (its
 * own). A read is not a futex call. */
static void futex_workload(struct event_capture *ev)
{
	uint64_t t = T(0);
	static const struct { uint32_t tid, ms, stack; } waits[] = {
		{ 201, 1, STACK_A }, { 201, 2, STACK_A }, { 201, 3, STACK_A },
		{ 201, 4, STACK_A }, { 202, 5, STACK_B }, { 202, 6, STACK_B },
		{ 202, 7, STACK_B }, { 202, 8, STACK_B }, { 203, 9, PC_STACK_NONE },
		{ 203, 100, PC_STACK_NONE },
	};
	static const int64_t woke[] = { 1, 2, 0 };

	ev_init(ev, T(0), T(5000), "cpu,sched,syscall");
	for (size_t i = 0; i < sizeof(waits) / sizeof(waits[0]); i++) {
		ev_syscall_stack(ev, t, waits[i].ms * MS, 200, waits[i].tid, NR_FUTEX, 0,
				 ADDR_A, F_WAIT | F_PRIVATE, 1, waits[i].stack);
		t += waits[i].ms * MS + MS;
	}
	for (size_t i = 0; i < 3; i++, t += 2 * MS)
		ev_syscall(ev, t, 10000, 200, 204, NR_FUTEX, woke[i], ADDR_A,
			   F_WAKE | F_PRIVATE, 1);
	ev_syscall(ev, t, 50 * MS, 200, 205, NR_FUTEX, -110, ADDR_A, F_WAIT_BITSET, 1);
	t += 51 * MS;
	ev_syscall(ev, t, 10000, 200, 204, NR_FUTEX, 1, ADDR_A, F_WAKE_BITSET, 1);
	t += MS;
	ev_syscall(ev, t, 1000 * MS, 200, 206, NR_FUTEX, 0, ADDR_B, F_WAIT | F_PRIVATE, 2);
	t += 1001 * MS;
	ev_syscall(ev, t, 10000, 200, 204, NR_FUTEX, 0, ADDR_C, F_REQUEUE | F_PRIVATE, 1);
	t += MS;
	ev_syscall(ev, t, 7 * MS, 300, 301, NR_FUTEX, -11, ADDR_A, F_WAIT, 1);
	t += 8 * MS;
	ev_syscall(ev, t, MS, 200, 201, NR_READ, 10, 3, ADDR_A, 10);
}

Test(views, futex_waits_per_address_and_op)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	futex_workload(&ev);
	db = import_events(dir, "futex", &ev, NULL);
	expect_int(db, "SELECT count(*) FROM futex_calls", 18);
	expect_int(db, "SELECT count(*) FROM futex_calls WHERE private", 15);
	expect_text(db, "SELECT group_concat(pid || ':' || printf('%x', addr) || ':' || op_name"
		    " || ':' || kind, ' ') FROM futex_waits",
		    "200:7f0000001000:FUTEX_WAIT:wait 200:7f0000001000:FUTEX_WAKE:wake"
		    " 200:7f0000001000:FUTEX_WAIT_BITSET:wait"
		    " 200:7f0000001000:FUTEX_WAKE_BITSET:wake 200:7f0000002000:FUTEX_WAIT:wait"
		    " 200:7f0000003000:op_3:other 300:7f0000001000:FUTEX_WAIT:wait");
	/* 10 waits of 1..9 and 100 ms: p50 = rank 5, p99 = rank 10. */
	expect_text(db, "SELECT tids || ' ' || calls || ' ' || waits || ' ' || wait_ns || ' '"
		    " || wait_p50 || ' ' || wait_p99 || ' ' || wait_max || ' ' || wake_calls"
		    " || ' ' || ifnull(woken, 'null') || ' ' || errors || ' ' || ustack_ids"
		    " FROM futex_waits WHERE pid = 200 AND addr = 0x7f0000001000 AND op = 0",
		    "201,202,203 10 10 145000000 5000000 100000000 100000000 0 null 0 0,1");
	expect_text(db, "SELECT tids || ' ' || calls || ' ' || waits || ' '"
		    " || ifnull(wait_ns, 'null') || ' ' || ifnull(wait_p50, 'null') || ' '"
		    " || wake_calls || ' ' || woken || ' ' || ifnull(ustack_ids, 'null')"
		    " FROM futex_waits WHERE pid = 200 AND addr = 0x7f0000001000 AND op = 1",
		    "204 3 0 null null 3 3 null");
	expect_text(db, "SELECT tids || ' ' || waits || ' ' || wait_ns || ' ' || wait_p99"
		    " || ' ' || errors FROM futex_waits WHERE op = 9",
		    "205 1 50000000 50000000 1");
	expect_text(db, "SELECT wake_calls || ' ' || woken FROM futex_waits WHERE op = 10", "1 1");
	expect_text(db, "SELECT calls || ' ' || waits || ' ' || wake_calls || ' '"
		    " || ifnull(woken, 'null') FROM futex_waits WHERE op = 3", "1 0 0 null");
	expect_text(db, "SELECT tids || ' ' || errors FROM futex_waits WHERE pid = 300",
		    "301 1");
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

Test(views, futex_contention_per_address)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	futex_workload(&ev);
	db = import_events(dir, "contention", &ev, NULL);
	/* Ordered by total wait: B (1 s), A in pid 200 (195 ms), A in pid 300;
	 * C had no wait or wake. */
	expect_text(db, "SELECT group_concat(pid || ':' || printf('%x', addr) || ':' || wait_ns,"
		    " ' ') FROM futex_contention",
		    "200:7f0000002000:1000000000 200:7f0000001000:195000000"
		    " 300:7f0000001000:7000000");
	/* 11 waits: 1..9, 50, 100 ms; p50 = rank 6, p99 = rank 11. */
	expect_text(db, "SELECT waiters || ' ' || waiter_tids || ' ' || waits || ' '"
		    " || wait_p50 || ' ' || wait_p99 || ' ' || wait_max || ' ' || wake_calls"
		    " || ' ' || woken || ' ' || waker_tids || ' ' || wait_ustack_ids"
		    " FROM futex_contention WHERE pid = 200 AND addr = 0x7f0000001000",
		    "4 201,202,203,205 11 6000000 100000000 100000000 4 4 204 0,1");
	expect_text(db, "SELECT waiters || ' ' || waits || ' ' || wait_p50 || ' ' || wait_p99"
		    " || ' ' || wake_calls || ' ' || woken || ' ' || ifnull(waker_tids, 'null')"
		    " || ' ' || ifnull(wait_ustack_ids, 'null')"
		    " FROM futex_contention WHERE addr = 0x7f0000002000",
		    "1 1 1000000000 1000000000 0 0 null null");
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

#define DEV(maj, min) ((uint32_t)(maj) << 20 | (uint32_t)(min))

/* 8:0: tid 301 submits 4 requests (queue 1..4 ms, service 10..40 ms,
 * 4 KiB, the first a read, the others writes), tid 302 one 8 KiB read
 * (queue 5 ms, service 1 s). 8:16: tid 302 two 512-byte writes
 * (service 7 and 3 ms, no queue). 259:0: tid 303 100 reads of service
 * 1..100 ms. */
static void block_workload(struct event_capture *ev)
{
	uint64_t t = T(2000);

	ev_init(ev, T(0), T(5000), "cpu,sched,block");
	for (uint32_t i = 1; i <= 4; i++, t += MS)
		ev_block(ev, t, i * MS, i * 10 * MS, 300, 301, DEV(8, 0), i == 1 ? 0 : 1,
			 i * 8, 4096);
	ev_block(ev, t, 5 * MS, 1000 * MS, 300, 302, DEV(8, 0), 0, 100, 8192);
	t += MS;
	ev_block(ev, t, 0, 7 * MS, 300, 302, DEV(8, 16), 1, 0, 512);
	t += MS;
	ev_block(ev, t, 0, 3 * MS, 300, 302, DEV(8, 16), 1, 8, 512);
	t += MS;
	for (uint32_t i = 100; i >= 1; i--, t += MS)
		ev_block(ev, t, 0, i * MS, 300, 303, DEV(259, 0), 0, i, 4096);
}

Test(views, block_io_by_device)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	block_workload(&ev);
	db = import_events(dir, "blockdev", &ev, NULL);
	cr_assert_eq(query_int(db, "SELECT count(*) FROM block_io WHERE tid = 302"), 3);
	expect_text(db, "SELECT group_concat(dev_name || ':' || requests, ' ')"
		    " FROM block_io_by_device", "8:0:5 8:16:2 259:0:100");
	/* 8:0: queue 1..5 ms (p50 rank 3, p99 rank 5), service 10, 20, 30,
	 * 40, 1000 ms. */
	expect_text(db, "SELECT reads || ' ' || writes || ' ' || bytes || ' ' || queue_ns"
		    " || ' ' || queue_p50 || ' ' || queue_p99 || ' ' || service_ns || ' '"
		    " || service_p50 || ' ' || service_p99 FROM block_io_by_device"
		    " WHERE dev_name = '8:0'",
		    "2 3 24576 15000000 3000000 5000000 1100000000 30000000 1000000000");
	/* 8:16: two requests, p50 rank 1, p99 rank 2. */
	expect_text(db, "SELECT queue_ns || ' ' || queue_p50 || ' ' || queue_p99 || ' '"
		    " || service_ns || ' ' || service_p50 || ' ' || service_p99"
		    " FROM block_io_by_device WHERE dev_name = '8:16'",
		    "0 0 0 10000000 3000000 7000000");
	/* 259:0: service 1..100 ms: p50 = 50 ms, p99 = 99 ms. */
	expect_text(db, "SELECT service_ns || ' ' || service_p50 || ' ' || service_p99"
		    " || ' ' || bytes FROM block_io_by_device WHERE dev_name = '259:0'",
		    "5050000000 50000000 99000000 409600");
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

Test(views, block_io_by_thread)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	block_workload(&ev);
	db = import_events(dir, "blockthread", &ev, NULL);
	expect_text(db, "SELECT group_concat(pid || '/' || tid || '@' || dev_name || ':'"
		    " || requests, ' ') FROM block_io_by_thread",
		    "300/301@8:0:4 300/302@8:0:1 300/302@8:16:2 300/303@259:0:100");
	/* 301 on 8:0: queue 1..4 ms (p50 rank 2, p99 rank 4), service 10..40. */
	expect_text(db, "SELECT reads || ' ' || writes || ' ' || bytes || ' ' || queue_ns"
		    " || ' ' || queue_p50 || ' ' || queue_p99 || ' ' || service_ns || ' '"
		    " || service_p50 || ' ' || service_p99 FROM block_io_by_thread"
		    " WHERE tid = 301",
		    "1 3 16384 10000000 2000000 4000000 100000000 20000000 40000000");
	expect_text(db, "SELECT queue_p50 || ' ' || service_p99 || ' ' || bytes"
		    " FROM block_io_by_thread WHERE tid = 302 AND dev_name = '8:0'",
		    "5000000 1000000000 8192");
	expect_int(db, "SELECT sum(requests) FROM block_io_by_thread", 107);
	expect_int(db, "SELECT sum(errors) FROM block_io_by_thread", 0);
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

enum { NR_WRITE = 1, NR_CLOSE = 3 };

/* pid 400. fd 5 accepted (cookie 0xa1) at 100 ms: request 1 by tid 401
 * (reads 100 + 50 bytes from 101 ms, writes 200 + 300 bytes, last returns
 * at 114 ms), request 2 by tid 402 (an EAGAIN read is not part of it; read
 * 80 at 121, write 90 returning at 131), then EOF and close at 141. fd 5
 * reused (cookie 0xb2) at 150: read 10 at 151, write 20 returning at 161,
 * read 5 at 170 never answered. fd 5 accepted again (0xc3) at 200 with no
 * close seen: a write with no read before it, then read 9 at 202, write
 * 11 returning at 206. fd 3 (no sockets row) is not a socket. */
static void request_workload(struct event_capture *ev)
{
	ev_init(ev, T(0), T(1000), "cpu,sched,syscall,net");
	ev_socket_v4(ev, T(100), 400, 401, 5, PC_SOCK_F_ACCEPTED, "10.0.0.1", 80,
		     "10.0.0.2", 40000, 0xa1);
	ev_syscall(ev, T(101), MS, 400, 401, NR_READ, 100, 5, 0, 4096);
	ev_syscall(ev, T(103), MS, 400, 401, NR_READ, 50, 5, 0, 4096);
	ev_syscall(ev, T(110), 2 * MS, 400, 401, NR_WRITE, 200, 5, 0, 200);
	ev_syscall(ev, T(113), MS, 400, 401, NR_WRITE, 300, 5, 0, 300);
	ev_syscall(ev, T(115), MS, 400, 401, NR_READ, 7, 3, 0, 4096);
	ev_syscall(ev, T(116), MS, 400, 401, NR_WRITE, 7, 3, 0, 7);
	ev_syscall(ev, T(120), MS, 400, 402, NR_READ, -11, 5, 0, 4096);
	ev_syscall(ev, T(121), MS, 400, 402, NR_READ, 80, 5, 0, 4096);
	ev_syscall(ev, T(130), MS, 400, 402, NR_WRITE, 90, 5, 0, 90);
	ev_syscall(ev, T(140), MS, 400, 402, NR_READ, 0, 5, 0, 4096);
	ev_syscall(ev, T(141), MS, 400, 402, NR_CLOSE, 0, 5, 0, 0);
	ev_socket_v4(ev, T(150), 400, 401, 5, PC_SOCK_F_ACCEPTED, "10.0.0.1", 80,
		     "10.0.0.3", 40001, 0xb2);
	ev_syscall(ev, T(151), MS, 400, 401, NR_READ, 10, 5, 0, 4096);
	ev_syscall(ev, T(160), MS, 400, 401, NR_WRITE, 20, 5, 0, 20);
	ev_syscall(ev, T(170), MS, 400, 401, NR_READ, 5, 5, 0, 4096);
	ev_socket_v4(ev, T(200), 400, 402, 5, PC_SOCK_F_ACCEPTED, "10.0.0.1", 80,
		     "10.0.0.4", 40002, 0xc3);
	ev_syscall(ev, T(201), MS, 400, 402, NR_WRITE, 7, 5, 0, 7);
	ev_syscall(ev, T(202), MS, 400, 402, NR_READ, 9, 5, 0, 4096);
	ev_syscall(ev, T(205), MS, 400, 402, NR_WRITE, 11, 5, 0, 11);
}

Test(views, request_spans_keep_alive_and_fd_reuse)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	request_workload(&ev);
	db = import_events(dir, "requests", &ev, NULL);
	expect_int(db, "SELECT count(*) FROM request_spans", 4);
	expect_text(db, "SELECT group_concat(printf('%x', cookie) || '#' || request || ' '"
		    " || tids || ' ' || ((start_ts - 1000000000) / 1000000) || '-'"
		    " || ((first_write_ts - 1000000000) / 1000000) || '-'"
		    " || ((end_ts - 1000000000) / 1000000) || ' ' || service_ns || ' '"
		    " || bytes_in || '/' || bytes_out || ' ' || reads || 'r' || writes || 'w',"
		    " '; ') FROM request_spans",
		    "a1#1 401 101-110-114 13000000 150/500 2r2w; "
		    "a1#2 402 121-130-131 10000000 80/90 1r1w; "
		    "b2#1 401 151-160-161 10000000 10/20 1r1w; "
		    "c3#1 402 202-205-206 4000000 9/11 1r1w");
	expect_int(db, "SELECT count(DISTINCT fd) FROM request_spans", 1);
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

/* A request handled by three threads, out of thread order: tids lists
 * them distinct and ascending, comma-separated (as group_concat did). */
Test(views, request_spans_threads_listed)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	ev_init(&ev, T(0), T(1000), "cpu,sched,syscall,net");
	ev_socket_v4(&ev, T(100), 500, 1502, 6, PC_SOCK_F_ACCEPTED, "10.0.0.1", 80,
		     "10.0.0.2", 40000, 0xd4);
	ev_syscall(&ev, T(101), MS, 500, 1502, NR_READ, 10, 6, 0, 4096);
	ev_syscall(&ev, T(102), MS, 500, 99999, NR_READ, 10, 6, 0, 4096);
	ev_syscall(&ev, T(103), MS, 500, 1502, NR_READ, 10, 6, 0, 4096);
	ev_syscall(&ev, T(104), MS, 500, 1501, NR_WRITE, 30, 6, 0, 30);
	db = import_events(dir, "threads", &ev, NULL);
	expect_text(db, "SELECT tids || ' ' || pickup_tid || ' ' || reads || 'r' || writes || 'w'"
		    " FROM requests",
		    "1501,1502,99999 1502 3r1w");
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

enum { NR_NANOSLEEP = 35, NR_EPOLL_WAIT = 232 };

/* A request on (fd) read by TID at PICKUP ms (1 ms) and answered by a
 * write that returns at END ms. */
static void serve(struct event_capture *ev, uint32_t tid, int32_t fd, uint64_t pickup,
		  uint64_t end)
{
	ev_syscall(ev, T(pickup), MS, 500, tid, NR_READ, 64, (uint64_t)fd, 0, 4096);
	ev_syscall(ev, T(end - 1), MS, 500, tid, NR_WRITE, 32, (uint64_t)fd, 0, 32);
}

/* A poll family call of TID returning RET at END ms (10 ms long). */
static void poll_return(struct event_capture *ev, uint32_t tid, uint64_t end, int64_t ret)
{
	ev_syscall(ev, T(end - 10), 10 * MS, 500, tid, NR_EPOLL_WAIT, ret, 4, 0, 16);
}

/* pid 500: acceptor 501, workers 502 and 503; windows of 1 s from T(0).
 * fd 7 accepted at 100 ms: #1 picked up by 502 at 130 (ready at the
 * accept), #2 by 503 at 175 after its own epoll_wait returned at 170, #3
 * by 502 at 210 after 501's epoll_waits returned at 200 and 205 (the
 * first counts), #4 by 503 at 240 with no poll since #3 ended at 220 (a
 * poll returning 0 at 230 is a timeout, not readiness). fd 8 and 9
 * accepted at 300 and 310, picked up at 340 and 350 (two waiting from 310
 * to 340), served until 380 and 390. Second window: fd 10 accepted at
 * 1400, picked up at 1450; fd 11 connected (not accepted) at 1500, read at
 * 1510: no readiness known. Service (ms): 20 15 10 10 40 40 10 10, p90 =
 * 40: fd 8 and 9 are the slowest. While serving them: 502 sampled at 345
 * and 360 (and 395, after), 503 at 355, 501 at 360 (not serving); 502
 * sleeps 362..372 in nanosleep, 503 is off CPU in D state 380..395. */
static void queue_workload(struct event_capture *ev)
{
	ev_init(ev, T(0), T(2000), "cpu,sched,syscall,net,mux");
	ev_socket_v4(ev, T(100), 500, 501, 7, PC_SOCK_F_ACCEPTED, "10.0.0.1", 80,
		     "10.0.0.2", 41000, 0xd1);
	serve(ev, 502, 7, 130, 150);
	poll_return(ev, 503, 170, 1);
	serve(ev, 503, 7, 175, 190);
	poll_return(ev, 501, 200, 1);
	poll_return(ev, 501, 205, 2);
	serve(ev, 502, 7, 210, 220);
	poll_return(ev, 501, 230, 0);
	serve(ev, 503, 7, 240, 250);
	ev_socket_v4(ev, T(300), 500, 501, 8, PC_SOCK_F_ACCEPTED, "10.0.0.1", 80,
		     "10.0.0.3", 41001, 0xd2);
	ev_socket_v4(ev, T(310), 500, 501, 9, PC_SOCK_F_ACCEPTED, "10.0.0.1", 80,
		     "10.0.0.4", 41002, 0xd3);
	ev_sample(ev, T(345), 500, 502);
	ev_sample(ev, T(355), 500, 503);
	ev_sample(ev, T(360), 500, 502);
	ev_sample(ev, T(360), 500, 501);
	ev_offcpu(ev, T(372), 10 * MS, 500, 502, 1, PC_STACK_NONE, PC_STACK_NONE, 0);
	ev_syscall(ev, T(361), 12 * MS, 500, 502, NR_NANOSLEEP, 0, 0, 0, 0);
	ev_syscall(ev, T(340), MS, 500, 502, NR_READ, 64, 8, 0, 4096);
	ev_syscall(ev, T(350), MS, 500, 503, NR_READ, 64, 9, 0, 4096);
	ev_syscall(ev, T(379), MS, 500, 502, NR_WRITE, 32, 8, 0, 32);
	ev_syscall(ev, T(389), MS, 500, 503, NR_WRITE, 32, 9, 0, 32);
	ev_offcpu(ev, T(395), 15 * MS, 500, 503, 2, PC_STACK_NONE, PC_STACK_NONE, 0);
	ev_sample(ev, T(395), 500, 502);
	ev_socket_v4(ev, T(1400), 500, 501, 10, PC_SOCK_F_ACCEPTED, "10.0.0.1", 80,
		     "10.0.0.5", 41003, 0xd4);
	serve(ev, 502, 10, 1450, 1460);
	ev_socket_v4(ev, T(1500), 500, 503, 11, PC_SOCK_F_CONNECTED, "10.0.0.1", 42000,
		     "10.0.0.9", 80, 0xd5);
	serve(ev, 503, 11, 1510, 1520);
}

Test(views, request_queueing_readiness)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	queue_workload(&ev);
	db = import_events(dir, "queueing", &ev, NULL);
	expect_int(db, "SELECT count(*) FROM request_queueing", 8);
	expect_int(db, "SELECT count(*) FROM request_spans", 8);
	/* fd#request ready_source ready-pickup(tid)-end queue service, in ms */
	expect_text(db, "SELECT group_concat(fd || '#' || request || ' ' || ifnull(ready_source,"
		    " 'none') || ' ' || ifnull((ready_ts - 1000000000) / 1000000, '-') || '-'"
		    " || ((pickup_ts - 1000000000) / 1000000) || '(' || pickup_tid || ')-'"
		    " || ((end_ts - 1000000000) / 1000000) || ' ' || ifnull(queue_ns / 1000000, '-')"
		    " || ' ' || (service_ns / 1000000), '; ') FROM request_queueing",
		    "7#1 accept 100-130(502)-150 30 20; "
		    "7#2 poll 170-175(503)-190 5 15; "
		    "7#3 poll_other 200-210(502)-220 10 10; "
		    "7#4 previous_response 220-240(503)-250 20 10; "
		    "8#1 accept 300-340(502)-380 40 40; "
		    "9#1 accept 310-350(503)-390 40 40; "
		    "10#1 accept 1400-1450(502)-1460 50 10; "
		    "11#1 none --1510(503)-1520 - 10");
	expect_text(db, "SELECT group_concat(origin || ':' || printf('%x', cookie), ' ')"
		    " FROM request_queueing WHERE request = 1",
		    "accepted:d1 accepted:d2 accepted:d3 accepted:d4 connected:d5");
	/* sojourn = end - ready */
	expect_int(db, "SELECT sojourn_ns FROM request_queueing WHERE fd = 8", 80 * MS);
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

Test(views, pool_utilisation_per_window)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	queue_workload(&ev);
	db = import_events(dir, "pool", &ev, NULL);
	/* Window 1: served 20+15+10+10+40+40 = 135 ms, waited 30+5+10+20+40+40
	 * = 145 ms (mean 24.17 ms), 2 waiting from 310 to 340. Window 2: served
	 * 10 ms, waited 50 ms (fd 11, a client connection, is not served). */
	expect_text(db, "SELECT group_concat(((window_start - 1000000000) / 1000000) || '-'"
		    " || ((window_end - 1000000000) / 1000000) || ' ' || workers || ' ' || requests"
		    " || ' ' || busy_avg || ' ' || utilisation || ' ' || queue_depth_avg || ' '"
		    " || queue_depth_max || ' ' || queue_mean_ns, '; ') FROM pool_utilisation",
		    "0-1000 2 6 0.135 0.0675 0.145 2 24166666; "
		    "1000-2000 2 1 0.01 0.005 0.05 1 50000000");
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

Test(views, pool_utilisation_follows_import_window)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	queue_workload(&ev);
	ev.end_ns = T(1480);
	db = import_events(dir, "pool500", &ev, "--window", "500ms", NULL);
	/* [0, 500) holds all of window 1's requests (135 ms served, 145 ms
	 * waited); nothing in [500, 1000); [1000, 1500): fd 10 waits 50 ms
	 * and is served 10 ms, of the 480 ms before the capture ended at
	 * 1480; no window after its end at 1460 (fd 11 is a client
	 * connection). */
	expect_text(db, "SELECT group_concat(((window_start - 1000000000) / 1000000) || ':'"
		    " || requests || ':' || busy_avg || ':' || queue_depth_avg || ':'"
		    " || queue_depth_max, ' ') FROM pool_utilisation",
		    "0:6:0.27:0.29:2 500:0:0.0:0.0:0 1000:1:0.020833:0.104167:1");
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

Test(views, slow_request_samples)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	queue_workload(&ev);
	db = import_events(dir, "slow", &ev, NULL);
	expect_int(db, "SELECT DISTINCT service_p90 FROM slow_request_samples", 40 * MS);
	/* fd tid kind at-ms [off-CPU ms, wait class] */
	expect_text(db, "SELECT group_concat(fd || ' ' || tid || ' ' || kind || ' '"
		    " || ((ts - 1000000000) / 1000000) || ifnull(' ' || (duration / 1000000) || ' '"
		    " || wait_class, ''), '; ') FROM slow_request_samples",
		    "8 502 cpu 345; 8 502 cpu 360; 8 502 offcpu 362 10 sleep; "
		    "9 503 cpu 355; 9 503 offcpu 380 10 block_io");
	expect_int(db, "SELECT count(DISTINCT printf('%x', cookie) || request)"
		   " FROM slow_request_samples", 2);
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}

/* The recorder files a system call under the source whose syscall set has
 * it (mux, lock, net, mem, in that order; syscall gets the rest), so
 * data_quality counts each imported SYSCALL record for that source: here
 * 3 futex calls for lock, 2 epoll_wait calls for mux, 1 read for syscall,
 * each side by side with the recorder's own count. */
Test(views, data_quality_files_syscalls_under_their_source)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	sqlite3 *db;

	ev_init(&ev, T(0), T(100), "syscall,mux,lock");
	pc_buf_add_kv(&ev.meta, "syscall.set", "read,write");
	pc_buf_add_kv(&ev.meta, "syscall.set.mux", "epoll_wait,poll");
	pc_buf_add_kv(&ev.meta, "syscall.set.lock", "futex");
	pc_buf_add_kv_u64(&ev.stats, "lock.events", 3);
	pc_buf_add_kv_u64(&ev.stats, "mux.events", 2);
	pc_buf_add_kv_u64(&ev.stats, "syscall.events", 1);
	for (int i = 0; i < 3; i++)
		ev_syscall(&ev, T(10 + i), MS / 2, 100, 101, 202, 0, 0x7000, 0, 0);
	for (int i = 0; i < 2; i++)
		ev_syscall(&ev, T(20 + i), MS / 2, 100, 101, 232, 0, 3, 0, 0);
	ev_syscall(&ev, T(30), MS / 2, 100, 101, 0, 10, 3, 0x1000, 10);
	db = import_events(dir, "owners", &ev, NULL);
	expect_text(db, "SELECT group_concat(source || ':' || recorded || '/' || imported, ' ')"
		    " FROM data_quality WHERE source IN ('lock', 'mux', 'syscall')",
		    "lock:3/3 mux:2/2 syscall:1/1");
	expect_int(db, "SELECT value FROM quality WHERE source = 'lock'"
		   " AND key = 'records.syscall'", 3);
	sqlite3_close(db);
	ev_free(&ev);
	scratch_remove(dir);
}
