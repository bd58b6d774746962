/* test_golden.c - captures committed under fixtures/ by released versions
 * must keep loading, with the same content, in every later version. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfcap_format.h"
#include "common/unwind_table.h"

static void fixture(char *out, size_t len, const char *name)
{
	const char *dir = getenv("PERFCAP_FIXTURES");

	cr_assert_not_null(dir, "PERFCAP_FIXTURES not set");
	snprintf(out, len, "%s/%s", dir, name);
}

struct tally {
	int chunks[8], unknown_chunks;
	int recs[16], unknown_recs;
	int kv;
	struct pc_rec_sample sample;   /* the last sample seen */
	char comm[17], exe[64], lib[64];
};

static void tally_records(struct tally *t, const struct pc_chunk *c)
{
	struct pc_rec_iter it;
	const struct pc_rec *rec;

	pc_rec_iter_init(&it, c->data, c->size);
	while (pc_rec_next(&it, &rec) == 1) {
		size_t tail;
		const uint8_t *var;
		if (rec->type >= 16) {
			t->unknown_recs++;
			continue;
		}
		t->recs[rec->type]++;
		if (rec->type == PC_REC_SAMPLE)
			pc_rec_copy(rec, &t->sample, sizeof(t->sample), &tail);
		if (rec->type == PC_REC_PROC) {
			struct pc_rec_proc p;
			var = pc_rec_copy(rec, &p, sizeof(p), &tail);
			memcpy(t->comm, p.comm, 16);
			cr_assert_leq(p.exe_len, tail);
			snprintf(t->exe, sizeof(t->exe), "%.*s", (int)p.exe_len, var);
		}
		if (rec->type == PC_REC_MAP) {
			struct pc_rec_map m;
			var = pc_rec_copy(rec, &m, sizeof(m), &tail);
			cr_assert_eq(m.build_id[0], 0xde);
			snprintf(t->lib, sizeof(t->lib), "%.*s", (int)m.path_len, var);
		}
	}
	cr_assert_eq(it.bad, 0);
}

static void read_all(const char *name, struct tally *t, struct pc_reader_status *st)
{
	char path[512], err[256];
	struct pc_reader *r;
	struct pc_chunk c;

	memset(t, 0, sizeof(*t));
	fixture(path, sizeof(path), name);
	cr_assert_eq(pc_reader_open(&r, path, err, sizeof(err)), 0, "%s: %s", path, err);
	while (pc_reader_next(r, &c) == 1) {
		if (c.hdr.type >= 8) {
			t->unknown_chunks++;
			continue;
		}
		t->chunks[c.hdr.type]++;
		if (c.hdr.type == PC_CHUNK_META || c.hdr.type == PC_CHUNK_STATS) {
			struct pc_kv_iter it;
			const char *k, *v;
			pc_kv_iter_init(&it, c.data, c.size);
			while (pc_kv_next(&it, &k, &v) == 1)
				t->kv++;
		} else if (c.hdr.type != PC_CHUNK_END) {
			tally_records(t, &c);
		}
	}
	*st = *pc_reader_status(r);
	pc_reader_close(r);
}

Test(golden, v1_capture_reads_identically)
{
	struct tally t;
	struct pc_reader_status st;

	read_all("golden-v1.perfcap", &t, &st);
	cr_assert(st.end_seen);
	cr_assert_eq(st.major, 1);
	cr_assert_eq(st.chunks_ok, 7);
	cr_assert_eq(t.chunks[PC_CHUNK_PROCS], 1);
	cr_assert_eq(t.recs[PC_REC_SAMPLE], 10);
	cr_assert_eq(t.recs[PC_REC_STACK], 2);
	cr_assert_eq(t.recs[PC_REC_MODULE], 1);
	cr_assert_eq(t.recs[PC_REC_EXEC], 1);
	cr_assert_eq(t.recs[PC_REC_EXIT], 1);
	cr_assert_eq(t.kv, 4);
	cr_assert_str_eq(t.comm, "golden");
	cr_assert_str_eq(t.exe, "/usr/bin/golden");
	cr_assert_str_eq(t.lib, "/usr/lib/libgolden.so");
	cr_assert_eq(t.sample.ts, 1009);
	cr_assert_eq(t.sample.kstack, PC_STACK_NONE);
}

/* Format 1.2 (stacks-v1.2.perfcap: nofp_chain recorded with user stack
 * copies, -e cpu,sched -F 49 --stack-copy 2K): a reader that knows only
 * the record types below 16, as 1.1 readers do, skips the USTACK (21) and
 * UNWIND (22) records and still reads every sample; a 1.2 reader finds
 * both, each copy within its window and each table with its bytes. */
struct stack_tally {
	int samples, older_reader_skips, ustack, unwind;
};

static void tally_stack_record(struct stack_tally *t, const struct pc_rec *rec)
{
	size_t tail;

	if (rec->type == PC_REC_SAMPLE)
		t->samples++;
	if (rec->type >= 16)
		t->older_reader_skips++;
	if (rec->type == PC_REC_USTACK) {
		struct pc_rec_ustack u;
		pc_rec_copy(rec, &u, sizeof(u), &tail);
		cr_assert_leq(u.size, u.window);
		cr_assert_eq(u.size, tail);
		t->ustack++;
	} else if (rec->type == PC_REC_UNWIND) {
		struct pc_unwind_table ut;
		cr_assert_eq(pc_unwind_table_from_rec(&ut, rec), 0);
		cr_assert_gt(ut.table_len, 0);
		pc_unwind_table_free(&ut);
		t->unwind++;
	}
}

Test(golden, v1_2_stack_copies_skipped_by_older_readers)
{
	char path[512], err[256];
	struct stack_tally t = { 0 };
	struct pc_reader *r;
	struct pc_chunk c;
	struct pc_rec_iter it;
	const struct pc_rec *rec;

	fixture(path, sizeof(path), "stacks-v1.2.perfcap");
	cr_assert_eq(pc_reader_open(&r, path, err, sizeof(err)), 0, "%s: %s", path, err);
	while (pc_reader_next(r, &c) == 1) {
		if (c.hdr.type == PC_CHUNK_META || c.hdr.type == PC_CHUNK_STATS ||
		    c.hdr.type == PC_CHUNK_END)
			continue;
		pc_rec_iter_init(&it, c.data, c.size);
		while (pc_rec_next(&it, &rec) == 1)
			tally_stack_record(&t, rec);
		cr_assert_eq(it.bad, 0);
	}
	cr_assert(pc_reader_status(r)->end_seen);
	cr_assert_eq(pc_reader_status(r)->minor, 2);
	cr_assert_eq(pc_reader_status(r)->chunks_unknown, 0);
	pc_reader_close(r);
	cr_assert_eq(t.samples, 8);
	cr_assert_eq(t.ustack, 36);  /* 8 CPU samples, 28 blocked intervals */
	cr_assert_eq(t.unwind, 4);
	cr_assert_eq(t.older_reader_skips, t.ustack + t.unwind);
}

Test(golden, later_minor_version_with_unknown_parts_still_reads)
{
	struct tally t;
	struct pc_reader_status st;

	read_all("future-minor.perfcap", &t, &st);
	cr_assert_eq(st.minor, 9);
	cr_assert(st.end_seen);
	cr_assert_eq(t.unknown_chunks, 1);
	cr_assert_eq(st.chunks_unknown, 1);
	cr_assert_eq(t.unknown_recs, 1);
	cr_assert_eq(t.recs[PC_REC_SAMPLE], 1);
	cr_assert_eq(t.sample.ts, 7);
	cr_assert_eq(t.sample.cpu, 1);
}
