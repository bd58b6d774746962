/* test_record_units.c - unit tests of the recorder's building blocks,
 * linked against the record/ and common/ libraries: the u64 table, address
 * lists, stack deduplication, --max-size decisions, the flight ring, the
 * source registry (-e) and its user probes, syscall names and sets, the
 * writer thread's spare pools, the consumer's thread names
 * (one THREAD record per thread and name), the stack-copy scan's caches
 * (a word seen before the library it points into was mapped is noted once
 * the maps grow), /proc's thread walk and switch counts, and the shared number
 * parsing and formatting of common/units.c. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <arpa/inet.h>

#include "common/event_sources.h"
#include "common/units.h"
#include "output/writer_thread.h"
#include "consume/consumer.h"
#include "consume/ustack_scan.h"
#include "consume/stack_table.h"
#include "output/flight_ring.h"
#include "output/host_cpu.h"
#include "output/size_limit.h"
#include "sources/probe_spec.h"
#include "sources/source.h"
#include "sources/syscall_sets.h"
#include "util/addr_list.h"
#include "util/procinfo.h"
#include "util/sockinfo.h"
#include "util/u64_table.h"

/* ---- util/ --------------------------------------------------------------- */

Test(u64_table, put_get_replace_and_grow)
{
	struct u64_table t = { 0 };

	cr_assert_eq(u64_table_get(&t, 7), U64_TABLE_EMPTY);
	cr_assert_eq(u64_table_put(&t, 7, 70), 0);
	cr_assert_eq(u64_table_put(&t, 0, 1), 0);
	cr_assert_eq(u64_table_get(&t, 7), 70);
	cr_assert_eq(u64_table_get(&t, 0), 1);
	cr_assert_eq(u64_table_put(&t, 7, 71), 0);
	cr_assert_eq(u64_table_get(&t, 7), 71);
	cr_assert_eq(t.used, 2);
	for (uint64_t k = 100; k < 10100; k++)
		cr_assert_eq(u64_table_put(&t, k << 20, (uint32_t)k), 0);
	cr_assert_eq(t.used, 10002);
	for (uint64_t k = 100; k < 10100; k++)
		cr_assert_eq(u64_table_get(&t, k << 20), (uint32_t)k);
	cr_assert_eq(u64_table_get(&t, 99ull << 20), U64_TABLE_EMPTY);
	u64_table_free(&t);
}

Test(addr_list, sort_unique)
{
	static const uint64_t in[] = { 30, 10, 20, 10, 30, 5, 20 };
	struct addr_list l = { 0 };

	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		cr_assert_eq(addr_list_add(&l, in[i]), 0);
	addr_list_sort_unique(&l);
	cr_assert_eq(l.n, 4);
	cr_assert_eq(l.v[0], 5);
	cr_assert_eq(l.v[1], 10);
	cr_assert_eq(l.v[2], 20);
	cr_assert_eq(l.v[3], 30);
	addr_list_free(&l);
}

/* ---- consume/stack_table ----------------------------------------------- */

Test(stack_table, same_stack_same_id)
{
	static const uint64_t a[] = { 0x1000, 0x2000, 0x3000 }, b[] = { 0x1000, 0x2000 };
	struct stack_table t = { 0 };
	bool is_new;

	cr_assert_eq(stack_table_intern(&t, PC_STACK_USER, 1, 10, 0, a, 3, &is_new), 0);
	cr_assert(is_new);
	cr_assert_eq(stack_table_intern(&t, PC_STACK_USER, 1, 10, 0, b, 2, &is_new), 1);
	cr_assert(is_new);
	cr_assert_eq(stack_table_intern(&t, PC_STACK_USER, 1, 10, 0, a, 3, &is_new), 0);
	cr_assert_not(is_new);
	/* another address space, kind or flags is another stack */
	cr_assert_eq(stack_table_intern(&t, PC_STACK_USER, 2, 10, 0, a, 3, &is_new), 2);
	cr_assert_eq(stack_table_intern(&t, PC_STACK_KERNEL, 0, 0, 0, a, 3, &is_new), 3);
	cr_assert_eq(stack_table_intern(&t, PC_STACK_USER, 1, 10, 1, a, 3, &is_new), 4);
	cr_assert(is_new);
	cr_assert_eq(t.n, 5);
	cr_assert_eq(t.nips, 14);   /* 3 + 2 + 3 + 3 + 3: a known stack adds none */
	cr_assert_eq(stack_table_ips(&t, 1)[1], 0x2000);
	cr_assert_eq(t.entries[2].aspace, 2);
	stack_table_free(&t);
}

Test(stack_table, many_distinct_stacks)
{
	struct stack_table t = { 0 };
	bool is_new;

	for (uint64_t i = 0; i < 5000; i++) {
		uint64_t ips[2] = { i, i * 3 };

		cr_assert_eq(stack_table_intern(&t, PC_STACK_USER, 1, 1, 0, ips, 2, &is_new), i);
	}
	for (uint64_t i = 0; i < 5000; i += 499) {
		uint64_t ips[2] = { i, i * 3 };

		cr_assert_eq(stack_table_intern(&t, PC_STACK_USER, 1, 1, 0, ips, 2, &is_new), i);
		cr_assert_not(is_new);
	}
	stack_table_free(&t);
}

/* ---- output/host_cpu ------------------------------------------------------- */

static void write_stat(const char *path, const char *cpu_line)
{
	FILE *f = fopen(path, "w");

	cr_assert(f);
	fprintf(f, "%s\ncpu0 1 2 3 4 5 6 7 8 0 0\nintr 12345\n", cpu_line);
	fclose(f);
}

/* The "cpu" line of /proc/stat: busy is user + nice + system + irq +
 * softirq (guest time is inside user), idle is idle + iowait, steal the
 * eighth field; STATS get the change in ns at USER_HZ (100 here). A line
 * without steal (kernels before 2.6.11) counts none; a garbled one, a
 * missing file or counters that went back write nothing. */
Test(host_cpu, busy_idle_and_stolen_time_over_the_recording)
{
	char path[] = "/tmp/perfcap-stat-XXXXXX";
	int fd = mkstemp(path);
	struct host_cpu a, b;
	struct chunk_buffer cb = { 0 };
	struct pc_kv_iter it;
	const char *k, *v;
	char got[256] = "";

	cr_assert(fd >= 0);
	close(fd);
	write_stat(path, "cpu  100 10 50 1000 20 3 7 40 30 0");
	host_cpu_read(&a, path);
	cr_assert(a.ok);
	cr_expect_eq(a.busy, 170);
	cr_expect_eq(a.idle, 1020);
	cr_expect_eq(a.steal, 40);
	write_stat(path, "cpu  200 10 70 1100 20 3 7 140 60 0");
	host_cpu_read(&b, path);
	cr_assert_eq(host_cpu_stats_kv(&cb, &a, &b), 0);
	pc_kv_iter_init(&it, cb.buf.data, cb.buf.len);
	while (pc_kv_next(&it, &k, &v) == 1)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s=%s ", k, v);
	cr_expect_str_eq(got, "host.cpu.busy_ns=1200000000 host.cpu.idle_ns=1000000000 "
			 "host.cpu.steal_ns=1000000000 ");
	chunk_buffer_free(&cb);
	write_stat(path, "cpu  100 10 50 1000 20 3 7");
	host_cpu_read(&a, path);
	cr_expect(a.ok);
	cr_expect_eq(a.steal, 0);
	/* went back (a counter reset): nothing written */
	memset(&cb, 0, sizeof(cb));
	cr_expect_eq(host_cpu_stats_kv(&cb, &b, &a), 0);
	cr_expect_eq(cb.buf.len, 0);
	write_stat(path, "cpu  x y");
	host_cpu_read(&a, path);
	cr_expect(!a.ok);
	unlink(path);
	host_cpu_read(&a, path);
	cr_expect(!a.ok);
	cr_expect_eq(host_cpu_stats_kv(&cb, &a, &b), 0);
	cr_expect_eq(cb.buf.len, 0);
}

/* ---- output/size_limit ----------------------------------------------------- */

Test(size_limit, budgets)
{
	/* 1 MiB - 16 KiB reserved for closing - 1 MiB / 8 */
	cr_assert_eq(size_limit_data_bytes(1 << 20), 1048576 - 16384 - 131072);
	cr_assert_eq(size_limit_data_bytes(SIZE_LIMIT_MIN), 65536 - 16384 - 8192);
}

Test(size_limit, data_chunks_stop_at_the_first_that_does_not_fit)
{
	const char raw[10] = "0123456789";   /* too short to compress */
	struct size_limit s;
	uint64_t data = size_limit_data_bytes(1 << 20), need = PC_CHUNK_HEADER_SIZE + 10;

	cr_assert_eq(size_limit_init(&s, 1 << 20), 0);
	cr_assert(size_limit_admit(&s, data - need, PC_CHUNK_EVENTS, raw, 10, 3));
	cr_assert_not(s.hit);
	cr_assert_not(size_limit_admit(&s, data - need + 1, PC_CHUNK_EVENTS, raw, 10, 3));
	cr_assert(s.hit);
	/* once hit, every data chunk is dropped, however small the file */
	cr_assert_not(size_limit_admit(&s, 0, PC_CHUNK_EVENTS, raw, 10, 4));
	cr_assert_not(size_limit_admit(&s, 0, PC_CHUNK_STACKS, raw, 10, 1));
	cr_assert_eq(s.chunks_dropped, 3);
	cr_assert_eq(s.events_dropped, 7);
	/* SYMBOLS and STATS have their own budgets */
	cr_assert(size_limit_admit(&s, data, PC_CHUNK_SYMBOLS, raw, 10, 1));
	cr_assert_not(size_limit_admit(&s, (1 << 20) - 16384 - need + 1, PC_CHUNK_SYMBOLS,
				       raw, 10, 1));
	cr_assert_eq(s.symbols_dropped, 1);
	cr_assert(size_limit_admit(&s, (1 << 20) - 512 - need, PC_CHUNK_STATS, raw, 10, 1));
	cr_assert_not(size_limit_admit(&s, (1 << 20) - 512 - need + 1, PC_CHUNK_STATS,
				       raw, 10, 1));
	cr_assert_eq(s.chunks_dropped, 3);
	size_limit_free(&s);
}

/* ---- output/flight_ring -------------------------------------------------- */

static void push_three(struct flight_ring *r)
{
	char raw[4096];

	for (int i = 0; i < 3; i++) {
		memset(raw, 'a' + i, sizeof(raw));
		cr_assert_eq(flight_ring_push(r, raw, sizeof(raw), 10 + (uint64_t)i,
					      100 * (uint64_t)i + 1, 100 * (uint64_t)i + 50), 0);
	}
}

Test(flight_ring, keeps_everything_that_fits)
{
	struct flight_ring r;

	cr_assert_eq(flight_ring_init(&r, 1 << 20), 0);
	cr_assert_eq(flight_ring_window_start(&r), 0);
	push_three(&r);
	cr_assert_eq(r.chunks_kept, 3);
	cr_assert_eq(r.chunks_dropped, 0);
	cr_assert_eq(flight_ring_window_start(&r), 1);
	cr_assert_eq(flight_ring_window_end(&r), 250);
	flight_ring_free(&r);
}

Test(flight_ring, drops_the_oldest_but_keeps_the_newest)
{
	struct flight_ring r;

	cr_assert_eq(flight_ring_init(&r, 1), 0);   /* smaller than any chunk */
	push_three(&r);
	cr_assert_eq(r.chunks_kept, 1);
	cr_assert_eq(r.chunks_dropped, 2);
	cr_assert_eq(r.events_dropped, 10 + 11);
	cr_assert_eq(flight_ring_window_start(&r), 201);
	cr_assert_eq(flight_ring_window_end(&r), 250);
	flight_ring_free(&r);
}

Test(flight_ring, writes_the_kept_chunks_in_order)
{
	char dir[] = "/tmp/test_record_flight.XXXXXX", path[64];
	struct pc_writer *w = NULL;
	struct pc_reader *rd = NULL;
	struct flight_ring r;
	struct pc_chunk c;
	char msg[256];
	int events = 0;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/run.perfcap", dir);
	cr_assert_eq(pc_writer_open(&w, path, 0), 0);
	cr_assert_eq(flight_ring_init(&r, 1 << 20), 0);
	push_three(&r);
	cr_assert_eq(flight_ring_write(&r, w), 0);
	cr_assert_eq(r.bytes, 0);          /* emptied; chunks_kept stays for STATS */
	cr_assert_null(r.oldest);
	cr_assert_eq(pc_writer_finish(w, NULL), 0);
	cr_assert_eq(pc_reader_open(&rd, path, msg, sizeof(msg)), 0);
	while (pc_reader_next(rd, &c) == 1) {
		if (c.hdr.type != PC_CHUNK_EVENTS)
			continue;
		cr_assert_eq(c.hdr.t_start, 100 * (uint64_t)events + 1);
		cr_assert_eq(c.hdr.count, 10 + (uint64_t)events);
		cr_assert_eq(c.size, 4096);
		cr_assert_eq(((const char *)c.data)[0], 'a' + events);
		events++;
	}
	cr_assert_eq(events, 3);
	pc_reader_close(rd);
	flight_ring_free(&r);
	unlink(path);
	rmdir(dir);
}

/* ---- sources/: the registry, -e, syscall names ------------------------ */

static void expect_selected(const char *list, const int *ids, size_t n)
{
	bool selected[PERFCAP_SRC_MAX], want[PERFCAP_SRC_MAX] = { 0 };

	cr_assert_eq(sources_select(list, selected), 0, "-e %s", list ? list : "(none)");
	for (size_t i = 0; i < n; i++)
		want[ids[i]] = true;
	for (int id = 0; id < PERFCAP_SRC_MAX; id++)
		cr_assert_eq(selected[id], want[id], "-e %s: source %d", list ? list : "", id);
}

Test(sources, default_and_explicit_lists)
{
	static const int defaults[] = { PERFCAP_SRC_PROC, PERFCAP_SRC_CPU, PERFCAP_SRC_SCHED,
					PERFCAP_SRC_BLOCK, PERFCAP_SRC_WAITS, PERFCAP_SRC_REQ };
	static const int chosen[] = { PERFCAP_SRC_PROC, PERFCAP_SRC_SYSCALL, PERFCAP_SRC_NET };

	cr_assert_str_eq(sources_default_list(), "cpu,sched,block,waits,req");
	expect_selected(NULL, defaults, 6);
	expect_selected("syscall,net", chosen, 3);
	expect_selected("net,syscall,net", chosen, 3);
}

Test(sources, bad_lists)
{
	bool selected[PERFCAP_SRC_MAX];

	cr_assert_eq(sources_select("cpu,,sched", selected), -EINVAL);
	cr_assert_eq(sources_select("cpu,bogus", selected), -EINVAL);
	cr_assert_eq(sources_select("", selected), -EINVAL);
}

Test(sources, probe_items_select_the_probe_source)
{
	static const int chosen[] = { PERFCAP_SRC_PROC, PERFCAP_SRC_CPU, PERFCAP_SRC_PROBE,
				      PERFCAP_SRC_SCHED };

	/* the comma inside the parentheses does not end the item */
	expect_selected("cpu,uprobe:/bin/app:parse(arg1,ret),sched", chosen, 4);
	expect_selected("cpu,usdt:/usr/bin/python3.11:python:gc__start,sched", chosen, 4);
}

Test(probe_spec, uprobe_items)
{
	struct probe_spec *v;
	size_t n;

	cr_assert_eq(probe_specs_parse("cpu,uprobe:/opt/a:b/app:parse(arg1,ret),"
				       "uprobe:./x:f,sched", &v, &n), 0);
	cr_assert_eq(n, 2);
	cr_assert_eq(v[0].kind, PERFCAP_PROBE_UPROBE);
	cr_assert_str_eq(v[0].path, "/opt/a:b/app");  /* PATH runs to the last colon */
	cr_assert_str_eq(v[0].symbol, "parse");
	cr_assert_eq(v[0].nargs, 2);
	cr_assert_eq(v[0].arg[0], 1);
	cr_assert_eq(v[0].arg[1], PERFCAP_PROBE_ARG_RET);
	cr_assert_str_eq(v[0].text, "uprobe:/opt/a:b/app:parse(arg1,ret)");
	cr_assert_str_eq(v[1].path, "./x");
	cr_assert_eq(v[1].nargs, 0);
	free(v);
}

Test(probe_spec, usdt_items)
{
	struct probe_spec *v;
	size_t n;

	cr_assert_eq(probe_specs_parse("usdt:/usr/bin/python3.11:python:gc__start", &v, &n), 0);
	cr_assert_eq(n, 1);
	cr_assert_eq(v[0].kind, PERFCAP_PROBE_USDT);
	cr_assert_str_eq(v[0].path, "/usr/bin/python3.11");
	cr_assert_str_eq(v[0].provider, "python");
	cr_assert_str_eq(v[0].name, "gc__start");
	cr_assert_eq(v[0].nargs, PERFCAP_PROBE_ARGS);
	free(v);
}

Test(probe_spec, bad_items)
{
	static const char *const bad[] = {
		"uprobe:/bin/app", "uprobe::f", "uprobe:/bin/app:", "uprobe:/a:f(arg7)",
		"uprobe:/a:f(arg1,arg2,arg3,ret)", "uprobe:/a:f(arg1", "uprobe:/a:f()",
		"usdt:/a:p", "usdt:/a::n", "usdt:/a:p:n(arg1)",
	};
	struct probe_spec *v;
	size_t n;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(probe_specs_parse(bad[i], &v, &n), -EINVAL, "%s accepted", bad[i]);
	cr_assert_eq(probe_specs_parse("cpu,sched", &v, &n), 0);
	cr_assert_eq(n, 0);
	cr_assert_null(v);
}

Test(sources, registry_matches_the_name_table)
{
	size_t n;
	const struct source *const *all = sources_all(&n);

	cr_assert_eq(n, event_sources_len);
	cr_assert_eq(all[0]->id, PERFCAP_SRC_PROC);   /* loaded first */
	for (size_t i = 0; i < n; i++) {
		const char *name = event_source_name(all[i]->id);

		cr_assert_not_null(name);
		cr_assert_eq(source_by_name(name), all[i]);
	}
	cr_assert_eq(event_source_id("mux"), PERFCAP_SRC_MUX);
	cr_assert_eq(event_source_id("nope"), -1);
	cr_assert_null(event_source_name(PERFCAP_SRC_MAX - 1));
	cr_assert(event_source_writes_syscalls("net"));
	cr_assert_not(event_source_writes_syscalls("block"));
	cr_assert_not(event_source_writes_syscalls("nope"));
}

Test(syscalls, names_and_numbers)
{
	char buf[16];

	cr_assert_eq(syscall_number("read"), 0);
	cr_assert_eq(syscall_number("epoll_pwait2"), 441);
	cr_assert_eq(syscall_number("42"), 42);
	cr_assert_eq(syscall_number("sys_455"), 455);
	cr_assert_eq(syscall_number("512"), -1);
	cr_assert_eq(syscall_number("nope"), -1);
	cr_assert_str_eq(syscall_name(1, buf, sizeof(buf)), "write");
	cr_assert_str_eq(syscall_name(600, buf, sizeof(buf)), "sys_600");
}

Test(syscalls, set_parse_and_format)
{
	struct syscall_set s;
	char why[128], *text;

	cr_assert_eq(syscall_set_parse("write,read,3", &s, why, sizeof(why)), 0);
	cr_assert(syscall_set_has(&s, 0));
	cr_assert(syscall_set_has(&s, 3));
	cr_assert_not(syscall_set_has(&s, 2));
	text = syscall_set_format(&s);
	cr_assert_str_eq(text, "read,write,close");
	free(text);
	cr_assert_eq(syscall_set_parse("read,nope", &s, why, sizeof(why)), -EINVAL);
}

/* ---- common/units -------------------------------------------------------- */

Test(units, fmt_count)
{
	char buf[32], small[4];

	cr_assert_str_eq(fmt_count(buf, sizeof(buf), 0), "0");
	cr_assert_str_eq(fmt_count(buf, sizeof(buf), 999), "999");
	cr_assert_str_eq(fmt_count(buf, sizeof(buf), 1000), "1,000");
	cr_assert_str_eq(fmt_count(buf, sizeof(buf), 1234567), "1,234,567");
	cr_assert_str_eq(fmt_count(buf, sizeof(buf), UINT64_MAX), "18,446,744,073,709,551,615");
	cr_assert_str_eq(fmt_count(small, sizeof(small), 1234567), "1,2");
}

Test(units, fmt_size)
{
	char buf[32];

	cr_assert_str_eq(fmt_size(buf, sizeof(buf), 0), "0 bytes");
	cr_assert_str_eq(fmt_size(buf, sizeof(buf), 1536), "1536 bytes");
	cr_assert_str_eq(fmt_size(buf, sizeof(buf), 200 << 10), "200 KiB");
	cr_assert_str_eq(fmt_size(buf, sizeof(buf), 64 << 20), "64 MiB");
	cr_assert_str_eq(fmt_size(buf, sizeof(buf), 2ull << 30), "2 GiB");
}

Test(units, parse_u64_in_range)
{
	uint64_t v = 0;

	cr_assert(parse_u64_in_range("42", 0, 100, &v));
	cr_assert_eq(v, 42);
	cr_assert(parse_u64_in_range("18446744073709551615", 0, UINT64_MAX, &v));
	cr_assert_eq(v, UINT64_MAX);
	cr_assert_not(parse_u64_in_range("18446744073709551616", 0, UINT64_MAX, &v));
	cr_assert_not(parse_u64_in_range(" 42", 0, 100, &v));
	cr_assert_not(parse_u64_in_range("+42", 0, 100, &v));
	cr_assert_not(parse_u64_in_range("42x", 0, 100, &v));
	cr_assert_not(parse_u64_in_range("5", 6, 100, &v));
	cr_assert_not(parse_u64_in_range(NULL, 0, 100, &v));
}

static uint64_t duration(const char *s, enum duration_form form, uint64_t min, uint64_t max)
{
	uint64_t v;

	return parse_duration_ns(s, form, min, max, &v) ? v : 12345;   /* 12345: refused */
}

Test(units, recorder_durations_need_a_unit)
{
	const uint64_t hour = 3600ull * 1000000000;
	const enum duration_form f = DURATION_UNIT_REQUIRED;

	cr_assert_eq(duration("500us", f, 0, hour), 500000);
	cr_assert_eq(duration("1.5ms", f, 0, hour), 1500000);
	cr_assert_eq(duration("2s", f, 0, hour), 2000000000);
	cr_assert_eq(duration("100ns", f, 0, hour), 100);
	cr_assert_eq(duration("0", f, 0, hour), 0);
	cr_assert_eq(duration("10", f, 0, hour), 12345);
	cr_assert_eq(duration("0.0", f, 0, hour), 12345);
	cr_assert_eq(duration("1e3ms", f, 0, hour), 12345);
	cr_assert_eq(duration("2h", f, 0, hour), 12345);
	cr_assert_eq(duration("1h", f, 0, hour), hour);
	cr_assert_eq(duration("1.5m", f, 0, hour), 90000000000ull);
	cr_assert_eq(duration("10m", f, 0, hour), 600000000000ull);
	cr_assert_eq(duration("1min", f, 0, hour), 12345);
	cr_assert_eq(duration("3601s", f, 0, hour), 12345);
	cr_assert_eq(duration("-1ms", f, 0, hour), 12345);
}

Test(units, analyzer_durations_default_to_seconds)
{
	const uint64_t day = 86400ull * 1000000000;
	const enum duration_form f = DURATION_SECONDS_DEFAULT;

	cr_assert_eq(duration("0.5", f, 0, day), 500000000);
	cr_assert_eq(duration("250us", f, 0, day), 250000);
	cr_assert_eq(duration("1e-3", f, 0, day), 1000000);
	cr_assert_eq(duration("100ms", f, 1000000, day), 100000000);
	cr_assert_eq(duration("0", f, 1000000, day), 12345);
	cr_assert_eq(duration("0", f, 0, day), 0);
	cr_assert_eq(duration("2d", f, 0, day), 12345);
	cr_assert_eq(duration("86401", f, 0, day), 12345);
}

Test(units, parse_size_bytes)
{
	uint64_t v = 0;

	cr_assert(parse_size_bytes("65536", UINT64_MAX, &v));
	cr_assert_eq(v, 65536);
	cr_assert(parse_size_bytes("500K", UINT64_MAX, &v));
	cr_assert_eq(v, 500 << 10);
	cr_assert(parse_size_bytes("64M", UINT64_MAX, &v));
	cr_assert_eq(v, 64 << 20);
	cr_assert(parse_size_bytes("2GiB", UINT64_MAX, &v));
	cr_assert_eq(v, 2ull << 30);
	cr_assert(parse_size_bytes("1mb", UINT64_MAX, &v));
	cr_assert_eq(v, 1 << 20);
	cr_assert_not(parse_size_bytes("12X", UINT64_MAX, &v));
	cr_assert_not(parse_size_bytes("1KiBs", UINT64_MAX, &v));
	cr_assert_not(parse_size_bytes("2G", 1ull << 30, &v));
	cr_assert_not(parse_size_bytes("-1K", UINT64_MAX, &v));
}

/* Lines as /proc/net/tcp and tcp6 print them on x86_64 (each 32-bit word
 * of the network-order address printed as the host reads it). */
Test(sockinfo, parses_tcp_and_tcp6_lines)
{
	struct sock_entry e;
	char a[INET6_ADDRSTRLEN];

	cr_assert_not(sockinfo_parse_line("  sl  local_address rem_address   st tx_queue rx_queue"
					  " tr tm->when retrnsmt   uid  timeout inode", 2, 6, &e));
	cr_assert(sockinfo_parse_line("   1: 0100007F:1F90 00000000:0000 0A 00000000:00000000"
				      " 00:00000000 00000000     0        0 288121 1"
				      " 0000000000000000 100 0 0 10 0", 2, 6, &e));
	cr_expect_str_eq(inet_ntop(AF_INET, e.laddr, a, sizeof(a)), "127.0.0.1");
	cr_expect_eq(e.lport, 8080);
	cr_expect_eq(e.rport, 0);
	cr_expect_eq(e.state, SOCK_TCP_LISTEN);
	cr_expect_eq(e.inode, 288121);
	cr_expect_eq(e.family, 2);
	cr_expect_eq(e.protocol, 6);

	cr_assert(sockinfo_parse_line("   0: 0000000000000000FFFF00000100007F:C350"
				      " 00000000000000000000000001000000:1F91 01 00000000:00000000"
				      " 00:00000000 00000000  1000        0 4242 1 0000000000000000"
				      " 20 4 30 10 -1", 10, 6, &e));
	cr_expect_str_eq(inet_ntop(AF_INET6, e.laddr, a, sizeof(a)), "::ffff:127.0.0.1");
	cr_expect_str_eq(inet_ntop(AF_INET6, e.raddr, a, sizeof(a)), "::1");
	cr_expect_eq(e.lport, 50000);
	cr_expect_eq(e.rport, 8081);
	cr_expect_eq(e.state, SOCK_TCP_ESTABLISHED);
	cr_expect_eq(e.inode, 4242);

	/* TIME_WAIT: no socket behind it */
	cr_assert(sockinfo_parse_line("   2: 0100007F:C351 0100007F:1F90 06 00000000:00000000"
				      " 03:00001770 00000000     0        0 0 3 0000000000000000",
				      2, 6, &e));
	cr_expect_eq(e.inode, 0);
	cr_assert_not(sockinfo_parse_line("   3: 0100007F 0100007F:1F90 01", 2, 6, &e));
}

/* The writer thread hands each stream back a buffer of its own size: the
 * smallest spare at least as big as the buffer submitted, else the
 * biggest. */
/* Each chunk type keeps its own emptied buffers: the biggest are kept and
 * handed out first, what does not fit is handed back to be freed. */
static struct pc_buf buf_of(size_t cap)
{
	struct pc_buf b = { .data = malloc(cap), .len = cap / 2, .cap = cap };

	cr_assert(b.data);
	return b;
}

Test(writer_thread, spare_pools_keep_the_biggest_buffers)
{
	struct spare_pool p = { .n = 0 };
	size_t caps[] = { 8u << 20, 4096, 65536, 16u << 20 };
	struct pc_buf b, out;

	cr_assert_not(spare_pool_take(&p, &out), "an empty pool handed a buffer");
	for (unsigned i = 0; i < 4; i++) {
		b = buf_of(caps[i]);
		spare_pool_put(&p, &b);
		if (i < SPARES_PER_TYPE) {
			cr_assert_null(b.data, "a buffer was not kept while there was room");
		} else {
			cr_assert_eq(b.cap, 4096, "the smallest is the one given back");
			pc_buf_free(&b);
		}
	}
	cr_assert_eq(p.n, SPARES_PER_TYPE);
	cr_assert(spare_pool_take(&p, &out));
	cr_assert_eq(out.cap, 16u << 20);
	cr_assert_eq(out.len, 0, "a kept buffer comes back emptied");
	pc_buf_free(&out);
	b = buf_of(1024); /* room again, but smaller than all: kept */
	spare_pool_put(&p, &b);
	cr_assert_null(b.data);
	for (unsigned i = 0; i < 3; i++) {
		size_t want[] = { 8u << 20, 65536, 1024 };

		cr_assert(spare_pool_take(&p, &out));
		cr_assert_eq(out.cap, want[i]);
		pc_buf_free(&out);
	}
	cr_assert_not(spare_pool_take(&p, &out));
}

/* ---- consume/ ------------------------------------------------------------ */

/* Thread names from SWITCH and WAKEUP records: a THREAD record (in the
 * PROCS buffer) when a thread is first seen, renamed, or its tid reused by
 * another process; nothing when it comes again as it was, even when two
 * tids share a slot of the consumer's cache. */
Test(consumer, a_thread_name_is_noted_once_per_change)
{
	static struct consumer c;
	char worker[16] = "worker", other[16] = "renamed";

	consumer_init(&c, -1, false);
	for (int i = 0; i < 3; i++) {
		consumer_thread_name(&c, 10, 11, worker, 1);
		consumer_thread_name(&c, 10, 11 + CONSUMER_NAME_SLOTS, worker, 2);
	}
	cr_assert_eq(c.procs.count, 2, "%lu THREAD records for two threads",
		     (unsigned long)c.procs.count);
	consumer_thread_name(&c, 10, 11, other, 3);
	consumer_thread_name(&c, 10, 11, other, 4);
	cr_assert_eq(c.procs.count, 3, "a rename is one record");
	consumer_thread_name(&c, 12, 11, other, 5);
	cr_assert_eq(c.procs.count, 4, "a tid reused by another process is one record");
	other[10] = 'x'; /* a byte past the name's end: the same name */
	consumer_thread_name(&c, 12, 11, other, 6);
	cr_assert_eq(c.procs.count, 4, "stale bytes after the name made a record");
	consumer_free(&c);
}

/* The module registry index of the first module whose path holds name. */
static uint32_t module_named(const struct process_table *pt, const char *name)
{
	for (uint32_t i = 0; i < pt->modules.n; i++)
		if (pt->modules.mods[i].path && strstr(pt->modules.mods[i].path, name))
			return i;
	return UINT32_MAX;
}

/* A copy (this process's own stack words) holding an address inside a
 * library mapped after the process's maps were read: not a code word then;
 * once the maps are read again (an ip outside them), the same word is a
 * code word of that library, whatever the scans cached about it. */
Test(ustack_scan, a_word_is_noted_again_when_the_maps_grow)
{
	static struct chunk_buffer procs;
	static struct process_table pt;
	uint32_t pid = (uint32_t)getpid(), aspace;
	uint64_t here = (uint64_t)(uintptr_t)&module_named, words[4], code_before;
	void *lib, *sym, *other, *other_sym;

	processes_init(&pt, &procs);
	aspace = processes_on_sample(&pt, pid, pid, "test", 1);
	cr_assert_neq(aspace, UINT32_MAX);
	cr_assert_eq(module_named(&pt, "libsqlite3"), UINT32_MAX, "already mapped");
	lib = dlopen("libsqlite3.so.0", RTLD_NOW | RTLD_LOCAL);
	cr_assert(lib, "dlopen: %s", dlerror());
	sym = dlsym(lib, "sqlite3_libversion");
	cr_assert(sym);
	words[0] = (uint64_t)(uintptr_t)sym;
	words[1] = here;
	words[2] = 0;
	words[3] = (uint64_t)(uintptr_t)sym;
	ustack_scan(&pt, pid, 2, here, (const uint8_t *)words, sizeof(words));
	cr_assert_eq(module_named(&pt, "libsqlite3"), UINT32_MAX, "maps re-read early");
	code_before = pt.modules.n;
	/* an ip in a second new library: the maps are read again (now, not
	 * after the re-read interval) and both libraries' mappings added; the
	 * first one is hit only through the words */
	other = dlopen("libexpat.so.1", RTLD_NOW | RTLD_LOCAL);
	cr_assert(other, "dlopen: %s", dlerror());
	other_sym = dlsym(other, "XML_ExpatVersion");
	cr_assert(other_sym);
	pt.aspaces[aspace].last_read_ns = 0;
	ustack_scan(&pt, pid, 3, (uint64_t)(uintptr_t)other_sym, (const uint8_t *)words,
		    sizeof(words));
	cr_assert_gt(pt.modules.n, code_before);
	cr_assert_neq(module_named(&pt, "libsqlite3"), UINT32_MAX);
	cr_assert(ustack_scan_module_hit(module_named(&pt, "libsqlite3")),
		  "the library's word was not noted after the maps grew");
	cr_assert(ustack_scan_module_hit(module_named(&pt, "libexpat")));
	cr_assert(ustack_scan_module_hit(module_named(&pt, "test_record_units")));
	ustack_scan_free();
	processes_free(&pt);
	chunk_buffer_free(&procs);
	dlclose(other);
	dlclose(lib);
}

/* ---- /proc threads (util/procinfo.c) ---- */

static void *parked(void *arg)
{
	sleep(*(int *)arg);
	return NULL;
}

struct seen_tids {
	uint32_t want[2];
	int found, all;
};

static int note_tid(void *ctx, uint32_t tid)
{
	struct seen_tids *s = ctx;

	s->all++;
	s->found += tid == s->want[0] || tid == s->want[1];
	return 0;
}

static void *report_tid(void *arg)
{
	*(uint32_t *)arg = (uint32_t)syscall(SYS_gettid);
	return NULL;
}

Test(procinfo, tid_walk_lists_every_thread)
{
	struct seen_tids s = { { (uint32_t)syscall(SYS_gettid), 0 }, 0, 0 };
	pthread_t t, p;
	int secs = 2;

	cr_assert_eq(pthread_create(&t, NULL, report_tid, &s.want[1]), 0);
	pthread_join(t, NULL);   /* want[1]: a thread gone: not listed */
	cr_assert_eq(pthread_create(&p, NULL, parked, &secs), 0);
	cr_assert_eq(procinfo_for_each_tid((uint32_t)getpid(), note_tid, &s), 0);
	cr_expect_eq(s.found, 1, "the main thread, not the exited one: %d", s.found);
	cr_expect_geq(s.all, 2, "the parked thread too: %d threads", s.all);
	cr_expect_eq(procinfo_for_each_tid(999999999u, note_tid, &s), -ENOENT);
	pthread_cancel(p);
	pthread_join(p, NULL);
}

Test(procinfo, switch_count_grows_with_each_sleep)
{
	uint32_t pid = (uint32_t)getpid(), tid = (uint32_t)syscall(SYS_gettid);
	uint64_t before, after;

	cr_assert_eq(procinfo_thread_switches(pid, tid, &before), 0);
	for (int i = 0; i < 5; i++)
		usleep(1000);    /* blocks: off the CPU and back, each time */
	cr_assert_eq(procinfo_thread_switches(pid, tid, &after), 0);
	cr_expect_geq(after, before + 5, "switch-ins %llu then %llu",
		      (unsigned long long)before, (unsigned long long)after);
	cr_expect_eq(procinfo_thread_switches(pid, 999999999u, &after), -ENOENT);
}
