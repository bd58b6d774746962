/* test_hardening.c - regression tests for issue 16 (hostile paths and
 * files): control characters in names never reach text output, FIFOs as
 * input or named by a capture never block, an empty zstd chunk is read
 * safely, events dropped by --max-size and the flight recorder are shown,
 * and symlinks planted at the analyzer's output paths are never followed.
 * The recorder's side is in tests/e2e/hostile_outputs.sh. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/elf_module.h"
#include "perfcap_format.h"
#include "run_tool.h"

#define BASE  0x555555554000ull
#define TS0   1000000000ull

/* Names with an ESC sequence, an OSC title, a bare CR, and a newline
 * followed by text that looks like a report row. */
static const char hostile_strtab[] =
	"_start\0evil\n  99.0%  forged_row\0\x1b[31mred\x1b]0;pwned\x07\0cr\rname";
static const uint8_t build_id[20] = { 0x16, 0x16, 0x16, 0x16, 1, 2, 3, 4, 5, 6 };
#define HOSTILE_CMDLINE "perfcap-record \x1b]0;title\x07 -- ./app\r\nforged"

struct spec {
	const char *map_path;       /* the one mapping of pid 100 */
	const char *stats_kv[4][2]; /* extra STATS pairs */
};

static void add_chunk(struct pc_writer *w, uint16_t type, struct pc_buf *b, uint64_t n)
{
	cr_assert_eq(pc_writer_add_chunk(w, type, 1, b->data, b->len, n, TS0, TS0 + 100), 0);
	pc_buf_reset(b);
}

static void add_procs(struct pc_buf *b, const char *map_path)
{
	struct pc_rec_proc p = { .h.type = PC_REC_PROC, .ts = TS0, .pid = 100, .ppid = 1,
				 .comm = "app", .exe_len = 3, .cmdline_len = 3 };
	struct pc_rec_thread t = { .h.type = PC_REC_THREAD, .ts = TS0, .pid = 100,
				   .tid = 100, .comm = "app" };
	struct pc_rec_map m = { .h.type = PC_REC_MAP, .ts = TS0, .pid = 100, .prot = 5,
				.start = BASE, .end = BASE + 0x10000, .inode = 42,
				.path_len = (uint32_t)strlen(map_path),
				.build_id_len = sizeof(build_id) };

	memcpy(m.build_id, build_id, sizeof(build_id));
	pc_buf_add_rec(b, &p, sizeof(p), "app", 3, "app", 3);
	pc_buf_add_rec(b, &t, sizeof(t), NULL, 0, NULL, 0);
	pc_buf_add_rec(b, &m, sizeof(m), map_path, m.path_len, NULL, 0);
}

/* Three stacks, one per hostile name, each under _start. */
static void add_stacks_and_samples(struct pc_writer *w, struct pc_buf *b)
{
	for (uint32_t i = 0; i < 3; i++) {
		uint64_t ips[2] = { BASE + 0x1100 + 0x100 * i + 8, BASE + 0x1008 };
		struct pc_rec_stack s = { .h.type = PC_REC_STACK, .id = i + 1, .pid = 100,
					  .kind = PC_STACK_USER, .nr = 2 };
		pc_buf_add_rec(b, &s, sizeof(s), ips, sizeof(ips), NULL, 0);
	}
	add_chunk(w, PC_CHUNK_STACKS, b, 3);
	for (uint32_t i = 0; i < 30; i++) {
		struct pc_rec_sample sm = { .h.type = PC_REC_SAMPLE, .ts = TS0 + i, .pid = 100,
					    .tid = 100, .ustack = i % 3 + 1,
					    .kstack = PC_STACK_NONE };
		pc_buf_add_rec(b, &sm, sizeof(sm), NULL, 0, NULL, 0);
	}
	add_chunk(w, PC_CHUNK_EVENTS, b, 30);
}

static void add_symbols(struct pc_buf *b, const char *map_path)
{
	struct pc_segment seg = { .offset = 0, .vaddr = 0, .filesz = 0x10000, .memsz = 0x10000 };
	struct pc_symbol syms[] = {
		{ 0x1000, 0x40, 0 }, { 0x1100, 0x100, 7 }, { 0x1200, 0x100, 32 },
		{ 0x1300, 0x100, 51 },
	};
	struct pc_elf_module m = {
		.kind = PC_MODULE_ELF, .e_type = ET_DYN, .path = (char *)map_path,
		.segs = &seg, .nsegs = 1, .syms = syms, .nsyms = 4,
		.strtab = (char *)hostile_strtab, .strtab_len = sizeof(hostile_strtab),
		.build_id_len = sizeof(build_id),
	};

	memcpy(m.build_id, build_id, sizeof(build_id));
	cr_assert_eq(pc_buf_add_module(b, &m, NULL, 0), 0);
}

static void write_capture(const char *path, const struct spec *spec)
{
	struct pc_writer *w;
	struct pc_buf b = { 0 };
	uint64_t n = 0;

	cr_assert_eq(pc_writer_open(&w, path, PC_WRITE_FORCE), 0);
	pc_buf_add_kv(&b, "record.cmdline", HOSTILE_CMDLINE);
	pc_buf_add_kv(&b, "host.hostname", "evil\x1b[2Jhost");
	pc_buf_add_kv_u64(&b, "record.start_ns", TS0);
	add_chunk(w, PC_CHUNK_META, &b, 3);
	add_procs(&b, spec->map_path);
	add_chunk(w, PC_CHUNK_PROCS, &b, 3);
	add_stacks_and_samples(w, &b);
	add_symbols(&b, spec->map_path);
	add_chunk(w, PC_CHUNK_SYMBOLS, &b, 1);
	pc_buf_add_kv_u64(&b, "cpu.events", 30);
	for (int i = 0; i < 4 && spec->stats_kv[i][0]; i++, n++)
		pc_buf_add_kv(&b, spec->stats_kv[i][0], spec->stats_kv[i][1]);
	add_chunk(w, PC_CHUNK_STATS, &b, n + 1);
	cr_assert_eq(pc_writer_finish(w, NULL), 0);
	pc_buf_free(&b);
}

static void assert_no_control(const char *what, const char *text)
{
	for (const unsigned char *p = (const unsigned char *)text; *p; p++)
		cr_assert(*p >= 0x20 || *p == '\n', "%s: control byte 0x%02x at %zu", what,
			  *p, (size_t)((const char *)p - text));
	cr_assert_eq(count_lines_with(text, "forged"), count_lines_with(text, "?forged") +
		     count_lines_with(text, "?  99.0%  forged"), "%s: a forged line:\n%s",
		     what, text);
}

Test(hardening, control_characters_never_reach_text_output)
{
	char *dir = scratch_dir(), *cap = scratch_path(dir, "names.perfcap");
	struct spec spec = { .map_path = "/nonexistent/app" };
	struct tool_result r;

	write_capture(cap, &spec);
	run_analyze(&r, "report", "--no-local-files", cap, NULL);
	cr_assert_eq(r.status, 0, "stderr: %s", r.err);
	cr_assert(strstr(r.out, "evil?  99.0%  forged_row"), "name not shown:\n%s", r.out);
	assert_no_control("report", r.out);
	tool_result_free(&r);

	run_analyze(&r, "report", "--folded", "--no-local-files", cap, NULL);
	cr_assert_eq(r.status, 0, "stderr: %s", r.err);
	assert_no_control("folded", r.out);
	for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) {
		char *space = strrchr(line, ' ');
		cr_assert(space && strspn(space + 1, "0123456789") == strlen(space + 1) &&
			  space[1], "folded line without a count: '%s'", line);
	}
	tool_result_free(&r);

	run_analyze(&r, "query", "--no-local-files", cap,
		    "SELECT name FROM frames UNION ALL SELECT value FROM meta"
		    " UNION ALL SELECT char(27) || '[2J' || char(13)", NULL);
	cr_assert_eq(r.status, 0, "stderr: %s", r.err);
	assert_no_control("query", r.out);
	cr_assert(strstr(r.out, "\\x1b[2J\\r"), "ESC/CR not escaped:\n%s", r.out);
	tool_result_free(&r);
	free(cap);
	scratch_remove(dir);
}

Test(hardening, fifo_input_is_refused_not_waited_on, .timeout = 60)
{
	char *dir = scratch_dir(), *fifo = scratch_path(dir, "in.fifo");
	char *db = scratch_path(dir, "out.db");
	const char *cmds[] = { "info", "report", "import" };
	struct tool_result r;

	cr_assert_eq(mkfifo(fifo, 0600), 0);
	for (int i = 0; i < 3; i++) {
		if (i == 2)
			run_analyze(&r, cmds[i], fifo, "-o", db, NULL);
		else
			run_analyze(&r, cmds[i], fifo, NULL);
		cr_assert_eq(r.status, 1, "%s: status %d", cmds[i], r.status);
		cr_assert(strstr(r.err, "not a regular file"), "%s: %s", cmds[i], r.err);
		tool_result_free(&r);
	}
	free(fifo);
	free(db);
	scratch_remove(dir);
}

Test(hardening, fifo_named_by_a_capture_does_not_block, .timeout = 60)
{
	char *dir = scratch_dir(), *fifo = scratch_path(dir, "lib.fifo");
	char *cap = scratch_path(dir, "fifo.perfcap"), *db = scratch_path(dir, "f.db");
	struct spec spec = { .map_path = fifo };
	struct tool_result r;

	cr_assert_eq(mkfifo(fifo, 0600), 0);
	write_capture(cap, &spec);
	run_analyze(&r, "report", "--json", cap, NULL);
	cr_assert_eq(r.status, 0, "report: %s", r.err);
	tool_result_free(&r);
	run_analyze(&r, "import", cap, "-o", db, NULL);
	cr_assert_eq(r.status, 0, "import: %s", r.err);
	tool_result_free(&r);
	free(fifo);
	free(cap);
	free(db);
	scratch_remove(dir);
}

/* A chunk flagged zstd with payload_size = raw_size = 0 and a valid CRC. */
static void write_empty_zstd_capture(const char *path)
{
	struct pc_file_header fh = { .magic = PC_FILE_MAGIC, .major = PC_FORMAT_MAJOR,
				     .minor = PC_FORMAT_MINOR,
				     .header_size = sizeof(struct pc_file_header) };
	FILE *f = fopen(path, "wb");

	cr_assert(f);
	fwrite(&fh, sizeof(fh), 1, f);
	for (uint16_t type = PC_CHUNK_META; type <= PC_CHUNK_STACKS; type++) {
		struct pc_chunk_header h = { .magic = PC_CHUNK_MAGIC, .type = type,
					     .version = 1, .header_size = sizeof(h),
					     .flags = PC_CHUNK_F_ZSTD, .seq = type - 1u };
		h.crc32c = pc_crc32c(0, &h, sizeof(h));
		fwrite(&h, sizeof(h), 1, f);
	}
	fclose(f);
}

Test(hardening, empty_zstd_chunk_is_safe)
{
	char *dir = scratch_dir(), *cap = scratch_path(dir, "empty.perfcap");
	const char *cmds[] = { "info", "report" };
	struct tool_result r;

	write_empty_zstd_capture(cap);
	for (int i = 0; i < 2; i++) {
		run_analyze(&r, cmds[i], cap, NULL);
		/* 3: read with damage warned about (docs/perfcap-analyze.md) */
		cr_assert(r.status == 0 || r.status == 1 || r.status == 3, "%s: status %d\n%s", cmds[i],
			  r.status, r.err);
		cr_assert_null(strstr(r.err, "runtime error"), "%s: %s", cmds[i], r.err);
		tool_result_free(&r);
	}
	free(cap);
	scratch_remove(dir);
}

/* The data_quality row of source "record" and key has this value. */
static void json_row_is(const char *json, const char *key, const char *value)
{
	char needle[128];
	const char *row, *end;

	snprintf(needle, sizeof(needle), "\"source\": \"record\",\n      \"key\": \"%s\"", key);
	row = strstr(json, needle);
	cr_assert(row, "no data_quality row %s:\n%s", key, json);
	end = strchr(row, '}');
	cr_assert(end && memmem(row, (size_t)(end - row), value, strlen(value)),
		  "row %s: %.*s", key, (int)(end ? end - row : 80), row);
}

Test(hardening, dropped_events_are_shown_with_their_reason)
{
	char *dir = scratch_dir(), *cap = scratch_path(dir, "drop.perfcap");
	struct spec spec = { .map_path = "/nonexistent/app",
			     .stats_kv = { { "record.max_size.events_dropped", "181" },
					   { "flight.events_dropped", "7" } } };
	struct tool_result r;

	write_capture(cap, &spec);
	run_analyze(&r, "report", "--no-local-files", cap, NULL);
	cr_assert_eq(r.status, 0, "stderr: %s", r.err);
	cr_assert(strstr(r.out, "Dropped: 181 events at --max-size"), "summary:\n%s", r.out);
	cr_assert(strstr(r.out, "Dropped events:      181 at --max-size (the file was full), "
			 "7 older than the flight recorder's window"), "quality:\n%s", r.out);
	tool_result_free(&r);
	run_analyze(&r, "report", "--json", "--no-local-files", cap, NULL);
	cr_assert_eq(r.status, 0, "stderr: %s", r.err);
	json_row_is(r.out, "max_size.events_dropped", "\"value\": 181");
	json_row_is(r.out, "flight.events_dropped", "\"value\": 7");
	tool_result_free(&r);
	free(cap);
	scratch_remove(dir);
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "rb");
	static char buf[256];
	size_t n;

	cr_assert(f, "%s", path);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* path must now be a regular 0600 file, victim untouched. */
static void assert_output_safe(const char *path, const char *victim)
{
	struct stat sb;

	cr_assert_eq(lstat(path, &sb), 0, "%s missing", path);
	cr_assert(S_ISREG(sb.st_mode), "%s is not a regular file", path);
	cr_assert_eq(sb.st_mode & 0777, 0600, "%s has mode %o", path, sb.st_mode & 0777);
	cr_assert_str_eq(read_all(victim), "victim\n", "%s: the link target was written", path);
}

static void plant(const char *dir, const char *name, const char *target)
{
	char *p = scratch_path(dir, name);

	cr_assert_eq(symlink(target, p), 0);
	free(p);
}

/* No temporary file (NAME.tmp-XXXXXX) left in dir. */
static void assert_no_temporary(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	cr_assert(d);
	while ((e = readdir(d)))
		cr_expect_null(strstr(e->d_name, ".tmp-"), "temporary file left: %s", e->d_name);
	closedir(d);
}

/* A dangling link at every analyzer output: never creates its target,
 * with or without -f; the output is a new 0600 file; no temporary file is
 * left, whether the command succeeded or failed. */
Test(hardening, dangling_symlinks_at_outputs_create_nothing)
{
	char *dir = scratch_dir(), *cap = scratch_path(dir, "in.perfcap");
	char *target = scratch_path(dir, "created-by-link"), *victim = scratch_path(dir, "victim");
	const char *outputs[] = { "link.db", "page.html", "diff.html" };
	struct spec spec = { .map_path = "/nonexistent/app" };
	struct tool_result r;
	FILE *f = fopen(victim, "w");
	char *out[3];

	fputs("victim\n", f);
	fclose(f);
	write_capture(cap, &spec);
	for (int i = 0; i < 3; i++) {
		plant(dir, outputs[i], target);
		out[i] = scratch_path(dir, outputs[i]);
	}
	run_analyze(&r, "import", cap, "-o", out[0], NULL);
	cr_assert_eq(r.status, 0, "import over a dangling link: %s", r.err);
	cr_assert_eq(access(target, F_OK), -1, "import -o created the link's target");
	assert_output_safe(out[0], victim);
	tool_result_free(&r);
	run_analyze(&r, "report", "--html", out[1], "--no-local-files", cap, NULL);
	if (r.status != 0 && strstr(r.err, "HTML")) {
		cr_log_warn("this build has no HTML page: %s", r.err);
	} else {
		cr_assert_eq(r.status, 0, "report --html: %s", r.err);
		cr_assert_eq(access(target, F_OK), -1, "report --html created the link's target");
		assert_output_safe(out[1], victim);
		tool_result_free(&r);
		run_analyze(&r, "diff", "--html", out[2], cap, cap, NULL);
		cr_assert(r.status == 0 || r.status == 3, "diff --html: %d %s", r.status, r.err);
		cr_assert_eq(access(target, F_OK), -1, "diff --html created the link's target");
		assert_output_safe(out[2], victim);
	}
	tool_result_free(&r);
	/* a failing import (not a capture) leaves no temporary behind */
	run_analyze(&r, "import", "-f", victim, "-o", out[0], NULL);
	cr_assert_neq(r.status, 0, "import of a non-capture succeeded");
	tool_result_free(&r);
	assert_no_temporary(dir);
	for (int i = 0; i < 3; i++)
		free(out[i]);
	free(cap);
	free(target);
	free(victim);
	scratch_remove(dir);
}

Test(hardening, symlinks_planted_at_outputs_are_not_followed)
{
	char *dir = scratch_dir(), *cap = scratch_path(dir, "in.perfcap");
	char *victim = scratch_path(dir, "victim"), *db = scratch_path(dir, "link.db");
	char *page = scratch_path(dir, "page.html"), *dpage = scratch_path(dir, "diff.html");
	struct spec spec = { .map_path = "/nonexistent/app" };
	struct tool_result r;
	FILE *f = fopen(victim, "w");

	fputs("victim\n", f);
	fclose(f);
	write_capture(cap, &spec);
	plant(dir, "link.db", victim);
	run_analyze(&r, "import", cap, "-o", db, NULL);
	cr_assert_eq(r.status, 1, "import over an existing link without -f: %d", r.status);
	tool_result_free(&r);
	run_analyze(&r, "import", "-f", cap, "-o", db, NULL);
	cr_assert_eq(r.status, 0, "import -f: %s", r.err);
	assert_output_safe(db, victim);
	tool_result_free(&r);

	plant(dir, "page.html", victim);
	plant(dir, "page.html.tmp", victim);
	plant(dir, "diff.html", victim);
	plant(dir, "diff.html.tmp", victim);
	run_analyze(&r, "report", "--html", page, "--no-local-files", cap, NULL);
	if (r.status != 0 && strstr(r.err, "HTML")) {
		cr_log_warn("this build has no HTML page: %s", r.err);
	} else {
		cr_assert_eq(r.status, 0, "report --html: %s", r.err);
		assert_output_safe(page, victim);
		tool_result_free(&r);
		run_analyze(&r, "diff", "--html", dpage, cap, cap, NULL);
		cr_assert(r.status == 0 || r.status == 3, "diff --html: %d %s", r.status, r.err);
		assert_output_safe(dpage, victim);
	}
	tool_result_free(&r);
	free(cap);
	free(victim);
	free(db);
	free(page);
	free(dpage);
	scratch_remove(dir);
}
