/* stats.h - the STATS chunk (loss and quality counters of the recording),
 * the END totals, and the one-line summary printed at exit. */
#ifndef RECORD_STATS_H
#define RECORD_STATS_H

#include <stdint.h>

#include "chunk_buffer.h"
#include "consumer.h"
#include "perfcap_bpf.h"
#include "symbols.h"

struct record_totals {
	struct consumer_stats consumer;
	uint64_t stacks_unique;
	uint64_t procs_seen;
	uint64_t procs_unreadable;
	uint64_t records_failed;          /* PROCS records lost to out-of-memory */
	struct symbol_stats symbols;
	uint64_t kernel_losses[PERFCAP_LOSS_NR];
	const uint64_t *sample_losses_per_cpu; /* nr_possible entries, may be NULL */
	int      nr_possible;
	uint64_t backpressure_waits;
	uint64_t start_ns;                /* monotonic */
	uint64_t end_ns;
};

uint64_t totals_lost_kernel(const struct record_totals *t);
uint64_t totals_lost_user(const struct record_totals *t);

/* STATS key/values. 0 or -ENOMEM. */
int stats_build(struct chunk_buffer *cb, const struct record_totals *t);

/* END key/values: chunks, events, record.end_ns. */
int stats_build_end(struct chunk_buffer *cb, const struct record_totals *t, uint64_t chunks);

/* "perfcap-record: wrote N samples (S stacks, P processes) to FILE (B bytes);
 * lost L of T events" on stderr. */
void stats_print_summary(const struct record_totals *t, const char *path, uint64_t bytes);

#endif /* RECORD_STATS_H */
