/* eh_frame.h - walking a .eh_frame section: its entries, CIE headers and
 * encoded pointers (the LSB's "Exception Frame" layout, DWARF 4 section
 * 6.4.1 for the CIE fields).
 *
 * Two users with different aims read the same bytes: the analyzer checks a
 * captured table before libdw sees it (analyze/unwind/cfi_check.c), the
 * recorder blanks the entries no copied stack can need before it embeds a
 * table (record/consume/unwind_prune.c). Both walk untrusted or at least
 * unverified bytes, so every read here is bounded by its reader's end and
 * sets `bad` instead of running past it. Call frame instructions are not
 * decoded here: only the checker needs them.
 */
#ifndef PERFCAP_EH_FRAME_H
#define PERFCAP_EH_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define EHF_ENC_OMIT    0xff
#define EHF_ENC_PCREL   0x10
#define EHF_ENC_DATAREL 0x30

/* A bounded cursor. bad is set by any read past end. */
struct ehf_reader {
	const uint8_t *p, *end;
	int bad;
};

uint64_t ehf_uleb(struct ehf_reader *r);
void ehf_skip(struct ehf_reader *r, uint64_t n);

/* Size in bytes of a pointer in encoding enc (DW_EH_PE_*): 0 for LEB128,
 * -1 for omit or an unknown format. */
int ehf_enc_size(uint8_t enc);

void ehf_skip_pointer(struct ehf_reader *r, uint8_t enc);

/* Reads a pointer in encoding enc whose first byte is at address `at`
 * (for DW_EH_PE_pcrel). 0, or -1 for an encoding that needs a base this
 * reader does not have (datarel, textrel, funcrel, indirect) or a read
 * past the end. */
int ehf_read_pointer(struct ehf_reader *r, uint8_t enc, uint64_t at, uint64_t *out);

/* One entry of the section: a CIE or an FDE. */
struct ehf_entry {
	size_t at;                /* offset of its length field */
	size_t body;              /* offset of its CIE id / CIE pointer */
	size_t end;               /* offset just past it */
	uint32_t id;              /* CIE id or the FDE's CIE pointer */
	int padding;              /* a zero length: 4 bytes, no body */
};

/* The entry at offset at of table[0..len). 1 and *e, 0 at the end, -1 for
 * a length past the section, below 4, or the 64-bit escape (not written by
 * linkers for .eh_frame, not read here). A zero length is padding or the
 * terminator: returned as such (e->padding), never taken for the end, so
 * a walk sees every entry a header may point to. */
int ehf_next_entry(const uint8_t *table, size_t len, size_t at, struct ehf_entry *e);

static inline int ehf_is_cie(const struct ehf_entry *e, int debug)
{
	return e->id == (debug ? 0xffffffffu : 0);
}

/* Offset of an FDE's CIE, or SIZE_MAX when an .eh_frame pointer points
 * before the section. */
static inline size_t ehf_cie_offset(const struct ehf_entry *e, int debug)
{
	if (debug)
		return e->id;
	return e->id <= e->body ? e->body - e->id : (size_t)-1;
}

/* What an FDE needs from its CIE. */
struct ehf_cie {
	size_t offset;            /* of the CIE's length field */
	uint8_t enc;              /* FDE pointer encoding ('R'), absptr by default */
	uint8_t has_z;            /* FDEs carry an augmentation data length */
	uint8_t version;
	uint64_t ra;              /* return address register */
};

/* Parses a CIE's header from r (just past its CIE id); r is left at its
 * initial instructions. 0, or -1 for an unknown version, augmentation or
 * pointer encoding, or a read past the entry. */
int ehf_read_cie(struct ehf_reader *r, struct ehf_cie *c);

/* The initial location and address range of an FDE whose CIE is c;
 * table_addr is the section's address. 0, or -1 when they cannot be read
 * (an encoding with a base this reader does not have). */
int ehf_fde_range(const uint8_t *table, uint64_t table_addr, const struct ehf_entry *e,
		  const struct ehf_cie *c, uint64_t *start, uint64_t *range);

/* .eh_frame_hdr: the number of entries of its search table, or UINT32_MAX
 * for a layout other than the one linkers write (version 1, eh_frame_ptr
 * pcrel sdata4, count udata4, table datarel sdata4) or a count past len. */
uint32_t ehf_hdr_count(const uint8_t *hdr, size_t len);

/* The address of the FDE that search table entry i points to. */
uint64_t ehf_hdr_fde(const uint8_t *hdr, uint64_t hdr_addr, uint32_t i);

#endif /* PERFCAP_EH_FRAME_H */
