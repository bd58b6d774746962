/* symbolize_internal.h - declarations shared by the symbolizer's source
 * files (symbolize.c, symbolize_cache.c, symbolize_files.c,
 * symbolize_dwarf.c). PRIVATE to those files: nothing else may include it;
 * the public interface is symbolize.h.
 */
#ifndef PERFCAP_SYMBOLIZE_INTERNAL_H
#define PERFCAP_SYMBOLIZE_INTERNAL_H

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef HAVE_DEBUGINFOD
#include <elfutils/debuginfod.h>
#endif

#include "common/elf_module.h"
#include "symbolize.h"

#define DEFAULT_DEBUG_DIR "/usr/lib/debug"
#define MAX_LOCAL_FILES   6   /* build-id tree, symfs, path, 2 debuglinks, debuginfod */
#define MAX_CHAIN         64  /* deepest inline chain kept for one address */
#define KERNEL_MODULE_ID  0   /* cache key of kernel addresses; user ids start at 1 */
#define UNKNOWN_MODULE    "[unknown]"
#define KERNEL_MODULE     "[kernel]"

/* ---- string-keyed hash map -------------------------------------------- */

struct str_slot {
	char    *key;     /* owned; NULL = empty slot */
	void    *value;
	uint64_t hash;
};

struct str_map {
	struct str_slot *slots;
	size_t cap;       /* power of two, or 0 */
	size_t count;
};

/* ---- result cache: (module id, offset) -> frames ----------------------- */

struct cache_slot {
	uint64_t offset;
	uint32_t module_id;
	uint32_t used;
	uint32_t first;      /* index into result_cache.frames */
	uint32_t nframes;
};

struct result_cache {
	struct cache_slot *slots;
	size_t cap, count;
	struct sym_frame *frames;
	size_t nframes, frames_cap;
};

/* ---- modules ----------------------------------------------------------- */

/* A PC_REC_MODULE record from the capture. Records with the same build-id
 * (or path) are chained in registration order: a capture may store the
 * symbols of one module in several records. */
struct embedded_module {
	struct pc_elf_module elf;
	struct embedded_module *next_same_build_id;
	struct embedded_module *next_same_path;
};

struct function_range;

/* Address ranges of every DWARF subprogram of a file, sorted (built on
 * first use). */
struct function_index {
	struct function_range *ranges;
	size_t n, cap;
	int built;
};

/* A local ELF file that belongs to a module state. */
struct local_file {
	struct pc_elf_module elf;
	enum sym_source source;
	dev_t dev;
	ino_t ino;
	int   fd;             /* open only while dwarf is */
	Elf  *elf_handle;
	Dwarf *dwarf;         /* non-NULL if the file has usable DWARF */
	struct function_index functions;
	int   alt_fd;         /* the dwz file we attached, if any */
	Elf  *alt_elf;
	Dwarf *alt_dwarf;
};

struct module_state {
	uint32_t id;
	char    *path;        /* first path seen for this key, for the file search */
	uint8_t  build_id[PC_BUILD_ID_MAX];
	uint8_t  build_id_len;
	const struct embedded_module *embedded; /* chain head, may be NULL */
	int      embedded_by_path;  /* which chain embedded starts */
	uint64_t embedded_generation;
	struct local_file files[MAX_LOCAL_FILES];
	int      nfiles;
	struct local_file *dwarf_file; /* first file with DWARF, or NULL */
};

struct symbolizer {
	char *symfs;
	char *debug_dir;
	int   local_files;
	int   debuginfod;
	struct str_map states_by_key;     /* "b:<hex>" or "p:<path>" -> state */
	struct module_state **states;
	size_t nstates, states_cap;
	struct str_map embedded_by_build_id; /* hex -> first embedded_module */
	struct str_map embedded_by_path;     /* path -> first embedded_module */
	struct embedded_module **embedded;
	size_t nembedded, embedded_cap;
	struct embedded_module **kernel;
	size_t nkernel, kernel_cap;
	struct embedded_module **perfmaps; /* JIT symbols, one record per process */
	size_t nperfmaps, perfmaps_cap;
	uint64_t generation;              /* bumped by each added module */
	struct str_map paths;             /* interned module paths */
	struct result_cache cache;
	struct symbolizer_stats stats;
#ifdef HAVE_DEBUGINFOD
	debuginfod_client *debuginfod_client;
#endif
};

/* ---- result cache and string interning (symbolize_cache.c) ----------------- */

void *str_map_get(const struct str_map *map, const char *key);
struct str_slot *str_map_upsert(struct str_map *map, const char *key);
const char *str_map_intern(struct str_map *map, const char *s);
void str_map_free(struct str_map *map);
const struct cache_slot *cache_get(const struct result_cache *c,
				   uint32_t module_id, uint64_t offset);
int cache_put(struct result_cache *c, uint32_t module_id,
	      uint64_t offset, const struct sym_frame *frames, int n);
void cache_clear(struct result_cache *c);
void cache_free(struct result_cache *c);

/* ---- local files (symbolize_files.c) --------------------------------------- */

void search_files(struct symbolizer *s, struct module_state *st);
void local_file_close(struct local_file *f);

/* ---- DWARF frames (symbolize_dwarf.c) -------------------------------------- */

int dwarf_frames(struct local_file *f, uint64_t vaddr,
		 struct sym_frame *out, int max);

/* ---- shared helpers (symbolize.c) ------------------------------------------ */

void build_id_to_hex(const uint8_t *id, size_t len, char *hex);

#endif /* PERFCAP_SYMBOLIZE_INTERNAL_H */
