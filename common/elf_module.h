/* elf_module.h - what perfcap needs from an ELF file, and its capture form.
 *
 * The recorder reads each binary that samples hit (build-id, load segments,
 * function symbols) and stores the symbols that cover the hit addresses in a
 * PC_REC_MODULE record, so a capture names functions on a machine where the
 * binaries do not exist. The analyzer reads those records back, and reads
 * local ELF/debug files (found by build-id) through the same structure.
 */
#ifndef PERFCAP_ELF_MODULE_H
#define PERFCAP_ELF_MODULE_H

#include <stddef.h>
#include <stdint.h>
#include "gopclntab.h"
#include "perfcap_format.h"

struct pc_elf_module {
	uint16_t kind;                 /* enum pc_module_kind */
	uint32_t pid;                  /* PC_MODULE_PERFMAP: its process */
	uint16_t e_type;               /* ET_EXEC, ET_DYN ... (0 if unknown) */
	uint8_t  build_id_len;         /* 0 if none */
	uint8_t  build_id[PC_BUILD_ID_MAX];
	int      has_debug_info;       /* the file has .debug_info */
	char    *path;                 /* malloc'd; may be NULL */
	struct pc_segment *segs;       /* PT_LOAD segments, malloc'd */
	uint32_t nsegs;
	struct pc_symbol  *syms;       /* functions, sorted by addr, deduplicated */
	uint32_t nsyms;
	char    *strtab;               /* names, NUL-terminated, malloc'd */
	size_t   strtab_len;
	int      has_symtab;           /* the file has a .symtab (not just .dynsym) */
	int      go_pclntab;           /* 1: functions named from a Go pclntab;
					* -1: one was found but refused */
	char     go_pclntab_note[112]; /* the layout read, or why it was refused */
};

/* Reads build-id, PT_LOAD segments and function symbols (STT_FUNC and
 * STT_GNU_IFUNC from .symtab and .dynsym, merged) from an open ELF file.
 * A file without a .symtab (or without function symbols in it) that holds
 * a Go pclntab (section .gopclntab or .data.rel.ro.gopclntab, or found by
 * its header inside .data.rel.ro/.rodata/.noptrdata or a read-only load
 * segment) gets the functions of that table too (common/gopclntab.h): a
 * stripped Go binary is named like an unstripped one. A malformed table
 * does not fail the load: go_pclntab says it was refused and why.
 * Returns 0 or -errno; errbuf gets a one-line reason. */
int pc_elf_module_load_fd(struct pc_elf_module *m, int fd, const char *path,
			  char *errbuf, size_t errlen);
int pc_elf_module_load(struct pc_elf_module *m, const char *path,
		       char *errbuf, size_t errlen);

/* Reads only the GNU build-id note. Returns its length (1..20), 0 if the
 * file has none, or -errno. */
int pc_elf_read_build_id_fd(int fd, uint8_t out[PC_BUILD_ID_MAX]);

/* The ELF virtual address of the function named name (any alias, in
 * .symtab or .dynsym). 0, -ENOENT, or -EINVAL (not ELF). */
int pc_elf_function_addr_fd(int fd, const char *name, uint64_t *addr);

/* 1 if the ELF file is a shared library (ET_DYN with a DT_SONAME: libc,
 * libpython), 0 if an executable (ET_EXEC, or a PIE without a SONAME),
 * -EINVAL if not ELF. */
int pc_elf_is_library_fd(int fd);

/* 1 if the ELF file is a Go binary (a .go.buildinfo section or the Go
 * build-id note, kept by `-ldflags=-s -w`), 0 if not, -EINVAL if not ELF. */
int pc_elf_is_go_fd(int fd);

/* The sites of the SDT probe provider:name (the .note.stapsdt notes of a
 * 64-bit ELF file): their ELF virtual addresses, at most max into vaddrs.
 * Returns how many sites there are (0: no such probe), or -EINVAL (not
 * ELF). Reading only: libbpf attaches USDT probes itself. */
int pc_elf_sdt_sites_fd(int fd, const char *provider, const char *name, uint64_t *vaddrs,
			int max);

/* Translates a file offset into an ELF virtual address using the load
 * segments. Returns 0, or -ENOENT if no segment covers the offset. */
int pc_elf_offset_to_vaddr(const struct pc_elf_module *m, uint64_t offset,
			   uint64_t *vaddr);

/* The symbol covering addr: a symbol with size covers [addr, addr+size);
 * one with size 0 extends to the next symbol. NULL if none. */
const struct pc_symbol *pc_elf_module_lookup(const struct pc_elf_module *m,
					     uint64_t addr);
static inline const char *pc_elf_symbol_name(const struct pc_elf_module *m,
					     const struct pc_symbol *s)
{
	return s->name_off < m->strtab_len ? m->strtab + s->name_off : "";
}

void pc_elf_module_free(struct pc_elf_module *m);

/* Appends a PC_REC_MODULE record to b. If addrs is non-NULL only the
 * symbols covering those addresses (ELF vaddrs, or kernel addresses) are
 * stored, each once; otherwise all of them. Returns 0 or -ENOMEM. */
int pc_buf_add_module(struct pc_buf *b, const struct pc_elf_module *m,
		      const uint64_t *addrs, size_t naddrs);

/* Parses a PC_REC_MODULE record into m (which owns copies). Returns 0 or
 * -EINVAL for a malformed record (counts inconsistent with the size). */
int pc_elf_module_from_rec(struct pc_elf_module *m, const struct pc_rec *rec);

/* A Go binary's pclntab, copied out of the file, and its functions (with
 * their SP-delta tables: common/gopclntab.h) for unwinding stripped Go code
 * (common/gopclntab_cfi.c). */
struct pc_go_pclntab {
	uint8_t *data;
	size_t len;
	struct pc_gofunc *funcs;  /* sorted by entry; point into data */
	size_t nfuncs;
	uint8_t quantum;
};

/* 0, -ENOENT (no pclntab), -EINVAL (not ELF, or the table is refused),
 * -ENOMEM. */
int pc_elf_go_pclntab_fd(int fd, struct pc_go_pclntab *g);
void pc_elf_go_pclntab_free(struct pc_go_pclntab *g);

#endif /* PERFCAP_ELF_MODULE_H */
