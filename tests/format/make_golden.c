/* make_golden.c - writes the golden captures committed under fixtures/.
 *
 * Run once when a format version is released; the files are then frozen:
 * test_golden.c checks that every later perfcap still reads them the same.
 *   golden-v1.perfcap      every v1 chunk and record type, known values
 *   future-minor.perfcap   a capture "from a later 1.x": unknown chunk and
 *                          record types, records with appended fields
 */
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "perfcap_format.h"

static void die(const char *what, int err)
{
	fprintf(stderr, "make_golden: %s: error %d\n", what, err);
	exit(1);
}

static void chunk(struct pc_writer *w, uint16_t type, struct pc_buf *b, uint64_t count)
{
	int err = pc_writer_add_chunk(w, type, 1, b->data, b->len, count, 0, 0);
	if (err)
		die("add chunk", err);
	pc_buf_reset(b);
}

static void add_procs(struct pc_buf *b)
{
	static const char exe[] = "/usr/bin/golden";
	static const char argv[] = "golden\0--burn\0";
	static const char lib[] = "/usr/lib/libgolden.so";
	struct pc_rec_proc p = { .h.type = PC_REC_PROC, .ts = 10, .pid = 42, .ppid = 1,
				 .start_ns = 5, .comm = "golden",
				 .exe_len = sizeof(exe) - 1, .cmdline_len = sizeof(argv) - 1 };
	struct pc_rec_thread t = { .h.type = PC_REC_THREAD, .ts = 10, .pid = 42, .tid = 43,
				   .comm = "golden-worker" };
	struct pc_rec_map m = { .h.type = PC_REC_MAP, .ts = 10, .pid = 42, .prot = 5,
				.start = 0x400000, .end = 0x401000, .pgoff = 0x1000,
				.inode = 77, .dev_major = 8, .dev_minor = 1,
				.build_id_len = 4, .build_id = { 0xde, 0xad, 0xbe, 0xef },
				.path_len = sizeof(lib) - 1 };

	pc_buf_add_rec(b, &p, sizeof(p), exe, p.exe_len, argv, p.cmdline_len);
	pc_buf_add_rec(b, &t, sizeof(t), NULL, 0, NULL, 0);
	pc_buf_add_rec(b, &m, sizeof(m), lib, m.path_len, NULL, 0);
}

static void add_stacks(struct pc_buf *b)
{
	struct { struct pc_rec_stack s; uint64_t ips[3]; } u = {
		.s = { .h.type = PC_REC_STACK, .id = 0, .pid = 42, .kind = PC_STACK_USER, .nr = 3 },
		.ips = { 0x400100, 0x400200, 0x400300 } };
	struct { struct pc_rec_stack s; uint64_t ips[1]; } k = {
		.s = { .h.type = PC_REC_STACK, .h.flags = PC_STACK_F_TRUNCATED, .id = 1,
		       .kind = PC_STACK_KERNEL, .nr = 1 },
		.ips = { 0xffffffff81000010ull } };

	pc_buf_add_rec(b, &u, sizeof(u), NULL, 0, NULL, 0);
	pc_buf_add_rec(b, &k, sizeof(k), NULL, 0, NULL, 0);
}

static void add_events(struct pc_buf *b)
{
	for (uint32_t i = 0; i < 10; i++) {
		struct pc_rec_sample s = { .h.type = PC_REC_SAMPLE, .ts = 1000 + i, .pid = 42,
					   .tid = 43, .cpu = i % 2, .ustack = 0,
					   .kstack = i < 3 ? 1 : PC_STACK_NONE };
		pc_buf_add_rec(b, &s, sizeof(s), NULL, 0, NULL, 0);
	}
	struct pc_rec_exec e = { .h.type = PC_REC_EXEC, .ts = 999, .pid = 42, .tid = 42,
				 .comm = "golden" };
	struct pc_rec_exit x = { .h.type = PC_REC_EXIT, .ts = 2000, .pid = 42, .tid = 42 };
	pc_buf_add_rec(b, &e, sizeof(e), NULL, 0, NULL, 0);
	pc_buf_add_rec(b, &x, sizeof(x), NULL, 0, NULL, 0);
}

static void add_module(struct pc_buf *b)
{
	static const char path[] = "/usr/lib/libgolden.so";
	static const char strtab[] = "burn_a\0burn_b\0";
	struct pc_segment seg = { .offset = 0x1000, .vaddr = 0x1000, .filesz = 0x1000,
				  .memsz = 0x1000 };
	struct pc_symbol syms[2] = { { 0x1100, 0x80, 0 }, { 0x1200, 0x80, 7 } };
	struct pc_rec_module m = { .h.type = PC_REC_MODULE, .kind = PC_MODULE_ELF,
				   .build_id_len = 4, .nsegs = 1, .nsyms = 2,
				   .path_len = sizeof(path) - 1, .strtab_len = sizeof(strtab),
				   .build_id = { 0xde, 0xad, 0xbe, 0xef } };
	uint8_t var[sizeof(seg) + sizeof(syms) + sizeof(path) - 1];

	memcpy(var, &seg, sizeof(seg));
	memcpy(var + sizeof(seg), syms, sizeof(syms));
	memcpy(var + sizeof(seg) + sizeof(syms), path, sizeof(path) - 1);
	pc_buf_add_rec(b, &m, sizeof(m), var, sizeof(var), strtab, sizeof(strtab));
}

static void write_golden(const char *path)
{
	struct pc_writer *w;
	struct pc_buf b = { 0 };
	int err = pc_writer_open(&w, path, PC_WRITE_FORCE);

	if (err)
		die(path, err);
	pc_buf_add_kv(&b, "perfcap.version", "0.1.0");
	pc_buf_add_kv(&b, "sampling.cpu.freq_hz", "99");
	chunk(w, PC_CHUNK_META, &b, 2);
	add_procs(&b);
	chunk(w, PC_CHUNK_PROCS, &b, 3);
	add_stacks(&b);
	chunk(w, PC_CHUNK_STACKS, &b, 2);
	add_events(&b);
	chunk(w, PC_CHUNK_EVENTS, &b, 12);
	add_module(&b);
	chunk(w, PC_CHUNK_SYMBOLS, &b, 1);
	pc_buf_add_kv_u64(&b, "cpu.samples", 10);
	pc_buf_add_kv_u64(&b, "cpu.lost.kernel", 0);
	chunk(w, PC_CHUNK_STATS, &b, 2);
	pc_buf_add_kv_u64(&b, "events", 12);
	if ((err = pc_writer_finish(w, &b)))
		die("finish", err);
	pc_buf_free(&b);
}

/* Marks the file as written by format 1.minor, as a later release would. */
static void set_minor(const char *path, uint16_t minor)
{
	FILE *f = fopen(path, "r+");

	if (!f || fseek(f, offsetof(struct pc_file_header, minor), SEEK_SET) ||
	    fwrite(&minor, sizeof(minor), 1, f) != 1 || fclose(f))
		die("set minor", -1);
}

static void write_future(const char *path)
{
	struct pc_writer *w;
	struct pc_buf b = { 0 };
	struct { struct pc_rec_sample s; uint64_t weight; } longer = {
		.s = { .h.type = PC_REC_SAMPLE, .ts = 7, .pid = 1, .tid = 2, .cpu = 1,
		       .ustack = PC_STACK_NONE, .kstack = PC_STACK_NONE },
		.weight = 3 };
	struct { struct pc_rec h; uint64_t x; } unknown = { .h.type = 999, .x = 1 };
	int err = pc_writer_open(&w, path, PC_WRITE_FORCE);

	if (err)
		die(path, err);
	pc_buf_add_kv(&b, "perfcap.version", "1.9.0");
	pc_buf_add_kv(&b, "future.key", "ignored");
	chunk(w, PC_CHUNK_META, &b, 2);
	pc_buf_append(&b, "opaque future payload", 21);
	chunk(w, 300, &b, 1);
	pc_buf_add_rec(&b, &unknown, sizeof(unknown), NULL, 0, NULL, 0);
	pc_buf_add_rec(&b, &longer, sizeof(longer), NULL, 0, NULL, 0);
	chunk(w, PC_CHUNK_EVENTS, &b, 2);
	if ((err = pc_writer_finish(w, NULL)))
		die("finish", err);
	pc_buf_free(&b);
	set_minor(path, 9);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: make_golden GOLDEN_OUT FUTURE_OUT\n");
		return 2;
	}
	write_golden(argv[1]);
	write_future(argv[2]);
	return 0;
}
