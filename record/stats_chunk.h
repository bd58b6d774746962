/* stats_chunk.h - the STATS chunk (loss and quality counters of the recording,
 * per source and overall), the END totals, and the summary printed at
 * exit. */
#ifndef RECORD_STATS_CHUNK_H
#define RECORD_STATS_CHUNK_H

#include "consume/jvm_perfmap.h"
#include <stdbool.h>
#include <stdint.h>

#include "consume/consumer.h"
#include "consume/socket_snapshot.h"
#include "output/host_cpu.h"
#include "consume/symbols.h"
#include "output/chunk_buffer.h"
#include "session/shared_maps.h"
#include "sources/source.h"

struct record_totals {
	const struct consumer *consumer;
	const bool *attached;             /* by source id */
	struct loss_counts losses;        /* from the kernel side */
	struct symbol_stats symbols;
	uint64_t backpressure_waits;
	uint64_t start_ns;                /* monotonic */
	uint64_t end_ns;
	const char *stop_reason;          /* record.stop_reason (main.c) */
	uint64_t max_size_dropped;        /* events --max-size did not write */
	uint64_t flight_dropped;          /* events older than the flight window */
	const struct socket_snapshot_stats *sockets; /* the /proc socket snapshots */
	const struct jvm_perfmap_stats *jvm;  /* --jvm-perfmap requests */
	const struct host_cpu *cpu_start, *cpu_end; /* host CPU time (host_cpu.h) */
};

/* STATS key/values. 0 or -ENOMEM. */
int stats_build(struct chunk_buffer *cb, const struct record_totals *t);

/* END key/values: chunks, events, record.end_ns. */
int stats_build_end(struct chunk_buffer *cb, const struct record_totals *t, uint64_t chunks);

/* On stderr:
 * "perfcap-record: wrote N events (cpu a, sched b; S stacks, P processes)
 *  to FILE (B bytes)", "perfcap-record: lost L of T events (cpu l/t, ...)"
 * and, when any, the events --max-size or the flight recorder dropped and
 * what --sample and --rate-cap left out. */
void stats_print_summary(const struct record_totals *t, const char *path, uint64_t bytes);

#endif /* RECORD_STATS_CHUNK_H */
