/* cfi_check.c - a walk over a captured .eh_frame (or .debug_frame) before
 * libdw sees it.
 *
 * libdw (elfutils 0.188) sizes a frame's register array by the largest
 * register number the CIE and FDE instructions name, so a hostile table
 * naming register 80,000,000 made dwarf_cfi_addrframe allocate 1.9 GB
 * (found by tests/fuzz/fuzz_unwind.c). This walk decodes every CIE and FDE
 * and every call frame instruction, and refuses a table that names a
 * register beyond CFI_MAX_REGISTER (x86-64 DWARF numbers stop at 130), uses
 * an opcode or pointer encoding it does not know, or whose entries run past
 * their bounds. Tables compilers and linkers write pass. A zero length is
 * skipped, not taken for the end: libdw reaches entries through
 * .eh_frame_hdr, so every entry must be checked, and every FDE the header's
 * search table points to must be one this walk checked (else the header
 * is not used and libdw scans the checked entries in order). Entries, CIE
 * headers and pointers are read by common/eh_frame.c; the instructions here. */
#include <stdlib.h>
#include <string.h>

#include "common/eh_frame.h"
#include "unwind_internal.h"

#define CFI_MAX_REGISTER 255
#define MAX_CIES 4096

static void reg(struct ehf_reader *r)
{
	if (ehf_uleb(r) > CFI_MAX_REGISTER)
		r->bad = 1;
}

/* One entry's call frame instructions: every register operand bounded. */
static void instructions(struct ehf_reader *r, uint8_t enc)
{
	while (!r->bad && r->p < r->end) {
		uint8_t op = *r->p++;
		switch (op >> 6) {
		case 1: case 3: continue;                     /* advance_loc, restore */
		case 2: (void)ehf_uleb(r); continue;          /* offset */
		}
		switch (op) {
		case 0x00: case 0x0a: case 0x0b: break;      /* nop, remember/restore_state */
		case 0x01: ehf_skip_pointer(r, enc); break;  /* set_loc */
		case 0x02: ehf_skip(r, 1); break;
		case 0x03: ehf_skip(r, 2); break;
		case 0x04: ehf_skip(r, 4); break;
		case 0x05: case 0x0c: case 0x14: case 0x2f:  /* reg, uleb */
		case 0x11: case 0x12: case 0x15:             /* reg, sleb */
			reg(r);
			(void)ehf_uleb(r);
			break;
		case 0x06: case 0x07: case 0x08: case 0x0d: reg(r); break;
		case 0x09: reg(r); reg(r); break;            /* register */
		case 0x0e: case 0x13: case 0x2e: (void)ehf_uleb(r); break;
		case 0x0f: ehf_skip(r, ehf_uleb(r)); break;  /* def_cfa_expression */
		case 0x10: case 0x16: reg(r); ehf_skip(r, ehf_uleb(r)); break;
		default: r->bad = 1;                         /* unknown opcode */
		}
	}
}

struct fde_starts {
	uint32_t *at;             /* offsets of the checked FDEs, ascending */
	size_t len, cap;
};

static int note_fde(struct fde_starts *f, size_t at)
{
	if (f->len == f->cap) {
		size_t n = f->cap ? 2 * f->cap : 1024;
		uint32_t *grown = realloc(f->at, n * sizeof(*grown));
		if (!grown)
			return -1;
		f->at = grown;
		f->cap = n;
	}
	f->at[f->len++] = (uint32_t)at;
	return 0;
}

static int checked_fde(const struct fde_starts *f, uint64_t at)
{
	size_t lo = 0, hi = f->len;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->at[mid] == at)
			return 1;
		if (f->at[mid] < at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static const struct ehf_cie *find_cie(const struct ehf_cie *cies, size_t n, size_t at)
{
	for (size_t i = n; i-- > 0;)
		if (cies[i].offset == at)
			return &cies[i];
	return NULL;
}

/* One FDE: its CIE before it, its pointers, augmentation and instructions. */
static int check_fde(const uint8_t *table, const struct ehf_entry *e, int debug,
		     const struct ehf_cie *cies, size_t ncies, struct fde_starts *fdes,
		     const char **why)
{
	const struct ehf_cie *c = find_cie(cies, ncies, ehf_cie_offset(e, debug));
	struct ehf_reader r = { table + e->body + 4, table + e->end, 0 };

	if (!c) {
		*why = "an FDE whose CIE is not before it";
		return -1;
	}
	if (note_fde(fdes, e->at) < 0) {
		*why = "out of memory";
		return -1;
	}
	ehf_skip_pointer(&r, c->enc);                    /* initial location */
	ehf_skip_pointer(&r, c->enc & 0x0f);             /* address range */
	if (c->has_z)
		ehf_skip(&r, ehf_uleb(&r));
	instructions(&r, c->enc);
	return r.bad ? 1 : 0;
}

static int check_cie(const uint8_t *table, const struct ehf_entry *e, struct ehf_cie *c,
		     const char **why)
{
	struct ehf_reader r = { table + e->body + 4, table + e->end, 0 };

	c->offset = e->at;
	if (ehf_read_cie(&r, c) < 0 || c->ra > CFI_MAX_REGISTER) {
		*why = "malformed or unsupported CIE";
		return -1;
	}
	instructions(&r, c->enc);
	return r.bad ? 1 : 0;
}

static int check_entries(const uint8_t *table, size_t len, int debug, struct ehf_cie *cies,
			 struct fde_starts *fdes, const char **why)
{
	size_t ncies = 0, at = 0;
	struct ehf_entry e;
	int rc;

	while ((rc = ehf_next_entry(table, len, at, &e)) == 1) {
		at = e.end;
		if (e.padding)                                   /* terminator or padding */
			continue;
		if (ehf_is_cie(&e, debug)) {
			struct ehf_cie c;
			rc = check_cie(table, &e, &c, why);
			if (rc == 0 && ncies < MAX_CIES)
				cies[ncies++] = c;
		} else {
			rc = check_fde(table, &e, debug, cies, ncies, fdes, why);
		}
		if (rc < 0)
			return -1;
		if (rc > 0) {
			*why = "hostile or unsupported call frame instructions (register"
			       " numbers past 255, unknown opcodes, entries past their end)";
			return -1;
		}
	}
	if (rc < 0)
		*why = "malformed entry length in the call frame table";
	return rc;
}

/* 1 if every FDE the header's search table names is a checked one. Only
 * the layout linkers write is read (version 1, eh_frame_ptr pcrel sdata4,
 * count udata4, table datarel sdata4); any other is not used. */
static int header_usable(const struct pc_unwind_table *t, const struct fde_starts *f)
{
	uint32_t count = ehf_hdr_count(t->hdr, t->hdr_len);

	if (count == UINT32_MAX)
		return 0;
	for (uint32_t i = 0; i < count; i++) {
		uint64_t fde = ehf_hdr_fde(t->hdr, t->hdr_addr, i);

		if (fde < t->table_addr || !checked_fde(f, fde - t->table_addr))
			return 0;
	}
	return 1;
}

int cfi_check(const struct pc_unwind_table *t, int *use_hdr, const char **why)
{
	struct ehf_cie *cies = calloc(MAX_CIES, sizeof(*cies));
	struct fde_starts fdes = { 0 };
	int rc;

	*use_hdr = 0;
	if (!cies) {
		*why = "out of memory";
		return -1;
	}
	rc = check_entries(t->table, t->table_len, t->kind == PC_UNWIND_DEBUG_FRAME, cies, &fdes,
			   why);
	if (rc == 0 && t->hdr_len && t->kind == PC_UNWIND_EH_FRAME)
		*use_hdr = header_usable(t, &fdes);
	free(fdes.at);
	free(cies);
	return rc;
}
