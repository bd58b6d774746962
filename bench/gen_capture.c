/* gen_capture.c - writes a large synthetic capture for benchmarking
 * perfcap-analyze (import speed, report speed).
 *
 *   gen_capture OUT.perfcap [SAMPLES [PROCESSES [STACKS]]]
 *   gen_capture --events OUT.perfcap [EVENTS]
 *   gen_capture --requests OUT.perfcap [EVENTS]
 *
 * --events writes EVENTS records (default 10,000,000) of a scheduler and
 * syscall mix instead of samples only (see write_event_mix below): about
 * 16% context switches, 16% wakeups, 63% syscalls, 5% samples, with small
 * reorderings like those of per-CPU buffers. --requests makes it a server:
 * each thread owns a socket fd (accepted, closed and accepted again every
 * 64 turns: fd reuse), waits in epoll_wait, then reads a request from the
 * socket and writes the response to it (request spans, queueing and pool
 * utilisation get work; about one request per 6 events).
 *
 * Defaults: 1,000,000 samples, 8 processes, 20,000 distinct user stacks
 * (24 frames deep) and 500 kernel stacks, one embedded module of 4,000
 * functions shared by every process (mapped at a different base in each),
 * kernel symbols, 100,000 samples per EVENTS chunk. Every function has
 * CALL_SITES call sites, so return addresses repeat as in real programs.
 * Deterministic (fixed seed). Samples are skewed toward few stacks, like
 * real profiles. */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/elf_module.h"
#include "perfcap_format.h"

#define NSYMS            4000
#define SYM_SPACING      0x100
#define TEXT_START       0x10000
#define USER_DEPTH       24
#define CALL_SITES       4
#define KERNEL_STACKS    500
#define KERNEL_DEPTH     8
#define KERNEL_BASE      0xffffffff81000000ull
#define SAMPLES_PER_CHUNK 100000
#define TS_STEP          1000000ull  /* 1 ms */

static uint64_t rng_state = 0x853c49e6748fea9bull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Index in [0, n) skewed toward small values. */
static uint32_t skewed(uint32_t n)
{
	double u = (double)(rng() % 1000000) / 1000000.0;

	return (uint32_t)(u * u * u * n) % n;
}

static int add_chunk(struct pc_writer *w, uint16_t type, struct pc_buf *b,
		     uint64_t count, uint64_t t0, uint64_t t1)
{
	int err = pc_writer_add_chunk(w, type, 1, b->data, b->len, count, t0, t1);

	pc_buf_reset(b);
	if (err)
		fprintf(stderr, "gen_capture: write: %s\n", strerror(-err));
	return err;
}

static uint64_t process_base(uint32_t p)
{
	return 0x555500000000ull + (uint64_t)p * 0x100000000ull;
}

static int write_procs(struct pc_writer *w, struct pc_buf *b, uint32_t nprocs)
{
	for (uint32_t p = 0; p < nprocs; p++) {
		struct pc_rec_proc proc = { .h.type = PC_REC_PROC, .pid = 1000 + p, .ppid = 1 };
		struct pc_rec_map map = {
			.h.type = PC_REC_MAP, .pid = 1000 + p, .prot = 5,
			.start = process_base(p), .end = process_base(p) + 0x1000000,
			.pgoff = 0, .build_id_len = 20, .path_len = 14,
		};
		snprintf(proc.comm, sizeof(proc.comm), "bench%u", p);
		proc.exe_len = 14;
		memset(map.build_id, 0x42, sizeof(map.build_id));
		pc_buf_add_rec(b, &proc, sizeof(proc), "/usr/bin/bench", 14, NULL, 0);
		pc_buf_add_rec(b, &map, sizeof(map), "/usr/bin/bench", 14, NULL, 0);
		for (uint32_t t = 0; t < 4; t++) {
			struct pc_rec_thread th = { .h.type = PC_REC_THREAD, .pid = 1000 + p,
						    .tid = 1000 + p + t * 10000 };
			snprintf(th.comm, sizeof(th.comm), "worker-%u", t);
			pc_buf_add_rec(b, &th, sizeof(th), NULL, 0, NULL, 0);
		}
	}
	return add_chunk(w, PC_CHUNK_PROCS, b, nprocs * 6, 0, 0);
}

static int write_stacks(struct pc_writer *w, struct pc_buf *b, uint32_t nprocs,
			uint32_t nstacks)
{
	uint64_t ips[USER_DEPTH];

	for (uint32_t id = 0; id < nstacks; id++) {
		uint32_t p = id % nprocs;
		struct pc_rec_stack s = { .h.type = PC_REC_STACK, .id = id, .pid = 1000 + p,
					  .kind = PC_STACK_USER, .nr = USER_DEPTH };
		for (int i = 0; i < USER_DEPTH; i++) {
			uint32_t fn = (i == USER_DEPTH - 1) ? 0 : skewed(NSYMS);
			ips[i] = process_base(p) + TEXT_START + (uint64_t)fn * SYM_SPACING +
				 8 + (rng() % CALL_SITES) * 0x20;
		}
		pc_buf_add_rec(b, &s, sizeof(s), ips, sizeof(ips), NULL, 0);
	}
	for (uint32_t k = 0; k < KERNEL_STACKS; k++) {
		struct pc_rec_stack s = { .h.type = PC_REC_STACK, .id = nstacks + k,
					  .kind = PC_STACK_KERNEL, .nr = KERNEL_DEPTH };
		for (int i = 0; i < KERNEL_DEPTH; i++)
			ips[i] = KERNEL_BASE + (uint64_t)skewed(1000) * 0x200 +
				 8 + (rng() % CALL_SITES) * 0x40;
		pc_buf_add_rec(b, &s, sizeof(s), ips, KERNEL_DEPTH * sizeof(uint64_t), NULL, 0);
	}
	return add_chunk(w, PC_CHUNK_STACKS, b, nstacks + KERNEL_STACKS, 0, 0);
}

static int write_samples(struct pc_writer *w, struct pc_buf *b, uint64_t nsamples,
			 uint32_t nprocs, uint32_t nstacks)
{
	uint64_t ts = 1000000000ull, t0 = ts, in_chunk = 0;

	for (uint64_t i = 0; i < nsamples; i++) {
		uint32_t stack = skewed(nstacks);
		uint32_t p = stack % nprocs;
		struct pc_rec_sample s = {
			.h.type = PC_REC_SAMPLE, .ts = ts, .pid = 1000 + p,
			.tid = 1000 + p + (uint32_t)(rng() % 4) * 10000, .cpu = (uint32_t)(i % 2),
			.ustack = stack,
			.kstack = rng() % 5 == 0 ? nstacks + skewed(KERNEL_STACKS) : PC_STACK_NONE,
		};
		pc_buf_add_rec(b, &s, sizeof(s), NULL, 0, NULL, 0);
		ts += TS_STEP / 2;
		if (++in_chunk == SAMPLES_PER_CHUNK || i + 1 == nsamples) {
			if (add_chunk(w, PC_CHUNK_EVENTS, b, in_chunk, t0, ts))
				return -1;
			in_chunk = 0;
			t0 = ts;
		}
	}
	return 0;
}

static int write_symbols(struct pc_writer *w, struct pc_buf *b)
{
	struct pc_symbol *syms = calloc(NSYMS, sizeof(*syms));
	char *strtab = malloc(NSYMS * 16);
	size_t len = 0;
	struct pc_segment seg = { 0, 0, 0x1000000, 0x1000000 };
	int err;

	if (!syms || !strtab)
		return -1;
	for (uint32_t i = 0; i < NSYMS; i++) {
		syms[i].addr = TEXT_START + (uint64_t)i * SYM_SPACING;
		syms[i].size = SYM_SPACING;
		syms[i].name_off = (uint32_t)len;
		len += (size_t)sprintf(strtab + len, i == 0 ? "_start" : "func_%u", i) + 1;
	}
	struct pc_elf_module m = { .kind = PC_MODULE_ELF, .e_type = ET_DYN, .build_id_len = 20,
				   .path = (char *)"/usr/bin/bench", .segs = &seg, .nsegs = 1,
				   .syms = syms, .nsyms = NSYMS, .strtab = strtab,
				   .strtab_len = len };
	memset(m.build_id, 0x42, 20);
	pc_buf_add_module(b, &m, NULL, 0);

	len = 0;
	for (uint32_t i = 0; i < 1000; i++) {
		syms[i].addr = KERNEL_BASE + (uint64_t)i * 0x200;
		syms[i].size = 0x200;
		syms[i].name_off = (uint32_t)len;
		len += (size_t)sprintf(strtab + len, "kfunc_%u", i) + 1;
	}
	struct pc_elf_module k = { .kind = PC_MODULE_KERNEL, .path = (char *)"[kernel]",
				   .syms = syms, .nsyms = 1000, .strtab = strtab,
				   .strtab_len = len };
	pc_buf_add_module(b, &k, NULL, 0);
	err = add_chunk(w, PC_CHUNK_SYMBOLS, b, 2, 0, 0);
	free(syms);
	free(strtab);
	return err;
}

/* ---- --events: a scheduler and syscall mix ---------------------------
 * Two CPUs, each a ring of 16 threads. On its turn a thread is switched in
 * (the previous one blocks in futex), reads, writes, wakes the next thread
 * with a futex wake and blocks in a futex wait that ends on its next turn:
 * per turn a switch, a wakeup and four syscalls, and a sample every fourth
 * turn. Records are emitted in the order they end; every eighth turn two of
 * them are swapped, as per-CPU buffers would interleave them. */

#define MIX_CPUS        2
#define MIX_RING        16
#define MIX_TURN_NS     12000ull
#define NR_READ         0
#define NR_WRITE        1
#define NR_CLOSE        3
#define NR_FUTEX        202
#define NR_EPOLL_WAIT   232
#define CONN_TURNS      64   /* --requests: turns of a connection before it closes */

struct mix {
	struct pc_writer *w;
	struct pc_buf *b;
	uint64_t n, limit, in_chunk, t0;
	uint64_t futex_start[MIX_CPUS][MIX_RING];  /* pending futex wait, 0: none */
	uint32_t nstacks;
	int requests;             /* --requests: reads and writes on sockets */
	int err;
};

static uint32_t mix_pid(int cpu, int i)
{
	return 1000 + (uint32_t)((cpu * MIX_RING + i) % 8);
}

static uint32_t mix_tid(int cpu, int i)
{
	return 100000 + (uint32_t)(cpu * MIX_RING + i);
}

static void mix_emit(struct mix *m, void *rec, size_t len, uint16_t type, uint64_t ts)
{
	((struct pc_rec *)rec)->type = type;
	if (m->n >= m->limit || m->err)
		return;
	pc_buf_add_rec(m->b, rec, len, NULL, 0, NULL, 0);
	m->n++;
	if (++m->in_chunk == SAMPLES_PER_CHUNK || m->n == m->limit) {
		m->err = add_chunk(m->w, PC_CHUNK_EVENTS, m->b, m->in_chunk, m->t0, ts);
		m->in_chunk = 0;
		m->t0 = ts;
	}
}

static void mix_syscall(struct mix *m, int cpu, int i, uint64_t ts, uint64_t dur,
			uint32_t nr, int64_t ret, uint64_t a0, uint64_t a1, uint64_t a2)
{
	struct pc_rec_syscall s = {
		.ts = ts, .duration = dur, .pid = mix_pid(cpu, i), .tid = mix_tid(cpu, i),
		.nr = nr, .ustack = PC_STACK_NONE, .ret = ret, .args = { a0, a1, a2 },
	};

	mix_emit(m, &s, sizeof(s), PC_REC_SYSCALL, ts + dur);
}

static void mix_switch(struct mix *m, int cpu, int prev, int next, uint64_t ts)
{
	struct pc_rec_switch s = {
		.ts = ts, .cpu = (uint32_t)cpu, .prev_state = PC_TASK_INTERRUPTIBLE,
		.prev_pid = mix_pid(cpu, prev), .prev_tid = mix_tid(cpu, prev),
		.next_pid = mix_pid(cpu, next), .next_tid = mix_tid(cpu, next),
		.prev_prio = 120, .next_prio = 120,
	};

	mix_emit(m, &s, sizeof(s), PC_REC_SWITCH, ts);
}

static void mix_wakeup(struct mix *m, int cpu, int i, int woken, uint64_t ts)
{
	struct pc_rec_wakeup w = {
		.ts = ts, .pid = mix_pid(cpu, woken), .tid = mix_tid(cpu, woken),
		.waker_pid = mix_pid(cpu, i), .waker_tid = mix_tid(cpu, i),
		.target_cpu = (uint32_t)cpu,
	};

	mix_emit(m, &w, sizeof(w), PC_REC_WAKEUP, ts);
}

static void mix_sample(struct mix *m, int cpu, int i, uint64_t ts)
{
	uint32_t stack = skewed(m->nstacks);
	struct pc_rec_sample s = {
		.ts = ts, .pid = 1000 + stack % 8, .tid = mix_tid(cpu, i), .cpu = (uint32_t)cpu,
		.ustack = stack, .kstack = PC_STACK_NONE,
	};

	mix_emit(m, &s, sizeof(s), PC_REC_SAMPLE, ts);
}

/* --requests: thread i's socket (a new connection on the same fd number
 * every CONN_TURNS turns, the old one closed first). */
static int mix_socket_fd(int cpu, int i)
{
	return 100 + cpu * MIX_RING + i;
}

static void mix_accept(struct mix *m, int cpu, int i, uint64_t ts, uint64_t turn)
{
	struct pc_rec_socket s = {
		.h.flags = PC_SOCK_F_ACCEPTED, .ts = ts, .pid = mix_pid(cpu, i),
		.tid = mix_tid(cpu, i), .fd = mix_socket_fd(cpu, i), .family = 2,
		.protocol = 6, .cookie = turn * 64 + (uint64_t)(cpu * MIX_RING + i),
		.saddr = { 127, 0, 0, 1 }, .daddr = { 127, 0, 0, 1 }, .sport = 8080,
		.dport = (uint16_t)(40000 + turn % 20000),
	};

	mix_emit(m, &s, sizeof(s), PC_REC_SOCKET, ts);
}

/* Request traffic of one turn: readiness, then the request and its answer. */
static void mix_request(struct mix *m, int cpu, int i, uint64_t t, uint64_t turn)
{
	uint64_t fd = (uint64_t)mix_socket_fd(cpu, i);
	uint64_t conn_turn = (turn / MIX_CPUS / MIX_RING) % CONN_TURNS;

	if (conn_turn == 0) {
		if (turn >= MIX_CPUS * MIX_RING)
			mix_syscall(m, cpu, i, t + 1100, 200, NR_CLOSE, 0, fd, 0, 0);
		mix_accept(m, cpu, i, t + 1200, turn);
	}
	mix_syscall(m, cpu, i, t + 1300, 150, NR_EPOLL_WAIT, 1, 9, 0x7e0000, 64);
	mix_syscall(m, cpu, i, t + 1500, 2000, NR_READ, 512, fd, 0x7f0000, 4096);
	mix_syscall(m, cpu, i, t + 4000, 3000, NR_WRITE, 512, fd, 0x7f0000, 512);
}

/* One turn of thread i on cpu, starting at t (its switch-in). */
static void mix_turn(struct mix *m, int cpu, int i, uint64_t t, uint64_t turn)
{
	int prev = (i + MIX_RING - 1) % MIX_RING, next = (i + 1) % MIX_RING;
	uint64_t *pending = &m->futex_start[cpu][i];
	int swap = turn % 8 == 0;

	if (!swap)
		mix_switch(m, cpu, prev, i, t);
	if (*pending)   /* the futex wait that blocked it last turn ends now */
		mix_syscall(m, cpu, i, *pending, t + 1000 - *pending, NR_FUTEX, 0, 0x7000, 128, 1);
	if (swap)       /* a small reversal: the switch after the syscall exit */
		mix_switch(m, cpu, prev, i, t);
	if (m->requests) {
		mix_request(m, cpu, i, t, turn);
	} else {
		mix_syscall(m, cpu, i, t + 1500, 2000, NR_READ, 512, 3, 0x7f0000, 4096);
		mix_syscall(m, cpu, i, t + 4000, 3000, NR_WRITE, 512, 4, 0x7f0000, 512);
	}
	if (turn % 4 == 0)
		mix_sample(m, cpu, i, t + 7500);
	mix_wakeup(m, cpu, i, next, t + 8500);
	mix_syscall(m, cpu, i, t + 8000, 1000, NR_FUTEX, 1, 0x7000, 129, 1);
	*pending = t + 10000;
}

static int write_event_mix(struct pc_writer *w, struct pc_buf *b, uint64_t nevents,
			   uint32_t nstacks, int requests)
{
	struct mix m = { .w = w, .b = b, .limit = nevents, .t0 = 1000000000ull,
			 .nstacks = nstacks, .requests = requests };
	uint64_t t = m.t0;

	for (uint64_t turn = 0; m.n < m.limit && !m.err; turn++) {
		int i = (int)((turn / MIX_CPUS) % MIX_RING);
		mix_turn(&m, (int)(turn % MIX_CPUS), i, t, turn);
		t += MIX_TURN_NS / MIX_CPUS;
	}
	return m.err ? -1 : 0;
}

static int events_main(int argc, char **argv)
{
	uint64_t nevents = argc > 3 ? strtoull(argv[3], NULL, 10) : 10000000;
	const uint32_t nprocs = 8, nstacks = 20000;
	int requests = strcmp(argv[1], "--requests") == 0;
	struct pc_writer *w;
	struct pc_buf b = { 0 };
	int err;

	if (argc < 3) {
		fprintf(stderr, "usage: gen_capture --events|--requests OUT.perfcap [EVENTS]\n");
		return 2;
	}
	err = pc_writer_open(&w, argv[2], PC_WRITE_FORCE);
	if (err) {
		fprintf(stderr, "gen_capture: %s: %s\n", argv[2], strerror(-err));
		return 1;
	}
	pc_buf_add_kv(&b, "host.hostname", "benchhost");
	pc_buf_add_kv(&b, "sampling.cpu.freq_hz", "999");
	pc_buf_add_kv(&b, "sources", requests ? "cpu,sched,syscall,mux,net" : "cpu,sched,syscall");
	pc_buf_add_kv(&b, "record.start_ns", "1000000000");
	if (add_chunk(w, PC_CHUNK_META, &b, 4, 0, 0) || write_procs(w, &b, nprocs) ||
	    write_stacks(w, &b, nprocs, nstacks) || write_event_mix(w, &b, nevents, nstacks, requests) ||
	    write_symbols(w, &b)) {
		pc_writer_abort(w);
		return 1;
	}
	err = pc_writer_finish(w, NULL);
	pc_buf_free(&b);
	printf("%s: %llu events (sched and syscall mix%s)\n", argv[2],
	       (unsigned long long)nevents, requests ? ", with requests" : "");
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	uint64_t nsamples = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000000;
	uint32_t nprocs = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 8;
	uint32_t nstacks = argc > 4 ? (uint32_t)strtoul(argv[4], NULL, 10) : 20000;
	struct pc_writer *w;
	struct pc_buf b = { 0 };
	int err;

	if (argc > 1 && (strcmp(argv[1], "--events") == 0 || strcmp(argv[1], "--requests") == 0))
		return events_main(argc, argv);
	if (argc < 2 || nprocs == 0 || nstacks == 0) {
		fprintf(stderr, "usage: gen_capture OUT.perfcap [SAMPLES [PROCESSES [STACKS]]]\n");
		return 2;
	}
	err = pc_writer_open(&w, argv[1], PC_WRITE_FORCE);
	if (err) {
		fprintf(stderr, "gen_capture: %s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	pc_buf_add_kv(&b, "host.hostname", "benchhost");
	pc_buf_add_kv(&b, "sampling.cpu.freq_hz", "999");
	if (add_chunk(w, PC_CHUNK_META, &b, 2, 0, 0) || write_procs(w, &b, nprocs) ||
	    write_stacks(w, &b, nprocs, nstacks) ||
	    write_samples(w, &b, nsamples, nprocs, nstacks) || write_symbols(w, &b)) {
		pc_writer_abort(w);
		return 1;
	}
	pc_buf_add_kv(&b, "cpu.lost.kernel", "0");
	add_chunk(w, PC_CHUNK_STATS, &b, 1, 0, 0);
	err = pc_writer_finish(w, NULL);
	pc_buf_free(&b);
	printf("%s: %llu samples, %u processes, %u user stacks\n", argv[1],
	       (unsigned long long)nsamples, nprocs, nstacks);
	return err ? 1 : 0;
}
