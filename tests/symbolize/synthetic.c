/* synthetic.c - in-memory modules with known layouts (see synthetic.h). */
#include <string.h>

#include "synthetic.h"

static char kernel_strtab[] = "k_first\0k_mid\0k_last";
static struct pc_symbol kernel_syms[] = {
	{ KBASE, 0x100, 0 },
	{ KBASE + 0x100, 0, 8 },
	{ KBASE + 0x200, 0x50, 14 },
};

void synthetic_kernel_module(struct pc_elf_module *m)
{
	memset(m, 0, sizeof(*m));
	m->kind = PC_MODULE_KERNEL;
	m->syms = kernel_syms;
	m->nsyms = 3;
	m->strtab = kernel_strtab;
	m->strtab_len = sizeof(kernel_strtab);
}

static char elf_strtab[] = "alpha\0beta\0gamma";
static char elf_path[] = "/usr/bin/synthetic";
static struct pc_symbol elf_syms[] = {
	{ 0x1100, 0x40, 0 },
	{ 0x1140, 0, 6 },
	{ 0x1200, 0x10, 11 },
};
static struct pc_segment elf_segs[] = {
	{ 0x0, 0x0, 0x800, 0x800 },
	{ 0x1000, 0x1000, 0x400, 0x400 },
};

void synthetic_elf_module(struct pc_elf_module *m)
{
	memset(m, 0, sizeof(*m));
	m->kind = PC_MODULE_ELF;
	m->build_id_len = 20;
	memset(m->build_id, 0xab, 20);
	m->path = elf_path;
	m->segs = elf_segs;
	m->nsegs = 2;
	m->syms = elf_syms;
	m->nsyms = 3;
	m->strtab = elf_strtab;
	m->strtab_len = sizeof(elf_strtab);
}
