/* gopclntab.h - function names and entry addresses from a Go binary's
 * pclntab (the runtime's own function table, kept by `go build -ldflags=-s`
 * when .symtab goes).
 *
 * The layouts read, by the magic at the start of the table (the runtime's
 * pcHeader, documented in the Go sources runtime/symtab.go and
 * debug/gosym/pclntab.go):
 *   0xfffffffb  Go 1.2-1.15   nfunc, then {entry, funcoff} pointer pairs
 *   0xfffffffa  Go 1.16-1.17  header with table offsets; pointer pairs
 *   0xfffffff0  Go 1.18-1.19  header adds textStart; {entryoff, funcoff} u32
 *   0xfffffff1  Go 1.20+      as 1.18 (only the _func record grew)
 * Nothing in the table is trusted: every offset is checked against the
 * table's size before it is read, counts are capped, and a table that does
 * not hold together is refused with a reason.
 */
#ifndef PERFCAP_GOPCLNTAB_H
#define PERFCAP_GOPCLNTAB_H

#include <stddef.h>
#include <stdint.h>

#define PC_GOPCLNTAB_MAX_FUNCS (1u << 22) /* 4M functions: far above any binary */
#define PC_GOPCLNTAB_MAX_NAME  4096       /* longer names are skipped */

/* One function: entry address (ELF virtual address), size up to the next
 * function's entry, its name (NUL-terminated, inside the table) and where
 * its SP-delta table (the runtime's pcsp) starts in the table (0: none). */
struct pc_gofunc {
	uint64_t    entry;
	uint64_t    size;
	const char *name;
	uint64_t    pcsp;
};

/* How the table was read. */
struct pc_gopclntab_info {
	uint32_t magic;
	const char *version;   /* "1.2", "1.16", "1.18", "1.20" */
	uint8_t  ptr_size;
	uint8_t  quantum;      /* instruction size quantum of the pc deltas */
	uint64_t text_start;   /* base of the entry offsets (1.18+) */
	uint32_t nfunc;        /* functions in the table */
	uint32_t skipped;      /* of those, without a usable name */
};

/* 1 if data starts with a pclntab header this parser knows (magic, pad
 * bytes, instruction size quantum, pointer size); 0 otherwise. */
int pc_gopclntab_header_ok(const uint8_t *data, size_t len);

/* Reads the table at data (len bytes, the whole section or the rest of the
 * segment it lies in). text_start is the address the 1.18+ entry offsets
 * are relative to when the header's own field is 0 (a position-independent
 * binary whose field is filled by a relocation): the caller finds it (the
 * relocation's addend, or .text's address); 0 if unknown. On success *out
 * gets a malloc'd array of *nout functions sorted by entry (names point into
 * data) and 0 is returned; otherwise -EINVAL (malformed: why gets a
 * reason), -ENOTSUP (unknown magic) or -ENOMEM. */
int pc_gopclntab_parse(const uint8_t *data, size_t len, uint64_t text_start,
		       struct pc_gofunc **out, size_t *nout,
		       struct pc_gopclntab_info *info, char *why, size_t whylen);

/* Calls run(ctx, start, end, delta) for each range of f's code with the
 * same stack pointer delta (bytes below the entry's sp; the CFA is sp +
 * delta + 8 on x86-64), decoding the runtime's pcvalue encoding (zig-zag
 * varint value deltas, varint pc deltas times quantum) from data. Stops
 * at the table's end, at f's end, or after 65536 ranges. 0, or -EINVAL for
 * a table that runs past data or backwards. */
int pc_gopclntab_sp_deltas(const uint8_t *data, size_t len, const struct pc_gofunc *f,
			   uint8_t quantum,
			   void (*run)(void *ctx, uint64_t start, uint64_t end, int32_t delta),
			   void *ctx);

#endif /* PERFCAP_GOPCLNTAB_H */
