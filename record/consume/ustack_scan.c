/* ustack_scan.c - candidate return addresses of user stack copies (see
 * ustack_scan.h). Candidates are deduplicated per (module, file offset)
 * before they become symbol hits, so the hit lists grow with the distinct
 * code addresses seen, not with the number of copies. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ustack_scan.h"
#include "util/u64_table.h"

static struct u64_table seen;      /* module << 40 | offset -> 1 */
static uint8_t *hit_modules;       /* indexed by module */
static uint32_t hit_cap;
static uint64_t scanned, unscanned, code_words, out_of_memory;

static int mark_module(uint32_t m)
{
	if (m >= hit_cap) {
		uint32_t cap = hit_cap ? hit_cap : 64;
		uint8_t *grown;

		while (cap <= m)
			cap *= 2;
		grown = realloc(hit_modules, cap);
		if (!grown)
			return -ENOMEM;
		memset(grown + hit_cap, 0, cap - hit_cap);
		hit_modules = grown;
		hit_cap = cap;
	}
	hit_modules[m] = 1;
	return 0;
}

/* A code address of aspace: its module is hit, and the address (and the
 * byte before it, where a return address is looked up) a symbol hit. */
static void note(struct process_table *pt, uint32_t aspace, uint64_t addr)
{
	const struct proc_map *map = processes_find_map(pt, aspace, addr);
	uint64_t offset, key;
	struct module *mod;

	if (!map || map->module == MODULE_NONE || map->module >= pt->modules.n)
		return;
	code_words++;
	offset = addr - map->start + map->pgoff;
	key = (uint64_t)map->module << 40 | (offset & ((1ull << 40) - 1));
	if (u64_table_get(&seen, key) != U64_TABLE_EMPTY)
		return;
	mod = &pt->modules.mods[map->module];
	if (u64_table_put(&seen, key, 1) || mark_module(map->module) ||
	    addr_list_add(&mod->hits, offset) || (offset && addr_list_add(&mod->hits, offset - 1)))
		out_of_memory++;
}

void ustack_scan(struct process_table *pt, uint32_t pid, uint64_t ip, const uint8_t *data,
		 uint32_t size)
{
	uint32_t idx = u64_table_get(&pt->proc_by_pid, pid);
	const struct address_space *as;
	uint64_t lo, hi, word;
	uint32_t aspace;

	if (idx == U64_TABLE_EMPTY || idx >= pt->nprocs ||
	    (aspace = pt->procs[idx].aspace) >= pt->naspaces ||
	    pt->aspaces[aspace].nmaps == 0) {
		unscanned++;
		return;
	}
	as = &pt->aspaces[aspace];
	lo = as->maps[0].start;  /* sorted by start, not overlapping */
	hi = as->maps[as->nmaps - 1].end;
	scanned++;
	note(pt, aspace, ip);
	for (uint32_t i = 0; i + sizeof(word) <= size; i += sizeof(word)) {
		memcpy(&word, data + i, sizeof(word));
		if (word >= lo && word < hi)
			note(pt, aspace, word);
	}
}

bool ustack_scan_module_hit(uint32_t module)
{
	return module < hit_cap && hit_modules[module];
}

int ustack_scan_stats_kv(struct chunk_buffer *kv)
{
	int err = 0;

	if (!scanned && !unscanned)
		return 0;
	err |= chunk_buffer_add_kv_u64(kv, "ustack.scanned", scanned);
	err |= chunk_buffer_add_kv_u64(kv, "ustack.unscanned", unscanned);
	err |= chunk_buffer_add_kv_u64(kv, "ustack.code_words", code_words);
	err |= chunk_buffer_add_kv_u64(kv, "ustack.scan_out_of_memory", out_of_memory);
	return err ? -ENOMEM : 0;
}

void ustack_scan_free(void)
{
	u64_table_free(&seen);
	free(hit_modules);
	hit_modules = NULL;
	hit_cap = 0;
	scanned = unscanned = code_words = out_of_memory = 0;
}
