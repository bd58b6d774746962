/* host_cpu.h - the host's CPU time over the recording, by what it went to:
 * busy (user, system, interrupts), idle (idle and I/O wait) and steal
 * (time a hypervisor gave to other guests while this virtual machine had
 * work: the recording cannot see it, and on-CPU times stretch by it).
 * From the "cpu" line of /proc/stat (util/cpu_times.h), read when the
 * recording starts and when it ends; written as STATS host.cpu.*_ns.
 * The report shows the shares, the diagnosis says when steal is large
 * enough to matter, and diff warns when the sides' steal differs. */
#ifndef RECORD_HOST_CPU_H
#define RECORD_HOST_CPU_H

#include <stdint.h>

#include "util/cpu_times.h"

struct chunk_buffer;

/* STATS host.cpu.busy_ns, host.cpu.idle_ns, host.cpu.steal_ns: what
 * changed from start to end, in ns of CPU time (nothing when either read
 * failed or the counters went back). 0 or -ENOMEM. */
int host_cpu_stats_kv(struct chunk_buffer *cb, const struct host_cpu *start,
		      const struct host_cpu *end);

#endif /* RECORD_HOST_CPU_H */
