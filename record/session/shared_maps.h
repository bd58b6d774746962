/* shared_maps.h - the BPF maps every source shares, created once by user
 * space before any BPF object is loaded (each object then reuses them):
 *
 *   targets       HASH tgid -> u8, the pid filter (PERFCAP_TARGETS_MAX)
 *   target_bits   ARRAY of u64 (mmap'ed here): the same set as a bitmap
 *                 of the tgids below pid_max, the filter's fast path
 *   rings         ARRAY_OF_MAPS of nr_rings RINGBUFs: the sharded ring
 *                 buffers; CPU c writes to rings[c % nr_rings], one ring
 *                 per CPU up to PERFCAP_RINGS_MAX
 *   losses        PERCPU_ARRAY [source * PERFCAP_LOSS_NR + reason] u64
 *   stacks        STACK_TRACE, PERFCAP_STACKMAP_ENTRIES stacks of
 *                 PERFCAP_STACK_MAX_DEPTH ips
 *   source_rates  PERCPU_ARRAY [source]: 1-in-N and rate cap state
 *
 * and reads the loss counters back at the end.
 */
#ifndef RECORD_SHARED_MAPS_H
#define RECORD_SHARED_MAPS_H

#include <stdint.h>

#include "perfcap_bpf.h"

struct bpf_object;

struct shared_maps {
	int      targets_fd;
	int      target_bits_fd;
	uint64_t *target_bits;         /* mmap'ed, target_words words */
	uint32_t target_words;
	int      rings_fd;
	int      ring_fds[PERFCAP_RINGS_MAX];
	uint32_t nr_rings;
	uint32_t ring_bytes;           /* each */
	int      losses_fd;
	int      stacks_fd;
	int      source_rates_fd;
	int      nr_possible;          /* slots in per-CPU map values */
};

/* What the kernel side counted, summed over CPUs; dropped_per_cpu holds,
 * per source and CPU, the records dropped (RINGBUF + NO_RING + SCRATCH). */
struct loss_counts {
	uint64_t total[PERFCAP_SRC_MAX][PERFCAP_LOSS_NR];
	uint64_t *dropped_per_cpu;     /* [source * nr_cpus + cpu], malloc'd */
	int      nr_cpus;
};

/* nr_rings = min(possible CPUs, PERFCAP_RINGS_MAX); ring_bytes a power of
 * two (page multiple). Prints one error line and returns -errno. */
int shared_maps_create(struct shared_maps *m, uint32_t ring_bytes);

/* Makes obj reuse every shared map it declares. 0 or -errno. */
int shared_maps_reuse(const struct shared_maps *m, struct bpf_object *obj);

/* Ring size for CPU samples at freq_hz: about two seconds of samples of
 * the CPUs sharing a ring, at least 4 MiB, at most 256 MiB. */
uint32_t shared_maps_ring_bytes(uint64_t freq_hz, int nr_possible);

int shared_maps_read_losses(const struct shared_maps *m, struct loss_counts *out);

/* Records dropped by the kernel side of source: ring full, no ring,
 * no scratch. */
uint64_t loss_counts_dropped(const struct loss_counts *l, int source);
void loss_counts_free(struct loss_counts *l);

void shared_maps_destroy(struct shared_maps *m);

#endif /* RECORD_SHARED_MAPS_H */
