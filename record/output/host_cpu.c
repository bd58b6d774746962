/* host_cpu.c - the host's busy, idle and stolen CPU time over the
 * recording (see host_cpu.h). */
#include <errno.h>

#include "host_cpu.h"
#include "chunk_buffer.h"

int host_cpu_stats_kv(struct chunk_buffer *cb, const struct host_cpu *start,
		      const struct host_cpu *end)
{
	int err = 0;

	if (!start->ok || !end->ok || end->busy < start->busy || end->idle < start->idle ||
	    end->steal < start->steal)
		return 0;
	err |= chunk_buffer_add_kv_u64(cb, "host.cpu.busy_ns",
				       host_cpu_ticks_ns(end->busy - start->busy));
	err |= chunk_buffer_add_kv_u64(cb, "host.cpu.idle_ns",
				       host_cpu_ticks_ns(end->idle - start->idle));
	err |= chunk_buffer_add_kv_u64(cb, "host.cpu.steal_ns",
				       host_cpu_ticks_ns(end->steal - start->steal));
	return err ? -ENOMEM : 0;
}
