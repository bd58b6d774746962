/* unwind_tables.c - embeds the unwind tables of the modules that copied
 * user stacks may return into (see unwind_tables.h). Which modules: those
 * holding a copy's ip or a word of a copy (ustack_scan.c: candidate return
 * addresses), since the frames above the sampled ip are unknown until the
 * analyzer unwinds; not every library a process maps. Their symbols are
 * the candidates' (symbol hits), not all of them.
 * Modules are deduplicated by build-id (by path when they have none). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "modules.h"
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

/* Whether an earlier wanted module has the same build-id (or path). */
static bool seen_before(const struct module_registry *r, const uint8_t *wanted, uint32_t m)
{
	const struct module *mod = &r->mods[m];

	for (uint32_t i = 0; i < m; i++) {
		const struct module *o = &r->mods[i];

		if (!wanted[i])
			continue;
		if (mod->build_id_len ? (o->build_id_len == mod->build_id_len &&
					 !memcmp(o->build_id, mod->build_id, mod->build_id_len))
				      : !strcmp(o->path, mod->path))
			return true;
	}
	return false;
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
	if (err) {
		if (err == -ENOENT)
			stats.no_table++;
		else
			stats.unreadable++;
		verbose_line("no unwind table for %s: %s", mod->path, why);
		return err == -ENOMEM ? err : 0;
	}
	if (!t.build_id_len && mod->build_id_len) {
		t.build_id_len = mod->build_id_len;
		memcpy(t.build_id, mod->build_id, mod->build_id_len);
	}
	err = pc_buf_add_unwind(&cb->buf, &t);
	if (!err) {
		chunk_buffer_count(cb, 0);
		stats.modules++;
		stats.bytes += t.table_len + t.hdr_len;
	}
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
	return err ? -ENOMEM : 0;
}
