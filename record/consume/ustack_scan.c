/* ustack_scan.c - candidate return addresses of user stack copies (see
 * ustack_scan.h). Candidates are deduplicated per (module, file offset)
 * before they become symbol hits, so the hit lists grow with the distinct
 * code addresses seen, not with the number of copies.
 *
 * A copy of a process whose mappings are not known yet (its first copy
 * may come before its first sample) is kept aside, within
 * DEFERRED_MAX_BYTES, and scanned again when the process table has grown
 * and at the end: the embedded unwind tables keep only the entries that
 * cover a scanned word (common/unwind_prune.h), so a copy never scanned
 * could find its frames missing. What stays unscanned is counted. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ustack_scan.h"
#include "util/u64_table.h"

static struct u64_table seen;      /* module << 40 | offset -> 1 */
static uint8_t *hit_modules;       /* indexed by module */
static uint32_t hit_cap;
static uint64_t scanned, unscanned, deferred, code_words, out_of_memory;

#define DEFERRED_MAX_BYTES (16u << 20)

struct deferred_copy {
	uint32_t pid;
	uint32_t size;
	uint64_t ip;
	uint8_t data[];
};

static struct deferred_copy **later;   /* copies of processes not yet known */
static size_t nlater, later_cap, later_bytes;
static uint32_t later_nprocs;          /* pt->nprocs at the last retry */

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

/* What a scan found for a page (direct-mapped): its mapping, or none. A
 * stack's words point mostly into a few pages of the stack itself, of the
 * heap (neither is a mapping of code: found as none) and of a few
 * modules, so most words need no search of the sorted maps. Valid for
 * one scan. */
#define MAP_CACHE_SLOTS 64

struct map_cache {
	uint64_t page[MAP_CACHE_SLOTS];   /* page number + 1; 0: empty */
	const struct proc_map *map[MAP_CACHE_SLOTS];
};

/* The mapping of aspace holding addr, or NULL. */
static const struct proc_map *find_map(struct process_table *pt, uint32_t aspace, uint64_t addr,
				       struct map_cache *c)
{
	uint64_t page = (addr >> 12) + 1;
	unsigned slot = page % MAP_CACHE_SLOTS;
	const struct proc_map *map;

	if (c->page[slot] == page)
		return c->map[slot];
	map = processes_find_map(pt, aspace, addr);
	/* a mapping that covers the whole page answers for all of it */
	if (!map || (map->start <= (addr & ~4095ull) && map->end >= (addr | 4095) + 1)) {
		c->page[slot] = page;
		c->map[slot] = map;
	}
	return map;
}

/* A code address of aspace: its module is hit, and the address (and the
 * byte before it, where a return address is looked up) a symbol hit. */
static bool note(struct process_table *pt, uint32_t aspace, uint64_t addr,
		 struct map_cache *c)
{
	const struct proc_map *map = find_map(pt, aspace, addr, c);
	uint64_t offset, key;
	struct module *mod;

	if (!map || map->module == MODULE_NONE || map->module >= pt->modules.n)
		return false;
	code_words++;
	offset = addr - map->start + map->pgoff;
	key = (uint64_t)map->module << 40 | (offset & ((1ull << 40) - 1));
	if (u64_table_get(&seen, key) != U64_TABLE_EMPTY)
		return true;
	mod = &pt->modules.mods[map->module];
	if (u64_table_put(&seen, key, 1) || mark_module(map->module) ||
	    addr_list_add(&mod->hits, offset) || (offset && addr_list_add(&mod->hits, offset - 1)))
		out_of_memory++;
	return true;
}

/* The address space of pid, or UINT32_MAX while its mappings are unknown. */
static uint32_t aspace_of(const struct process_table *pt, uint32_t pid)
{
	uint32_t idx = u64_table_get(&pt->proc_by_pid, pid), aspace;

	if (idx == U64_TABLE_EMPTY || idx >= pt->nprocs ||
	    (aspace = pt->procs[idx].aspace) >= pt->naspaces || pt->aspaces[aspace].nmaps == 0)
		return UINT32_MAX;
	return aspace;
}

/* Words already looked at, direct-mapped by value, across scans: the
 * copies of a thread share most of their words (the frames below the one
 * that blocked, the same pointers), and noting a word again adds nothing.
 * An entry holds for the address space as it was when the word was noted
 * (its pid, slot and number of mappings: the mappings only grow), so a
 * re-read of the maps, an exec or a reused slot makes it miss. */
#define WORD_CACHE_SLOTS 4096

struct word_seen {
	uint64_t word;
	uint32_t pid, aspace, nmaps;
	bool code;                /* it was a code word (counted again) */
};

static struct word_seen words_seen[WORD_CACHE_SLOTS];

static struct word_seen *word_slot(uint64_t word)
{
	return &words_seen[(word * 0x9e3779b97f4a7c15ull) >> 52]; /* 12 bits */
}

static void scan_words(struct process_table *pt, uint32_t aspace, uint64_t ip,
		       const uint8_t *data, uint32_t size)
{
	const struct address_space *as = &pt->aspaces[aspace];
	uint64_t lo = as->maps[0].start;  /* sorted by start, not overlapping */
	uint64_t hi = as->maps[as->nmaps - 1].end, word;
	struct word_seen now = { .pid = as->pid, .aspace = aspace, .nmaps = as->nmaps };
	struct map_cache cache = { { 0 }, { NULL } };

	scanned++;
	note(pt, aspace, ip, &cache);
	for (uint32_t i = 0; i + sizeof(word) <= size; i += sizeof(word)) {
		struct word_seen *w;

		memcpy(&word, data + i, sizeof(word));
		if (word < lo || word >= hi)
			continue;
		w = word_slot(word);
		if (w->word == word && w->pid == now.pid && w->aspace == now.aspace &&
		    w->nmaps == now.nmaps) {
			code_words += w->code;
			continue;
		}
		now.code = note(pt, aspace, word, &cache);
		now.word = word;
		*w = now;
	}
}

void ustack_scan_forget_words(void)
{
	memset(words_seen, 0, sizeof(words_seen));
}

/* Keeps a copy for a later scan; false when over the budget. */
static bool defer(uint32_t pid, uint64_t ip, const uint8_t *data, uint32_t size)
{
	struct deferred_copy *d;

	if (later_bytes + size > DEFERRED_MAX_BYTES)
		return false;
	if (nlater == later_cap) {
		size_t cap = later_cap ? 2 * later_cap : 64;
		struct deferred_copy **grown = realloc(later, cap * sizeof(*grown));

		if (!grown)
			return false;
		later = grown;
		later_cap = cap;
	}
	d = malloc(sizeof(*d) + size);
	if (!d)
		return false;
	d->pid = pid;
	d->ip = ip;
	d->size = size;
	memcpy(d->data, data, size);
	later[nlater++] = d;
	later_bytes += size;
	deferred++;
	return true;
}

void ustack_scan_retry(struct process_table *pt)
{
	size_t kept = 0;

	later_nprocs = pt->nprocs;
	for (size_t i = 0; i < nlater; i++) {
		struct deferred_copy *d = later[i];
		uint32_t aspace = aspace_of(pt, d->pid);

		if (aspace == UINT32_MAX) {
			later[kept++] = d;
			continue;
		}
		scan_words(pt, aspace, d->ip, d->data, d->size);
		later_bytes -= d->size;
		free(d);
	}
	nlater = kept;
}

void ustack_scan(struct process_table *pt, uint32_t pid, uint64_t ts, uint64_t ip,
		 const uint8_t *data, uint32_t size)
{
	uint32_t aspace = aspace_of(pt, pid);

	if (nlater && pt->nprocs != later_nprocs)
		ustack_scan_retry(pt);
	if (aspace != UINT32_MAX) {
		processes_check_user_ips(pt, aspace, &ip, 1, ts);
		scan_words(pt, aspace, ip, data, size);
	}
	else if (!defer(pid, ip, data, size))
		unscanned++;
}

bool ustack_scan_module_hit(uint32_t module)
{
	return module < hit_cap && hit_modules[module];
}

int ustack_scan_stats_kv(struct chunk_buffer *kv)
{
	int err = 0;

	if (!scanned && !unscanned && !nlater)
		return 0;
	err |= chunk_buffer_add_kv_u64(kv, "ustack.scanned", scanned);
	err |= chunk_buffer_add_kv_u64(kv, "ustack.unscanned", unscanned + nlater);
	err |= chunk_buffer_add_kv_u64(kv, "ustack.deferred", deferred);
	err |= chunk_buffer_add_kv_u64(kv, "ustack.code_words", code_words);
	err |= chunk_buffer_add_kv_u64(kv, "ustack.scan_out_of_memory", out_of_memory);
	return err ? -ENOMEM : 0;
}

void ustack_scan_free(void)
{
	u64_table_free(&seen);
	for (size_t i = 0; i < nlater; i++)
		free(later[i]);
	free(later);
	later = NULL;
	nlater = later_cap = later_bytes = 0;
	later_nprocs = 0;
	ustack_scan_forget_words();
	free(hit_modules);
	hit_modules = NULL;
	hit_cap = 0;
	scanned = unscanned = deferred = code_words = out_of_memory = 0;
}
