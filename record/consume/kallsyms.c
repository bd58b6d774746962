/* kallsyms.c - the running kernel's function symbols from /proc/kallsyms.
 *
 * Symbols are sorted by address; aliases at the same address keep the first
 * name listed. Each gets a size reaching to the next symbol (capped), since
 * the capture stores only the symbols that samples hit and "extends to the
 * next symbol" would otherwise mean the next *stored* one. Names of module
 * symbols carry the module: "ext4_file_read_iter [ext4]". The kernel's
 * build-id comes from the GNU note in /sys/kernel/notes. The kernel decides
 * whether /proc/kallsyms shows addresses by the credentials of the opener,
 * so it is opened before the recorder drops its capabilities.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kallsyms.h"
#include "util/util.h"

#define MAX_SYMBOL_SIZE (1u << 20)
#define NT_GNU_BUILD_ID_TYPE 3

struct raw_symbol {
	uint64_t addr;
	uint32_t name_off;
	uint32_t seq;      /* line number: keeps sorting stable */
};

struct symbol_list {
	struct raw_symbol *v;
	uint32_t n;
	uint32_t cap;
	struct text names;
	bool any_nonzero;
};

static bool is_text_type(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

static int add_symbol(struct symbol_list *l, uint64_t addr, const char *name,
		      const char *module)
{
	struct raw_symbol *v = array_reserve(l->v, &l->cap, l->n + 1, sizeof(*v));
	uint32_t name_off = (uint32_t)l->names.len;
	int err;

	if (!v)
		return -ENOMEM;
	l->v = v;
	err = text_append_str(&l->names, name);
	if (!err && module[0]) {
		err = text_append_str(&l->names, " [");
		if (!err)
			err = text_append_str(&l->names, module);
		if (!err)
			err = text_append_str(&l->names, "]");
	}
	if (!err)
		err = text_append(&l->names, "", 1); /* the NUL between names */
	if (err)
		return err;
	l->v[l->n].addr = addr;
	l->v[l->n].name_off = name_off;
	l->v[l->n].seq = l->n;
	l->n++;
	if (addr)
		l->any_nonzero = true;
	return 0;
}

/* "ffffffff81000000 T _stext" or "ffffffffc0a01000 t foo\t[ext4]" */
static int parse_line(struct symbol_list *l, char *line)
{
	char *p = line, *name, *module = "";
	unsigned long long addr = strtoull(p, &p, 16);
	char type;

	while (*p == ' ')
		p++;
	type = *p++;
	if (!is_text_type(type))
		return 0;
	while (*p == ' ')
		p++;
	name = p;
	p += strcspn(p, " \t\n");
	if (*p == '\t' || *p == ' ') {
		*p++ = '\0';
		p += strspn(p, " \t");
		if (*p == '[') {
			module = p + 1;
			module[strcspn(module, "]\n")] = '\0';
		}
	} else {
		*p = '\0';
	}
	return *name ? add_symbol(l, addr, name, module) : 0;
}

static int compare_raw(const void *a, const void *b)
{
	const struct raw_symbol *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sorted, one symbol per address, sized up to the next one. */
static int build_symbols(struct pc_elf_module *m, struct symbol_list *l)
{
	uint32_t out = 0;

	if (l->n)   /* qsort of a NULL array is undefined, even empty */
		qsort(l->v, l->n, sizeof(*l->v), compare_raw);
	m->syms = calloc(l->n ? l->n : 1, sizeof(*m->syms));
	if (!m->syms)
		return -ENOMEM;
	for (uint32_t i = 0; i < l->n; i++) {
		if (out && m->syms[out - 1].addr == l->v[i].addr)
			continue;
		m->syms[out].addr = l->v[i].addr;
		m->syms[out].name_off = l->v[i].name_off;
		out++;
	}
	for (uint32_t i = 0; i + 1 < out; i++) {
		uint64_t gap = m->syms[i + 1].addr - m->syms[i].addr;

		m->syms[i].size = gap > MAX_SYMBOL_SIZE ? MAX_SYMBOL_SIZE : (uint32_t)gap;
	}
	m->nsyms = out;
	return 0;
}

/* Walks the ELF notes of the running kernel for NT_GNU_BUILD_ID. */
static void read_kernel_build_id(struct pc_elf_module *m)
{
	char *notes;
	long len = read_whole_file("/sys/kernel/notes", &notes, 1 << 16);
	size_t pos = 0;

	if (len < 0)
		return;
	while (pos + 12 <= (size_t)len) {
		uint32_t namesz, descsz, type;
		size_t name_at = pos + 12, desc_at;

		memcpy(&namesz, notes + pos, 4);
		memcpy(&descsz, notes + pos + 4, 4);
		memcpy(&type, notes + pos + 8, 4);
		desc_at = name_at + ((namesz + 3) & ~3u);
		if (desc_at + descsz > (size_t)len)
			break;
		if (type == NT_GNU_BUILD_ID_TYPE && namesz == 4 &&
		    memcmp(notes + name_at, "GNU", 4) == 0 && descsz <= PC_BUILD_ID_MAX) {
			memcpy(m->build_id, notes + desc_at, descsz);
			m->build_id_len = (uint8_t)descsz;
			break;
		}
		pos = desc_at + ((descsz + 3) & ~3u);
	}
	free(notes);
}

static FILE *preopened;

void kallsyms_preopen(void)
{
	if (!preopened)
		preopened = fopen("/proc/kallsyms", "re");
}

/* The preopened file (read once), else a fresh one. */
static FILE *open_kallsyms(void)
{
	FILE *f = preopened;

	preopened = NULL;
	return f ? f : fopen("/proc/kallsyms", "re");
}

int kallsyms_load(struct pc_elf_module *m, bool *hidden)
{
	struct symbol_list l = { 0 };
	char *line = NULL;
	size_t cap = 0;
	int err = 0;
	FILE *f;

	memset(m, 0, sizeof(*m));
	*hidden = false;
	m->kind = PC_MODULE_KERNEL;
	m->path = strdup("[kernel.kallsyms]");
	if (!m->path)
		return -ENOMEM;
	read_kernel_build_id(m);
	f = open_kallsyms();
	if (!f)
		return -errno;
	while (!err && getline(&line, &cap, f) > 0)
		err = parse_line(&l, line);
	free(line);
	fclose(f);
	if (!err && l.n && !l.any_nonzero) {
		*hidden = true;
		l.n = 0;
	}
	if (!err)
		err = build_symbols(m, &l);
	free(l.v);
	if (err) {
		text_free(&l.names);
		return err;
	}
	m->strtab = l.names.s; /* ownership moves to m */
	m->strtab_len = l.names.len;
	return 0;
}
