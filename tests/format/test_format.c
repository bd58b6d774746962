/* test_format.c - the capture format library: round trip, forward
 * compatibility, truncation at every byte, corruption and hostile input. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"

static void copy_prefix(const char *src, const char *dst, uint64_t len)
{
	int in = open(src, O_RDONLY), out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	char *buf = malloc(len + 1);

	cr_assert(in >= 0 && out >= 0 && buf);
	cr_assert_eq(pread(in, buf, len, 0), (ssize_t)len);
	cr_assert_eq(write(out, buf, len), (ssize_t)len);
	close(in);
	close(out);
	free(buf);
}

static void flip_byte(const char *path, uint64_t off)
{
	int fd = open(path, O_RDWR);
	uint8_t b;

	cr_assert(fd >= 0);
	cr_assert_eq(pread(fd, &b, 1, (off_t)off), 1);
	b ^= 0x5a;
	cr_assert_eq(pwrite(fd, &b, 1, (off_t)off), 1);
	close(fd);
}

Test(format, round_trip)
{
	char path[128];
	uint64_t ends[8];
	int nends, nevents = 0, nmeta = 0;
	struct pc_reader *r;
	struct pc_chunk c;
	char err[128];

	tmp_path(path, sizeof(path), "rt");
	write_capture(path, 2, 500, ends, &nends);
	cr_assert_eq(pc_reader_open(&r, path, err, sizeof(err)), 0, "%s", err);
	while (pc_reader_next(r, &c) == 1) {
		if (c.hdr.type == PC_CHUNK_META) {
			struct pc_kv_iter it;
			const char *k, *v;
			pc_kv_iter_init(&it, c.data, c.size);
			cr_assert_eq(pc_kv_next(&it, &k, &v), 1);
			cr_assert_str_eq(k, "perfcap.version");
			cr_assert_str_eq(v, "test");
			nmeta++;
		}
		if (c.hdr.type == PC_CHUNK_EVENTS) {
			struct pc_rec_iter it;
			const struct pc_rec *rec;
			int i = 0;
			cr_assert(c.hdr.flags & PC_CHUNK_F_ZSTD, "samples compress");
			cr_assert_lt(c.hdr.payload_size, c.hdr.raw_size);
			pc_rec_iter_init(&it, c.data, c.size);
			while (pc_rec_next(&it, &rec) == 1) {
				const struct pc_rec_sample *s = (const void *)rec;
				cr_assert_eq(rec->type, PC_REC_SAMPLE);
				cr_assert_eq(s->tid, 100 + (uint32_t)(i % 3));
				cr_assert_eq(s->ustack, (uint32_t)i % 5);
				i++;
			}
			cr_assert_eq(i, 500);
			cr_assert_eq(c.hdr.count, 500);
			nevents++;
		}
	}
	cr_assert_eq(nmeta, 1);
	cr_assert_eq(nevents, 2);
	cr_assert(pc_reader_status(r)->end_seen);
	cr_assert_null(pc_reader_damage(r, err, sizeof(err)));
	pc_reader_close(r);
	unlink(path);
}

Test(format, file_created_0600_and_never_overwritten)
{
	char path[128];
	struct pc_writer *w;
	struct stat sb;

	tmp_path(path, sizeof(path), "perm");
	cr_assert_eq(pc_writer_open(&w, path, 0), 0);
	pc_writer_abort(w);
	cr_assert_eq(stat(path, &sb), 0);
	cr_assert_eq(sb.st_mode & 0777, 0600);
	cr_assert_eq(pc_writer_open(&w, path, 0), -EEXIST);
	cr_assert_null(w);
	cr_assert_eq(pc_writer_open(&w, path, PC_WRITE_FORCE), 0);
	pc_writer_abort(w);
	unlink(path);
}

Test(format, unknown_chunk_type_is_returned_and_counted)
{
	char path[128];
	struct pc_writer *w;
	struct pc_chunk c;
	struct pc_reader *r;
	char err[128];
	int types[4], n = 0;

	tmp_path(path, sizeof(path), "unk");
	cr_assert_eq(pc_writer_open(&w, path, 0), 0);
	cr_assert_eq(pc_writer_add_chunk(w, 99, 1, "future", 6, 1, 0, 0), 0);
	cr_assert_eq(pc_writer_add_chunk(w, PC_CHUNK_STATS, 1, "a\0" "1", 4, 1, 0, 0), 0);
	cr_assert_eq(pc_writer_finish(w, NULL), 0);
	cr_assert_eq(pc_reader_open(&r, path, err, sizeof(err)), 0);
	while (n < 4 && pc_reader_next(r, &c) == 1)
		types[n++] = c.hdr.type;
	cr_assert_eq(n, 3);
	cr_assert_eq(types[0], 99);
	cr_assert_eq(types[1], PC_CHUNK_STATS);
	cr_assert_eq(types[2], PC_CHUNK_END);
	cr_assert_eq(pc_reader_status(r)->chunks_unknown, 1);
	cr_assert_str_eq(pc_chunk_type_name(99), "unknown");
	pc_reader_close(r);
	unlink(path);
}

Test(format, truncation_at_every_byte_yields_exactly_the_complete_chunks)
{
	char path[128], cut[128];
	uint64_t ends[8];
	int nends;

	tmp_path(path, sizeof(path), "full");
	tmp_path(cut, sizeof(cut), "cut");
	write_capture(path, 2, 40, ends, &nends);
	for (uint64_t len = 0; len <= ends[nends - 1]; len++) {
		struct pc_reader_status st;
		int complete = 0, at_boundary = len == PC_FILE_HEADER_SIZE;

		copy_prefix(path, cut, len);
		for (int i = 0; i < nends; i++) {
			complete += ends[i] <= len;
			at_boundary |= ends[i] == len;
		}
		int got = count_chunks(cut, &st);
		if (len < PC_FILE_HEADER_SIZE) {
			cr_assert_eq(got, -1, "len %lu: too short to open", (unsigned long)len);
			continue;
		}
		cr_assert_eq(got, complete, "len %lu: %d chunks, want %d",
			     (unsigned long)len, got, complete);
		cr_assert_eq(st.truncated, !at_boundary, "len %lu", (unsigned long)len);
		cr_assert_eq(st.end_seen, len == ends[nends - 1]);
	}
	unlink(path);
	unlink(cut);
}

Test(format, checksum_mismatch_skips_only_that_chunk)
{
	char path[128];
	uint64_t ends[8];
	int nends;
	struct pc_reader_status st;

	tmp_path(path, sizeof(path), "crc");
	write_capture(path, 3, 100, ends, &nends);
	flip_byte(path, ends[1] + PC_CHUNK_HEADER_SIZE + 10); /* payload of chunk 2 */
	cr_assert_eq(count_chunks(path, &st), nends - 1);
	cr_assert_eq(st.chunks_bad_crc, 1);
	cr_assert(st.end_seen);
	unlink(path);
}

Test(format, damaged_header_resyncs_to_next_chunk)
{
	char path[128], msg[256];
	uint64_t ends[8];
	int nends;
	struct pc_reader_status st;
	struct pc_reader *r;
	struct pc_chunk c;

	tmp_path(path, sizeof(path), "magic");
	write_capture(path, 3, 100, ends, &nends);
	flip_byte(path, ends[1]); /* magic of chunk 2 */
	cr_assert_eq(count_chunks(path, &st), nends - 1);
	cr_assert(st.garbage);
	cr_assert_eq(st.stop_offset, ends[1]);
	cr_assert(st.end_seen);
	cr_assert_eq(pc_reader_open(&r, path, msg, sizeof(msg)), 0);
	while (pc_reader_next(r, &c) == 1)
		;
	cr_assert_not_null(pc_reader_damage(r, msg, sizeof(msg)));
	cr_assert(strstr(msg, "unreadable data"), "%s", msg);
	pc_reader_close(r);
	unlink(path);
}

Test(format, rejects_non_capture_and_newer_major)
{
	char path[128], err[128];
	struct pc_reader *r;
	struct pc_file_header fh = { .magic = PC_FILE_MAGIC, .major = PC_FORMAT_MAJOR + 1,
				     .header_size = PC_FILE_HEADER_SIZE };
	FILE *f;

	tmp_path(path, sizeof(path), "bad");
	f = fopen(path, "w");
	fputs("this is not a capture, it is a text file\n", f);
	fclose(f);
	cr_assert_eq(pc_reader_open(&r, path, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "not a perfcap capture"), "%s", err);
	f = fopen(path, "w");
	fwrite(&fh, sizeof(fh), 1, f);
	fclose(f);
	cr_assert_eq(pc_reader_open(&r, path, err, sizeof(err)), -EPROTONOSUPPORT);
	cr_assert(strstr(err, "newer"), "%s", err);
	cr_assert_eq(pc_reader_open(&r, "/nonexistent/x.perfcap", err, sizeof(err)), -ENOENT);
	unlink(path);
}

Test(format, record_copy_tolerates_longer_and_shorter_layouts)
{
	struct { struct pc_rec_sample s; uint64_t future; } longer = {
		.s = { .h = { .type = PC_REC_SAMPLE, .size = sizeof(longer) }, .tid = 7 },
		.future = 42,
	};
	struct pc_rec_sample older = { .h = { .type = PC_REC_SAMPLE, .size = 24 },
				       .ts = 5, .pid = 6, .tid = 9, .cpu = 3 };
	struct pc_rec_sample out;
	size_t tail;
	const uint8_t *rest;

	rest = pc_rec_copy(&longer.s.h, &out, sizeof(out), &tail);
	cr_assert_eq(out.tid, 7);
	cr_assert_eq(tail, 8);
	cr_assert_eq(*(const uint64_t *)rest, 42);
	memset(&out, 0xff, sizeof(out));
	pc_rec_copy(&older.h, &out, sizeof(out), &tail);
	cr_assert_eq(out.ts, 5);
	cr_assert_eq(out.tid, 9, "fields inside an older record's size are kept");
	cr_assert_eq(out.cpu, 0, "fields past an older record's size are zero");
	cr_assert_eq(out.ustack, 0);
	cr_assert_eq(tail, 0);
}

Test(format, malformed_records_and_pairs_stop_iteration)
{
	uint8_t buf[64] = { 0 };
	struct pc_rec *h = (void *)buf;
	struct pc_rec_iter it;
	const struct pc_rec *rec;
	struct pc_kv_iter kv;
	const char *k, *v;

	h->type = 1;
	h->size = 12; /* not a multiple of 8 */
	pc_rec_iter_init(&it, buf, sizeof(buf));
	cr_assert_eq(pc_rec_next(&it, &rec), -1);
	cr_assert_eq(it.bad, 1);
	h->size = 128; /* past the payload */
	pc_rec_iter_init(&it, buf, sizeof(buf));
	cr_assert_eq(pc_rec_next(&it, &rec), -1);
	h->size = 0;
	pc_rec_iter_init(&it, buf, sizeof(buf));
	cr_assert_eq(pc_rec_next(&it, &rec), -1);
	pc_kv_iter_init(&kv, "key\0val", 7); /* value not terminated */
	cr_assert_eq(pc_kv_next(&kv, &k, &v), -1);
	pc_kv_iter_init(&kv, "key", 3);
	cr_assert_eq(pc_kv_next(&kv, &k, &v), -1);
}

Test(format, random_corruption_never_crashes)
{
	char path[128], bad[128];
	uint64_t ends[8];
	int nends;

	tmp_path(path, sizeof(path), "fz");
	tmp_path(bad, sizeof(bad), "fzb");
	write_capture(path, 2, 30, ends, &nends);
	srand(1234);
	for (int round = 0; round < 300; round++) {
		struct pc_reader_status st;
		copy_prefix(path, bad, ends[nends - 1]);
		for (int k = 0; k < 1 + round % 4; k++)
			flip_byte(bad, PC_FILE_HEADER_SIZE +
				  (uint64_t)rand() % (ends[nends - 1] - PC_FILE_HEADER_SIZE));
		int got = count_chunks(bad, &st);
		cr_assert_geq(got, 0);
		cr_assert_leq(got, nends);
		cr_assert(got == nends || st.chunks_bad_crc || st.garbage || st.truncated ||
			  st.chunks_bad_zstd, "lost chunks are always accounted for");
	}
	unlink(path);
	unlink(bad);
}

Test(format, crc32c_known_answer)
{
	/* RFC 3720 B.4: 32 bytes of zeros */
	uint8_t zeros[32] = { 0 };
	cr_assert_eq(pc_crc32c(0, zeros, sizeof(zeros)), 0x8A9136AAu);
	cr_assert_eq(pc_crc32c(0, "123456789", 9), 0xE3069283u);
	cr_assert_eq(pc_crc32c_portable(0, zeros, sizeof(zeros)), 0x8A9136AAu);
	cr_assert_eq(pc_crc32c_portable(0, "123456789", 9), 0xE3069283u);
}

/* The crc32 instruction path (where the CPU has one) and the table agree
 * on every length and alignment, and when continued piece by piece. */
Test(format, crc32c_paths_agree)
{
	uint8_t buf[4096 + 16];

	srand(99);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)rand();
	for (size_t off = 0; off < 16; off++)
		for (size_t len = 0; len + off <= sizeof(buf); len += 1 + len / 3) {
			uint32_t whole = pc_crc32c(7, buf + off, len);
			cr_assert_eq(whole, pc_crc32c_portable(7, buf + off, len), "off %zu len %zu",
				     off, len);
			cr_assert_eq(pc_crc32c(pc_crc32c(7, buf + off, len / 2), buf + off + len / 2,
					       len - len / 2), whole);
		}
}

Test(format, damaged_size_field_does_not_hide_later_chunks)
{
	char path[128];
	uint64_t ends[8];
	int nends;
	struct pc_reader_status st;
	uint64_t huge = 200u << 20; /* within limits, past the end of the file */
	int fd;

	tmp_path(path, sizeof(path), "size");
	write_capture(path, 3, 100, ends, &nends);
	fd = open(path, O_RDWR);
	cr_assert_eq(pwrite(fd, &huge, sizeof(huge), (off_t)(ends[1] +
		     offsetof(struct pc_chunk_header, payload_size))), sizeof(huge));
	close(fd);
	cr_assert_eq(count_chunks(path, &st), nends - 1);
	cr_assert(st.garbage);
	cr_assert_not(st.truncated);
	cr_assert(st.end_seen);
	unlink(path);
}

/* The offsets of the chunks of the types in mask that path yields, from
 * pc_reader_next (filtered here) or pc_reader_next_of; -1 ends the list. */
static void offsets_of(const char *path, uint32_t mask, int next_of, int64_t *out, int max)
{
	struct pc_reader *r;
	struct pc_chunk c;
	char err[128];
	int n = 0;

	cr_assert_eq(pc_reader_open(&r, path, err, sizeof(err)), 0);
	while ((next_of ? pc_reader_next_of(r, &c, mask) : pc_reader_next(r, &c)) == 1)
		if (c.hdr.type < 32 && (mask & (1u << c.hdr.type)) && n < max - 1)
			out[n++] = (int64_t)c.offset;
	out[n] = -1;
	pc_reader_close(r);
}

/* pc_reader_next_of steps over the other chunks by their headers, without
 * checking them, yet must yield exactly the chunks of its types that a
 * full read yields, whatever the damage: a chunk that fails its checksum
 * is stepped over by its sizes in both, a bad header resyncs the same way. */
Test(format, next_of_yields_what_a_full_read_yields_of_its_types)
{
	const uint32_t mask = 1u << PC_CHUNK_META | 1u << PC_CHUNK_END;
	char path[128], bad[128];
	uint64_t ends[8];
	int64_t full[16], some[16];
	int nends;

	tmp_path(path, sizeof(path), "nof");
	tmp_path(bad, sizeof(bad), "nofb");
	write_capture(path, 4, 30, ends, &nends);
	offsets_of(path, mask, 1, some, 16);
	cr_assert_eq(some[0], PC_FILE_HEADER_SIZE);            /* META */
	cr_assert_eq(some[1], (int64_t)ends[nends - 2]);       /* END */
	cr_assert_eq(some[2], -1);
	srand(4321);
	for (int round = 0; round < 300; round++) {
		copy_prefix(path, bad, ends[nends - 1]);
		for (int k = 0; k < 1 + round % 4; k++)
			flip_byte(bad, PC_FILE_HEADER_SIZE +
				  (uint64_t)rand() % (ends[nends - 1] - PC_FILE_HEADER_SIZE));
		offsets_of(bad, mask, 0, full, 16);
		offsets_of(bad, mask, 1, some, 16);
		for (int i = 0; i < 16 && (full[i] >= 0 || some[i] >= 0); i++)
			cr_assert_eq(full[i], some[i], "round %d, chunk %d", round, i);
	}
	unlink(path);
	unlink(bad);
}
