/* modules.c - the registry of mapped files (modules) that user stacks may
 * point into: one entry per distinct (device, inode), plus [vdso].
 *
 * A module is opened once, when a mapping of it is first seen, and the fd
 * stays open until the end so symbols can still be read if the file is
 * deleted or replaced during the recording. [vdso] is not a file: the
 * recorder copies its own vdso image (the kernel gives every 64-bit process
 * the same one) into a memfd and treats that as the module.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/elf_module.h"
#include "modules.h"
#include "util/util.h"

static uint32_t hash_key(uint32_t major, uint32_t minor, uint64_t inode)
{
	uint64_t h = inode * 0x9e3779b97f4a7c15ull;

	h ^= ((uint64_t)major << 32 | minor) * 0xc2b2ae3d27d4eb4full;
	return (uint32_t)(h ^ (h >> 29));
}

static bool same_key(const struct module *mod, const struct map_entry *m)
{
	return mod->dev_major == m->dev_major && mod->dev_minor == m->dev_minor &&
	       mod->inode == m->inode;
}

static uint32_t find_slot(const struct module_registry *r, const struct map_entry *m)
{
	uint32_t i = hash_key(m->dev_major, m->dev_minor, m->inode) & (r->nslots - 1);

	while (r->slots[i] != MODULE_NONE && !same_key(&r->mods[r->slots[i]], m))
		i = (i + 1) & (r->nslots - 1);
	return i;
}

static int grow_index(struct module_registry *r)
{
	uint32_t nslots = r->nslots ? r->nslots * 2 : 64;
	uint32_t *slots = malloc(nslots * sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (uint32_t i = 0; i < nslots; i++)
		slots[i] = MODULE_NONE;
	free(r->slots);
	r->slots = slots;
	r->nslots = nslots;
	for (uint32_t idx = 0; idx < r->n; idx++) {
		struct map_entry key = {
			.dev_major = r->mods[idx].dev_major,
			.dev_minor = r->mods[idx].dev_minor,
			.inode = r->mods[idx].inode,
		};
		r->slots[find_slot(r, &key)] = idx;
	}
	return 0;
}

/* Copies this process's own [vdso] image into a memfd. */
static int open_own_vdso(void)
{
	char line[256];
	unsigned long long start = 0, end = 0;
	FILE *f = fopen("/proc/self/maps", "re");
	int fd;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "[vdso]")) {
			sscanf(line, "%llx-%llx", &start, &end);
			break;
		}
	}
	fclose(f);
	if (!start || end <= start)
		return -ENOENT;
	fd = memfd_create("perfcap-vdso", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, (const void *)(uintptr_t)start, end - start) != (ssize_t)(end - start)) {
		close(fd);
		return -EIO;
	}
	return fd;
}

static void open_module(struct module *mod, uint32_t pid, const struct map_entry *m)
{
	int fd = map_entry_is_vdso(m) ? open_own_vdso() : procinfo_open_mapped_file(pid, m);
	int len;

	mod->fd = -1;
	if (fd < 0) {
		mod->open_error = fd;
		verbose_line("cannot open %s of pid %u: %s", m->path, pid, strerror(-fd));
		return;
	}
	mod->fd = fd;
	len = pc_elf_read_build_id_fd(fd, mod->build_id);
	if (len > 0 && len <= PC_BUILD_ID_MAX)
		mod->build_id_len = (uint8_t)len;
}

static uint32_t add_module(struct module_registry *r, uint32_t pid, const struct map_entry *m)
{
	struct module *mod;

	if (r->n == r->cap) {
		uint32_t cap = r->cap ? r->cap * 2 : 32;
		struct module *mods = realloc(r->mods, cap * sizeof(*mods));

		if (!mods)
			return MODULE_NONE;
		r->mods = mods;
		r->cap = cap;
	}
	mod = &r->mods[r->n];
	memset(mod, 0, sizeof(*mod));
	mod->path = strdup(m->path);
	if (!mod->path)
		return MODULE_NONE;
	mod->dev_major = m->dev_major;
	mod->dev_minor = m->dev_minor;
	mod->inode = m->inode;
	open_module(mod, pid, m);
	return r->n++;
}

uint32_t modules_lookup_or_add(struct module_registry *r, uint32_t pid,
			       const struct map_entry *m)
{
	uint32_t slot, idx;

	if (!map_entry_is_file(m) && !map_entry_is_vdso(m))
		return MODULE_NONE;
	if ((r->n + 1) * 2 > r->nslots && grow_index(r))
		return MODULE_NONE;
	slot = find_slot(r, m);
	if (r->slots[slot] != MODULE_NONE)
		return r->slots[slot];
	idx = add_module(r, pid, m);
	if (idx != MODULE_NONE)
		r->slots[slot] = idx;
	return idx;
}

void modules_free(struct module_registry *r)
{
	for (uint32_t i = 0; i < r->n; i++) {
		if (r->mods[i].fd >= 0)
			close(r->mods[i].fd);
		free(r->mods[i].path);
		addr_list_free(&r->mods[i].hits);
	}
	free(r->mods);
	free(r->slots);
	memset(r, 0, sizeof(*r));
}
