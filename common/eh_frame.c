/* eh_frame.c - bounded reads of .eh_frame entries, CIE headers and encoded
 * pointers (see eh_frame.h). Nothing here allocates or trusts a length: an
 * entry is returned only when it lies inside the section, a field only when
 * it lies inside its entry. */
#include <string.h>

#include "eh_frame.h"

/* A LEB128 number; *last gets its last byte (the sign is its bit 6). */
static uint64_t leb(struct ehf_reader *r, unsigned *bits, uint8_t *last)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (r->p < r->end) {
		uint8_t b = *r->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			*bits = shift;
			*last = b;
			return v;
		}
	}
	r->bad = 1;
	*bits = 0;
	*last = 0;
	return 0;
}

uint64_t ehf_uleb(struct ehf_reader *r)
{
	unsigned bits;
	uint8_t last;

	return leb(r, &bits, &last);
}

static int64_t ehf_sleb(struct ehf_reader *r)
{
	unsigned bits;
	uint8_t last;
	uint64_t v = leb(r, &bits, &last);

	if (bits && bits < 64 && (last & 0x40))
		v |= ~0ull << bits;
	return (int64_t)v;
}

void ehf_skip(struct ehf_reader *r, uint64_t n)
{
	if (n > (uint64_t)(r->end - r->p)) {
		r->bad = 1;
		r->p = r->end;
	} else {
		r->p += n;
	}
}

int ehf_enc_size(uint8_t enc)
{
	if (enc == EHF_ENC_OMIT)
		return -1;
	switch (enc & 0x0f) {
	case 0x00: case 0x04: case 0x0c: return 8;   /* absptr, udata8, sdata8 */
	case 0x02: case 0x0a: return 2;              /* udata2, sdata2 */
	case 0x03: case 0x0b: return 4;              /* udata4, sdata4 */
	case 0x01: case 0x09: return 0;              /* uleb128, sleb128 */
	default: return -1;
	}
}

void ehf_skip_pointer(struct ehf_reader *r, uint8_t enc)
{
	int n = ehf_enc_size(enc);

	if (n < 0)
		r->bad = 1;
	else if (n == 0)
		(void)ehf_uleb(r);
	else
		ehf_skip(r, (uint64_t)n);
}

/* The fixed-size formats, sign-extended where signed. */
static uint64_t fixed_value(const uint8_t *p, uint8_t format)
{
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	switch (format) {
	case 0x02: memcpy(&u16, p, 2); return u16;
	case 0x0a: memcpy(&u16, p, 2); return (uint64_t)(int64_t)(int16_t)u16;
	case 0x03: memcpy(&u32, p, 4); return u32;
	case 0x0b: memcpy(&u32, p, 4); return (uint64_t)(int64_t)(int32_t)u32;
	default:   memcpy(&u64, p, 8); return u64;
	}
}

int ehf_read_pointer(struct ehf_reader *r, uint8_t enc, uint64_t at, uint64_t *out)
{
	uint8_t format = enc & 0x0f, apply = enc & 0x70;
	int size = ehf_enc_size(enc);
	uint64_t v;

	if (size < 0 || (enc & 0x80) || (apply != 0 && apply != EHF_ENC_PCREL))
		return -1;
	if (size == 0) {
		v = format == 0x09 ? (uint64_t)ehf_sleb(r) : ehf_uleb(r);
	} else {
		if ((size_t)(r->end - r->p) < (size_t)size) {
			r->bad = 1;
			return -1;
		}
		v = fixed_value(r->p, format);
		r->p += size;
	}
	if (r->bad)
		return -1;
	*out = apply == EHF_ENC_PCREL ? at + v : v;
	return 0;
}

int ehf_next_entry(const uint8_t *table, size_t len, size_t at, struct ehf_entry *e)
{
	uint32_t length;

	if (at > len || len - at < 4)
		return 0;
	memcpy(&length, table + at, 4);
	memset(e, 0, sizeof(*e));
	e->at = at;
	e->body = at + 4;
	if (length == 0) {
		e->padding = 1;
		e->end = at + 4;
		return 1;
	}
	if (length == 0xffffffffu || length < 4 || length > len - at - 4)
		return -1;
	e->end = e->body + length;
	memcpy(&e->id, table + e->body, 4);
	return 1;
}

/* The augmentation data of a "z" CIE: only 'R' matters to FDEs; 'P' and
 * 'L' are stepped over, 'S' and 'B' carry no data. */
static int read_augmentation(struct ehf_reader *r, const char *aug, struct ehf_cie *c)
{
	uint64_t n = ehf_uleb(r);
	struct ehf_reader a = { r->p, r->p + (n < (uint64_t)(r->end - r->p) ? n :
					      (uint64_t)(r->end - r->p)), 0 };

	for (const char *s = aug + 1; *s && !a.bad; s++) {
		if (*s == 'R') {
			if (a.p >= a.end)
				return -1;
			c->enc = *a.p++;
		} else if (*s == 'P') {
			uint8_t e = a.p < a.end ? *a.p++ : EHF_ENC_OMIT;
			ehf_skip_pointer(&a, e);
		} else if (*s == 'L') {
			ehf_skip(&a, 1);
		} else if (*s != 'S' && *s != 'B') {
			return -1;
		}
	}
	if (a.bad)
		return -1;
	ehf_skip(r, n);
	return 0;
}

int ehf_read_cie(struct ehf_reader *r, struct ehf_cie *c)
{
	const char *aug;
	const uint8_t *nul;

	if (r->p >= r->end)
		return -1;
	c->version = *r->p++;
	aug = (const char *)r->p;
	nul = memchr(r->p, 0, (size_t)(r->end - r->p));
	if (!nul || (c->version != 1 && c->version != 3 && c->version != 4))
		return -1;
	r->p = nul + 1;
	if (c->version == 4)
		ehf_skip(r, 2);                          /* address and segment sizes */
	(void)ehf_uleb(r);                               /* code alignment */
	(void)ehf_sleb(r);                               /* data alignment */
	if (c->version == 1) {
		c->ra = r->p < r->end ? *r->p : 0;
		ehf_skip(r, 1);
	} else {
		c->ra = ehf_uleb(r);
	}
	c->enc = 0;                                      /* absptr */
	c->has_z = aug[0] == 'z';
	if (c->has_z) {
		if (read_augmentation(r, aug, c) < 0)
			return -1;
	} else if (aug[0]) {
		return -1;                               /* "eh" and other old forms */
	}
	return r->bad || ehf_enc_size(c->enc) < 0 ? -1 : 0;
}

int ehf_fde_range(const uint8_t *table, uint64_t table_addr, const struct ehf_entry *e,
		  const struct ehf_cie *c, uint64_t *start, uint64_t *range)
{
	struct ehf_reader r = { table + e->body + 4, table + e->end, 0 };
	uint64_t at = table_addr + (e->body + 4);

	if (ehf_read_pointer(&r, c->enc, at, start) < 0)
		return -1;
	return ehf_read_pointer(&r, c->enc & 0x0f, 0, range);
}

uint32_t ehf_hdr_count(const uint8_t *hdr, size_t len)
{
	uint32_t count;

	if (len < 12 || hdr[0] != 1 || hdr[1] != 0x1b || hdr[2] != 0x03 || hdr[3] != 0x3b)
		return UINT32_MAX;
	memcpy(&count, hdr + 8, 4);
	return count <= (len - 12) / 8 ? count : UINT32_MAX;
}

uint64_t ehf_hdr_fde(const uint8_t *hdr, uint64_t hdr_addr, uint32_t i)
{
	int32_t rel;

	memcpy(&rel, hdr + 12 + 8 * (size_t)i + 4, 4);
	return hdr_addr + (uint64_t)(int64_t)rel;
}
