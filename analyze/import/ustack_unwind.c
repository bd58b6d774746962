/* ustack_unwind.c - unwinds the capture's user stack copies while loading
 * (see ustack_unwind.h).
 *
 * Modules are found by the mapping that covers a pc (map_index of the
 * first pass) and matched to their UNWIND record by build-id (by path when
 * there is none). Each module's CFI is built once, on first use. Results
 * are deduplicated by (pid, ips, stop): identical walks share one stack.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "load_state.h"
#include "offcpu_copies.h"
#include "ustack_unwind.h"
#include "unwind/unwind.h"
#include "common/unwind_table.h"

struct ustack_module {
	struct pc_unwind_table table;
	struct pc_unwind_table go;   /* a cgo binary's second table: its Go code
				      * (UNWIND flag SYNTHESIZED); kind 0 len 0 if none */
	struct unwind_cfi *cfi;
	const char *why;          /* why cfi is NULL after a try */
	int tried;
};

struct unwound {               /* per unwound stack, by id - USTACK_ID_BASE */
	uint32_t pid;
	uint16_t stop;            /* enum unwind_stop */
	uint32_t nframes;
	uint64_t stop_pc;
};

struct ustack_state {
	struct map_index maps;
	struct ustack_module *mods;
	uint32_t nmods, mods_cap;
	struct hmap mod_by_key;   /* build-id (or path) key -> index in mods */
	struct hmap pending;      /* (tid, ts) -> unwound stack id */
	struct hmap by_content;   /* (content hash, 0) -> unwound stack id */
	struct unwound *stacks;
	uint32_t nstacks, stacks_cap;
	uint64_t ips[STACK_MAX_IPS];
	uint64_t copies, offcpu_copies, malformed, tables_bad;
	uint64_t fp_copies, fp_steps;         /* the frame-pointer fallback */
	struct offcpu_copies *held; /* OFFCPU events waiting for their copy */
	struct hmap refresh;        /* (tid, out_ts) of a refresh copy not read yet -> ref_ts */
	uint64_t same, same_found;  /* COPY_SAME events; of them, their copy read before */
	uint64_t refresh_agreed, refresh_differed, refresh_unverified;
	uint64_t newest_offcpu;     /* the latest OFFCPU switch-in read */
	uint64_t by_stop[UNWIND_STOP_COUNT];  /* copies per stop reason */
};

/* ---- modules ---------------------------------------------------------- */

static uint64_t fnv(const void *p, size_t n, uint64_t h)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* Key of a module: its build-id, else its path (b = 1). */
static void module_key(const uint8_t *bid, uint8_t bid_len, const char *path,
		       uint64_t *a, uint64_t *b)
{
	if (bid_len) {
		*a = fnv(bid, bid_len, 0xcbf29ce484222325ull);
		*b = 0;
	} else {
		*a = fnv(path, strlen(path), 0xcbf29ce484222325ull);
		*b = 1;
	}
}

static int grow(void **arr, uint32_t *cap, size_t elem)
{
	uint32_t n = *cap ? *cap * 2 : 16;
	void *grown = realloc(*arr, n * elem);

	if (!grown)
		return 0;
	*arr = grown;
	*cap = n;
	return 1;
}

static void add_table(struct ustack_state *S, const struct pc_rec *rec)
{
	struct pc_unwind_table t;
	uint64_t a, b, *slot;
	int created;

	if (pc_unwind_table_from_rec(&t, rec) < 0) {
		S->tables_bad++;
		return;
	}
	module_key(t.build_id, t.build_id_len, t.path, &a, &b);
	slot = hmap_upsert(&S->mod_by_key, a, b, S->nmods, &created);
	if (slot && !created && (t.flags & PC_UNWIND_F_SYNTHESIZED) && *slot < S->nmods &&
	    !S->mods[*slot].go.table_len && !(S->mods[*slot].table.flags & PC_UNWIND_F_SYNTHESIZED)) {
		S->mods[*slot].go = t;       /* beside the module's own .eh_frame */
		return;
	}
	if (!slot || !created ||
	    (S->nmods == S->mods_cap && !grow((void **)&S->mods, &S->mods_cap, sizeof(*S->mods)))) {
		pc_unwind_table_free(&t);
		return;
	}
	S->mods[S->nmods++] = (struct ustack_module){ .table = t };
}

static struct ustack_module *module_of(struct ustack_state *S, const struct mapping *m)
{
	uint64_t a, b, *idx;
	struct ustack_module *mod;

	module_key(m->build_id, m->build_id_len, m->path, &a, &b);
	idx = hmap_find(&S->mod_by_key, a, b);
	if (!idx)
		return NULL;
	mod = &S->mods[*idx];
	if (!mod->tried) {
		mod->tried = 1;
		mod->cfi = unwind_cfi_new(&mod->table, &mod->why);
		if (mod->cfi && mod->go.table_len)
			unwind_cfi_chain(mod->cfi, unwind_cfi_new(&mod->go, &mod->why));
		if (!mod->cfi) {
			S->tables_bad++;
			fprintf(stderr, "perfcap-analyze: note: the unwind table of %s is not used:"
				" %s (its stacks fall back to frame pointers)\n",
				mod->table.path && mod->table.path[0] ? mod->table.path : "a module",
				mod->why ? mod->why : "unreadable");
		}
	}
	return mod;
}

/* ---- unwinding one copy ------------------------------------------------ */

struct find_ctx {
	struct ustack_state *S;
	uint32_t pid;
	uint64_t ts;
};

static int find_module(void *ctx, uint64_t pc, struct unwind_cfi **cfi, uint64_t *vaddr)
{
	struct find_ctx *f = ctx;
	int64_t i = map_index_lookup(&f->S->maps, f->pid, pc, f->ts);
	const struct mapping *m;
	struct ustack_module *mod;

	if (i < 0)
		return -1;
	m = &f->S->maps.maps[i];
	mod = module_of(f->S, m);
	*cfi = mod ? mod->cfi : NULL;
	if (!*cfi)
		return -1;
	return pc_unwind_offset_to_vaddr(&mod->table, pc - m->start + m->pgoff, vaddr) ? -1 : 0;
}

static uint64_t content_hash(uint32_t pid, uint16_t stop, const uint64_t *ips, uint32_t n)
{
	uint64_t h = fnv(&pid, sizeof(pid), 0xcbf29ce484222325ull);

	h = fnv(&stop, sizeof(stop), h);
	return fnv(ips, n * sizeof(*ips), h);
}

static int same_stack(const struct loader *L, const struct ustack_state *S, uint32_t id,
		      uint32_t pid, uint16_t stop, const uint64_t *ips, uint32_t n)
{
	const struct unwound *u = &S->stacks[id - USTACK_ID_BASE];
	const struct stack_entry *e = stack_store_find(&L->stacks, id);

	return e && u->pid == pid && u->stop == stop && e->nr == n &&
	       !memcmp(e->ips, ips, n * sizeof(*ips));
}

/* The id of the unwound stack (pid, ips, stop), defined on first sight.
 * PC_STACK_NONE on out-of-memory. */
static uint32_t stack_id_of(struct loader *L, uint32_t pid, const struct unwind_result *r)
{
	struct ustack_state *S = L->ust;
	uint64_t h = content_hash(pid, (uint16_t)r->stop, S->ips, r->n), *slot;
	uint32_t id;
	int created;

	slot = hmap_upsert(&S->by_content, h, 0, 0, &created);
	if (!slot)
		return PC_STACK_NONE;
	if (!created && same_stack(L, S, (uint32_t)*slot, pid, (uint16_t)r->stop, S->ips, r->n))
		return (uint32_t)*slot;
	if (S->nstacks == S->stacks_cap &&
	    !grow((void **)&S->stacks, &S->stacks_cap, sizeof(*S->stacks)))
		return PC_STACK_NONE;
	id = USTACK_ID_BASE + S->nstacks;
	if (stack_store_define(&L->stacks, id, pid, PC_STACK_USER,
			       r->stop == UNWIND_DEPTH ? PC_STACK_F_TRUNCATED : 0, S->ips, r->n) < 0)
		return PC_STACK_NONE;
	S->stacks[S->nstacks++] = (struct unwound){ pid, (uint16_t)r->stop, r->n, r->stop_pc };
	if (created)
		*slot = id;  /* a collision keeps the first stack as the dedupe target */
	return id;
}

/* Copies of CPU samples and of switch-outs are looked up apart: a sample
 * and a switch-out of one thread may share a timestamp. */
static uint64_t pending_key(uint32_t tid, uint16_t flags)
{
	return (flags & PC_USTACK_F_OFFCPU) ? (uint64_t)tid | 1ull << 32 : tid;
}

static void refresh_check(struct loader *L, uint32_t tid, uint32_t id, uint64_t ref_ts);

void ustack_load(struct loader *L, const struct pc_rec *rec)
{
	struct ustack_state *S = L->ust;
	struct pc_rec_ustack u;
	size_t tail_len;
	const uint8_t *tail;
	struct unwind_result r;
	struct find_ctx f;
	uint32_t id;
	uint64_t *slot;

	if (!S)
		return; /* no tables announced: the copy cannot be unwound */
	tail = pc_rec_copy(rec, &u, sizeof(u), &tail_len);
	if (u.size > tail_len) {
		S->malformed++;
		return;
	}
	f = (struct find_ctx){ S, u.pid, u.ts };
	unwind_stack(u.regs, &(struct unwind_memory){ u.regs[PC_UREG_SP], tail, u.size },
		     find_module, &f, S->ips, STACK_MAX_IPS, &r);
	S->copies++;
	S->offcpu_copies += (rec->flags & PC_USTACK_F_OFFCPU) != 0;
	S->fp_copies += r.fp_steps > 0;
	S->fp_steps += r.fp_steps;
	S->by_stop[r.stop]++;
	id = stack_id_of(L, u.pid, &r);
	slot = id == PC_STACK_NONE ? NULL :
	       hmap_upsert(&S->pending, pending_key(u.tid, rec->flags), u.ts, id, NULL);
	if (!slot)
		L->failed = 1;
	else
		*slot = id;
	if (S->held && (rec->flags & PC_USTACK_F_OFFCPU) &&
	    offcpu_copies_arrived(S->held, u.tid, u.ts, id, offcpu_correlate, L) < 0)
		L->failed = 1;
	if ((rec->flags & PC_USTACK_F_OFFCPU) && (slot = hmap_find(&S->refresh, u.tid, u.ts)) &&
	    *slot) {
		refresh_check(L, u.tid, id, *slot);
		*slot = 0;
	}
}

/* The refresh copy of tid (stack id) against the copy it refreshes. */
static void refresh_check(struct loader *L, uint32_t tid, uint32_t id, uint64_t ref_ts)
{
	struct ustack_state *S = L->ust;
	uint32_t ref = ustack_for_offcpu(L, tid, ref_ts, PC_STACK_NONE);

	if (ref == PC_STACK_NONE || id == PC_STACK_NONE)
		S->refresh_unverified++;
	else if (ref == id)
		S->refresh_agreed++;
	else
		S->refresh_differed++;
}

int ustack_offcpu_refresh(struct loader *L, uint32_t tid, uint64_t out_ts, uint64_t ref_ts)
{
	struct ustack_state *S = L->ust;
	uint32_t id;
	uint64_t *slot;

	if (!S)
		return 0;
	id = ustack_for_offcpu(L, tid, out_ts, PC_STACK_NONE);
	if (id != PC_STACK_NONE) {   /* the copy came first */
		refresh_check(L, tid, id, ref_ts);
		return 0;
	}
	slot = hmap_upsert(&S->refresh, tid, out_ts, 0, NULL);
	if (!slot)
		return -1;
	*slot = ref_ts;
	return 0;
}

void ustack_offcpu_same(struct loader *L, int found)
{
	if (L->ust) {
		L->ust->same++;
		L->ust->same_found += found;
	}
}

int ustack_offcpu_hold(struct loader *L, const struct tl_event *ev, int wait, uint64_t copy_ts)
{
	struct ustack_state *S = L->ust;

	if (!S)
		return 0;
	if (ev->key > S->newest_offcpu)
		S->newest_offcpu = ev->key;
	if (!wait)
		return 0;
	if (!S->held && !(S->held = offcpu_copies_new()))
		return -1;
	return offcpu_copies_hold(S->held, ev, copy_ts) < 0 ? -1 : 1;
}

int ustack_offcpu_expire(struct loader *L, uint64_t newest)
{
	struct ustack_state *S = L->ust;

	if (!S || !S->held)
		return 0;
	if (newest < S->newest_offcpu)
		newest = S->newest_offcpu;
	return offcpu_copies_expire(S->held, newest, offcpu_correlate, L);
}

uint32_t ustack_for_sample(struct loader *L, uint32_t tid, uint64_t ts, uint32_t ustack)
{
	uint64_t *id = L->ust ? hmap_find(&L->ust->pending, pending_key(tid, 0), ts) : NULL;

	return id ? (uint32_t)*id : ustack;
}

uint32_t ustack_for_offcpu(struct loader *L, uint32_t tid, uint64_t out_ts, uint32_t ustack)
{
	uint64_t *id = L->ust ? hmap_find(&L->ust->pending,
					  pending_key(tid, PC_USTACK_F_OFFCPU), out_ts) : NULL;

	return id ? (uint32_t)*id : ustack;
}

/* ---- the first pass ------------------------------------------------------ */

static int announces_copies(const struct pc_chunk *c)
{
	struct pc_kv_iter it;
	const char *key, *value;

	pc_kv_iter_init(&it, c->data, c->size);
	while (pc_kv_next(&it, &key, &value) == 1)
		if ((strcmp(key, "sampling.cpu.stack_copy") == 0 ||
		     strcmp(key, "sched.stack_copy") == 0) && strcmp(value, "0") != 0)
			return 1;
	return 0;
}

static void add_map(struct ustack_state *S, const struct pc_rec *rec)
{
	struct pc_rec_map m;
	size_t tail_len;
	const uint8_t *tail = pc_rec_copy(rec, &m, sizeof(m), &tail_len);
	struct mapping mapping = {
		.ts = m.ts, .start = m.start, .end = m.end, .pgoff = m.pgoff, .pid = m.pid,
	};

	if (m.path_len > tail_len || m.build_id_len > PC_BUILD_ID_MAX || m.start >= m.end)
		return; /* counted by the main pass */
	mapping.build_id_len = m.build_id_len;
	memcpy(mapping.build_id, m.build_id, m.build_id_len);
	mapping.path = strndup((const char *)tail, m.path_len);
	if (mapping.path)
		map_index_add(&S->maps, &mapping);
	free(mapping.path); /* map_index_add keeps its own copy */
}

static void scan_records(struct ustack_state *S, const struct pc_chunk *c)
{
	struct pc_rec_iter it;
	const struct pc_rec *rec;

	pc_rec_iter_init(&it, c->data, c->size);
	while (pc_rec_next(&it, &rec) == 1) {
		if (rec->type == PC_REC_UNWIND && c->hdr.type == PC_CHUNK_SYMBOLS)
			add_table(S, rec);
		else if (rec->type == PC_REC_MAP && c->hdr.type == PC_CHUNK_PROCS)
			add_map(S, rec);
	}
}

static struct ustack_state *state_new(void)
{
	struct ustack_state *S = calloc(1, sizeof(*S));

	if (!S)
		return NULL;
	map_index_init(&S->maps);
	hmap_init(&S->mod_by_key);
	hmap_init(&S->pending);
	hmap_init(&S->by_content);
	hmap_init(&S->refresh);
	return S;
}

int ustack_prepass(struct loader *L, struct pc_reader *reader)
{
	/* the event chunks (nearly all of the file) are stepped over unread */
	const uint32_t types = 1u << PC_CHUNK_META | 1u << PC_CHUNK_SYMBOLS | 1u << PC_CHUNK_PROCS;
	struct pc_chunk c;
	int seen_meta = 0;

	while (pc_reader_next_of(reader, &c, types) == 1) {
		if (c.hdr.type == PC_CHUNK_META && !seen_meta) {
			seen_meta = 1;
			if (!announces_copies(&c))
				break;
			if (!(L->ust = state_new()))
				return -1;
		} else if (L->ust && (c.hdr.type == PC_CHUNK_SYMBOLS ||
				      c.hdr.type == PC_CHUNK_PROCS)) {
			scan_records(L->ust, &c);
		}
	}
	if (L->ust)
		map_index_finish(&L->ust->maps);
	return pc_reader_rewind(reader);
}

/* ---- after the main pass ------------------------------------------------ */

static const char *stop_module(const struct ustack_state *S, const struct unwound *u,
			       uint64_t *offset)
{
	int64_t i = map_index_lookup(&S->maps, u->pid, u->stop_pc, 0);

	*offset = 0;
	if (i < 0)
		return NULL;
	*offset = u->stop_pc - S->maps.maps[i].start + S->maps.maps[i].pgoff;
	return S->maps.maps[i].path;
}

static int store_stack_rows(struct loader *L, sqlite3_stmt *st)
{
	const struct ustack_state *S = L->ust;

	for (uint32_t i = 0; i < S->nstacks; i++) {
		const struct unwound *u = &S->stacks[i];
		uint64_t offset;
		const char *module = stop_module(S, u, &offset);

		sqlite3_bind_int64(st, 1, USTACK_ID_BASE + (int64_t)i);
		sqlite3_bind_int64(st, 2, u->pid);
		db_bind_text(st, 3, u->stop == UNWIND_END ? "dwarf" : "partial");
		db_bind_text(st, 4, unwind_stop_name((enum unwind_stop)u->stop));
		sqlite3_bind_int64(st, 5, u->nframes);
		if (module && u->stop != UNWIND_END) {
			db_bind_text(st, 6, module);
			db_bind_u64(st, 7, offset);
		} else {
			sqlite3_bind_null(st, 6);
			sqlite3_bind_null(st, 7);
		}
		if (db_run(st) < 0)
			return -1;
	}
	return 0;
}

static int store_counters(struct loader *L)
{
	const struct ustack_state *S = L->ust;
	sqlite3_stmt *st = db_prepare(L->db,
		"INSERT INTO unwind_counts (key, value) VALUES (?,?)");
	uint64_t after, missing, same_after, same_missing;

	offcpu_copies_counts(S->held, &after, &missing);
	offcpu_copies_same_counts(S->held, &same_after, &same_missing);
	const struct { const char *k; uint64_t v; } rows[] = {
		{ "copies", S->copies }, { "copies.offcpu", S->offcpu_copies },
		{ "copies.offcpu_after", after }, { "copies.offcpu_missing", missing },
		{ "copies.offcpu_same", S->same },
		{ "copies.offcpu_same_paired", S->same_found + same_after },
		{ "copies.offcpu_same_missing", same_missing },
		{ "copies.refresh_agreed", S->refresh_agreed },
		{ "copies.refresh_differed", S->refresh_differed },
		{ "copies.refresh_unverified", S->refresh_unverified },
		{ "copies.malformed", S->malformed },
		{ "copies.fp_fallback", S->fp_copies }, { "frames.fp_fallback", S->fp_steps },
		{ "modules", S->nmods }, { "modules.unusable", S->tables_bad },
		{ "stacks", S->nstacks },
	};
	char key[64];
	int rc = st ? 0 : -1;

	for (int s = 0; s < UNWIND_STOP_COUNT && !rc; s++) {
		snprintf(key, sizeof(key), "copies.stop.%s", unwind_stop_name((enum unwind_stop)s));
		db_bind_text(st, 1, key);
		db_bind_u64(st, 2, S->by_stop[s]);
		rc = db_run(st);
	}
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]) && !rc; i++) {
		db_bind_text(st, 1, rows[i].k);
		db_bind_u64(st, 2, rows[i].v);
		rc = db_run(st);
	}
	sqlite3_finalize(st);
	return rc;
}

int ustack_store(struct loader *L)
{
	sqlite3_stmt *st;
	int rc;

	if (!L->ust)
		return 0;
	if (db_exec(L->db,
		    "CREATE TABLE user_stack_unwinds (stack_id INTEGER PRIMARY KEY,"
		    "  pid INTEGER, method TEXT, stop TEXT, frames INTEGER,"
		    "  stop_module TEXT, stop_offset INTEGER);"
		    "CREATE TABLE unwind_counts (key TEXT PRIMARY KEY, value INTEGER);") < 0)
		return -1;
	st = db_prepare(L->db, "INSERT INTO user_stack_unwinds VALUES (?,?,?,?,?,?,?)");
	if (!st)
		return -1;
	rc = store_stack_rows(L, st);
	sqlite3_finalize(st);
	return rc < 0 ? -1 : store_counters(L);
}

void ustack_free(struct loader *L)
{
	struct ustack_state *S = L->ust;

	if (!S)
		return;
	for (uint32_t i = 0; i < S->nmods; i++) {
		unwind_cfi_free(S->mods[i].cfi);
		pc_unwind_table_free(&S->mods[i].table);
		pc_unwind_table_free(&S->mods[i].go);
	}
	free(S->mods);
	free(S->stacks);
	map_index_free(&S->maps);
	hmap_free(&S->mod_by_key);
	hmap_free(&S->pending);
	hmap_free(&S->by_content);
	hmap_free(&S->refresh);
	offcpu_copies_free(S->held);
	free(S);
	L->ust = NULL;
}
