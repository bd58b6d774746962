/* metrics_drain.h - what the agg and waits sources share in user space:
 * the syscall class table they load into their BPF objects
 * (bpf/metrics.bpf.h) and the draining of an `agg_metrics` map into
 * THREAD_METRIC records, window by window.
 *
 * A window is drained (iterate, write, delete) once it has been over for
 * METRICS_GRACE_NS, so no program still adds to it; at the end every entry
 * left is drained. Entries of a window already drained (a call or wait
 * that ended right at the edge on a preempted CPU) are still written and
 * counted as late.
 */
#ifndef RECORD_METRICS_DRAIN_H
#define RECORD_METRICS_DRAIN_H

#include <stdbool.h>
#include <stdint.h>

struct bpf_map;

struct chunk_buffer;
struct consumer;

#define METRICS_GRACE_NS (200ull * 1000 * 1000)  /* drain a window 200 ms after its end */

struct metrics_drain {
	int map_fd;               /* the object's agg_metrics */
	int source;               /* PERFCAP_SRC_*, records are counted for it */
	uint64_t origin_ns;       /* record.start_ns: window 0 starts there */
	int64_t drained_below;    /* windows < this are drained */
	uint64_t records, late, drain_errors, write_errors;
};

/* Fills the BPF object's agg_class_of[] by system call number. */
void metrics_classes_fill(volatile uint8_t *table);

/* "1:futex_wait,2:futex_wake,...": META <source>.classes. */
const char *metrics_class_list(void);

/* Drains the windows that are over (all of them when final). */
void metrics_drain_tick(struct metrics_drain *d, struct consumer *c, uint64_t now_ns,
			bool final);

/* STATS <prefix>.records, .late, .drain_errors, .write_errors. 0 or -ENOMEM. */
/* META of a source of kernel sums: PREFIX.origin_ns, .window_ns,
 * .entries_max, .classes. 0 or -ENOMEM. */
int metrics_meta_kv(struct chunk_buffer *kv, const char *prefix, uint64_t origin_ns);

/* Reads the source's counters (PERFCAP_AGG_C_*) and warns on stderr when
 * sums found the map full: WHAT ("calls", "waits") are missing from the
 * THREAD_METRIC records. */
void metrics_read_counters(struct bpf_map *counters, const char *prefix, const char *what,
			   uint64_t v[PERFCAP_AGG_C_NR]);

int metrics_drain_stats(const struct metrics_drain *d, struct chunk_buffer *kv,
			const char *prefix);

#endif /* RECORD_METRICS_DRAIN_H */
