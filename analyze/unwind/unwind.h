/* unwind.h - unwinds a copied user stack (registers + a window of stack
 * memory) with a module's call frame information (.eh_frame), offline.
 *
 * The caller says, for each pc, which module's CFI covers it and at which
 * ELF virtual address (unwind_find_fn); the unwinder evaluates the CFA and
 * register rules (x86-64: rbx, rbp, rsp, r12-r15, return address) against
 * the saved registers and the window, and stops with a reason. Hostile
 * input (truncated or looping CFI, absurd offsets, an empty window) stops
 * the walk with a reason; it never reads outside the window and always
 * ends (the CFA must grow, the depth is bounded).
 */
#ifndef ANALYZE_UNWIND_H
#define ANALYZE_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "perfcap_format.h"
#include "common/unwind_table.h"

/* Why a walk stopped. UNWIND_END is a complete stack: the outermost frame
 * says its return address is undefined (_start, clone, start_thread) or
 * returns to 0. */
enum unwind_stop {
	UNWIND_END = 0,       /* complete */
	UNWIND_WINDOW,        /* needed memory outside the copied window (cut) */
	UNWIND_NO_MODULE,     /* pc in no mapping, or a module without tables */
	UNWIND_NO_CFI,        /* the module's CFI does not cover pc */
	UNWIND_BAD_RULE,      /* a rule that cannot be evaluated (unknown register,
			       * unsupported or malformed expression) */
	UNWIND_LOOP,          /* the CFA did not grow: looping or corrupt CFI */
	UNWIND_DEPTH,         /* the depth limit */
	UNWIND_NO_STACK,      /* the copy holds no stack bytes (the process was
			       * exiting, or sp pointed at an unreadable page):
			       * the ip alone, not a window too small */
	UNWIND_STOP_COUNT,
};

const char *unwind_stop_name(enum unwind_stop stop);

/* A module's CFI, built once from its PC_REC_UNWIND table. */
struct unwind_cfi;

/* NULL if the table cannot be used (debug_frame only, malformed, out of
 * memory); *why says which. The table must outlive the result. */
struct unwind_cfi *unwind_cfi_new(const struct pc_unwind_table *t, const char **why);
void unwind_cfi_free(struct unwind_cfi *c);

/* Makes next the table asked when c has no row for a pc (a cgo binary:
 * its .eh_frame covers the C code, a table made from its pclntab the Go
 * code). c owns next from then on; NULL is ignored. */
void unwind_cfi_chain(struct unwind_cfi *c, struct unwind_cfi *next);

/* 1 if lookups go through the module's .eh_frame_hdr (it points only at
 * checked entries), 0 if libdw scans .eh_frame in order. */
int unwind_cfi_uses_header(const struct unwind_cfi *c);

/* For a runtime pc: the CFI covering it and the ELF virtual address to look
 * up. Returns 0, or -1 when pc is in no mapping (*cfi untouched) or in a
 * module without usable tables (*cfi NULL). */
typedef int (*unwind_find_fn)(void *ctx, uint64_t pc, struct unwind_cfi **cfi,
			      uint64_t *vaddr);

/* The stack window: memory at base .. base + len. */
struct unwind_memory {
	uint64_t base;
	const uint8_t *bytes;
	size_t len;
};

struct unwind_result {
	uint32_t n;               /* ips written, innermost first */
	enum unwind_stop stop;
	uint64_t stop_pc;         /* the pc the walk stopped at (0 if none) */
	uint32_t fp_steps;        /* frames crossed by the frame-pointer fallback */
};

/* Walks from regs (PC_UREG_*) and writes at most max ips. */
void unwind_stack(const uint64_t regs[PC_UREG_NR], const struct unwind_memory *mem,
		  unwind_find_fn find, void *ctx, uint64_t *ips, uint32_t max,
		  struct unwind_result *out);

#endif /* ANALYZE_UNWIND_H */
