/* unwind_tables.c - embeds the unwind tables of the modules that copied
 * user stacks may return into (see unwind_tables.h). Which modules: those
 * holding a copy's ip or a word of a copy (ustack_scan.c: candidate return
 * addresses), since the frames above the sampled ip are unknown until the
 * analyzer unwinds; not every library a process maps. Their symbols are
 * the candidates' (symbol hits), not all of them.
 * Modules are deduplicated by build-id (by path when they have none).
 * Each .eh_frame keeps only the FDEs covering a candidate of its module
 * (common/unwind_prune.h): the same words decide which modules and which
 * of their entries a capture carries. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "modules.h"
#include "common/unwind_prune.h"
#include "common/unwind_table.h"
#include "unwind_tables.h"
#include "ustack_copy.h"
#include "ustack_scan.h"
#include "util/util.h"

#define UNWIND_CHUNK_BYTES (32u << 20) /* start a new chunk past this */

static struct unwind_table_stats stats;
static int considered;

/* Marks the modules mapped by processes with copies that some copy may
 * return into. Returns how many. */
static uint32_t mark_modules(struct process_table *pt, uint8_t *wanted)
{
	uint32_t n = 0;

	for (uint32_t a = 0; a < pt->naspaces; a++) {
		const struct address_space *as = &pt->aspaces[a];

		if (!ustack_copy_has_pid(as->pid))
			continue;
		for (uint32_t i = 0; i < as->nmaps; i++) {
			uint32_t m = as->maps[i].module;

			if (m != MODULE_NONE && m < pt->modules.n && !wanted[m] &&
			    ustack_scan_module_hit(m)) {
				wanted[m] = 1;
				n++;
			}
		}
	}
	for (uint32_t m = 0; m < pt->modules.n; m++) { /* of evicted processes */
		if (pt->modules.mods[m].unwind_wanted && !wanted[m]) {
			wanted[m] = 1;
			n++;
		}
	}
	return n;
}

static bool same_file(const struct module *a, const struct module *b)
{
	return a->build_id_len ? (b->build_id_len == a->build_id_len &&
				  !memcmp(b->build_id, a->build_id, a->build_id_len))
			       : !strcmp(b->path, a->path);
}

/* Whether an earlier wanted module has the same build-id (or path). */
static bool seen_before(const struct module_registry *r, const uint8_t *wanted, uint32_t m)
{
	for (uint32_t i = 0; i < m; i++)
		if (wanted[i] && same_file(&r->mods[i], &r->mods[m]))
			return true;
	return false;
}

/* The one table written for a build-id serves the copies of every module
 * entry with that build-id (another path, another mount namespace): their
 * candidates join the first entry's before it is pruned. */
static int merge_duplicate_hits(struct module_registry *r, const uint8_t *wanted, uint32_t m)
{
	struct module *mod = &r->mods[m];

	for (uint32_t j = m + 1; j < r->n; j++) {
		const struct module *o = &r->mods[j];

		if (!wanted[j] || !same_file(mod, o))
			continue;
		for (size_t i = 0; i < o->hits.n; i++)
			if (addr_list_add(&mod->hits, o->hits.v[i]))
				return -ENOMEM;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Keeps the FDEs covering the module's candidates (file offsets of ips
 * and stack words, and the byte before each) as ELF addresses. */
static int prune(struct pc_unwind_table *t, const struct module *mod)
{
	struct pc_unwind_prune_stats ps;
	uint64_t *v = malloc((mod->hits.n ? mod->hits.n : 1) * sizeof(*v));
	size_t n = 0;
	int rc;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < mod->hits.n; i++)
		if (pc_unwind_offset_to_vaddr(t, mod->hits.v[i], &v[n]) == 0)
			n++;
	qsort(v, n, sizeof(*v), cmp_u64);
	rc = pc_unwind_table_prune(t, v, n, &ps);
	free(v);
	if (rc < 0)
		return rc;
	stats.fdes += ps.fdes;
	stats.fdes_kept += ps.kept;
	stats.blanked_bytes += ps.blanked_bytes;
	stats.pruned += rc == 1;
	if (rc == 1)
		t->flags |= PC_UNWIND_F_PRUNED;
	return 0;
}

/* A stripped Go binary: CFI from its pclntab, for the candidates only. */
static int load_go_table(struct pc_unwind_table *t, const struct module *mod, char *why,
			 size_t len)
{
	uint32_t nfdes = 0;
	int err = pc_unwind_table_load_go_fd(t, mod->fd, mod->path, mod->hits.v, mod->hits.n,
					     &nfdes, why, len);

	if (!err) {
		stats.go_synthesized++;
		stats.fdes += nfdes;
		stats.fdes_kept += nfdes;
	}
	return err == -EINVAL ? -ENOENT : err;
}

static int write_table(struct chunk_buffer *cb, struct pc_unwind_table *t,
			const struct module *mod)
{
	int err;

	if (!t->build_id_len && mod->build_id_len) {
		t->build_id_len = mod->build_id_len;
		memcpy(t->build_id, mod->build_id, mod->build_id_len);
	}
	err = pc_buf_add_unwind(&cb->buf, t);
	if (!err) {
		chunk_buffer_count(cb, 0);
		stats.bytes += t->table_len + t->hdr_len;
	}
	return err;
}

/* A Go binary linked with C code (cgo) has an .eh_frame for the C side
 * only: its Go code gets a second, synthesized table (format/SPEC.md
 * UNWIND). Nothing for other modules, or when no Go function is hit. */
static int add_go_side(struct chunk_buffer *cb, struct module *mod)
{
	struct pc_unwind_table go;
	char why[128];
	int err = load_go_table(&go, mod, why, sizeof(why));

	if (err)
		return err == -ENOMEM ? err : 0;
	err = write_table(cb, &go, mod);
	pc_unwind_table_free(&go);
	return err;
}

static int add_module_table(struct chunk_buffer *cb, struct module *mod)
{
	struct pc_unwind_table t;
	char why[128];
	int err;

	if (mod->fd < 0) {
		stats.unreadable++;
		return 0;
	}
	err = pc_unwind_table_load_fd(&t, mod->fd, mod->path, why, sizeof(why));
	if (err == -ENOENT)
		err = load_go_table(&t, mod, why, sizeof(why));
	if (err) {
		if (err == -ENOENT)
			stats.no_table++;
		else
			stats.unreadable++;
		verbose_line("no unwind table for %s: %s", mod->path, why);
		return err == -ENOMEM ? err : 0;
	}
	if (!(t.flags & PC_UNWIND_F_PRUNED))
		err = prune(&t, mod);
	if (!err)
		err = write_table(cb, &t, mod);
	if (!err)
		stats.modules++;
	if (!err && t.kind == PC_UNWIND_EH_FRAME)
		err = add_go_side(cb, mod);
	pc_unwind_table_free(&t);
	return err;
}

static int submit_if_large(struct writer_thread *wt, struct chunk_buffer *cb)
{
	if (cb->buf.len < UNWIND_CHUNK_BYTES)
		return 0;
	return writer_thread_submit(wt, PC_CHUNK_SYMBOLS, PC_SYMBOLS_VERSION, cb);
}

int unwind_tables_write(struct writer_thread *wt, struct process_table *pt)
{
	struct chunk_buffer cb = { 0 };
	uint8_t *wanted = calloc(pt->modules.n ? pt->modules.n : 1, 1);
	int err = 0;

	if (!wanted)
		return -ENOMEM;
	ustack_scan_retry(pt);
	if (mark_modules(pt, wanted))
		considered = 1;
	for (uint32_t m = 0; m < pt->modules.n && !err; m++) {
		struct module *mod = &pt->modules.mods[m];

		if (!wanted[m])
			continue;
		if (seen_before(&pt->modules, wanted, m)) {
			stats.duplicates++;
			continue;
		}
		err = merge_duplicate_hits(&pt->modules, wanted, m);
		if (!err)
			err = add_module_table(&cb, mod);
		if (!err)
			err = submit_if_large(wt, &cb);
	}
	if (!err && cb.count)
		err = writer_thread_submit(wt, PC_CHUNK_SYMBOLS, PC_SYMBOLS_VERSION, &cb);
	chunk_buffer_free(&cb);
	free(wanted);
	return err;
}

int unwind_tables_stats_kv(struct chunk_buffer *kv)
{
	int err = 0;

	if (!considered)
		return 0;
	err |= chunk_buffer_add_kv_u64(kv, "unwind.modules", stats.modules);
	err |= chunk_buffer_add_kv_u64(kv, "unwind.duplicates", stats.duplicates);
	err |= chunk_buffer_add_kv_u64(kv, "unwind.no_table", stats.no_table);
	err |= chunk_buffer_add_kv_u64(kv, "unwind.unreadable", stats.unreadable);
	err |= chunk_buffer_add_kv_u64(kv, "unwind.table_bytes", stats.bytes);
	err |= chunk_buffer_add_kv_u64(kv, "unwind.pruned", stats.pruned);
	err |= chunk_buffer_add_kv_u64(kv, "unwind.go_synthesized", stats.go_synthesized);
	err |= chunk_buffer_add_kv_u64(kv, "unwind.fdes", stats.fdes);
	err |= chunk_buffer_add_kv_u64(kv, "unwind.fdes_kept", stats.fdes_kept);
	err |= chunk_buffer_add_kv_u64(kv, "unwind.blanked_bytes", stats.blanked_bytes);
	return err ? -ENOMEM : 0;
}
