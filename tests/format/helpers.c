/* helpers.c - builds small captures for the format tests. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"

void tmp_path(char *out, size_t len, const char *tag)
{
	snprintf(out, len, "/tmp/perfcap-test-%d-%s.perfcap", (int)getpid(), tag);
	unlink(out);
}

void add_samples(struct pc_buf *b, int n, uint64_t base)
{
	for (int i = 0; i < n; i++) {
		struct pc_rec_sample s = {
			.h.type = PC_REC_SAMPLE, .ts = base + (uint64_t)i * 1000,
			.pid = 100, .tid = 100 + (uint32_t)(i % 3), .cpu = (uint32_t)i % 2,
			.ustack = (uint32_t)i % 5, .kstack = PC_STACK_NONE,
		};
		cr_assert_eq(pc_buf_add_rec(b, &s, sizeof(s), NULL, 0, NULL, 0), 0);
	}
}

void write_capture(const char *path, int nchunks, int n, uint64_t *ends, int *nends)
{
	struct pc_writer *w;
	struct pc_buf b = { 0 };

	cr_assert_eq(pc_writer_open(&w, path, 0), 0);
	*nends = 0;
	pc_buf_add_kv(&b, "perfcap.version", "test");
	pc_buf_add_kv(&b, "host.hostname", "golden");
	cr_assert_eq(pc_writer_add_chunk(w, PC_CHUNK_META, PC_META_VERSION, b.data,
					 b.len, 2, 0, 0), 0);
	ends[(*nends)++] = pc_writer_bytes(w);
	for (int c = 0; c < nchunks; c++) {
		pc_buf_reset(&b);
		add_samples(&b, n, 1000000ull * (uint64_t)(c + 1));
		cr_assert_eq(pc_writer_add_chunk(w, PC_CHUNK_EVENTS, PC_EVENTS_VERSION,
						 b.data, b.len, (uint64_t)n, 0, 0), 0);
		ends[(*nends)++] = pc_writer_bytes(w);
	}
	pc_buf_reset(&b);
	pc_buf_add_kv_u64(&b, "events", (uint64_t)(n * nchunks));
	cr_assert_eq(pc_writer_finish(w, &b), 0);
	ends[*nends] = 0;
	pc_buf_free(&b);
	struct pc_reader *r;
	char err[128];
	cr_assert_eq(pc_reader_open(&r, path, err, sizeof(err)), 0);
	ends[(*nends)++] = pc_reader_status(r)->file_size;
	pc_reader_close(r);
}

int count_chunks(const char *path, struct pc_reader_status *st)
{
	struct pc_reader *r;
	struct pc_chunk c;
	char err[128];
	int n = 0;

	if (pc_reader_open(&r, path, err, sizeof(err)))
		return -1;
	while (pc_reader_next(r, &c) == 1)
		n++;
	if (st)
		*st = *pc_reader_status(r);
	pc_reader_close(r);
	return n;
}
