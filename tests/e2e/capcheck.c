/* capcheck.c - a small checker of captures for the end-to-end tests of the
 * event sources, reading them only through the format library. It knows
 * nothing of the analyzer (which will take these checks over) and does no
 * more than the tests need:
 *
 *   capcheck threads FILE         per-thread scheduling sums, one line each:
 *                                 tid pid comm offcpu_ms offcpu_n runq_ms
 *                                 run_ms window_ms
 *   capcheck offcpu-stack FILE TID FUNC
 *                                 exit 0 if an OFFCPU record of TID has a
 *                                 user stack with a frame in function FUNC
 *                                 (named through the capture's own MODULE
 *                                 symbols); prints the symbolized user and
 *                                 kernel stacks
 *   capcheck wakers FILE TID      who woke TID: "waker_tid count" lines (0:
 *                                 interrupt context or idle)
 *   capcheck sizes FILE           per record type of EVENTS chunks: count,
 *                                 raw bytes each, bytes each on disk (the
 *                                 chunks' compressed size shared out by raw
 *                                 bytes)
 *   capcheck meta FILE KEY        the value of a META key
 *   capcheck stat FILE KEY        the value of a STATS key
 *   capcheck syscalls FILE        one line per SYSCALL record:
 *                                 tid nr arg0 arg1 arg2 ret duration_ns ustack
 *                                 (ustack -1: none)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/elf_module.h"
#include "perfcap_format.h"

#define MAX_TYPES 64

/* ---- what is read from the capture ---------------------------------------- */

struct kv {
	char *key, *value;
};

struct stack {
	uint32_t id, pid, nr;
	uint16_t kind;
	uint64_t *ips;
};

struct type_size {
	uint64_t count, raw_bytes;
	double disk_bytes;
};

struct capture {
	struct kv *meta, *stats;
	size_t nmeta, nstats;
	struct pc_rec_thread *threads;
	size_t nthreads;
	struct pc_rec_map *maps;
	char **map_paths;
	size_t nmaps;
	struct pc_elf_module *modules;
	size_t nmodules;
	struct stack *stacks;
	size_t nstacks;
	struct pc_rec_switch *switches;
	size_t nswitches;
	struct pc_rec_wakeup *wakeups;
	size_t nwakeups;
	struct pc_rec_offcpu *offcpus;
	size_t noffcpus;
	struct pc_rec_syscall *syscalls;
	size_t nsyscalls;
	struct type_size sizes[MAX_TYPES];
};

/* Room for element n of an array grown by doubling (sizes 1, 2, 4 ...). */
static void *grow(void *p, size_t n, size_t size)
{
	void *q;

	if (n & (n - 1)) /* not a power of two: there is room */
		return p;
	q = realloc(p, (n ? 2 * n : 1) * size);
	if (!q) {
		fprintf(stderr, "capcheck: out of memory\n");
		exit(2);
	}
	return q;
}

#define APPEND(arr, n, value) do { \
	(arr) = grow((arr), (n), sizeof(*(arr))); \
	(arr)[(n)++] = (value); \
} while (0)

static void read_kv(const struct pc_chunk *c, struct kv **out, size_t *n)
{
	struct pc_kv_iter it;
	const char *k, *v;

	pc_kv_iter_init(&it, c->data, c->size);
	while (pc_kv_next(&it, &k, &v) == 1) {
		struct kv pair = { strdup(k), strdup(v) };

		APPEND(*out, *n, pair);
	}
}

static void read_stack(struct capture *cap, const struct pc_rec *rec)
{
	struct pc_rec_stack s;
	size_t tail;
	const uint8_t *ips = pc_rec_copy(rec, &s, sizeof(s), &tail);
	struct stack st = { .id = s.id, .pid = s.pid, .nr = s.nr, .kind = s.kind };

	if ((size_t)s.nr * 8 > tail)
		return;
	st.ips = malloc(s.nr * 8 + 1);
	memcpy(st.ips, ips, s.nr * 8);
	APPEND(cap->stacks, cap->nstacks, st);
}

static void read_map(struct capture *cap, const struct pc_rec *rec)
{
	struct pc_rec_map m;
	size_t tail;
	const uint8_t *path = pc_rec_copy(rec, &m, sizeof(m), &tail);
	char *copy;

	if (m.path_len > tail)
		return;
	copy = strndup((const char *)path, m.path_len);
	cap->map_paths = grow(cap->map_paths, cap->nmaps, sizeof(char *));
	cap->map_paths[cap->nmaps] = copy;
	APPEND(cap->maps, cap->nmaps, m);
}

static void read_record(struct capture *cap, const struct pc_rec *rec)
{
	size_t tail;

	switch (rec->type) {
	case PC_REC_THREAD: {
		struct pc_rec_thread t;

		pc_rec_copy(rec, &t, sizeof(t), &tail);
		APPEND(cap->threads, cap->nthreads, t);
		break;
	}
	case PC_REC_MAP:
		read_map(cap, rec);
		break;
	case PC_REC_MODULE: {
		struct pc_elf_module m;

		if (pc_elf_module_from_rec(&m, rec) == 0)
			APPEND(cap->modules, cap->nmodules, m);
		break;
	}
	case PC_REC_STACK:
		read_stack(cap, rec);
		break;
	case PC_REC_SWITCH: {
		struct pc_rec_switch s;

		pc_rec_copy(rec, &s, sizeof(s), &tail);
		APPEND(cap->switches, cap->nswitches, s);
		break;
	}
	case PC_REC_WAKEUP: {
		struct pc_rec_wakeup w;

		pc_rec_copy(rec, &w, sizeof(w), &tail);
		APPEND(cap->wakeups, cap->nwakeups, w);
		break;
	}
	case PC_REC_OFFCPU: {
		struct pc_rec_offcpu o;

		pc_rec_copy(rec, &o, sizeof(o), &tail);
		APPEND(cap->offcpus, cap->noffcpus, o);
		break;
	}
	case PC_REC_SYSCALL: {
		struct pc_rec_syscall sc;

		pc_rec_copy(rec, &sc, sizeof(sc), &tail);
		APPEND(cap->syscalls, cap->nsyscalls, sc);
		break;
	}
	}
}

/* Shares the chunk's bytes on disk among its record types by raw size. */
static void count_sizes(struct capture *cap, const struct pc_chunk *c)
{
	struct pc_rec_iter it;
	const struct pc_rec *rec;
	double disk_per_raw = c->size ? (double)c->hdr.payload_size / (double)c->size : 0;

	pc_rec_iter_init(&it, c->data, c->size);
	while (pc_rec_next(&it, &rec) == 1) {
		struct type_size *t = &cap->sizes[rec->type < MAX_TYPES ? rec->type : 0];

		t->count++;
		t->raw_bytes += rec->size;
		t->disk_bytes += rec->size * disk_per_raw;
	}
}

static void read_records(struct capture *cap, const struct pc_chunk *c)
{
	struct pc_rec_iter it;
	const struct pc_rec *rec;

	pc_rec_iter_init(&it, c->data, c->size);
	while (pc_rec_next(&it, &rec) == 1)
		read_record(cap, rec);
	if (c->hdr.type == PC_CHUNK_EVENTS)
		count_sizes(cap, c);
}

static void load_capture(struct capture *cap, const char *path)
{
	struct pc_reader *r;
	struct pc_chunk c;
	char err[256];

	memset(cap, 0, sizeof(*cap));
	if (pc_reader_open(&r, path, err, sizeof(err))) {
		fprintf(stderr, "capcheck: %s: %s\n", path, err);
		exit(2);
	}
	while (pc_reader_next(r, &c) == 1) {
		if (c.hdr.type == PC_CHUNK_META)
			read_kv(&c, &cap->meta, &cap->nmeta);
		else if (c.hdr.type == PC_CHUNK_STATS)
			read_kv(&c, &cap->stats, &cap->nstats);
		else if (c.hdr.type != PC_CHUNK_END)
			read_records(cap, &c);
	}
	pc_reader_close(r);
}

/* ---- threads ---------------------------------------------------------------- */

struct thread_sums {
	uint32_t tid, pid;
	uint64_t offcpu_ns, offcpu_n, runq_ns, run_ns;
	uint64_t oncpu_since, runnable_since, first_ts, last_ts;
};

struct sums {
	struct thread_sums *v;
	size_t n;
};

static struct thread_sums *sums_of(struct sums *s, uint32_t tid, uint32_t pid, uint64_t ts)
{
	struct thread_sums fresh = { .tid = tid, .pid = pid, .first_ts = ts };

	for (size_t i = 0; i < s->n; i++) {
		if (s->v[i].tid == tid) {
			s->v[i].last_ts = ts > s->v[i].last_ts ? ts : s->v[i].last_ts;
			return &s->v[i];
		}
	}
	fresh.last_ts = ts;
	APPEND(s->v, s->n, fresh);
	return &s->v[s->n - 1];
}

/* A time-ordered scheduling event of one thread. */
enum step { SWITCHED_OUT, WOKEN, SWITCHED_IN };

struct event {
	uint64_t ts;
	uint32_t tid, pid, state;
	enum step step;
};

static int by_time(const void *a, const void *b)
{
	const struct event *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (int)x->step - (int)y->step;
}

static void apply(struct sums *s, const struct event *e)
{
	struct thread_sums *t = sums_of(s, e->tid, e->pid, e->ts);

	switch (e->step) {
	case SWITCHED_OUT:
		if (t->oncpu_since)
			t->run_ns += e->ts - t->oncpu_since;
		t->oncpu_since = 0;
		t->runnable_since = e->state == 0 ? e->ts : 0; /* preempted: runnable */
		break;
	case WOKEN:
		if (!t->oncpu_since && !t->runnable_since)
			t->runnable_since = e->ts;
		break;
	case SWITCHED_IN:
		if (t->runnable_since)
			t->runq_ns += e->ts - t->runnable_since;
		t->runnable_since = 0;
		t->oncpu_since = e->ts;
		break;
	}
}

static size_t collect_events(const struct capture *cap, struct event **out)
{
	size_t n = 0;
	struct event *v = NULL;

	for (size_t i = 0; i < cap->nswitches; i++) {
		const struct pc_rec_switch *w = &cap->switches[i];
		struct event out_ev = { w->ts, w->prev_tid, w->prev_pid, w->prev_state, SWITCHED_OUT };
		struct event in_ev = { w->ts, w->next_tid, w->next_pid, 0, SWITCHED_IN };

		APPEND(v, n, out_ev);
		APPEND(v, n, in_ev);
	}
	for (size_t i = 0; i < cap->nwakeups; i++) {
		struct event ev = { cap->wakeups[i].ts, cap->wakeups[i].tid, cap->wakeups[i].pid, 0,
				    WOKEN };

		APPEND(v, n, ev);
	}
	qsort(v, n, sizeof(*v), by_time);
	*out = v;
	return n;
}

static const char *thread_name(const struct capture *cap, uint32_t tid)
{
	const char *name = "?";

	for (size_t i = 0; i < cap->nthreads; i++) {
		if (cap->threads[i].tid == tid)
			name = cap->threads[i].comm; /* the latest name wins */
	}
	return name;
}

static int cmd_threads(const struct capture *cap)
{
	struct sums s = { 0 };
	struct event *events;
	size_t n = collect_events(cap, &events);

	for (size_t i = 0; i < n; i++) {
		if (events[i].tid != 0) /* idle */
			apply(&s, &events[i]);
	}
	for (size_t i = 0; i < cap->noffcpus; i++) {
		const struct pc_rec_offcpu *o = &cap->offcpus[i];
		struct thread_sums *t = sums_of(&s, o->tid, o->pid, o->ts);

		t->offcpu_ns += o->duration;
		t->offcpu_n++;
	}
	for (size_t i = 0; i < s.n; i++) {
		const struct thread_sums *t = &s.v[i];

		printf("%u %u %.15s %.3f %" PRIu64 " %.3f %.3f %.3f\n", t->tid, t->pid,
		       thread_name(cap, t->tid), t->offcpu_ns / 1e6, t->offcpu_n, t->runq_ns / 1e6,
		       t->run_ns / 1e6, (t->last_ts - t->first_ts) / 1e6);
	}
	free(events);
	free(s.v);
	return 0;
}

/* ---- symbolizing a user ip with the capture's own data ---------------------- */

static const struct stack *find_stack(const struct capture *cap, uint32_t id)
{
	for (size_t i = 0; i < cap->nstacks; i++) {
		if (cap->stacks[i].id == id)
			return &cap->stacks[i];
	}
	return NULL;
}

static const struct pc_elf_module *module_of_map(const struct capture *cap, size_t map)
{
	const struct pc_rec_map *m = &cap->maps[map];

	for (size_t i = 0; i < cap->nmodules; i++) {
		const struct pc_elf_module *mod = &cap->modules[i];

		if (m->build_id_len && mod->build_id_len == m->build_id_len &&
		    memcmp(mod->build_id, m->build_id, m->build_id_len) == 0)
			return mod;
		if (!m->build_id_len && mod->path && strcmp(mod->path, cap->map_paths[map]) == 0)
			return mod;
	}
	return NULL;
}

static const char *user_symbol(const struct capture *cap, uint32_t pid, uint64_t ip)
{
	for (size_t i = 0; i < cap->nmaps; i++) {
		const struct pc_rec_map *m = &cap->maps[i];
		const struct pc_elf_module *mod;
		const struct pc_symbol *sym;
		uint64_t vaddr;

		if (m->pid != pid || ip < m->start || ip >= m->end)
			continue;
		mod = module_of_map(cap, i);
		if (!mod || pc_elf_offset_to_vaddr(mod, ip - m->start + m->pgoff, &vaddr))
			continue;
		sym = pc_elf_module_lookup(mod, vaddr);
		if (sym)
			return pc_elf_symbol_name(mod, sym);
	}
	return NULL;
}

static const char *kernel_symbol(const struct capture *cap, uint64_t ip)
{
	for (size_t i = 0; i < cap->nmodules; i++) {
		const struct pc_elf_module *mod = &cap->modules[i];
		const struct pc_symbol *sym;

		if (mod->kind != PC_MODULE_KERNEL)
			continue;
		sym = pc_elf_module_lookup(mod, ip);
		if (sym)
			return pc_elf_symbol_name(mod, sym);
	}
	return NULL;
}

static void print_kernel_stack(const struct capture *cap, uint32_t id)
{
	const struct stack *st = id == PC_STACK_NONE ? NULL : find_stack(cap, id);

	for (uint32_t i = 0; st && i < st->nr; i++) {
		const char *name = kernel_symbol(cap, i ? st->ips[i] - 1 : st->ips[i]);

		printf("    k#%u %s\n", i, name ? name : "?");
	}
}

static bool stack_has(const struct capture *cap, const struct stack *st, const char *func)
{
	bool found = false;

	for (uint32_t i = 0; i < st->nr; i++) {
		/* return addresses point after the call: look up the call */
		uint64_t ip = i ? st->ips[i] - 1 : st->ips[i];
		const char *name = user_symbol(cap, st->pid, ip);

		printf("    #%u 0x%" PRIx64 " %s\n", i, st->ips[i], name ? name : "?");
		if (name && strcmp(name, func) == 0)
			found = true;
	}
	return found;
}

static int cmd_offcpu_stack(const struct capture *cap, uint32_t tid, const char *func)
{
	uint64_t with_stack = 0, matched = 0, total = 0;

	for (size_t i = 0; i < cap->noffcpus; i++) {
		const struct pc_rec_offcpu *o = &cap->offcpus[i];
		const struct stack *st;

		if (o->tid != tid)
			continue;
		total++;
		st = o->ustack == PC_STACK_NONE ? NULL : find_stack(cap, o->ustack);
		if (!st)
			continue;
		with_stack++;
		printf("offcpu %.3f ms, user stack %u, kernel stack %u:\n", o->duration / 1e6,
		       o->ustack, o->kstack);
		if (stack_has(cap, st, func))
			matched++;
		print_kernel_stack(cap, o->kstack);
	}
	printf("tid %u: %" PRIu64 " offcpu records, %" PRIu64 " with a user stack, %" PRIu64
	       " with %s\n", tid, total, with_stack, matched, func);
	return matched ? 0 : 1;
}

static int cmd_wakers(const struct capture *cap, uint32_t tid)
{
	struct { uint32_t waker; uint64_t n; } *counts = NULL;
	size_t n = 0;

	for (size_t i = 0; i < cap->nwakeups; i++) {
		const struct pc_rec_wakeup *w = &cap->wakeups[i];
		size_t j = 0;

		if (w->tid != tid)
			continue;
		while (j < n && counts[j].waker != w->waker_tid)
			j++;
		if (j == n) {
			counts = grow(counts, n, sizeof(*counts));
			counts[n].waker = w->waker_tid;
			counts[n++].n = 0;
		}
		counts[j].n++;
	}
	for (size_t j = 0; j < n; j++)
		printf("%u %" PRIu64 "\n", counts[j].waker, counts[j].n);
	free(counts);
	return 0;
}

/* ---- sizes, meta, stats ----------------------------------------------------- */

static int cmd_sizes(const struct capture *cap)
{
	for (int type = 0; type < MAX_TYPES; type++) {
		const struct type_size *t = &cap->sizes[type];

		if (!t->count)
			continue;
		printf("type %d: %" PRIu64 " records, %.1f raw bytes each, %.2f bytes each on disk\n",
		       type, t->count, (double)t->raw_bytes / t->count, t->disk_bytes / t->count);
	}
	return 0;
}

static int cmd_value(const struct kv *kv, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(kv[i].key, key) == 0) {
			printf("%s\n", kv[i].value);
			return 0;
		}
	}
	fprintf(stderr, "capcheck: no key %s\n", key);
	return 1;
}

static int cmd_syscalls(const struct capture *cap)
{
	for (size_t i = 0; i < cap->nsyscalls; i++) {
		const struct pc_rec_syscall *s = &cap->syscalls[i];

		printf("%u %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRId64 " %" PRIu64 " %d\n",
		       s->tid, s->nr, s->args[0], s->args[1], s->args[2], s->ret, s->duration,
		       s->ustack == PC_STACK_NONE ? -1 : (int)s->ustack);
	}
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: capcheck threads|sizes|syscalls FILE | offcpu-stack FILE TID FUNC | "
			"meta|stat FILE KEY\n");
	return 2;
}

/* Static: everything read stays reachable until exit (no leak reports). */
static struct capture the_capture;

int main(int argc, char **argv)
{
	struct capture *cap = &the_capture;

	if (argc < 3)
		return usage();
	load_capture(cap, argv[2]);
	if (strcmp(argv[1], "threads") == 0)
		return cmd_threads(cap);
	if (strcmp(argv[1], "wakers") == 0 && argc == 4)
		return cmd_wakers(cap, (uint32_t)strtoul(argv[3], NULL, 10));
	if (strcmp(argv[1], "sizes") == 0)
		return cmd_sizes(cap);
	if (strcmp(argv[1], "syscalls") == 0)
		return cmd_syscalls(cap);
	if (strcmp(argv[1], "offcpu-stack") == 0 && argc == 5)
		return cmd_offcpu_stack(cap, (uint32_t)strtoul(argv[3], NULL, 10), argv[4]);
	if (strcmp(argv[1], "meta") == 0 && argc == 4)
		return cmd_value(cap->meta, cap->nmeta, argv[3]);
	if (strcmp(argv[1], "stat") == 0 && argc == 4)
		return cmd_value(cap->stats, cap->nstats, argv[3]);
	return usage();
}
