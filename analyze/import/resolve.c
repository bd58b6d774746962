/* resolve.c - turns every stack's instruction pointers into frames, once
 * all chunks (and so all module records) have been read.
 *
 * A user ip is looked up in its process's mappings (the one current at the
 * stack's first sample), converted to a file offset (ip - start + pgoff) and
 * handed to the symbolizer; inline expansion may give several frames for
 * one ip. Return addresses (every ip but the innermost) are looked up at
 * ip - 1 so a call at the end of a function is not blamed on the next one.
 * Each distinct (address space, ip) is resolved once and its frames reused.
 * Kernel ips go to the kernel symbolizer. Ips with no mapping become one
 * unresolved frame in module "[unknown]" carrying the raw address.
 *
 * Frame identity is free of ASLR: an unresolved frame is named
 * "[unknown] in MODULE" ("[unknown] in [kernel]", "[unknown]"), never by
 * an address; module and file offset stay in their columns. A return
 * address in no mapping (and no perf map) is junk, typically a
 * frame-pointer walk gone astray: its frame row exists but the stack does
 * not reference it (stack_entry.njunk counts it, quality frames
 * sampled.junk), so folded stacks and diff keys never contain it. An
 * innermost ip in no mapping is a real place (JIT code without a perf
 * map) and stays, as "[unknown]". */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "exe_alias.h"
#include "load_state.h"
#include "symbolize/symbolize.h"
#include "util/text.h"

#define MAX_INLINE_FRAMES 16

/* Cache key tags (high bits of the first key word). */
#define KEY_KERNEL   (1ull << 60)
#define KEY_MAPPED   (2ull << 60)   /* low 32 bits: mapping index */
#define KEY_UNMAPPED (3ull << 60)   /* low 32 bits: pid */
#define KEY_RETURN   (1ull << 56)   /* looked up at ip - 1 */

/* Per-frame facts kept for the stack summaries. */
#define FRAME_UNRESOLVED 0x1
#define FRAME_ROOT       0x2
#define FRAME_JUNK       0x4   /* unresolved return address in no mapping */

struct resolver {
	struct loader *L;
	sqlite3_stmt *ins_frame;
	sqlite3_stmt *ins_stack;
	struct batch_insert stack_frames;
	struct hmap cache;        /* key -> first_frame_id << 8 | nframes */
	struct exe_aliases aliases; /* main executables as started */
	uint8_t *frame_flags;     /* indexed by frame id */
	uint32_t flags_cap;
	uint32_t next_frame_id;   /* ids start at 1 */
};

/* Functions where a complete user stack ends. */
static const char *const root_functions[] = {
	"_start", "__libc_start_main", "__libc_start_call_main", "__libc_start_main_impl",
	"clone", "clone3", "__clone", "__clone3", "__clone_internal", "start_thread",
	"thread_start", "_dl_start", "_dl_start_user", "runtime.goexit", "runtime.rt0_go",
};

static int is_root_function(const char *name)
{
	if (!name)
		return 0;
	for (size_t i = 0; i < sizeof(root_functions) / sizeof(root_functions[0]); i++)
		if (strcmp(name, root_functions[i]) == 0)
			return 1;
	return 0;
}

static const char *source_name(enum sym_source source)
{
	switch (source) {
	case SYM_SRC_CAPTURE:    return "capture";
	case SYM_SRC_LOCAL:      return "local";
	case SYM_SRC_DEBUGINFOD: return "debuginfod";
	case SYM_SRC_KERNEL:     return "kernel";
	case SYM_SRC_PERFMAP:    return "perfmap";
	default:                 return "none";
	}
}

static const char *mode_name(enum sym_mode mode)
{
	switch (mode) {
	case SYM_MODE_SYMBOL: return "symbol";
	case SYM_MODE_LINE:   return "line";
	default:              return "unresolved";
	}
}

static int remember_frame_flags(struct resolver *R, uint32_t frame_id, uint8_t flags)
{
	if (frame_id >= R->flags_cap) {
		uint32_t new_cap = R->flags_cap ? R->flags_cap * 2 : 4096;
		while (new_cap <= frame_id)
			new_cap *= 2;
		uint8_t *grown = realloc(R->frame_flags, new_cap);
		if (!grown)
			return -ENOMEM;
		memset(grown + R->flags_cap, 0, new_cap - R->flags_cap);
		R->frame_flags = grown;
		R->flags_cap = new_cap;
	}
	R->frame_flags[frame_id] = flags;
	return 0;
}

/* What one frame row holds besides its id. */
struct frame_row {
	const char *kind;         /* "user" or "kernel" */
	uint64_t address;         /* the ip as captured */
	uint64_t return_adjust;   /* 1 if looked up at ip - 1 */
	const struct sym_frame *sym;
	const char *fallback_module;
	uint64_t module_offset;   /* unadjusted file offset (user) or address */
	int junk_candidate;       /* a return address in no mapping */
	const char *display_module; /* the module as the user knows it, or NULL */
};

/* Names from symbol tables, DWARF and perf maps are data from the capture
 * or from files it names: stored with control characters replaced, so no
 * text output can be steered (ESC sequences, a newline forging a row). */
struct printable_frame {
	char *function, *file, *module;
};

static char *printable_or_null(const char *s)
{
	return s ? text_dup_printable(s, strlen(s), 0) : NULL;
}

static void printable_frame_free(struct printable_frame *p)
{
	free(p->function);
	free(p->file);
	free(p->module);
}

static int printable_frame_make(struct printable_frame *p, const char *function,
				const char *file, const char *module)
{
	p->function = printable_or_null(function);
	p->file = printable_or_null(file);
	p->module = printable_or_null(module);
	if ((function && !p->function) || (file && !p->file) || (module && !p->module)) {
		printable_frame_free(p);
		return -1;
	}
	return 0;
}

/* The display name of an unresolved frame: "[unknown] in MODULE" (the
 * module's base name), "[unknown]" when no mapping covers it. */
static void unresolved_frame_name(char *buf, size_t len, const char *module)
{
	if (!module || strcmp(module, "[unknown]") == 0)
		snprintf(buf, len, "[unknown]");
	else
		snprintf(buf, len, "[unknown] in %s", text_basename(module));
}

static int insert_frame(struct resolver *R, const struct frame_row *f, uint32_t *id_out)
{
	const struct sym_frame *sf = f->sym;
	const char *module = f->display_module ? f->display_module :
			     sf->module ? sf->module : f->fallback_module;
	int resolved = sf->mode != SYM_MODE_UNRESOLVED && sf->function;
	char unresolved_name[512];
	sqlite3_stmt *st = R->ins_frame;
	uint32_t id = R->next_frame_id++;
	struct printable_frame p;
	int rc;

	if (printable_frame_make(&p, sf->function, sf->file, module) < 0)
		return -1;
	unresolved_frame_name(unresolved_name, sizeof(unresolved_name), p.module);
	sqlite3_bind_int64(st, 1, id);
	db_bind_text(st, 2, f->kind);
	db_bind_text(st, 3, p.module);
	db_bind_u64(st, 4, f->module_offset);
	db_bind_u64(st, 5, f->address);
	db_bind_text(st, 6, resolved ? p.function : NULL);
	if (resolved)
		db_bind_u64(st, 7, sf->sym_offset + f->return_adjust);
	db_bind_text(st, 8, p.file);
	if (sf->line > 0)
		sqlite3_bind_int64(st, 9, sf->line);
	sqlite3_bind_int(st, 10, sf->inlined ? 1 : 0);
	db_bind_text(st, 11, source_name(resolved ? sf->source : SYM_SRC_NONE));
	db_bind_text(st, 12, mode_name(resolved ? sf->mode : SYM_MODE_UNRESOLVED));
	db_bind_text(st, 13, resolved ? p.function : unresolved_name);
	rc = db_run(st);
	printable_frame_free(&p);
	if (rc < 0)
		return -1;
	*id_out = id;
	return remember_frame_flags(R, id, (resolved ? 0 : FRAME_UNRESOLVED) |
				    (resolved && is_root_function(sf->function) ? FRAME_ROOT : 0) |
				    (!resolved && f->junk_candidate ? FRAME_JUNK : 0));
}

/* Inserts n symbolizer frames (innermost first); returns the first id. */
static int insert_frames(struct resolver *R, struct frame_row *row,
			 const struct sym_frame *frames, int n, uint32_t *first)
{
	for (int i = 0; i < n; i++) {
		uint32_t id;
		row->sym = &frames[i];
		if (insert_frame(R, row, &id) < 0)
			return -1;
		if (i == 0)
			*first = id;
	}
	return 0;
}

static int resolve_kernel_ip(struct resolver *R, uint64_t ip, int is_return,
			     uint32_t *first, uint32_t *n)
{
	struct sym_frame frame = { 0 };
	struct frame_row row = {
		.kind = "kernel", .address = ip, .return_adjust = is_return ? 1 : 0,
		.fallback_module = "[kernel]", .module_offset = ip,
	};

	if (symbolizer_resolve_kernel(R->L->sym, ip - row.return_adjust, &frame) < 1)
		memset(&frame, 0, sizeof(frame));
	*n = 1;
	return insert_frames(R, &row, &frame, 1, first);
}

/* An ip outside every mapped file: JIT code named by the process's perf
 * map, else module "[unknown]". */
static int resolve_unmapped_ip(struct resolver *R, uint32_t pid, uint64_t ip, int is_return,
			       uint32_t *first, uint32_t *n)
{
	struct sym_frame frame = { 0 };
	struct frame_row row = {
		.kind = "user", .address = ip, .fallback_module = "[unknown]",
		.module_offset = ip, .return_adjust = is_return ? 1 : 0,
		.junk_candidate = is_return,
	};

	if (symbolizer_resolve_perfmap(R->L->sym, pid, ip - row.return_adjust, &frame) < 1)
		memset(&frame, 0, sizeof(frame));
	*n = 1;
	return insert_frames(R, &row, &frame, 1, first);
}

static int resolve_mapped_ip(struct resolver *R, const struct mapping *m, uint64_t ip,
			     int is_return, uint32_t *first, uint32_t *n)
{
	struct sym_frame frames[MAX_INLINE_FRAMES];
	uint64_t offset = ip - m->start + m->pgoff;
	struct frame_row row = {
		.kind = "user", .address = ip, .fallback_module = m->path,
		.module_offset = offset,
		.return_adjust = (is_return && offset > 0) ? 1 : 0,
		.display_module = exe_alias(&R->aliases, m->pid, m->path),
	};
	int count;

	memset(frames, 0, sizeof(frames));
	count = symbolizer_resolve_user(R->L->sym, m->path, m->build_id, m->build_id_len,
					offset - row.return_adjust, frames,
					MAX_INLINE_FRAMES);
	if (count < 1 || count > MAX_INLINE_FRAMES) {
		memset(frames, 0, sizeof(frames));
		count = 1;
	}
	*n = (uint32_t)count;
	return insert_frames(R, &row, frames, count, first);
}

static uint32_t stack_pid(const struct stack_entry *e)
{
	return e->pid ? e->pid : e->first_pid;
}

/* The mapping (index in L->maps, -1: none) holding the user ip at index
 * of e: the one current at the stack's first sample. resolve_stacks and
 * the prefetch (below) must agree on it. */
static int64_t ip_mapping(const struct loader *L, const struct stack_entry *e,
			  uint32_t index)
{
	return map_index_lookup(&L->maps, stack_pid(e), e->ips[index], e->first_ts);
}

/* Frames of one ip, from the cache or freshly resolved. */
static int frames_of_ip(struct resolver *R, const struct stack_entry *e, uint32_t index,
			uint32_t *first, uint32_t *n)
{
	uint64_t ip = e->ips[index];
	int is_return = index > 0;
	uint32_t pid = stack_pid(e);
	int64_t map = -1;
	uint64_t key;
	uint64_t *cached;
	int rc;

	if (e->kind == PC_STACK_KERNEL) {
		key = KEY_KERNEL;
	} else {
		map = ip_mapping(R->L, e, index);
		key = map >= 0 ? KEY_MAPPED | (uint64_t)map : KEY_UNMAPPED | pid;
	}
	if (is_return)
		key |= KEY_RETURN;
	cached = hmap_find(&R->cache, key, ip);
	if (cached) {
		*first = (uint32_t)(*cached >> 8);
		*n = (uint32_t)(*cached & 0xff);
		return 0;
	}
	if (e->kind == PC_STACK_KERNEL)
		rc = resolve_kernel_ip(R, ip, is_return, first, n);
	else if (map >= 0)
		rc = resolve_mapped_ip(R, &R->L->maps.maps[map], ip, is_return, first, n);
	else
		rc = resolve_unmapped_ip(R, pid, ip, is_return, first, n);
	if (rc < 0)
		return -1;
	if (!hmap_upsert(&R->cache, key, ip, ((uint64_t)*first << 8) | *n, NULL))
		return -1;
	return 0;
}

static int insert_stack_row(struct resolver *R, const struct stack_entry *e)
{
	sqlite3_stmt *st = R->ins_stack;

	sqlite3_bind_int64(st, 1, e->id);
	db_bind_text(st, 2, e->kind == PC_STACK_KERNEL ? "kernel" : "user");
	sqlite3_bind_int64(st, 3, e->pid);
	sqlite3_bind_int64(st, 4, e->nr);
	sqlite3_bind_int64(st, 5, e->flags);
	sqlite3_bind_int64(st, 6, e->nframes);
	sqlite3_bind_int(st, 7, e->probably_truncated);
	return db_run(st);
}

static int resolve_stack(struct resolver *R, struct stack_entry *e)
{
	uint32_t position = 0;
	uint32_t last_frame = 0;

	for (uint32_t i = 0; i < e->nr; i++) {
		uint32_t first, n;
		if (frames_of_ip(R, e, i, &first, &n) < 0)
			return -1;
		if (n == 1 && (R->frame_flags[first] & FRAME_JUNK)) {
			e->njunk++; /* dropped from the stack's identity */
			continue;
		}
		for (uint32_t j = 0; j < n; j++) {
			uint8_t *is_null;
			int64_t *row = batch_row(&R->stack_frames, &is_null);
			row[0] = e->id;
			row[1] = position++;
			row[2] = first + j;
			if (batch_commit_row(&R->stack_frames) < 0)
				return -1;
			if (R->frame_flags[first + j] & FRAME_UNRESOLVED)
				e->nunresolved++;
		}
		last_frame = first + n - 1;
	}
	e->nframes = position;
	e->probably_truncated = e->kind == PC_STACK_USER && e->nr > 0 &&
		!(e->flags & (PC_STACK_F_TRUNCATED | PC_STACK_F_ERROR)) &&
		!(R->frame_flags[last_frame] & FRAME_ROOT);
	return insert_stack_row(R, e);
}

static int resolver_init(struct resolver *R, struct loader *L)
{
	memset(R, 0, sizeof(*R));
	R->L = L;
	R->next_frame_id = 1;
	hmap_init(&R->cache);
	R->ins_frame = db_prepare(L->db, "INSERT INTO frames (frame_id, kind, module,"
		" module_offset, address, function, sym_offset, file, line, inlined,"
		" source, mode, name) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)");
	R->ins_stack = db_prepare(L->db, "INSERT INTO stacks (stack_id, kind, pid, depth,"
		" flags, nframes, probably_truncated) VALUES (?,?,?,?,?,?,?)");
	if (batch_init(&R->stack_frames, L->db, "stack_frames (stack_id, position, frame_id)",
		       3) < 0)
		return -1;
	if (exe_aliases_init(&R->aliases, L->db) < 0)
		return -1;
	return (R->ins_frame && R->ins_stack) ? 0 : -1;
}

static void resolver_free(struct resolver *R)
{
	sqlite3_finalize(R->ins_frame);
	sqlite3_finalize(R->ins_stack);
	batch_free(&R->stack_frames);
	hmap_free(&R->cache);
	exe_aliases_free(&R->aliases);
	free(R->frame_flags);
}

static int compare_stack_ids(const void *pa, const void *pb, void *ctx)
{
	const struct stack_store *store = ctx;
	uint32_t a = store->entries[*(const uint32_t *)pa].id;
	uint32_t b = store->entries[*(const uint32_t *)pb].id;

	return a < b ? -1 : a > b;
}

/* Indices of the stacks ordered by id, so stack_frames (clustered by
 * stack id) is filled in key order. NULL on out-of-memory. Called by the
 * prefetch thread too: no shared state. */
static uint32_t *stacks_by_id(const struct stack_store *store)
{
	uint32_t *order = malloc(((size_t)store->len + 1) * sizeof(uint32_t));

	if (!order)
		return NULL;
	for (uint32_t i = 0; i < store->len; i++)
		order[i] = i;
	qsort_r(order, store->len, sizeof(uint32_t), compare_stack_ids, (void *)store);
	return order;
}

/* ---- loading the modules' files ahead --------------------------------
 *
 * Opening a module's files (ELF, and DWARF that Debian's debug packages
 * compress: libdw inflates every debug section when it opens one) was
 * most of resolve_stacks: 0.07 s of a 1 s import of a redis capture, on
 * the loading thread, after the request pass. The stacks, the maps and
 * the symbolizer are final once the chunks are read and the used stacks
 * marked, and nothing else touches them until resolve_stacks (the request
 * pass reads only the socket calls and REQUEST records, and the database),
 * so a thread opens the files meanwhile, during the request pass, in the
 * order resolve_stacks will first need them (stacks by id, frames in
 * order): the symbolizer then holds the same module states, in the same
 * order, as without it. */

static void *prefetch_main(void *arg)
{
	struct loader *L = arg;
	uint32_t *order = stacks_by_id(&L->stacks);
	struct hmap seen;

	if (!order)
		return NULL;
	hmap_init(&seen);
	for (uint32_t i = 0; i < L->stacks.len; i++) {
		const struct stack_entry *e = &L->stacks.entries[order[i]];

		if (!e->present || e->kind != PC_STACK_USER)
			continue;
		for (uint32_t k = 0; k < e->nr; k++) {
			int64_t map = ip_mapping(L, e, k);
			const struct mapping *m;
			int added = 0;

			if (map < 0 || !hmap_upsert(&seen, (uint64_t)map, 0, 0, &added) || !added)
				continue;
			m = &L->maps.maps[map];
			symbolizer_prepare(L->sym, m->path, m->build_id, m->build_id_len);
		}
	}
	hmap_free(&seen);
	free(order);
	return NULL;
}

int resolve_prefetch_start(struct loader *L)
{
	L->prefetching = pthread_create(&L->prefetch_thread, NULL, prefetch_main, L) == 0;
	return 0;     /* without the thread, resolve_stacks opens the files itself */
}

void resolve_prefetch_join(struct loader *L)
{
	if (L->prefetching)
		pthread_join(L->prefetch_thread, NULL);
	L->prefetching = 0;
}

int resolve_stacks(struct loader *L)
{
	struct resolver R;
	int rc;
	uint32_t *order;

	resolve_prefetch_join(L);
	rc = resolver_init(&R, L);
	order = stacks_by_id(&L->stacks);

	if (!order)
		rc = -1;
	for (uint32_t i = 0; rc == 0 && i < L->stacks.len; i++) {
		struct stack_entry *e = &L->stacks.entries[order[i]];
		if (e->present)
			rc = resolve_stack(&R, e);
	}
	free(order);
	if (rc == 0)
		rc = batch_flush(&R.stack_frames);
	resolver_free(&R);
	if (rc < 0)
		L->failed = 1;
	return rc;
}
