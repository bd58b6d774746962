/* map_index.h - the executable memory mappings of every process in a
 * capture, to find which file (and file offset) a user address belongs to
 * at a given time. */
#ifndef ANALYZE_MAP_INDEX_H
#define ANALYZE_MAP_INDEX_H

#include <stdint.h>

#include "util/hashmap.h"
#include "perfcap_format.h"

struct mapping {
	uint64_t ts;              /* when the recorder read it */
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;
	uint32_t pid;
	uint8_t  build_id_len;
	uint8_t  build_id[PC_BUILD_ID_MAX];
	char    *path;            /* printable copy */
};

struct map_index {
	struct mapping *maps;
	uint32_t len;
	uint32_t cap;
	struct hmap by_pid;       /* pid -> index into lists */
	struct pid_maps {
		uint32_t *idx;        /* indices into maps, sorted by start */
		uint32_t len;
		uint32_t cap;
	} *lists;
	uint32_t nlists;
	uint32_t lists_cap;
};

void map_index_init(struct map_index *mi);
void map_index_free(struct map_index *mi);

/* Adds a mapping (path copied). Returns its index or -ENOMEM. */
int64_t map_index_add(struct map_index *mi, const struct mapping *m);

/* Sorts each process's mappings; call once after the last add. */
void map_index_finish(struct map_index *mi);

/* The mapping of pid covering addr: the latest one read at or before ts,
 * else the earliest one read after ts. Returns its index or -1. */
int64_t map_index_lookup(const struct map_index *mi, uint32_t pid, uint64_t addr,
			 uint64_t ts);

#endif /* ANALYZE_MAP_INDEX_H */
