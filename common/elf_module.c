/* elf_module.c - reads what perfcap needs from an ELF file (build-id, load
 * segments, function symbols) and converts it to and from the capture's
 * PC_REC_MODULE record.
 *
 * Symbols come from .symtab and .dynsym merged, sorted by address and
 * deduplicated with a fixed preference order, so the same file always gives
 * the same table. A Go binary without .symtab adds the functions of its
 * pclntab (the runtime's function table, which stripping keeps). Parsing a
 * record trusts nothing but rec->size: every count and offset is checked
 * against it before anything is read.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf_module.h"
#include "gopclntab.h"
#include "safe_file.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

/* A function symbol as found in the file, before deduplication. The name
 * points into libelf's data and is valid while the Elf handle is open. */
struct sym_candidate {
	uint64_t    addr;
	uint64_t    size;
	const char *name;
	uint8_t     binding;
};

static void set_error(char *errbuf, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errbuf == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(errbuf, errlen, fmt, ap);
	va_end(ap);
}

static int elf_library_init(void)
{
	return elf_version(EV_CURRENT) == EV_NONE ? -ENOSYS : 0;
}

/* ---- build-id --------------------------------------------------------- */

/* The length of the GNU build-id in a block of notes, copied to out; 0
 * when there is none (or no block). */
static int build_id_from_notes(Elf_Data *data, uint8_t out[PC_BUILD_ID_MAX])
{
	GElf_Nhdr nhdr;
	size_t offset = 0, name_off, desc_off, next;
	const uint8_t *bytes = data ? data->d_buf : NULL;

	while (bytes && (next = gelf_getnote(data, offset, &nhdr, &name_off,
				    &desc_off)) > 0) {
		if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 &&
		    memcmp(bytes + name_off, "GNU", 4) == 0 &&
		    nhdr.n_descsz > 0) {
			size_t len = nhdr.n_descsz;

			if (len > PC_BUILD_ID_MAX)
				len = PC_BUILD_ID_MAX;
			memcpy(out, bytes + desc_off, len);
			return (int)len;
		}
		offset = next;
	}
	return 0;
}

static int build_id_from_sections(Elf *elf, uint8_t out[PC_BUILD_ID_MAX])
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		int len;

		if (gelf_getshdr(scn, &shdr) == NULL || shdr.sh_type != SHT_NOTE)
			continue;
		len = build_id_from_notes(elf_getdata(scn, NULL), out);
		if (len > 0)
			return len;
	}
	return 0;
}

static int build_id_from_segments(Elf *elf, uint8_t out[PC_BUILD_ID_MAX])
{
	size_t nphdrs, i;
	GElf_Phdr phdr;

	if (elf_getphdrnum(elf, &nphdrs) != 0)
		return 0;
	for (i = 0; i < nphdrs; i++) {
		Elf_Data *data;
		Elf_Type type;
		int len;

		if (gelf_getphdr(elf, (int)i, &phdr) == NULL ||
		    phdr.p_type != PT_NOTE)
			continue;
		type = phdr.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR;
		data = elf_getdata_rawchunk(elf, (int64_t)phdr.p_offset,
					    phdr.p_filesz, type);
		len = build_id_from_notes(data, out);
		if (len > 0)
			return len;
	}
	return 0;
}

/* Sections first: a separate debug file keeps its note sections but its
 * program headers may describe data that is not in the file. */
static int build_id_from_elf(Elf *elf, uint8_t out[PC_BUILD_ID_MAX])
{
	int len = build_id_from_sections(elf, out);

	if (len == 0)
		len = build_id_from_segments(elf, out);
	return len;
}

/* The ELF file open at fd, read through a private mapping. 0 and *out
 * (the caller ends it), -ENOSYS without libelf, -EINVAL for a file that
 * is not ELF. */
static int open_elf(int fd, Elf **out)
{
	if (elf_library_init() != 0)
		return -ENOSYS;
	*out = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (*out == NULL)
		return -EINVAL;
	if (elf_kind(*out) != ELF_K_ELF) {
		elf_end(*out);
		return -EINVAL;
	}
	return 0;
}

int pc_elf_read_build_id_fd(int fd, uint8_t out[PC_BUILD_ID_MAX])
{
	Elf *elf;
	int len = open_elf(fd, &elf);

	if (len)
		return len;
	len = build_id_from_elf(elf, out);
	elf_end(elf);
	return len;
}

/* ---- sections and segments -------------------------------------------- */

static const char *section_name(Elf *elf, const GElf_Shdr *shdr)
{
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	return elf_strptr(elf, shstrndx, shdr->sh_name);
}

static int is_debug_info_section(Elf *elf, const GElf_Shdr *shdr)
{
	const char *name;

	if (shdr->sh_type == SHT_NOBITS || shdr->sh_size == 0)
		return 0;
	name = section_name(elf, shdr);
	return name != NULL && (strcmp(name, ".debug_info") == 0 ||
				strcmp(name, ".zdebug_info") == 0);
}

static void read_section_flags(Elf *elf, struct pc_elf_module *m)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (gelf_getshdr(scn, &shdr) == NULL)
			continue;
		if (shdr.sh_type == SHT_SYMTAB && shdr.sh_entsize > 0 &&
		    shdr.sh_size > shdr.sh_entsize)
			m->has_symtab = 1;
		if (is_debug_info_section(elf, &shdr))
			m->has_debug_info = 1;
	}
}

static int read_segments(Elf *elf, struct pc_elf_module *m)
{
	size_t nphdrs, i;
	GElf_Phdr phdr;

	if (elf_getphdrnum(elf, &nphdrs) != 0 || nphdrs == 0)
		return 0;
	m->segs = calloc(nphdrs, sizeof(*m->segs));
	if (m->segs == NULL)
		return -ENOMEM;
	for (i = 0; i < nphdrs; i++) {
		struct pc_segment *seg;

		if (gelf_getphdr(elf, (int)i, &phdr) == NULL ||
		    phdr.p_type != PT_LOAD)
			continue;
		seg = &m->segs[m->nsegs++];
		seg->offset = phdr.p_offset;
		seg->vaddr = phdr.p_vaddr;
		seg->filesz = phdr.p_filesz;
		seg->memsz = phdr.p_memsz;
	}
	return 0;
}

/* ---- symbols ---------------------------------------------------------- */

static int is_function_symbol(const GElf_Sym *sym)
{
	int type = GELF_ST_TYPE(sym->st_info);

	return (type == STT_FUNC || type == STT_GNU_IFUNC) &&
	       sym->st_shndx != SHN_UNDEF && sym->st_value != 0;
}

static int is_symbol_table(const GElf_Shdr *shdr)
{
	return shdr->sh_type == SHT_SYMTAB || shdr->sh_type == SHT_DYNSYM;
}

/* Upper bound of the symbols in all symbol tables, to size one array. */
static size_t count_symbol_entries(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	size_t total = 0;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (gelf_getshdr(scn, &shdr) == NULL || !is_symbol_table(&shdr))
			continue;
		if (shdr.sh_entsize > 0)
			total += shdr.sh_size / shdr.sh_entsize;
	}
	return total;
}

static size_t collect_from_table(Elf *elf, Elf_Scn *scn, const GElf_Shdr *shdr,
				 struct sym_candidate *out, size_t room)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	GElf_Sym sym;
	size_t n = 0;
	int i;

	if (data == NULL || data->d_buf == NULL)
		return 0;
	for (i = 0; n < room && gelf_getsym(data, i, &sym) != NULL; i++) {
		const char *name;

		if (!is_function_symbol(&sym))
			continue;
		name = elf_strptr(elf, shdr->sh_link, sym.st_name);
		if (name == NULL || name[0] == '\0')
			continue;
		out[n].addr = sym.st_value;
		out[n].size = sym.st_size;
		out[n].name = name;
		out[n].binding = GELF_ST_BIND(sym.st_info);
		n++;
	}
	return n;
}

/* The address of a function named name in any symbol table of elf: every
 * alias counts (the loaded module keeps one name per address). 0 or
 * -ENOENT. */
static int find_function(Elf *elf, const char *name, uint64_t *addr)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	GElf_Sym sym;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		Elf_Data *data;

		if (gelf_getshdr(scn, &shdr) == NULL || !is_symbol_table(&shdr) ||
		    (data = elf_getdata(scn, NULL)) == NULL || data->d_buf == NULL)
			continue;
		for (int i = 0; gelf_getsym(data, i, &sym) != NULL; i++) {
			const char *sname;

			if (!is_function_symbol(&sym))
				continue;
			sname = elf_strptr(elf, shdr.sh_link, sym.st_name);
			if (sname && strcmp(sname, name) == 0) {
				*addr = sym.st_value;
				return 0;
			}
		}
	}
	return -ENOENT;
}

int pc_elf_function_addr_fd(int fd, const char *name, uint64_t *addr)
{
	Elf *elf;
	int err = open_elf(fd, &elf);

	if (err)
		return err;
	err = find_function(elf, name, addr);
	elf_end(elf);
	return err;
}

/* ---- shared library or executable ------------------------------------- */

static int has_soname(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	GElf_Dyn dyn;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		Elf_Data *data;

		if (gelf_getshdr(scn, &shdr) == NULL || shdr.sh_type != SHT_DYNAMIC ||
		    (data = elf_getdata(scn, NULL)) == NULL)
			continue;
		for (int i = 0; gelf_getdyn(data, i, &dyn) != NULL; i++) {
			if (dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag == DT_SONAME)
				return 1;
		}
	}
	return 0;
}

int pc_elf_is_library_fd(int fd)
{
	GElf_Ehdr ehdr;
	Elf *elf;
	int rc = open_elf(fd, &elf);

	if (rc)
		return rc;
	if (gelf_getehdr(elf, &ehdr) == NULL)
		rc = -EINVAL;
	else
		rc = ehdr.e_type == ET_DYN && has_soname(elf);
	elf_end(elf);
	return rc;
}

static int has_go_section(Elf *elf);

int pc_elf_is_go_fd(int fd)
{
	Elf *elf;
	int rc = open_elf(fd, &elf);

	if (rc)
		return rc;
	rc = has_go_section(elf);
	elf_end(elf);
	return rc;
}

/* ---- SDT notes (for the recorder's META; libbpf attaches USDT) ------- */

#define NT_STAPSDT 3

/* The .stapsdt.base section's address, 0 if none. */
static uint64_t stapsdt_base(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *name;

		if (gelf_getshdr(scn, &shdr) != NULL && (name = section_name(elf, &shdr)) &&
		    strcmp(name, ".stapsdt.base") == 0)
			return shdr.sh_addr;
	}
	return 0;
}

/* One note's descriptor: pc, base, semaphore (3 x u64), then provider,
 * name and argument strings. 1 and *pc if it is provider:name. */
static int sdt_note_matches(const char *desc, size_t len, const char *provider,
			    const char *name, uint64_t base_addr, uint64_t *pc)
{
	uint64_t note_pc, note_base;
	const char *prov = desc + 24, *end = desc + len, *nm;

	if (len < 24 + 4)
		return 0;
	memcpy(&note_pc, desc, 8);
	memcpy(&note_base, desc + 8, 8);
	nm = memchr(prov, '\0', (size_t)(end - prov));
	if (!nm)
		return 0;
	nm++;
	if (!memchr(nm, '\0', (size_t)(end - nm)))
		return 0;
	if (strcmp(prov, provider) != 0 || strcmp(nm, name) != 0)
		return 0;
	/* prelinked files: the note's base says where .stapsdt.base was */
	*pc = base_addr && note_base ? note_pc + base_addr - note_base : note_pc;
	return 1;
}

static int sdt_sites(Elf *elf, const char *provider, const char *name, uint64_t *vaddrs,
		     int max)
{
	uint64_t base_addr = stapsdt_base(elf);
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	int n = 0;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		Elf_Data *data;
		GElf_Nhdr nhdr;
		size_t off = 0, name_off, desc_off;

		if (gelf_getshdr(scn, &shdr) == NULL || shdr.sh_type != SHT_NOTE ||
		    (data = elf_getdata(scn, NULL)) == NULL || data->d_buf == NULL)
			continue;
		while ((off = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
			const char *d = data->d_buf;
			uint64_t pc;

			if (nhdr.n_type != NT_STAPSDT || nhdr.n_namesz != 8 ||
			    memcmp(d + name_off, "stapsdt", 8) != 0 ||
			    !sdt_note_matches(d + desc_off, nhdr.n_descsz, provider, name,
					      base_addr, &pc))
				continue;
			if (n < max)
				vaddrs[n] = pc;
			n++;
		}
	}
	return n;
}

int pc_elf_sdt_sites_fd(int fd, const char *provider, const char *name, uint64_t *vaddrs,
			int max)
{
	Elf *elf;
	int n = open_elf(fd, &elf);

	if (n)
		return n;
	n = gelf_getclass(elf) == ELFCLASS64 ? sdt_sites(elf, provider, name, vaddrs, max)
					     : -EINVAL;
	elf_end(elf);
	return n;
}

/* ---- Go pclntab (stripped Go binaries) -------------------------------- */

/* A region of the file that holds, or may hold, a pclntab. */
struct go_region {
	const uint8_t *data;
	size_t   len;
	uint64_t vaddr;
};

#ifndef R_AARCH64_RELATIVE
#define R_AARCH64_RELATIVE 1027
#endif

/* The addend of the RELATIVE relocation at vaddr (a position-independent
 * Go binary linked externally leaves pcHeader.textStart 0 in the file and
 * has the dynamic linker fill it); 0 if none. */
static uint64_t relative_reloc_at(Elf *elf, uint64_t vaddr)
{
	Elf_Scn *scn = NULL;
	GElf_Ehdr ehdr;
	GElf_Shdr shdr;
	GElf_Rela rela;
	uint32_t relative;

	if (gelf_getehdr(elf, &ehdr) == NULL)
		return 0;
	relative = ehdr.e_machine == EM_AARCH64 ? R_AARCH64_RELATIVE : R_X86_64_RELATIVE;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		Elf_Data *data;

		if (gelf_getshdr(scn, &shdr) == NULL || shdr.sh_type != SHT_RELA ||
		    (data = elf_getdata(scn, NULL)) == NULL || data->d_buf == NULL)
			continue;
		for (int i = 0; gelf_getrela(data, i, &rela) != NULL; i++) {
			if (rela.r_offset == vaddr &&
			    GELF_R_TYPE(rela.r_info) == relative)
				return (uint64_t)rela.r_addend;
		}
	}
	return 0;
}

/* Parses the pclntab at the start of r (1.18+ layouts: a textStart of 0
 * comes from its relocation). 0, or the parser's error. */
/* pcHeader.textStart when the file leaves it 0 (the third pointer-sized
 * field after 8 bytes): its relocation's addend; else 0. */
static uint64_t go_text_start(Elf *elf, const struct go_region *r)
{
	static const uint8_t zero[8];
	uint64_t field;

	if (r->len >= 16 && (r->data[7] == 4 || r->data[7] == 8)) {
		field = 8 + 2 * (uint64_t)r->data[7];
		if (field + r->data[7] <= r->len &&
		    memcmp(r->data + field, zero, r->data[7]) == 0)
			return relative_reloc_at(elf, r->vaddr + field);
	}
	return 0;
}

static int parse_go_region(Elf *elf, const struct go_region *r, struct pc_gofunc **funcs,
			   size_t *n, struct pc_gopclntab_info *info, char *why,
			   size_t whylen)
{
	return pc_gopclntab_parse(r->data, r->len, go_text_start(elf, r), funcs, n, info, why,
				  whylen);
}

static int region_of_section(Elf_Scn *scn, const GElf_Shdr *shdr, struct go_region *r)
{
	Elf_Data *data;

	if (shdr->sh_type == SHT_NOBITS || shdr->sh_size == 0 ||
	    (data = elf_getdata(scn, NULL)) == NULL || data->d_buf == NULL)
		return 0;
	r->data = data->d_buf;
	r->len = data->d_size;
	r->vaddr = shdr->sh_addr;
	return 1;
}

/* The section the Go linker names (.data.rel.ro.gopclntab in a PIE). */
static int named_pclntab(Elf *elf, struct go_region *r)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *name;

		if (gelf_getshdr(scn, &shdr) == NULL ||
		    (name = section_name(elf, &shdr)) == NULL)
			continue;
		if ((strcmp(name, ".gopclntab") == 0 ||
		     strcmp(name, ".data.rel.ro.gopclntab") == 0) &&
		    region_of_section(scn, &shdr, r))
			return 1;
	}
	return 0;
}

/* Headers parsed per file when scanning: a hostile file full of them must
 * not make the load quadratic. */
#define GO_SCAN_MAX_TRIES 16

/* Looks for a pclntab header at every 8-byte aligned address of r and
 * keeps the first that parses (an external linker merges the Go linker's
 * section into .data.rel.ro). 1 if found; *tries counts the parses. */
static int scan_region(Elf *elf, const struct go_region *r, struct pc_gofunc **funcs,
		       size_t *n, struct pc_gopclntab_info *info, int *tries,
		       struct go_region *found)
{
	size_t off = (size_t)((8 - (r->vaddr & 7)) & 7);

	for (; off + 16 <= r->len && *tries < GO_SCAN_MAX_TRIES; off += 8) {
		struct go_region at = { r->data + off, r->len - off, r->vaddr + off };

		if (!pc_gopclntab_header_ok(at.data, at.len))
			continue;
		(*tries)++;
		if (parse_go_region(elf, &at, funcs, n, info, NULL, 0) == 0) {
			*found = at;
			return 1;
		}
	}
	return 0;
}

/* A Go binary has .go.buildinfo (`go version -m` reads it) or the Go
 * build-id note; only those are scanned (not every stripped C library). */
static int has_go_section(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *name;

		if (gelf_getshdr(scn, &shdr) != NULL &&
		    (name = section_name(elf, &shdr)) != NULL &&
		    (strcmp(name, ".go.buildinfo") == 0 ||
		     strcmp(name, ".note.go.buildid") == 0))
			return 1;
	}
	return 0;
}

static int is_scanned_section(const char *name)
{
	return strcmp(name, ".data.rel.ro") == 0 || strcmp(name, ".rodata") == 0 ||
	       strcmp(name, ".noptrdata") == 0;
}

/* Without the named section: in a Go binary, the sections an external
 * linker merges it into, or, in a file without section headers, the
 * non-executable load segments. */
static int scan_for_pclntab(Elf *elf, struct pc_gofunc **funcs, size_t *n,
			    struct pc_gopclntab_info *info, struct go_region *found)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	GElf_Phdr phdr;
	size_t nsections = 0, nphdrs;
	int tries = 0;

	if (elf_getshdrnum(elf, &nsections) == 0 && nsections > 1) {
		if (!has_go_section(elf))
			return 0;
		while ((scn = elf_nextscn(elf, scn)) != NULL) {
			struct go_region r;
			const char *name;

			if (gelf_getshdr(scn, &shdr) != NULL &&
			    (name = section_name(elf, &shdr)) != NULL &&
			    is_scanned_section(name) && region_of_section(scn, &shdr, &r) &&
			    scan_region(elf, &r, funcs, n, info, &tries, found))
				return 1;
		}
		return 0;
	}
	if (elf_getphdrnum(elf, &nphdrs) != 0)
		return 0;
	for (size_t i = 0; i < nphdrs; i++) {
		struct go_region r;
		Elf_Data *data;

		if (gelf_getphdr(elf, (int)i, &phdr) == NULL || phdr.p_type != PT_LOAD ||
		    (phdr.p_flags & PF_X) || phdr.p_filesz == 0 ||
		    (data = elf_getdata_rawchunk(elf, (int64_t)phdr.p_offset, phdr.p_filesz,
						 ELF_T_BYTE)) == NULL)
			continue;
		r.data = data->d_buf;
		r.len = data->d_size;
		r.vaddr = phdr.p_vaddr;
		if (scan_region(elf, &r, funcs, n, info, &tries, found))
			return 1;
	}
	return 0;
}

/* The functions of the file's Go pclntab, if it has one that holds
 * together; m->go_pclntab and its note say what happened. */
/* The pclntab of a Go binary: parsed into *funcs, its region in *r. 1
 * when found and read, 0 when there is none, -1 when refused (why). */
static int find_go_functions(Elf *elf, struct go_region *r, struct pc_gofunc **funcs,
			     size_t *n, struct pc_gopclntab_info *info, char *why,
			     size_t whylen)
{
	*funcs = NULL;
	*n = 0;
	if (named_pclntab(elf, r))
		return parse_go_region(elf, r, funcs, n, info, why, whylen) == 0 ? 1 : -1;
	return scan_for_pclntab(elf, funcs, n, info, r);
}

static void read_go_functions(Elf *elf, struct pc_elf_module *m, struct pc_gofunc **funcs,
			      size_t *n)
{
	struct pc_gopclntab_info info;
	struct go_region r;
	char why[80] = "";
	int found = find_go_functions(elf, &r, funcs, n, &info, why, sizeof(why));

	if (found < 0) {
		m->go_pclntab = -1;
		snprintf(m->go_pclntab_note, sizeof(m->go_pclntab_note),
			 "Go pclntab refused: %s", why);
		return;
	}
	if (!found)
		return;
	m->go_pclntab = 1;
	snprintf(m->go_pclntab_note, sizeof(m->go_pclntab_note),
		 "Go %s+ pclntab (magic 0x%08x): %zu functions, %u unnamed", info.version,
		 info.magic, *n, info.skipped);
}

static size_t collect_symbols(Elf *elf, struct sym_candidate *out, size_t room)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	size_t n = 0;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (gelf_getshdr(scn, &shdr) == NULL || !is_symbol_table(&shdr))
			continue;
		n += collect_from_table(elf, scn, &shdr, out + n, room - n);
	}
	return n;
}

static int binding_rank(uint8_t binding)
{
	if (binding == STB_GLOBAL)
		return 0;
	if (binding == STB_WEAK)
		return 1;
	return 2;
}

static int leading_underscores(const char *name)
{
	int n = 0;

	while (name[n] == '_')
		n++;
	return n;
}

/* Orders by address, then best name first among symbols at one address:
 * sized over unsized, global over weak over local, unversioned over
 * versioned, fewer leading underscores, then plain string order so the
 * choice never depends on the order of the tables in the file. */
static int compare_candidates(const void *pa, const void *pb)
{
	const struct sym_candidate *a = pa, *b = pb;
	int ra, rb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if ((a->size == 0) != (b->size == 0))
		return a->size == 0 ? 1 : -1;
	ra = binding_rank(a->binding);
	rb = binding_rank(b->binding);
	if (ra != rb)
		return ra - rb;
	ra = strchr(a->name, '@') != NULL;
	rb = strchr(b->name, '@') != NULL;
	if (ra != rb)
		return ra - rb;
	ra = leading_underscores(a->name);
	rb = leading_underscores(b->name);
	if (ra != rb)
		return ra - rb;
	return strcmp(a->name, b->name);
}

/* Keeps the first (best) candidate of each address; returns the count. */
static size_t dedup_candidates(struct sym_candidate *c, size_t n)
{
	size_t in, out = 0;

	for (in = 0; in < n; in++) {
		if (out > 0 && c[out - 1].addr == c[in].addr)
			continue;
		c[out++] = c[in];
	}
	return out;
}

static uint32_t clamp_size(uint64_t size)
{
	return size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
}

static int store_symbols(struct pc_elf_module *m,
			 const struct sym_candidate *c, size_t n)
{
	size_t i, strtab_len = 0, pos = 0;

	for (i = 0; i < n; i++)
		strtab_len += strlen(c[i].name) + 1;
	if (n > UINT32_MAX || strtab_len > UINT32_MAX)
		return -E2BIG;
	m->syms = calloc(n ? n : 1, sizeof(*m->syms));
	m->strtab = malloc(strtab_len ? strtab_len : 1);
	if (m->syms == NULL || m->strtab == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		size_t len = strlen(c[i].name) + 1;

		m->syms[i].addr = c[i].addr;
		m->syms[i].size = clamp_size(c[i].size);
		m->syms[i].name_off = (uint32_t)pos;
		memcpy(m->strtab + pos, c[i].name, len);
		pos += len;
	}
	m->nsyms = (uint32_t)n;
	m->strtab_len = strtab_len;
	return 0;
}

/* Appends the Go functions as global, sized candidates. */
static size_t add_go_candidates(struct sym_candidate *c, const struct pc_gofunc *go,
				size_t ngo)
{
	for (size_t i = 0; i < ngo; i++) {
		c[i].addr = go[i].entry;
		c[i].size = go[i].size;
		c[i].name = go[i].name;
		c[i].binding = STB_GLOBAL;
	}
	return ngo;
}

static int read_symbols(Elf *elf, struct pc_elf_module *m)
{
	size_t room = count_symbol_entries(elf), n, ngo = 0;
	struct pc_gofunc *go = NULL;
	struct sym_candidate *c;
	int err;

	c = calloc(room ? room : 1, sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	n = collect_symbols(elf, c, room);
	/* A .symtab names every Go function already; without one (or without
	 * a function in it) the pclntab does. */
	if (!m->has_symtab || n == 0)
		read_go_functions(elf, m, &go, &ngo);
	if (ngo > 0) {
		struct sym_candidate *more = realloc(c, (n + ngo) * sizeof(*c));

		if (more == NULL) {
			free(go);
			free(c);
			return -ENOMEM;
		}
		c = more;
		n += add_go_candidates(c + n, go, ngo);
	}
	free(go);
	qsort(c, n, sizeof(*c), compare_candidates);
	n = dedup_candidates(c, n);
	err = store_symbols(m, c, n);
	free(c);
	return err;
}

/* ---- loading ---------------------------------------------------------- */

static int read_elf(Elf *elf, struct pc_elf_module *m)
{
	GElf_Ehdr ehdr;
	int len, err;

	if (elf_kind(elf) != ELF_K_ELF || gelf_getehdr(elf, &ehdr) == NULL)
		return -EINVAL;
	m->kind = PC_MODULE_ELF;
	m->e_type = ehdr.e_type;
	len = build_id_from_elf(elf, m->build_id);
	m->build_id_len = (uint8_t)(len > 0 ? len : 0);
	read_section_flags(elf, m);
	err = read_segments(elf, m);
	if (err == 0)
		err = read_symbols(elf, m);
	return err;
}

int pc_elf_module_load_fd(struct pc_elf_module *m, int fd, const char *path,
			  char *errbuf, size_t errlen)
{
	const char *what = path ? path : "(fd)";
	Elf *elf;
	int err;

	memset(m, 0, sizeof(*m));
	if (elf_library_init() != 0) {
		set_error(errbuf, errlen, "libelf: %s", elf_errmsg(-1));
		return -ENOSYS;
	}
	if (path != NULL && (m->path = strdup(path)) == NULL)
		return -ENOMEM;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf == NULL) {
		set_error(errbuf, errlen, "%s: %s", what, elf_errmsg(-1));
		pc_elf_module_free(m);
		return -EINVAL;
	}
	err = read_elf(elf, m);
	elf_end(elf);
	if (err != 0) {
		set_error(errbuf, errlen, "%s: %s", what,
			  err == -EINVAL ? "not an ELF file" : strerror(-err));
		pc_elf_module_free(m);
	}
	return err;
}

int pc_elf_module_load(struct pc_elf_module *m, const char *path,
		       char *errbuf, size_t errlen)
{
	int fd, err;

	memset(m, 0, sizeof(*m));
	fd = pc_open_regular(path, 0); /* a FIFO must not block */
	if (fd < 0) {
		err = fd;
		set_error(errbuf, errlen, "%s: %s", path,
			  err == -EINVAL ? "not a regular file" : strerror(-err));
		return err;
	}
	err = pc_elf_module_load_fd(m, fd, path, errbuf, errlen);
	close(fd);
	return err;
}

void pc_elf_module_free(struct pc_elf_module *m)
{
	if (m == NULL)
		return;
	free(m->path);
	free(m->segs);
	free(m->syms);
	free(m->strtab);
	memset(m, 0, sizeof(*m));
}

/* ---- lookups ---------------------------------------------------------- */

int pc_elf_offset_to_vaddr(const struct pc_elf_module *m, uint64_t offset,
			   uint64_t *vaddr)
{
	uint32_t i;

	for (i = 0; i < m->nsegs; i++) {
		const struct pc_segment *seg = &m->segs[i];

		if (offset >= seg->offset && offset - seg->offset < seg->filesz) {
			*vaddr = offset - seg->offset + seg->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

/* Index of the last symbol with addr <= target, or -1. */
static int64_t last_symbol_at_or_below(const struct pc_elf_module *m,
				       uint64_t target)
{
	int64_t lo = 0, hi = (int64_t)m->nsyms - 1, found = -1;

	while (lo <= hi) {
		int64_t mid = lo + (hi - lo) / 2;

		if (m->syms[mid].addr <= target) {
			found = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return found;
}

const struct pc_symbol *pc_elf_module_lookup(const struct pc_elf_module *m,
					     uint64_t addr)
{
	int64_t i = last_symbol_at_or_below(m, addr);
	const struct pc_symbol *sym;

	if (i < 0)
		return NULL;
	sym = &m->syms[i];
	if (sym->size != 0 && addr - sym->addr >= sym->size)
		return NULL;
	return sym;
}

/* ---- writing a PC_REC_MODULE record ----------------------------------- */

/* The symbols a record stores, with their own compact string table. */
struct sym_selection {
	struct pc_symbol *syms;
	uint32_t nsyms;
	char    *strtab;
	size_t   strtab_len;
};

static void selection_free(struct sym_selection *sel)
{
	free(sel->syms);
	free(sel->strtab);
	memset(sel, 0, sizeof(*sel));
}

static uint8_t *mark_covering_symbols(const struct pc_elf_module *m,
				      const uint64_t *addrs, size_t naddrs)
{
	uint8_t *keep = calloc(m->nsyms ? m->nsyms : 1, 1);
	size_t i;

	if (keep == NULL)
		return NULL;
	for (i = 0; i < naddrs; i++) {
		const struct pc_symbol *sym = pc_elf_module_lookup(m, addrs[i]);

		if (sym != NULL)
			keep[sym - m->syms] = 1;
	}
	return keep;
}

/* A kept symbol without a size covered everything up to its neighbour in
 * the full table; give it that extent explicitly, since its neighbour may
 * not be kept. The last symbol stays open-ended. */
static uint32_t effective_size(const struct pc_elf_module *m, uint32_t i)
{
	if (m->syms[i].size != 0 || i + 1 >= m->nsyms)
		return m->syms[i].size;
	return clamp_size(m->syms[i + 1].addr - m->syms[i].addr);
}

static int select_symbols(const struct pc_elf_module *m, const uint8_t *keep,
			  struct sym_selection *sel)
{
	uint32_t i, n = 0;
	size_t len = 0, pos = 0;

	for (i = 0; i < m->nsyms; i++) {
		if (keep[i]) {
			n++;
			len += strlen(pc_elf_symbol_name(m, &m->syms[i])) + 1;
		}
	}
	sel->syms = calloc(n ? n : 1, sizeof(*sel->syms));
	sel->strtab = malloc(len ? len : 1);
	if (sel->syms == NULL || sel->strtab == NULL)
		return -ENOMEM;
	for (i = 0; i < m->nsyms; i++) {
		const char *name = pc_elf_symbol_name(m, &m->syms[i]);
		struct pc_symbol *out;

		if (!keep[i])
			continue;
		out = &sel->syms[sel->nsyms++];
		out->addr = m->syms[i].addr;
		out->size = effective_size(m, i);
		out->name_off = (uint32_t)pos;
		memcpy(sel->strtab + pos, name, strlen(name) + 1);
		pos += strlen(name) + 1;
	}
	sel->strtab_len = len;
	return 0;
}

static int append_module_record(struct pc_buf *b, const struct pc_elf_module *m,
				const struct pc_symbol *syms, uint32_t nsyms,
				const char *strtab, size_t strtab_len)
{
	struct pc_rec_module hdr;
	size_t path_len = m->path ? strlen(m->path) : 0;
	size_t segs_len = (size_t)m->nsegs * sizeof(struct pc_segment);
	size_t syms_len = (size_t)nsyms * sizeof(struct pc_symbol);
	size_t fixed_len = sizeof(hdr) + segs_len + syms_len;
	uint8_t *fixed;
	int err;

	if (fixed_len + path_len + strtab_len + 8 > UINT32_MAX)
		return -ENOMEM; /* cannot be described by a 32-bit size */
	memset(&hdr, 0, sizeof(hdr));
	hdr.h.type = PC_REC_MODULE;
	hdr.kind = m->kind;
	hdr.build_id_len = m->build_id_len;
	hdr.nsegs = m->nsegs;
	hdr.nsyms = nsyms;
	hdr.path_len = (uint32_t)path_len;
	hdr.strtab_len = (uint32_t)strtab_len;
	hdr.pid = m->pid;
	memcpy(hdr.build_id, m->build_id, sizeof(hdr.build_id));
	fixed = malloc(fixed_len);
	if (fixed == NULL)
		return -ENOMEM;
	memcpy(fixed, &hdr, sizeof(hdr));
	if (segs_len)
		memcpy(fixed + sizeof(hdr), m->segs, segs_len);
	if (syms_len)
		memcpy(fixed + sizeof(hdr) + segs_len, syms, syms_len);
	err = pc_buf_add_rec(b, fixed, fixed_len, m->path, path_len,
			     strtab, strtab_len);
	free(fixed);
	return err;
}

int pc_buf_add_module(struct pc_buf *b, const struct pc_elf_module *m,
		      const uint64_t *addrs, size_t naddrs)
{
	struct sym_selection sel = { 0 };
	uint8_t *keep;
	int err;

	if (addrs == NULL)
		return append_module_record(b, m, m->syms, m->nsyms,
					    m->strtab, m->strtab_len);
	keep = mark_covering_symbols(m, addrs, naddrs);
	if (keep == NULL)
		return -ENOMEM;
	err = select_symbols(m, keep, &sel);
	free(keep);
	if (err == 0)
		err = append_module_record(b, m, sel.syms, sel.nsyms,
					   sel.strtab, sel.strtab_len);
	selection_free(&sel);
	return err;
}

/* ---- reading a PC_REC_MODULE record ----------------------------------- */

static int module_header_valid(const struct pc_rec_module *hdr, uint32_t size)
{
	uint64_t need = sizeof(*hdr);

	if (hdr->kind != PC_MODULE_ELF && hdr->kind != PC_MODULE_KERNEL &&
	    hdr->kind != PC_MODULE_PERFMAP)
		return 0;
	if (hdr->build_id_len > PC_BUILD_ID_MAX)
		return 0;
	need += (uint64_t)hdr->nsegs * sizeof(struct pc_segment);
	need += (uint64_t)hdr->nsyms * sizeof(struct pc_symbol);
	need += hdr->path_len;
	need += hdr->strtab_len;
	return need <= size;
}

/* Every name offset inside the table, the table NUL-terminated (so every
 * name ends inside it), addresses in order. */
static int symbols_valid(const struct pc_elf_module *m)
{
	uint32_t i;

	if (m->nsyms == 0)
		return 1;
	if (m->strtab_len == 0 || m->strtab[m->strtab_len - 1] != '\0')
		return 0;
	for (i = 0; i < m->nsyms; i++) {
		if (m->syms[i].name_off >= m->strtab_len)
			return 0;
		if (i > 0 && m->syms[i].addr < m->syms[i - 1].addr)
			return 0;
	}
	return 1;
}

static void *copy_bytes(const uint8_t **p, size_t len, size_t extra)
{
	size_t total = len + extra;
	uint8_t *out = malloc(total > 0 ? total : 1);

	if (out == NULL)
		return NULL;
	memcpy(out, *p, len);
	memset(out + len, 0, extra);
	*p += len;
	return out;
}

static int copy_module_body(struct pc_elf_module *m,
			    const struct pc_rec_module *hdr, const uint8_t *p)
{
	m->segs = copy_bytes(&p, (size_t)hdr->nsegs * sizeof(*m->segs), 0);
	m->syms = copy_bytes(&p, (size_t)hdr->nsyms * sizeof(*m->syms), 0);
	m->path = copy_bytes(&p, hdr->path_len, 1);
	m->strtab = copy_bytes(&p, hdr->strtab_len, 0);
	if (!m->segs || !m->syms || !m->path || !m->strtab)
		return -ENOMEM;
	m->nsegs = hdr->nsegs;
	m->nsyms = hdr->nsyms;
	m->strtab_len = hdr->strtab_len;
	return 0;
}

int pc_elf_module_from_rec(struct pc_elf_module *m, const struct pc_rec *rec)
{
	struct pc_rec_module hdr;
	int err;

	memset(m, 0, sizeof(*m));
	if (rec == NULL || rec->type != PC_REC_MODULE ||
	    rec->size < sizeof(hdr))
		return -EINVAL;
	memcpy(&hdr, rec, sizeof(hdr));
	if (!module_header_valid(&hdr, rec->size))
		return -EINVAL;
	m->kind = hdr.kind;
	m->pid = hdr.pid;
	m->build_id_len = hdr.build_id_len;
	memcpy(m->build_id, hdr.build_id, hdr.build_id_len);
	err = copy_module_body(m, &hdr, (const uint8_t *)rec + sizeof(hdr));
	if (err == 0 && !symbols_valid(m))
		err = -EINVAL;
	if (err != 0)
		pc_elf_module_free(m);
	return err;
}

/* ---- a Go binary's pclntab for unwinding ------------------------------------ */

int pc_elf_go_pclntab_fd(int fd, struct pc_go_pclntab *g)
{
	struct pc_gopclntab_info info;
	struct pc_gofunc *funcs = NULL;
	struct go_region r;
	size_t n = 0;
	Elf *elf;
	int found, err = 0;

	memset(g, 0, sizeof(*g));
	if ((err = open_elf(fd, &elf)) != 0)
		return err;
	found = find_go_functions(elf, &r, &funcs, &n, &info, NULL, 0);
	free(funcs);
	if (found <= 0) {
		err = found < 0 ? -EINVAL : -ENOENT;
	} else if (!(g->data = malloc(r.len))) {
		err = -ENOMEM;
	} else {
		/* parsed again from the copy: the names and offsets then point into
		 * memory that outlives the ELF handle */
		memcpy(g->data, r.data, r.len);
		g->len = r.len;
		err = pc_gopclntab_parse(g->data, g->len, go_text_start(elf, &r), &g->funcs,
					 &g->nfuncs, &info, NULL, 0);
		g->quantum = info.quantum;
	}
	elf_end(elf);
	if (err)
		pc_elf_go_pclntab_free(g);
	return err;
}

void pc_elf_go_pclntab_free(struct pc_go_pclntab *g)
{
	free(g->funcs);
	free(g->data);
	memset(g, 0, sizeof(*g));
}
