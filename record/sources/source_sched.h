/* source_sched.h - what the sched source offers the waits source: when
 * both are recorded, sched's programs on sched_switch and sched_waking
 * also make the waits' sums (bpf/waits.bpf.h), so that each tracepoint
 * runs one program, not two, and each task's storage is looked up once. The sums go to maps of the sched object,
 * which the waits source's object reuses: it drains and counts them as
 * when its own programs fill them, and loads none of its programs.
 */
#ifndef RECORD_SOURCE_SCHED_H
#define RECORD_SOURCE_SCHED_H
#include <stdbool.h>

struct bpf_map;

/* The maps the sched programs sum waits into (agg_metrics, agg_counters),
 * when they do: sched loaded with the waits source selected. 0, or
 * -ENOENT when they do not. (Each thread's wait in progress is kept in the
 * sched programs' own task storage.) */
int sched_waits_maps(struct bpf_map **sums, struct bpf_map **counters);

/* Whether the sched programs are attached (so the waits' sums are made). */
bool sched_attached(void);

/* Context switches of traced threads a second, as the sched source last
 * measured them: its windows' last period's rate, or (every switch
 * followed so far) the switches since the last call at now over the time;
 * 0 when unknown (sched not attached, or the first call). For the cpu
 * source's choice of events. */
uint64_t sched_switch_rate(uint64_t now);

#endif /* RECORD_SOURCE_SCHED_H */
