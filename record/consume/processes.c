/* processes.c - what the recorder knows about each process it has seen.
 *
 * First sight of a pid (or its first sample after an exec): read /proc once
 * and emit PROC, THREAD and MAP records into the PROCS chunk being filled.
 * Those records land in the file before the EVENTS chunk holding the sample
 * (the consumer flushes PROCS before EVENTS).
 *
 * Address spaces keep the union of all executable mappings read for one
 * process image; user ips are resolved against them at the end of the
 * recording (symbols.c), when the images may be long gone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "processes.h"
#include "util/procinfo.h"
#include "util/util.h"

#define REREAD_MIN_NS (100ull * 1000 * 1000)      /* 100 ms */
#define REREAD_MAX_NS (5ull * 1000 * 1000 * 1000) /* 5 s */
/* A young image (its first half second after exec or first sight) is
 * still mapping its libraries: a JVM's launcher maps libjli, then a thread
 * loads libjvm tens of milliseconds later, and `java -version` is gone
 * within 200 ms. Its misses re-read at most every 10 ms, not 100. */
#define YOUNG_NS        (500ull * 1000 * 1000)
#define REREAD_YOUNG_NS (10ull * 1000 * 1000)
#define EXE_PATH_MAX  4096

void processes_init(struct process_table *pt, struct chunk_buffer *out)
{
	memset(pt, 0, sizeof(*pt));
	pt->out = out;
}

static void add_record(struct process_table *pt, void *fixed, size_t len,
		       const void *var1, size_t len1, const void *var2, size_t len2,
		       uint64_t ts)
{
	if (chunk_buffer_add_rec(pt->out, fixed, len, var1, len1, var2, len2, ts))
		pt->records_failed++;
}

static void copy_comm(char dst[16], const char *src)
{
	memset(dst, 0, 16);
	strncpy(dst, src, 15);
}

/* ---- threads ---------------------------------------------------------- */

static void emit_thread(struct process_table *pt, const struct thread *t, uint64_t ts)
{
	struct pc_rec_thread rec = {
		.h.type = PC_REC_THREAD,
		.ts = ts,
		.pid = t->pid,
		.tid = t->tid,
	};

	memcpy(rec.comm, t->comm, sizeof(rec.comm));
	add_record(pt, &rec, sizeof(rec), NULL, 0, NULL, 0, ts);
}

/* Emits a THREAD record when tid is new, moved to another process (tid
 * reuse) or was renamed. */
static void note_thread(struct process_table *pt, uint32_t pid, uint32_t tid,
			const char *comm, uint64_t ts)
{
	uint32_t idx = u64_table_get(&pt->thread_by_tid, tid);
	struct thread *t;
	char name[16];

	copy_comm(name, comm);
	if (idx != U64_TABLE_EMPTY) {
		t = &pt->threads[idx];
		if (t->pid == pid && memcmp(t->comm, name, sizeof(name)) == 0)
			return;
	} else {
		struct thread *threads = array_reserve(pt->threads, &pt->threads_cap,
						       pt->nthreads + 1, sizeof(*threads));
		if (!threads) {
			pt->records_failed++;
			return;
		}
		pt->threads = threads;
		idx = pt->nthreads;
		if (u64_table_put(&pt->thread_by_tid, tid, idx)) {
			pt->records_failed++;
			return;
		}
		pt->nthreads++;
		t = &pt->threads[idx];
		t->tid = tid;
	}
	t->pid = pid;
	memcpy(t->comm, name, sizeof(name));
	emit_thread(pt, t, ts);
}

struct thread_walk {
	struct process_table *pt;
	uint32_t pid;
	uint64_t ts;
};

static int note_listed_thread(void *ctx, uint32_t tid, const char *comm)
{
	struct thread_walk *w = ctx;

	note_thread(w->pt, w->pid, tid, comm, w->ts);
	return 0;
}

/* ---- address spaces and maps ------------------------------------------ */

/* A new address space, in the slot of an evicted one if there is one. */
static uint32_t new_address_space(struct process_table *pt, uint32_t pid)
{
	struct address_space *as;
	uint32_t idx;

	if (pt->nfree_aspaces) {
		idx = pt->free_aspaces[--pt->nfree_aspaces];
	} else {
		as = array_reserve(pt->aspaces, &pt->aspaces_cap, pt->naspaces + 1, sizeof(*as));
		if (!as)
			return U64_TABLE_EMPTY;
		pt->aspaces = as;
		idx = pt->naspaces++;
	}
	as = &pt->aspaces[idx];
	memset(as, 0, sizeof(*as));
	as->pid = pid;
	as->reread_interval_ns = REREAD_MIN_NS;
	as->born_ns = monotonic_ns();
	pt->last_born_ns = as->born_ns;
	return idx;
}

bool processes_any_young(const struct process_table *pt, uint64_t now)
{
	return pt->last_born_ns && now - pt->last_born_ns < YOUNG_NS;
}

/* The image p had is replaced (exec, pid reuse): it can be evicted. */
static void retire_aspace(struct process_table *pt, const struct process *p)
{
	pt->aspaces[p->aspace].retired_ns = monotonic_ns();
}

/* Index of the first map with start >= addr. */
static uint32_t lower_bound(const struct address_space *as, uint64_t addr)
{
	uint32_t lo = 0, hi = as->nmaps;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (as->maps[mid].start < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool has_map(const struct address_space *as, const struct map_entry *m)
{
	for (uint32_t i = lower_bound(as, m->start);
	     i < as->nmaps && as->maps[i].start == m->start; i++) {
		if (as->maps[i].end == m->end && as->maps[i].pgoff == m->pgoff)
			return true;
	}
	return false;
}

static int insert_map(struct address_space *as, const struct proc_map *pm)
{
	struct proc_map *maps = array_reserve(as->maps, &as->cap, as->nmaps + 1, sizeof(*maps));
	uint32_t at;

	if (!maps)
		return -ENOMEM;
	as->maps = maps;
	at = lower_bound(as, pm->start);
	memmove(&maps[at + 1], &maps[at], (as->nmaps - at) * sizeof(*maps));
	maps[at] = *pm;
	as->nmaps++;
	return 0;
}

static void emit_map(struct process_table *pt, uint32_t pid, const struct map_entry *m,
		     const struct module *mod, uint64_t ts)
{
	struct pc_rec_map rec = {
		.h.type = PC_REC_MAP,
		.ts = ts,
		.pid = pid,
		.prot = m->prot,
		.start = m->start,
		.end = m->end,
		.pgoff = m->pgoff,
		.inode = m->inode,
		.dev_major = m->dev_major,
		.dev_minor = m->dev_minor,
		.path_len = (uint32_t)strlen(m->path),
	};

	if (mod) {
		rec.build_id_len = mod->build_id_len;
		memcpy(rec.build_id, mod->build_id, mod->build_id_len);
	}
	add_record(pt, &rec, sizeof(rec), m->path, rec.path_len, NULL, 0, ts);
}

struct map_walk {
	struct process_table *pt;
	uint32_t aspace;
	uint64_t ts;
	uint32_t added;
};

static int note_listed_map(void *ctx, const struct map_entry *m)
{
	struct map_walk *w = ctx;
	struct process_table *pt = w->pt;
	struct address_space *as = &pt->aspaces[w->aspace];
	struct proc_map pm = { .start = m->start, .end = m->end, .pgoff = m->pgoff };
	const struct module *mod = NULL;

	if (has_map(as, m))
		return 0;
	pm.module = modules_lookup_or_add(&pt->modules, as->pid, m);
	if (pm.module != MODULE_NONE)
		mod = &pt->modules.mods[pm.module];
	if (insert_map(as, &pm)) {
		pt->records_failed++;
		return 0;
	}
	w->added++;
	/* Only files and [vdso] are recorded; anonymous executable memory
	 * (JIT code) is kept above so its ips do not count as misses. */
	if (map_entry_is_file(m) || map_entry_is_vdso(m))
		emit_map(pt, as->pid, m, mod, w->ts);
	return 0;
}

/* Reads /proc/PID/maps into the address space. Returns the number of new
 * mappings, or -errno. */
static int read_maps(struct process_table *pt, uint32_t aspace, uint64_t ts)
{
	struct map_walk w = { .pt = pt, .aspace = aspace, .ts = ts };
	int err = procinfo_for_each_exec_map(pt->aspaces[aspace].pid, note_listed_map, &w);

	pt->aspaces[aspace].last_read_ns = monotonic_ns();
	if (err < 0) {
		pt->aspaces[aspace].gone = true;
		return err;
	}
	return (int)w.added;
}

/* ---- processes -------------------------------------------------------- */

static void emit_proc(struct process_table *pt, uint32_t pid, const struct proc_stat *st,
		      uint64_t ts)
{
	struct pc_rec_proc rec = {
		.h.type = PC_REC_PROC,
		.ts = ts,
		.pid = pid,
		.ppid = st->ppid,
		.start_ns = st->start_ns,
	};
	char exe[EXE_PATH_MAX];
	char *cmdline = NULL;
	int exe_len = procinfo_read_exe(pid, exe, sizeof(exe));
	long cmdline_len = procinfo_read_cmdline(pid, &cmdline);

	memcpy(rec.comm, st->comm, sizeof(rec.comm));
	rec.exe_len = exe_len > 0 ? (uint32_t)exe_len : 0;
	rec.cmdline_len = cmdline_len > 0 ? (uint32_t)cmdline_len : 0;
	add_record(pt, &rec, sizeof(rec), exe, rec.exe_len, cmdline, rec.cmdline_len, ts);
	free(cmdline);
}

/* A process whose /proc is gone: what the sample itself told us. */
static void emit_unreadable_proc(struct process_table *pt, uint32_t pid,
				 const char *comm, uint64_t ts)
{
	struct proc_stat st = { 0 };

	copy_comm(st.comm, comm);
	emit_proc(pt, pid, &st, ts);
}

/* Reads /proc/PID of p's current image and emits its records. */
static void read_process(struct process_table *pt, struct process *p,
			 const char *comm, uint64_t ts)
{
	struct thread_walk tw = { .pt = pt, .pid = p->pid, .ts = ts };
	struct proc_stat st;
	uint32_t aspace = p->aspace;

	p->info_pending = false;
	if (p->pid == 0) { /* the idle tasks: no /proc entry */
		struct proc_stat idle = { .comm = "swapper" };

		emit_proc(pt, 0, &idle, ts);
		pt->aspaces[aspace].gone = true;
		return;
	}
	/* a zombie has lost its maps and exe: as good as gone */
	if (procinfo_read_stat(p->pid, &st) || st.state == 'Z' || st.state == 'X') {
		pt->procs_unreadable++;
		pt->aspaces[aspace].gone = true;
		emit_unreadable_proc(pt, p->pid, comm, ts);
		return;
	}
	p->start_ns = st.start_ns;
	emit_proc(pt, p->pid, &st, ts);
	procinfo_for_each_thread(p->pid, note_listed_thread, &tw);
	read_maps(pt, aspace, ts);
}

static struct process *add_process(struct process_table *pt, uint32_t pid)
{
	struct process *procs = array_reserve(pt->procs, &pt->procs_cap, pt->nprocs + 1,
					      sizeof(*procs));
	struct process *p;
	uint32_t aspace;

	if (!procs)
		return NULL;
	pt->procs = procs;
	aspace = new_address_space(pt, pid);
	if (aspace == U64_TABLE_EMPTY || u64_table_put(&pt->proc_by_pid, pid, pt->nprocs))
		return NULL;
	p = &pt->procs[pt->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->aspace = aspace;
	p->info_pending = true;
	pt->procs_seen++;
	return p;
}

static struct process *find_process(struct process_table *pt, uint32_t pid)
{
	uint32_t idx = u64_table_get(&pt->proc_by_pid, pid);

	return idx == U64_TABLE_EMPTY ? NULL : &pt->procs[idx];
}

uint64_t processes_start_ns(struct process_table *pt, uint32_t pid)
{
	const struct process *p = find_process(pt, pid);

	return p ? p->start_ns : 0;
}

/* After an exit event, a later sample of the same pid is either a late
 * sample of the dying process or a new process that reuses the pid: the
 * start time tells them apart. */
static void check_pid_reuse(struct process_table *pt, struct process *p)
{
	struct proc_stat st;
	uint32_t aspace;

	if (procinfo_read_stat(p->pid, &st) || st.start_ns == p->start_ns)
		return;
	aspace = new_address_space(pt, p->pid);
	if (aspace == U64_TABLE_EMPTY)
		return;
	retire_aspace(pt, p);
	p->aspace = aspace;
	p->exited = false;
	p->info_pending = true;
	pt->procs_seen++;
}

uint32_t processes_on_sample(struct process_table *pt, uint32_t pid, uint32_t tid,
			     const char *comm, uint64_t ts)
{
	struct process *p = find_process(pt, pid);

	if (!p) {
		p = add_process(pt, pid);
		if (!p) {
			pt->records_failed++;
			return U64_TABLE_EMPTY;
		}
	} else if (p->exited) {
		check_pid_reuse(pt, p);
	}
	if (p->info_pending)
		read_process(pt, p, comm, ts);
	if (pid != 0) /* idle tasks share tid 0 under per-CPU names */
		note_thread(pt, pid, tid, comm, ts);
	return p->aspace;
}

void processes_on_thread(struct process_table *pt, uint32_t pid, uint32_t tid,
			 const char *comm, uint64_t ts)
{
	if (pid != 0) /* idle tasks share tid 0 under per-CPU names */
		note_thread(pt, pid, tid, comm, ts);
}

void processes_on_exec(struct process_table *pt, uint32_t pid, uint32_t tid,
		       const char *comm, uint64_t ts, bool read_now)
{
	struct process *p = find_process(pt, pid);
	uint32_t aspace;

	if (!p && !read_now)
		return; /* read at its first sample */
	if (!p) {
		p = add_process(pt, pid);
		if (!p) {
			pt->records_failed++;
			return;
		}
	} else {
		aspace = new_address_space(pt, pid);
		if (aspace == U64_TABLE_EMPTY) {
			pt->records_failed++;
			return;
		}
		retire_aspace(pt, p);
		p->aspace = aspace;
		p->info_pending = true;
		p->exited = false;
	}
	note_thread(pt, pid, tid, comm, ts);
	if (!read_now)
		return;
	read_process(pt, p, comm, ts);
	/* At exec only the program and ld.so are mapped; ld.so maps the
	 * libraries next. Let the first miss re-read at once. */
	pt->aspaces[p->aspace].last_read_ns = 0;
}

void processes_on_exit(struct process_table *pt, uint32_t pid)
{
	struct process *p = find_process(pt, pid);

	if (p) {
		p->exited = true;
		p->exited_ns = monotonic_ns();
	}
}

bool processes_describe_untraced(struct process_table *pt, uint32_t pid, uint64_t ts)
{
	struct proc_stat st;

	if (find_process(pt, pid))
		return true;
	if (pid == 0 || procinfo_read_stat(pid, &st))
		return false;
	emit_proc(pt, pid, &st, ts);
	return true;
}

const struct proc_map *processes_find_map(const struct process_table *pt,
					  uint32_t aspace, uint64_t ip)
{
	const struct address_space *as;
	uint32_t i;

	if (aspace >= pt->naspaces)
		return NULL;
	as = &pt->aspaces[aspace];
	i = lower_bound(as, ip + 1); /* first map starting after ip */
	if (i == 0)
		return NULL;
	return ip < as->maps[i - 1].end ? &as->maps[i - 1] : NULL;
}

void processes_check_user_ips(struct process_table *pt, uint32_t aspace,
			      const uint64_t *ips, uint32_t nr, uint64_t ts)
{
	struct address_space *as;
	uint64_t now = monotonic_ns();
	bool miss = false;
	int added;

	if (aspace >= pt->naspaces)
		return;
	as = &pt->aspaces[aspace];
	if (as->gone || now - as->last_read_ns < (now - as->born_ns < YOUNG_NS ? REREAD_YOUNG_NS
									      : as->reread_interval_ns))
		return;
	for (uint32_t i = 0; i < nr && !miss; i++)
		miss = processes_find_map(pt, aspace, ips[i]) == NULL;
	if (!miss)
		return;
	added = read_maps(pt, aspace, ts);
	as = &pt->aspaces[aspace];
	if (added > 0)
		as->reread_interval_ns = REREAD_MIN_NS;
	else if (as->reread_interval_ns < REREAD_MAX_NS)
		as->reread_interval_ns *= 2;
}

bool processes_on_exec_mapping(struct process_table *pt, uint32_t pid, uint64_t start,
			       uint64_t len, uint64_t ts)
{
	struct process *p = find_process(pt, pid);
	uint32_t aspace;

	if (!p || p->info_pending || p->exited || len == 0)
		return false;
	aspace = p->aspace;
	if (pt->aspaces[aspace].gone || (processes_find_map(pt, aspace, start) &&
					 processes_find_map(pt, aspace, start + len - 1)))
		return false;
	if (read_maps(pt, aspace, ts) > 0)
		pt->aspaces[aspace].reread_interval_ns = REREAD_MIN_NS;
	return true;
}

void processes_free(struct process_table *pt)
{
	for (uint32_t i = 0; i < pt->naspaces; i++)
		free(pt->aspaces[i].maps);
	for (uint32_t i = 0; i < pt->njit; i++)
		addr_list_free(&pt->jit[i].hits);
	free(pt->jit);
	free(pt->free_aspaces);
	free(pt->aspaces);
	free(pt->procs);
	free(pt->threads);
	u64_table_free(&pt->proc_by_pid);
	u64_table_free(&pt->thread_by_tid);
	modules_free(&pt->modules);
	memset(pt, 0, sizeof(*pt));
}
