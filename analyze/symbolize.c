/* symbolize.c - offline symbolization of user frames (module + file offset)
 * and kernel addresses.
 *
 * Each user module (keyed by build-id, or by path when it has none) gets a
 * module_state, built once: the capture's embedded PC_REC_MODULE records for
 * that key, and the local files whose build-id matches (the build-id debug
 * tree, --symfs, the recorded path, its .gnu_debuglink file, debuginfod).
 * A frame is resolved with DWARF (lines and inline chain, through a sorted
 * index of subprogram ranges built once per file) when one of those files
 * has debug info, else with the best symbol table that covers it.
 * Every answer, unresolved ones included, is cached by (module, offset) in
 * an open-addressing hash table, so a capture costs what its unique
 * addresses cost. All strings handed out point into data the symbolizer
 * keeps until symbolizer_free. Not thread-safe.
 */
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

#include "elf_module.h"
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

static uint64_t hash_string(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	while (*s != '\0') {
		h ^= (uint8_t)*s++;
		h *= 0x100000001b3ull;
	}
	return h;
}

static struct str_slot *str_map_find_slot(const struct str_map *map,
					  const char *key, uint64_t hash)
{
	size_t mask = map->cap - 1, i = hash & mask;

	while (map->slots[i].key != NULL) {
		if (map->slots[i].hash == hash && strcmp(map->slots[i].key, key) == 0)
			break;
		i = (i + 1) & mask;
	}
	return &map->slots[i];
}

static void *str_map_get(const struct str_map *map, const char *key)
{
	struct str_slot *slot;

	if (map->cap == 0)
		return NULL;
	slot = str_map_find_slot(map, key, hash_string(key));
	return slot->key != NULL ? slot->value : NULL;
}

static int str_map_grow(struct str_map *map)
{
	size_t new_cap = map->cap ? map->cap * 2 : 64, i;
	struct str_map bigger = { calloc(new_cap, sizeof(struct str_slot)),
				  new_cap, map->count };

	if (bigger.slots == NULL)
		return -ENOMEM;
	for (i = 0; i < map->cap; i++) {
		struct str_slot *old = &map->slots[i];

		if (old->key != NULL)
			*str_map_find_slot(&bigger, old->key, old->hash) = *old;
	}
	free(map->slots);
	*map = bigger;
	return 0;
}

/* The slot of key, inserted (value NULL) if missing. NULL if out of memory. */
static struct str_slot *str_map_upsert(struct str_map *map, const char *key)
{
	uint64_t hash = hash_string(key);
	struct str_slot *slot;

	if ((map->count + 1) * 2 > map->cap && str_map_grow(map) != 0)
		return NULL;
	slot = str_map_find_slot(map, key, hash);
	if (slot->key != NULL)
		return slot;
	slot->key = strdup(key);
	if (slot->key == NULL)
		return NULL;
	slot->hash = hash;
	slot->value = NULL;
	map->count++;
	return slot;
}

/* A stable copy of s, shared by all equal strings. */
static const char *str_map_intern(struct str_map *map, const char *s)
{
	struct str_slot *slot = str_map_upsert(map, s);

	return slot != NULL ? slot->key : NULL;
}

static void str_map_free(struct str_map *map)
{
	size_t i;

	for (i = 0; i < map->cap; i++)
		free(map->slots[i].key);
	free(map->slots);
	memset(map, 0, sizeof(*map));
}

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

static uint64_t hash_location(uint32_t module_id, uint64_t offset)
{
	uint64_t h = offset ^ ((uint64_t)module_id * 0x9e3779b97f4a7c15ull);

	h ^= h >> 33; /* murmur3 finalizer */
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

static struct cache_slot *cache_find_slot(const struct result_cache *c,
					  uint32_t module_id, uint64_t offset)
{
	size_t mask = c->cap - 1, i = hash_location(module_id, offset) & mask;

	while (c->slots[i].used) {
		if (c->slots[i].module_id == module_id &&
		    c->slots[i].offset == offset)
			break;
		i = (i + 1) & mask;
	}
	return &c->slots[i];
}

static const struct cache_slot *cache_get(const struct result_cache *c,
					  uint32_t module_id, uint64_t offset)
{
	const struct cache_slot *slot;

	if (c->cap == 0)
		return NULL;
	slot = cache_find_slot(c, module_id, offset);
	return slot->used ? slot : NULL;
}

static int cache_grow(struct result_cache *c)
{
	size_t new_cap = c->cap ? c->cap * 2 : 1024, i;
	struct cache_slot *old = c->slots;
	size_t old_cap = c->cap;

	c->slots = calloc(new_cap, sizeof(*c->slots));
	if (c->slots == NULL) {
		c->slots = old;
		return -ENOMEM;
	}
	c->cap = new_cap;
	for (i = 0; i < old_cap; i++) {
		if (old[i].used)
			*cache_find_slot(c, old[i].module_id, old[i].offset) = old[i];
	}
	free(old);
	return 0;
}

static int cache_reserve_frames(struct result_cache *c, size_t n)
{
	size_t new_cap = c->frames_cap ? c->frames_cap : 1024;
	struct sym_frame *frames;

	if (c->nframes + n <= c->frames_cap)
		return 0;
	while (new_cap < c->nframes + n)
		new_cap *= 2;
	if (new_cap > UINT32_MAX)
		return -ENOMEM;
	frames = realloc(c->frames, new_cap * sizeof(*frames));
	if (frames == NULL)
		return -ENOMEM;
	c->frames = frames;
	c->frames_cap = new_cap;
	return 0;
}

static int cache_put(struct result_cache *c, uint32_t module_id,
		     uint64_t offset, const struct sym_frame *frames, int n)
{
	struct cache_slot *slot;

	if ((c->count + 1) * 2 > c->cap && cache_grow(c) != 0)
		return -ENOMEM;
	if (cache_reserve_frames(c, (size_t)n) != 0)
		return -ENOMEM;
	slot = cache_find_slot(c, module_id, offset);
	slot->used = 1;
	slot->module_id = module_id;
	slot->offset = offset;
	slot->first = (uint32_t)c->nframes;
	slot->nframes = (uint32_t)n;
	memcpy(c->frames + c->nframes, frames, (size_t)n * sizeof(*frames));
	c->nframes += (size_t)n;
	c->count++;
	return 0;
}

static void cache_clear(struct result_cache *c)
{
	if (c->slots != NULL)
		memset(c->slots, 0, c->cap * sizeof(*c->slots));
	c->count = 0;
	c->nframes = 0;
}

static void cache_free(struct result_cache *c)
{
	free(c->slots);
	free(c->frames);
	memset(c, 0, sizeof(*c));
}

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
	uint64_t generation;              /* bumped by each added module */
	struct str_map paths;             /* interned module paths */
	struct result_cache cache;
	struct symbolizer_stats stats;
#ifdef HAVE_DEBUGINFOD
	debuginfod_client *debuginfod_client;
#endif
};

/* array with room for element n: the same or a moved array, or NULL (the
 * old one still valid) when out of memory. */
static void *room_for_one(void *array, size_t n, size_t *cap, size_t elem_size)
{
	size_t new_cap;
	void *bigger;

	if (n < *cap)
		return array;
	new_cap = *cap ? *cap * 2 : 16;
	bigger = realloc(array, new_cap * elem_size);
	if (bigger != NULL)
		*cap = new_cap;
	return bigger;
}

static int append_state(struct symbolizer *s, struct module_state *st)
{
	struct module_state **states = room_for_one(s->states, s->nstates,
						    &s->states_cap,
						    sizeof(*states));

	if (states == NULL)
		return -ENOMEM;
	s->states = states;
	s->states[s->nstates++] = st;
	return 0;
}

static int append_embedded(struct symbolizer *s, struct embedded_module *em)
{
	struct embedded_module **all = room_for_one(s->embedded, s->nembedded,
						    &s->embedded_cap,
						    sizeof(*all));

	if (all == NULL)
		return -ENOMEM;
	s->embedded = all;
	s->embedded[s->nembedded++] = em;
	return 0;
}

static int append_kernel(struct symbolizer *s, struct embedded_module *em)
{
	struct embedded_module **kernel = room_for_one(s->kernel, s->nkernel,
						       &s->kernel_cap,
						       sizeof(*kernel));

	if (kernel == NULL)
		return -ENOMEM;
	s->kernel = kernel;
	s->kernel[s->nkernel++] = em;
	return 0;
}

static void build_id_to_hex(const uint8_t *id, size_t len, char *hex)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < len; i++) {
		hex[2 * i] = digits[id[i] >> 4];
		hex[2 * i + 1] = digits[id[i] & 0xf];
	}
	hex[2 * len] = '\0';
}

/* ---- symbolizer lifetime ------------------------------------------------ */

struct symbolizer *symbolizer_new(const struct symbolizer_opts *opts)
{
	struct symbolizer *s = calloc(1, sizeof(*s));
	const char *symfs = NULL, *debug_dir = DEFAULT_DEBUG_DIR;

	if (s == NULL)
		return NULL;
	s->local_files = opts ? opts->local_files : 1;
	s->debuginfod = opts ? opts->debuginfod : 0;
	if (opts && opts->symfs && opts->symfs[0])
		symfs = opts->symfs;
	if (opts && opts->debug_dir && opts->debug_dir[0])
		debug_dir = opts->debug_dir;
	s->symfs = symfs ? strdup(symfs) : NULL;
	s->debug_dir = strdup(debug_dir);
	if (s->debug_dir == NULL || (symfs && s->symfs == NULL)) {
		symbolizer_free(s);
		return NULL;
	}
	elf_version(EV_CURRENT);
	return s;
}

static void local_file_close(struct local_file *f)
{
	free(f->functions.ranges);
	if (f->dwarf != NULL)
		dwarf_end(f->dwarf);
	if (f->elf_handle != NULL)
		elf_end(f->elf_handle);
	if (f->fd >= 0)
		close(f->fd);
	if (f->alt_dwarf != NULL)
		dwarf_end(f->alt_dwarf);
	if (f->alt_elf != NULL)
		elf_end(f->alt_elf);
	if (f->alt_fd >= 0)
		close(f->alt_fd);
	pc_elf_module_free(&f->elf);
}

static void module_state_free(struct module_state *st)
{
	int i;

	for (i = 0; i < st->nfiles; i++)
		local_file_close(&st->files[i]);
	free(st->path);
	free(st);
}

void symbolizer_free(struct symbolizer *s)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->nstates; i++)
		module_state_free(s->states[i]);
	for (i = 0; i < s->nembedded; i++) {
		pc_elf_module_free(&s->embedded[i]->elf);
		free(s->embedded[i]);
	}
#ifdef HAVE_DEBUGINFOD
	if (s->debuginfod_client != NULL)
		debuginfod_end(s->debuginfod_client);
#endif
	free(s->states);
	free(s->embedded);
	free(s->kernel);
	str_map_free(&s->states_by_key);
	str_map_free(&s->embedded_by_build_id);
	str_map_free(&s->embedded_by_path);
	str_map_free(&s->paths);
	cache_free(&s->cache);
	free(s->symfs);
	free(s->debug_dir);
	free(s);
}

void symbolizer_get_stats(const struct symbolizer *s, struct symbolizer_stats *st)
{
	*st = s->stats;
}

/* ---- embedded modules --------------------------------------------------- */

/* Appends em at the end of the chain stored under key. */
static int chain_embedded(struct str_map *map, const char *key,
			  struct embedded_module *em, int by_path)
{
	struct str_slot *slot = str_map_upsert(map, key);
	struct embedded_module *last;

	if (slot == NULL)
		return -ENOMEM;
	if (slot->value == NULL) {
		slot->value = em;
		return 0;
	}
	last = slot->value;
	if (by_path) {
		while (last->next_same_path != NULL)
			last = last->next_same_path;
		last->next_same_path = em;
	} else {
		while (last->next_same_build_id != NULL)
			last = last->next_same_build_id;
		last->next_same_build_id = em;
	}
	return 0;
}

static int index_embedded(struct symbolizer *s, struct embedded_module *em)
{
	char hex[2 * PC_BUILD_ID_MAX + 1];
	int err = 0;

	if (em->elf.kind == PC_MODULE_KERNEL)
		return append_kernel(s, em);
	if (em->elf.build_id_len > 0) {
		build_id_to_hex(em->elf.build_id, em->elf.build_id_len, hex);
		err = chain_embedded(&s->embedded_by_build_id, hex, em, 0);
	}
	if (err == 0 && em->elf.path != NULL && em->elf.path[0] != '\0')
		err = chain_embedded(&s->embedded_by_path, em->elf.path, em, 1);
	return err;
}

int symbolizer_add_module(struct symbolizer *s, const struct pc_rec *module_rec)
{
	struct embedded_module *em = calloc(1, sizeof(*em));
	int err;

	if (em == NULL)
		return -ENOMEM;
	err = pc_elf_module_from_rec(&em->elf, module_rec);
	if (err != 0) {
		free(em);
		s->stats.bad_modules++;
		return err;
	}
	err = append_embedded(s, em);
	if (err != 0) {
		pc_elf_module_free(&em->elf);
		free(em);
		return err;
	}
	err = index_embedded(s, em);
	/* Earlier answers may change: forget them. */
	s->generation++;
	cache_clear(&s->cache);
	return err;
}

static const struct embedded_module *
next_embedded(const struct module_state *st, const struct embedded_module *em)
{
	return st->embedded_by_path ? em->next_same_path : em->next_same_build_id;
}

/* Attaches the capture's records for this module (again, if modules were
 * added since the last look). */
static void refresh_embedded(struct symbolizer *s, struct module_state *st)
{
	char hex[2 * PC_BUILD_ID_MAX + 1];

	if (st->embedded_generation == s->generation)
		return;
	st->embedded_generation = s->generation;
	if (st->build_id_len > 0) {
		build_id_to_hex(st->build_id, st->build_id_len, hex);
		st->embedded = str_map_get(&s->embedded_by_build_id, hex);
		st->embedded_by_path = 0;
	} else {
		st->embedded = str_map_get(&s->embedded_by_path, st->path);
		st->embedded_by_path = 1;
	}
}

/* ---- local files -------------------------------------------------------- */

static int build_id_matches(const struct module_state *st, int fd)
{
	uint8_t id[PC_BUILD_ID_MAX];
	int len;

	if (st->build_id_len == 0)
		return 1; /* nothing recorded to compare: the path decides */
	len = pc_elf_read_build_id_fd(fd, id);
	return len == st->build_id_len && memcmp(id, st->build_id, (size_t)len) == 0;
}

static int already_loaded(const struct module_state *st, const struct stat *sb)
{
	int i;

	for (i = 0; i < st->nfiles; i++) {
		if (st->files[i].dev == sb->st_dev && st->files[i].ino == sb->st_ino)
			return 1;
	}
	return 0;
}

static int open_dwarf(struct local_file *f, int fd)
{
	f->elf_handle = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (f->elf_handle == NULL)
		return -EINVAL;
	f->dwarf = dwarf_begin_elf(f->elf_handle, DWARF_C_READ, NULL);
	if (f->dwarf == NULL) {
		elf_end(f->elf_handle);
		f->elf_handle = NULL;
		return -EINVAL;
	}
	f->fd = fd;
	return 0;
}

static int open_alt_dwarf(struct local_file *f, int fd)
{
	f->alt_elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (f->alt_elf == NULL)
		return -EINVAL;
	f->alt_dwarf = dwarf_begin_elf(f->alt_elf, DWARF_C_READ, NULL);
	if (f->alt_dwarf == NULL) {
		elf_end(f->alt_elf);
		f->alt_elf = NULL;
		return -EINVAL;
	}
	f->alt_fd = fd;
	dwarf_setalt(f->dwarf, f->alt_dwarf);
	return 0;
}

/* dwz moves DWARF shared by several files into one file that each names
 * in .gnu_debugaltlink. libdw finds it under /usr/lib/debug by itself;
 * look in the configured debug directory by its build-id too. */
static void attach_alt_dwarf(const struct symbolizer *s, struct local_file *f)
{
	char hex[2 * PC_BUILD_ID_MAX + 1], *path;
	uint8_t found[PC_BUILD_ID_MAX];
	const void *id;
	const char *name;
	ssize_t len = dwelf_dwarf_gnu_debugaltlink(f->dwarf, &name, &id);
	int fd;

	if (len < 2 || len > PC_BUILD_ID_MAX || dwarf_getalt(f->dwarf) != NULL)
		return;
	build_id_to_hex(id, (size_t)len, hex);
	if (asprintf(&path, "%s/.build-id/%.2s/%s.debug", s->debug_dir, hex,
		     hex + 2) < 0)
		return;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	free(path);
	if (fd < 0)
		return;
	if (pc_elf_read_build_id_fd(fd, found) != len ||
	    memcmp(found, id, (size_t)len) != 0 || open_alt_dwarf(f, fd) != 0)
		close(fd);
}

/* Loads an open file into the state if its build-id matches. Takes fd. */
static void add_local_fd(const struct symbolizer *s, struct module_state *st,
			 int fd, const char *path, enum sym_source source)
{
	struct local_file *f = &st->files[st->nfiles];
	struct stat sb;

	if (st->nfiles == MAX_LOCAL_FILES || fstat(fd, &sb) != 0 ||
	    !S_ISREG(sb.st_mode) || already_loaded(st, &sb) ||
	    !build_id_matches(st, fd) ||
	    pc_elf_module_load_fd(&f->elf, fd, path, NULL, 0) != 0) {
		close(fd);
		return;
	}
	f->source = source;
	f->dev = sb.st_dev;
	f->ino = sb.st_ino;
	f->fd = -1;
	f->alt_fd = -1;
	if (f->elf.has_debug_info && st->dwarf_file == NULL &&
	    open_dwarf(f, fd) == 0) {
		attach_alt_dwarf(s, f);
		st->dwarf_file = f;
	}
	if (f->fd < 0)
		close(fd);
	st->nfiles++;
}

static void add_local_path(const struct symbolizer *s, struct module_state *st,
			   const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0)
		add_local_fd(s, st, fd, path, SYM_SRC_LOCAL);
}

static void try_build_id_tree(struct symbolizer *s, struct module_state *st)
{
	char hex[2 * PC_BUILD_ID_MAX + 1];
	char *path;

	if (st->build_id_len < 2)
		return;
	build_id_to_hex(st->build_id, st->build_id_len, hex);
	if (asprintf(&path, "%s/.build-id/%.2s/%s.debug", s->debug_dir, hex,
		     hex + 2) < 0)
		return;
	add_local_path(s, st, path);
	free(path);
}

static void try_symfs(struct symbolizer *s, struct module_state *st)
{
	char *path;

	if (s->symfs == NULL || st->path[0] == '\0')
		return;
	if (asprintf(&path, "%s%s%s", s->symfs, st->path[0] == '/' ? "" : "/",
		     st->path) < 0)
		return;
	add_local_path(s, st, path);
	free(path);
}

/* The file name in the .gnu_debuglink section of f, or NULL. malloc'd. */
static char *read_debuglink(const struct local_file *f)
{
	int fd = open(f->elf.path, O_RDONLY | O_CLOEXEC);
	Elf *elf;
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	size_t shstrndx;
	char *link = NULL;

	if (fd < 0)
		return NULL;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf != NULL && elf_getshdrstrndx(elf, &shstrndx) == 0) {
		while (link == NULL && (scn = elf_nextscn(elf, scn)) != NULL) {
			const char *name;
			Elf_Data *data;

			if (gelf_getshdr(scn, &shdr) == NULL)
				continue;
			name = elf_strptr(elf, shstrndx, shdr.sh_name);
			if (name == NULL || strcmp(name, ".gnu_debuglink") != 0)
				continue;
			data = elf_getdata(scn, NULL);
			if (data != NULL && data->d_size > 0 &&
			    memchr(data->d_buf, '\0', data->d_size) != NULL)
				link = strdup(data->d_buf);
		}
	}
	elf_end(elf);
	close(fd);
	return link;
}

/* gdb's places for a debuglink: next to the binary, in .debug/ next to
 * it, and under the debug directory. */
static void try_debuglink(struct symbolizer *s, struct module_state *st,
			  const struct local_file *binary)
{
	char *link = read_debuglink(binary), *dir, *slash, *path;
	const char *formats[] = { "%s/%s", "%s/.debug/%s", NULL };
	int i;

	if (link == NULL || strchr(link, '/') != NULL ||
	    (dir = strdup(binary->elf.path)) == NULL) {
		free(link);
		return;
	}
	slash = strrchr(dir, '/');
	if (slash != NULL)
		*slash = '\0';
	else
		strcpy(dir, ".");
	for (i = 0; formats[i] != NULL && st->dwarf_file == NULL; i++) {
		if (asprintf(&path, formats[i], dir, link) >= 0) {
			add_local_path(s, st, path);
			free(path);
		}
	}
	if (st->dwarf_file == NULL && dir[0] == '/' &&
	    asprintf(&path, "%s%s/%s", s->debug_dir, dir, link) >= 0) {
		add_local_path(s, st, path);
		free(path);
	}
	free(dir);
	free(link);
}

static void try_debuglinks(struct symbolizer *s, struct module_state *st)
{
	int i, nbinaries = st->nfiles;

	for (i = 0; i < nbinaries && st->dwarf_file == NULL; i++) {
		if (!st->files[i].elf.has_debug_info && st->files[i].elf.path)
			try_debuglink(s, st, &st->files[i]);
	}
}

#ifdef HAVE_DEBUGINFOD
static void try_debuginfod(struct symbolizer *s, struct module_state *st)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	char *path = NULL;
	int fd;

	if (!s->debuginfod || urls == NULL || urls[0] == '\0' ||
	    st->build_id_len == 0 || st->dwarf_file != NULL)
		return;
	if (s->debuginfod_client == NULL)
		s->debuginfod_client = debuginfod_begin();
	if (s->debuginfod_client == NULL)
		return;
	fd = debuginfod_find_debuginfo(s->debuginfod_client, st->build_id,
				       st->build_id_len, &path);
	if (fd >= 0)
		add_local_fd(s, st, fd, path, SYM_SRC_DEBUGINFOD);
	free(path);
}
#else
static void try_debuginfod(struct symbolizer *s, struct module_state *st)
{
	(void)s;
	(void)st;
}
#endif

/* Runs once per module state: finds every usable file, in priority order. */
static void search_files(struct symbolizer *s, struct module_state *st)
{
	if (s->local_files) {
		try_build_id_tree(s, st);
		try_symfs(s, st);
		if (st->path[0] != '\0')
			add_local_path(s, st, st->path);
		try_debuglinks(s, st);
	}
	try_debuginfod(s, st);
}

/* ---- module states ------------------------------------------------------ */

static void make_state_key(const char *path, const uint8_t *build_id,
			   size_t build_id_len, char *key, size_t key_len)
{
	char hex[2 * PC_BUILD_ID_MAX + 1];

	if (build_id_len > 0) {
		build_id_to_hex(build_id, build_id_len, hex);
		snprintf(key, key_len, "b:%s", hex);
	} else {
		snprintf(key, key_len, "p:%s", path);
	}
}

static struct module_state *new_state(struct symbolizer *s, const char *path,
				      const uint8_t *build_id,
				      size_t build_id_len)
{
	struct module_state *st = calloc(1, sizeof(*st));

	if (st == NULL)
		return NULL;
	st->path = strdup(path);
	if (st->path == NULL || append_state(s, st) != 0) {
		free(st->path);
		free(st);
		return NULL;
	}
	st->id = (uint32_t)s->nstates; /* 1, 2, ...: 0 is the kernel */
	st->build_id_len = (uint8_t)build_id_len;
	if (build_id_len > 0)
		memcpy(st->build_id, build_id, build_id_len);
	st->embedded_generation = s->generation - 1;
	search_files(s, st);
	return st;
}

static struct module_state *get_state(struct symbolizer *s, const char *path,
				      const uint8_t *build_id,
				      size_t build_id_len)
{
	size_t key_len = strlen(path) + 2 * PC_BUILD_ID_MAX + 3;
	char stack_key[512], *key = stack_key;
	struct str_slot *slot;

	if (key_len > sizeof(stack_key) && (key = malloc(key_len)) == NULL)
		return NULL;
	make_state_key(path, build_id, build_id_len, key,
		       key == stack_key ? sizeof(stack_key) : key_len);
	slot = str_map_upsert(&s->states_by_key, key);
	if (key != stack_key)
		free(key);
	if (slot == NULL)
		return NULL;
	if (slot->value == NULL)
		slot->value = new_state(s, path, build_id, build_id_len);
	return slot->value;
}

/* ---- resolution with symbol tables -------------------------------------- */

static void set_unresolved(struct sym_frame *f)
{
	memset(f, 0, sizeof(*f));
	f->source = SYM_SRC_NONE;
	f->mode = SYM_MODE_UNRESOLVED;
}

static int fill_from_symbols(const struct pc_elf_module *m, uint64_t addr,
			     enum sym_source source, struct sym_frame *f)
{
	const struct pc_symbol *sym = pc_elf_module_lookup(m, addr);

	if (sym == NULL)
		return 0;
	memset(f, 0, sizeof(*f));
	f->function = pc_elf_symbol_name(m, sym);
	f->sym_offset = addr - sym->addr;
	f->source = source;
	f->mode = SYM_MODE_SYMBOL;
	return 1;
}

/* Best symbol table first: a local full .symtab, then the capture's
 * records, then local files that only have .dynsym. */
static int resolve_with_symbols(const struct module_state *st, uint64_t vaddr,
				struct sym_frame *f)
{
	const struct embedded_module *em;
	int i;

	for (i = 0; i < st->nfiles; i++) {
		if (st->files[i].elf.has_symtab &&
		    fill_from_symbols(&st->files[i].elf, vaddr,
				      st->files[i].source, f))
			return 1;
	}
	for (em = st->embedded; em != NULL; em = next_embedded(st, em)) {
		if (fill_from_symbols(&em->elf, vaddr, SYM_SRC_CAPTURE, f))
			return 1;
	}
	for (i = 0; i < st->nfiles; i++) {
		if (!st->files[i].elf.has_symtab &&
		    fill_from_symbols(&st->files[i].elf, vaddr,
				      st->files[i].source, f))
			return 1;
	}
	return 0;
}

/* File offset -> ELF vaddr. All files of one build-id share one layout,
 * so the first table that covers the offset answers; capture records come
 * first. A separate debug file's table never does: its segments have no
 * file bytes (p_filesz 0). */
static int offset_to_vaddr(const struct module_state *st, uint64_t offset,
			   uint64_t *vaddr)
{
	const struct embedded_module *em;
	int i;

	for (em = st->embedded; em != NULL; em = next_embedded(st, em)) {
		if (pc_elf_offset_to_vaddr(&em->elf, offset, vaddr) == 0)
			return 0;
	}
	for (i = 0; i < st->nfiles; i++) {
		if (pc_elf_offset_to_vaddr(&st->files[i].elf, offset, vaddr) == 0)
			return 0;
	}
	return -ENOENT;
}

/* ---- resolution with DWARF ---------------------------------------------- */

struct source_position {
	const char *file;
	int line;
};

static const char *die_function_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name;

	name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name,
						     &attr));
	if (name == NULL)
		name = dwarf_formstring(dwarf_attr_integrate(
			die, DW_AT_MIPS_linkage_name, &attr));
	if (name == NULL)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name,
							     &attr));
	return name;
}

static void line_table_position(Dwarf_Die *cudie, uint64_t vaddr,
				struct source_position *pos)
{
	Dwarf_Line *line = dwarf_getsrc_die(cudie, vaddr);

	pos->file = NULL;
	pos->line = 0;
	if (line == NULL)
		return;
	pos->file = dwarf_linesrc(line, NULL, NULL);
	dwarf_lineno(line, &pos->line);
}

/* Where an inlined instance was called: the position of the caller. */
static void call_site_position(Dwarf_Die *inlined, struct source_position *pos)
{
	Dwarf_Attribute attr;
	Dwarf_Word file_index, line;
	Dwarf_Files *files;
	size_t nfiles;
	Dwarf_Die cudie;

	pos->file = NULL;
	pos->line = 0;
	if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_file, &attr),
			    &file_index) == 0 &&
	    dwarf_diecu(inlined, &cudie, NULL, NULL) != NULL &&
	    dwarf_getsrcfiles(&cudie, &files, &nfiles) == 0)
		pos->file = dwarf_filesrc(files, file_index, NULL, NULL);
	if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_line, &attr),
			    &line) == 0)
		pos->line = (int)line;
}

static void fill_dwarf_frame(struct sym_frame *f, Dwarf_Die *scope,
			     const struct source_position *pos, uint64_t vaddr,
			     enum sym_source source)
{
	Dwarf_Addr entry;

	memset(f, 0, sizeof(*f));
	f->function = die_function_name(scope);
	f->inlined = dwarf_tag(scope) == DW_TAG_inlined_subroutine;
	if (dwarf_entrypc(scope, &entry) == 0 && entry <= vaddr)
		f->sym_offset = vaddr - entry;
	f->file = pos->file;
	f->line = pos->line;
	f->source = source;
	f->mode = f->file != NULL ? SYM_MODE_LINE : SYM_MODE_SYMBOL;
}

static int is_function_scope(Dwarf_Die *die)
{
	int tag = dwarf_tag(die);

	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine;
}

/* Frames from a chain of function DIEs ordered outer to inner: the
 * innermost gets the line table's position, each outer one the call site
 * of the instance inlined into it. */
static int frames_from_chain(Dwarf_Die *chain, int depth,
			     struct source_position pos, uint64_t vaddr,
			     enum sym_source source, struct sym_frame *out,
			     int max)
{
	int i, n = 0;

	for (i = depth - 1; i >= 0 && n < max; i--) {
		fill_dwarf_frame(&out[n], &chain[i], &pos, vaddr, source);
		/* an inlined instance without a name (its origin unreadable)
		 * would be a blank frame: leave it out */
		if (out[n].function != NULL || !out[n].inlined)
			n++;
		call_site_position(&chain[i], &pos);
	}
	return n;
}

/* An inlined instance among parent's children (looking through lexical
 * blocks) whose code contains vaddr. */
static int find_inlined_child(Dwarf_Die *parent, uint64_t vaddr,
			      Dwarf_Die *out, int depth)
{
	Dwarf_Die child;

	if (depth > MAX_CHAIN || dwarf_child(parent, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child);

		if (tag == DW_TAG_inlined_subroutine &&
		    dwarf_haspc(&child, vaddr) == 1) {
			*out = child;
			return 1;
		}
		if (tag == DW_TAG_lexical_block &&
		    (dwarf_haspc(&child, vaddr) == 1 ||
		     (!dwarf_hasattr(&child, DW_AT_low_pc) &&
		      !dwarf_hasattr(&child, DW_AT_ranges))) &&
		    find_inlined_child(&child, vaddr, out, depth + 1))
			return 1;
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

/* The chain below a subprogram known to contain vaddr, outer to inner. */
static int chain_from_subprogram(Dwarf_Die *subprogram, uint64_t vaddr,
				 Dwarf_Die *chain, int max)
{
	int depth = 1;

	chain[0] = *subprogram;
	while (depth < max &&
	       find_inlined_child(&chain[depth - 1], vaddr, &chain[depth], 0))
		depth++;
	return depth;
}

/* The same chain found without the index (two walks of the CU):
 * dwarf_getscopes gives the innermost function, dwarf_getscopes_die the
 * DIEs that physically contain it. */
static int chain_from_scopes(Dwarf_Die *cudie, uint64_t vaddr,
			     Dwarf_Die *chain, int max)
{
	Dwarf_Die *scopes = NULL, innermost;
	int nscopes = dwarf_getscopes(cudie, vaddr, &scopes), i, found = 0;
	int depth = 0, outer;

	for (i = 0; i < nscopes && !found; i++) {
		if (is_function_scope(&scopes[i])) {
			innermost = scopes[i];
			found = 1;
		}
	}
	free(scopes);
	scopes = NULL;
	if (!found)
		return 0;
	nscopes = dwarf_getscopes_die(&innermost, &scopes);
	for (outer = 0; outer < nscopes - 1; outer++) {
		if (dwarf_tag(&scopes[outer]) == DW_TAG_subprogram)
			break; /* the innermost real function */
	}
	for (i = outer; i >= 0 && depth < max; i--) {
		if (is_function_scope(&scopes[i]))
			chain[depth++] = scopes[i];
	}
	free(scopes);
	return depth;
}

/* ---- DWARF function index ------------------------------------------------ */

/* Every subprogram's address ranges, sorted, built once per DWARF file: a
 * binary search replaces a walk of the whole CU for each address. */
struct function_range {
	uint64_t  low, high;
	Dwarf_Off die_offset;
};

static int add_function_range(struct function_index *ix, uint64_t low,
			      uint64_t high, Dwarf_Off die_offset)
{
	if (ix->n == ix->cap) {
		size_t new_cap = ix->cap ? ix->cap * 2 : 1024;
		struct function_range *bigger =
			realloc(ix->ranges, new_cap * sizeof(*bigger));

		if (bigger == NULL)
			return -ENOMEM;
		ix->ranges = bigger;
		ix->cap = new_cap;
	}
	ix->ranges[ix->n].low = low;
	ix->ranges[ix->n].high = high;
	ix->ranges[ix->n].die_offset = die_offset;
	ix->n++;
	return 0;
}

static void index_subprogram(struct function_index *ix, Dwarf_Die *die)
{
	Dwarf_Addr base, low, high;
	ptrdiff_t offset = 0;

	while ((offset = dwarf_ranges(die, offset, &base, &low, &high)) > 0) {
		if (low < high)
			add_function_range(ix, low, high, dwarf_dieoffset(die));
	}
}

/* Subprograms at the top of a unit or inside namespaces/modules. */
static void index_children(struct function_index *ix, Dwarf_Die *parent,
			   int depth)
{
	Dwarf_Die child;

	if (depth > MAX_CHAIN || dwarf_child(parent, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);

		if (tag == DW_TAG_subprogram)
			index_subprogram(ix, &child);
		else if (tag == DW_TAG_namespace || tag == DW_TAG_module)
			index_children(ix, &child, depth + 1);
	} while (dwarf_siblingof(&child, &child) == 0);
}

static int compare_ranges(const void *pa, const void *pb)
{
	const struct function_range *a = pa, *b = pb;

	if (a->low != b->low)
		return a->low < b->low ? -1 : 1;
	if (a->high != b->high)
		return a->high < b->high ? -1 : 1;
	if (a->die_offset != b->die_offset)
		return a->die_offset < b->die_offset ? -1 : 1;
	return 0;
}

static void build_function_index(struct function_index *ix, Dwarf *dw)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;

	ix->built = 1;
	while (dwarf_get_units(dw, cu, &cu, NULL, NULL, &cudie, NULL) == 0)
		index_children(ix, &cudie, 0);
	qsort(ix->ranges, ix->n, sizeof(*ix->ranges), compare_ranges);
}

/* The subprogram range containing vaddr: the last one starting at or
 * below it. NULL if none. */
static const struct function_range *find_function(struct function_index *ix,
						  Dwarf *dw, uint64_t vaddr)
{
	size_t lo = 0, hi;

	if (!ix->built)
		build_function_index(ix, dw);
	hi = ix->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix->ranges[mid].low <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || vaddr >= ix->ranges[lo - 1].high)
		return NULL;
	return &ix->ranges[lo - 1];
}

/* ---- DWARF frames ---------------------------------------------------------- */

/* Function DIEs containing vaddr, outer to inner, and their unit. */
static int function_chain(struct local_file *f, uint64_t vaddr,
			  Dwarf_Die *chain, int max, Dwarf_Die *cudie)
{
	const struct function_range *range =
		find_function(&f->functions, f->dwarf, vaddr);
	Dwarf_Die subprogram;

	if (range != NULL &&
	    dwarf_offdie(f->dwarf, range->die_offset, &subprogram) != NULL &&
	    dwarf_diecu(&subprogram, cudie, NULL, NULL) != NULL)
		return chain_from_subprogram(&subprogram, vaddr, chain, max);
	if (dwarf_addrdie(f->dwarf, vaddr, cudie) == NULL)
		return -1;
	return chain_from_scopes(cudie, vaddr, chain, max);
}

/* Inline chain at vaddr, innermost first, ending with the real function.
 * Returns the number of frames (0 if the DWARF does not cover vaddr). */
static int dwarf_frames(struct local_file *f, uint64_t vaddr,
			struct sym_frame *out, int max)
{
	Dwarf_Die chain[MAX_CHAIN], cudie;
	struct source_position pos;
	int depth, n;

	depth = function_chain(f, vaddr, chain, MAX_CHAIN, &cudie);
	if (depth < 0)
		return 0;
	line_table_position(&cudie, vaddr, &pos);
	n = frames_from_chain(chain, depth, pos, vaddr, f->source, out, max);
	if (n == 0 && pos.file != NULL) {
		/* a line but no function DIE: the symbol table names it */
		memset(&out[0], 0, sizeof(out[0]));
		out[0].file = pos.file;
		out[0].line = pos.line;
		out[0].source = f->source;
		out[0].mode = SYM_MODE_LINE;
		n = 1;
	}
	return n;
}

/* The real (outermost) function takes the symbol table's name when there
 * is one, so names agree with captures resolved without DWARF. */
static int name_real_function(const struct module_state *st, uint64_t vaddr,
			      struct sym_frame *f)
{
	struct sym_frame by_symbol;

	if (resolve_with_symbols(st, vaddr, &by_symbol)) {
		f->function = by_symbol.function;
		f->sym_offset = by_symbol.sym_offset;
	}
	f->inlined = 0;
	return f->function != NULL;
}

static int resolve_with_dwarf(const struct module_state *st, uint64_t vaddr,
			      struct sym_frame *out, int max)
{
	int n;

	if (st->dwarf_file == NULL)
		return 0;
	n = dwarf_frames(st->dwarf_file, vaddr, out, max);
	if (n > 0 && !name_real_function(st, vaddr, &out[n - 1]))
		return 0;
	return n;
}

/* ---- resolving ---------------------------------------------------------- */

static int resolve_uncached(struct symbolizer *s, struct module_state *st,
			    uint64_t offset, struct sym_frame *out, int max)
{
	uint64_t vaddr;
	int n;

	refresh_embedded(s, st);
	if (offset_to_vaddr(st, offset, &vaddr) == 0) {
		n = resolve_with_dwarf(st, vaddr, out, max);
		if (n > 0)
			return n;
		if (resolve_with_symbols(st, vaddr, &out[0]))
			return 1;
	}
	set_unresolved(&out[0]);
	return 1;
}

/* Copies n frames into out[0..max): if they do not fit, the innermost ones
 * and the real function (last) are kept. Returns the count written. */
static int emit_frames(struct symbolizer *s, const struct sym_frame *frames,
		       int n, struct sym_frame *out, int max)
{
	int i, count = n <= max ? n : max;

	memcpy(out, frames, (size_t)(count - 1) * sizeof(*out));
	out[count - 1] = frames[n - 1];
	for (i = 0; i < count; i++) {
		if (out[i].mode == SYM_MODE_UNRESOLVED)
			s->stats.unresolved++;
	}
	return count;
}

static void set_module(struct sym_frame *out, int n, const char *module,
		       uint64_t module_offset)
{
	int i;

	for (i = 0; i < n; i++) {
		out[i].module = module;
		out[i].module_offset = module_offset;
	}
}

static const char *display_name(struct symbolizer *s, const char *path,
				const struct module_state *st)
{
	const char *name = NULL;

	if (path[0] == '\0' && st != NULL && st->embedded != NULL)
		path = st->embedded->elf.path ? st->embedded->elf.path : "";
	if (path[0] != '\0')
		name = str_map_intern(&s->paths, path);
	return name != NULL ? name : UNKNOWN_MODULE;
}

/* Frames for (state, offset), from the cache or computed and cached. */
static int lookup_frames(struct symbolizer *s, struct module_state *st,
			 uint64_t offset, const struct sym_frame **frames,
			 struct sym_frame *scratch)
{
	const struct cache_slot *slot = cache_get(&s->cache, st->id, offset);
	int n;

	if (slot != NULL) {
		s->stats.cache_hits++;
		*frames = s->cache.frames + slot->first;
		return (int)slot->nframes;
	}
	n = resolve_uncached(s, st, offset, scratch, MAX_CHAIN);
	cache_put(&s->cache, st->id, offset, scratch, n); /* best effort */
	*frames = scratch;
	return n;
}

int symbolizer_resolve_user(struct symbolizer *s, const char *path,
			    const uint8_t *build_id, size_t build_id_len,
			    uint64_t file_offset, struct sym_frame *out, int max)
{
	struct sym_frame scratch[MAX_CHAIN], unresolved;
	const struct sym_frame *frames = &unresolved;
	struct module_state *st;
	int n = 1;

	if (out == NULL || max < 1)
		return 0;
	s->stats.lookups++;
	if (path == NULL)
		path = "";
	if (build_id == NULL || build_id_len > PC_BUILD_ID_MAX)
		build_id_len = 0;
	set_unresolved(&unresolved);
	st = get_state(s, path, build_id, build_id_len);
	if (st != NULL)
		n = lookup_frames(s, st, file_offset, &frames, scratch);
	n = emit_frames(s, frames, n, out, max);
	set_module(out, n, display_name(s, path, st), file_offset);
	return n;
}

/* ---- kernel -------------------------------------------------------------- */

/* A capture may hold several kernel records (the kernel image, modules).
 * The covering symbol that starts closest below addr wins, so an unsized
 * last symbol of one record cannot swallow another record's addresses;
 * on a tie the record registered first wins. */
static void resolve_kernel_uncached(const struct symbolizer *s, uint64_t addr,
				    struct sym_frame *f)
{
	const struct pc_elf_module *best_module = NULL;
	const struct pc_symbol *best = NULL;
	size_t i;

	for (i = 0; i < s->nkernel; i++) {
		const struct pc_elf_module *m = &s->kernel[i]->elf;
		const struct pc_symbol *sym = pc_elf_module_lookup(m, addr);

		if (sym != NULL && (best == NULL || sym->addr > best->addr)) {
			best = sym;
			best_module = m;
		}
	}
	if (best == NULL) {
		set_unresolved(f);
		f->module = KERNEL_MODULE;
		return;
	}
	fill_from_symbols(best_module, addr, SYM_SRC_KERNEL, f);
	f->module = best_module->path && best_module->path[0] ?
		    best_module->path : KERNEL_MODULE;
}

int symbolizer_resolve_kernel(struct symbolizer *s, uint64_t addr,
			      struct sym_frame *out)
{
	const struct cache_slot *slot;

	s->stats.lookups++;
	slot = cache_get(&s->cache, KERNEL_MODULE_ID, addr);
	if (slot != NULL) {
		s->stats.cache_hits++;
		*out = s->cache.frames[slot->first];
	} else {
		resolve_kernel_uncached(s, addr, out);
		out->module_offset = addr;
		cache_put(&s->cache, KERNEL_MODULE_ID, addr, out, 1);
	}
	if (out->mode == SYM_MODE_UNRESOLVED)
		s->stats.unresolved++;
	return 1;
}
