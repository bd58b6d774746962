/* symbols.c - the SYMBOLS chunk written at the end of a recording.
 *
 * User ips: each ip of each user stack is located in its address space's
 * mappings and turned into a file offset (ip - map start + map pgoff), kept
 * per module. Return addresses (all frames but the innermost) also add
 * offset - 1, the call instruction an analyzer will look up. Each module's
 * offsets become ELF virtual addresses through its load segments, and
 * pc_buf_add_module stores the symbols covering them.
 *
 * JIT ips (anonymous executable memory, or memory mapped after the last
 * read of /proc/PID/maps): the process's perf map, if it wrote one, names
 * them; only the entries covering hit addresses are stored.
 *
 * A stripped Go binary's functions come from its pclntab (elf_module.c);
 * STATS counts the modules named that way and the tables refused.
 *
 * Kernel ips: /proc/kallsyms is read once and only the symbols covering hit
 * kernel addresses are stored.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/elf_module.h"
#include "kallsyms.h"
#include "symbols.h"
#include "util/util.h"
#include "safe_file.h"

#define SYMBOLS_CHUNK_BYTES (32u << 20) /* start a new chunk past this */

static int add_hit(struct addr_list *l, uint64_t addr, uint32_t frame)
{
	int err = addr_list_add(l, addr);

	if (!err && frame > 0 && addr > 0)
		err = addr_list_add(l, addr - 1);
	return err;
}

void symbols_collect_user_stack(struct process_table *pt, const struct stack_entry *e,
				const uint64_t *ips, struct addr_list *jit_hits,
				uint64_t *unmapped)
{
	for (uint32_t i = 0; i < e->nr; i++) {
		const struct proc_map *map = processes_find_map(pt, e->aspace, ips[i]);

		if (!map)
			(*unmapped)++;
		if (!map || map->module == MODULE_NONE) {
			add_hit(jit_hits, ips[i], 0);
			continue;
		}
		add_hit(&pt->modules.mods[map->module].hits, ips[i] - map->start + map->pgoff, i);
	}
}

/* The stacks of live address spaces (evicted ones were collected then). */
static void collect_user_hits(const struct stack_table *stacks, struct process_table *pt,
			      struct addr_list *jit_hits, struct symbol_stats *st)
{
	st->user_ips_unmapped = pt->evicted_unmapped;
	st->jit_ips = pt->evicted_jit_unnamed;
	for (uint32_t id = 0; id < stacks->n; id++) {
		const struct stack_entry *e = &stacks->entries[id];

		if (e->kind != PC_STACK_USER || e->aspace == STACK_ASPACE_FORGOTTEN)
			continue;
		if (e->aspace >= pt->naspaces) { /* no address space (out of memory) */
			st->user_ips_unmapped += e->nr;
			continue;
		}
		symbols_collect_user_stack(pt, e, stack_table_ips(stacks, id),
					   &jit_hits[e->aspace], &st->user_ips_unmapped);
	}
}

static int collect_kernel_hits(const struct stack_table *stacks, struct addr_list *hits)
{
	int err = 0;

	for (uint32_t id = 0; id < stacks->n && !err; id++) {
		const struct stack_entry *e = &stacks->entries[id];
		const uint64_t *ips = stack_table_ips(stacks, id);

		if (e->kind != PC_STACK_KERNEL)
			continue;
		for (uint32_t i = 0; i < e->nr && !err; i++)
			err = add_hit(hits, ips[i], i);
	}
	addr_list_sort_unique(hits);
	return err;
}

static int submit_if_large(struct writer_thread *wt, struct chunk_buffer *cb)
{
	if (cb->buf.len < SYMBOLS_CHUNK_BYTES)
		return 0;
	return writer_thread_submit(wt, PC_CHUNK_SYMBOLS, PC_SYMBOLS_VERSION, cb);
}

/* A module whose file could not be read: its identity only, so an analyzer
 * can still find it by build-id. */
static void describe_unreadable(struct pc_elf_module *m, const struct module *mod)
{
	memset(m, 0, sizeof(*m));
	m->kind = PC_MODULE_ELF;
	m->path = strdup(mod->path);
	m->build_id_len = mod->build_id_len;
	memcpy(m->build_id, mod->build_id, mod->build_id_len);
}

/* File offsets -> ELF vaddrs, in place. Offsets no segment covers go. */
static void offsets_to_vaddrs(const struct pc_elf_module *m, struct addr_list *hits)
{
	size_t out = 0;

	for (size_t i = 0; i < hits->n; i++) {
		uint64_t vaddr;

		if (pc_elf_offset_to_vaddr(m, hits->v[i], &vaddr) == 0)
			hits->v[out++] = vaddr;
	}
	hits->n = out;
	addr_list_sort_unique(hits);
}

/* A module that could not be opened while it was mapped (fd limit ...):
 * its path, if it still names the same inode. */
static void reopen_by_path(struct module *mod)
{
	struct stat st;
	int fd;

	if (mod->fd >= 0 || mod->path[0] != '/')
		return;
	fd = pc_open_regular(mod->path, 0); /* a FIFO must not block */
	if (fd < 0)
		return;
	if (fstat(fd, &st) || (uint64_t)st.st_ino != mod->inode) {
		close(fd);
		return;
	}
	mod->fd = fd;
}

static int add_user_module(struct chunk_buffer *cb, struct module *mod, struct symbol_stats *st)
{
	struct pc_elf_module m;
	char why[256];
	int err = -EBADF;

	addr_list_sort_unique(&mod->hits);
	reopen_by_path(mod);
	if (mod->fd >= 0)
		err = pc_elf_module_load_fd(&m, mod->fd, mod->path, why, sizeof(why));
	if (err) {
		st->modules_unreadable++;
		verbose_line("no symbols for %s: %s", mod->path,
			     mod->fd >= 0 ? why : strerror(-mod->open_error));
		describe_unreadable(&m, mod);
	} else {
		if (m.go_pclntab)
			verbose_line("%s: %s", mod->path, m.go_pclntab_note);
		st->modules_gopclntab += m.go_pclntab > 0;
		st->gopclntab_refused += m.go_pclntab < 0;
		if (!m.build_id_len && mod->build_id_len) {
			m.build_id_len = mod->build_id_len;
			memcpy(m.build_id, mod->build_id, mod->build_id_len);
		}
		offsets_to_vaddrs(&m, &mod->hits);
	}
	err = pc_buf_add_module(&cb->buf, &m, mod->all_symbols ? NULL : mod->hits.v,
				mod->hits.n);
	if (!err)
		chunk_buffer_count(cb, 0);
	pc_elf_module_free(&m);
	return err;
}

static int add_kernel_module(struct chunk_buffer *cb, const struct stack_table *stacks,
			     struct symbol_stats *st)
{
	struct addr_list hits = { 0 };
	struct pc_elf_module m;
	bool hidden = false;
	int err = collect_kernel_hits(stacks, &hits);

	st->kernel_ips = hits.n;
	if (err || !hits.n) {
		addr_list_free(&hits);
		return err;
	}
	err = kallsyms_load(&m, &hidden);
	if (err) {
		st->kernel_symbols_unavailable = true;
		warning_line("cannot read /proc/kallsyms (%s); kernel frames will not be named",
			     strerror(-err));
		addr_list_free(&hits);
		return 0;
	}
	if (hidden) {
		st->kernel_symbols_unavailable = true;
		warning_line("/proc/kallsyms shows zero addresses (kernel.kptr_restrict); "
			     "kernel frames will not be named");
	}
	err = pc_buf_add_module(&cb->buf, &m, hits.v, hits.n);
	if (!err)
		chunk_buffer_count(cb, 0);
	pc_elf_module_free(&m);
	addr_list_free(&hits);
	return err;
}

static uint64_t count_named(const struct pc_elf_module *m, const struct addr_list *hits)
{
	uint64_t named = 0;

	for (size_t i = 0; i < hits->n; i++)
		named += pc_elf_module_lookup(m, hits->v[i]) != NULL;
	return named;
}

/* The perf map of one address space's process, if it has hits there. */
static int add_perfmap_module(struct chunk_buffer *cb, uint32_t pid, uint64_t start_ns,
			      struct addr_list *hits, struct symbol_stats *st)
{
	struct pc_elf_module m;
	char why[192];
	int err;

	addr_list_sort_unique(hits);
	st->jit_ips += hits->n;
	err = perfmap_load(&m, pid, start_ns, &st->perfmaps, why, sizeof(why));
	if (err) {
		if (err != -ENOENT)
			warning_line("JIT frames of pid %u will not be named: %s", pid, why);
		return err == -ENOMEM ? err : 0;
	}
	st->jit_ips_named += count_named(&m, hits);
	err = pc_buf_add_module(&cb->buf, &m, hits->v, hits->n);
	if (!err)
		chunk_buffer_count(cb, 0);
	pc_elf_module_free(&m);
	return err;
}

/* Moves the hits of later address spaces of the same pid (images before
 * and after an exec) into jit_hits[a]: a pid has one perf map file. */
static int merge_same_pid(struct process_table *pt, struct addr_list *jit_hits, uint32_t a)
{
	for (uint32_t b = a + 1; b < pt->naspaces; b++) {
		if (pt->aspaces[b].pid != pt->aspaces[a].pid || !jit_hits[b].n)
			continue;
		for (size_t i = 0; i < jit_hits[b].n; i++)
			if (addr_list_add(&jit_hits[a], jit_hits[b].v[i]))
				return -ENOMEM;
		addr_list_free(&jit_hits[b]);
		jit_hits[b] = (struct addr_list){ 0 };
	}
	return 0;
}

static int add_perfmap_modules(struct chunk_buffer *cb, struct process_table *pt,
			       struct addr_list *jit_hits, struct symbol_stats *st)
{
	int err = 0;

	for (uint32_t a = 0; a < pt->naspaces && !err; a++) {
		if (!jit_hits[a].n)
			continue;
		err = merge_same_pid(pt, jit_hits, a);
		if (!err)
			err = add_perfmap_module(cb, pt->aspaces[a].pid,
						 processes_start_ns(pt, pt->aspaces[a].pid),
						 &jit_hits[a], st);
	}
	/* evicted images (evict.c): their pids' perf maps outlive them */
	for (uint32_t j = 0; j < pt->njit && !err; j++)
		err = add_perfmap_module(cb, pt->jit[j].pid, pt->jit[j].start_ns,
					 &pt->jit[j].hits, st);
	return err;
}

int symbols_write(struct writer_thread *wt, const struct stack_table *stacks,
		  struct process_table *pt, struct symbol_stats *st)
{
	struct chunk_buffer cb = { 0 };
	struct addr_list *jit_hits = calloc(pt->naspaces ? pt->naspaces : 1, sizeof(*jit_hits));
	int err = 0;

	memset(st, 0, sizeof(*st));
	if (!jit_hits)
		return -ENOMEM;
	collect_user_hits(stacks, pt, jit_hits, st);
	for (uint32_t i = 0; i < pt->modules.n && !err; i++) {
		struct module *mod = &pt->modules.mods[i];

		if (!mod->hits.n && !mod->all_symbols)
			continue;
		st->modules_hit++;
		err = add_user_module(&cb, mod, st);
		if (!err)
			err = submit_if_large(wt, &cb);
	}
	if (!err)
		err = add_perfmap_modules(&cb, pt, jit_hits, st);
	for (uint32_t a = 0; a < pt->naspaces; a++)
		addr_list_free(&jit_hits[a]);
	free(jit_hits);
	if (!err)
		err = add_kernel_module(&cb, stacks, st);
	if (!err)
		err = writer_thread_submit(wt, PC_CHUNK_SYMBOLS, PC_SYMBOLS_VERSION, &cb);
	chunk_buffer_free(&cb);
	return err;
}
