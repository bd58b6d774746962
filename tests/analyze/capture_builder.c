/* capture_builder.c - synthetic captures with known answers (see
 * capture_builder.h). Everything goes through the format library writer. */
#include <elf.h>
#include <string.h>

#include "capture_builder.h"
#include "common/elf_module.h"
#include "event_builder.h"
#include "perfcap_format.h"

#define APP_SYM_START  0x1000
#define APP_SYM_MAIN   0x1100
#define APP_SYM_CALLER 0x1200
#define APP_SYM_A      0x1300
#define APP_SYM_B      0x1400
#define KSYM_SYSCALL   0xffffffff81000000ull
#define KSYM_READ      0xffffffff81001000ull
#define KSYM_PIPE      0xffffffff81002000ull
#define TS_BASE        1000000000ull   /* 1 s */
#define TS_STEP        10000000ull     /* 10 ms: 100 Hz */

static const uint8_t app_build_id[20] = {
	0xab, 0xcd, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd,
	0xef, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x01,
};

struct builder {
	struct pc_writer *w;
	struct capture_layout *layout;
	struct pc_buf buf;
	uint64_t ts;
	int err;
};

static void add_chunk(struct builder *b, uint16_t type, uint64_t count,
		      uint64_t t_start, uint64_t t_end)
{
	if (b->err == 0)
		b->err = pc_writer_add_chunk(b->w, type, 1, b->buf.data, b->buf.len, count,
					     t_start, t_end);
	if (b->err == 0 && b->layout && b->layout->nchunks < 16) {
		b->layout->chunk_type[b->layout->nchunks] = type;
		b->layout->chunk_end[b->layout->nchunks++] = pc_writer_bytes(b->w);
	}
	pc_buf_reset(&b->buf);
}

static void add_meta(struct builder *b)
{
	pc_buf_add_kv(&b->buf, "perfcap.version", "0.1.0");
	pc_buf_add_kv(&b->buf, "host.hostname", "testhost");
	pc_buf_add_kv(&b->buf, "host.kernel.release", "6.1.0-test");
	pc_buf_add_kv(&b->buf, "record.cmdline", "perfcap-record -F 100 -- ./app");
	pc_buf_add_kv(&b->buf, "target.command", "./app");
	pc_buf_add_kv(&b->buf, "sampling.cpu.freq_hz", "100");
	pc_buf_add_kv_u64(&b->buf, "record.start_ns", TS_BASE);
	add_chunk(b, PC_CHUNK_META, 7, 0, 0);
}

static void add_proc(struct builder *b, uint32_t pid, const char *comm, const char *exe,
		     const char *cmdline, size_t cmdline_len)
{
	struct pc_rec_proc p = { .h.type = PC_REC_PROC, .ts = TS_BASE, .pid = pid, .ppid = 1 };

	memcpy(p.comm, comm, strnlen(comm, sizeof(p.comm)));
	p.exe_len = (uint32_t)strlen(exe);
	p.cmdline_len = (uint32_t)cmdline_len;
	pc_buf_add_rec(&b->buf, &p, sizeof(p), exe, p.exe_len, cmdline, cmdline_len);
}

static void add_thread(struct builder *b, uint32_t pid, uint32_t tid, const char *comm)
{
	struct pc_rec_thread t = { .h.type = PC_REC_THREAD, .ts = TS_BASE, .pid = pid, .tid = tid };

	memcpy(t.comm, comm, strnlen(comm, sizeof(t.comm)));
	pc_buf_add_rec(&b->buf, &t, sizeof(t), NULL, 0, NULL, 0);
}

static void add_map(struct builder *b, uint32_t pid, uint64_t start, uint64_t pgoff,
		    const char *path, int with_build_id)
{
	struct pc_rec_map m = {
		.h.type = PC_REC_MAP, .ts = TS_BASE, .pid = pid, .prot = 5,
		.start = start, .end = start + 0x10000, .pgoff = pgoff, .inode = 42,
		.dev_major = 8, .dev_minor = 1,
	};

	if (with_build_id) {
		m.build_id_len = sizeof(app_build_id);
		memcpy(m.build_id, app_build_id, sizeof(app_build_id));
	}
	m.path_len = (uint32_t)strlen(path);
	pc_buf_add_rec(&b->buf, &m, sizeof(m), path, m.path_len, NULL, 0);
}

static void add_procs(struct builder *b)
{
	add_proc(b, 100, "app", "/usr/bin/app", "./app\0--fast", 13);
	add_proc(b, 200, "other", "/usr/bin/app", "./app", 5);
	add_thread(b, 100, 100, "app");
	add_thread(b, 100, 101, "worker");
	add_thread(b, 200, 200, "other");
	add_map(b, 100, APP_BASE, 0, "/usr/bin/app", 1);
	add_map(b, 100, NOSYMS_BASE, 0x1000, "/usr/lib/libnosyms.so", 0);
	add_map(b, 200, OTHER_BASE, 0, "/usr/bin/app", 1);
	add_chunk(b, PC_CHUNK_PROCS, 8, TS_BASE, TS_BASE);
}

static void add_stack(struct builder *b, uint32_t id, uint32_t pid, uint16_t kind,
		      uint16_t flags, const uint64_t *ips, uint32_t nr)
{
	struct pc_rec_stack s = {
		.h.type = PC_REC_STACK, .h.flags = flags, .id = id, .pid = pid,
		.kind = kind, .nr = nr,
	};

	pc_buf_add_rec(&b->buf, &s, sizeof(s), ips, nr * sizeof(uint64_t), NULL, 0);
}

/* with_junk: STACK_JUNK too; events: STACK_KPIPE too (event captures). */
static void add_stacks(struct builder *b, int with_junk, int events)
{
	const uint64_t app = APP_BASE, other = OTHER_BASE;
	uint64_t a[] = { app + APP_SYM_A + 0x10, app + APP_SYM_CALLER + 0x50,
			 app + APP_SYM_MAIN + 0x50, app + APP_SYM_START + 0x10 };
	uint64_t bb[] = { app + APP_SYM_B + 0x20, app + APP_SYM_CALLER + 0x60,
			  app + APP_SYM_MAIN + 0x50, app + APP_SYM_START + 0x10 };
	uint64_t k[] = { KSYM_READ + 0x10, KSYM_SYSCALL + 0x40 };
	uint64_t kpipe[] = { KSYM_PIPE + 0x30, KSYM_SYSCALL + 0x40 };
	uint64_t unmapped[] = { 0x7000000000ull, app + APP_SYM_CALLER + 0x50,
				app + APP_SYM_MAIN + 0x50, app + APP_SYM_START + 0x10 };
	uint64_t nosyms[] = { NOSYMS_BASE + 0x100, app + APP_SYM_CALLER + 0x50,
			      app + APP_SYM_MAIN + 0x50, app + APP_SYM_START + 0x10 };
	uint64_t o[] = { other + APP_SYM_A + 0x10, other + APP_SYM_CALLER + 0x50,
			 other + APP_SYM_MAIN + 0x50, other + APP_SYM_START + 0x10 };
	uint64_t junk[] = { app + APP_SYM_A + 0x10, 0x7000000000ull, app + APP_SYM_CALLER + 0x50,
			    app + APP_SYM_MAIN + 0x50, app + APP_SYM_START + 0x10 };

	add_stack(b, STACK_A, 100, PC_STACK_USER, 0, a, 4);
	add_stack(b, STACK_B, 100, PC_STACK_USER, 0, bb, 4);
	add_stack(b, STACK_KERNEL, 0, PC_STACK_KERNEL, 0, k, 2);
	add_stack(b, STACK_UNMAPPED, 100, PC_STACK_USER, 0, unmapped, 4);
	add_stack(b, STACK_NOSYMS, 100, PC_STACK_USER, 0, nosyms, 4);
	add_stack(b, STACK_OTHER, 200, PC_STACK_USER, 0, o, 4);
	add_stack(b, STACK_TRUNC, 100, PC_STACK_USER, PC_STACK_F_TRUNCATED, a, 2);
	add_stack(b, STACK_SHORT, 100, PC_STACK_USER, 0, a, 2);
	if (with_junk)
		add_stack(b, STACK_JUNK, 100, PC_STACK_USER, 0, junk, 5);
	if (events)
		add_stack(b, STACK_KPIPE, 0, PC_STACK_KERNEL, 0, kpipe, 2);
	add_chunk(b, PC_CHUNK_STACKS, 8 + (with_junk != 0) + (events != 0), 0, 0);
}

/* Appends n samples; returns how many were added. */
static uint64_t add_samples(struct builder *b, int n, uint32_t pid, uint32_t tid,
			    uint32_t ustack, uint32_t kstack)
{
	for (int i = 0; i < n; i++) {
		struct pc_rec_sample s = {
			.h.type = PC_REC_SAMPLE, .ts = b->ts, .pid = pid, .tid = tid,
			.cpu = (uint32_t)i % 2, .ustack = ustack, .kstack = kstack,
		};
		b->ts += TS_STEP;
		pc_buf_add_rec(&b->buf, &s, sizeof(s), NULL, 0, NULL, 0);
	}
	return (uint64_t)n;
}

static void add_unknown_records(struct builder *b, int n)
{
	for (int i = 0; i < n; i++) {
		struct { struct pc_rec h; uint64_t payload; } r = {
			.h.type = 200, .payload = 0x1234,
		};
		pc_buf_add_rec(&b->buf, &r, sizeof(r), NULL, 0, NULL, 0);
	}
}

static void add_events(struct builder *b, const struct capture_spec *spec)
{
	uint64_t t0 = b->ts, count;
	const uint32_t none = PC_STACK_NONE;

	count = add_samples(b, spec->a, 100, 100, STACK_A, none);
	add_chunk(b, PC_CHUNK_EVENTS, count, t0, b->ts - TS_STEP);

	t0 = b->ts;
	count = add_samples(b, spec->b, 100, 100, STACK_B, none);
	count += add_samples(b, spec->b_worker, 100, 101, STACK_B, none);
	count += add_samples(b, spec->a_kernel, 100, 100, STACK_A, STACK_KERNEL);
	count += add_samples(b, spec->kernel_only, 100, 100, none, STACK_KERNEL);
	count += add_samples(b, spec->unmapped, 100, 100, STACK_UNMAPPED, none);
	count += add_samples(b, spec->nosyms, 100, 100, STACK_NOSYMS, none);
	count += add_samples(b, spec->other, 200, 200, STACK_OTHER, none);
	count += add_samples(b, spec->truncated, 100, 100, STACK_TRUNC, none);
	count += add_samples(b, spec->short_stack, 100, 100, STACK_SHORT, none);
	count += add_samples(b, spec->junk, 100, 100, STACK_JUNK, none);
	count += add_samples(b, spec->no_stack, 100, 100, none, none);
	if (spec->unknown_content) {
		add_unknown_records(b, 3);
		count += 3;
	}
	add_chunk(b, PC_CHUNK_EVENTS, count, t0, b->ts > t0 ? b->ts - TS_STEP : t0);
}

static void add_app_module(struct builder *b)
{
	static const char strtab[] = "_start\0main\0caller\0A\0B";
	struct pc_segment seg = { .offset = 0, .vaddr = 0, .filesz = 0x10000, .memsz = 0x10000 };
	struct pc_symbol syms[] = {
		{ APP_SYM_START, 0x40, 0 }, { APP_SYM_MAIN, 0x100, 7 },
		{ APP_SYM_CALLER, 0x100, 12 }, { APP_SYM_A, 0x100, 19 },
		{ APP_SYM_B, 0x100, 21 },
	};
	struct pc_elf_module m = {
		.kind = PC_MODULE_ELF, .e_type = ET_DYN, .build_id_len = sizeof(app_build_id),
		.path = (char *)"/usr/bin/app", .segs = &seg, .nsegs = 1,
		.syms = syms, .nsyms = 5, .strtab = (char *)strtab,
		.strtab_len = sizeof(strtab),
	};

	memcpy(m.build_id, app_build_id, sizeof(app_build_id));
	pc_buf_add_module(&b->buf, &m, NULL, 0);
}

/* events: pipe_read too (STACK_KPIPE of event captures). */
static void add_kernel_module(struct builder *b, int events)
{
	static const char strtab[] = "do_syscall_64\0ksys_read\0pipe_read";
	struct pc_symbol syms[] = { { KSYM_SYSCALL, 0x200, 0 }, { KSYM_READ, 0x100, 14 },
				    { KSYM_PIPE, 0x100, 24 } };
	struct pc_elf_module m = {
		.kind = PC_MODULE_KERNEL, .path = (char *)"[kernel]", .syms = syms,
		.nsyms = events ? 3 : 2, .strtab = (char *)strtab, .strtab_len = sizeof(strtab),
	};

	pc_buf_add_module(&b->buf, &m, NULL, 0);
}

static void add_tail(struct builder *b, const struct capture_spec *spec)
{
	static const char unknown_payload[] = "future chunk payload";

	if (spec->unknown_content) {
		pc_buf_append(&b->buf, unknown_payload, sizeof(unknown_payload));
		add_chunk(b, 99, 1, 0, 0);
	}
	add_app_module(b);
	add_kernel_module(b, 0);
	add_chunk(b, PC_CHUNK_SYMBOLS, 2, 0, 0);
	pc_buf_add_kv_u64(&b->buf, "cpu.lost.kernel", spec->lost_kernel);
	pc_buf_add_kv_u64(&b->buf, "cpu.lost.user", spec->lost_user);
	pc_buf_add_kv_u64(&b->buf, "record.duration_ns", 4000000000ull);
	add_chunk(b, PC_CHUNK_STATS, 3, 0, 0);
}

int build_capture(const char *path, const struct capture_spec *spec,
		  struct capture_layout *layout)
{
	struct builder b = { .layout = layout, .ts = TS_BASE };
	struct pc_buf end = { 0 };
	int err;

	if (layout)
		memset(layout, 0, sizeof(*layout));
	err = pc_writer_open(&b.w, path, PC_WRITE_FORCE);
	if (err)
		return err;
	add_meta(&b);
	add_procs(&b);
	add_stacks(&b, spec->junk > 0, 0);
	add_events(&b, spec);
	add_tail(&b, spec);
	if (b.err || spec->no_end) {
		pc_writer_abort(b.w);
	} else {
		pc_buf_add_kv_u64(&end, "chunks", pc_writer_chunks(b.w) + 1);
		b.err = pc_writer_finish(b.w, &end);
		if (b.err == 0 && layout && layout->nchunks < 16) {
			layout->chunk_type[layout->nchunks] = PC_CHUNK_END;
			layout->chunk_end[layout->nchunks++] = 0; /* = file size */
		}
	}
	pc_buf_free(&end);
	pc_buf_free(&b.buf);
	return b.err;
}

struct capture_spec capture_spec_basic(void)
{
	struct capture_spec spec = { .a = 300, .b = 100 };

	return spec;
}

static void add_event_meta(struct builder *b, const struct event_capture *ev)
{
	pc_buf_add_kv(&b->buf, "perfcap.version", "0.1.0");
	pc_buf_add_kv(&b->buf, "host.hostname", "testhost");
	pc_buf_add_kv(&b->buf, "sampling.cpu.freq_hz", "100");
	if (ev->start_ns)
		pc_buf_add_kv_u64(&b->buf, "record.start_ns", ev->start_ns);
	if (ev->sources)
		pc_buf_add_kv(&b->buf, "sources", ev->sources);
	if (ev->meta.len)
		pc_buf_append(&b->buf, ev->meta.data, ev->meta.len);
	add_chunk(b, PC_CHUNK_META, 5, 0, 0);
}

/* ev's records, per_chunk to an EVENTS chunk, in their order. */
static void add_event_chunks(struct builder *b, const struct event_capture *ev)
{
	struct pc_rec_iter it;
	const struct pc_rec *rec;
	uint64_t in_chunk = 0, t0 = ev->nevents ? ev->t_min : 0, t1 = ev->nevents ? ev->t_max : 0;

	pc_rec_iter_init(&it, ev->events.data, ev->events.len);
	while (pc_rec_next(&it, &rec) == 1) {
		pc_buf_append(&b->buf, rec, rec->size);
		if (++in_chunk == (uint64_t)ev->per_chunk) {
			add_chunk(b, PC_CHUNK_EVENTS, in_chunk, t0, t1);
			in_chunk = 0;
		}
	}
	if (in_chunk)
		add_chunk(b, PC_CHUNK_EVENTS, in_chunk, t0, t1);
}

static void add_event_stats(struct builder *b, const struct event_capture *ev)
{
	pc_buf_add_kv_u64(&b->buf, "cpu.lost.kernel", 0);
	if (ev->end_ns)
		pc_buf_add_kv_u64(&b->buf, "record.end_ns", ev->end_ns);
	if (ev->stats.len)
		pc_buf_append(&b->buf, ev->stats.data, ev->stats.len);
	add_chunk(b, PC_CHUNK_STATS, 2, 0, 0);
}

int build_event_capture(const char *path, const struct event_capture *ev)
{
	struct builder b = { .ts = TS_BASE };
	int err = pc_writer_open(&b.w, path, PC_WRITE_FORCE);

	if (err)
		return err;
	add_event_meta(&b, ev);
	add_procs(&b);
	add_stacks(&b, 0, 1);
	add_event_chunks(&b, ev);
	add_app_module(&b);
	add_kernel_module(&b, 1);
	add_chunk(&b, PC_CHUNK_SYMBOLS, 2, 0, 0);
	add_event_stats(&b, ev);
	if (b.err)
		pc_writer_abort(b.w);
	else
		b.err = pc_writer_finish(b.w, NULL);
	pc_buf_free(&b.buf);
	return b.err;
}
