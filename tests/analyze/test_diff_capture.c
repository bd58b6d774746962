/* test_diff_capture.c - writes the synthetic captures of the diff tests
 * (see test_diff_capture.h) with the format library's writer. */
#include <elf.h>
#include <string.h>

#include "common/elf_module.h"
#include "perfcap_format.h"
#include "test_diff_capture.h"

#define BASE   0x555555554000ull
#define T0     1000000000ull
#define F_MAIN 0x1000
#define F_WORK 0x1100
#define F_HOT  0x1200
#define F_COLD 0x1300
#define F_FRESH 0x1400
#define NR_CLOCK_NANOSLEEP 230

enum { STACK_HOT, STACK_COLD, STACK_FRESH };

struct diff_capture diff_capture_basic(void)
{
	struct diff_capture c = {
		.kernel = "6.1.0-test", .filter_comm = "none", .freq_hz = 100,
		.duration_ns = 4000000000ull, .hot = 300, .cold = 100, .sleep_step = 1000,
	};

	return c;
}

struct writer {
	struct pc_writer *w;
	struct pc_buf buf;
	int err;
};

static void chunk(struct writer *w, uint16_t type, uint64_t count, uint64_t t0, uint64_t t1)
{
	if (w->err == 0)
		w->err = pc_writer_add_chunk(w->w, type, 1, w->buf.data, w->buf.len, count, t0, t1);
	pc_buf_reset(&w->buf);
}

static void add_meta(struct writer *w, const struct diff_capture *c)
{
	pc_buf_add_kv(&w->buf, "perfcap.version", "0.1.0");
	pc_buf_add_kv(&w->buf, "host.kernel.release", c->kernel);
	pc_buf_add_kv(&w->buf, "target.command", "./app");
	pc_buf_add_kv(&w->buf, "filter.comm", c->filter_comm);
	pc_buf_add_kv(&w->buf, "sources", "cpu,syscall");
	pc_buf_add_kv_u64(&w->buf, "sampling.cpu.freq_hz", c->freq_hz);
	pc_buf_add_kv_u64(&w->buf, "record.start_ns", T0);
	chunk(w, PC_CHUNK_META, 7, 0, 0);
}

static void add_procs(struct writer *w)
{
	struct pc_rec_proc p = { .h.type = PC_REC_PROC, .ts = T0, .pid = 100, .ppid = 1 };
	struct pc_rec_thread t = { .h.type = PC_REC_THREAD, .ts = T0, .pid = 100, .tid = 100 };
	struct pc_rec_map m = {
		.h.type = PC_REC_MAP, .ts = T0, .pid = 100, .prot = 5, .start = BASE,
		.end = BASE + 0x10000, .inode = 7, .dev_major = 8, .dev_minor = 1,
	};
	static const char exe[] = "/usr/bin/app";

	memcpy(p.comm, "app", 3);
	p.exe_len = sizeof(exe) - 1;
	pc_buf_add_rec(&w->buf, &p, sizeof(p), exe, p.exe_len, "./app", 5);
	memcpy(t.comm, "app", 3);
	pc_buf_add_rec(&w->buf, &t, sizeof(t), NULL, 0, NULL, 0);
	t.tid = 101;
	memcpy(t.comm, "io", 3);
	pc_buf_add_rec(&w->buf, &t, sizeof(t), NULL, 0, NULL, 0);
	m.path_len = sizeof(exe) - 1;
	pc_buf_add_rec(&w->buf, &m, sizeof(m), exe, m.path_len, NULL, 0);
	chunk(w, PC_CHUNK_PROCS, 4, T0, T0);
}

static void add_stack(struct writer *w, uint32_t id, const uint64_t *ips, uint32_t nr)
{
	struct pc_rec_stack s = { .h.type = PC_REC_STACK, .id = id, .pid = 100,
				  .kind = PC_STACK_USER, .nr = nr };

	pc_buf_add_rec(&w->buf, &s, sizeof(s), ips, nr * sizeof(uint64_t), NULL, 0);
}

static void add_stacks(struct writer *w, uint64_t shift)
{
	uint64_t b = BASE + shift;
	uint64_t hot[] = { b + F_HOT + 8, b + F_WORK + 0x20, b + F_MAIN + 0x20 };
	uint64_t cold[] = { b + F_COLD + 8, b + F_WORK + 0x30, b + F_MAIN + 0x20 };
	uint64_t fresh[] = { b + F_FRESH + 8, b + F_MAIN + 0x40 };

	add_stack(w, STACK_HOT, hot, 3);
	add_stack(w, STACK_COLD, cold, 3);
	add_stack(w, STACK_FRESH, fresh, 2);
	chunk(w, PC_CHUNK_STACKS, 3, 0, 0);
}

static void add_samples(struct writer *w, int n, uint32_t stack, uint64_t *ts, uint64_t step)
{
	for (int i = 0; i < n; i++) {
		struct pc_rec_sample s = { .h.type = PC_REC_SAMPLE, .ts = *ts, .pid = 100,
					   .tid = 100, .ustack = stack,
					   .kstack = PC_STACK_NONE };

		pc_buf_add_rec(&w->buf, &s, sizeof(s), NULL, 0, NULL, 0);
		*ts += step;
	}
}

static void add_events(struct writer *w, const struct diff_capture *c)
{
	int n = c->hot + c->cold + c->fresh;
	uint64_t step = n ? c->duration_ns / (uint64_t)(n + 1) : 1, ts = T0 + step;
	uint64_t gap = c->sleeps ? c->duration_ns / (uint64_t)(c->sleeps + 1) : 0;

	add_samples(w, c->hot, STACK_HOT, &ts, step);
	add_samples(w, c->cold, STACK_COLD, &ts, step);
	add_samples(w, c->fresh, STACK_FRESH, &ts, step);
	for (int i = 0; i < c->sleeps; i++) {
		struct pc_rec_syscall s = {
			.h.type = PC_REC_SYSCALL, .ts = T0 + (uint64_t)i * gap,
			.duration = c->sleep_ns + (uint64_t)(i % 10) * c->sleep_step,
			.pid = 100,
			.tid = 101, .nr = NR_CLOCK_NANOSLEEP, .ustack = PC_STACK_NONE,
		};

		pc_buf_add_rec(&w->buf, &s, sizeof(s), NULL, 0, NULL, 0);
	}
	chunk(w, PC_CHUNK_EVENTS, (uint64_t)n + (uint64_t)c->sleeps, T0, T0 + c->duration_ns);
}

static void add_symbols(struct writer *w, uint64_t shift)
{
	static const char strtab[] = "main\0work\0hot\0cold\0fresh";
	struct pc_segment seg = { .offset = 0, .vaddr = 0, .filesz = 0x10000, .memsz = 0x10000 };
	struct pc_symbol syms[] = {
		{ F_MAIN + shift, 0x100, 0 }, { F_WORK + shift, 0x100, 5 },
		{ F_HOT + shift, 0x100, 10 }, { F_COLD + shift, 0x100, 14 },
		{ F_FRESH + shift, 0x100, 19 },
	};
	struct pc_elf_module m = {
		.kind = PC_MODULE_ELF, .e_type = ET_DYN, .build_id_len = 8,
		.path = (char *)"/usr/bin/app", .segs = &seg, .nsegs = 1, .syms = syms,
		.nsyms = 5, .strtab = (char *)strtab, .strtab_len = sizeof(strtab),
	};

	memcpy(m.build_id, "diffbld0", 8);
	m.build_id[7] = (uint8_t)('0' + (shift >> 8) % 10);
	pc_buf_add_module(&w->buf, &m, NULL, 0);
	chunk(w, PC_CHUNK_SYMBOLS, 1, 0, 0);
}

int write_diff_capture(const char *path, const struct diff_capture *c)
{
	struct writer w = { 0 };
	int err = pc_writer_open(&w.w, path, PC_WRITE_FORCE);

	if (err)
		return err;
	add_meta(&w, c);
	add_procs(&w);
	add_stacks(&w, c->shift);
	add_events(&w, c);
	add_symbols(&w, c->shift);
	pc_buf_add_kv_u64(&w.buf, "cpu.lost.kernel", c->lost);
	pc_buf_add_kv_u64(&w.buf, "record.duration_ns", c->duration_ns);
	if (c->busy_ns || c->steal_ns) {
		pc_buf_add_kv_u64(&w.buf, "host.cpu.busy_ns", c->busy_ns);
		pc_buf_add_kv_u64(&w.buf, "host.cpu.idle_ns", 0);
		pc_buf_add_kv_u64(&w.buf, "host.cpu.steal_ns", c->steal_ns);
	}
	pc_buf_add_kv_u64(&w.buf, "record.end_ns", T0 + c->duration_ns);
	chunk(&w, PC_CHUNK_STATS, 3, 0, 0);
	if (w.err)
		pc_writer_abort(w.w);
	else
		w.err = pc_writer_finish(w.w, NULL);
	pc_buf_free(&w.buf);
	return w.err;
}
