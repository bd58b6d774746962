/* percpu_counts.h - reading a source's own counters: a BPF per-CPU array
 * of u64 (one slot per counter), summed over the possible CPUs. */
#ifndef RECORD_PERCPU_COUNTS_H
#define RECORD_PERCPU_COUNTS_H

#include <stddef.h>
#include <stdint.h>

struct bpf_map;

/* Fills out[0..n) with the sums of slots 0..n-1 of map; a slot that cannot
 * be read stays 0. Returns 0 or -errno (the first error). */
int percpu_counts_read(const struct bpf_map *map, uint64_t *out, size_t n);

#endif /* RECORD_PERCPU_COUNTS_H */
