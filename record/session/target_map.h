/* target_map.h - the processes being followed when recording by pid or
 * command: the shared `targets` map and its bitmap `target_bits` (the
 * filter's fast path, see perfcap_bpf.h), filled with the initial pids
 * (forks are added by proc.bpf.c), and emptied of exited processes a
 * little after their exit, so records of their last moments still pass
 * the filter. */
#ifndef RECORD_TARGET_MAP_H
#define RECORD_TARGET_MAP_H

#include <stdint.h>

struct retired_target {
	uint32_t pid;
	uint64_t at_ns;
};

struct targets {
	int map_fd;                  /* the shared `targets` map */
	uint64_t *bits;              /* the shared `target_bits`, mmap'ed */
	uint32_t words;
	struct retired_target *retired; /* exited, leaving the map (FIFO) */
	uint32_t nretired;
	uint32_t retired_cap;
};

/* bits: target_bits as mapped (words of it), kept with the map. */
void targets_init(struct targets *t, int map_fd, uint64_t *bits, uint32_t words);

/* Adds pid to the map. 0 or -errno. */
int targets_add(struct targets *t, uint32_t pid);

/* pid exited at now_ns: it leaves the map RETIRE_DELAY later. */
void targets_retire(struct targets *t, uint32_t pid, uint64_t now_ns);
void targets_remove_retired(struct targets *t, uint64_t now_ns);

/* The pids in the map now (followed forks included), malloc'd into *pids.
 * 0 or -errno. */
int targets_list(const struct targets *t, uint32_t **pids, uint32_t *n);

void targets_free(struct targets *t);

#endif /* RECORD_TARGET_MAP_H */
