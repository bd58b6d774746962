/* test_perfmap.c - JIT symbols: the recorder's perf map parser
 * (record/consume/perfmap.c) and resolution of a PERFMAP module record by pid. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/elf_module.h"
#include "consume/perfmap.h"
#include "symbolize/symbolize.h"

static const char map_text[] =
	"7f0000001000 40 LazyCompile:*fib /app/fib.js:3\n"
	"7f0000000000 100 jit_spin_loop\n"
	"not a line\n"
	"0x7f0000002000 0x20 Interpreter\r\n"
	"7f0000001000 80 LazyCompile:*fib_v2 /app/fib.js:3\n"   /* same address: last wins */
	"zzzz 10 bad_start\n"
	"7f0000003000\n"
	"\n"
	"7f0000004000 10   \n";

Test(perfmap, parses_sorts_and_keeps_the_last_entry_per_address)
{
	struct pc_elf_module m;
	uint64_t malformed = 0;

	cr_assert_eq(perfmap_parse(&m, map_text, strlen(map_text), &malformed), 0);
	cr_assert_eq(m.kind, PC_MODULE_PERFMAP);
	cr_assert_eq(m.nsyms, 3);
	cr_assert_eq(malformed, 4, "malformed %lu", (unsigned long)malformed);
	cr_assert_eq(m.syms[0].addr, 0x7f0000000000ull);
	cr_assert_str_eq(pc_elf_symbol_name(&m, &m.syms[0]), "jit_spin_loop");
	cr_assert_eq(m.syms[1].addr, 0x7f0000001000ull);
	cr_assert_eq(m.syms[1].size, 0x80);
	cr_assert_str_eq(pc_elf_symbol_name(&m, &m.syms[1]), "LazyCompile:*fib_v2 /app/fib.js:3");
	cr_assert_str_eq(pc_elf_symbol_name(&m, &m.syms[2]), "Interpreter");
	pc_elf_module_free(&m);
}

Test(perfmap, empty_text_gives_no_symbols)
{
	struct pc_elf_module m;
	uint64_t malformed = 0;

	cr_assert_eq(perfmap_parse(&m, "", 0, &malformed), 0);
	cr_assert_eq(m.nsyms, 0);
	cr_assert_eq(malformed, 0);
	pc_elf_module_free(&m);
}

/* Builds a PERFMAP record for pid holding the entries covering addrs. */
static void add_record(struct symbolizer *s, struct pc_buf *b, uint32_t pid,
		       const uint64_t *addrs, size_t n)
{
	struct pc_elf_module m;
	uint64_t malformed = 0;

	cr_assert_eq(perfmap_parse(&m, map_text, strlen(map_text), &malformed), 0);
	m.pid = pid;
	m.path = strdup("/tmp/perf-4242.map");
	b->len = 0;
	cr_assert_eq(pc_buf_add_module(b, &m, addrs, n), 0);
	cr_assert_eq(symbolizer_add_module(s, (const struct pc_rec *)b->data), 0);
	pc_elf_module_free(&m);
}

Test(perfmap, resolves_by_pid_through_the_capture_record)
{
	static const uint64_t hits[] = { 0x7f0000000010ull, 0x7f0000001004ull };
	struct symbolizer *s = symbolizer_new(NULL);
	struct pc_buf b = { 0 };
	struct sym_frame f;

	cr_assert_not_null(s);
	add_record(s, &b, 4242, hits, 2);
	cr_assert_eq(symbolizer_resolve_perfmap(s, 4242, 0x7f0000000010ull, &f), 1);
	cr_assert_str_eq(f.function, "jit_spin_loop");
	cr_assert_eq(f.sym_offset, 0x10);
	cr_assert_eq(f.source, SYM_SRC_PERFMAP);
	cr_assert_eq(f.mode, SYM_MODE_SYMBOL);
	cr_assert_str_eq(f.module, "/tmp/perf-4242.map");
	cr_assert_eq(symbolizer_resolve_perfmap(s, 4242, 0x7f0000001004ull, &f), 1);
	cr_assert_str_eq(f.function, "LazyCompile:*fib_v2 /app/fib.js:3");
	/* Only the entries covering hits were stored; another pid has none. */
	cr_assert_eq(symbolizer_resolve_perfmap(s, 4242, 0x7f0000002004ull, &f), 0);
	cr_assert_eq(symbolizer_resolve_perfmap(s, 4243, 0x7f0000000010ull, &f), 0);
	free(b.data);
	symbolizer_free(s);
}

static uint64_t boottime_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_BOOTTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* A map file older than its process was left by an earlier process with the
 * same pid: refused (-ESTALE, counted), read when fresh or the start is
 * unknown. The test's own pid names the file. */
Test(perfmap, refuses_a_map_older_than_its_process)
{
	char path[64], why[192];
	struct pc_elf_module m;
	struct perfmap_stats st = { 0 };
	uint32_t pid = (uint32_t)getpid();
	struct timespec hour_ago[2];
	FILE *f;

	clock_gettime(CLOCK_REALTIME, &hour_ago[0]);
	hour_ago[0].tv_sec -= 3600;
	hour_ago[1] = hour_ago[0];
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("7f0000000000 100 jit_spin_loop\n", f);
	fclose(f);
	cr_assert_eq(utimensat(AT_FDCWD, path, hour_ago, 0), 0);

	/* the process started now, the file an hour ago */
	cr_assert_eq(perfmap_load(&m, pid, boottime_ns(), &st, why, sizeof(why)), -ESTALE);
	cr_assert_eq(st.files_stale, 1);
	cr_assert_eq(st.files_read, 0);
	cr_assert_not_null(strstr(why, "older than the process"), "%s", why);
	/* start unknown: read */
	cr_assert_eq(perfmap_load(&m, pid, 0, &st, why, sizeof(why)), 0);
	cr_assert_eq(m.nsyms, 1);
	pc_elf_module_free(&m);
	/* written after the start: read */
	cr_assert_eq(utimensat(AT_FDCWD, path, NULL, 0), 0);
	cr_assert_eq(perfmap_load(&m, pid, boottime_ns() - 1000000000ull, &st, why,
				  sizeof(why)), 0);
	cr_assert_eq(st.files_read, 2);
	cr_assert_eq(st.files_stale, 1);
	pc_elf_module_free(&m);
	unlink(path);
}
