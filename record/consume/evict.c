/* evict.c - forgets exited processes, replaced images and their threads
 * once their stacks are accounted, and caps the tables (see evict.h).
 *
 * A pass: choose the processes to evict (exited long enough, then the
 * oldest beyond the cap) and the address spaces (theirs, and images
 * replaced long enough ago); locate the ips of those address spaces'
 * stacks in their mappings; forget the stacks (index and ips), the
 * stack-map cache entries, the mappings, the threads and the slots. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "consumer.h"
#include "evict.h"
#include "symbols.h"
#include "ustack_copy.h"
#include "ustack_scan.h"
#include "util/util.h"

struct pass {
	struct process_table *pt;
	uint64_t now;
	uint8_t *dead;              /* per address space: evicted by this pass */
	uint32_t ndead;
	uint8_t *gone;              /* per process slot: evicted by this pass */
	uint32_t ngone;
};

static void note_peaks(struct process_table *pt)
{
	if (pt->nprocs > pt->procs_peak)
		pt->procs_peak = pt->nprocs;
	if (pt->nthreads > pt->threads_peak)
		pt->threads_peak = pt->nthreads;
	if (pt->naspaces - pt->nfree_aspaces > pt->aspaces_peak)
		pt->aspaces_peak = pt->naspaces - pt->nfree_aspaces;
}

static void evict_process(struct pass *ps, uint32_t i)
{
	ps->gone[i] = 1;
	ps->ngone++;
	if (!ps->dead[ps->pt->procs[i].aspace]) {
		ps->dead[ps->pt->procs[i].aspace] = 1;
		ps->ndead++;
	}
}

/* Exited long enough ago, then the oldest beyond the cap. */
static void choose_processes(struct pass *ps)
{
	struct process_table *pt = ps->pt;

	for (uint32_t i = 0; i < pt->nprocs; i++) {
		const struct process *p = &pt->procs[i];

		if (p->exited && ps->now - p->exited_ns >= EVICT_DELAY_NS) {
			evict_process(ps, i);
			pt->procs_evicted++;
		}
	}
	for (uint32_t i = 0; i < pt->nprocs && pt->nprocs - ps->ngone > EVICT_PROCS_MAX; i++) {
		if (ps->gone[i])
			continue;
		evict_process(ps, i);
		pt->procs_evicted_live++;
	}
}

/* Images replaced (exec, pid reuse) long enough ago. */
static void choose_aspaces(struct pass *ps)
{
	struct process_table *pt = ps->pt;

	for (uint32_t a = 0; a < pt->naspaces; a++) {
		const struct address_space *as = &pt->aspaces[a];

		if (!as->free && !ps->dead[a] && as->retired_ns &&
		    ps->now - as->retired_ns >= EVICT_DELAY_NS) {
			ps->dead[a] = 1;
			ps->ndead++;
		}
	}
}

/* Whether the process left a perf map that the end of the recording can
 * still read: the one in its own mount namespace went with it. */
static bool has_perfmap(uint32_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
	return access(path, F_OK) == 0;
}

/* Keeps the JIT ips of an evicted image for its perf map, within the cap;
 * without a perf map they are counted as JIT ips not named, as the end of
 * the recording would. */
static void keep_jit_hits(struct process_table *pt, uint32_t pid, struct addr_list *hits)
{
	struct evicted_jit *jit;

	if (!hits->n)
		return;
	addr_list_sort_unique(hits);
	if (!has_perfmap(pid)) {
		pt->evicted_jit_unnamed += hits->n;
		addr_list_free(hits);
		return;
	}
	jit = pt->njit < EVICT_JIT_MAX ?
	      array_reserve(pt->jit, &pt->jit_cap, pt->njit + 1, sizeof(*jit)) : NULL;
	if (!jit) {
		pt->jit_ips_dropped += hits->n;
		addr_list_free(hits);
		return;
	}
	pt->jit = jit;
	pt->jit[pt->njit].pid = pid;
	pt->jit[pt->njit].start_ns = processes_start_ns(pt, pid);
	pt->jit[pt->njit++].hits = *hits;
	*hits = (struct addr_list){ 0 };
}

/* Locates the ips of the dead address spaces' stacks and forgets them.
 * Their ips leave the arena once they are half of it (amortised). */
static void resolve_stacks(struct pass *ps, struct stack_table *stacks, struct addr_list *jit)
{
	struct process_table *pt = ps->pt;
	bool forgot = false, move;

	for (uint32_t id = 0; id < stacks->n; id++) {
		struct stack_entry *e = &stacks->entries[id];

		if (e->kind != PC_STACK_USER || e->aspace >= pt->naspaces || !ps->dead[e->aspace])
			continue;
		symbols_collect_user_stack(pt, e, stack_table_ips(stacks, id), &jit[e->aspace],
					   &pt->evicted_unmapped);
		e->aspace = STACK_ASPACE_FORGOTTEN;
		pt->stack_ips_dead += e->nr;
		forgot = true;
	}
	if (!forgot)
		return;
	move = pt->stack_ips_dead * 2 >= stacks->nips;
	stack_table_compact(stacks, move);
	if (move)
		pt->stack_ips_dead = 0;
}

static void mark_unwind_modules(struct process_table *pt, const struct address_space *as)
{
	for (uint32_t i = 0; i < as->nmaps; i++) {
		uint32_t m = as->maps[i].module;

		if (m != MODULE_NONE && m < pt->modules.n)
			pt->modules.mods[m].unwind_wanted = true;
	}
}

static void free_aspace(struct process_table *pt, uint32_t a, struct addr_list *jit)
{
	struct address_space *as = &pt->aspaces[a];
	uint32_t *slots = array_reserve(pt->free_aspaces, &pt->free_aspaces_cap,
					pt->nfree_aspaces + 1, sizeof(*slots));

	if (ustack_copy_has_pid(as->pid))
		mark_unwind_modules(pt, as);
	if (as->retired_ns) {
		/* an image replaced by exec (or pid reuse): a perf map under its
		 * pid is the new image's, whose names would be wrong for it */
		pt->evicted_jit_unnamed += jit->n;
		addr_list_free(jit);
	} else {
		keep_jit_hits(pt, as->pid, jit);
	}
	free(as->maps);
	memset(as, 0, sizeof(*as));
	as->free = true;
	pt->aspaces_evicted++;
	if (!slots)
		return; /* out of memory: the slot is not reused */
	pt->free_aspaces = slots;
	pt->free_aspaces[pt->nfree_aspaces++] = a;
}

static bool keep_user_stack_id(uint64_t key, uint32_t value, void *ctx)
{
	const struct pass *ps = ctx;
	uint32_t a = (uint32_t)(key >> 32);

	(void)value;
	return a >= ps->pt->naspaces || !ps->dead[a];
}

static bool pid_evicted(const struct pass *ps, const struct u64_table *by_pid, uint32_t pid)
{
	uint32_t i = u64_table_get(by_pid, pid);

	return i != U64_TABLE_EMPTY && ps->gone[i];
}

/* Threads of evicted processes; beyond the cap, threads of no process in
 * the table, then the oldest. by_pid is the index before compaction. */
static void evict_threads(struct pass *ps, const struct u64_table *by_pid)
{
	struct process_table *pt = ps->pt;
	uint32_t out = 0, over = pt->nthreads > EVICT_THREADS_MAX ?
				 pt->nthreads - EVICT_THREADS_MAX : 0;

	for (uint32_t i = 0; i < pt->nthreads; i++) {
		const struct thread *t = &pt->threads[i];
		bool drop = pid_evicted(ps, by_pid, t->pid);

		if (!drop && over && u64_table_get(by_pid, t->pid) == U64_TABLE_EMPTY) {
			drop = true;
			over--;
		}
		if (drop)
			pt->threads_evicted++;
		else
			pt->threads[out++] = *t;
	}
	if (over) { /* still over: the oldest go */
		over = over < out ? over : out;
		pt->threads_evicted += over;
		memmove(pt->threads, pt->threads + over, (out - over) * sizeof(*pt->threads));
		out -= over;
	}
	pt->nthreads = out;
}

/* Rebuilds a pid/tid index over compacted slots: n elements of stride
 * bytes from base, whose u32 key is at key_off. */
static void reindex(struct u64_table *t, const void *base, size_t stride, size_t key_off,
		    uint32_t n, uint64_t *failed)
{
	u64_table_free(t);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t key;

		memcpy(&key, (const char *)base + (size_t)i * stride + key_off, sizeof(key));
		if (u64_table_put(t, key, i))
			(*failed)++;
	}
}

static void compact_processes(struct pass *ps)
{
	struct process_table *pt = ps->pt;
	uint32_t out = 0;

	for (uint32_t i = 0; i < pt->nprocs; i++) {
		if (!ps->gone[i])
			pt->procs[out++] = pt->procs[i];
	}
	pt->nprocs = out;
	reindex(&pt->proc_by_pid, pt->procs, sizeof(*pt->procs), offsetof(struct process, pid),
		pt->nprocs, &pt->records_failed);
}

static void forget(struct pass *ps, struct consumer *c, struct addr_list *jit)
{
	struct process_table *pt = ps->pt;

	resolve_stacks(ps, &c->stack_table, jit);
	for (uint32_t a = 0; a < pt->naspaces; a++) {
		if (ps->dead[a])
			free_aspace(pt, a, &jit[a]);
	}
	if (ps->ndead)
		ustack_scan_forget_words();
	if (u64_table_filter(&c->stackmap.user, keep_user_stack_id, ps))
		c->stats.stack_records_failed++;
	/* threads look their pid up in the index before the processes move */
	evict_threads(ps, &pt->proc_by_pid);
	compact_processes(ps);
	reindex(&pt->thread_by_tid, pt->threads, sizeof(*pt->threads),
		offsetof(struct thread, tid), pt->nthreads, &pt->records_failed);
}

void evict_pass(struct consumer *c, uint64_t now_ns)
{
	struct process_table *pt = &c->processes;
	struct pass ps = { .pt = pt, .now = now_ns };
	struct addr_list *jit;

	note_peaks(pt);
	ps.dead = calloc(pt->naspaces ? pt->naspaces : 1, 1);
	ps.gone = calloc(pt->nprocs ? pt->nprocs : 1, 1);
	jit = calloc(pt->naspaces ? pt->naspaces : 1, sizeof(*jit));
	if (ps.dead && ps.gone && jit) {
		choose_processes(&ps);
		choose_aspaces(&ps);
		if (ps.ndead || ps.ngone || pt->nthreads > EVICT_THREADS_MAX)
			forget(&ps, c, jit);
	}
	free(ps.dead);
	free(ps.gone);
	free(jit);
}

/* The recorder's peak resident memory so far, in KiB (0 if unknown). */
static uint64_t peak_rss_kb(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) ? 0 : (uint64_t)ru.ru_maxrss;
}

int evict_stats_kv(struct chunk_buffer *kv, const struct process_table *pt)
{
	int err = 0;

	err |= chunk_buffer_add_kv_u64(kv, "record.peak_rss_kb", peak_rss_kb());
	err |= chunk_buffer_add_kv_u64(kv, "procs.evicted", pt->procs_evicted);
	err |= chunk_buffer_add_kv_u64(kv, "procs.evicted_live", pt->procs_evicted_live);
	err |= chunk_buffer_add_kv_u64(kv, "procs.images_evicted", pt->aspaces_evicted);
	err |= chunk_buffer_add_kv_u64(kv, "procs.threads_evicted", pt->threads_evicted);
	err |= chunk_buffer_add_kv_u64(kv, "procs.jit_ips_dropped", pt->jit_ips_dropped);
	err |= chunk_buffer_add_kv_u64(kv, "procs.table_peak", pt->procs_peak);
	err |= chunk_buffer_add_kv_u64(kv, "procs.images_peak", pt->aspaces_peak);
	err |= chunk_buffer_add_kv_u64(kv, "procs.threads_peak", pt->threads_peak);
	return err ? -ENOMEM : 0;
}

void evict_print_summary(const struct process_table *pt)
{
	if (!pt->procs_evicted && !pt->procs_evicted_live && !pt->threads_evicted)
		return;
	fprintf(stderr, "perfcap-record: forgot %llu exited processes (%llu images, %llu "
		"threads) once their stacks were resolved; %llu live processes evicted over "
		"the cap, %llu JIT ips dropped; at most %u processes held (STATS procs.*)\n",
		(unsigned long long)pt->procs_evicted, (unsigned long long)pt->aspaces_evicted,
		(unsigned long long)pt->threads_evicted,
		(unsigned long long)pt->procs_evicted_live,
		(unsigned long long)pt->jit_ips_dropped, pt->procs_peak);
}
