/* uprobe_target.c - finding a function to uprobe in the objects a process
 * itself maps (see uprobe_target.h).
 *
 * Each file mapped executable is examined once (by device and inode): its
 * function symbols are loaded with pc_elf_module_load_fd() and searched
 * by name; the symbol's ELF virtual address becomes a file offset through
 * the PT_LOAD segment that holds it (offset = vaddr - p_vaddr + p_offset),
 * which is what a uprobe is attached at (a stripped Go binary's functions
 * come from its pclntab: common/gopclntab.h). The kernel is then given a path
 * that resolves to that very inode: /proc/PID/map_files/START-END when it
 * does, else the path from the maps if it names the same inode.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "common/elf_module.h"
#include "util/procinfo.h"
#include "uprobe_target.h"

#define FILES_EXAMINED_MAX 512

struct file_id {
	uint64_t inode;
	uint32_t dev_major, dev_minor;
};

struct find_walk {
	uint32_t pid;
	const char *const *names;
	struct uprobe_target *out;
	int max, found;
	struct file_id seen[FILES_EXAMINED_MAX];
	int nseen;
	int unreadable;
	char first_error[192];
};

static bool seen_before(struct find_walk *w, const struct map_entry *m)
{
	for (int i = 0; i < w->nseen; i++) {
		if (w->seen[i].inode == m->inode && w->seen[i].dev_major == m->dev_major &&
		    w->seen[i].dev_minor == m->dev_minor)
			return true;
	}
	if (w->nseen < FILES_EXAMINED_MAX)
		w->seen[w->nseen++] = (struct file_id){ m->inode, m->dev_major, m->dev_minor };
	return false;
}

/* The first of names (in their order) that mod defines. */
static const struct pc_symbol *find_symbol(const struct pc_elf_module *mod,
					   const char *const *names)
{
	for (const char *const *name = names; *name; name++) {
		for (uint32_t i = 0; i < mod->nsyms; i++) {
			if (strcmp(pc_elf_symbol_name(mod, &mod->syms[i]), *name) == 0)
				return &mod->syms[i];
		}
	}
	return NULL;
}

/* ELF virtual address -> file offset, through the PT_LOAD segment that
 * holds it in the file. 0 or -ENOENT. */
static int vaddr_to_offset(const struct pc_elf_module *mod, uint64_t vaddr, uint64_t *offset)
{
	for (uint32_t i = 0; i < mod->nsegs; i++) {
		const struct pc_segment *s = &mod->segs[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz) {
			*offset = vaddr - s->vaddr + s->offset;
			return 0;
		}
	}
	return -ENOENT;
}

static bool names_inode(const char *path, const struct map_entry *m)
{
	struct stat st;

	return stat(path, &st) == 0 && (uint64_t)st.st_ino == m->inode &&
	       major(st.st_dev) == m->dev_major && minor(st.st_dev) == m->dev_minor;
}

/* A path the kernel resolves to the mapped inode. 0 or -ESTALE. */
static int choose_attach_path(uint32_t pid, const struct map_entry *m, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid, m->start, m->end);
	if (names_inode(buf, m))
		return 0;
	snprintf(buf, len, "%s", m->path);
	return names_inode(buf, m) ? 0 : -ESTALE;
}

static void note_error(struct find_walk *w, const char *path, const char *what)
{
	w->unreadable++;
	if (!w->first_error[0])
		snprintf(w->first_error, sizeof(w->first_error), "%s: %s", path, what);
}

/* Fills t from the symbol sym of mod mapped by m. 0 or -errno. */
static int describe(struct find_walk *w, const struct map_entry *m,
		    const struct pc_elf_module *mod, const struct pc_symbol *sym,
		    struct uprobe_target *t)
{
	memset(t, 0, sizeof(*t));
	if (vaddr_to_offset(mod, sym->addr, &t->offset)) {
		note_error(w, m->path, "symbol outside every load segment");
		return -ENOENT;
	}
	if (choose_attach_path(w->pid, m, t->attach_path, sizeof(t->attach_path))) {
		note_error(w, m->path, "no path reaches the mapped file");
		return -ESTALE;
	}
	snprintf(t->path, sizeof(t->path), "%s", m->path);
	snprintf(t->symbol, sizeof(t->symbol), "%s", pc_elf_symbol_name(mod, sym));
	t->vaddr = sym->addr;
	t->inode = m->inode;
	t->dev_major = m->dev_major;
	t->dev_minor = m->dev_minor;
	return 0;
}

static int examine_mapping(void *ctx, const struct map_entry *m)
{
	struct find_walk *w = ctx;
	struct pc_elf_module mod = { 0 };
	const struct pc_symbol *sym;
	char err[160];
	int fd;

	if (w->found >= w->max)
		return 1; /* stop the walk */
	if (!map_entry_is_file(m) || seen_before(w, m))
		return 0;
	fd = procinfo_open_mapped_file(w->pid, m);
	if (fd < 0) {
		note_error(w, m->path, strerror(-fd));
		return 0;
	}
	if (pc_elf_module_load_fd(&mod, fd, m->path, err, sizeof(err))) {
		note_error(w, m->path, err);
	} else {
		sym = find_symbol(&mod, w->names);
		if (sym && describe(w, m, &mod, sym, &w->out[w->found]) == 0)
			w->found++;
	}
	pc_elf_module_free(&mod);
	close(fd);
	return 0;
}

int uprobe_target_find(uint32_t pid, const char *const *names, struct uprobe_target *out,
		       int max, char *why, size_t len)
{
	struct find_walk *w = calloc(1, sizeof(*w));
	int err;

	if (!w) {
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	w->pid = pid;
	w->names = names;
	w->out = out;
	w->max = max;
	err = procinfo_for_each_exec_map(pid, examine_mapping, w);
	if (err < 0)
		snprintf(why, len, "cannot read /proc/%u/maps: %s", pid, strerror(-err));
	else if (w->found == 0)
		snprintf(why, len, "no object mapped by process %u defines %s%s%s", pid, names[0],
			 w->unreadable ? "; unreadable: " : "", w->first_error);
	err = err < 0 ? err : w->found;
	free(w);
	return err;
}

/* The function name among mod's symbols: .symtab and .dynsym, or a
 * stripped Go binary's pclntab functions. 0 or -ENOENT. */
static int module_function(const struct pc_elf_module *mod, const char *name, uint64_t *vaddr)
{
	const char *names[] = { name, NULL };
	const struct pc_symbol *sym = find_symbol(mod, names);

	if (!sym)
		return -ENOENT;
	*vaddr = sym->addr;
	return 0;
}

/* Length of a Go amd64 stack-check comparison at code[0..len), 0 if
 * there is none: CMPQ 0x10(R14), SP (49 3b 66 10; 0x18 for a
 * large-stack check), or LEAQ -N(SP), R12 (4c 8d 64 24 N8 or 4c 8d a4 24
 * N32) followed by CMPQ 0x10(R14), R12 (4d 3b 66 10/18). */
static size_t go_stack_compare(const uint8_t *code, size_t len)
{
	static const uint8_t cmp_sp[] = { 0x49, 0x3b, 0x66 }, cmp_r12[] = { 0x4d, 0x3b, 0x66 };
	size_t lea = 0;

	if (len >= 4 && memcmp(code, cmp_sp, 3) == 0 && (code[3] == 0x10 || code[3] == 0x18))
		return 4;
	if (len >= 5 && code[0] == 0x4c && code[1] == 0x8d && code[2] == 0x64 && code[3] == 0x24)
		lea = 5;
	else if (len >= 8 && code[0] == 0x4c && code[1] == 0x8d && code[2] == 0xa4 &&
		 code[3] == 0x24)
		lea = 8;
	if (lea && len >= lea + 4 && memcmp(code + lea, cmp_r12, 3) == 0 &&
	    (code[lea + 3] == 0x10 || code[lea + 3] == 0x18))
		return lea + 4;
	return 0;
}

int uprobe_go_branch_offset(const char *path, uint64_t offset, uint64_t *branch)
{
	uint8_t code[32];
	ssize_t n;
	size_t cmp;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return -errno;
	n = pread(fd, code, sizeof(code), (off_t)offset);
	close(fd);
	if (n <= 0)
		return -EIO;
	cmp = go_stack_compare(code, (size_t)n);
	/* then JBE to morestack: 76 rel8, or 0f 86 rel32 */
	if (cmp && ((size_t)n > cmp + 1 && code[cmp] == 0x76)) {
		*branch = offset + cmp;
		return 0;
	}
	if (cmp && (size_t)n > cmp + 5 && code[cmp] == 0x0f && code[cmp + 1] == 0x86) {
		*branch = offset + cmp;
		return 0;
	}
	return -ENOENT;
}

int uprobe_file_is_go(const char *path)
{
	int rc, fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return -errno;
	rc = pc_elf_is_go_fd(fd);
	close(fd);
	return rc;
}

/* Opens path and loads its ELF facts into mod; t gets its build-id.
 * Returns the fd, or a negative errno with why filled. */
static int open_module(const char *path, const char *shown, struct pc_elf_module *mod,
		       struct uprobe_target *t, char *why, size_t len)
{
	char err[160];
	int fd;

	memset(t, 0, sizeof(*t));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		fd = -errno;
		snprintf(why, len, "%s: %s", shown, strerror(-fd));
		return fd;
	}
	if (pc_elf_module_load_fd(mod, fd, shown, err, sizeof(err))) {
		snprintf(why, len, "%s", err);
		close(fd);
		return -ENOEXEC;
	}
	t->build_id_len = mod->build_id_len;
	memcpy(t->build_id, mod->build_id, sizeof(t->build_id) < sizeof(mod->build_id) ?
	       sizeof(t->build_id) : sizeof(mod->build_id));
	return fd;
}

int uprobe_target_in_file(const char *path, const char *shown, const char *name,
			  struct uprobe_target *t, char *why, size_t len)
{
	struct pc_elf_module mod = { 0 };
	uint64_t vaddr = 0;
	int rc = 0, fd = open_module(path, shown, &mod, t, why, len);

	if (fd < 0)
		return fd;
	if (!name[0]) {
		rc = -ENOENT; /* the build-id only */
	} else if (pc_elf_function_addr_fd(fd, name, &vaddr) &&
		   module_function(&mod, name, &vaddr)) {
		snprintf(why, len, "%s defines no function %s%s", shown, name,
			 mod.nsyms ? "" : " (it has no symbols: stripped?)");
		rc = -ENOENT;
	} else if (vaddr_to_offset(&mod, vaddr, &t->offset)) {
		snprintf(why, len, "%s: %s lies outside every load segment", shown, name);
		rc = -ENOENT;
	} else {
		snprintf(t->path, sizeof(t->path), "%s", path);
		snprintf(t->attach_path, sizeof(t->attach_path), "%s", path);
		snprintf(t->symbol, sizeof(t->symbol), "%s", name);
		t->vaddr = vaddr;
	}
	pc_elf_module_free(&mod);
	close(fd);
	return rc;
}

int uprobe_usdt_in_file(const char *path, const char *shown, const char *provider,
			const char *name, struct uprobe_target *t, char *why, size_t len)
{
	struct pc_elf_module mod = { 0 };
	uint64_t vaddr = 0;
	int n, fd = open_module(path, shown, &mod, t, why, len);

	if (fd < 0)
		return fd;
	n = pc_elf_sdt_sites_fd(fd, provider, name, &vaddr, 1);
	if (n == 0)
		snprintf(why, len, "%s has no USDT probe %s:%s", shown, provider, name);
	else if (n < 0)
		snprintf(why, len, "%s: cannot read its SDT notes", shown);
	else if (vaddr_to_offset(&mod, vaddr, &t->offset))
		t->offset = 0;
	pc_elf_module_free(&mod);
	close(fd);
	return n > 0 ? n : n == 0 ? -ENOENT : n;
}

size_t uprobe_initial_targets(int targets_fd, int *pids, size_t max, size_t *more)
{
	uint32_t key, next, *prev = NULL;
	size_t n = 0;

	*more = 0;
	while (bpf_map_get_next_key(targets_fd, prev, &next) == 0) {
		if (n < max)
			pids[n++] = (int)next;
		else
			(*more)++;
		key = next;
		prev = &key;
	}
	return n;
}
