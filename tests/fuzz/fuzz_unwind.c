/* fuzz_unwind.c - libFuzzer target: the offline unwinder (analyze/unwind/)
 * on hostile call frame information and hostile stack copies, as a capture
 * can carry them (PC_REC_UNWIND tables, USTACK windows). Input layout:
 *
 *   u64 table_addr, u16 table_len, table bytes (.eh_frame; bit 63 of
 *   table_addr: a .debug_frame instead, without header; bit 62: pruned
 *   first, by the recorder's common/unwind_prune.c, to the FDEs covering
 *   the registers' values, as if they were the candidates),
 *   u64 hdr_addr, u16 hdr_len, header bytes (.eh_frame_hdr),
 *   u64 regs[PC_UREG_NR] (missing bytes are 0), the rest: the stack window
 *   at regs[PC_UREG_SP].
 *
 * The table is one module mapped at its own addresses; every pc inside
 * [table_addr - 1 MiB, table_addr + 1 MiB) is looked up in it. The walk
 * must end (bounded depth, growing CFA) and never read outside the window. */
#include <stdlib.h>
#include <string.h>

#include "common/unwind_prune.h"
#include "unwind/unwind.h"

#define MODULE_SPAN (1u << 20)
#define MAX_FRAMES  128

struct module {
	struct unwind_cfi *cfi;
	uint64_t lo, hi;
};

static int find(void *ctx, uint64_t pc, struct unwind_cfi **cfi, uint64_t *vaddr)
{
	const struct module *m = ctx;

	if (pc < m->lo || pc >= m->hi)
		return -1;
	*cfi = m->cfi;
	*vaddr = pc;
	return 0;
}

/* A u16 length, then that many bytes (cut to what is left): a copy. */
static uint8_t *take_bytes(const uint8_t **p, size_t *left, uint32_t *len_out)
{
	uint16_t len = 0;
	uint8_t *copy;

	if (*left >= 2) {
		memcpy(&len, *p, 2);
		*p += 2;
		*left -= 2;
	}
	if (len > *left)
		len = (uint16_t)*left;
	copy = malloc(len ? len : 1);
	if (copy)
		memcpy(copy, *p, len);
	*p += len;
	*left -= len;
	*len_out = len;
	return copy;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t take_u64(const uint8_t **p, size_t *left)
{
	uint64_t v = 0;
	size_t n = *left < 8 ? *left : 8;

	memcpy(&v, *p, n);
	*p += n;
	*left -= n;
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pc_segment seg = { 0 };
	struct pc_unwind_table t = { .kind = PC_UNWIND_EH_FRAME, .segs = &seg, .nsegs = 1 };
	uint64_t regs[PC_UREG_NR], ips[MAX_FRAMES];
	struct unwind_result res;
	struct module m = { 0 };
	struct unwind_memory mem;
	const uint8_t *p = data;
	size_t left = size;
	const char *why;

	uint64_t addr = take_u64(&p, &left), cand[PC_UREG_NR];
	struct pc_unwind_prune_stats st;

	t.table_addr = addr & 0x7fffffffffffull;
	if (addr >> 63)
		t.kind = PC_UNWIND_DEBUG_FRAME;
	t.table = take_bytes(&p, &left, &t.table_len);
	t.hdr_addr = take_u64(&p, &left) & 0x7fffffffffffull;
	t.hdr = take_bytes(&p, &left, &t.hdr_len);
	if (!t.table || !t.hdr) {
		free(t.table);
		free(t.hdr);
		return 0;
	}
	seg.vaddr = t.table_addr > MODULE_SPAN ? t.table_addr - MODULE_SPAN : 0;
	seg.offset = 0;
	seg.filesz = seg.memsz = 2ull * MODULE_SPAN;
	for (int i = 0; i < PC_UREG_NR; i++)
		regs[i] = take_u64(&p, &left);
	if (t.kind == PC_UNWIND_DEBUG_FRAME)
		t.hdr_len = 0;
	if (addr >> 62 & 1) {
		memcpy(cand, regs, sizeof(cand));
		qsort(cand, PC_UREG_NR, sizeof(cand[0]), cmp_u64);
		(void)pc_unwind_table_prune(&t, cand, PC_UREG_NR, &st);
	}
	m.lo = seg.vaddr;
	m.hi = seg.vaddr + seg.memsz;
	m.cfi = unwind_cfi_new(&t, &why);
	mem = (struct unwind_memory){ .base = regs[PC_UREG_SP], .bytes = p, .len = left };
	if (m.cfi)
		unwind_stack(regs, &mem, find, &m, ips, MAX_FRAMES, &res);
	unwind_cfi_free(m.cfi);
	free(t.table);
	free(t.hdr);
	return 0;
}
