/* unwind_table.c - reads a module's unwind tables from its ELF file and
 * writes/reads them as PC_REC_UNWIND records (see unwind_table.h). The
 * record is checked field by field against its size before anything is
 * copied: captures are untrusted input. */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf_module.h"
#include "gopclntab_cfi.h"
#include "unwind_table.h"

/* ---- reading the ELF file --------------------------------------------- */

struct found_section {
	uint64_t addr;
	Elf_Data *data;
};

/* A compressed .debug_frame (Go compresses its DWARF; so does
 * objcopy --compress-debug-sections) is decompressed in libelf's memory. */
static int decompress(Elf_Scn *scn, const GElf_Shdr *sh, const char *name)
{
	if (sh->sh_flags & SHF_COMPRESSED)
		return elf_compress(scn, 0, 0);
	if (name[1] == 'z')                     /* .zdebug_frame: the GNU form */
		return elf_compress_gnu(scn, 0, 0);
	return 0;
}

static void find_sections(Elf *elf, struct found_section *eh, struct found_section *hdr,
			  struct found_section *dbg)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;
		struct found_section *want = NULL;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (strcmp(name, ".eh_frame") == 0)
			want = eh;
		else if (strcmp(name, ".eh_frame_hdr") == 0)
			want = hdr;
		else if (strcmp(name, ".debug_frame") == 0 || strcmp(name, ".zdebug_frame") == 0)
			want = dbg;
		if (want == dbg && !dbg->data && decompress(scn, &sh, name) < 0)
			continue;
		if (want && !want->data) {
			want->addr = sh.sh_addr;
			want->data = elf_getdata(scn, NULL);
		}
	}
}

static int copy_bytes(uint8_t **out, uint32_t *out_len, const Elf_Data *d)
{
	if (!d || !d->d_buf || !d->d_size)
		return 0;
	if (d->d_size > PC_UNWIND_TABLE_MAX)
		return -E2BIG;
	*out = malloc(d->d_size);
	if (!*out)
		return -ENOMEM;
	memcpy(*out, d->d_buf, d->d_size);
	*out_len = (uint32_t)d->d_size;
	return 0;
}

/* Segments and build-id through elf_module.c (which reads them already). */
static int take_segments(struct pc_unwind_table *t, int fd, const char *path)
{
	struct pc_elf_module m;
	char why[128];
	int err = pc_elf_module_load_fd(&m, fd, path, why, sizeof(why));

	if (err)
		return err;
	t->segs = m.segs;
	t->nsegs = m.nsegs;
	m.segs = NULL;
	m.nsegs = 0;
	t->build_id_len = m.build_id_len;
	memcpy(t->build_id, m.build_id, m.build_id_len);
	pc_elf_module_free(&m);
	return 0;
}

static int take_tables(struct pc_unwind_table *t, Elf *elf)
{
	struct found_section eh = { 0 }, hdr = { 0 }, dbg = { 0 };
	int err;

	find_sections(elf, &eh, &hdr, &dbg);
	if (eh.data && eh.data->d_size) {
		t->kind = PC_UNWIND_EH_FRAME;
		t->table_addr = eh.addr;
		err = copy_bytes(&t->table, &t->table_len, eh.data);
		if (!err && hdr.data) {
			t->hdr_addr = hdr.addr;
			err = copy_bytes(&t->hdr, &t->hdr_len, hdr.data);
		}
		return err;
	}
	if (dbg.data && dbg.data->d_size) {
		t->kind = PC_UNWIND_DEBUG_FRAME;
		return copy_bytes(&t->table, &t->table_len, dbg.data);
	}
	return -ENOENT;
}

int pc_unwind_table_load_fd(struct pc_unwind_table *t, int fd, const char *path,
			    char *why, size_t len)
{
	Elf *elf;
	int err;

	memset(t, 0, sizeof(*t));
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		snprintf(why, len, "not an ELF file");
		err = -EINVAL;
	} else {
		err = take_tables(t, elf);
		if (err)
			snprintf(why, len, "%s", err == -ENOENT ? "no .eh_frame or .debug_frame" :
				 err == -E2BIG ? "unwind table too large" : strerror(-err));
	}
	if (elf)
		elf_end(elf);
	if (!err && (err = take_segments(t, fd, path)) != 0)
		snprintf(why, len, "cannot read the load segments");
	if (!err && !(t->path = strdup(path ? path : "")))
		err = -ENOMEM;
	if (err)
		pc_unwind_table_free(t);
	return err;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The candidates as sorted ELF addresses through t's segments. */
static uint64_t *offsets_to_sorted_vaddrs(const struct pc_unwind_table *t,
					  const uint64_t *offsets, size_t n, size_t *nout)
{
	uint64_t *v = malloc((n ? n : 1) * sizeof(*v));

	*nout = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (pc_unwind_offset_to_vaddr(t, offsets[i], &v[*nout]) == 0)
			(*nout)++;
	qsort(v, *nout, sizeof(*v), cmp_u64);
	return v;
}

int pc_unwind_table_load_go_fd(struct pc_unwind_table *t, int fd, const char *path,
			       const uint64_t *offsets, size_t n, uint32_t *nfdes,
			       char *why, size_t len)
{
	struct pc_go_pclntab g;
	uint64_t *v = NULL;
	size_t nv = 0;
	int err;

	memset(t, 0, sizeof(*t));
	*nfdes = 0;
	err = pc_elf_go_pclntab_fd(fd, &g);
	if (err) {
		snprintf(why, len, "%s", err == -ENOENT ? "no unwind table, no Go pclntab" :
			 err == -ENOMEM ? strerror(ENOMEM) : "Go pclntab refused");
		return err;
	}
	err = take_segments(t, fd, path);
	if (!err && !(v = offsets_to_sorted_vaddrs(t, offsets, n, &nv)))
		err = -ENOMEM;
	if (!err)
		err = pc_unwind_table_from_go(t, &g, v, nv, nfdes);
	if (!err && !(t->path = strdup(path ? path : "")))
		err = -ENOMEM;
	if (err) {
		snprintf(why, len, "%s", err == -ENOENT ? "no Go function covers a candidate"
							: strerror(-err));
		pc_unwind_table_free(t);
	}
	free(v);
	pc_elf_go_pclntab_free(&g);
	return err;
}

/* ---- the record ---------------------------------------------------------- */

int pc_buf_add_unwind(struct pc_buf *b, const struct pc_unwind_table *t)
{
	struct pc_rec_unwind r = { .h.type = PC_REC_UNWIND };
	size_t seg_len = (size_t)t->nsegs * sizeof(struct pc_segment);
	size_t path_len = t->path ? strlen(t->path) : 0;
	size_t var_len = seg_len + t->table_len + t->hdr_len + path_len;
	uint8_t *var = malloc(var_len ? var_len : 1);
	int err;

	if (!var)
		return -ENOMEM;
	r.h.flags = t->flags;
	r.kind = t->kind;
	r.build_id_len = t->build_id_len;
	memcpy(r.build_id, t->build_id, t->build_id_len);
	r.nsegs = t->nsegs;
	r.table_addr = t->table_addr;
	r.hdr_addr = t->hdr_addr;
	r.table_len = t->table_len;
	r.hdr_len = t->hdr_len;
	r.path_len = (uint32_t)path_len;
	/* a .debug_frame table has no header (hdr NULL): memcpy from NULL is
	 * undefined even for 0 bytes */
	if (seg_len)
		memcpy(var, t->segs, seg_len);
	if (t->table_len)
		memcpy(var + seg_len, t->table, t->table_len);
	if (t->hdr_len)
		memcpy(var + seg_len + t->table_len, t->hdr, t->hdr_len);
	if (path_len)
		memcpy(var + seg_len + t->table_len + t->hdr_len, t->path, path_len);
	err = pc_buf_add_rec(b, &r, sizeof(r), var, var_len, NULL, 0);
	free(var);
	return err;
}

static void *dup_bytes(const uint8_t *p, size_t n)
{
	void *out = malloc(n ? n : 1);

	if (out && n)
		memcpy(out, p, n);
	return out;
}

static int unwind_header_valid(const struct pc_rec_unwind *r, uint32_t size)
{
	uint64_t need = sizeof(*r);

	if (r->kind > PC_UNWIND_DEBUG_FRAME || r->build_id_len > PC_BUILD_ID_MAX ||
	    r->table_len > PC_UNWIND_TABLE_MAX || r->hdr_len > PC_UNWIND_TABLE_MAX ||
	    r->nsegs > 4096)
		return 0;
	need += (uint64_t)r->nsegs * sizeof(struct pc_segment);
	need += (uint64_t)r->table_len + r->hdr_len + r->path_len;
	return need <= size;
}

int pc_unwind_table_from_rec(struct pc_unwind_table *t, const struct pc_rec *rec)
{
	struct pc_rec_unwind r;
	const uint8_t *p = (const uint8_t *)rec + sizeof(r);
	size_t seg_len;

	memset(t, 0, sizeof(*t));
	if (rec->size < sizeof(r))
		return -EINVAL;
	memcpy(&r, rec, sizeof(r));
	if (!unwind_header_valid(&r, rec->size))
		return -EINVAL;
	seg_len = (size_t)r.nsegs * sizeof(struct pc_segment);
	t->kind = r.kind;
	t->flags = r.h.flags;
	t->build_id_len = r.build_id_len;
	memcpy(t->build_id, r.build_id, r.build_id_len);
	t->nsegs = r.nsegs;
	t->table_addr = r.table_addr;
	t->hdr_addr = r.hdr_addr;
	t->table_len = r.table_len;
	t->hdr_len = r.hdr_len;
	t->segs = dup_bytes(p, seg_len);
	t->table = dup_bytes(p + seg_len, r.table_len);
	t->hdr = dup_bytes(p + seg_len + r.table_len, r.hdr_len);
	t->path = calloc(1, (size_t)r.path_len + 1);
	if (t->path)
		memcpy(t->path, p + seg_len + r.table_len + r.hdr_len, r.path_len);
	if (!t->segs || !t->table || !t->hdr || !t->path) {
		pc_unwind_table_free(t);
		return -ENOMEM;
	}
	return 0;
}

int pc_unwind_offset_to_vaddr(const struct pc_unwind_table *t, uint64_t offset,
			      uint64_t *vaddr)
{
	for (uint32_t i = 0; i < t->nsegs; i++) {
		const struct pc_segment *s = &t->segs[i];

		if (offset >= s->offset && offset - s->offset < s->filesz) {
			*vaddr = s->vaddr + (offset - s->offset);
			return 0;
		}
	}
	return -ENOENT;
}

void pc_unwind_table_free(struct pc_unwind_table *t)
{
	free(t->segs);
	free(t->table);
	free(t->hdr);
	free(t->path);
	memset(t, 0, sizeof(*t));
}
