/* evict.h - bounds the recorder's per-process state (issue 16, defect 9).
 *
 * Without eviction every process, image, thread and user stack ever seen
 * stays in memory to the end, so a fork storm grows the recorder steadily.
 * Now, once a second (consumer_tick):
 *
 *   - a process whose exit was seen EVICT_DELAY_NS ago, and an image
 *     replaced by exec or pid reuse that long ago, is evicted: the ips of
 *     its user stacks are located in its mappings then (module offsets and
 *     JIT ips, exactly what the end of the recording would have done, as
 *     no mapping can be added after the exit), its modules are marked for
 *     unwind tables if it had stack copies, and then its mappings, its
 *     stacks' ips and index entries, its stack-map cache entries, its
 *     threads and its table slots are freed. The delay lets late records
 *     of the process (other CPUs' rings) still find it.
 *   - beyond EVICT_PROCS_MAX processes (exit events lost, or very many
 *     live ones), the oldest live ones are evicted the same way; a later
 *     record of such a process describes it again (new PROC/MAP records).
 *   - beyond EVICT_THREADS_MAX threads, threads of processes not in the
 *     table (names of untraced tasks) and then the oldest go; one seen
 *     again gets a new THREAD record.
 *   - the JIT ips (anonymous or unmapped memory) of an evicted image are
 *     kept for the end only if /tmp/perf-PID.map exists (a perf map in the
 *     process's own mount namespace went with it; the end of the recording
 *     would not find it either); beyond EVICT_JIT_MAX such images, the ips
 *     of further ones are dropped (counted).
 *
 * Everything evicted is counted in STATS (procs.evicted, ...), the
 * recorder's summary and the report's data quality. What stays per stack
 * ever seen: its 32-byte entry (stack ids are dense indexes).
 */
#ifndef RECORD_EVICT_H
#define RECORD_EVICT_H

#include <stdint.h>

#include "output/chunk_buffer.h"

struct consumer;
struct process_table;

#define EVICT_DELAY_NS    (1000ull * 1000 * 1000) /* 1 s after the exit */
#define EVICT_PROCS_MAX   32768u
#define EVICT_THREADS_MAX 131072u
#define EVICT_JIT_MAX     4096u

/* One eviction pass at monotonic time now_ns. */
void evict_pass(struct consumer *c, uint64_t now_ns);

/* The counters as STATS keys (procs.evicted, ...), and the recorder's
 * peak resident memory (record.peak_rss_kb, getrusage) that they bound.
 * 0 or -ENOMEM. */
int evict_stats_kv(struct chunk_buffer *kv, const struct process_table *pt);

/* A summary line when anything was evicted. */
void evict_print_summary(const struct process_table *pt);

#endif /* RECORD_EVICT_H */
