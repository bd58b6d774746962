/* test_hostile.c - captures written by a hostile or broken writer: valid
 * chunks (so the checksums pass) holding inconsistent records. The
 * analyzer must count them as malformed and go on, never crash; run under
 * the address and undefined-behaviour sanitizers to mean something. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "perfcap_format.h"
#include "run_tool.h"

static void add_chunk(struct pc_writer *w, uint16_t type, struct pc_buf *b)
{
	cr_assert_eq(pc_writer_add_chunk(w, type, 1, b->data, b->len, 1, 0, 0), 0);
	pc_buf_reset(b);
}

static void add_raw_record(struct pc_buf *b, uint16_t type, uint32_t size,
			   const void *body, size_t body_len)
{
	struct pc_rec h = { .type = type, .size = size };

	pc_buf_append(b, &h, sizeof(h));
	pc_buf_append(b, body, body_len);
}

static void write_hostile_capture(const char *path)
{
	struct pc_writer *w;
	struct pc_buf b = { 0 };
	uint64_t ips[4] = { 1, 2, 3, 4 };

	cr_assert_eq(pc_writer_open(&w, path, PC_WRITE_FORCE), 0);
	pc_buf_append(&b, "key-without-value", 17);   /* unterminated key/value */
	add_chunk(w, PC_CHUNK_META, &b);

	/* a stack claiming more ips than it holds, one with a bad kind, a
	 * duplicate id, and a stack id that means "none" */
	struct pc_rec_stack s = { .h.type = PC_REC_STACK, .id = 1, .pid = 9, .nr = 1000 };
	pc_buf_add_rec(&b, &s, sizeof(s), ips, sizeof(ips), NULL, 0);
	s.nr = 4;
	s.kind = 7;
	pc_buf_add_rec(&b, &s, sizeof(s), ips, sizeof(ips), NULL, 0);
	s.kind = PC_STACK_USER;
	s.id = 2;
	pc_buf_add_rec(&b, &s, sizeof(s), ips, sizeof(ips), NULL, 0);
	pc_buf_add_rec(&b, &s, sizeof(s), ips, sizeof(ips), NULL, 0);
	s.id = PC_STACK_NONE;
	pc_buf_add_rec(&b, &s, sizeof(s), ips, sizeof(ips), NULL, 0);
	add_chunk(w, PC_CHUNK_STACKS, &b);

	/* lengths beyond the record, a build-id longer than 20, start >= end */
	struct pc_rec_proc p = { .h.type = PC_REC_PROC, .pid = 9, .exe_len = 0xffffffffu,
				 .cmdline_len = 0xffffffffu };
	pc_buf_add_rec(&b, &p, sizeof(p), "x", 1, NULL, 0);
	struct pc_rec_map m = { .h.type = PC_REC_MAP, .pid = 9, .start = 0, .end = 100,
				.build_id_len = 200, .path_len = 3 };
	pc_buf_add_rec(&b, &m, sizeof(m), "abc", 3, NULL, 0);
	m.build_id_len = 0;
	m.path_len = 1u << 30;
	pc_buf_add_rec(&b, &m, sizeof(m), "abc", 3, NULL, 0);
	m.path_len = 3;
	m.start = 200;
	pc_buf_add_rec(&b, &m, sizeof(m), "abc", 3, NULL, 0);
	/* a record of 8 bytes: every field zero-filled */
	add_raw_record(&b, PC_REC_THREAD, 8, NULL, 0);
	add_chunk(w, PC_CHUNK_PROCS, &b);

	/* samples naming undefined stacks, then a record whose size is not a
	 * multiple of 8 (the rest of the chunk is malformed) */
	struct pc_rec_sample sm = { .h.type = PC_REC_SAMPLE, .pid = 9, .tid = 9,
				    .ustack = 12345, .kstack = 2 };
	pc_buf_add_rec(&b, &sm, sizeof(sm), NULL, 0, NULL, 0);
	sm.ustack = 2;
	sm.kstack = PC_STACK_NONE;
	pc_buf_add_rec(&b, &sm, sizeof(sm), NULL, 0, NULL, 0);
	add_raw_record(&b, PC_REC_SAMPLE, 12, "abcd", 4);
	add_chunk(w, PC_CHUNK_EVENTS, &b);

	/* module records with counts that do not fit */
	struct pc_rec_module mod = { .h.type = PC_REC_MODULE, .kind = PC_MODULE_ELF,
				     .nsyms = 0x10000000, .nsegs = 3, .path_len = 5,
				     .build_id_len = 30 };
	pc_buf_add_rec(&b, &mod, sizeof(mod), "/a/b/", 5, NULL, 0);
	add_chunk(w, PC_CHUNK_SYMBOLS, &b);
	pc_buf_add_kv(&b, "cpu.lost.kernel", "not a number");
	add_chunk(w, PC_CHUNK_STATS, &b);
	cr_assert_eq(pc_writer_finish(w, NULL), 0);
	pc_buf_free(&b);
}

Test(hostile, inconsistent_records_are_counted_not_fatal)
{
	char *dir = scratch_dir();
	char *cap = scratch_path(dir, "hostile.perfcap");
	char *db = scratch_path(dir, "hostile.db");
	struct tool_result r;

	write_hostile_capture(cap);
	run_analyze(&r, "import", cap, "-o", db, NULL);
	cr_assert_eq(r.status, 0, "stderr: %s", r.err);
	tool_result_free(&r);

	run_analyze(&r, "report", db, NULL);
	cr_assert_eq(r.status, 0, "stderr: %s", r.err);
	cr_expect(strstr(r.out, "samples     2\n"), "%s", r.out);
	cr_expect(strstr(r.out, "Missing stacks:"), "%s", r.out);
	cr_expect(!strstr(r.out, "0 malformed records"), "%s", r.out);
	tool_result_free(&r);

	run_analyze(&r, "report", "--folded", cap, NULL);
	cr_assert_eq(r.status, 0, "stderr: %s", r.err);
	tool_result_free(&r);
	run_analyze(&r, "info", cap, NULL);
	cr_assert_eq(r.status, 0, "stderr: %s", r.err);
	tool_result_free(&r);
	free(cap);
	free(db);
	scratch_remove(dir);
}

/* Random record streams inside valid chunks: every known record type
 * (event sources included) and an unknown one. */
static void write_random_capture(const char *path, unsigned seed)
{
	static const uint16_t chunk_types[] = { PC_CHUNK_PROCS, PC_CHUNK_STACKS,
						PC_CHUNK_EVENTS, PC_CHUNK_SYMBOLS };
	struct pc_writer *w;
	struct pc_buf b = { 0 };
	uint8_t body[512];

	srand(seed);
	cr_assert_eq(pc_writer_open(&w, path, PC_WRITE_FORCE), 0);
	for (int c = 0; c < 8; c++) {
		for (int i = 0; i < 40; i++) {
			size_t len = (size_t)(rand() % 64) * 8;
			for (size_t j = 0; j < len; j++)
				body[j] = (uint8_t)(rand() % 4 == 0 ? rand() : rand() % 3);
			add_raw_record(&b, (uint16_t)(1 + rand() % 21), (uint32_t)(8 + len),
				       body, len);
		}
		add_chunk(w, chunk_types[c % 4], &b);
	}
	cr_assert_eq(pc_writer_finish(w, NULL), 0);
	pc_buf_free(&b);
}

Test(hostile, random_records_never_crash, .timeout = 120)
{
	char *dir = scratch_dir();
	char *cap = scratch_path(dir, "random.perfcap");

	for (unsigned seed = 1; seed <= 25; seed++) {
		struct tool_result r;
		write_random_capture(cap, seed);
		run_analyze(&r, "report", cap, NULL);
		cr_assert_eq(r.status, 0, "seed %u: status %d, stderr: %s", seed, r.status, r.err);
		tool_result_free(&r);
		run_analyze(&r, "report", "--folded", cap, NULL);
		cr_assert_eq(r.status, 0, "seed %u: status %d, stderr: %s", seed, r.status, r.err);
		tool_result_free(&r);
	}
	free(cap);
	scratch_remove(dir);
}
