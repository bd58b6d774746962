/* symbolize.h - turns (module, file offset) and kernel addresses into
 * function names, source lines and inline chains, offline and deterministic.
 *
 * Order of sources for a user frame: symbol data embedded in the capture;
 * local files matched by build-id (the recorded path if its build-id
 * matches, --symfs DIR, /usr/lib/debug/.build-id); debuginfod when
 * DEBUGINFOD_URLS is set. DWARF lines and inlined frames come from libdw
 * when a file with debug info is found. Results are cached by
 * (build-id or path, offset).
 */
#ifndef PERFCAP_SYMBOLIZE_H
#define PERFCAP_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>
#include "perfcap_format.h"

enum sym_source {
	SYM_SRC_NONE = 0,       /* unresolved */
	SYM_SRC_CAPTURE,        /* symbols embedded in the capture */
	SYM_SRC_LOCAL,          /* a local ELF file matched by build-id (or path) */
	SYM_SRC_DEBUGINFOD,     /* fetched through debuginfod */
	SYM_SRC_KERNEL,         /* kernel symbols embedded in the capture */
	SYM_SRC_PERFMAP,        /* JIT symbols from the process's perf map (in the capture) */
};

enum sym_mode {
	SYM_MODE_UNRESOLVED = 0, /* only module+offset is known */
	SYM_MODE_SYMBOL,         /* function name */
	SYM_MODE_LINE,           /* function name and source file:line */
};

/* One resolved frame. Strings are owned by the symbolizer and live until
 * symbolizer_free. */
struct sym_frame {
	const char *function;    /* NULL if unresolved */
	uint64_t    sym_offset;  /* offset of the address inside the function */
	const char *file;        /* source file, NULL if unknown */
	int         line;        /* 0 if unknown */
	int         inlined;     /* 1 for a frame inlined into the next one */
	const char *module;      /* module path (or "[kernel]") */
	uint64_t    module_offset; /* file offset (user) or address (kernel) */
	enum sym_source source;
	enum sym_mode   mode;
};

struct symbolizer_opts {
	const char *symfs;       /* extra root to look for files; may be NULL */
	const char *debug_dir;   /* build-id debug tree; NULL = /usr/lib/debug */
	int         debuginfod;  /* allow debuginfod if DEBUGINFOD_URLS is set */
	int         local_files; /* allow reading local files at all (default 1) */
};

struct symbolizer;

struct symbolizer *symbolizer_new(const struct symbolizer_opts *opts);
void symbolizer_free(struct symbolizer *s);

/* Registers a PC_REC_MODULE record from the capture (user or kernel).
 * Returns 0 or -EINVAL for a malformed record (counted, not fatal). */
int symbolizer_add_module(struct symbolizer *s, const struct pc_rec *module_rec);

/* Resolves a user-space frame given the mapping's path and build-id (may be
 * empty) and the file offset of the address. Fills up to max frames,
 * innermost (most inlined) first, the last one being the real function.
 * Always returns >= 1: an unresolved frame carries module+offset. */
int symbolizer_resolve_user(struct symbolizer *s, const char *path,
			    const uint8_t *build_id, size_t build_id_len,
			    uint64_t file_offset, struct sym_frame *out, int max);

/* Loads the local files of a module (what the first symbolizer_resolve_user
 * of path and build-id would load) without resolving anything, so that
 * reading them can overlap other work: a thread may call it while nothing
 * else uses s. Resolutions and statistics are the same with or without
 * it, given modules are prepared in the order they would be resolved. */
void symbolizer_prepare(struct symbolizer *s, const char *path,
			const uint8_t *build_id, size_t build_id_len);

/* Resolves a kernel address. Always returns 1 frame (unresolved ones carry
 * "[kernel]" + address). */
int symbolizer_resolve_kernel(struct symbolizer *s, uint64_t addr,
			      struct sym_frame *out);

/* Resolves an address of process pid outside every mapped file (JIT code)
 * through the perf map records of the capture. Returns 1 with *out filled
 * (module = "/tmp/perf-PID.map", module_offset = addr), or 0 if no perf
 * map entry covers it. */
int symbolizer_resolve_perfmap(struct symbolizer *s, uint32_t pid, uint64_t addr,
			       struct sym_frame *out);

struct symbolizer_stats {
	uint64_t lookups;        /* calls */
	uint64_t cache_hits;
	uint64_t unresolved;     /* frames returned with SYM_MODE_UNRESOLVED */
	uint64_t bad_modules;    /* malformed module records */
};
void symbolizer_get_stats(const struct symbolizer *s, struct symbolizer_stats *st);

#endif /* PERFCAP_SYMBOLIZE_H */
