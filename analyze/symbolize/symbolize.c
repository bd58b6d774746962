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
 *
 * This file holds the public API and the lookup orchestration (module
 * states, embedded records, symbol tables, kernel); the result cache and
 * string map are in symbolize_cache.c, the local file search in
 * symbolize_files.c, libdw work in symbolize_dwarf.c. Shared declarations:
 * symbolize_internal.h (private to these files).
 */

#include "symbolize_internal.h"


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

static int append_perfmap(struct symbolizer *s, struct embedded_module *em)
{
	struct embedded_module **perfmaps = room_for_one(s->perfmaps, s->nperfmaps,
							 &s->perfmaps_cap,
							 sizeof(*perfmaps));

	if (perfmaps == NULL)
		return -ENOMEM;
	s->perfmaps = perfmaps;
	s->perfmaps[s->nperfmaps++] = em;
	return 0;
}

void build_id_to_hex(const uint8_t *id, size_t len, char *hex)
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
	free(s->perfmaps);
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
	if (em->elf.kind == PC_MODULE_PERFMAP)
		return append_perfmap(s, em);
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

/* The state of a user module as the capture names it (a missing path is
 * "", an absent or oversized build-id none). */
static struct module_state *user_state(struct symbolizer *s, const char **path,
				       const uint8_t *build_id, size_t build_id_len)
{
	if (*path == NULL)
		*path = "";
	if (build_id == NULL || build_id_len > PC_BUILD_ID_MAX)
		build_id_len = 0;
	return get_state(s, *path, build_id, build_id_len);
}

void symbolizer_prepare(struct symbolizer *s, const char *path,
			const uint8_t *build_id, size_t build_id_len)
{
	user_state(s, &path, build_id, build_id_len);
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
	set_unresolved(&unresolved);
	st = user_state(s, &path, build_id, build_id_len);
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

/* JIT code: the perf map records of the process; a later record (a later
 * recording session appended to the capture) wins over an earlier one. */
int symbolizer_resolve_perfmap(struct symbolizer *s, uint32_t pid, uint64_t addr,
			       struct sym_frame *out)
{
	for (size_t i = s->nperfmaps; i-- > 0;) {
		const struct pc_elf_module *m = &s->perfmaps[i]->elf;

		if (m->pid == pid && fill_from_symbols(m, addr, SYM_SRC_PERFMAP, out)) {
			out->module = m->path ? m->path : "[jit]";
			out->module_offset = addr;
			return 1;
		}
	}
	return 0;
}
