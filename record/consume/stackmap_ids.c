/* stackmap_ids.c - turns ids of the shared BPF stack map into capture stack
 * ids, for the event sources that capture stacks with bpf_get_stackid().
 *
 * The first time an id is seen its ips are read from the map (one syscall)
 * and interned like a raw stack, so a stack seen by a CPU sample and by an
 * off-CPU record gets one capture id. The translation is cached: entries of
 * the stack map are never deleted or replaced (no BPF_F_REUSE_STACKID), so
 * an id names the same stack for the whole recording. User stacks are
 * cached per address space: the same id in two processes (same addresses,
 * e.g. a shared library) is two capture stacks, like raw user stacks.
 * Negative ids (no stack, or the kernel's errno) are PC_STACK_NONE.
 */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>

#include "consumer.h"
#include "processes.h"

/* Reads stack id into ips (innermost first, zero after the last frame).
 * Returns the number of frames, or -errno. */
static int read_stack(int stacks_fd, int32_t id, uint64_t ips[PERFCAP_STACK_MAX_DEPTH])
{
	uint32_t key = (uint32_t)id;
	int nr = 0;

	if (bpf_map_lookup_elem(stacks_fd, &key, ips))
		return -errno;
	while (nr < PERFCAP_STACK_MAX_DEPTH && ips[nr])
		nr++;
	return nr;
}

/* Reads and interns a stack not seen before; PC_STACK_NONE if unreadable. */
static uint32_t intern_from_map(struct consumer *c, int source, uint16_t kind, int32_t id,
				uint32_t aspace, uint32_t pid, uint64_t ts)
{
	uint64_t ips[PERFCAP_STACK_MAX_DEPTH];
	int nr = read_stack(c->stackmap.stacks_fd, id, ips);

	if (nr < 0) {
		c->stack_errors[source]++;
		return PC_STACK_NONE;
	}
	return consumer_raw_stack(c, kind, aspace, pid, false, ips, (uint32_t)nr, ts);
}

static uint32_t translate(struct consumer *c, struct u64_table *cache, uint64_t key, int source,
			  uint16_t kind, int32_t id, uint32_t aspace, uint32_t pid, uint64_t ts)
{
	uint32_t capture_id = u64_table_get(cache, key);

	if (capture_id != U64_TABLE_EMPTY)
		return capture_id;
	capture_id = intern_from_map(c, source, kind, id, aspace, pid, ts);
	if (capture_id != PC_STACK_NONE && u64_table_put(cache, key, capture_id))
		c->stats.stack_records_failed++; /* not cached: looked up again next time */
	return capture_id;
}

uint32_t consumer_kernel_stack_id(struct consumer *c, int source, int32_t id)
{
	if (id < 0)
		return PC_STACK_NONE;
	return translate(c, &c->stackmap.kernel, (uint32_t)id, source, PC_STACK_KERNEL, id, 0, 0, 0);
}

uint32_t consumer_user_stack_id(struct consumer *c, int source, int32_t id,
				uint32_t aspace, uint32_t pid, uint64_t ts)
{
	uint64_t key = (uint64_t)aspace << 32 | (uint32_t)id;

	if (id < 0 || aspace == U64_TABLE_EMPTY)
		return PC_STACK_NONE;
	return translate(c, &c->stackmap.user, key, source, PC_STACK_USER, id, aspace, pid, ts);
}

void stackmap_ids_free(struct stackmap_ids *s)
{
	u64_table_free(&s->kernel);
	u64_table_free(&s->user);
}
