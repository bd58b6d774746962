/* cfi_image.c - a module's CFI from its captured tables: builds a minimal
 * in-memory ELF file (x86-64, no program headers) whose .eh_frame and
 * .eh_frame_hdr sections sit at their original sh_addr, so the tables'
 * pc-relative pointers keep their meaning, and opens it with libelf's
 * elf_memory and libdw's dwarf_getcfi_elf. A .debug_frame (its addresses
 * are absolute: Go's binaries, code built with -fno-asynchronous-unwind-
 * tables -g) becomes the image's only debug section, read through
 * dwarf_begin_elf and dwarf_getcfi; the Dwarf handle then owns the CFI. */
#include <elf.h>
#include <elfutils/libdw.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "unwind_internal.h"

static const char shstrtab[] = "\0.eh_frame\0.eh_frame_hdr\0.shstrtab\0.debug_frame";
enum { NAME_EH = 1, NAME_HDR = 11, NAME_SHSTR = 25, NAME_DEBUG = 35 };

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static void fill_ehdr(Elf64_Ehdr *eh, size_t shoff, unsigned shnum)
{
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(*eh);
	eh->e_shoff = shoff;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = (Elf64_Half)shnum;
	eh->e_shstrndx = (Elf64_Half)(shnum - 1);
}

static void fill_shdr(Elf64_Shdr *sh, unsigned name, uint64_t addr, size_t off, size_t len)
{
	sh->sh_name = name;
	sh->sh_type = SHT_PROGBITS;
	sh->sh_flags = name == NAME_SHSTR || name == NAME_DEBUG ? 0 : SHF_ALLOC;
	sh->sh_addr = addr;
	sh->sh_offset = off;
	sh->sh_size = len;
	sh->sh_addralign = 1;
	if (name == NAME_SHSTR)
		sh->sh_type = SHT_STRTAB;
}

/* [ehdr][eh_frame][eh_frame_hdr][shstrtab][shdrs: null, eh, (hdr), shstr] */
static uint8_t *build_image(const struct pc_unwind_table *t, int use_hdr, size_t *len_out)
{
	uint32_t hdr_len = use_hdr ? t->hdr_len : 0;
	unsigned shnum = hdr_len ? 4 : 3;
	size_t eh_off = sizeof(Elf64_Ehdr);
	size_t hdr_off = align8(eh_off + t->table_len);
	size_t str_off = align8(hdr_off + hdr_len);
	size_t sh_off = align8(str_off + sizeof(shstrtab));
	size_t len = sh_off + shnum * sizeof(Elf64_Shdr);
	uint8_t *img = calloc(1, len);
	Elf64_Shdr *sh;

	if (!img)
		return NULL;
	fill_ehdr((Elf64_Ehdr *)img, sh_off, shnum);
	memcpy(img + eh_off, t->table, t->table_len);
	if (hdr_len)
		memcpy(img + hdr_off, t->hdr, hdr_len);
	memcpy(img + str_off, shstrtab, sizeof(shstrtab));
	sh = (Elf64_Shdr *)(img + sh_off);
	fill_shdr(&sh[1], t->kind == PC_UNWIND_DEBUG_FRAME ? NAME_DEBUG : NAME_EH,
		  t->kind == PC_UNWIND_DEBUG_FRAME ? 0 : t->table_addr, eh_off, t->table_len);
	if (hdr_len)
		fill_shdr(&sh[2], NAME_HDR, t->hdr_addr, hdr_off, hdr_len);
	fill_shdr(&sh[shnum - 1], NAME_SHSTR, 0, str_off, sizeof(shstrtab));
	*len_out = len;
	return img;
}

struct unwind_cfi *unwind_cfi_new(const struct pc_unwind_table *t, const char **why)
{
	struct unwind_cfi *c;
	int use_hdr;

	*why = NULL;
	if ((t->kind != PC_UNWIND_EH_FRAME && t->kind != PC_UNWIND_DEBUG_FRAME) || !t->table_len) {
		*why = "no call frame table";
		return NULL;
	}
	if (cfi_check(t, &use_hdr, why) < 0)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (c)
		c->uses_header = use_hdr;
	if (!c || !(c->image = build_image(t, use_hdr, &c->image_len))) {
		*why = "out of memory";
		free(c);
		return NULL;
	}
	elf_version(EV_CURRENT);
	c->elf = elf_memory(c->image, c->image_len);
	if (c->elf && t->kind == PC_UNWIND_DEBUG_FRAME) {
		c->dwarf = dwarf_begin_elf(c->elf, DWARF_C_READ, NULL);
		c->cfi = c->dwarf ? dwarf_getcfi(c->dwarf) : NULL;
	} else if (c->elf) {
		c->cfi = dwarf_getcfi_elf(c->elf);
	}
	if (!c->cfi) {
		*why = t->kind == PC_UNWIND_DEBUG_FRAME ? "libdw cannot read the .debug_frame"
							: "libdw cannot read the .eh_frame";
		unwind_cfi_free(c);
		return NULL;
	}
	return c;
}

void unwind_cfi_chain(struct unwind_cfi *c, struct unwind_cfi *next)
{
	if (!c || !next)
		return;
	frame_rows_free(c);              /* rows made without next: forget them */
	while (c->next) {
		c = c->next;
		frame_rows_free(c);
	}
	c->next = next;
}

void unwind_cfi_free(struct unwind_cfi *c)
{
	if (!c)
		return;
	unwind_cfi_free(c->next);
	frame_rows_free(c);              /* before the CFI their rules point into */
	if (c->dwarf)
		dwarf_end(c->dwarf);           /* and the CFI it owns */
	else if (c->cfi)
		dwarf_cfi_end(c->cfi);
	if (c->elf)
		elf_end(c->elf);
	free(c->image);
	free(c);
}

int unwind_cfi_uses_header(const struct unwind_cfi *c)
{
	return c && c->uses_header;
}
