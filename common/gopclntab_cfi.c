/* gopclntab_cfi.c - a .debug_frame from a Go pclntab's SP deltas (see
 * gopclntab_cfi.h). The section is built in a growable buffer: a CIE with
 * the x86-64 entry rules (CFA = rsp + 8, return address at CFA - 8), then
 * per covered function an FDE (absolute 8-byte addresses) whose
 * instructions advance the location and redefine the CFA offset at each
 * change of the SP delta. Entries are padded with DW_CFA_nop to 8 bytes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gopclntab_cfi.h"

#define DW_CFA_advance_loc   0x40
#define DW_CFA_advance_loc1  0x02
#define DW_CFA_advance_loc2  0x03
#define DW_CFA_advance_loc4  0x04
#define DW_CFA_def_cfa       0x0c
#define DW_CFA_def_cfa_offset 0x0e
#define DW_CFA_undefined     0x07
#define DW_CFA_offset_ra     0x90        /* DW_CFA_offset | 16 (rip) */
#define REG_RSP 7
#define REG_RA  16

struct out {
	uint8_t *b;
	size_t n, cap;
	int oom;
	uint64_t loc;             /* the row's location in the FDE being written */
	uint64_t cfa;             /* its CFA offset */
};

static void put(struct out *o, const void *p, size_t len)
{
	if (o->oom)
		return;
	if (o->n + len > o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 4096;
		uint8_t *grown;

		while (cap < o->n + len)
			cap *= 2;
		if (cap > PC_UNWIND_TABLE_MAX || !(grown = realloc(o->b, cap))) {
			o->oom = 1;
			return;
		}
		o->b = grown;
		o->cap = cap;
	}
	memcpy(o->b + o->n, p, len);
	o->n += len;
}

static void put8(struct out *o, uint8_t v) { put(o, &v, 1); }

static void put_uleb(struct out *o, uint64_t v)
{
	do {
		uint8_t b = v & 0x7f;

		v >>= 7;
		put8(o, v ? b | 0x80 : b);
	} while (v);
}

/* Pads the entry that starts at start to 8 bytes and fills its length. */
static void close_entry(struct out *o, size_t start)
{
	uint32_t len;

	while ((o->n - start) % 8)
		put8(o, 0);                             /* DW_CFA_nop */
	if (o->oom)
		return;
	len = (uint32_t)(o->n - start - 4);
	memcpy(o->b + start, &len, 4);
}

static void write_cie(struct out *o)
{
	static const uint8_t body[] = {
		0xff, 0xff, 0xff, 0xff,                 /* CIE id (.debug_frame) */
		1, 0,                                   /* version 1, augmentation "" */
		1, 0x78, REG_RA,                        /* code 1, data -8, RA rip */
		DW_CFA_def_cfa, REG_RSP, 8,             /* CFA = rsp + 8 */
		DW_CFA_offset_ra, 1,                    /* RA at CFA - 8 */
	};
	uint32_t zero = 0;

	put(o, &zero, 4);
	put(o, body, sizeof(body));
	close_entry(o, 0);
}

static void advance(struct out *o, uint64_t to)
{
	uint64_t d = to - o->loc;

	if (d == 0)
		return;
	if (d < 64) {
		put8(o, (uint8_t)(DW_CFA_advance_loc | d));
	} else if (d <= UINT8_MAX) {
		put8(o, DW_CFA_advance_loc1);
		put8(o, (uint8_t)d);
	} else if (d <= UINT16_MAX) {
		uint16_t v = (uint16_t)d;
		put8(o, DW_CFA_advance_loc2);
		put(o, &v, 2);
	} else {
		uint32_t v = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
		put8(o, DW_CFA_advance_loc4);
		put(o, &v, 4);
	}
	o->loc = to;
}

/* One range of equal SP delta: a new row when the CFA offset changes. */
static void sp_run(void *ctx, uint64_t start, uint64_t end, int32_t delta)
{
	struct out *o = ctx;
	uint64_t cfa = delta > 0 ? (uint64_t)delta + 8 : 8;

	(void)end;
	if (cfa == o->cfa)
		return;
	advance(o, start);
	put8(o, DW_CFA_def_cfa_offset);
	put_uleb(o, cfa);
	o->cfa = cfa;
}

/* The runtime's outermost frames: nothing calls them. */
static int top_frame(const char *name)
{
	static const char *const tops[] = { "runtime.goexit", "runtime.mstart", "runtime.rt0_go" };

	for (size_t i = 0; i < sizeof(tops) / sizeof(tops[0]); i++) {
		size_t len = strlen(tops[i]);

		if (!strncmp(name, tops[i], len) && (name[len] == '\0' || name[len] == '.'))
			return 1;
	}
	return 0;
}

/* The FDE of f, or nothing (the buffer rewound) when its table does not
 * decode. */
static int write_fde(struct out *o, const struct pc_go_pclntab *g, const struct pc_gofunc *f)
{
	size_t start = o->n;
	uint32_t zero = 0;

	put(o, &zero, 4);                               /* length, filled below */
	put(o, &zero, 4);                               /* the CIE at offset 0 */
	put(o, &f->entry, 8);
	put(o, &f->size, 8);
	o->loc = f->entry;
	o->cfa = 8;
	if (top_frame(f->name)) {
		put8(o, DW_CFA_undefined);
		put8(o, REG_RA);
	}
	if (pc_gopclntab_sp_deltas(g->data, g->len, f, g->quantum, sp_run, o) < 0) {
		o->n = start;
		return 0;
	}
	close_entry(o, start);
	return 1;
}

/* The function covering addr, or NULL. */
static const struct pc_gofunc *covering(const struct pc_go_pclntab *g, uint64_t addr)
{
	size_t lo = 0, hi = g->nfuncs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (g->funcs[mid].entry <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	lo--;
	return addr - g->funcs[lo].entry < g->funcs[lo].size ? &g->funcs[lo] : NULL;
}

int pc_unwind_table_from_go(struct pc_unwind_table *t, const struct pc_go_pclntab *g,
			    const uint64_t *vaddrs, size_t n, uint32_t *nfdes)
{
	const struct pc_gofunc *last = NULL;
	struct out o = { 0 };

	*nfdes = 0;
	write_cie(&o);
	for (size_t i = 0; i < n; i++) {
		const struct pc_gofunc *f = covering(g, vaddrs[i]);

		if (!f || f == last || !f->pcsp)          /* sorted: one FDE per function */
			continue;
		last = f;
		*nfdes += (uint32_t)write_fde(&o, g, f);
	}
	if (o.oom || !*nfdes) {
		free(o.b);
		*nfdes = 0;
		return o.oom ? -ENOMEM : -ENOENT;
	}
	t->kind = PC_UNWIND_DEBUG_FRAME;
	t->flags = PC_UNWIND_F_PRUNED | PC_UNWIND_F_SYNTHESIZED;
	t->table = o.b;
	t->table_len = (uint32_t)o.n;
	t->table_addr = 0;
	t->hdr = NULL;
	t->hdr_len = 0;
	return 0;
}
