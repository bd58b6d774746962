/* cfi_check.c - a walk over a captured .eh_frame before libdw sees it.
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
 * is not used and libdw scans the checked entries in order). */
#include <stdlib.h>
#include <string.h>

#include "unwind_internal.h"

#define CFI_MAX_REGISTER 255
#define MAX_CIES 4096

struct reader {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t get_uleb(struct reader *r)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (r->p < r->end) {
		uint8_t b = *r->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
	}
	r->bad = 1;
	return 0;
}

static void skip(struct reader *r, uint64_t n)
{
	if (n > (uint64_t)(r->end - r->p)) {
		r->bad = 1;
		r->p = r->end;
	} else {
		r->p += n;
	}
}

static void reg(struct reader *r)
{
	if (get_uleb(r) > CFI_MAX_REGISTER)
		r->bad = 1;
}

/* Size of a pointer in encoding enc (DW_EH_PE_*), 0 for LEB128, -1 if
 * unknown. */
static int enc_size(uint8_t enc)
{
	if (enc == 0xff)                 /* DW_EH_PE_omit */
		return -1;
	switch (enc & 0x0f) {
	case 0x00: case 0x04: case 0x0c: return 8;   /* absptr, udata8, sdata8 */
	case 0x02: case 0x0a: return 2;              /* udata2, sdata2 */
	case 0x03: case 0x0b: return 4;              /* udata4, sdata4 */
	case 0x01: case 0x09: return 0;              /* uleb128, sleb128 */
	default: return -1;
	}
}

static void skip_pointer(struct reader *r, uint8_t enc)
{
	int n = enc_size(enc);

	if (n < 0)
		r->bad = 1;
	else if (n == 0)
		(void)get_uleb(r);
	else
		skip(r, (uint64_t)n);
}

/* One entry's call frame instructions: every register operand bounded. */
static void instructions(struct reader *r, uint8_t enc)
{
	while (!r->bad && r->p < r->end) {
		uint8_t op = *r->p++;
		switch (op >> 6) {
		case 1: case 3: continue;                     /* advance_loc, restore */
		case 2: (void)get_uleb(r); continue;          /* offset */
		}
		switch (op) {
		case 0x00: case 0x0a: case 0x0b: break;      /* nop, remember/restore_state */
		case 0x01: skip_pointer(r, enc); break;      /* set_loc */
		case 0x02: skip(r, 1); break;
		case 0x03: skip(r, 2); break;
		case 0x04: skip(r, 4); break;
		case 0x05: case 0x0c: case 0x14: case 0x2f:  /* reg, uleb */
		case 0x11: case 0x12: case 0x15:             /* reg, sleb */
			reg(r);
			(void)get_uleb(r);
			break;
		case 0x06: case 0x07: case 0x08: case 0x0d: reg(r); break;
		case 0x09: reg(r); reg(r); break;            /* register */
		case 0x0e: case 0x13: case 0x2e: (void)get_uleb(r); break;
		case 0x0f: skip(r, get_uleb(r)); break;      /* def_cfa_expression */
		case 0x10: case 0x16: reg(r); skip(r, get_uleb(r)); break;
		default: r->bad = 1;                         /* unknown opcode */
		}
	}
}

struct cie {
	size_t offset;
	uint8_t enc;               /* FDE pointer encoding ('R') */
	uint8_t has_z;             /* augmentation data present */
};

/* Parses a CIE's header; its instructions follow. 0 or -1. */
static int read_cie(struct reader *r, struct cie *c)
{
	const char *aug = (const char *)r->p;
	const uint8_t *nul;
	uint8_t version;

	if (r->p >= r->end)
		return -1;
	version = *r->p++;
	aug = (const char *)r->p;
	nul = memchr(r->p, 0, (size_t)(r->end - r->p));
	if (!nul || (version != 1 && version != 3 && version != 4))
		return -1;
	r->p = nul + 1;
	if (version == 4)
		skip(r, 2);                              /* address and segment sizes */
	(void)get_uleb(r);                               /* code alignment */
	(void)get_uleb(r);                               /* data alignment (sleb) */
	if (version == 1) {
		skip(r, 1);                              /* return address register */
	} else {
		reg(r);
	}
	c->enc = 0;                                      /* absptr */
	c->has_z = aug[0] == 'z';
	if (c->has_z) {
		uint64_t n = get_uleb(r);
		struct reader a = { r->p, r->p + (n < (uint64_t)(r->end - r->p) ? n :
						  (uint64_t)(r->end - r->p)), 0 };
		for (const char *s = aug + 1; *s && !a.bad; s++) {
			if (*s == 'R') {
				if (a.p >= a.end)
					return -1;
				c->enc = *a.p++;
			} else if (*s == 'P') {
				uint8_t e = a.p < a.end ? *a.p++ : 0xff;
				skip_pointer(&a, e);
			} else if (*s == 'L') {
				skip(&a, 1);
			} else if (*s != 'S' && *s != 'B') {
				return -1;
			}
		}
		if (a.bad)
			return -1;
		skip(r, n);
	} else if (aug[0]) {
		return -1;                               /* "eh" and other old forms */
	}
	return r->bad || enc_size(c->enc) < 0 ? -1 : 0;
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

static int check_entries(const uint8_t *table, size_t len, struct cie *cies,
			 struct fde_starts *fdes, const char **why)
{
	size_t ncies = 0, at = 0;

	while (at + 4 <= len) {
		uint32_t length, id;
		size_t body, end;
		struct reader r;

		memcpy(&length, table + at, 4);
		if (length == 0) {                               /* terminator or padding */
			at += 4;
			continue;
		}
		if (length == 0xffffffffu || length > len - at - 4 || length < 4) {
			*why = "malformed .eh_frame entry length";
			return -1;
		}
		body = at + 4;
		end = body + length;
		memcpy(&id, table + body, 4);
		r = (struct reader){ table + body + 4, table + end, 0 };
		if (id == 0) {
			struct cie c = { .offset = at };
			if (read_cie(&r, &c) < 0) {
				*why = "malformed or unsupported CIE in .eh_frame";
				return -1;
			}
			if (ncies < MAX_CIES)
				cies[ncies++] = c;
			instructions(&r, c.enc);
		} else {
			const struct cie *c = NULL;
			size_t cie_at = id <= body ? body - id : SIZE_MAX;
			for (size_t i = ncies; i-- > 0 && !c;)
				if (cies[i].offset == cie_at)
					c = &cies[i];
			if (!c) {
				*why = "an FDE whose CIE is not before it in .eh_frame";
				return -1;
			}
			if (note_fde(fdes, at) < 0) {
				*why = "out of memory";
				return -1;
			}
			skip_pointer(&r, c->enc);                /* initial location */
			skip_pointer(&r, c->enc & 0x0f);         /* address range */
			if (c->has_z)
				skip(&r, get_uleb(&r));
			instructions(&r, c->enc);
		}
		if (r.bad) {
			*why = "hostile or unsupported call frame instructions (register"
			       " numbers past 255, unknown opcodes, entries past their end)";
			return -1;
		}
		at = end;
	}
	return 0;
}

/* 1 if every FDE the header's search table names is a checked one. Only
 * the layout linkers write is read (version 1, eh_frame_ptr pcrel sdata4,
 * count udata4, table datarel sdata4); any other is not used. */
static int header_usable(const struct pc_unwind_table *t, const struct fde_starts *f)
{
	const uint8_t *h = t->hdr;
	uint32_t count;

	if (t->hdr_len < 12 || h[0] != 1 || h[1] != 0x1b || h[2] != 0x03 || h[3] != 0x3b)
		return 0;
	memcpy(&count, h + 8, 4);
	if (count > (t->hdr_len - 12) / 8)
		return 0;
	for (uint32_t i = 0; i < count; i++) {
		int32_t rel;
		uint64_t fde;
		memcpy(&rel, h + 12 + 8 * (size_t)i + 4, 4);
		fde = t->hdr_addr + (uint64_t)(int64_t)rel;
		if (fde < t->table_addr || !checked_fde(f, fde - t->table_addr))
			return 0;
	}
	return 1;
}

int cfi_check(const struct pc_unwind_table *t, int *use_hdr, const char **why)
{
	struct cie *cies = calloc(MAX_CIES, sizeof(*cies));
	struct fde_starts fdes = { 0 };
	int rc;

	*use_hdr = 0;
	if (!cies) {
		*why = "out of memory";
		return -1;
	}
	rc = check_entries(t->table, t->table_len, cies, &fdes, why);
	if (rc == 0 && t->hdr_len)
		*use_hdr = header_usable(t, &fdes);
	free(fdes.at);
	free(cies);
	return rc;
}
