/* unwind_prune.c - keeps the FDEs a capture's stacks can need (see
 * unwind_prune.h). Three steps on copies, committed only when all three
 * succeed: list the section's entries and decide each FDE, blank the runs
 * of dropped FDEs into fillers, rebuild the header's search table from the
 * kept ones. Anything unexpected leaves the table whole. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "eh_frame.h"
#include "unwind_prune.h"

#define MAX_CIES 4096

enum item_kind { ITEM_CIE, ITEM_KEEP, ITEM_DROP, ITEM_PAD };

struct item {
	size_t at, end;
	size_t cie_at;            /* FDEs: their CIE */
	enum item_kind kind;
};

struct walk {
	int debug;                /* a .debug_frame */
	struct item *items;
	size_t n, cap;
	struct ehf_cie cies[MAX_CIES];
	size_t ncies;
};

static struct item *push(struct walk *w)
{
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 1024;
		struct item *grown = realloc(w->items, cap * sizeof(*grown));

		if (!grown)
			return NULL;
		w->items = grown;
		w->cap = cap;
	}
	return &w->items[w->n++];
}

static const struct ehf_cie *cie_at(const struct walk *w, size_t at)
{
	for (size_t i = w->ncies; i-- > 0;)
		if (w->cies[i].offset == at)
			return &w->cies[i];
	return NULL;
}

/* Whether some address of the sorted list lies in [start, start + range). */
static int covers(const uint64_t *v, size_t n, uint64_t start, uint64_t range)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid] < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo] - start < range;
}

static int add_cie(struct walk *w, const struct pc_unwind_table *t, const struct ehf_entry *e)
{
	struct ehf_reader r = { t->table + e->body + 4, t->table + e->end, 0 };
	struct ehf_cie *c;

	if (w->ncies == MAX_CIES)
		return -1;
	c = &w->cies[w->ncies];
	c->offset = e->at;
	if (ehf_read_cie(&r, c) < 0)
		return -1;
	w->ncies++;
	return 0;
}

/* Lists the entries and decides each FDE. 0, -1 (leave whole), -ENOMEM. */
static int list_entries(struct walk *w, const struct pc_unwind_table *t, const uint64_t *v,
			size_t n, struct pc_unwind_prune_stats *st)
{
	struct ehf_entry e;
	size_t at = 0;
	int rc;

	while ((rc = ehf_next_entry(t->table, t->table_len, at, &e)) == 1) {
		struct item *it = push(w);
		const struct ehf_cie *c;
		uint64_t start, range;

		if (!it)
			return -ENOMEM;
		*it = (struct item){ .at = e.at, .end = e.end, .kind = ITEM_PAD };
		at = e.end;
		if (e.padding)
			continue;
		if (ehf_is_cie(&e, w->debug)) {
			it->kind = ITEM_CIE;
			if (add_cie(w, t, &e) < 0)
				return -1;
			continue;
		}
		c = cie_at(w, ehf_cie_offset(&e, w->debug));
		if (!c)
			return -1;
		it->cie_at = c->offset;
		st->fdes++;
		it->kind = ehf_fde_range(t->table, t->table_addr, &e, c, &start, &range) < 0 ||
				   covers(v, n, start, range) ? ITEM_KEEP : ITEM_DROP;
		st->kept += it->kind == ITEM_KEEP;
	}
	return rc < 0 ? -1 : 0;
}

/* One filler FDE over [from, to): a length, a pointer to the CIE of the
 * first FDE it replaces, then zeros (location 0, range 0, no augmentation
 * data, DW_CFA_nop). */
static void write_filler(uint8_t *table, int debug, size_t from, size_t to, size_t cie)
{
	uint32_t length = (uint32_t)(to - from - 4);
	uint32_t id = (uint32_t)(debug ? cie : from + 4 - cie);

	memcpy(table + from, &length, 4);
	memcpy(table + from + 4, &id, 4);
	memset(table + from + 8, 0, to - from - 8);
}

static void blank_runs(const struct walk *w, uint8_t *table, struct pc_unwind_prune_stats *st)
{
	for (size_t i = 0; i < w->n;) {
		size_t j = i + 1;

		if (w->items[i].kind != ITEM_DROP) {
			i++;
			continue;
		}
		while (j < w->n && w->items[j].kind == ITEM_DROP &&
		       w->items[j].at == w->items[j - 1].end)
			j++;
		write_filler(table, w->debug, w->items[i].at, w->items[j - 1].end, w->items[i].cie_at);
		st->blanked_bytes += w->items[j - 1].end - w->items[i].at;
		i = j;
	}
}

static const struct item *item_at(const struct walk *w, uint64_t at)
{
	size_t lo = 0, hi = w->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (w->items[mid].at == at)
			return &w->items[mid];
		if (w->items[mid].at < at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The header without the dropped FDEs' entries, into hdr (a copy of the
 * same size). Only the layout linkers write is rebuilt (version 1,
 * eh_frame_ptr pcrel sdata4, count udata4, table datarel sdata4). The new
 * length, or 0 to leave the table whole. */
static size_t rebuild_header(const struct walk *w, const struct pc_unwind_table *t, uint8_t *hdr)
{
	uint32_t count = ehf_hdr_count(t->hdr, t->hdr_len), kept = 0;

	if (count == UINT32_MAX)
		return 0;
	for (uint32_t i = 0; i < count; i++) {
		uint64_t fde = ehf_hdr_fde(t->hdr, t->hdr_addr, i);
		const struct item *it = fde >= t->table_addr ? item_at(w, fde - t->table_addr) : NULL;

		if (!it || (it->kind != ITEM_KEEP && it->kind != ITEM_DROP))
			return 0;
		if (it->kind == ITEM_KEEP)
			memcpy(hdr + 12 + 8 * (size_t)kept++, t->hdr + 12 + 8 * (size_t)i, 8);
	}
	memcpy(hdr, t->hdr, 8);
	memcpy(hdr + 8, &kept, 4);
	return 12 + 8 * (size_t)kept;
}

/* Blanks and rebuilds into copies; swaps them in. 1, 0 or -ENOMEM. */
static int apply(const struct walk *w, struct pc_unwind_table *t, struct pc_unwind_prune_stats *st)
{
	uint8_t *table = malloc(t->table_len), *hdr = t->hdr_len ? calloc(1, t->hdr_len) : NULL;
	size_t hdr_len = 0;

	if (!table || (t->hdr_len && !hdr)) {
		free(table);
		free(hdr);
		return -ENOMEM;
	}
	if (t->hdr_len && !(hdr_len = rebuild_header(w, t, hdr))) {
		free(table);
		free(hdr);
		return 0;
	}
	memcpy(table, t->table, t->table_len);
	blank_runs(w, table, st);
	st->hdr_bytes_cut = t->hdr_len - hdr_len;
	free(t->table);
	t->table = table;
	if (hdr) {
		free(t->hdr);
		t->hdr = hdr;
		t->hdr_len = (uint32_t)hdr_len;
	}
	return 1;
}

int pc_unwind_table_prune(struct pc_unwind_table *t, const uint64_t *vaddrs, size_t n,
			  struct pc_unwind_prune_stats *st)
{
	struct walk *w;
	int rc;

	memset(st, 0, sizeof(*st));
	if ((t->kind != PC_UNWIND_EH_FRAME && t->kind != PC_UNWIND_DEBUG_FRAME) || !t->table_len)
		return 0;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->debug = t->kind == PC_UNWIND_DEBUG_FRAME;
	rc = list_entries(w, t, vaddrs, n, st);
	if (rc == 0)
		rc = st->kept < st->fdes ? apply(w, t, st) : 0;
	else if (rc == -1)
		rc = 0;
	if (rc != 1)
		st->kept = st->fdes;
	free(w->items);
	free(w);
	return rc;
}
